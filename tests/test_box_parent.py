"""The box engine's parent scheme: a child box starts from its parent's steps, every one re-verified."""
from __future__ import annotations

import copy
import json
from fractions import Fraction as Fr

import pytest

pytest.importorskip("flint")

from numerics.validated import atlas_check as ac
from numerics.validated import box as _box
from theorems import InvalidArgument

SPEC = {"name": "conflict3", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"],
        "x": ["-1", "1"], "y": ["-1", "1"]}


def _box_of(key):
    from softpolar.atlas import load_slice
    from softpolar.atlas.engine import box_bounds

    sl = load_slice("conflict3")
    x0, x1, y0, y1 = box_bounds(sl, key)
    return sl.reduced((x0 + x1) / 2, (y0 + y1) / 2), sl.directions((x1 - x0) / 2, (y1 - y0) / 2), \
        [str(x0), str(x1)], [str(y0), str(y1)]


def _run(key, hints=None, scheme="parent"):
    center, dirs, _, _ = _box_of(key)
    kw = {"hints": hints} if scheme == "parent" else {}
    return _box.enclose_box(center, dirs, Fr(1), scheme=scheme, order=6, **kw)


def _as_box(key, res):
    _, _, x, y = _box_of(key)
    return {"key": list(key), "status": "certified", "winner": res.winner, "tau": str(res.tau),
            "h": [str(h) for h in res.steps], "steps": len(res.steps),
            "a_lower": [None if v is None else str(v) for v in res.a_lower],
            "u_lower": [None if v is None else str(v) for v in res.u_lower], "x": x, "y": y}


# a parent the engine cannot certify (1/16 wide, 20 steps) whose child (1/32 wide) it certifies
PARENT, CHILD = (5, 1, 1), (6, 3, 2)


@pytest.fixture(scope="module")
def parent_trace():
    res = _run(PARENT)
    assert res.status == "not certified" and len(res.trace) == len(res.steps) > 3
    return _box.encode_trace(res.trace)


def test_without_hints_the_parent_scheme_is_the_adaptive_scheme():
    """No parent data (a top-level box, or a resumed run whose parent record lacks it): the adaptive
    scheme's steps and bounds exactly."""
    a, p = _run(CHILD, scheme="adaptive"), _run(CHILD)
    assert a.status == p.status == "certified"
    assert (a.steps, a.a_lower, a.u_lower) == (p.steps, p.a_lower, p.u_lower)


def test_the_child_reuses_the_parents_steps_and_the_checker_reproves_it(parent_trace, monkeypatch):
    """The child's first try at each step is the parent's step, order and a-priori box (checked by
    apriori_check, which proves each one here), while its clock is the parent's; the result is
    re-proven by the independent checker from the step sizes alone."""
    calls = []
    real = _box.apriori_check
    monkeypatch.setattr(_box, "apriori_check", lambda *a: calls.append(real(*a)) or calls[-1])
    res = _run(CHILD, parent_trace)
    assert res.status == "certified"
    assert len(calls) >= 2 and all(c is not None for c in calls[:2])
    parent_h = [Fr(t[0]) for t in parent_trace]
    assert res.steps[:2] == parent_h[:2]
    assert res.steps != _run(CHILD, scheme="adaptive").steps  # the hints changed the run
    ok, why = ac.verify_box(ac.check_spec(SPEC), _as_box(CHILD, res))
    assert ok, why


def _shifted(trace, k, dx):
    bad = copy.deepcopy(trace)
    flat = bad[k][2]
    bad[k][2] = [v + dx if i % 2 == 0 else v / 64 for i, v in enumerate(flat)]  # moved, and thin
    return bad


def test_a_doctored_apriori_box_is_refused_and_the_box_still_proven(parent_trace, monkeypatch):
    """A reused a-priori box moved off the set (and made thin) fails apriori_check, the engine falls back
    to its own guess, and the box is still certified and re-proven. Planted bug: an apriori_check that
    accepts any candidate lets the doctored box into the first step: the check is what refuses it."""
    bad = _shifted(parent_trace, 0, 0.25)
    calls, real = [], _box.apriori_check

    def spy(X, b, h, B):
        calls.append((B, real(X, b, h, B)))
        return calls[-1][1]

    monkeypatch.setattr(_box, "apriori_check", spy)
    res = _run(CHILD, bad)
    assert calls[0][1] is None and all(r is not None for _, r in calls[1:3])  # refused, then the honest ones
    assert res.status == "certified" and res.trace[0][2] is not calls[0][0]
    assert ac.verify_box(ac.check_spec(SPEC), _as_box(CHILD, res))[0]
    seen = []

    def planted(X, b, h, B):
        seen.append(B)
        return B

    monkeypatch.setattr(_box, "apriori_check", planted)
    res2 = _run(CHILD, bad)
    assert res2.trace[0][2] is seen[0]  # the doctored box carried the first step


@pytest.mark.parametrize("edit", [
    lambda t: "not a list",
    lambda t: [[t[0][0], 99, t[0][2]]] + t[1:],                      # order outside 4..6
    lambda t: [["1/3", t[0][1], t[0][2]]] + t[1:],                   # not a dyadic
    lambda t: [["1", t[0][1], t[0][2]]] + t[1:],                     # longer than h_max
    lambda t: [["1/2199023255552", t[0][1], t[0][2]]] + t[1:],       # shorter than 2^-30 (2^-41)
    lambda t: [[t[0][0], t[0][1], t[0][2][:-1]]] + t[1:],            # a ball missing
    lambda t: [[t[0][0], t[0][1], [float("nan")] * 8]] + t[1:],      # not finite
    lambda t: [[t[0][0], t[0][1], [1.0, -1.0] * 4]] + t[1:],         # negative radius
    lambda t: [[t[0][0], True, t[0][2]]] + t[1:],                    # a bool for an order
    lambda t: t * 200,                                               # more than max_steps
])
def test_malformed_hints_are_dropped(parent_trace, edit):
    """Hints that do not parse are no reuse at all: the adaptive scheme's run exactly."""
    bad = edit(copy.deepcopy(parent_trace))
    assert _box.decode_hints(bad, 4, 4, 6, 0.5, 600) == []
    assert _run(CHILD, bad).steps == _run(CHILD, scheme="adaptive").steps


def test_a_doctored_step_size_costs_a_try_and_proves_nothing(parent_trace):
    """Every hinted step made the longest allowed (1/2): each fails its own verification (a-priori box or
    remainder) and the engine goes its own way; the certified result is re-proven."""
    bad = [["1/2", t[1], t[2]] for t in parent_trace]
    res = _run(CHILD, bad)
    assert res.status == "certified" and res.steps[0] != Fr(1, 2)
    assert ac.verify_box(ac.check_spec(SPEC), _as_box(CHILD, res))[0]


def test_hints_need_the_parent_scheme():
    center, dirs, _, _ = _box_of(CHILD)
    with pytest.raises(InvalidArgument, match="hints"):
        _box.enclose_box(center, dirs, Fr(1), scheme="adaptive", hints=[])


# ---------------------------------------------------------------------------------------
# the atlas: the parent data travels in the journal records, never into the certificate
# ---------------------------------------------------------------------------------------
#: the corner of conflict3 around PARENT: its boxes of width 1/16 and 1/32 are those of the whole slice
CORNER = {**SPEC, "name": "corner3", "x": ["-1", "-7/8"], "y": ["-1", "-7/8"]}
WIDTHS = {"start_width": "1/16", "min_width": "1/32"}


@pytest.fixture(scope="module")
def parent_atlas(tmp_path_factory):
    from softpolar.atlas import run_atlas
    from softpolar.atlas import PARENT_ENGINE

    out = tmp_path_factory.mktemp("atlas") / "corner3"
    cert = run_atlas(CORNER, out, **WIDTHS, map_size=16, scheduler="inline", engine=PARENT_ENGINE, draw=False,
                     progress=False)
    return out, cert


def _journal(out):
    return {tuple(r["key"]): r for r in map(json.loads, (out / "journal.jsonl").read_text().splitlines())}


def test_parent_atlas_is_recorded_reproven_and_keeps_traces_out_of_the_certificate(parent_atlas):
    from softpolar.atlas import MARKER, PARENT_ENGINE

    out, cert = parent_atlas
    assert cert["engine"]["scheme"] == "parent"
    assert json.loads((out / MARKER).read_text())["engine"] == PARENT_ENGINE
    recs = _journal(out)
    lines = list(recs.values())
    # the child CHILD (key (2, 3, 2) here) took its parent's first steps: the trace went from record to task
    parent, child = recs[(1, 1, 1)], recs[(2, 3, 2)]
    assert child["status"] == "certified" and child["h"][:2] == [t[0] for t in parent["trace"][:2]]
    assert child["h"] == [str(h) for h in _run(CHILD, parent["trace"]).steps]
    assert any(rec.get("trace") for rec in lines if rec["status"] == "not certified")
    assert not any("trace" in rec for rec in lines if rec["status"] == "certified")
    assert not any("trace" in box for box in cert["boxes"])
    res = ac.check_atlas(cert)
    assert res.passed and res.verified == res.certified > 0, res.problems[:3]
    # the checker reads no reuse data: a trace put into a certificate is refused as an unknown key
    bad = copy.deepcopy(cert)
    next(b for b in bad["boxes"] if b["status"] == "certified")["trace"] = lines[0].get("trace", [])
    assert not ac.check_atlas(bad).passed


def test_parent_atlas_resume_and_fallback_without_parent_data(parent_atlas, tmp_path, monkeypatch):
    """Resuming reads the journal (nothing recomputed); another engine is refused; a journal whose parent
    records lack their trace (and whose children are missing) recomputes the children without reuse."""
    from softpolar.atlas import engine as E

    out, cert = parent_atlas
    monkeypatch.setattr(E, "certify_box", lambda *a: pytest.fail("recomputed a journaled box"))
    again = E.run_atlas(CORNER, out, **WIDTHS, map_size=16, scheduler="inline", engine=E.PARENT_ENGINE,
                        draw=False, progress=False)
    assert again["boxes"] == cert["boxes"]
    with pytest.raises(InvalidArgument, match="engine setting"):
        E.run_atlas(CORNER, out, **WIDTHS, scheduler="inline", progress=False)
    monkeypatch.undo()
    # a copy whose level-1 records lost their traces and whose level-2 records are gone
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    (copy_dir / E.MARKER).write_text((out / E.MARKER).read_text())
    kept = []
    for rec in (json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines()):
        if rec["key"][0] == 2:
            continue
        if rec["key"][0] == 1:
            rec.pop("trace", None)
            rec["digest"] = E.record_digest(cert["spec"], E.PARENT_ENGINE, rec)
        kept.append(json.dumps(rec))
    (copy_dir / "journal.jsonl").write_text("\n".join(kept) + "\n")
    seen, real = [], E.certify_box

    def spy(spec, key, engine, hints=None):
        seen.append((tuple(key), hints))
        return real(spec, key, engine, hints)

    monkeypatch.setattr(E, "certify_box", spy)
    fallback = E.run_atlas(CORNER, copy_dir, **WIDTHS, map_size=16, scheduler="inline", engine=E.PARENT_ENGINE,
                           draw=False, progress=False)
    assert seen and all(k[0] == 2 and h is None for k, h in seen)
    child = next(b for b in fallback["boxes"] if b["key"] == [2, 3, 2])
    assert child["h"] == [str(h) for h in _run(CHILD, scheme="adaptive").steps]  # no reuse: adaptive's steps
    assert ac.check_atlas(fallback).passed


@pytest.mark.slow
def test_parent_atlas_on_a_cluster_is_the_inline_atlas(parent_atlas, tmp_path):
    """On a LocalCluster the parent's trace travels with the child's task: the same boxes, bit for bit."""
    from softpolar.atlas import run_atlas
    from softpolar.atlas import PARENT_ENGINE

    out, cert = parent_atlas
    dist = run_atlas(CORNER, tmp_path / "a", **WIDTHS, map_size=16, scheduler="local", workers=1,
                     engine=PARENT_ENGINE, draw=False, progress=False)
    def strip(boxes):  # the wall time of a box differs, and the journal digest covers it
        return [{k: v for k, v in b.items() if k not in ("seconds", "digest")} for b in boxes]

    assert strip(dist["boxes"]) == strip(cert["boxes"])
    # the child that took its parent's steps inline took them on the cluster too
    assert next(b for b in dist["boxes"] if b["key"] == [2, 3, 2])["h"] == \
        [str(h) for h in _run(CHILD, _journal(out)[(1, 1, 1)]["trace"]).steps]
