r"""Symbolic = numpy = torch = torch autograd = mpmath, for the flow of every loss.

The oracle (``tests.helpers.symbolic_oracle``) is the flow *derived by SymPy* by scalar
differentiation of the objective (:meth:`theorems.SymbolicModel.flow`, claim C01
[A/D]) for small $n$, $d$, lambdified to mpmath and evaluated at 30 digits from the
exact binary values of the float inputs. It shares no code with the structured kernels of :mod:`numerics`.
Tolerances: the float64 budget of ``tests/helpers.py`` times the condition factor
``FlowScales.cond``; the scale of each entry is the magnitude of the terms that
produce it (``FlowScales``), since $\dot a$ cancels.
"""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import given

from numerics import flow_rhs
from numerics.strategies import FlowProblem, flow_problems

from .helpers import FlowScales, TextbookRHS, assert_close, symbolic_oracle, to_numpy, torch_arrays

# SymPy derivation is cached per (loss, n, d, design); sizes stay small so that the
# derivation (~0.1 s each) does not dominate. m = d for the symbolic design.
_small = dict(max_n=3, max_d=3)
_problems = flow_problems(**_small) | flow_problems("square", condition_number=4.0, **_small)


def check_against_symbolic(dV, da, problem, *, dtype="float64", what=""):
    ref = symbolic_oracle(problem)
    ref_dV, ref_da = ref["dV"], ref["da"]
    sc = FlowScales(problem)
    n = problem.n
    assert_close(dV, ref_dV, dtype=dtype, what=f"{what} dV vs SymPy", scale=sc.dV, cond=sc.cond)
    assert_close(da, ref_da, dtype=dtype, what=f"{what} da vs SymPy", scale=n * sc.da, cond=sc.cond)


@given(_problems)
def test_torch_matches_symbolic(device, dtype, problem):
    rhs = flow_rhs(problem.loss, backend="torch")
    dV, da = rhs(*torch_arrays(problem, device=device, dtype=dtype))
    check_against_symbolic(dV, da, problem, dtype=dtype, what=f"torch[{device},{dtype}]")


@given(_problems)
def test_torch_autograd_matches_symbolic(device, dtype, problem):
    rhs = flow_rhs(problem.loss, backend="torch")
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    V.requires_grad_(True)
    a.requires_grad_(True)
    gV, ga = torch.autograd.grad(rhs.loss_value(V, a, target, X), (V, a))
    check_against_symbolic(-gV, -ga, problem, dtype=dtype, what="autograd")


@given(_problems)
def test_numpy_matches_symbolic(problem):
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow of e^{a-max} is exact enough
        dV, da = flow_rhs(problem.loss)(*problem.arrays())
    check_against_symbolic(dV, da, problem, what="numpy")


@given(_problems)
def test_mpmath_backend_matches_symbolic(problem):
    V, a, target, X = problem.arrays()
    dV, da = flow_rhs(problem.loss, backend="mpmath")(
        V.tolist(), a.tolist(), target.tolist(), None if X is None else X.tolist())
    check_against_symbolic(np.array(dV, dtype=float), np.array(da, dtype=float), problem, what="mpmath")


@given(_problems)
def test_numpy_matches_torch_batched(problem):
    """A batch of two (the problem and its negated V) on torch equals numpy one by one."""
    rhs_t = flow_rhs(problem.loss, backend="torch")
    V, a, target, X = torch_arrays(problem)
    stack = lambda x, y: None if x is None else torch.stack([x, y])
    dV, da = rhs_t(stack(V, -V), stack(a, a), stack(target, target), stack(X, X))
    sc = FlowScales(problem)
    for k, sign in enumerate((1.0, -1.0)):
        dV_np, da_np = flow_rhs(problem.loss)(sign * problem.V, problem.a, problem.target, problem.X)
        assert_close(dV[k], dV_np, what="batched dV", scale=sc.dV)
        assert_close(da[k], da_np, what="batched da", scale=problem.n * sc.da)


# ---- negative controls -------------------------------------------------------------------
_PROBLEM = FlowProblem("logistic", np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]]), np.array([0.3, -1.2, 2.0]),
                       np.array([0.6, -0.8]))


def test_textbook_oracle_matches_symbolic():
    dV, da = TextbookRHS("logistic")(*torch_arrays(_PROBLEM))
    check_against_symbolic(dV, da, _PROBLEM)


@pytest.mark.parametrize("mutation", ["flip_da", "no_ssT", "wrong_dell"])
def test_negative_control(mutation):
    dV, da = TextbookRHS("logistic", mutation)(*torch_arrays(_PROBLEM))
    with pytest.raises(AssertionError):
        check_against_symbolic(to_numpy(dV), to_numpy(da), _PROBLEM)
