"""Gradient descent's refusals in the Python API (softpolar.gradient_descent, the engine's own checks).

The CLI's ``simulate --gd-lr`` refuses a float64-batch backend, a step that is not > 0 and a run longer than its
step cap; the engine refuses the same inputs itself, so a Python caller gets them too: one line, naming the
argument, the value and what was expected. The control: the nearest allowed call runs.
"""
from __future__ import annotations

import math

import pytest

import softpolar
from numerics import InvalidArgument

PROBLEM = softpolar.Problem.preset("logistic-toy")


@pytest.mark.parametrize("kw, names", [
    ({"lr": 0.1, "steps": 10, "backend": "torch"}, ("backend='torch'", "numpy")),
    ({"lr": 0.0, "steps": 10}, ("lr=0.0", "> 0")),
    ({"lr": -1, "steps": 10}, ("lr=-1", "> 0")),
    ({"lr": math.nan, "steps": 10}, ("lr=nan", "> 0")),
    ({"lr": math.inf, "steps": 10}, ("lr=inf", "> 0")),
    ({"lr": 0.1, "steps": 2_000, "max_steps": 1_000}, ("steps=2000", "max_steps=1000")),
    ({"lr": 0.1, "steps": 10, "record": [0, 5, 5, 10]}, ("record=[0, 5, 5, 10]", "strictly increasing")),
])
def test_the_python_api_refuses_in_one_line(kw, names):
    with pytest.raises(InvalidArgument) as e:
        softpolar.gradient_descent(PROBLEM, **kw)
    msg = str(e.value)
    assert "\n" not in msg and all(n in msg for n in names), msg


@pytest.mark.parametrize("kw", [
    {"lr": 0.1, "steps": 10, "backend": "numpy"},
    {"lr": 1e-3, "steps": 10},
    {"lr": 0.1, "steps": 1_000, "max_steps": 1_000},
    {"lr": 0.1, "steps": 10, "record": [0, 5, 10]},
])
def test_the_nearest_allowed_calls_run(kw):
    tr = softpolar.gradient_descent(PROBLEM, **kw)
    assert len(tr.times) >= 2 and all(math.isfinite(x) for x in tr.loss)
