r"""Identities of the vector field $(\dot V,\dot a)$ of the torch implementation, at every input.

Digest §2 and claims 3-9 ([A] where the reading notes cite the paper, else [D]):

* $\sum_i\dot a_i=0$ (claim 4, the field form of "$\sum_ia_i$ is constant");
* per-token balance $\frac{d}{dt}(\tfrac12\|v_i\|^2-a_i)=s_i\langle\beta,r\rangle$, $r=-g$ (claim 5);
* output dynamics $\dot\beta=\dot Vs+VJ\dot a=-(\|s\|^2I+VJ^2V^\top)g$ (Lemma D.2 [A], claim 3), with
  $\dot s=J\dot a$ by torch autograd of ``rhs.phi``; hence $\langle g,\dot\beta\rangle\le-\|s\|^2\|g\|^2$;
* permutation equivariance in the tokens and shift invariance $\sigma(a+c\mathbf 1)=\sigma(a)$;
* logistic: $(I-P_w)\dot V=0$ (claim 6); square loss at $V=yc^\top$: $(I-P_y)\dot V=0$, the
  field form of rank-one preservation (claim 9);
* two tokens, logistic: $\frac{d}{dt}\big[\tfrac12(u_1-u_2)^2-b\cosh(a_1-a_2)\big]=0$, $u=V^\top w$ (claim 8).

Trajectory versions (integrated flow, GD) are in ``test_properties_descent.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

from numerics import flow_rhs
from numerics.strategies import FlowProblem, flow_problems, logits, target_directions

from .helpers import FlowScales, TextbookRHS, assert_close, assert_le, to_numpy, torch_arrays


def _field(rhs, problem, device, dtype):
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    dV, da = rhs(V, a, target, X)
    s = rhs.phi(a)
    g = rhs.grad_loss(rhs.output(V, a), target, X)
    return (V, a, target, X), (dV, da), s, g


def check_sum_da_zero(rhs, problem, *, device="cpu", dtype="float64"):
    _, (dV, da), s, g = _field(rhs, problem, device, dtype)
    sc = FlowScales(problem)
    assert_close(da.sum(), 0.0, dtype=dtype, what="sum da = 0", scale=problem.n * sc.da.sum())


@given(flow_problems())
def test_sum_da_is_zero(device, dtype, problem):
    check_sum_da_zero(flow_rhs(problem.loss, backend="torch"), problem, device=device, dtype=dtype)


def check_per_token_balance(rhs, problem, *, device="cpu", dtype="float64"):
    (V, a, target, X), (dV, da), s, g = _field(rhs, problem, device, dtype)
    V, dV, da, s, g = map(to_numpy, (V, dV, da, s, g))
    lhs = np.sum(V * dV, axis=0) - da  # d/dt (|v_i|^2 / 2 - a_i)
    beta = V @ s
    rhs_value = -s * (beta @ g)  # s_i <beta, r>
    sc = FlowScales(problem)
    scale = np.sum(np.abs(V) * sc.dV, axis=0) + problem.n * sc.da + s * float((np.abs(V) @ s) @ sc.G)
    assert_close(lhs, rhs_value, dtype=dtype, what="per-token balance", scale=problem.d * scale)


@given(flow_problems())
@example(FlowProblem("square", np.zeros((3, 2)), np.zeros(2), np.zeros(3)))  # d != n: a shape bug in the scale
def test_per_token_balance(device, dtype, problem):
    check_per_token_balance(flow_rhs(problem.loss, backend="torch"), problem, device=device, dtype=dtype)


def check_output_dynamics(rhs, problem, *, device="cpu", dtype="float64", power=2):
    r"""$\dot\beta$ by the chain rule equals $-(\|s\|^2I+VJ^{p}V^\top)g$; ``power`` $p=1$ is the
    unsquared (wrong) reference used as a negative control."""
    (V, a, target, X), (dV, da), s, g = _field(rhs, problem, device, dtype)
    _, ds = torch.autograd.functional.jvp(rhs.phi, a, da)  # ds/dt = J(a) da/dt, by autograd
    dbeta = to_numpy(dV @ s + V @ ds)
    V, s, g = map(to_numpy, (V, s, g))
    J = np.diag(s) - np.outer(s, s)
    Jp = np.linalg.matrix_power(J, power)
    M = (s @ s) * np.eye(problem.d) + V @ Jp @ V.T
    sc = FlowScales(problem)
    absJ = np.abs(np.diag(s)) + np.outer(s, s)
    scale = (s @ s) * sc.G + np.abs(V) @ absJ @ absJ @ np.abs(V).T @ sc.G
    assert_close(dbeta, -M @ g, dtype=dtype, what=f"dbeta = -(|s|^2 I + V J^{power} V^T) g",
                 scale=problem.n * problem.d * scale)
    # consequence [D]: <g, dbeta> = -g^T M g <= -|s|^2 |g|^2
    assert_le(g @ dbeta, -(s @ s) * (g @ g), dtype=dtype, what="<g, dbeta> <= -|s|^2 |g|^2",
              scale=problem.n * problem.d * float(sc.G @ scale))


@given(flow_problems())
def test_output_dynamics(device, dtype, problem):
    check_output_dynamics(flow_rhs(problem.loss, backend="torch"), problem, device=device, dtype=dtype)


def check_permutation_equivariance(rhs, problem, perm, *, device="cpu", dtype="float64"):
    perm = np.asarray(perm)
    permuted = FlowProblem(problem.loss, problem.V[:, perm], problem.a[perm], problem.target, problem.X)
    dV, da = rhs(*torch_arrays(problem, device=device, dtype=dtype))
    dVp, dap = rhs(*torch_arrays(permuted, device=device, dtype=dtype))
    sc = FlowScales(problem)
    # reordering changes only the order of the sums (rounding of n terms)
    assert_close(dVp, to_numpy(dV)[:, perm], dtype=dtype, what="dV equivariant", scale=problem.n * sc.dV[:, perm])
    assert_close(dap, to_numpy(da)[perm], dtype=dtype, what="da equivariant", scale=problem.n * sc.da[perm])


@given(flow_problems().flatmap(lambda p: st.tuples(st.just(p), st.permutations(range(p.n)))))
def test_permutation_equivariance(device, dtype, problem_perm):
    problem, perm = problem_perm
    check_permutation_equivariance(flow_rhs(problem.loss, backend="torch"), problem, perm,
                                   device=device, dtype=dtype)


def check_shift_invariance(rhs, problem, c, *, device="cpu", dtype="float64"):
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    shifted = a + c
    sc = FlowScales(problem)
    # the rounding of a + c (eps (|a| + |c|) absolute) is a relative error of e^{a - max a}
    cond = sc.cond * (1 + 2 * (float(np.max(np.abs(problem.a))) + abs(c)))
    s = to_numpy(rhs.phi(a))
    assert_close(rhs.phi(shifted), s, dtype=dtype, what="softmax(a + c) = softmax(a)", scale=s, cond=cond)
    dV, da = rhs(V, a, target, X)
    dVs, das = rhs(V, shifted, target, X)
    assert_close(dVs, dV, dtype=dtype, what="dV shift invariant", scale=sc.dV, cond=cond)
    assert_close(das, da, dtype=dtype, what="da shift invariant", scale=problem.n * sc.da, cond=cond)


@given(flow_problems(), st.floats(-1e3, 1e3))
def test_shift_invariance(device, dtype, problem, c):
    check_shift_invariance(flow_rhs(problem.loss, backend="torch"), problem, c, device=device, dtype=dtype)


def _orthogonal_part(dV, direction):
    w = np.asarray(direction, dtype=float)
    return dV - np.outer(w, w @ dV) / (w @ w)


def check_logistic_orthogonal_part_fixed(rhs, problem, *, device="cpu", dtype="float64"):
    _, (dV, _), _, _ = _field(rhs, problem, device, dtype)
    sc = FlowScales(problem)
    assert_close(_orthogonal_part(to_numpy(dV), problem.target), np.zeros_like(problem.V), dtype=dtype,
                 what="(I - P_w) dV = 0", scale=problem.d * sc.dV.max())


@given(flow_problems("logistic"))
def test_logistic_orthogonal_part_is_fixed(device, dtype, problem):
    check_logistic_orthogonal_part_fixed(flow_rhs("logistic", backend="torch"), problem, device=device, dtype=dtype)


@st.composite
def _rank_one_square(draw):
    n, d = draw(st.integers(2, 5)), draw(st.integers(2, 5))
    y = draw(target_directions(d, min_norm=0.1, max_norm=3.0))
    c = draw(hnp.arrays(np.float64, n, elements=st.floats(-10, 10)))
    return FlowProblem("square", np.outer(y, c), draw(logits(n)), y)


@given(_rank_one_square())
def test_square_loss_field_preserves_rank_one(device, dtype, problem):
    _, (dV, _), _, _ = _field(flow_rhs("square", backend="torch"), problem, device, dtype)
    sc = FlowScales(problem)
    assert_close(_orthogonal_part(to_numpy(dV), problem.target), np.zeros_like(problem.V), dtype=dtype,
                 what="(I - P_y) dV = 0 at V = y c^T", scale=problem.d * sc.dV.max())


def check_two_token_first_integral(rhs, problem, *, device="cpu", dtype="float64"):
    """dE/dt = (u1 - u2)(du1 - du2) - b sinh(a1 - a2)(da1 - da2) = 0 with du = dV^T w."""
    (V, a, target, X), (dV, da), s, g = _field(rhs, problem, device, dtype)
    w = problem.target
    u, du, da, a = to_numpy(V).T @ w, to_numpy(dV).T @ w, to_numpy(da), problem.a
    b = w @ w
    x = a[0] - a[1]
    dE = (u[0] - u[1]) * (du[0] - du[1]) - b * np.sinh(x) * (da[0] - da[1])
    scale = np.abs(u[0] - u[1]) * (np.abs(du[0]) + np.abs(du[1]) + FlowScales(problem).dV.sum() * np.abs(w).sum()) \
        + b * np.abs(np.sinh(x)) * FlowScales(problem).da.sum()
    assert_close(dE, 0.0, dtype=dtype, what="dE/dt = 0 (two tokens)", scale=4 * scale,
                 cond=FlowScales(problem).cond)


# |a1 - a2| <= 40: b sinh(a1 - a2) (da1 - da2) is a product of an overflowing and an
# underflowing factor beyond ~700 (float64) / ~88 (float32); the identity is about finite values.
@given(flow_problems("logistic", min_n=2, max_n=2, logit_max_gap=40.0))
def test_two_token_first_integral_is_conserved_by_the_field(device, dtype, problem):
    check_two_token_first_integral(flow_rhs("logistic", backend="torch"), problem, device=device, dtype=dtype)


# ---- negative controls -------------------------------------------------------------------
_P = FlowProblem("logistic", np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]]), np.array([0.3, -1.2, 2.0]),
                 np.array([0.6, -0.8]))
_P2 = FlowProblem("logistic", np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.3, -1.2]), np.array([0.6, -0.8]))


def test_textbook_oracle_passes_every_check():
    rhs = TextbookRHS("logistic")
    for check in (check_sum_da_zero, check_per_token_balance, check_output_dynamics,
                  check_logistic_orthogonal_part_fixed):
        check(rhs, _P)
    check_permutation_equivariance(rhs, _P, [2, 0, 1])
    check_shift_invariance(rhs, _P, 3.5)
    check_two_token_first_integral(rhs, _P2)


@pytest.mark.parametrize("mutation, check", [
    ("no_ssT", check_sum_da_zero),
    ("no_ssT", check_per_token_balance),
    ("flip_da", check_per_token_balance),
    ("flip_da", check_output_dynamics),
    ("no_ssT", check_output_dynamics),
    ("flip_da", lambda rhs, p: check_two_token_first_integral(rhs, _P2)),
])
def test_negative_control(mutation, check):
    with pytest.raises(AssertionError):
        check(TextbookRHS("logistic", mutation), _P)


def test_negative_control_unsquared_output_dynamics():
    """Lemma D.2 as printed without the square (VJV^T) is rejected by the same check [A]."""
    with pytest.raises(AssertionError, match="J\\^1"):
        check_output_dynamics(flow_rhs("logistic", backend="torch"), _P, power=1)
