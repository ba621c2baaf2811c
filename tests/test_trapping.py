"""The trapping-region lemma of the logistic tau-system: proofs and their negative controls."""
from __future__ import annotations

import re

import pytest
import sympy as sp

from theorems import (
    InvalidArgument, check_case_split, check_gap_identities, check_invariance, check_region_sign,
    check_tau_reduction, check_tie_invariance, check_winner_weight, prove_trapping_lemma, tau_system,
    trapping_region,
)


def test_tau_system_is_the_model_flow_divided_by_gamma():
    assert check_tau_reduction(3, 2).status == "proved"


def test_tau_reduction_control_is_disproved():
    res = check_tau_reduction(3, 2, wrong=True)
    assert res.status == "disproved"
    assert res.counterexample


@pytest.mark.parametrize("n", [2, 3, 4])
def test_region_R_invariant_on_every_face(n):
    inv = check_invariance(trapping_region(n, 0, "R"))
    assert len(inv.faces) == 2 * (n - 1)
    assert inv.holds, [f for f in inv.faces if not f.holds]
    assert all(f.method == "nonnegative-coefficients" for f in inv.faces)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("var", ["u", "a"])
def test_gaps_monotone_on_all_of_R(n, var):
    R = trapping_region(n, n - 1, "R")  # a winner other than token 1, too
    for j in range(n - 1):
        assert check_region_sign(R, var, j, on="region").status == "proved"


def _lie_at(point, n, var, i, j):
    """d/dtau (x_i - x_j) evaluated exactly at a reported counterexample (u, s, b)."""
    ts = tau_system(n)
    x = ts.u if var == "u" else ts.a
    L = ts.lie(x[i] - x[j])
    subs = {ts.b: sp.Rational(point["b"])}
    subs.update({uk: sp.Rational(v) for uk, v in zip(ts.u, point["u"])})
    subs.update({ak: sp.log(sp.Rational(v)) for ak, v in zip(ts.a, point["s"])})
    return sp.nsimplify(sp.simplify(L.xreplace(subs)))


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("kind,var", [("a-only", "a"), ("u-only", "u")])
def test_negative_control_regions_have_outward_flow(n, kind, var):
    inv = check_invariance(trapping_region(n, 0, kind))
    assert not inv.holds
    bad = inv.counterexamples
    assert bad, [f.status for f in inv.faces]
    cex = bad[0].counterexample
    # the reported point lies on the face x_1 = x_2 ... of the region and the flow points outward there
    j = int(cex["face"].split("=")[1].strip().split("_")[1]) - 1
    if var == "a":
        assert sp.Rational(cex["s"][0]) == sp.Rational(cex["s"][j])
    else:
        assert sp.Rational(cex["u"][0]) == sp.Rational(cex["u"][j])
    assert _lie_at(cex, n, var, 0, j) < 0


@pytest.mark.parametrize("n", [2, 3, 5])
def test_gap_identities_and_wrong_variant(n):
    res = check_gap_identities(n)
    assert res["D1"].status == res["D2"].status == res["u-gap"].status == "proved"
    assert res["D1 (wrong)"].status == "disproved"


def test_case_split_size_generic():
    res = check_case_split()
    assert res["decomposition"].status == "proved"
    assert res["D1 >= 0"] is True
    assert res["case u_j <= z"] is True
    assert res["case u_j > z"] is True
    assert res["control"] is not True  # without a_i >= a_j the sign is not decided


@pytest.mark.parametrize("n", [2, 3, 4])
def test_winner_weight_and_its_control(n):
    assert check_winner_weight(n).status == "proved"
    assert check_winner_weight(n, kind="u-only").status == "disproved"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_tie_set_is_invariant(n):
    assert check_tie_invariance(n).status == "proved"


def test_whole_lemma_report():
    report = prove_trapping_lemma(ns=(2, 3))
    assert report.holds, [c for c in report.checks if not c.ok]
    assert report.provenance == "D"
    statuses = {c.expected for c in report.checks}
    assert statuses == {"proved", "disproved", "undecided"}


@pytest.mark.parametrize("call", [
    lambda: trapping_region(3, 3),
    lambda: trapping_region(3, 0, "bogus"),
    lambda: trapping_region(1, 0),
    lambda: check_region_sign(trapping_region(3, 0), "v", 1),
    lambda: check_region_sign(trapping_region(3, 0), "a", 0),
    lambda: check_region_sign(trapping_region(3, 0, "a-only"), "u", 1, on="face"),
])
def test_bad_arguments(call):
    with pytest.raises(InvalidArgument):
        call()


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 6, 8])
def test_region_R_invariant_for_the_certified_sizes(n):
    """Nagumo's face conditions for the token counts of the certificate family (n = 8: about 30 s)."""
    assert check_invariance(trapping_region(n, 0, "R")).holds


@pytest.mark.parametrize("n", [2, 3])
def test_strict_region_case_split_and_its_controls(n):
    """Each step of "R_i^+ is forward invariant" (case by case) and the divergence rates; controls fail."""
    from theorems.trapping import check_strict_region
    res = check_strict_region(n)
    cases = [k for k in res if "control" not in k]
    controls = [k for k in res if "control" in k]
    assert len(cases) == 4 * (n - 1) and len(controls) == (2 if n >= 3 else 1) * (n - 1)
    for k in cases:
        assert res[k].status == "proved", (k, res[k])
    for k in controls:
        assert res[k].status == "disproved" and res[k].counterexample, (k, res[k])
    strict = [res[k] for k in cases if "face of R_i^+" in k]
    assert all("strict" in r.method for r in strict)


def test_what_is_argued_by_hand_is_named():
    import theorems.trapping as T
    assert len(T.ARGUED_BY_HAND) == 1 and "global existence" in T.ARGUED_BY_HAND[0]
    assert "reduced_flow_global_existence" in T.ARGUED_BY_HAND[0]
    assert "proven in Coq" in T.__doc__ and "check_strict_region" in T.__doc__
    # every step named as proven in Coq is a theorem of the shipped development
    from theorems import coq
    text = {f.removesuffix(".v"): (coq.COQ_DIR / f).read_text() for f in coq.sources()}
    for names in T.PROVEN_IN_COQ.values():
        for qual in names.split(" / "):
            mod, name = qual.split(".")
            assert re.search(rf"^(Theorem|Lemma) {name} ", text[mod], re.M), qual


# ---- the sign facts for every n ------------------------------------------------------------------------
def test_sign_facts_hold_for_every_n():
    from theorems.trapping import check_sign_facts_generic
    facts = check_sign_facts_generic()
    assert len(facts) == 8 and all(f.status == "proved" for f in facts.values()), facts
    assert "n = 2, 3, 4" in facts["bridge"].detail


def test_sign_fact_controls_are_disproved():
    from theorems.trapping import check_sign_facts_generic
    (closed,) = check_sign_facts_generic(wrong="closed face").values()
    assert closed.status == "disproved" and "exactly 0" in closed.detail
    (rate,) = check_sign_facts_generic(wrong="s_i rate").values()
    assert rate.status == "disproved" and rate.counterexample["n"] == 3
    # the witness is an exact point of R_1 with a negative value
    assert all(int(x) <= int(rate.counterexample["u"][0]) for x in rate.counterexample["u"])
    assert all(int(x) <= 0 for x in rate.counterexample["a"])


def test_sign_facts_check_has_power(monkeypatch):
    # planted bugs: an atom declared strictly positive where it only is >= 0, and a decomposition whose
    # identity is wrong (the weight s_i in place of s_j): the first makes the closed-face control pass
    from theorems import trapping as T
    monkeypatch.setitem(T.SIGN_ATOMS, "agap", ">0: planted")
    (closed,) = T.check_sign_facts_generic(wrong="closed face").values()
    assert closed.status == "proved"
    monkeypatch.undo()
    monkeypatch.setitem(T.SIGN_ATOMS, "ugap", "any: planted")  # not a sign: every fact using it fails
    facts = T.check_sign_facts_generic()
    assert facts["D2: u_i - z >= 0 on R_i"].status == "undecided"
    with pytest.raises(InvalidArgument):
        T.check_sign_facts_generic(wrong="nonsense")
