"""FlowRHS.link_parts / apply_jT against the link and its component-wise SymPy Jacobian.

The reference is :meth:`theorems.Link.phi` and :meth:`theorems.Link.jacobian` (each
component differentiated by SymPy, not the structured form the kernels use), evaluated
with ``evalf`` at 40 digits. float64: the tolerance of ``tests/helpers.py``; mpmath at
dps 30: 25 digits (5 lost to cancellation, as in ``helpers``).
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

from numerics import flow_rhs
from theorems import LINKS

from .helpers import assert_close

N = 4
# logits away from 0 (relu-norm / l1-norm have a kink there) with a nonzero sum (sum-norm)
A = np.array([0.7, -0.4, 1.3, 0.2])
X = np.array([0.3, -1.1, 0.5, 2.0])


def _reference(link_name: str, a, x):
    """(phi, J^T x) from the SymPy definition, as float64 and as 40-digit strings."""
    link = LINKS[link_name]
    syms = sp.Matrix(sp.symbols(f"a0:{N}", real=True))
    subs = {s: sp.Rational(str(v)) for s, v in zip(syms, a)}
    xv = sp.Matrix([sp.Rational(str(v)) for v in x])
    phi = link.phi(syms).subs(subs)
    jtx = link.jacobian(syms).subs(subs).T * xv
    return [sp.N(e, 40) for e in phi], [sp.N(e, 40) for e in jtx]


@pytest.mark.parametrize("link", sorted(LINKS))
def test_link_parts_numpy(link):
    rhs = flow_rhs("logistic", link, backend="numpy")
    phi_ref, jtx_ref = _reference(link, A, X)
    phi_ref = np.array([float(v) for v in phi_ref])
    jtx_ref = np.array([float(v) for v in jtx_ref])

    phi, w = rhs.link_parts(A)
    assert phi.shape == w.shape == (N,)
    assert_close(phi, phi_ref)
    assert_close(rhs.apply_jT(phi, w, X), jtx_ref)
    # the public kernels are what .phi / .jvp_T compute
    np.testing.assert_array_equal(rhs.phi(A), phi)
    np.testing.assert_array_equal(rhs.jvp_T(A, X), rhs.apply_jT(phi, w, X))

    # batched over a leading axis: row k of the batch is the unbatched result at row k
    Ab = np.stack([A, A[::-1], A + 0.25])
    Xb = np.stack([X, -X, X[::-1]])
    phib, wb = rhs.link_parts(Ab)
    assert phib.shape == wb.shape == (3, N)
    out = rhs.apply_jT(phib, wb, Xb)
    assert out.shape == (3, N)
    for k in range(3):
        p, wk = rhs.link_parts(Ab[k])
        assert_close(phib[k], p)
        assert_close(out[k], rhs.apply_jT(p, wk, Xb[k]))


@pytest.mark.parametrize("link", sorted(LINKS))
def test_link_parts_mpmath(link):
    rhs = flow_rhs("logistic", link, backend="mpmath")
    phi_ref, jtx_ref = _reference(link, A, X)
    with mpmath.workdps(30):
        a = [mpmath.mpf(str(v)) for v in A]
        x = [mpmath.mpf(str(v)) for v in X]
        phi, w = rhs.link_parts(a)
        jtx = rhs.apply_jT(phi, w, x)
        assert len(phi) == len(w) == len(jtx) == N
        assert all(isinstance(v, mpmath.mpf) for v in (*phi, *w, *jtx))
        for got, ref in zip([*phi, *jtx], [*phi_ref, *jtx_ref]):
            ref = mpmath.mpf(str(ref))
            assert abs(got - ref) <= mpmath.mpf(10) ** -25 * max(1, abs(ref)), (link, got, ref)
        assert rhs.phi(a) == phi
        assert rhs.jvp_T(a, x) == jtx
