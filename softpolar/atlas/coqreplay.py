r"""Atlas boxes through Coq's replay (issue 37): each box re-proven from its box of initial states.

An atlas box $Q=[x_0,x_1]\times[y_0,y_1]$ of a slice maps to initial states $(u(0),a(0))$ affine in $(x,y)$; their
componentwise range (exact, the corners) is the box $B_0$ the replay starts from
(:func:`numerics.box_chain`). The Coq theorem of a box says: every solution whose initial state
lies in $B_0$ (a superset of the slice's image of $Q$) polarizes to the box's winner. Coq checks every step; the
interval integrator is not trusted. A box whose chain does not land keeps the closure at $\tau$ (its enclosure from
the integrator, trusted), and the record says so.
"""
from __future__ import annotations

import time

from theorems import InvalidArgument


def initial_box(sl, key) -> tuple[list, list]:
    """``(lo, hi)``: the exact componentwise range of $(u(0), a(0))$ over the box ``key`` of the slice ``sl``."""
    from ._engine import box_bounds
    x0, x1, y0, y1 = box_bounds(sl, tuple(key))
    lo, hi = [], []
    for c, cx, cy in list(sl.u0) + list(sl.a0):
        vals = [c + cx * x + cy * y for x in (x0, x1) for y in (y0, y1)]
        lo.append(min(vals))
        hi.append(max(vals))
    return lo, hi


def replay_boxes(cert: dict, keys) -> tuple[list[dict], list[dict]]:
    """For the certified boxes ``keys`` of an atlas certificate: ``(replayable, records)``. ``replayable``: the boxes
    whose Coq chain lands (input of :func:`numerics.box_replay_to_coq`); ``records``: per box
    its key, winner, ``replay`` (True, or False with the reason: then only the closure at tau stands) and steps."""
    from numerics import box_chain
    from ._engine import load_slice
    sl = load_slice(cert["spec"])
    by_key = {tuple(b["key"]): b for b in cert["boxes"]}
    ok, records = [], []
    for key in keys:
        box = by_key.get(tuple(key))
        if box is None or box.get("status") != "certified":
            raise InvalidArgument(f"keys: {key!r} is not a certified box of the atlas")
        lo, hi = initial_box(sl, key)
        rec = {"key": list(key), "winner": box["winner"], "tau": box["tau"]}
        t = time.perf_counter()
        try:
            chain = box_chain(lo, hi, sl.b, box["winner"])
        except InvalidArgument as exc:
            rec.update(replay=False, reason=str(exc)[:200])
        else:
            rec.update(replay=True, steps=len(chain) - 1)
            ok.append({"name": "_".join(str(k) for k in key), "winner": box["winner"], "lo": lo, "hi": hi,
                       "chain": chain})
        rec["chain_seconds"] = round(time.perf_counter() - t, 3)
        records.append(rec)
    return ok, records


def atlas_replay_to_coq(cert: dict, keys) -> tuple[str | None, list[dict]]:
    """The Coq file re-proving the boxes ``keys`` from their initial boxes (``None`` when none lands), and the
    per-box records of :func:`replay_boxes`."""
    from numerics import box_replay_to_coq
    ok, records = replay_boxes(cert, keys)
    text = box_replay_to_coq(int(cert["spec"]["n"]), cert["spec"]["b"], ok, label="atlas") if ok else None
    return text, records
