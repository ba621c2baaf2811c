r"""Properties of the softmax Jacobian $J(s)=\operatorname{diag}(s)-ss^\top$ in the torch implementation.

Claim C02 [D] (candidate content of "Property D.3" [A]): $J$ is symmetric
PSD, $J\mathbf 1=0$, $\operatorname{tr}J=1-\|s\|^2$, eigenvalues in $[0,\max_is_i]$; and
the replicator form $\dot a_i=s_i(f_i-\bar f)$ equals the Jacobian form
$\dot a=J^\top f$, $f=-V^\top g$ (paper-notes#flow). $J$ is assembled from
``rhs.jvp_T`` on the basis vectors and compared with torch autograd of ``rhs.phi``.
Each check is a function run on the implementation and, as a negative control, on
a deliberately wrong variant (:class:`tests.helpers.TextbookRHS`).
"""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import example, given, strategies as st

from numerics import flow_rhs
from numerics.strategies import FlowProblem, flow_problems, logits

from .helpers import (
    FlowScales, TextbookRHS, assert_close, assert_le, jacobian_via_jvp, to_numpy, to_torch, torch_arrays,
)

# logit vectors of every size 2..8, extreme values (|a| <= 1e3) included
_logit_vectors = st.integers(2, 8).flatmap(logits)


def check_jacobian_identities(rhs, a, *, dtype):
    s = to_numpy(rhs.phi(a))
    J = to_numpy(jacobian_via_jvp(rhs, a))
    n = s.size
    # entry (i, k) is a product s_i s_k (off-diagonal) or s_i (1 - s_i): rounding ~ eps * max(s_i, s_k)
    assert_close(J, J.T, dtype=dtype, what="J symmetric", scale=np.maximum.outer(s, s))
    # row k sums n terms of size <= s_k (and uses sum(s) = 1 up to n eps)
    assert_close(J @ np.ones(n), np.zeros(n), dtype=dtype, what="J 1 = 0", scale=n * s)
    assert_close(np.trace(J), 1 - s @ s, dtype=dtype, what="tr J = 1 - |s|^2", scale=float(n))
    lam = np.linalg.eigvalsh((J + J.T) / 2)
    # eigvalsh is backward stable: eigenvalue error <= n eps ||J|| <= n eps max s
    assert_le(-lam, np.zeros(n), dtype=dtype, what="J PSD", scale=n * s.max())
    assert_le(lam, np.full(n, s.max()), dtype=dtype, what="eigenvalues <= max s", scale=n * s.max())


@given(_logit_vectors)
@example(np.array([1000.0, -1000.0, 0.0]))  # saturated: s is a vertex in floating point
@example(np.array([-1000.0, -1000.0]))  # all tiny e^a: a softmax without max-shift gives 0/0
def test_jacobian_identities(device, dtype, a):
    check_jacobian_identities(flow_rhs("logistic", backend="torch"), to_torch(a, device=device, dtype=dtype),
                              dtype=dtype)


def check_jacobian_matches_autograd(rhs, a, *, dtype):
    J = to_numpy(jacobian_via_jvp(rhs, a))
    J_auto = to_numpy(torch.autograd.functional.jacobian(rhs.phi, a))
    s = to_numpy(rhs.phi(a))
    # autograd of the max-shifted softmax adds and cancels a column of size ~ s_i per row
    assert_close(J, J_auto, dtype=dtype, what="jvp_T basis vs autograd", scale=s.size * s[:, None] + 0 * J)


@given(_logit_vectors)
def test_jacobian_matches_autograd(device, dtype, a):
    check_jacobian_matches_autograd(flow_rhs("square", backend="torch"), to_torch(a, device=device, dtype=dtype),
                                    dtype=dtype)


def check_replicator_equals_jacobian_form(rhs, problem, *, device, dtype):
    V, a, target, X = torch_arrays(problem, device=device, dtype=dtype)
    dV, da = rhs(V, a, target, X)
    s = rhs.phi(a)
    g = rhs.grad_loss(rhs.output(V, a), target, X)
    f = -(g[None, :] @ V)[0]
    s_np, f_np = to_numpy(s), to_numpy(f)
    replicator = s_np * (f_np - s_np @ f_np)  # da_i = s_i (f_i - fbar), in float64
    J_auto = to_numpy(torch.autograd.functional.jacobian(rhs.phi, a))
    sc = FlowScales(problem)
    n = problem.n
    assert_close(da, replicator, dtype=dtype, what="da = replicator field", scale=n * sc.da)
    assert_close(da, J_auto.T @ f_np, dtype=dtype, what="da = J^T f (autograd J)", scale=n * sc.da)
    assert_close(dV, -np.outer(to_numpy(g), s_np), dtype=dtype, what="dV = -g s^T", scale=sc.dV)


@given(flow_problems())
# found by Hypothesis (float32): e^{a_i - max a} is subnormal; needs the TINY floor of helpers
@example(FlowProblem("kl", np.array([[0.0, 1.0]] + [[0.0, 0.0]] * 4), np.array([-372.0, -273.0]), np.full(5, 0.2)))
def test_replicator_form_equals_jacobian_form(device, dtype, problem):
    check_replicator_equals_jacobian_form(flow_rhs(problem.loss, backend="torch"), problem,
                                          device=device, dtype=dtype)


# ---- negative controls: the same checks reject wrong variants ---------------------------
_A = np.array([0.3, -1.2, 2.0, 0.0])
_PROBLEM = FlowProblem("logistic", np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]]), _A,
                       np.array([0.6, -0.8]))


def test_textbook_oracle_passes_every_check():
    rhs = TextbookRHS("logistic")
    check_jacobian_identities(rhs, to_torch(_A), dtype="float64")
    check_jacobian_matches_autograd(rhs, to_torch(_A), dtype="float64")
    check_replicator_equals_jacobian_form(rhs, _PROBLEM, device="cpu", dtype="float64")


@pytest.mark.parametrize("mutation, check", [
    ("no_ssT", lambda rhs: check_jacobian_identities(rhs, to_torch(_A), dtype="float64")),
    ("no_ssT", lambda rhs: check_jacobian_matches_autograd(rhs, to_torch(_A), dtype="float64")),
    ("no_max_shift", lambda rhs: check_jacobian_identities(rhs, to_torch(np.array([-1e3, -1e3])), dtype="float64")),
    ("flip_da", lambda rhs: check_replicator_equals_jacobian_form(rhs, _PROBLEM, device="cpu", dtype="float64")),
    ("no_ssT", lambda rhs: check_replicator_equals_jacobian_form(rhs, _PROBLEM, device="cpu", dtype="float64")),
])
def test_negative_control(mutation, check):
    with pytest.raises(AssertionError):
        check(TextbookRHS("logistic", mutation))
