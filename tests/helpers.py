"""Tolerances, stated once with their reasons, and the comparison helpers.

float64 kernels: the flow is a handful of dot products and one normalization;
forward error is a few ulps times the condition of the sum, so 1e-12 relative
(about 4500 ulps) leaves room for n, d up to a few hundred while still catching
any wrong term (a missing term is O(1) relative). The absolute floor, 1e-13 of the
scale of the computation (about 450 ulps), covers results that cancel to ~0.

float32 (opt-in, ``SOFTPOLAR_TEST_FLOAT32=1``): the same error analysis holds in
units of the dtype's machine epsilon (the kernels do the same operations, the
bound is k * eps * condition with the same k), so the float32 tolerances are the
float64 ones rescaled by eps32 / eps64 = 2**29: the same 4500 / 450 ulps, i.e.
5.4e-4 relative and 5.4e-5 absolute. ``tests/test_helpers.py`` checks that the
float32 torch kernels meet them against a float64 reference and that an O(1e-2)
relative perturbation does not.

Conditioning: where an input magnifies rounding, the caller passes ``cond``
(documented at the call site), e.g. ``1 + max|a_i - a_j|`` for $e^{a_i-\\max a}$:
the rounding of the shifted logit, about eps * |a_i - max a| absolute, becomes a
relative error of the same size in $e^{(\\cdot)}$.

mpmath: a comparison at ``dps`` digits allows a loss of 5 digits to cancellation.
"""
from __future__ import annotations

import os

import numpy as np

#: machine epsilon by dtype name.
EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}
#: relative tolerance by dtype name, see the module docstring for the reasons.
RTOL = {"float64": 1e-12}
#: absolute floor, relative to the scale of the compared arrays.
ATOL_SCALE = {"float64": 1e-13}
# float32: the same budget in ulps (module docstring), derived rather than typed.
RTOL["float32"] = RTOL["float64"] * EPS["float32"] / EPS["float64"]
ATOL_SCALE["float32"] = ATOL_SCALE["float64"] * EPS["float32"] / EPS["float64"]

#: dtypes the torch properties run under: float64 always, float32 when opted in.
DTYPES = ("float64", "float32") if os.environ.get("SOFTPOLAR_TEST_FLOAT32") == "1" else ("float64",)


def tolerance(dtype: str = "float64") -> tuple[float, float]:
    """(rtol, atol-scale) for ``dtype``."""
    return RTOL[dtype], ATOL_SCALE[dtype]


def to_numpy(x):
    """``x`` (torch tensor, numpy array, list or number) as a float64 numpy array."""
    if hasattr(x, "detach"):
        return x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=float)


def to_torch(x, *, device="cpu", dtype="float64"):
    """``x`` (numpy, list or ``None``) as a torch tensor on ``device`` with ``dtype`` (a name)."""
    import torch

    if x is None:
        return None
    return torch.as_tensor(np.asarray(x, dtype=np.float64)).to(device=device, dtype=getattr(torch, dtype))


def _bounds(expected, *, dtype, scale, cond):
    rtol, atol_scale = tolerance(dtype)
    if cond < 1:
        raise ValueError(f"cond={cond!r}: a condition factor is >= 1")
    if scale is None:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    scale = np.maximum(np.abs(np.asarray(scale, dtype=float)), 1e-300)
    return cond * rtol, cond * atol_scale * scale


def assert_close(actual, expected, *, dtype: str = "float64", what: str = "value",
                 scale=None, cond: float = 1.0) -> None:
    """Assert ``actual`` equals ``expected`` within the tolerance for ``dtype``.

    |actual - expected| <= cond * (rtol * |expected| + atol_scale * scale), entrywise.
    ``scale`` (scalar or broadcastable array) is the magnitude of the terms that
    produced ``expected``; by default ``max|expected|``, so that entries that
    cancel to ~0 do not demand impossible relative accuracy. Pass it explicitly
    when the result itself cancels (an identity whose value is 0). ``cond`` >= 1
    is a stated condition factor (see the module docstring).
    """
    actual, expected = to_numpy(actual), to_numpy(expected)
    expected = np.broadcast_to(expected, actual.shape) if expected.ndim == 0 else expected
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite entries {actual[~np.isfinite(actual)][:5]}"
    rtol, atol = _bounds(expected, dtype=dtype, scale=scale, cond=cond)
    err = np.abs(actual - expected)
    bound = atol + rtol * np.abs(expected)
    worst = float(np.max(err - bound)) if err.size else -1.0
    assert worst <= 0, (
        f"{what}: max abs error {float(np.max(err)):.3e} exceeds rtol={rtol:g}, "
        f"atol={float(np.max(atol)):.3e}"
    )


def assert_le(smaller, larger, *, dtype: str = "float64", what: str = "inequality",
              scale=None, cond: float = 1.0) -> None:
    """Assert ``smaller <= larger`` up to the absolute floor ``cond * atol_scale * scale``.

    ``scale`` defaults to ``max(|smaller|, |larger|)``: an inequality between two
    computed numbers is decided only beyond their rounding.
    """
    smaller, larger = to_numpy(smaller), to_numpy(larger)
    if scale is None:
        scale = max(float(np.max(np.abs(smaller), initial=0.0)), float(np.max(np.abs(larger), initial=0.0)))
    _, atol = _bounds(larger, dtype=dtype, scale=scale, cond=cond)
    assert np.all(np.isfinite(smaller)) and np.all(np.isfinite(larger)), f"{what}: non-finite values"
    excess = smaller - larger - atol
    assert float(np.max(excess)) <= 0, (
        f"{what}: violated by {float(np.max(smaller - larger)):.3e} (allowed {float(np.max(atol)):.3e})"
    )
