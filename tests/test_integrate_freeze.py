"""The tail-bound freeze applies only where its derivation's assumption (weights summing to one) is proven.

Reviewer's case: square loss, softmax1 (c = 1, so sum phi = 1 - 1/Z < 1), logits -7 and -7.5, V phi within 1e-7
of the target. The freeze rule used to accept every normalized link, froze the state at t = 0.197 with a "rigorous"
bound B = 1.3e-7, and the state then moved 6e-7 by t = 1e4 (5e-5 by 1e8): silently wrong numbers.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import softpolar
from numerics.integrate import freeze_rule, weights_sum_to_one
from theorems import Link

_x = sp.Symbol("x", real=True)
N, D = 2, 3
A0 = np.array([-7.0, -7.5])
Y = np.ones(D)
TIMES = [0.0, 1e3, 1e4]


def _v0(c: float) -> np.ndarray:
    e = np.exp(A0)
    phi = e / (c + e.sum())
    V = np.zeros((D, N))
    V[:, 0] = Y / phi[0] * 0.6
    V[:, 1] = Y / phi[1] * 0.4
    V[2, 0] += 1e-7 / phi[0]
    return V


def _reference(V0, c: float):
    """An independent integration (own right-hand side, LSODA): the softpolar code shares nothing with it."""
    def rhs(t, th):
        V = th[:D * N].reshape(D, N)
        a = th[D * N:]
        e = np.exp(a)
        Z = c + e.sum()
        ph = e / Z
        g = V @ ph - Y
        J = (np.diag(e) - np.outer(ph, e)) / Z
        return -np.concatenate([np.outer(g, ph).ravel(), J.T @ V.T @ g])
    sol = solve_ivp(rhs, (0, TIMES[-1]), np.concatenate([V0.ravel(), A0]), method="LSODA", rtol=1e-12,
                    atol=1e-14, t_eval=TIMES)
    assert sol.status == 0, sol.message
    return sol.y


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_softmax1_is_not_frozen_and_agrees_with_an_independent_integration(backend):
    pytest.importorskip(backend)
    V0 = _v0(1.0)
    pr = softpolar.Problem(loss="square", link="softmax1", V=V0, a=A0, target=Y)
    assert freeze_rule(pr) is None
    tr = softpolar.simulate(pr, t_end=TIMES[-1], times=TIMES, backend=backend)
    assert tr.frozen_at is None or not np.isfinite(float(tr.frozen_at))
    assert not any("frozen" in note for note in tr.notes)
    ref = _reference(V0, 1.0)
    A = tr.to_numpy()
    for k in range(len(TIMES)):
        V = np.asarray(A["V"][k], float).ravel()
        a = np.asarray(A["a"][k], float)
        # the frozen run was off by 6e-7 in V at t = 1e4 (its bound said 1.3e-7)
        assert np.abs(V - ref[:D * N, k]).max() < 1e-8, (k, np.abs(V - ref[:D * N, k]).max())
        assert np.abs(a - ref[D * N:, k]).max() < 1e-9
    assert float(A["V"][-1][2][0]) != float(A["V"][1][2][0])  # the state kept moving after the old freeze time


def test_softmax_on_the_same_data_still_freezes_and_stays_within_its_bound():
    V0 = _v0(0.0)
    pr = softpolar.Problem(loss="square", link="softmax", V=V0, a=A0, target=Y)
    assert freeze_rule(pr) is not None
    tr = softpolar.simulate(pr, t_end=TIMES[-1], times=TIMES, backend="numpy")
    assert tr.frozen_at is not None and float(tr.frozen_at) < TIMES[-1]
    ref = _reference(V0, 0.0)
    A = tr.to_numpy()
    V = np.asarray(A["V"][-1], float).ravel()
    bound = float(tr.freeze_bound)
    assert np.abs(V - ref[:D * N, -1]).max() <= bound + 1e-9


def test_the_assumption_is_read_from_the_definition_never_the_name():
    assert weights_sum_to_one("softmax") and not weights_sum_to_one("softmax1")
    assert not weights_sum_to_one("sigmoid") and not weights_sum_to_one("softpick")
    # a user link named like a built-in family but with c = 1: no freeze; k written differently but equal to h: proven
    assert not weights_sum_to_one(Link("mysoftmax", h=sp.exp(_x), c=1))
    assert weights_sum_to_one(Link("myoffbyone", h=sp.exp(_x), k=sp.cosh(_x) + sp.sinh(_x)))
    assert not weights_sum_to_one(Link("kdiff", h=sp.exp(_x), k=sp.exp(_x) + sp.Rational(1, 10**12)))
    pr = softpolar.Problem(loss="square", link=Link("mysoftmax", h=sp.exp(_x), c=1), V=_v0(1.0), a=A0, target=Y)
    assert freeze_rule(pr) is None
