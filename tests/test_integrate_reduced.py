"""reduced_logistic: the (u, a) system in the internal clock against the full flow."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from numerics import InvalidArgument, Problem, reduced_logistic, simulate


@pytest.mark.parametrize("link", ["softmax", "l2-norm"])
def test_reduced_system_reproduces_the_full_flow(link):
    p = Problem.from_seed(9, d=3, n=4, loss="logistic", link=link, a0="ones_noise", a_scale=0.3)
    u0 = p.V.T @ p.target
    b = float(p.target @ p.target)
    times = ["0", "1", "50", "1e4"]
    full = simulate(p, t_end="1e4", times=times, dps=20)
    red = reduced_logistic(u0, p.a, b, t_end="1e4", times=times, dps=20, link=link)
    with mpmath.workdps(20):
        w = [mpmath.mpf(float(v)) for v in p.target]
        for k in range(len(times)):
            u_full = [mpmath.fdot([row[j] for row in full.V[k]], w) for j in range(p.n)]
            err_u = max(abs(x - y) for x, y in zip(u_full, red.u[k]))
            err_a = max(abs(x - y) for x, y in zip(full.a[k], red.a[k]))
            assert err_u < mpmath.mpf("1e-15") and err_a < mpmath.mpf("1e-15")
            assert abs(full.loss[k] - red.loss[k]) <= mpmath.mpf("1e-15") * full.loss[k]
    # the internal clocks of the two runs agree too
    assert max(abs(x - y) for x, y in zip(full.tau, red.tau)) < mpmath.mpf("1e-14")
    # negative control: a reduced run with the wrong b does not match
    bad = reduced_logistic(u0, p.a, 2 * b, t_end="1e4", times=times, dps=20, link=link)
    assert max(abs(x - y) for x, y in zip(full.a[-1], bad.a[-1])) > 1e-3


def test_tau_and_t_modes_are_consistent():
    u0, a0 = [0.3, 0.1, -0.2], [0.0, 0.0, 0.0]
    by_t = reduced_logistic(u0, a0, 1.0, t_end=100, times=[100], dps=25)
    tau = by_t.tau[0]
    with mpmath.workdps(25):
        by_tau = reduced_logistic(u0, a0, 1.0, tau_end=tau, times=[tau], dps=25)
        assert abs(by_tau.times[0] - 100) < mpmath.mpf("1e-18")
        assert max(abs(x - y) for x, y in zip(by_t.a[0], by_tau.a[0])) < mpmath.mpf("1e-19")


def test_numpy_reduced_matches_mpmath():
    u0, a0 = [0.3, 0.1, -0.2, 0.05], [0.0] * 4
    m = reduced_logistic(u0, a0, 1.0, t_end=1e50, times=["1e10", "1e50"], dps=20)
    f = reduced_logistic(u0, a0, 1.0, t_end=1e50, times=["1e10", "1e50"], backend="numpy")
    np.testing.assert_allclose(np.array(f.a), np.array([[float(v) for v in r] for r in m.a]), rtol=1e-9)
    np.testing.assert_allclose(f.one_minus_max, [float(v) for v in m.one_minus_max], rtol=1e-8)


def test_bad_input():
    for kw, arg in [({"t_end": 1, "tau_end": 1}, "exactly one"), ({}, "exactly one"),
                    ({"t_end": 1, "b": 0}, "b"), ({"t_end": 1, "a0": [0.0]}, "equal lengths"),
                    ({"t_end": 1, "backend": "torch"}, "backend")]:
        args = {"u0": [0.1, 0.2], "a0": [0.0, 0.0], "b": 1.0, **kw}
        with pytest.raises(InvalidArgument, match=arg):
            reduced_logistic(args.pop("u0"), args.pop("a0"), args.pop("b"), **args)
