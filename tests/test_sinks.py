"""The sink claims' pieces: softmax1 and friends, SINK1's proofs, the softmax1 log clock, GATE, BANDIT."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from proofs_check import Context
from theorems.sinks import SOFTMAX1, SOFTPICK, STABLEMAX, gate_clock_proofs, sink1_control, sink1_proofs, \
    sink1_witness, ssmax


def test_sink_links_are_public_definitions_with_derived_properties():
    assert SOFTMAX1.smooth and not SOFTMAX1.shift_invariant  # the 1 in the normalizer breaks shift invariance
    assert not STABLEMAX.smooth and not SOFTPICK.smooth      # Piecewise / Max, Abs: no Taylor engine
    assert ssmax(4).shift_invariant
    a = sp.Matrix([sp.Rational(3, 10), sp.Rational(-1, 5)])
    phi = [float(v) for v in SOFTMAX1.phi(a)]
    Z = 1 + math.exp(0.3) + math.exp(-0.2)                    # e^{a_i} / (1 + sum_j e^{a_j}), by hand
    assert phi == pytest.approx([math.exp(0.3) / Z, math.exp(-0.2) / Z], rel=1e-15)


def test_sink1_proofs_control_and_witness():
    res = sink1_proofs(((2, 1), (3, 2)))
    assert all(r.status == "proved" for _, r in res) and len(res) == 8
    assert sink1_control().status == "disproved"  # the sink's logit, trained, moves
    assert sink1_witness().status == "proved"     # ... unless every value is 0


def test_gate_changes_only_the_clock_and_the_control_is_refused():
    assert all(r.status == "proved" for _, r in gate_clock_proofs(((2, 1), (3, 2))))
    assert all(r.status == "disproved" for _, r in gate_clock_proofs(((2, 1),), with_gate_factor=False))
    planted = gate_clock_proofs(((2, 1),), gate=lambda g: sp.Integer(1), with_gate_factor=False)
    assert all(r.status == "proved" for _, r in planted)


def test_softmax1_log_clock_agrees_with_the_reduced_engine():
    """The sink claims' own SymPy system (log clock) against numerics.reduced_logistic with the softmax1
    definition (the package's generated engine, tau clock): same state at tau = e^6."""
    import numerics
    from proofs_check.claims import sink2_run

    u0, b = [-2.0, -2.5, -3.0], 0.1
    run = sink2_run(u0, b, sigma_max=60)
    row = next(r for r in run["rows"] if abs(r["sigma"] - 6.0) < 1e-9)
    tr = numerics.reduced_logistic(u0, [0.0] * 3, b, tau_end=math.exp(6.0), times=[math.exp(6.0)], link=SOFTMAX1,
                                   backend="numpy")
    assert row["u1"] == pytest.approx(float(tr.u[-1][0]), rel=1e-8)
    assert row["s"] == pytest.approx([float(x) for x in tr.weights[-1]], rel=1e-6)


def test_sink2_escape_law_and_its_control_on_the_same_runs():
    from proofs_check.claims import sink2_check, sink2_control, sink2_witness

    ctx = Context()
    assert sink2_check(ctx).verdict == "verified"
    assert sink2_control(ctx).verdict == "refuted"
    assert sink2_witness(ctx).verdict == "verified"


def test_bandit_rate_and_its_witness():
    from proofs_check.claims import bandit_check, bandit_constant, bandit_control, bandit_witness

    u = [0.0, -1.0, -(2 + math.sqrt(3))]  # the derived constant is (1 + e^{u_1}) (1/n) sum_j 1/Delta_j
    assert bandit_constant(u) == pytest.approx(2 * (1 + 1 / (2 + math.sqrt(3))) / 3, rel=1e-12)
    ctx = Context()
    assert bandit_check(ctx).verdict == "verified"
    assert bandit_control(ctx).verdict == "refuted"
    assert bandit_witness(ctx).verdict == "verified"


def test_torch_engine_takes_a_definition_with_a_transcendental_constant():
    """ssmax's scale log(n) is a constant the torch printer used to emit as torch.log(4) (TypeError)."""
    torch = pytest.importorskip("torch")
    import numerics

    K = ssmax(4)
    V, a, w = np.array([[0.5, -0.2, 0.1]]), np.array([0.3, -0.1, 0.2]), np.array([1.0])
    dV, da = numerics.flow_rhs("logistic", K, backend="numpy")(V, a, w)
    tdV, tda = numerics.flow_rhs("logistic", K, backend="torch")(torch.tensor(V), torch.tensor(a), torch.tensor(w))
    assert np.allclose(tdV.numpy(), dV, rtol=1e-12) and np.allclose(tda.numpy(), da, rtol=1e-12)
