"""Strong witnesses of the C-claims: each one runs the control's own code path on an input (or under a planted bug)
where the control's wrong statement holds, and must reach the claim's expected verdict."""
from __future__ import annotations

import pytest

from proofs_check import Context
from proofs_check.mutation import run_witness
from proofs_check import registry

#: the calculus claims (symbolic proofs and short flows: a few seconds together)
CALCULUS = ("C01", "C02", "C04", "C05", "C06", "C07", "C08", "C09", "C10")
#: logistic, regression and alternatives claims whose witnesses run in seconds
FLOWS = ("C15", "C19", "C20", "C22", "C24", "C26", "C27", "C28")


@pytest.mark.parametrize("cid", CALCULUS + FLOWS)
def test_calculus_witness_is_strong_and_passes(cid):
    claim = registry()[cid]
    assert claim.witness.kind == "strong" and not claim.witness.weak_because
    w = run_witness(claim, Context())
    assert w["passes"], w
    assert w["control"] == claim.expected


def test_witness_mutants_leave_the_true_identities_refuted():
    """Under the SymPy-flow witness mutants a true identity fails (the bug is real, not a no-op)."""
    from proofs_check.mutation import mutant

    ctx = Context()
    reg = registry()
    for name, check in (("witness.symbolic_da_zero", reg["C01"].check), ("witness.symbolic_ascent", reg["C07"].check),
                        ("witness.symbolic_da_sign", reg["C08"].check)):
        before = check(ctx).verdict
        with mutant(name).patch():
            after = check(Context()).verdict
        assert before != after, name


def test_c15_witness_makes_both_wrong_rules_hold():
    """On the instances built so that the rules agree, *each* wrong rule passes the same winner test."""
    out = registry()["C15"].witness.run(Context())
    assert [v["verdict"] for v in out.details["variants"]] == ["verified", "verified"]


def test_c20_witness_rows_are_square_loss_limits_at_a_vertex():
    from proofs_check.claims import VERTEX_B, square_vertex_runs

    rows = square_vertex_runs(Context())
    assert rows and all(r["b"] == VERTEX_B and r["L_end"] < 1e-15 and 1 - r["s_end"].max() < 1e-5 for r in rows)


@pytest.mark.parametrize("cid", ["C31", "C32", "C33", "KSINK.softmax1", "KSINK.gated-softmax"])
def test_experiment_witnesses_run_the_control_rule_on_planted_results(cid):
    """No training: the control's own rule on a fixed planted result set must reach the claim's verdict."""
    claim = registry()[cid]
    assert claim.witness.kind == "strong" and claim.witness.run is not None
    w = run_witness(claim, Context())
    assert w["passes"] and w["control"] == claim.expected, w


@pytest.mark.slow
def test_atlas_witness_mutant_lets_the_tampered_box_pass():
    claim = registry()["ATLAS"]
    assert claim.witness.mutant == "witness.atlas_ignore_winner"
    w = run_witness(claim, Context())
    assert w["passes"] and w["control"] == "verified", w
