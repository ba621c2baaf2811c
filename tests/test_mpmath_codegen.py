"""The mpmath backend of ``numerics.flow_rhs`` agrees with SymPy ``evalf`` at 50 digits.

Oracle: the explicit flow derived by :class:`theorems.SymbolicModel` (scalar-by-scalar
differentiation of the definition), with an exact rational point substituted and
evaluated by ``evalf(60)``. The generated mpmath RHS runs at ``mp.dps = 50``.
Tolerance: 1e-45 relative to the largest entry (50 digits minus 5 for the
cancellation in $J^\\top x$, as in ``tests/helpers.py``). A flipped sign or a
perturbation in the 40th digit is caught by the same comparison (negative control).
"""
from __future__ import annotations

import random

import mpmath
import pytest
import sympy as sp

from numerics import flow_rhs
from theorems import SymbolicModel

DPS = 50
#: agreement required: 5 digits below the working precision (see the module docstring)
RTOL = mpmath.mpf(10) ** -(DPS - 5)
#: positive logits for the piecewise links (their flow is defined where every a_i > 0)
_POSITIVE = {"relu-norm", "l1-norm"}


def _point(m: SymbolicModel, seed: int) -> dict:
    rng = random.Random(seed)
    pt = {}
    for s in list(m.V) + list(m.a) + list(m.target) + (list(m.X) if m.design == "symbolic" else []):
        if s.is_positive:
            pt[s] = sp.Rational(rng.randint(1, 40), rng.randint(11, 29))
        else:
            pt[s] = sp.Rational(rng.randint(-40, 40), rng.randint(11, 29))
    return pt


def _oracle_and_rhs(loss, link, n, d, design="identity", seed=0):
    m = SymbolicModel(loss, link, n, d, design=design, positive_logits=link in _POSITIVE)
    pt = _point(m, seed)
    dV, da = m.flow()
    exact = [sp.N(e.xreplace(pt), DPS + 10) for e in list(dV) + list(da)]
    rhs = flow_rhs(loss, link, backend="mpmath")
    with mpmath.workdps(DPS):
        V = [[mpmath.mpf(pt[m.V[k, j]].p) / pt[m.V[k, j]].q for j in range(n)] for k in range(d)]
        a = [mpmath.mpf(pt[x].p) / pt[x].q for x in m.a]
        t = [mpmath.mpf(pt[x].p) / pt[x].q for x in m.target]
        X = None
        if design == "symbolic":
            X = [[mpmath.mpf(pt[m.X[i, k]].p) / pt[m.X[i, k]].q for k in range(d)] for i in range(d)]
        gV, ga = rhs(V, a, t, X)
        got = [x for row in gV for x in row] + list(ga)
    with mpmath.workdps(DPS + 10):
        return [mpmath.mpf(str(e)) for e in exact], got


def _max_rel_err(got, exact):
    with mpmath.workdps(DPS + 10):
        scale = max(abs(e) for e in exact) or mpmath.mpf(1)
        return max(abs(g - e) for g, e in zip(got, exact)) / scale


CASES = [(loss, link) for loss in ("logistic", "square", "kl") for link in ("softmax", "sigmoid", "l2-norm")]
CASES += [("logistic", "relu-norm"), ("square", "sum-norm"), ("kl", "l1-norm")]


@pytest.mark.parametrize("loss, link", CASES)
def test_mpmath_rhs_matches_sympy_evalf_at_50_digits(loss, link):
    exact, got = _oracle_and_rhs(loss, link, n=3, d=2)
    assert _max_rel_err(got, exact) <= RTOL


def test_mpmath_rhs_with_a_design_matrix():
    exact, got = _oracle_and_rhs("square", "softmax", n=3, d=2, design="symbolic", seed=1)
    assert _max_rel_err(got, exact) <= RTOL


def test_comparison_has_power():
    exact, got = _oracle_and_rhs("logistic", "softmax", n=3, d=2)
    assert _max_rel_err([-g for g in got], exact) > RTOL  # flipped sign
    with mpmath.workdps(DPS):
        nudged = [g * (1 + mpmath.mpf(10) ** -40) for g in got]
    assert _max_rel_err(nudged, exact) > RTOL  # an error in the 40th digit is visible


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
@pytest.mark.parametrize("n, d", [(2, 1), (5, 3)])
def test_mpmath_rhs_more_sizes(loss, n, d):
    d = max(d, 2) if loss == "kl" else d
    exact, got = _oracle_and_rhs(loss, "softmax", n=n, d=d, seed=n + d)
    assert _max_rel_err(got, exact) <= RTOL
