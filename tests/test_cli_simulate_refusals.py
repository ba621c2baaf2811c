"""simulate refuses options that would have no effect (found by an adversarial review: they were accepted and
silently dropped; each test fails on the code before the fix)."""
from __future__ import annotations

import pytest

from softpolar import main

BASE = ["simulate", "--preset", "logistic-toy", "--t-end", "1", "--times", "0,1", "--quiet"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("softpolar: error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_dps_with_a_float64_backend_is_refused(capsys, backend):
    assert main([*BASE, "--backend", backend, "--dps", "50"]) == 2
    line = _one_line(capsys)
    assert "--dps=50" in line and backend in line


@pytest.mark.parametrize("extra", [["--rtol", "1e-6"], ["--atol", "1e-9"], ["--clock", "tau"],
                                   ["--rtol", "1e-6", "--clock", "t"]])
def test_integrator_options_with_gradient_descent_are_refused(capsys, extra):
    assert main([*BASE, "--gd-lr", "0.5", "--backend", "numpy", *extra]) == 2
    line = _one_line(capsys)
    assert "--gd-lr" in line and all(x in line for x in extra if x.startswith("--"))


def test_controls_the_same_runs_without_the_dropped_options_succeed(capsys):
    assert main([*BASE, "--backend", "numpy", "--json"]) == 0
    assert main([*BASE, "--gd-lr", "0.5", "--backend", "numpy", "--json"]) == 0
    assert main([*BASE, "--backend", "mpmath", "--dps", "20", "--json"]) == 0
