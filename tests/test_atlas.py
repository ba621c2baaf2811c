"""Certified basin atlas: box engine, independent checker, driver, CLI."""
from __future__ import annotations

import copy
import io
import json
from fractions import Fraction as Fr

import pytest

pytest.importorskip("flint")

from numerics.validated import atlas_check as ac
from numerics.validated import box as _box
from softpolar.atlas.claims import integrated_box, wrong_winner
from theorems import InvalidArgument

# conflict3 at (x, y): reduced state (u1-u3, u2-u3, a1-a3, a2-a3) = (x+1, 1, 1, y+1)


def _conflict_box(x, y, r):
    return [x + 1, Fr(1), Fr(1), y + 1], [[r, 0, 0, 0], [0, 0, 0, r]]


def test_tangent_map_matches_finite_differences():
    flint = pytest.importorskip("flint")
    flint.ctx.prec = 128
    y = [flint.arb(v) for v in ("0.3", "-0.2", "0.7", "0.1")]
    one = flint.arb(1)
    for j in range(4):
        v = [flint.arb(1 if i == j else 0) for i in range(4)]
        _, (dfv,) = _box.reduced_field(y, flint.arb(2), one, 0, [v])
        eps = flint.arb("1e-15")
        yp = [yi + eps * vi for yi, vi in zip(y, v)]
        ym = [yi - eps * vi for yi, vi in zip(y, v)]
        fp, _ = _box.reduced_field(yp, flint.arb(2), one, 0)
        fm, _ = _box.reduced_field(ym, flint.arb(2), one, 0)
        for a, p, m in zip(dfv, fp, fm):
            assert abs(float(a.mid()) - float(((p - m) / (2 * eps)).mid())) < 1e-12
    flint.ctx.prec = 53


def test_engine_and_checker_taylor_coefficients_agree():
    """Picard in arb_series (engine) and Moore recurrences (checker): same coefficients, state and Jacobian."""
    flint = pytest.importorskip("flint")
    old = flint.ctx.prec, flint.ctx.cap
    flint.ctx.prec, flint.ctx.cap = 64, 20
    try:
        y = [flint.arb(v) for v in ("1.5", "1", "1", "1.5")]
        C, P = _box.taylor(y, flint.arb(1), 8, jacobian=True)
        zero = ac.Jet(flint.arb(0), [flint.arb(0)] * 4)
        one = ac.Jet(flint.arb(1), [flint.arb(0)] * 4)
        jets = [ac.Jet(y[i], [flint.arb(int(i == j)) for j in range(4)]) for i in range(4)]
        CJ = ac.taylor_coefficients(jets, flint.arb(1), _box.ref_token(y), 8, zero, one)
        Phi = ac.jacobian_coefficients(y, flint.arb(1), _box.ref_token(y), 8)
        for i in range(4):
            for k in range(9):
                assert C[i][k].overlaps(CJ[i][k].v)
                for j in range(4):
                    assert P[j][i][k].overlaps(CJ[i][k].g[j])
                    assert P[j][i][k].overlaps(Phi[k][i, j])
    finally:
        flint.ctx.prec, flint.ctx.cap = old


@pytest.mark.parametrize("vals", [("1.5", "1", "1", "1.5"), ("0.3", "-0.2", "0.7", "0.1"),
                                  ("0.3", "-0.2", "0.7", "0.1", "-1.1", "0.4")])
def test_checker_jacobian_recurrence_matches_its_jets(vals):
    """The checker's variational recurrence and its forward-mode jets (two methods of the checker) give the
    same Jacobian coefficients at a thin point (balls ~1e-18, so agreement pins them), for every reference
    token and n = 3, 4; a planted wrong factor in the recurrence is caught; on a wide box both enclose the
    same set (they intersect) and the recurrence's balls are the narrower (why the checker splits less)."""
    flint = pytest.importorskip("flint")
    old = flint.ctx.prec
    flint.ctx.prec = 64
    try:
        d = len(vals)
        n, b = d // 2 + 1, flint.arb(2)

        def jets_at(y, ref):
            zero = ac.Jet(flint.arb(0), [flint.arb(0)] * d)
            one = ac.Jet(flint.arb(1), [flint.arb(0)] * d)
            jets = [ac.Jet(y[i], [flint.arb(int(i == j)) for j in range(d)]) for i in range(d)]
            CJ = ac.taylor_coefficients(jets, b, ref, 8, zero, one)
            return [[[CJ[i][k].g[j] for j in range(d)] for i in range(d)] for k in range(9)]

        def agree(Phi, G):
            return all(Phi[k][i, j].overlaps(G[k][i][j]) for k in range(9) for i in range(d) for j in range(d))

        y = [flint.arb(v) for v in vals]
        for ref in range(n):
            Phi, G = ac.jacobian_coefficients(y, b, ref, 8), jets_at(y, ref)
            assert agree(Phi, G)
            assert max(float(Phi[k][i, j].rad()) for k in range(9) for i in range(d) for j in range(d)) < 1e-15
            planted = Phi[:3] + [Phi[k] * flint.arb(k) / (k + 1) for k in range(3, 9)]
            assert not agree(planted, G)
        X = [flint.arb(v, "0.01") for v in vals]
        Phi, G = ac.jacobian_coefficients(X, b, 0, 8), jets_at(X, 0)
        assert agree(Phi, G)
        width = [sum(float(M[k][i][j].rad()) for k in range(9) for i in range(d) for j in range(d))
                 for M in ([[[Phi[k][i, j] for j in range(d)] for i in range(d)] for k in range(9)], G)]
        assert width[0] < width[1]
        with pytest.raises(ValueError, match="order"):
            ac.jacobian_coefficients(y, b, 0, 0)
    finally:
        flint.ctx.prec = old


def _phi_agrees(P, Phi, d, order):
    return all(P[j][i][k].overlaps(Phi[k][i, j]) for k in range(order + 1) for i in range(d) for j in range(d))


def test_jacobian_recurrence_matches_the_variational_picard_iteration():
    """The fast scheme's Jacobian (one field evaluation + the linear recurrence) encloses the same
    coefficients as the variational equation by Picard iteration: at a thin point both are ~1e-17 balls,
    so agreement pins every coefficient; a planted wrong factor in the recurrence is caught."""
    flint = pytest.importorskip("flint")
    old = flint.ctx.prec, flint.ctx.cap
    flint.ctx.prec, flint.ctx.cap = 64, 20
    try:
        y = [flint.arb(v) for v in ("1.5", "1", "1", "1.5")]
        _, P = _box.taylor(y, flint.arb(1), 10, jacobian=True)
        _, Phi = _box.jacobian_taylor(y, flint.arb(1), 10)
        assert len(Phi) == 11 and _phi_agrees(P, Phi, 4, 10)
        assert max(float(Phi[k][i, j].rad()) for k in range(11) for i in range(4) for j in range(4)) < 1e-12
        # negative control: a planted 1/(m+1) for the 1/m of the recurrence is caught
        planted = [Phi[0]] + [Phi[m] * flint.arb(m) * flint.arb(flint.fmpq(1, m + 1)) for m in range(1, 11)]
        assert not _phi_agrees(P, planted, 4, 10)
        # on a wide box both are enclosures of the same set: they must intersect
        X = [flint.arb(v, "0.01") for v in ("1.5", "1", "1", "1.5")]
        _, PX = _box.taylor(X, flint.arb(1), 10, jacobian=True)
        _, PhiX = _box.jacobian_taylor(X, flint.arb(1), 10)
        assert _phi_agrees(PX, PhiX, 4, 10)
    finally:
        flint.ctx.prec, flint.ctx.cap = old


def test_contracting_apriori_box_takes_full_steps_on_thin_directions():
    """conflict3 boxes are thin (radius 0) in two reduced coordinates: the baseline a-priori guess proves
    only ~1e-6 steps there, the contracting one proves the step the Taylor remainder asks for; both
    boxes pass the same containment test, re-checked here by hand."""
    flint = pytest.importorskip("flint")
    old = flint.ctx.prec
    flint.ctx.prec = 64
    try:
        center, dirs = _conflict_box(Fr(-21, 32), Fr(-5, 32), Fr(1, 32))
        X = _box.initial_set(center, dirs).hull()
        b, h = flint.arb(1), Fr(1, 8)
        assert _box.apriori(X, b, h) is None
        B = _box.apriori_contract(X, b, h)
        assert B is not None
        F, _ = _box.reduced_field(B, b, flint.arb(1), _box.ref_token(B))
        T = flint.arb(flint.fmpq(h.numerator, 2 * h.denominator), flint.fmpq(h.numerator, 2 * h.denominator))  # [0, h]
        assert all(bb.contains_interior(x + T * f) for bb, x, f in zip(B, X, F))
    finally:
        flint.ctx.prec = old


@pytest.mark.parametrize("scheme", ["adaptive", "fast", "baseline"])
def test_both_schemes_certify_and_the_checker_reproves(scheme):
    center, dirs = _conflict_box(Fr(1, 2), Fr(-3, 4), Fr(1, 16))
    res = _box.enclose_box(center, dirs, Fr(1), scheme=scheme)
    assert res.status == "certified"
    spec = ac.check_spec({"name": "conflict3", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"],
                          "x": ["-1", "1"], "y": ["-1", "1"]})
    box = {"key": [5, 24, 4], "status": "certified", "winner": res.winner, "tau": str(res.tau),
           "h": [str(h) for h in res.steps], "steps": len(res.steps),
           "a_lower": [None if v is None else str(v) for v in res.a_lower],
           "u_lower": [None if v is None else str(v) for v in res.u_lower],
           "x": ["7/16", "9/16"], "y": ["-13/16", "-11/16"]}
    ok, why = ac.verify_box(spec, box)
    assert ok, why
    with pytest.raises(InvalidArgument, match="scheme"):
        _box.enclose_box(center, dirs, Fr(1), scheme="quick")


def test_quick_region_test_refuses_only_where_the_exact_test_refuses(monkeypatch):
    """At every step of a box that certifies and one that does not, a set the cheap test refuses is
    refused by :func:`region_test` too; both answers occur (neither test is constant)."""
    seen, exact_test = [], _box.region_test

    def both(S, n):
        out = exact_test(S, n)
        seen.append((_box.region_test_quick(S, n), out[1]))
        return out

    monkeypatch.setattr(_box, "region_test", both)
    for x, y in ((Fr(1, 2), Fr(-3, 4)), (Fr(0), Fr(0))):
        center, dirs = _conflict_box(x, y, Fr(1, 32))
        _box.enclose_box(center, dirs, Fr(1), scheme="fast", max_steps=40)
    assert all(quick or not exact for quick, exact in seen)
    assert (True, True) in seen and (False, False) in seen


def test_next_order_follows_the_coefficient_sizes():
    """A coefficient sequence that shrinks fast makes a higher order pay; one that grows sends the
    order to the lowest; the step is at most one order up; nothing outside [lowest, highest]."""
    fast_decay = [1.0, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14]  # order 6: mags[0..7]
    growing = [1.0, 10.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7]
    assert _box.next_order(fast_decay, 6, 1e-30, 4, 8) == 7
    assert _box.next_order(fast_decay, 6, 1e-30, 4, 6) == 6
    assert _box.next_order(growing, 6, 1e-3, 4, 8) == 4
    # hand computation at the quadratic cost: q=5 uses mags[6], q=4 uses mags[5]
    mags = [1.0, 1.0, 1.0, 1.0, 1.0, 1e-3, 1e-9, 1e-10]
    score = {q: (1e-6 / mags[q + 1]) ** (1 / (q + 1)) / q ** _box.ADAPTIVE_COST_POWER for q in (4, 5, 6)}
    assert _box.next_order(mags, 6, 1e-6, 4, 6) == max(score, key=score.get)


def test_lohner_certifies_where_naive_balls_do_not():
    center, dirs = _conflict_box(Fr(1, 2), Fr(1, 2), Fr(1, 256))
    res = _box.enclose_box(center, dirs, Fr(1))
    assert res.status == "certified" and res.winner == 1  # token 2 wins at (1/2, 1/2)
    assert all(v is None or v > 0 for v in res.a_lower)
    naive = _box.enclose_box(center, dirs, Fr(1), method="naive", max_steps=60)
    assert naive.status == "not certified"


def test_certified_box_agrees_with_float64_samples():
    import numpy as np

    from numerics.validated.box_float import winners

    center, dirs = _conflict_box(Fr(1, 2), Fr(-3, 4), Fr(1, 16))
    res = _box.enclose_box(center, dirs, Fr(1))
    assert res.status == "certified"
    rng = np.random.default_rng(0)
    r = rng.uniform(-1, 1, size=(50, 2))
    Y = np.array([[float(c) + float(dirs[0][i]) * a + float(dirs[1][i]) * b for i, c in enumerate(center)]
                  for a, b in r])
    assert set(winners(Y).tolist()) == {res.winner}


def test_box_across_the_basin_boundary_is_not_certified():
    # x = y = 0 lies on the float64 basin boundary of conflict3
    center, dirs = _conflict_box(Fr(0), Fr(0), Fr(1, 64))
    assert _box.enclose_box(center, dirs, Fr(1), max_steps=80).status == "not certified"


def test_engine_bad_input():
    with pytest.raises(InvalidArgument, match="method"):
        _box.enclose_box([1, 1], [[1, 0], [0, 1]], 1, method="magic")
    with pytest.raises(InvalidArgument, match="b="):
        _box.enclose_box([1, 1], [[1, 0], [0, 1]], 0)
    with pytest.raises(InvalidArgument, match="even length"):
        _box.enclose_box([1, 1, 1], [[1, 0, 0], [0, 1, 0]], 1)


# ---------------------------------------------------------------------------------------
# driver, certificate, checker
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_atlas(tmp_path_factory):
    from softpolar.atlas import run_atlas

    out = tmp_path_factory.mktemp("atlas") / "conflict3"
    stream = io.StringIO()
    cert = run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=32,
                     scheduler="inline", stream=stream, draw=True)
    return out, cert, stream.getvalue()


def test_small_atlas_outputs(small_atlas):
    out, cert, log = small_atlas
    assert {p.name for p in out.iterdir()} >= {"atlas-run.json", "journal.jsonl", "atlas.json", "atlas.png",
                                               "float64.npy"}
    assert (out / "atlas.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 0 < cert["fraction_certified"] < 1
    assert sum(Fr(v) for v in cert["area"].values()) == 4
    assert cert["float64"]["disagreements"] == 0
    assert "[conflict3]" in log and "\r" not in log  # not a terminal: plain lines


def test_checker_passes_and_refuses_tampering(small_atlas):
    _, cert, _ = small_atlas
    assert ac.check_atlas(cert).passed
    bad = copy.deepcopy(cert)
    box = integrated_box(bad)  # a box whose proof needs the enclosure (tau > 0), as in ATLAS's control
    assert Fr(box["tau"]) > 0 and box["steps"] > 0
    wrong_winner(bad, box, (box["winner"] + 1) % 3)
    res = ac.check_atlas(bad)
    assert not res.passed and str(box["key"]) in res.problems[0] and "not reached" in res.problems[0]
    # planted bug under which the control would pass: a region test that ignores the winner (and the bounds)
    orig = ac.in_region
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ac, "in_region", lambda m, A, E, n, i, *claims: any(orig(m, A, E, n, k) for k in range(n)))
        assert ac.check_atlas(bad).passed





def test_checker_refuses_broken_tiling(small_atlas):
    _, cert, _ = small_atlas
    bad = copy.deepcopy(cert)
    bad["boxes"].pop()
    assert any("cover area" in p for p in ac.check_tiling(bad))
    bad = copy.deepcopy(cert)
    bad["boxes"][0]["x"] = ["-1", "0"]
    assert any("do not match" in p for p in ac.check_tiling(bad))


def test_resume_reads_the_journal(small_atlas, monkeypatch):
    from softpolar.atlas import engine as _atlas

    out, cert, _ = small_atlas
    monkeypatch.setattr(_atlas, "certify_box", lambda *a: pytest.fail("recomputed a journaled box"))
    again = _atlas.run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=32,
                             scheduler="inline", progress=False, draw=False)
    assert again["area"] == cert["area"]


def test_refuses_foreign_folders(tmp_path):
    from softpolar.atlas import run_atlas

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InvalidArgument, match="not made by softpolar"):
        run_atlas("conflict3", tmp_path, scheduler="inline")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_refuses_other_slice_in_atlas_folder(small_atlas):
    from softpolar.atlas import run_atlas

    out, _, _ = small_atlas
    with pytest.raises(InvalidArgument, match="another slice"):
        run_atlas("uniform3", out, start_width="1/2", min_width="1/4", scheduler="inline")


def test_atlas_records_its_scheme_and_resume_refuses_another(small_atlas):
    """The folder's settings name the engine's scheme (the default one); resuming with the fast scheme
    is refused, never mixed into one atlas."""
    from softpolar.atlas import run_atlas
    from softpolar.atlas import DEFAULT_ENGINE, FAST_ENGINE, MARKER

    out, cert, _ = small_atlas
    assert cert["engine"]["scheme"] == DEFAULT_ENGINE["scheme"] == "adaptive"
    assert json.loads((out / MARKER).read_text())["engine"] == DEFAULT_ENGINE
    with pytest.raises(InvalidArgument, match="engine setting"):
        run_atlas("conflict3", out, start_width="1/2", min_width="1/4", scheduler="inline", engine=FAST_ENGINE)


@pytest.mark.parametrize("spec, match", [
    ("nope", "neither a preset"),
    ({"n": 3, "u0": ["x", "0"], "a0": ["0", "y", "-1"], "x": ["-1", "1"], "y": ["-1", "1"]}, "u0="),
    ({"n": 3, "u0": ["x*y", "0", "0"], "a0": ["0", "y", "-1"], "x": ["-1", "1"], "y": ["-1", "1"]},
     "product of two variables"),
    # a spec is data: code in it is refused, never evaluated
    ({"n": 3, "u0": ["__import__('os').getcwd()", "0", "0"], "a0": ["0", "y", "-1"], "x": ["-1", "1"],
      "y": ["-1", "1"]}, "unsupported element Call"),
    ({"n": 3, "u0": ["x", "0", "0"], "a0": ["0", "0", "-1"], "x": ["-1", "1"], "y": ["-1", "1"]}, "2-D"),
    ({"n": 3, "u0": ["x", "0", "0"], "a0": ["0", "y", "-1"], "x": ["1", "-1"], "y": ["-1", "1"]}, "lo < hi"),
])
def test_load_slice_bad_input(spec, match):
    from softpolar.atlas import load_slice

    with pytest.raises(InvalidArgument, match=match):
        load_slice(spec)


def test_widths_must_be_dyadic_parts_of_the_range(tmp_path):
    from softpolar.atlas import run_atlas

    with pytest.raises(InvalidArgument, match="min_width"):
        run_atlas("conflict3", tmp_path / "a", min_width="1/3", scheduler="inline")


def test_cli_check_and_bad_input(small_atlas, tmp_path, capsys):
    from softpolar import main

    out, cert, _ = small_atlas
    assert main(["atlas", "--check", str(out), "--scheduler", "inline"]) == 0
    assert "PASSED" in capsys.readouterr().out
    bad = copy.deepcopy(cert)
    next(b for b in bad["boxes"] if b["status"] == "certified")["winner"] += 1
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert main(["atlas", "--check", str(tmp_path / "bad.json"), "--scheduler", "inline"]) == 1
    assert "REJECTED" in capsys.readouterr().out
    assert main(["atlas", "nope"]) == 2
    assert main(["atlas", "conflict3", "--min-width", "1/3", "--out", str(tmp_path / "x")]) == 2


def test_atlas_claim_is_registered():
    from softpolar.atlas.claims import CLAIMS

    (claim,) = CLAIMS
    assert claim.id == "ATLAS" and claim.provenance == "D"
    assert claim.evidence_kind == "interval arithmetic + lemma (machine-checked in Coq, existence assumed)"


def test_json_spec_file_is_the_same_slice(tmp_path):
    from softpolar.atlas import PRESETS, load_slice

    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**PRESETS["conflict3"], "name": "mine"}))
    a, b = load_slice(str(path)), load_slice("conflict3")
    assert (a.u0, a.a0, a.x, a.y, a.b) == (b.u0, b.a0, b.x, b.y, b.b) and a.name == "mine"
    assert a.reduced(Fr(1, 2), Fr(1, 2)) == [Fr(3, 2), 1, 1, Fr(3, 2)]


def test_checker_refuses_malformed_certificates(small_atlas):
    _, cert, _ = small_atlas
    bad = copy.deepcopy(cert)
    box = next(b for b in bad["boxes"] if b["status"] == "certified")
    bad["spec"]["u0"][0] = "__import__('os').getcwd()"
    box["h"] = ["1/3"]
    res = ac.check_atlas(bad)
    assert not res.passed and any("not an affine expression" in p for p in res.problems)
    bad = copy.deepcopy(cert)
    next(b for b in bad["boxes"] if b["status"] == "certified")["h"] = ["1/3"]
    assert any("dyadic" in p for p in ac.check_atlas(bad).problems)
    bad = copy.deepcopy(cert)
    del bad["boxes"][0]["key"]
    assert not ac.check_atlas(bad).passed


def test_progress_is_terminal_aware(monkeypatch):
    """The atlas reports through the one progress helper: redrawn on a terminal, lines elsewhere."""
    import time

    from numerics.progress import ENV, Progress

    monkeypatch.setenv(ENV, "bar")  # the terminal's own mode, without tqdm
    tty = io.StringIO()
    bar = Progress("x", stream=tty)
    bar.status("a")
    time.sleep(0.15)
    bar.status("b")
    bar.close()
    assert tty.getvalue().count("\r") == 2 and tty.getvalue().endswith("\n")
    monkeypatch.delenv(ENV)
    pipe = io.StringIO()
    bar = Progress("x", stream=pipe)
    bar.message("[x] a")
    bar.message("[x] b")
    bar.status("c")  # lines: at most one every 10 s, none before
    bar.close()
    assert pipe.getvalue() == "[x] a\n[x] b\n"


# ---------------------------------------------------------------------------------------
# the checker re-derives what it vouches for: every attack of the audit is refused
# ---------------------------------------------------------------------------------------
def _refused(cert, *needles):
    res = ac.check_atlas(cert)
    assert not res.passed, "the checker passed a tampered certificate"
    text = " | ".join(res.problems)
    for needle in needles:
        assert needle in text, text
    return res


def test_attack_n3_spec_with_four_entry_vectors_and_the_wrong_winner(small_atlas):
    # the audit's false theorem: n = 3 but u0/a0 with 4 entries, one box over the whole slice claiming token 0
    # (the true winner is token 3 at every point); the old checker read the 6-entry state with n = 3 offsets
    _, cert, _ = small_atlas
    bad = copy.deepcopy(cert)
    bad["spec"].update(u0=["x", "0", "-1", "5"], a0=["0", "y", "-1", "5"])
    bad["min_level"] = 0
    bad["boxes"] = [{"key": [0, 0, 0], "status": "certified", "x": ["-1", "1"], "y": ["-1", "1"], "winner": 0,
                     "tau": "1", "h": ["1/2", "1/2"], "steps": 2, "a_lower": [None, "1", "1"],
                     "u_lower": [None, "0", "0"]}]
    bad["area"], bad["fraction_certified"] = {"token 0": "4"}, 1.0
    _refused(bad, "u0 has 4 entries; expected a list of n = 3")
    # and the region test itself refuses a state of the wrong length instead of reading it with wrong offsets
    with pytest.raises(ValueError, match="length 6 for n = 3"):
        ac.in_region([Fr(0)] * 6, [[Fr(0), Fr(0)]] * 6, [Fr(0)] * 6, 3, 0)


def test_attack_expression_longer_than_the_limit_is_refused_not_cut(small_atlas):
    # "x" followed by spaces and "+ 5": cut at 200 characters it would read as "x"
    _, cert, _ = small_atlas
    bad = copy.deepcopy(cert)
    bad["spec"]["u0"][0] = "x" + " " * 199 + "+ 5"
    assert ac.read_affine(bad["spec"]["u0"][0][:200]) == [0, 1, 0]  # what the cut text would have said
    _refused(bad, "at most 200 characters")


@pytest.mark.parametrize("edit, needle", [
    (lambda c: c.update(fraction_certified=c["fraction_certified"] + 0.01), "fraction_certified="),
    (lambda c: c.update(fraction_certified=str(c["fraction_certified"])), "fraction_certified="),
    (lambda c: c["area"].update({"token 0": str(Fr(c["area"]["token 0"]) + Fr(1, 16))}), "is not the boxes' area"),
    (lambda c: c["area"].pop("uncertified"), "is not the boxes' area"),
    (lambda c: _first(c).update(tau=str(Fr(_first(c)["tau"]) + 1)), "is not the sum of the box's steps"),
    (lambda c: _first(c).update(steps=_first(c)["steps"] + 1), "is not the number of steps"),
    (lambda c: _first(c)["a_lower"].__setitem__(_other(c), "1000"), "stored lower bounds not proven"),
    (lambda c: _first(c)["u_lower"].__setitem__(_other(c), "1000"), "stored lower bounds not proven"),
    (lambda c: _first(c)["a_lower"].__setitem__(_other(c), "0"), "is not > 0"),
    (lambda c: _first(c)["u_lower"].__setitem__(_first(c)["winner"], "0"), "expected None at the winner"),
    (lambda c: c["spec"].update(name="uniform3"), "named 'uniform3' but is not that preset's slice"),
    (lambda c: c["spec"].update(b="2/4"), "not in lowest terms"),
    (lambda c: c["spec"].update(extra="1"), "spec keys: unexpected ['extra']"),
    (lambda c: c.update(note="trust me"), "certificate keys: unexpected ['note']"),
    (lambda c: _first(c).update(comment="x"), "unexpected keys ['comment']"),
    (lambda c: next(b for b in c["boxes"] if b["status"] != "certified").update(key=[0, 0, 0], x=["-1", "1"],
                                                                                 y=["-1", "1"]), "overlaps"),
])
def test_attack_edited_numbers_are_refused(small_atlas, edit, needle):
    _, cert, _ = small_atlas
    assert ac.check_atlas(cert).passed
    bad = copy.deepcopy(cert)
    edit(bad)
    _refused(bad, needle)


def _first(cert):
    return next(b for b in cert["boxes"] if b["status"] == "certified")


def _other(cert):
    return (_first(cert)["winner"] + 1) % cert["spec"]["n"]


def test_a_weaker_stored_bound_is_still_true(small_atlas):
    # lowering a stored lower bound makes a weaker, still true statement: accepted
    _, cert, _ = small_atlas
    ok = copy.deepcopy(cert)
    box = _first(ok)
    j = _other(ok)
    box["a_lower"][j] = str(Fr(box["a_lower"][j]) / 2)
    assert ac.check_atlas(ok).passed


def test_the_checker_recomputes_the_headline_numbers(small_atlas):
    _, cert, _ = small_atlas
    res = ac.check_atlas(cert)
    assert res.passed and res.boxes == len(cert["boxes"])
    assert res.certified == sum(b["status"] == "certified" for b in cert["boxes"])
    assert res.uncertified == res.boxes - res.certified
    assert {k: str(v) for k, v in res.area.items()} == cert["area"]
    assert float(res.fraction) == cert["fraction_certified"] and sum(res.area.values()) == 4
    assert "float64" in res.not_covered


def test_checker_presets_and_bounds_are_the_engines():
    from softpolar.atlas import engine
    from softpolar.atlas import PRESETS

    assert ac.PRESETS == PRESETS
    assert (ac.MAX_N, ac.MAX_COORD) == (engine.MAX_N, engine.MAX_COORD)
    for name in PRESETS:
        assert ac.check_spec(PRESETS[name]).name == name


def test_cli_check_prints_recomputed_numbers_and_what_is_not_covered(small_atlas, capsys):
    from softpolar import main

    out, cert, _ = small_atlas
    assert main(["atlas", "--check", str(out), "--scheduler", "inline", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "recomputed by the checker: conflict3:" in text and "not covered by --check: the float64 map" in text
    assert main(["atlas", "--check", str(out), "--scheduler", "inline", "--no-progress", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["recomputed"]["area"] == cert["area"] and "float64" in data["not_covered"]


def test_cluster_pieces_are_the_serial_numbers_bit_for_bit():
    """The cluster path screens in chunks and draws the float64 map in row blocks on the workers: each
    box's screen and each pixel depend on it alone, so chunks give the serial run's numbers exactly
    (what keeps a cluster atlas equal to an inline one); blocks shifted by one row are seen."""
    import numpy as np

    from softpolar.atlas import engine as E

    sl = E.load_slice("conflict3")
    keys = [(3, i, j) for i in range(8) for j in range(8)]
    whole = E.screen_task(sl.spec, [list(k) for k in keys])
    assert {w for w in whole} >= {None, 0, 1}  # the chunks below hold both kinds of boxes
    assert sum((E.screen_task(sl.spec, [list(k) for k in keys[a:a + 7]]) for a in range(0, 64, 7)), []) == whole
    fmap = E.float_map(sl, 32)
    assert np.array_equal(np.concatenate([E.float_map_rows(sl.spec, 32, r, min(32, r + 5))
                                          for r in range(0, 32, 5)]), fmap)
    assert not np.array_equal(E.float_map_rows(sl.spec, 32, 1, 32), fmap[:31])  # rows shifted by one


def test_bench_row_14_compares_the_two_schemes_on_one_atlas():
    """Row 14 (smoke size): both engines build the same slice; the ratio is baseline over today's CPU per
    certified area, and the fractions it is stated with are the two atlases' own."""
    from softpolar.benchmarks import row_box as row14

    rep = row14.run("smoke", lambda msg: None)
    (line,) = rep["lines"]
    assert line["ratio"] == pytest.approx(line["anchor_s"] / line["softpolar_s"])
    assert line["softpolar"] == "today's engine" and line["anchor"] == "baseline engine"
    (frac,) = [f for f in rep["facts"] if "certified fraction" in f["label"]]
    base, today = (float(v.strip(" %")) for v in frac["value"].split("/"))
    assert 0 < base <= 100 and 0 < today <= 100
    assert line["met"] == (line["ratio"] >= row14.TARGET and today >= base)
    (other,) = [f for f in rep["facts"] if "scheme, CPU s" in f["label"]]  # fast vs adaptive, whichever not default
    assert other["label"].split()[4] in ("fast", "adaptive") and float(other["value"].split(" / ")[2]) > 0
    (parent,) = [f for f in rep["facts"] if "scheme 'parent'" in f["label"]]  # parent-box reuse beside today's
    cpu, frac, ratio = (float(v.strip(" s%")) for v in parent["value"].split(" / "))
    assert cpu > 0 and 0 < frac <= 100 and ratio > 0


def test_bench_row_14_builds_two_atlases_where_the_fact_schemes_are_off(monkeypatch):
    """Quick mode's setting (issue 40: about 33 s of an idle quick run): baseline and today's atlas only, and a
    fact line that says the other two schemes were not built, instead of their numbers."""
    from softpolar.benchmarks import row_box as row14

    monkeypatch.setitem(row14.OTHER_SCHEMES, "smoke", False)
    built = []
    real = row14._atlas
    monkeypatch.setattr(row14, "_atlas", lambda engine, *a: built.append(engine["scheme"]) or real(engine, *a))
    rep = row14.run("smoke", lambda msg: None)
    from softpolar.atlas import BASELINE_ENGINE, DEFAULT_ENGINE

    assert built == [BASELINE_ENGINE["scheme"], DEFAULT_ENGINE["scheme"]]
    assert [f["value"] for f in rep["facts"] if "schemes" in f["label"]] == ["not built in smoke mode"]
    assert not [f for f in rep["facts"] if "scheme, CPU s" in f["label"] or "scheme 'parent'" in f["label"]]


def test_bench_row_16_times_both_checkers_on_one_atlas():
    """Row 16 (smoke size): both checkers pass the engine's atlas; the ratio is the jets checker's CPU over
    today's, and the facts are each checker's CPU over the engine's."""
    from softpolar.benchmarks import row_check as row16

    rep = row16.run("smoke", lambda msg: None)
    (line,) = rep["lines"]
    assert line["ratio"] == pytest.approx(line["anchor_s"] / line["softpolar_s"])
    assert line["met"] == (line["ratio"] >= row16.TARGET)  # both passed, else met is False
    assert len(rep["facts"]) == 2 and all("passed" in f["notes"] for f in rep["facts"])
    assert all(float(f["value"]) > 0 for f in rep["facts"])


def test_checker_methods_refuse_the_same_attacks():
    """The jets checker (row 16's anchor) and today's make the same proof obligations: both pass the honest
    small atlas and refuse its tampered copies; an unknown method is refused before any box is read."""
    from softpolar.atlas.checker_suites import small_atlas, atlas_attacks

    cert = small_atlas()
    attacks = atlas_attacks(cert)
    for method in ac.CHECK_METHODS:
        assert ac.check_atlas(cert, method=method).passed
        for name in ("wrong winner on a box that needed integration (consistent lie)", "stored a_lower raised",
                     "stored u_lower raised", "tau edited"):
            assert not ac.check_atlas(attacks[name], method=method).passed, (method, name)
    with pytest.raises(InvalidArgument, match="method"):
        ac.check_atlas(cert, method="quick")


def test_doctored_step_hints_are_refused_or_harmless():
    """The steps ``h`` are hints the checker re-proves (any exact dyadic step is sound): a consistent edit
    (tau, steps and h changed together) is either refused, when no enclosure proves it (the whole tau in
    one step), or harmless, when it is still a proof (every step halved: twice as many, the same tau)."""
    from softpolar.atlas.checker_suites import small_atlas

    cert = small_atlas()
    sv = ac.check_spec(cert["spec"])
    box = integrated_box(cert)
    assert ac.verify_box(sv, box)[0]
    one = copy.deepcopy(box)
    one.update(h=[box["tau"]], steps=1)
    ok, why = ac.verify_box(sv, one)
    assert not ok and ("a-priori" in why or "not" in why), why
    halves = copy.deepcopy(box)
    halves.update(h=[str(Fr(h) / 2) for h in box["h"] for _ in range(2)], steps=2 * len(box["h"]))
    assert Fr(halves["tau"]) == sum(Fr(h) for h in halves["h"])
    assert ac.verify_box(sv, halves)[0]
    bad = copy.deepcopy(cert)
    target = next(b for b in bad["boxes"] if b["key"] == box["key"])
    target.update(h=[box["tau"]], steps=1)
    res = ac.check_atlas(bad)
    assert not res.passed and any(str(box["key"]) in p for p in res.problems)


def test_format_1_atlas_read_with_its_labels_from_1(small_atlas):
    """Tokens are counted from 0 from format 2 on (issue 39); a format 1 file (labels from 1) is read as written,
    and a format 2 file labelled from 1, or an unknown format, is refused."""
    _, cert, _ = small_atlas
    assert cert["format"] == "softpolar-atlas/2" and "token 0" in cert["area"]
    old = copy.deepcopy(cert)
    old["format"] = "softpolar-atlas/1"
    def from_1(labels):
        return {(f"token {int(k.split()[1]) + 1}" if k.startswith("token") else k): v for k, v in labels.items()}

    old["area"], old["float64"]["float_area"] = from_1(cert["area"]), from_1(cert["float64"]["float_area"])
    assert ac.check_atlas(old).passed
    mixed = copy.deepcopy(old)
    mixed["format"] = "softpolar-atlas/2"  # labels from 1 under format 2: refused
    _refused(mixed, "expected keys among ['token 0'")
    mixed["float64"]["float_area"] = cert["float64"]["float_area"]  # only the area labelled from 1
    _refused(mixed, "is not the boxes' area")
    with pytest.raises(InvalidArgument, match="softpolar-atlas/1' or 'softpolar-atlas/2' expected"):
        ac.check_atlas({**cert, "format": "softpolar-atlas/3"})
