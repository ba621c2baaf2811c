r"""CUDA-only checks (marked ``gpu``; auto-skipped without CUDA, deselected by default).

Run them with ``pytest -m gpu`` on a CUDA machine. Every torch property in
``test_properties_*.py`` and ``test_stateful.py`` also has a ``cuda`` parametrization
(marked ``gpu``) that ``-m gpu`` selects; this module adds what only makes sense on a GPU:

* the CUDA kernels equal the CPU float64 kernels on the same inputs, single and in a
  large batch (a different reduction order: the float64 budget of ``tests/helpers.py``);
* TF32 is off, so float32 matmuls on CUDA are true float32 and meet the derived float32
  tolerance against the CPU float64 result;
* results stay on the input's device.
"""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import given

from numerics import flow_rhs
from numerics.strategies import flow_problems

from .helpers import FlowScales, assert_close, to_numpy, torch_arrays

pytestmark = pytest.mark.gpu
CUDA = "cuda"


@given(flow_problems())
def test_cuda_float64_equals_cpu_float64(problem):
    rhs = flow_rhs(problem.loss, backend="torch")
    dV_c, da_c = rhs(*torch_arrays(problem, device=CUDA))
    dV, da = rhs(*torch_arrays(problem))
    assert dV_c.device.type == "cuda" and da_c.device.type == "cuda"
    sc = FlowScales(problem)
    assert_close(dV_c, dV, what="cuda dV", scale=problem.n * sc.dV)
    assert_close(da_c, da, what="cuda da", scale=problem.n * sc.da)


def test_tf32_is_off_for_verification():
    # matmuls only: cudnn's TF32 switch (on by default) affects convolutions, which the flow has none of
    assert not torch.backends.cuda.matmul.allow_tf32
    assert torch.get_float32_matmul_precision() == "highest"


@given(flow_problems(logit_max_abs=5.0, value_max_abs=2.0, target_max_norm=2.0))
def test_cuda_float32_meets_the_derived_float32_tolerance(problem):
    rhs = flow_rhs(problem.loss, backend="torch")
    dV32, da32 = rhs(*torch_arrays(problem, device=CUDA, dtype="float32"))
    dV, da = rhs(*torch_arrays(problem))
    g = to_numpy(rhs.grad_loss(rhs.output(*torch_arrays(problem)[:2]), *torch_arrays(problem)[2:]))
    scale = (1 + np.max(np.abs(problem.V))) * (1 + np.max(np.abs(g)))
    assert_close(dV32, dV, dtype="float32", what="cuda float32 dV", scale=scale)
    assert_close(da32, da, dtype="float32", what="cuda float32 da", scale=scale)


@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
def test_large_batch_on_cuda_equals_cpu(loss, seed):
    """B=512 problems with n=64 tokens, d=32, extreme logits included: one batched call."""
    gen = np.random.default_rng(seed)
    B, n, d = 512, 64, 32
    V = gen.normal(size=(B, d, n))
    a = gen.normal(size=(B, n)) * gen.choice([1.0, 100.0, 1000.0], size=(B, 1))
    target = gen.dirichlet(np.ones(d), size=B) if loss == "kl" else gen.normal(size=(B, d))
    args = [torch.as_tensor(x) for x in (V, a, target)]
    rhs = flow_rhs(loss, backend="torch")
    dV, da = rhs(*args)
    dV_c, da_c = rhs(*[x.to(CUDA) for x in args])
    assert torch.isfinite(dV_c).all() and torch.isfinite(da_c).all()
    # the batch's scale: |g| <= |target| (+ |beta| for square), |V| <= max|V|; n*d terms per sum
    g_scale = np.abs(target).max() + (np.abs(V).max() if loss == "square" else 0.0)
    scale = n * d * g_scale * (1 + np.abs(V).max())
    assert_close(dV_c, dV, what="batched cuda dV", scale=scale)
    assert_close(da_c, da, what="batched cuda da", scale=scale)
