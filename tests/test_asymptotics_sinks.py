"""SINK2's escape-time constant pinned (issue 35): a 1 %-wrong constant is rejected by the same comparison.

Through the public registry only: the claim's check, control and witness, and the instances its check reports.
"""
from __future__ import annotations

from proofs_check import Context, registry


def _law(u1, b):
    """The derived leading law u1^2/(2b), stated here."""
    return u1 * u1 / (2 * b)


def _old_rule(rows, law, tol=0.08):
    """The rule before issue 35, restated: |log tau*/law - 1| decreasing along the sweep and < 0.08 at its end."""
    errs = [abs(r["log_tau_star"] / law(r["u1"], r["b"]) - 1) for r in rows]
    return all(e1 < e0 for e0, e1 in zip(errs, errs[1:])) and errs[-1] < tol


def test_old_rule_accepted_a_one_percent_wrong_constant_the_new_control_rejects_it():
    claim, ctx = registry()["SINK2"], Context()
    out = claim.check(ctx)
    assert out.verdict == "verified"
    rows = out.details["instances"]
    # the old rule on the old quick sweep (u1 = -2, -3, -4) let a 1 % near miss through, and even 5 %
    assert [r["u1"] for r in rows[:3]] == [-2.0, -3.0, -4.0]
    assert _old_rule(rows[:3], lambda u1, b: 1.01 * _law(u1, b))
    assert _old_rule(rows[:3], lambda u1, b: 1.05 * _law(u1, b))
    # the new comparison: the control is the 1 % near miss on the same runs, refused
    ctl = claim.control.run(ctx)
    assert ctl.verdict == "refuted"
    assert "1.01" in claim.control.description
    fit = ctl.details["fit"]
    assert abs(fit["c"] * 1.01 - 1) < 0.005  # the data carry the derived constant 1
    assert fit["settle_diff"] < 0.0025
    assert abs(out.details["fit"]["c"] - 1) < 0.005


def test_near_miss_witness_passes_where_the_near_miss_holds():
    claim, ctx = registry()["SINK2"], Context()
    wit = claim.witness.run(ctx)
    assert wit.verdict == "verified"
    assert all(abs(r["b"] * 1.01 - 0.1) < 1e-12 for r in wit.details["instances"])
