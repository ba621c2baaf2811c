"""softmax1 after the escape: the trapping-region lemma, the theta clock, the sink certificate and its checkers."""
from __future__ import annotations

import copy
from fractions import Fraction

import pytest
import sympy as sp

from theorems import InvalidArgument, prove_zero
from theorems.sinks_lemma import (inverse_weight_field, region_controls, region_sign_facts, rewrite_proofs,
                                   sink_region, softmax1_system)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_softmax1_region_sign_facts_are_proved_and_its_controls_refused(n):
    facts = region_sign_facts(n)
    assert facts and all(v.status == "proved" for v in facts.values()), {k: v.status for k, v in facts.items()}
    controls = region_controls(n)
    assert len(controls) == (2 if n == 1 else 3)
    for name, res in controls.items():
        assert res.status == "disproved", name
        assert res.counterexample  # an exact point, checked below for one of them


def test_region_control_point_really_has_outward_flow():
    """The control's point on the face a_1 = 0 of the region without u_1 >= 0: da_1/dtau < 0 there, exactly."""
    S = softmax1_system(2)
    res = region_controls(2)["n=2: region without u_i >= 0: da_i >= 0 on a_i = 0 (control)"]
    pt = {k: sp.Rational(v) for k, v in res.counterexample.items()}
    U, p2, r2 = pt["U"], pt.get("p_2", 0), pt.get("r_2", 0)
    subs = {S.u[0]: U, S.u[1]: U - p2, S.a[0]: 0, S.a[1]: -sp.log(1 + r2), S.b: 1}
    assert sp.nsimplify(sp.simplify(S.da[0].xreplace(subs))) < 0


def test_sink_region_rejects_bad_arguments():
    with pytest.raises(InvalidArgument, match="winner"):
        sink_region(2, 5)
    with pytest.raises(InvalidArgument, match="kind"):
        sink_region(2, 0, "nope")


def test_rewrites_and_both_engine_fields_equal_the_derived_system():
    from numerics.validated.sink_cert import field
    from numerics.validated.sink_certcheck import poly_field

    assert all(r.status == "proved" for _, r in rewrite_proofs((1, 2)))
    for n in (1, 2, 3):
        S = softmax1_system(n)
        v, (du, dv) = inverse_weight_field(n)
        cu, cv = poly_field(list(S.u), v, S.b, sp.Integer(1))
        assert prove_zero([x - y for x, y in zip(cu + cv, du + dv)]).status == "proved"
        f = field(list(S.u) + v, S.b, sp.Integer(1))
        assert prove_zero([x - y for x, y in zip(f, du + dv)]).status == "proved"
    # the control: a field with the sink's weight left out of z is disproved by the same prover
    S = softmax1_system(2)
    v, (du, dv) = inverse_weight_field(2)
    wrong = [sum(uk / vk for uk, vk in zip(S.u, v)) - uk for uk in S.u]
    assert prove_zero([x - y for x, y in zip(wrong, dv)]).status == "disproved"


def test_takeover_in_the_theta_clock_reaches_the_top_token_with_two_engines():
    from proofs_check.claims import TAKEOVER_EPS, sink2_takeover

    lo = sink2_takeover([-2.0, -2.5, -3.0], 0.1, method="LSODA")
    dp = sink2_takeover([-2.0, -2.5, -3.0], 0.1, method="DOP853")
    assert lo["s_top_end"] >= 1 - 1.01 * TAKEOVER_EPS and lo["sink_end"] < TAKEOVER_EPS
    assert abs(lo["log_tau_escape"] - 17.332) < 2e-3  # the log-clock run's tau* (docs/sinks.md)
    assert lo["log_tau_escape"] < lo["log_tau_takeover"]
    for k in ("log_tau_escape", "log_tau_takeover"):
        assert abs(lo[k] - dp[k]) < 1e-5, k


def test_positive_projection_run_has_no_sink_phase_and_the_rule_can_say_so():
    """SINK2's second control: u1(0) > 0, where no sink phase occurs (largest sink mass at tau = 0: 1/(n+1))."""
    from proofs_check.claims import SINK2_POSITIVE_U0, sink2_takeover

    pos = sink2_takeover(list(SINK2_POSITIVE_U0), 0.1)
    assert pos["sink_phase_log_tau"] is None and abs(pos["sink_max"] - 0.25) < 1e-12
    assert pos["log_tau_escape"] is None  # nothing to escape from
    neg = sink2_takeover([-2.0, -2.5, -3.0], 0.1)
    lo, hi = neg["sink_phase_log_tau"]
    assert lo < neg["log_tau_escape"] < hi  # the sink still holds 1 - 1e-6 when u_1 turns positive


# ---- the certificate --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_cert():
    """A short instance (n = 2, log tau* about 6.8), enough to exercise every statement."""
    from numerics.validated.sink_cert import certify_sink

    c = certify_sink([Fraction(-2), Fraction(-5, 2)], Fraction(1, 4), eps=Fraction(1, 100), prec=192, order=20)
    assert c.status == "certified", c.status
    return c.data


def test_small_certificate_is_accepted_by_the_replay_and_the_independent_checker(small_cert):
    from numerics.validated.sink_cert import check_sink_certificate
    from numerics.validated.sink_certcheck import check_sink_independent

    ok, why = check_sink_certificate(small_cert)
    assert ok, why
    res = check_sink_independent(small_cert)
    assert res.ok, res.reason
    sink, esc = small_cert["sink_phase"], small_cert["escape"]
    assert Fraction(sink["tau_lower"]) < Fraction(sink["tau_upper"])
    assert Fraction(esc["tau_star_lower"]) < Fraction(esc["tau_star_upper"]) <= Fraction(small_cert["entry"]["tau"])
    assert all(Fraction(x) > 0 for x in small_cert["entry"]["v_gap_lower"])


def test_a_checker_crash_is_not_counted_as_a_refusal(small_cert, monkeypatch):
    """The claim's verdict on a doctored certificate: refused for its content, but inconclusive when a checker
    crashes (a planted TypeError in the independent checker's field), never 'refuted'."""
    from numerics.validated import sink_certcheck
    from numerics.validated.sink_cert import doctored
    from proofs_check.claims import sink_cert_verdict

    bad = doctored(small_cert, what="eps")
    assert sink_cert_verdict(None, bad, "certified", what="doctored").verdict == "refuted"

    def boom(*args, **kwargs):
        raise TypeError("planted bug")

    monkeypatch.setattr(sink_certcheck, "_check", boom)
    out = sink_cert_verdict(None, bad, "certified", what="doctored")
    assert out.verdict == "inconclusive", out.evidence
    assert "independent checker crashed" in out.evidence


@pytest.mark.parametrize("what", ["eps", "u0"])
def test_doctored_certificates_are_refused_by_both_checkers(small_cert, what):
    from numerics.validated.sink_cert import check_sink_certificate, doctored
    from numerics.validated.sink_certcheck import check_sink_independent

    bad = doctored(small_cert, what=what)
    ok, why = check_sink_certificate(bad)
    assert not ok
    res = check_sink_independent(bad)
    assert not res.ok
    if what == "eps":
        assert "1 - eps" in res.reason
    else:
        assert "disjoint" in res.reason


def test_a_moved_end_ball_or_bound_is_refused(small_cert):
    from numerics.validated.sink_cert import check_sink_certificate
    from numerics.validated.sink_certcheck import check_sink_independent

    bad = copy.deepcopy(small_cert)
    bad["entry"]["u_gap_lower"][0] = "1000/1"
    assert not check_sink_certificate(bad)[0]
    assert "u-gap bound" in check_sink_independent(bad).reason
    bad = copy.deepcopy(small_cert)
    k = len(bad["steps"]) // 2
    bad["steps"][k]["end"] = bad["steps"][k + 1]["end"]
    assert not check_sink_certificate(bad)[0]
    assert not check_sink_independent(bad).ok


@pytest.mark.parametrize("garbage", [{}, [], "x", {"format": "softpolar-sink-certificate", "version": 1},
                                     {"format": "softpolar-sink-certificate", "version": 1, "system": 3}])
def test_checkers_never_raise_on_garbage(garbage):
    from numerics.validated.sink_cert import check_sink_certificate
    from numerics.validated.sink_certcheck import check_sink_independent

    assert check_sink_certificate(garbage)[0] is False
    assert check_sink_independent(garbage).ok is False


def test_certify_sink_rejects_bad_input():
    from numerics.validated.sink_cert import certify_sink

    with pytest.raises(InvalidArgument, match="v0"):
        certify_sink([Fraction(-3), Fraction(-2)], Fraction(1, 10), v0=[1, -1])
    with pytest.raises(InvalidArgument, match="b="):
        certify_sink([Fraction(-2)], Fraction(-1))
    with pytest.raises(InvalidArgument, match="u0"):
        certify_sink("-2", Fraction(1, 10))
    with pytest.raises(InvalidArgument, match="u0='x'"):
        certify_sink(["x"], Fraction(1, 10))
    with pytest.raises(InvalidArgument, match="eps=nan"):
        certify_sink([-2], Fraction(1, 10), eps=float("nan"))


def test_a_positive_projection_has_no_sink_phase_and_still_certifies_its_winner():
    """The issue's control: with u_1(0) > 0 the sink never holds 1 - eps of the weight on a whole step, there
    is nothing to escape from, and the top token's entry into its region is certified (both checkers)."""
    from numerics.validated.sink_cert import certify_sink, check_sink_certificate
    from numerics.validated.sink_certcheck import check_sink_independent

    c = certify_sink([Fraction(1, 2), Fraction(0)], Fraction(1, 4), eps=Fraction(1, 100), prec=128, order=16)
    assert c.status == "certified" and c.data["winner"] == 1
    assert c.data["sink_phase"] is None and c.data["escape"] is None
    assert check_sink_certificate(c.data)[0]
    assert check_sink_independent(c.data).ok
    bad = copy.deepcopy(c.data)
    bad["winner"] = 2  # the other token's region is not entered
    assert not check_sink_certificate(bad)[0]
    assert not check_sink_independent(bad).ok


def test_a_head_start_in_the_logits_makes_the_second_token_win():
    """a_2(0) = log 20 (v_2(0) = 1/20) against u_1(0) > u_2(0): the second token wins, certified."""
    from numerics.validated.sink_cert import certify_sink, check_sink_certificate
    from numerics.validated.sink_certcheck import check_sink_independent

    c = certify_sink([Fraction(-1), Fraction(-3, 2)], Fraction(1, 10), v0=[1, Fraction(1, 20)],
                     eps=Fraction(1, 100), prec=192, order=20)
    assert c.status == "certified", c.status
    assert c.data["winner"] == 2 and c.data["escape"] is not None
    assert check_sink_certificate(c.data)[0]
    assert check_sink_independent(c.data).ok


def test_where_the_engine_ends_it_says_so():
    """A dominant token with a very negative projection (rates O(|u|) at weights O(1)): the balls wrap and
    the certifier stops with 'balls too wide', recording no statement."""
    from numerics.validated.sink_cert import certify_sink

    c = certify_sink([Fraction(-3), Fraction(-7, 2)], Fraction(1, 10), v0=[1, Fraction(1, 20)],
                     eps=Fraction(1, 100), prec=192, order=20, time_budget=60)
    assert c.status.startswith("balls too wide") and "entry" not in c.data and c.data["winner"] is None


def test_independent_checker_imports_nothing_it_checks():
    from tests.test_import_graph import graph

    edges = graph()["numerics.validated.sink_certcheck"]
    assert not {t for t in edges if t.startswith(("numerics.validated.sink_cert", "numerics.validated.enclosure",
                                                  "numerics.validated.certify", "numerics.integrate"))}
    assert "numerics.validated.sink_certcheck" not in graph()["numerics.validated.sink_cert"]


@pytest.mark.slow
def test_sink2_cert_claim_and_its_control_and_witness():
    from proofs_check import Context
    from proofs_check import registry

    claim = registry()["SINK2.CERT"]
    ctx = Context()
    assert claim.check(ctx).verdict == "verified"
    assert claim.control.run(ctx).verdict == "refuted"
    assert claim.witness.run(ctx).verdict == "verified"


def test_sink_atlas_rows_agree_between_float_and_certificate():
    from numerics import sink_atlas

    rows = sink_atlas([Fraction(0)], [Fraction(1), Fraction(5)], prec=192, order=20)
    assert [r["winner"] for r in rows] == [1, 2]  # the head start e^{a_2(0)} = 5 wins against u_1 - u_2 = 1/2
    for r in rows:
        assert r["cert_status"] == "certified" and r["cert_winner"] == r["winner"] and r["independent"]
        assert r["independent_crashed"] is None
        assert not r["sink_phase"] and not r["cert_sink_phase"]
    with pytest.raises(InvalidArgument, match="w > 0"):
        sink_atlas([0], [0])


# ---- the checkers' shortcuts give the results of the plain computation ------------------------------
def _ball_bits(x):
    m, e = x.mid().man_exp()
    r, f = x.rad().man_exp()
    return int(m), int(e), int(r), int(f)


def test_independent_cauchy_products_and_prefix_are_the_plain_ones_bit_for_bit():
    """``cauchy_coefficient`` (map, started at the first product) is ``sum(f[i] * g[m - i] ...)`` ball for ball, and the
    coefficients of ``taylor(X, p + 1)`` up to ``p`` are those of ``taylor(X, p)`` (the substep reads them)."""
    import flint

    from numerics.validated import sink_certcheck as SI

    old = flint.ctx.prec
    flint.ctx.prec = SI.CHECK_PREC
    try:
        def arb(q, rad=Fraction(0)):
            q = Fraction(q)
            return flint.arb(flint.fmpq(q.numerator, q.denominator), flint.arb(flint.fmpq(rad.numerator,
                                                                                          rad.denominator)))

        f = [arb(Fraction(k + 1, 7 + k), Fraction(1, 10**20 + k)) for k in range(9)]
        g = [arb(Fraction(-3, 5 + 2 * k), Fraction(k, 10**25)) for k in range(9)]
        for m in range(9):
            plain = sum(f[i] * g[m - i] for i in range(m + 1))
            assert _ball_bits(SI.cauchy_coefficient(f, g, m)) == _ball_bits(plain), m
        one = arb(1)
        U, Vv = [arb(Fraction(-2)), arb(Fraction(-5, 2))], [arb(Fraction(1)), arb(Fraction(3, 2))]
        b = arb(Fraction(1, 4))
        short, long_ = SI.taylor(U, Vv, b, 8, one), SI.taylor(U, Vv, b, 9, one)
        for cs, cl in zip(short[0] + short[1], long_[0] + long_[1]):
            assert len(cl) == len(cs) + 1
            assert [_ball_bits(x) for x in cs] == [_ball_bits(x) for x in cl[:-1]]
    finally:
        flint.ctx.prec = old


def test_independent_early_refusal_refuses_only_what_the_remainder_test_refuses(small_cert, monkeypatch):
    """A substep refused before its box is sought (its point's c_{p+1} h^{p+1} already above the tolerance)
    is one the full remainder test refuses too: with the early test switched off, the substeps of the small
    certificate refused early (and every tenth of the others) give the same results, ball for ball."""
    import flint

    from numerics.validated import sink_certcheck as SI

    calls, orig_sub, orig_inside = [], SI._substep, SI._inside
    boxes_sought = [0]

    def sub(*args):
        before = boxes_sought[0]
        res = orig_sub(*args)
        calls.append((args, res, boxes_sought[0] == before))
        return res

    def inside(K, cand):
        boxes_sought[0] += 1
        return orig_inside(K, cand)

    monkeypatch.setattr(SI, "_substep", sub)
    monkeypatch.setattr(SI, "_inside", inside)
    assert SI.check_sink_independent(small_cert).ok
    early = [c for c in calls if c[1] is None and c[2]]
    assert early, "no substep was refused early: the test does not exercise the shortcut"
    sample = early + calls[::10]  # every early refusal and every tenth substep
    monkeypatch.setattr(SI, "_mig", lambda x: 0)  # the early test never fires
    old = flint.ctx.prec
    flint.ctx.prec = SI.CHECK_PREC
    try:
        for args, res, _ in sample:
            again = orig_sub(*args)
            if res is None:
                assert again is None
            else:
                assert again is not None
                assert [_ball_bits(x) for part in res for x in part] == \
                       [_ball_bits(x) for part in again for x in part]
    finally:
        flint.ctx.prec = old


def test_replay_checks_the_statements_before_the_arithmetic(small_cert, monkeypatch):
    """The replay derives the statements from the recorded balls first: a wrong statement is refused without
    the arithmetic (of a certificate wrong in both, the statement is named); a malformed step is left to the
    step-by-step replay, which names it as before; a wrong step alone is named by its index."""
    from numerics.validated import sink_cert as SC

    calls, orig = [], SC.taylor_coefficients
    monkeypatch.setattr(SC, "taylor_coefficients", lambda *a: calls.append(1) or orig(*a))
    ok, why = SC.check_sink_certificate(SC.doctored(small_cert, what="eps"))
    assert not ok and why.startswith("sink_phase: recorded") and not calls
    both = SC.doctored(small_cert, what="eps")
    both["steps"][3]["end"] = both["steps"][4]["end"]
    assert SC.check_sink_certificate(both)[1].startswith("sink_phase: recorded")
    step = copy.deepcopy(small_cert)
    step["steps"][3]["end"] = step["steps"][4]["end"]
    assert SC.check_sink_certificate(step) == (False, "step 3: the recorded end ball does not contain the enclosure")
    calls.clear()
    bad = SC.doctored(small_cert, what="eps")
    bad["steps"][5]["box"][0] = "nonsense"
    ok, why = SC.check_sink_certificate(bad)
    assert not ok and why.startswith("malformed certificate") and len(calls) == 2 * 5  # steps 0..4 replayed


def test_certifier_coefficients_equal_the_rebuilt_series_picard_bit_for_bit():
    """``taylor_coefficients`` grows its iterates in place; the plain Picard loop (series rebuilt from the
    coefficient lists at every order, all coefficients read) gives the same balls, bit for bit."""
    import flint

    from numerics.validated import enclosure as V
    from numerics.validated.sink_cert import field, taylor_coefficients

    with V.arb_context(192, cap=16):
        X = [V.arb_from_rational(q) for q in (Fraction(-2), Fraction(-5, 2), Fraction(3, 2), Fraction(7, 5))]
        X = [x + flint.arb(0, Fraction(1, 10**30).__float__()) for x in X]  # balls, not points
        b = V.arb_from_rational(Fraction(1, 4))
        C = [[x] for x in X]
        for m in range(1, 13):
            xs = [flint.arb_series(c, prec=m) for c in C]
            F = field(xs, b, flint.arb_series([1], prec=m))
            for k, Fk in enumerate(F):
                coeffs = Fk.coeffs()
                C[k].append(coeffs[m - 1] / m if m - 1 < len(coeffs) else flint.arb(0))
        got = taylor_coefficients(X, b, 12)
        assert [[_ball_bits(x) for x in row] for row in got] == [[_ball_bits(x) for x in row] for row in C]
