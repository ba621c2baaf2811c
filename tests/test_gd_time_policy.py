"""Gradient descent's time policy in the Python API (numerics.gd_iterates, softpolar.gradient_descent(t_end=...)).

A time horizon becomes GD iterates in the engine, so a Python caller gets what ``softpolar simulate --gd-lr``
gets: each time reported at its own iterate lr * k, the same refusals (a time that is no iterate's, two times on
one iterate, a horizon past the step cap), each in one line naming the argument. The CLI only passes its options'
names for the messages. Controls: the nearest allowed calls run, and equal the explicit steps/record call.
"""
from __future__ import annotations

import math

import pytest

import numerics
import softpolar
from numerics import InvalidArgument

PROBLEM = softpolar.Problem.preset("logistic-toy")


@pytest.mark.parametrize("kw, names", [
    ({"lr": 0.3, "t_end": 1}, ("t_end=1 is not a time of gradient descent", "lr=0.3", "multiples of lr")),
    ({"lr": 3, "t_end": 10, "times": [0, 1, 10]}, ("times=1 is not a time of gradient descent",)),
    ({"lr": 0.1, "t_end": 0.3, "times": [0, 0.1, 0.1 + 1e-14, 0.3]}, ("times=", "same gradient-descent iterate")),
    ({"lr": 1e-10, "t_end": 1e10}, ("t_end=10000000000.0 with lr=1e-10 needs 1e+20", "max_steps=10000000")),
    ({"lr": 0.01, "t_end": 1, "max_steps": 50}, ("needs 100 gradient descent steps", "max_steps=50")),
    ({"lr": 0.0, "t_end": 1}, ("lr=0.0", "> 0")),
    ({"lr": 0.1, "t_end": 1, "steps": 10}, ("t_end=1", "steps=10", "not both")),
    ({"lr": 0.1, "times": [0, 0.1]}, ("times=", "without t_end")),
    ({"lr": 0.1}, ("steps=None", "t_end")),
])
def test_the_api_refuses_what_the_cli_refuses_in_one_line(kw, names):
    with pytest.raises(InvalidArgument) as e:
        softpolar.gradient_descent(PROBLEM, **kw)
    msg = str(e.value)
    assert "\n" not in msg and all(n in msg for n in names), msg


def test_the_cli_names_its_options_in_the_same_refusal():
    with pytest.raises(InvalidArgument, match=r"^--t-end=1 is not a time of gradient descent with --gd-lr=0.3"):
        numerics.gd_iterates(0.3, "1", names={"lr": "--gd-lr", "t_end": "--t-end"})


@pytest.mark.parametrize("lr, times", [(3, [0, 3, 9]), (0.1, [0, 0.1, 0.3]), (1e10, [0, 1e10, 3e10])])
def test_every_requested_time_is_reported_at_that_time(lr, times):
    tr = softpolar.gradient_descent(PROBLEM, lr=lr, t_end=times[-1], times=times)
    assert len(tr.times) == len(times)
    assert all(math.isclose(float(g), t, rel_tol=1e-12) for g, t in zip(tr.times, times))


def test_a_horizon_is_the_default_record_and_equals_the_explicit_call():
    by_time = softpolar.gradient_descent(PROBLEM, lr=0.1, t_end=1)
    record = numerics.default_record(10)
    assert numerics.gd_iterates(0.1, 1) == (record, numerics.DEFAULT_GD_MAX_STEPS)
    explicit = softpolar.gradient_descent(PROBLEM, lr=0.1, steps=10, record=record)
    assert by_time.times == explicit.times and by_time.loss == explicit.loss
    assert float(by_time.times[-1]) == pytest.approx(1.0, rel=1e-12)


def test_the_step_cap_admits_exactly_max_steps():
    tr = softpolar.gradient_descent(PROBLEM, lr=0.01, t_end=1, max_steps=100)  # the control: 100 <= 100 runs
    assert tr.n_steps == 100
