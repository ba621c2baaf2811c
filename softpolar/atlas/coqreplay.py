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
from fractions import Fraction
from pathlib import Path
import shutil
import tempfile

from theorems import InvalidArgument, coq
from numerics import box_chain, box_replay_to_coq
from .engine import box_bounds, load_slice


def initial_box(sl, key) -> tuple[list, list]:
    """``(lo, hi)``: the exact componentwise range of $(u(0), a(0))$ over the box ``key`` of the slice ``sl``."""
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
    ok, records = replay_boxes(cert, keys)
    text = box_replay_to_coq(int(cert["spec"]["n"]), cert["spec"]["b"], ok, label="atlas") if ok else None
    return text, records


#: the full profile's bounded Coq sample (:func:`bounded_sample_keys`): at most this many enclosure steps per box
#: (tau up to about 0.47 by :data:`STEPS_PER_TAU`). The largest-tau boxes of conflict3's full atlas (width 1/32)
#: need 120-145 steps each (tau 3.6-4.2), and one such box took about 5 minutes of coqc on 2 loaded cores
SAMPLE_MAX_STEPS = 16
#: steps per unit of tau, measured on conflict3's full atlas (143 steps at tau 4.23, 119 at 3.55): where the
#: search for a box within :data:`SAMPLE_MAX_STEPS` starts
STEPS_PER_TAU = 34
#: at most this many chains computed per winner in that search (about 2 s each at 140 steps, less below)
SAMPLE_TRIES = 6


def bounded_sample_keys(cert: dict, per_winner: int = 1, max_steps: int = SAMPLE_MAX_STEPS,
                        tries: int = SAMPLE_TRIES) -> list:
    """Per winner, the ``per_winner`` certified boxes with the largest tau whose Coq chain lands in at most
    ``max_steps`` enclosure steps: candidates (boxes that needed integration, tau > 0) in decreasing tau from
    ``tau <= max_steps / STEPS_PER_TAU`` on, at most ``tries`` chains computed per winner (a winner none of whose
    candidates fits has no box in the sample)."""
    boxes = sorted((b for b in cert["boxes"] if b["status"] == "certified"),
                   key=lambda b: (-Fraction(b["tau"]), b["key"]))
    limit = Fraction(max_steps, STEPS_PER_TAU)
    out = []
    for w in sorted({b["winner"] for b in boxes}):
        cand = [b["key"] for b in boxes if b["winner"] == w and 0 < Fraction(b["tau"]) <= limit][:tries]
        _, records = replay_boxes(cert, cand)
        out += [r["key"] for r in records if r["replay"] and r["steps"] <= max_steps][:per_winner]
    return out


#: at most this many enclosure steps per Coq file (about 1 CPU s of coqc each at n = 3): a file stays well inside
#: :data:`theorems.coq.COQC_TIMEOUT_S`
STEPS_PER_FILE = 40


def sample_keys(cert: dict, per_winner: int = 1) -> list:
    """The quick profile's sample: per winner, the certified box that entered R_i^+ latest (largest tau: the most
    integration, the longest replay), key order breaking ties."""
    boxes = sorted((b for b in cert["boxes"] if b["status"] == "certified"),
                   key=lambda b: (-Fraction(b["tau"]), b["key"]))
    out = []
    for w in sorted({b["winner"] for b in boxes}):
        out += [b["key"] for b in boxes if b["winner"] == w][:per_winner]
    return out


def check_in_coq(cert: dict, keys, dev) -> dict:
    """Replay the boxes ``keys`` in Coq: the files of :func:`box_replay_to_coq` (at most :data:`STEPS_PER_FILE`
    steps each) compiled and checked by :func:`theorems.coq.check_file` against
    :data:`theorems.coq.CERTIFICATE_AXIOMS` (``Print Assumptions`` of each box's theorem). Returns ``{"boxes":
    per-box records (``replay``: True when Coq re-proved it; False: only the integrator's closure stands, with the
    reason), "files": per-file ok/seconds/output tail, "coq_seconds": total, "ok": every file compiled}``."""
    ok_boxes, records = replay_boxes(cert, keys)
    chunks, cur, steps = [], [], 0
    for box in ok_boxes:
        k = len(box["chain"]) - 1
        if cur and steps + k > STEPS_PER_FILE:
            chunks.append(cur)
            cur, steps = [], 0
        cur.append(box)
        steps += k
    if cur:
        chunks.append(cur)
    files, folder = [], Path(tempfile.mkdtemp(prefix="softpolar-atlas-coq-"))
    n, b = int(cert["spec"]["n"]), cert["spec"]["b"]
    try:
        for m, chunk in enumerate(chunks):
            path = folder / f"AtlasReplay{m}.v"
            path.write_text(box_replay_to_coq(n, b, chunk, label="atlas"))
            names = tuple(f"atlas_{box['name']}_polarizes" for box in chunk)
            run = coq.check_file(path, dev, allowed=coq.CERTIFICATE_AXIOMS, declarations=names,
                                 timeout_s=coq.replay_timeout(sum(len(x["chain"]) - 1 for x in chunk)))
            files.append({"file": path.name, "boxes": [box["name"] for box in chunk], "ok": run.ok,
                          "seconds": round(run.seconds, 2), "steps": sum(len(x["chain"]) - 1 for x in chunk),
                          **({} if run.ok else {"output": run.output.strip()[-600:]})})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"boxes": records, "files": files, "coq_seconds": round(sum(f["seconds"] for f in files), 2),
            "ok": all(f["ok"] for f in files)}
