"""The internal clock d tau = -l'(z) dt for every margin loss with -l' > 0, read off the definition (not the
logistic loss by name): the exponential-margin loss integrates on it, and agrees with the physical clock."""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from numerics import Problem, simulate
from theorems import InvalidArgument, Loss, has_internal_clock

z = sp.Symbol("z")
EXP = Loss.margin("exp-margin-clock", ell=sp.exp(-z))


@pytest.mark.parametrize("loss,has", [("logistic", True), (EXP, True),
                                      (Loss.margin("exp-scaled-clock", ell=3 * sp.exp(-z / 2)), True),
                                      (Loss.margin("quadratic-margin-clock", ell=(1 - z) ** 2), False),
                                      ("square", False)])
def test_the_internal_clock_is_read_off_the_definition(loss, has):
    assert has_internal_clock(loss) is has


def _problem(loss):
    return Problem(loss=loss, link="softmax", V=np.array([[1.0, 0.2, -0.3], [0.1, 0.4, 0.2]]), a=np.zeros(3),
                   target=np.array([1.0, 0.5]))


def test_the_exponential_margin_loss_on_the_tau_clock_agrees_with_the_physical_clock():
    times = ["0", "1", "10", "1000"]
    t_run = simulate(_problem(EXP), t_end="1000", times=times, backend="mpmath", dps=30, clock="t")
    tau_run = simulate(_problem(EXP), t_end="1000", times=times, backend="mpmath", dps=30, clock="tau")
    assert tau_run.tau is not None and t_run.tau is None   # the tau run really ran on the internal clock
    for a, b in zip(t_run.a, tau_run.a):
        assert max(abs(mp.mpf(x) - mp.mpf(y)) for x, y in zip(a, b)) < mp.mpf("1e-20")


def test_auto_takes_the_tau_clock_for_a_long_exponential_margin_run():
    long = simulate(_problem(EXP), t_end="1e100", times=["0", "1e100"], backend="mpmath", dps=20)
    short = simulate(_problem(EXP), t_end="10", times=["0", "10"], backend="mpmath", dps=20)
    assert long.tau is not None and short.tau is None


def test_the_tau_clock_is_refused_for_a_loss_without_it_naming_the_loss():
    q = Loss.margin("quadratic-margin-clock2", ell=(1 - z) ** 2)
    with pytest.raises(InvalidArgument, match="clock='tau' is not allowed with loss=.*-ell'\\(z\\) > 0"):
        simulate(_problem(q), t_end="10", backend="mpmath", dps=20, clock="tau")
