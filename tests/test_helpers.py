"""The tolerance helper is itself tested: it accepts rounding and rejects real errors."""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import given

from numerics import flow_rhs
from numerics.strategies import flow_problems

from .helpers import ATOL_SCALE, EPS, RTOL, assert_close, assert_le, to_numpy, to_torch, tolerance


def test_float32_tolerances_are_the_float64_ulp_budget():
    for table in (RTOL, ATOL_SCALE):
        assert table["float32"] / EPS["float32"] == pytest.approx(table["float64"] / EPS["float64"])
    assert tolerance("float32") == (RTOL["float32"], ATOL_SCALE["float32"])


def test_assert_close_accepts_rounding_and_rejects_errors():
    x = np.array([1.0, -2.0, 3e-20])
    assert_close(x * (1 + 100 * EPS["float64"]), x)
    with pytest.raises(AssertionError, match="exceeds"):
        assert_close(x * (1 + 1e-9), x)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(x[:2], x)
    with pytest.raises(AssertionError, match="non-finite"):
        assert_close(np.array([np.nan, 1.0, 0.0]), x)


def test_assert_close_scale_sets_the_floor_for_cancelling_results():
    # an identity whose value is 0, computed from O(1e3) terms: rounding is ~1e-13
    assert_close(np.array([2e-13]), np.zeros(1), scale=1e3)
    with pytest.raises(AssertionError):
        assert_close(np.array([2e-13]), np.zeros(1), scale=1.0)
    with pytest.raises(AssertionError):
        assert_close(np.array([1e-3]), np.zeros(1), scale=1e3)


def test_cond_widens_the_bound_and_must_be_at_least_one():
    assert_close(np.array([1 + 1e-10]), np.array([1.0]), cond=1e3)
    with pytest.raises(ValueError, match="cond"):
        assert_close(np.ones(1), np.ones(1), cond=0.5)


def test_assert_le():
    assert_le(1.0 + 1e-15, 1.0)
    with pytest.raises(AssertionError, match="violated"):
        assert_le(1.0 + 1e-9, 1.0)
    with pytest.raises(AssertionError, match="non-finite"):
        assert_le(np.nan, 1.0)


def test_to_numpy_and_to_torch_round_trip():
    x = np.array([[1.5, -2.0]])
    t = to_torch(x, dtype="float32")
    assert t.dtype == torch.float32 and to_numpy(t).dtype == np.float64
    assert to_torch(None) is None
    np.testing.assert_array_equal(to_numpy(t), x)


# moderate logits: the derived float32 bound is the plain ulp budget (cond = 1), which
# assumes the shifted logits are O(10); the cond factor for extreme ones is tested in
# test_properties_stability.py.
@given(flow_problems(logit_max_abs=5.0, value_max_abs=2.0, target_max_norm=2.0))
def test_float32_kernels_meet_the_derived_float32_tolerance(problem):
    """torch float32 vs float64 on the same inputs: inside the float32 bound, and an
    error of 1e-3 of the scale (far below a wrong term, which is O(scale)) is outside it."""
    rhs = flow_rhs(problem.loss, backend="torch")
    V, a, target, X = (to_torch(x, dtype="float32") for x in problem.arrays())
    dV32, da32 = rhs(V, a, target, X)
    V, a, target, X = (to_torch(x) for x in problem.arrays())
    dV64, da64 = rhs(V, a, target, X)
    # the scale of each result: its inputs' magnitude (the entries cancel in da)
    g = to_numpy(rhs.grad_loss(rhs.output(V, a), target, X))
    scale = (1 + np.max(np.abs(problem.V))) * (1 + np.max(np.abs(g)))
    assert_close(dV32, dV64, dtype="float32", what="float32 dV", scale=scale)
    assert_close(da32, da64, dtype="float32", what="float32 da", scale=scale)
    with pytest.raises(AssertionError):
        assert_close(to_numpy(dV64) + 1e-3 * scale, dV64, dtype="float32", scale=scale)
