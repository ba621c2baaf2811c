"""Review regressions for the GBS (mpmath) stepper: a step-size floor relative to the horizon."""
from __future__ import annotations

import mpmath
import pytest

from numerics import IntegrationError, Problem, simulate
from numerics.integrate import gbs_solve

TOY = Problem.preset("logistic-toy")


def test_mpmath_integrates_a_tiny_horizon():
    # the step-size floor was absolute (16 eps max(|x|, 1)): every horizon below ~1e-40 "underflowed"
    for t_end in ("1e-45", "1e-300"):
        tr = simulate(TOY, t_end=t_end, backend="mpmath")
        ref = simulate(TOY, t_end=t_end, backend="numpy")
        assert float(tr.times[-1]) == float(t_end)
        assert abs(float(tr.loss[-1]) - ref.loss[-1]) <= 1e-12


def test_gbs_on_a_tiny_horizon_is_accurate_and_still_raises_when_it_cannot_step():
    kw = dict(rtol=1e-20, atol=1e-20, max_steps=5000, t_of=lambda x, y: x)
    with mpmath.workdps(30):
        out, _, _ = gbs_solve(lambda x, y: [-y[0] * mpmath.mpf("1e45")], mpmath.mpf(0), [mpmath.mpf(1)],
                              [mpmath.mpf("1e-45")], **kw)
        assert abs(out[-1][1][0] - mpmath.exp(-1)) < 1e-18
        # y' = y^2 from 1e45 blows up at x = 1e-45: the floor, relative to the horizon, still stops it
        with pytest.raises(IntegrationError, match="step size underflow"):
            gbs_solve(lambda x, y: [y[0] ** 2], mpmath.mpf(0), [mpmath.mpf("1e45")], [mpmath.mpf("2e-45")], **kw)
