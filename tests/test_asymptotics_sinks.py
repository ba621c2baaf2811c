"""SINK2's escape-time constant pinned (issue 35): a 1 %-wrong constant is rejected by the same comparison."""
from __future__ import annotations

import pytest

from proofs_check import Context


def _old_rule(runs, law, tol=0.08):
    """The rule before issue 35, restated: |log tau*/law - 1| decreasing along the sweep and < 0.08 at its end."""
    errs = [abs(r["sigma_star"] / law(r["u0"][0], r["b"]) - 1) for r in runs]
    return all(e1 < e0 for e0, e1 in zip(errs, errs[1:])) and errs[-1] < tol


def test_old_rule_accepted_a_one_percent_wrong_constant_the_new_fit_rejects_it():
    from proofs_check.claims._claims_sinks import _sink2_sweep, _sink2_verdict
    from theorems._sinks import escape_law

    NEAR_MISS = 1.01  # literal here, so that the test runs (and fails) on the old code too

    ctx = Context()
    runs = _sink2_sweep(ctx, ((-2.0, 0.1), (-3.0, 0.1), (-4.0, 0.1), (-5.0, 0.1), (-6.0, 0.1)))
    near = lambda u1, b: NEAR_MISS * escape_law(u1, b)
    # the old rule on the old quick sweep (u1 = -2, -3, -4) let the near miss through, and even 1.05
    assert _old_rule(runs[:3], near)
    assert _old_rule(runs[:3], lambda u1, b: 1.05 * escape_law(u1, b))
    # the new comparison: the derived constant passes, the 1 % near miss is refuted, on the same runs
    assert _sink2_verdict(runs, escape_law, what="law").verdict == "verified"
    out = _sink2_verdict(runs, near, what="near miss")
    assert out.verdict == "refuted"
    assert out.details["fit"]["c"] == pytest.approx(1 / NEAR_MISS, abs=2e-3)
    # the constant 0.99 is rejected too: the tolerance is two-sided
    assert _sink2_verdict(runs, lambda u1, b: 0.99 * escape_law(u1, b), what="low").verdict == "refuted"


def test_escape_fit_is_settled_and_within_tolerance():
    from proofs_check.claims._claims_sinks import ESCAPE_C_TOL, ESCAPE_SETTLE_TOL, sink2_control, sink2_witness

    ctx = Context()
    ctl = sink2_control(ctx)
    assert ctl.verdict == "refuted"
    fit = ctl.details["fit"]
    assert fit["settle_diff"] < ESCAPE_SETTLE_TOL
    assert abs(fit["c"] * 1.01 - 1) < ESCAPE_C_TOL  # the data carry the derived constant
    assert sink2_witness(ctx).verdict == "verified"  # the near miss, where it really holds, passes


def test_escape_fit_needs_four_points():
    from proofs_check.claims._claims_sinks import _escape_fit

    rows = [{"law": x, "log_tau_star": x - 2} for x in (45.0, 80.0, 125.0)]
    with pytest.raises(ValueError, match="at least four"):
        _escape_fit(rows)
