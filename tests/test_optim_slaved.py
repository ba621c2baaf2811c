"""A stateful optimizer's flow to extreme horizons (numerics.optim.slaved_flow): the full ODE until the moments
relax, then the quasi-static flow derived from the same definition (theorems.optimizers.quasi_static); the settling
criterion stated once (numerics.integrate.settle.settle_decision) and called by every settled law check."""
import numpy as np
import pytest
import sympy as sp

from theorems import InvalidArgument
from theorems import optimizers as O


def test_adams_quasi_static_flow_is_derived_from_its_definition():
    qs = O.quasi_static(O.ADAM)
    assert qs.name == "adam-quasi-static" and not any(r.state for r in qs.rules.values())
    for blk in O.BLOCKS:
        assert sp.simplify(qs.rules[blk].flow[O.theta] + O.g / (sp.Abs(O.g) + O.eps)) == 0
    f, why = O.quasi_static_flow(O.RMSPROP, "a")
    assert why is None and sp.simplify(f + O.g / (sp.Abs(O.g) + O.eps)) == 0


def test_a_state_without_a_unique_rest_point_has_no_quasi_static_flow():
    s = sp.Symbol("s", real=True)
    cubic = O.Optimizer("cubic-state-slaved", state={s: 0}, flow={s: O.g**2 - s**2, O.theta: -s * O.g},
                        step=[(s, s), (O.theta, O.theta - O.lr * s * O.g)])
    f, why = O.quasi_static_flow(cubic, "V")
    assert f is None and "2 solutions" in why
    with pytest.raises(InvalidArgument, match="no quasi-static flow"):
        O.quasi_static(cubic)


def test_slaved_flow_refuses_a_hand_over_before_the_moments_relax_and_a_stateless_flow():
    from numerics import Problem
    from numerics.optim import slaved_flow
    p = Problem.preset("logistic-toy")
    with pytest.raises(InvalidArgument, match="t_slave=1.0.*slave_tol"):
        slaved_flow(p, "adam", times=["0", "1e10"], lr=0.01, hyper={"eps": 0.1}, t_slave=1.0)
    with pytest.raises(InvalidArgument, match="no state"):
        slaved_flow(p, "gd", times=["0", "1e10"], lr=0.01)


def test_settle_in_t_calls_the_one_settling_criterion(monkeypatch):
    """The optimizer engines' settle (clock t, exp t) decides with settle.py's criterion, not a copy of it."""
    from numerics.integrate import settle
    from proofs_check.claims import settle_in_t, t_grid
    calls = []
    real = settle.settle_decision

    def counting(*a, **kw):
        calls.append(kw["exponent"])
        return real(*a, **kw)
    monkeypatch.setattr(settle, "settle_decision", counting)

    def run(T):
        t = np.array([float(s) for s in t_grid(T, "t")[1:]])
        return {"t": t, "q": 1.75 / t**2 * (1 + 17 / t), "constant": None}
    out = settle_in_t(run, exponent=2.0, constant=1.75, clock="t", horizons=(1000, 3000, 10000))
    assert out["verdict"] == "verified" and calls == [2.0] * (len(out["history"]) - 1)


@pytest.mark.slow
def test_slaved_flow_two_integrators_agree_to_1e100():
    """The cross-check: the quasi-static phase by DOP853 and by Radau (implicit) give the same logits."""
    from numerics import Problem
    from numerics.integrate.settle import grid
    from numerics.optim import slaved_flow
    p = Problem.preset("logistic-toy")
    runs = [slaved_flow(p, "adam", times=grid(100), lr=0.01, hyper={"eps": 0.1}, method=m) for m in ("DOP853", "Radau")]
    A = [np.array([np.array(a, float) for a in r.a]) for r in runs]
    assert runs[0].slaving_residual < 0.05
    assert np.abs(A[0] - A[1]).max() <= 1e-6 * np.abs(A[0]).max()
