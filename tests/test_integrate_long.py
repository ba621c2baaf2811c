"""Long horizons: t = 1e50 and 1e100 (the slow ones are marked ``slow``)."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from numerics import Problem, reduced_logistic, simulate


def _ratio(one_minus_max, t, n, b=1.0):
    """(1 - max s) log^2(b t) / (2 (n - 1) b / n): tends to 1 (claim C18, [D])."""
    return float(one_minus_max) * math.log(b * float(t)) ** 2 / (2 * (n - 1) * b / n)


def test_claim18_trend_in_float64():
    p = Problem.preset("logistic-toy")
    tr = simulate(p, t_end=1e100, times=["1e10", "1e50", "1e100"], backend="numpy", clock="tau")
    r = [_ratio(g, t, p.n) for g, t in zip(tr.one_minus_max, tr.times)]
    assert abs(r[2] - 1) < abs(r[1] - 1) < abs(r[0] - 1) and abs(r[2] - 1) < 0.03


@pytest.mark.slow
def test_dps50_to_1e100_matches_float64_and_reduced():
    p = Problem.preset("logistic-toy")
    times = ["1e50", "1e100"]
    hi = simulate(p, t_end="1e100", times=times, dps=50)
    lo = simulate(p, t_end=1e100, times=times, backend="numpy", clock="tau", rtol=1e-13)
    np.testing.assert_allclose([float(x) for x in hi.one_minus_max], lo.one_minus_max, rtol=1e-8)
    with mpmath.workdps(70):  # u(0) = V(0)^T w and b = |w|^2 exactly from the float64 data
        w = [mpmath.mpf(float(v)) for v in p.target]
        u0 = [mpmath.fdot([mpmath.mpf(float(v)) for v in p.V[:, j]], w) for j in range(p.n)]
        red = reduced_logistic(u0, p.a, mpmath.fdot(w, w), t_end="1e100", times=times, dps=50)
    with mpmath.workdps(50):
        for k in range(2):
            assert max(abs(x - y) for x, y in zip(hi.a[k], red.a[k])) < mpmath.mpf("1e-40")
    assert [_ratio(g, t, p.n) for g, t in zip(hi.one_minus_max, hi.times)][1] == \
        pytest.approx(1.0218, abs=1e-3)
