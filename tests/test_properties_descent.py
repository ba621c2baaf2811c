r"""The loss decreases along the flow and along small-step gradient descent; invariants along trajectories.

Digest §2.3-2.4 [D]: $\frac{d}{dt}\mathcal L=-\|\nabla F\|^2\le0$; claims 4, 6, 8, 9 along a short
trajectory. Trajectories here are computed with a fixed-step classical RK4 on the torch
right-hand side (``tests.helpers.rk4_step``) and with gradient descent
$\theta_{k+1}=\theta_k+\eta\,\dot\theta(\theta_k)$, all in torch.

Step sizes come from the smoothness bound $H$ of ``tests.helpers.smoothness_bound``
(derived there): with $\eta\le1/(2H)$ a GD step decreases $F$ by at least
$\tfrac34\eta\|\nabla F\|^2$, so the check demands the Armijo decrease
$\tfrac12\eta\|\dot\theta\|^2$, which a field that is not the negative gradient (a wrong
sign in $\dot a$, a wrong $\ell'$) fails. Linear invariants ($\sum_ia_i$, $(I-P_w)V$,
$(I-P_y)V$ from rank one) are preserved exactly by any Runge-Kutta method, so they
are checked to rounding; the two-token first integral is quadratic-hyperbolic and is
checked to the RK4 error, estimated by step halving.
"""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

from numerics import flow_rhs
from numerics.strategies import FlowProblem, flow_problems, logits, target_directions

from .helpers import (
    FlowScales, TextbookRHS, assert_close, assert_le, rk4_step, smoothness_bound, to_numpy, torch_arrays,
)

#: steps per trajectory: long enough to move, short enough for CI (each step is 1-4 RHS calls).
STEPS = 8


def _loss_scale(problem, loss_value):
    """Magnitude of the terms of L(V s(a)): its rounding is eps * cond times this."""
    sc = FlowScales(problem)
    beta_terms = np.abs(problem.V) @ sc.s
    target = np.abs(problem.target)
    if problem.loss == "square" and problem.X is not None:
        bound = np.abs(problem.X) @ beta_terms + target
        return abs(loss_value) + float(bound @ bound)
    return abs(loss_value) + float(sc.G @ beta_terms) + float((beta_terms + target) @ (beta_terms + target)) \
        + float(np.max(beta_terms))


def _state(problem, V, a):
    return FlowProblem(problem.loss, to_numpy(V), to_numpy(a), problem.target, problem.X)


def check_field_is_negative_gradient(rhs, problem, *, device="cpu", dtype="float64"):
    r"""$\frac{d}{dt}F=\langle\nabla F,\dot\theta\rangle=-\|\dot\theta\|^2$ ($\nabla F$ by autograd of
    ``loss_value``)."""
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    V.requires_grad_(True)
    a.requires_grad_(True)
    gV, ga = torch.autograd.grad(rhs.loss_value(V, a, target, X), (V, a))
    with torch.no_grad():
        dV, da = rhs(V, a, target, X)
    gV, ga, dV, da = map(to_numpy, (gV, ga, dV, da))
    dFdt = np.sum(gV * dV) + ga @ da
    norm2 = np.sum(dV * dV) + da @ da
    sc = FlowScales(problem)
    scale = float(np.sum(sc.dV * sc.dV) + problem.n * sc.da @ sc.da + np.sum(np.abs(gV * dV)) + np.abs(ga) @ np.abs(da))
    assert_close(dFdt, -norm2, dtype=dtype, what="dF/dt = -|theta'|^2", scale=scale, cond=sc.cond)


@given(flow_problems())
def test_field_is_the_negative_gradient_of_the_loss(device, dtype, problem):
    check_field_is_negative_gradient(flow_rhs(problem.loss, backend="torch"), problem, device=device, dtype=dtype)


def check_gd_descends(rhs, problem, *, device="cpu", dtype="float64", steps=STEPS):
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    state = problem
    L = float(rhs.loss_value(V, a, target, X))
    for k in range(steps):
        eta = 1.0 / (2 * smoothness_bound(state))
        dV, da = rhs(V, a, target, X)
        V, a = V + eta * dV, a + eta * da
        L_new = float(rhs.loss_value(V, a, target, X))
        norm2 = float((dV * dV).sum() + (da * da).sum())
        sc = FlowScales(state)
        assert_le(L_new, L - 0.5 * eta * norm2, dtype=dtype, cond=sc.cond, scale=_loss_scale(state, L),
                  what=f"GD step {k}: Armijo decrease L_new <= L - eta |theta'|^2 / 2")
        state, L = _state(problem, V, a), L_new


@given(flow_problems(logit_max_abs=50.0))
def test_gradient_descent_with_a_small_step_decreases_the_loss(device, dtype, problem):
    check_gd_descends(flow_rhs(problem.loss, backend="torch"), problem, device=device, dtype=dtype)


def check_rk4_flow_descends_and_keeps_linear_invariants(rhs, problem, *, device="cpu", dtype="float64",
                                                        steps=STEPS):
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    V0, sum_a0 = problem.V, float(np.sum(problem.a))
    state = problem
    L = float(rhs.loss_value(V, a, target, X))
    # the size of the additions to a: each step adds h * da, whose entries cancel from terms
    # of size FlowScales.da (and sum(s) = 1 only up to n eps, so sum(da) ~ eps * those terms)
    moved = 0.0
    for k in range(steps):
        h = 1.0 / (2 * smoothness_bound(state))
        a_old = a
        V, a = rk4_step(rhs, V, a, target, X, h)
        moved += float((a - a_old).abs().sum()) + h * float(np.sum(FlowScales(state).da))
        L_new = float(rhs.loss_value(V, a, target, X))
        sc = FlowScales(state)
        assert_le(L_new, L, dtype=dtype, cond=sc.cond, scale=_loss_scale(state, L),
                  what=f"RK4 step {k}: loss non-increasing")
        state, L = _state(problem, V, a), L_new
    # sum a_i is a linear invariant: RK4 keeps it up to the rounding of the additions
    amax = float(np.max(np.abs(problem.a))) + float(np.max(np.abs(to_numpy(a))))
    assert_close(float(to_numpy(a).sum()), sum_a0, dtype=dtype, what="sum a conserved",
                 scale=4 * steps * problem.n * (amax + moved))
    if problem.loss == "logistic":
        w = problem.target
        P = np.eye(problem.d) - np.outer(w, w) / (w @ w)
        Vn = to_numpy(V)
        assert_close(P @ Vn, P @ V0, dtype=dtype, what="(I - P_w) V conserved",
                     scale=4 * steps * problem.d * (np.max(np.abs(V0)) + np.max(np.abs(Vn))))


@given(flow_problems(logit_max_abs=50.0))
# found by Hypothesis: a stays ~0 while sum(da) ~ eps * |terms of da|; the scale must count those terms
@example(FlowProblem("square", np.zeros((2, 3)), np.zeros(3), np.ones(2)))
def test_integrated_flow_decreases_the_loss_and_keeps_linear_invariants(device, dtype, problem):
    check_rk4_flow_descends_and_keeps_linear_invariants(flow_rhs(problem.loss, backend="torch"), problem,
                                                        device=device, dtype=dtype)


@st.composite
def _rank_one_square(draw):
    n, d = draw(st.integers(2, 5)), draw(st.integers(2, 5))
    y = draw(target_directions(d, min_norm=0.1, max_norm=3.0))
    c = draw(hnp.arrays(np.float64, n, elements=st.floats(-10, 10)))
    return FlowProblem("square", np.outer(y, c), draw(logits(n, max_abs=50.0)), y)


@given(_rank_one_square())
def test_integrated_square_loss_flow_preserves_rank_one(device, dtype, problem):
    rhs = flow_rhs("square", backend="torch")
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    state = problem
    for _ in range(STEPS):
        V, a = rk4_step(rhs, V, a, target, X, 1.0 / (2 * smoothness_bound(state)))
        state = _state(problem, V, a)
    y, Vn = problem.target, to_numpy(V)
    orth = Vn - np.outer(y, y @ Vn) / (y @ y)
    assert_close(orth, np.zeros_like(Vn), dtype=dtype, what="V(t) stays in span(y) c^T",
                 scale=4 * STEPS * problem.d * (np.max(np.abs(problem.V)) + np.max(np.abs(Vn))))


def _first_integral(V, a, w):
    u = V.T @ w
    return 0.5 * (u[0] - u[1]) ** 2 - (w @ w) * np.cosh(a[0] - a[1])


def check_two_token_first_integral_along_rk4(rhs, problem, *, device="cpu", dtype="float64"):
    r"""$\mathcal E$ is constant up to the RK4 error, estimated by Richardson.

    With $\mathcal E_h-\mathcal E(T)\approx Ch^4$, the difference of the runs with steps $h$
    and $h/2$ is $\approx\tfrac{15}{16}Ch^4$, so a conserved $\mathcal E$ gives
    $|\mathcal E_h-\mathcal E_0|\approx\tfrac{16}{15}|\mathcal E_h-\mathcal E_{h/2}|$; we allow twice
    that plus rounding. A field that does not conserve $\mathcal E$ has
    $\mathcal E_h\approx\mathcal E_{h/2}\approx\mathcal E(T)\ne\mathcal E_0$ and fails."""
    w = problem.target
    T = 8.0 / (2 * smoothness_bound(problem))
    ends = []
    for steps in (8, 16):
        V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
        for _ in range(steps):
            V, a = rk4_step(rhs, V, a, target, X, T / steps)
        ends.append(_first_integral(to_numpy(V), to_numpy(a), w))
    E0 = _first_integral(problem.V, problem.a, w)
    u = problem.V.T @ w
    scale = (abs(u[0]) + abs(u[1])) ** 2 + (w @ w) * np.cosh(problem.a[0] - problem.a[1]) + abs(E0)
    richardson = 2 * abs(ends[0] - ends[1]) * 16 / 15
    assert_le(abs(ends[0] - E0), richardson, dtype=dtype, scale=16 * scale, cond=FlowScales(problem).cond,
              what="two-token first integral conserved to the RK4 error")


@given(flow_problems("logistic", min_n=2, max_n=2, logit_max_abs=20.0))
def test_two_token_first_integral_is_conserved_along_the_flow(device, dtype, problem):
    check_two_token_first_integral_along_rk4(flow_rhs("logistic", backend="torch"), problem,
                                             device=device, dtype=dtype)


# ---- negative controls -------------------------------------------------------------------
_P = FlowProblem("logistic", np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]]), np.array([0.3, -1.2, 2.0]),
                 np.array([2.4, -3.2]))
_P2 = FlowProblem("logistic", np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.3, -1.2]), np.array([2.4, -3.2]))
# large spread of the projections u = V^T w: |da|^2 dominates |dV|^2, so a wrong sign of da shows in GD
_P_SPREAD = FlowProblem("logistic", np.array([[5.0, -5.0, 0.0], [0.0, 1.0, 0.0]]), np.zeros(3), np.array([1.0, 0.5]))


def test_textbook_oracle_passes_every_check():
    rhs = TextbookRHS("logistic")
    check_field_is_negative_gradient(rhs, _P)
    check_gd_descends(rhs, _P)
    check_gd_descends(rhs, _P_SPREAD)
    check_rk4_flow_descends_and_keeps_linear_invariants(rhs, _P_SPREAD)
    check_rk4_flow_descends_and_keeps_linear_invariants(rhs, _P)
    check_two_token_first_integral_along_rk4(rhs, _P2)


@pytest.mark.parametrize("mutation, check", [
    ("flip_da", check_field_is_negative_gradient),
    ("no_ssT", check_field_is_negative_gradient),
    ("wrong_dell", check_field_is_negative_gradient),
    ("flip_da", lambda rhs, p: check_gd_descends(rhs, _P_SPREAD)),
    ("flip_da", lambda rhs, p: check_rk4_flow_descends_and_keeps_linear_invariants(rhs, _P_SPREAD)),
    ("wrong_dell", check_gd_descends),
    ("flip_da", lambda rhs, p: check_two_token_first_integral_along_rk4(rhs, _P2)),
])
def test_negative_control(mutation, check):
    with pytest.raises(AssertionError):
        check(TextbookRHS("logistic", mutation), _P)
