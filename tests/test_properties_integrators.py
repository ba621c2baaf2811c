r"""The package's integrators against the flow's theory, on every input Hypothesis builds.

* :func:`numerics.integrate_batch` (torch, DOP853, on ``device`` in ``dtype``): the loss is
  non-increasing over the output times (paper-notes#output-dynamics [D]); $\sum_ia_i$ (claim 4 [D]) and,
  for the logistic loss, $(I-P_w)V$ (claim 6 [D]) are conserved (Runge-Kutta methods keep
  linear invariants exactly, so only rounding is allowed);
* :func:`numerics.gradient_descent` (numpy) with the safe step $1/(2H)$ of
  ``tests.helpers.smoothness_bound``: the loss is non-increasing at every iteration.

The horizon is a few multiples of $1/H$ (the fastest time scale the bound allows), so
that the trajectories move without making CI slow. Tolerances: an ODE solver with local
tolerance ``rtol`` makes an error of at most about ``rtol`` times the state per step; the
allowed increase of the loss is that error, summed over the accepted steps, times the
loss's scale, plus the rounding budget of ``tests/helpers.py``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import example, given

from numerics import Problem, gradient_descent, integrate_batch
from numerics.strategies import FlowProblem, flow_problems

from .helpers import FlowScales, assert_close, assert_le, smoothness_bound, to_numpy

#: local error tolerance by dtype: float32 cannot reach the float64 default (1e-12).
RTOL = {"float64": 1e-10, "float32": 1e-5}

_problems = flow_problems(max_n=4, max_d=4, logit_max_abs=50.0)


def _loss_scale(problem):
    sc = FlowScales(problem)
    terms = np.abs(problem.V) @ sc.s + np.abs(problem.target)
    return float(terms @ terms) + float(sc.G @ terms) + 1.0


@given(_problems)
# found by Hypothesis: see the sum(da) remark in the test
@example(FlowProblem("square", np.zeros((2, 3)), np.zeros(3), np.ones(2)))
def test_integrate_batch_decreases_the_loss_and_keeps_linear_invariants(device, dtype, problem):
    H = smoothness_bound(problem)
    X = None if problem.X is None else problem.X
    # (float32 used to stop at t = 0 with "step size underflow": the test compared the first step,
    # 1e-6, with 10 eps max(|t|, 1) instead of 10 eps |t|; fixed, float32 now runs to t_end.)
    out = integrate_batch(problem.V[None], problem.a[None], problem.target[None], loss=problem.loss, X=X,
                          t_end=8.0 / H, times=[k / H for k in range(9)], rtol=RTOL[dtype], atol=RTOL[dtype],
                          device=device, dtype=dtype, freeze=False)
    loss = to_numpy(out["loss"])[:, 0]
    steps = int(out["n_steps"][0])
    sc = FlowScales(problem)
    ode = 10 * RTOL[dtype] * (1 + steps) * _loss_scale(problem)  # solver error, see module docstring
    for k in range(len(loss) - 1):
        assert_le(loss[k + 1], loss[k] + ode, dtype=dtype, scale=_loss_scale(problem), cond=sc.cond,
                  what=f"integrate_batch: loss non-increasing at output {k + 1}")
    a, V = to_numpy(out["a"])[:, 0], to_numpy(out["V"])[:, 0]
    # the additions to a: their size, plus the terms of da (which cancel: sum(s) = 1 only to
    # n eps, so sum(da) ~ eps * those terms), integrated over [0, T]
    da_terms = max(float(np.sum(FlowScales(FlowProblem(problem.loss, Vk, ak, problem.target, problem.X)).da))
                   for Vk, ak in zip(V, a))
    moved = float(np.sum(np.abs(np.diff(a, axis=0)))) + problem.n * float(np.max(np.abs(a))) + 8.0 / H * da_terms
    assert_close(a.sum(axis=1), np.full(len(a), problem.a.sum()), dtype=dtype, what="sum a conserved",
                 scale=4 * (1 + steps) * moved)
    if problem.loss == "logistic":
        w = problem.target
        P = np.eye(problem.d) - np.outer(w, w) / (w @ w)
        assert_close(np.einsum("ij,kjl->kil", P, V), np.broadcast_to(P @ problem.V, V.shape), dtype=dtype,
                     what="(I - P_w) V conserved", scale=4 * (1 + steps) * problem.d * float(np.max(np.abs(V))))


@given(_problems)
def test_gradient_descent_decreases_the_loss(problem):
    steps = 10
    lr = 1.0 / (2 * smoothness_bound(problem))
    traj = gradient_descent(Problem(problem.loss, problem.V, problem.a, problem.target, X=problem.X),
                            lr=lr, steps=steps, record=list(range(steps + 1)))
    loss = np.array(traj.loss, dtype=float)
    sc = FlowScales(problem)
    for k in range(steps):
        assert_le(loss[k + 1], loss[k], scale=_loss_scale(problem), cond=sc.cond,
                  what=f"gradient_descent: loss non-increasing at step {k + 1}")
