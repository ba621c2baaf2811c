"""Gradient descent: t = lr * k bookkeeping and first-order convergence to the flow."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from numerics import IntegrationError, InvalidArgument, Problem, gradient_descent, simulate


def _state(tr, k):
    return np.array([float(v) for v in tr.a[k]] + [float(v) for row in tr.V[k] for v in row])


def _slope(problem, reference):
    hs = [0.04, 0.02, 0.01, 0.005]
    errs = []
    for h in hs:
        g = gradient_descent(problem, lr=h, steps=int(round(1 / h)), record=[int(round(1 / h))])
        errs.append(np.linalg.norm(_state(g, 0) - reference))
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


def test_gd_converges_to_the_flow_at_order_one():
    p = Problem.from_seed(4, d=3, n=3, loss="logistic", a0="noise", a_scale=1.0, v_scale=1.0)
    flow = _state(simulate(p, t_end=1, times=[1], backend="numpy", rtol=1e-13), 0)
    slope = _slope(p, flow)
    assert 0.9 < slope < 1.1, slope
    # negative control: against the flow at a different time the error does not shrink
    wrong = _state(simulate(p, t_end=1.05, times=[1.05], backend="numpy", rtol=1e-13), 0)
    assert not 0.9 < _slope(p, wrong) < 1.1


def test_record_times_and_backends_agree():
    p = Problem.preset("logistic-toy")
    g = gradient_descent(p, lr=0.1, steps=50, record=[0, 10, 50])
    assert g.times == [0.0, 0.1 * 10, 0.1 * 50] and g.n_steps == 50
    np.testing.assert_array_equal(g.a[0], p.a)
    gm = gradient_descent(p, lr=0.1, steps=50, record=[0, 10, 50], backend="mpmath", dps=25)
    assert isinstance(gm.a[1][0], mpmath.mpf)
    np.testing.assert_allclose(_state(gm, 2), _state(g, 2), rtol=1e-12, atol=1e-14)


def test_gd_failures_and_bad_input():
    p = Problem.from_seed(0, d=2, n=2, loss="square", v_scale=1.0)
    with pytest.raises(IntegrationError, match="non-finite"):
        gradient_descent(p, lr=1e6, steps=200)
    for kw, arg in [({"lr": 0}, "lr"), ({"lr": 0.1, "steps": -1}, "steps"),
                    ({"lr": 0.1, "record": [5, 2]}, "record"), ({"lr": 0.1, "record": [0, 99]}, "record"),
                    ({"lr": 0.1, "backend": "torch"}, "backend")]:
        kw = {"steps": 10, **kw}
        with pytest.raises(InvalidArgument, match=arg):
            gradient_descent(p, **kw)
