"""Tolerances, stated once with their reasons, and the comparison helper.

float64 kernels: the flow is a handful of dot products and one normalization;
forward error is a few ulps times the condition of the sum, so 1e-12 relative
(about 4500 ulps) leaves room for n, d up to a few hundred while still catching
any wrong term (a missing term is O(1) relative). float32: 1e-5 (about 80 ulps of
float32 for the same reason). mpmath: a comparison at ``dps`` digits allows a
loss of 5 digits to cancellation.
"""
from __future__ import annotations

import numpy as np

#: relative tolerance by dtype name, see the module docstring for the reasons.
RTOL = {"float64": 1e-12, "float32": 1e-5}
#: absolute floor, relative to the scale of the compared arrays.
ATOL_SCALE = {"float64": 1e-13, "float32": 1e-6}


def tolerance(dtype: str = "float64") -> tuple[float, float]:
    """(rtol, atol-scale) for ``dtype``."""
    return RTOL[dtype], ATOL_SCALE[dtype]


def to_numpy(x):
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def assert_close(actual, expected, *, dtype: str = "float64", what: str = "value") -> None:
    """Assert ``actual`` equals ``expected`` within the tolerance for ``dtype``.

    The absolute floor scales with ``max|expected|`` so that entries that cancel
    to ~0 do not demand impossible relative accuracy.
    """
    actual, expected = to_numpy(actual), to_numpy(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    rtol, atol_scale = tolerance(dtype)
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    atol = atol_scale * max(scale, 1e-300)
    err = np.abs(actual - expected)
    bound = atol + rtol * np.abs(expected)
    worst = float(np.max(err - bound)) if err.size else -1.0
    assert worst <= 0, (
        f"{what}: max abs error {float(np.max(err)):.3e} exceeds rtol={rtol:g}, atol={atol:.3e}"
    )
