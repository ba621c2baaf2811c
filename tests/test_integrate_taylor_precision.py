"""Review regressions for the Taylor backend (heyoka): precision of the converted values."""
from __future__ import annotations

import mpmath
import pytest

from numerics import Problem, simulate
from numerics.integrate import taylor as T

needs_heyoka = pytest.mark.skipif(not T.available(), reason="heyoka (extra [taylor]) is not installed")


@needs_heyoka
@pytest.mark.parametrize("value", [mpmath.mpf(0.1), mpmath.mpf("1e-300"), mpmath.mpf(-3) / 7, mpmath.mpf(5)])
def test_real_has_the_integrator_precision_below_64_bits(value):
    import heyoka as hy
    for prec in (T.prec_bits(5), T.prec_bits(6), T.prec_bits(30)):
        assert _prec(T.to_real(hy, value, prec)) == prec


def _prec(x):
    return x.prec


@needs_heyoka
@pytest.mark.parametrize("dps", [5, 6])
@pytest.mark.parametrize("clock", ["t", "log", "tau"])
def test_taylor_runs_at_the_smallest_dps(dps, clock):
    """dps 5 and 6 give fewer than 64 bits: the run must not crash on a 64-bit value (it did)."""
    p = Problem.preset("logistic-toy")
    tr = simulate(p, t_end=10, dps=dps, backend="taylor", clock=clock)
    ref = simulate(p, t_end=10, dps=dps, backend="mpmath", clock="t")
    assert abs(float(tr.loss[-1]) - float(ref.loss[-1])) <= 10.0 ** -(dps - 1)


@needs_heyoka
@pytest.mark.parametrize("clock,dps", [("t", None), ("tau", 30)])
def test_taylor_reports_progress(clock, dps, monkeypatch, capsys):
    # the taylor backend ignored progress=: nothing on a terminal or a pipe
    monkeypatch.setenv("SOFTPOLAR_PROGRESS", "lines")
    simulate(Problem.preset("logistic-toy"), t_end=1000, dps=dps, backend="taylor", clock=clock, progress=True)
    err = capsys.readouterr().err
    assert f"[taylor/{clock}" in err and "100.0%" in err
    simulate(Problem.preset("logistic-toy"), t_end=1000, dps=dps, backend="taylor", clock=clock, progress=False)
    assert "taylor/" not in capsys.readouterr().err  # control: silent without progress


def test_trajectory_meta_records_versions():
    import platform
    import sys

    import numpy
    meta = simulate(Problem.preset("logistic-toy"), t_end=1, backend="numpy").to_dict()["meta"]
    v = meta["versions"]
    assert set(v) == {"python", "numpy", "scipy", "mpmath", "torch", "heyoka", "platform"}
    assert v["python"] == platform.python_version() == "%d.%d.%d" % sys.version_info[:3]
    assert v["numpy"] == numpy.__version__ and v["mpmath"] == mpmath.__version__
    assert v["heyoka"] is None or isinstance(v["heyoka"], str)
