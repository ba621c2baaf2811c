"""Witnesses of C25 and C30 (the control's own code path under a planted bug, or on an input built so that the
control's wrong statement holds), and the finding behind C21's and C29's weak ones."""
from __future__ import annotations

import numpy as np
import pytest

from proofs_check import Context
from proofs_check.mutation import mutant, run_witness
from proofs_check import registry


def test_c30_witness_input_makes_the_initial_logit_rule_hold():
    from proofs_check.claims import authors_tied, tied_aligned_runs

    claim = registry()["C30"]
    assert claim.witness.kind == "strong" and claim.witness.run is not None
    ctx = Context()
    for r in tied_aligned_runs(ctx):  # the same values as the authors' a(0), ranked like w
        _, a0, w = authors_tied(r["D"])
        assert sorted(r["a0"]) == sorted(a0) and np.argsort(r["a0"]).tolist() == np.argsort(w).tolist()
        assert int(np.argmax(r["alpha"])) == int(np.argmax(r["a0"]))  # the rule names the winner
    w = run_witness(claim, ctx)
    assert w["passes"] and w["control"] == "verified", w
    assert claim.control.run(ctx).verdict == "refuted"  # on the authors' own a(0) the rule still fails


def test_gd_record_alias_mutant_records_the_last_iterate():
    from numerics import Problem, gradient_descent

    p = Problem.from_seed(0, d=2, n=3, loss="square", v_scale=1.0)
    g = gradient_descent(p, lr=0.05, steps=50, record=[0, 10, 50])
    with mutant("witness.gd_record_alias").patch():
        h = gradient_descent(p, lr=0.05, steps=50, record=[0, 10, 50])
    assert not np.allclose(g.a[0], g.a[-1])
    for k in range(3):
        np.testing.assert_array_equal(np.asarray(h.a[k], float), np.asarray(g.a[-1], float))
    assert h.times == g.times


@pytest.mark.slow
def test_c25_witness_mutant_makes_the_early_ordering_hold():
    """Under the record bug, the control's ordering test at iteration 1e3 reads the 3e5 iterates (5 x 3e5 GD)."""
    claim = registry()["C25"]
    assert claim.witness.kind == "strong" and claim.witness.mutant == "witness.gd_record_alias"
    w = run_witness(claim, Context())
    assert w["passes"] and w["control"] == "verified", w


@pytest.mark.parametrize("cid", ["C21", "C29"])
def test_weak_witnesses_say_why_no_strong_one_exists(cid):
    w = registry()[cid].witness
    assert w.kind == "weak" and "no input" in w.weak_because


def test_c21_finding_a_tied_maximum_keeps_the_logistic_limit_off_the_vertices_but_not_frozen():
    """The finding behind C21's weak witness, on the control's own test: from a tied maximum the logistic limit
    is the uniform weight on the tied pair (partial), yet H still moves by far more than the frozen test's 1e-10
    over [1e50, 1e100], and by less as b shrinks (the losers' mass ~ b / log^2 t)."""
    from proofs_check.claims import logistic_row, partial_polarization_test, square_partial_runs, tied_maximum

    rows = square_partial_runs(Context())
    changes = []
    for b in (4.0, 1e-2):
        row = logistic_row(rows[0], a0=tied_maximum(rows[0]["a0"]), b=b)
        ok, flags = partial_polarization_test(row)
        assert not ok and flags["partial"] and flags["converged"] and not flags["frozen"]
        assert abs(float(np.max(row["s_end"])) - 0.5) < 1e-3
        changes.append(abs(row["H_end"] - row["H_mid"]))
    assert changes[1] < changes[0] / 100 and changes[1] > 1e-10


def test_c10_witness_mutant_makes_the_square_loss_flow_equal_star_at_tau_equals_t():
    """Under the linearized loss the flow from V(0) = y c0^T is (star) at tau = t: the control's comparison agrees to
    round-off, while the true flow differs (the control is refuted) and the linearized loss really is another flow."""
    from proofs_check.claims import c10_run

    claim = registry()["C10"]
    assert claim.witness.kind == "strong" and claim.witness.mutant == "witness.loss_linearized"
    w = run_witness(claim, Context())
    assert w["passes"] and w["control"] == "verified", w
    assert claim.control.run(Context()).verdict == "refuted"
    with mutant("witness.loss_linearized").patch():
        r = c10_run(Context(), 0)
    assert float(np.max(np.abs(r["tau"] - r["times"]))) < 1e-9 * float(r["times"][-1])  # rho = 1: tau = t
