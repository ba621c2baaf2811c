"""Links with special functions (erf, atan, gamma, polylog) run on every backend that can evaluate them, and a
backend that cannot is refused with one clear error naming the function and the backend, never a traceback.

Reviewer's case: ``Link("erflink", h=2 + erf(x))`` failed on every backend, mpmath included, with "only
0-dimensional arrays can be converted" (numpy's lambdify printed erf as math.erf, and the problem's normalizer
check always used numpy).
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

import softpolar
from softpolar import main
from theorems import InvalidArgument, Link

_x = sp.Symbol("x", real=True)
LINKS = {
    "rmbs-erf": 2 + sp.erf(_x),
    "rmbs-atan": sp.pi / 2 + sp.atan(_x) + sp.Rational(1, 3),
    "rmbs-gamma": sp.gamma(_x**2 + 1),
    "rmbs-polylog": 2 + sp.polylog(2, (1 + sp.tanh(_x)) / 4),  # scipy has no polylog: numpy refuses, mpmath runs
}
V = [[0.5, 0.1, -0.2], [0.2, -0.3, 0.1]]
A = [0.0, 0.3, -0.1]
TARGET = [1.0, 0.5]


def _problem(name):
    return softpolar.Problem(loss="logistic", link=Link(name, h=LINKS[name]), V=np.array(V), a=np.array(A),
                             target=np.array(TARGET))


def _final_loss(name, backend):
    tr = softpolar.simulate(_problem(name), t_end=1, times=[0, 1], backend=backend)
    return float(tr.to_numpy()["loss"][-1])


@pytest.mark.parametrize("name", ["rmbs-erf", "rmbs-atan", "rmbs-gamma"])
def test_numpy_and_mpmath_agree(name):
    ref = _final_loss(name, "mpmath")
    assert np.isfinite(ref)
    assert _final_loss(name, "numpy") == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("name", ["rmbs-erf", "rmbs-atan"])
def test_torch_evaluates_erf_and_atan(name):
    pytest.importorskip("torch")
    assert _final_loss(name, "torch") == pytest.approx(_final_loss(name, "mpmath"), rel=1e-9)


def test_torch_refuses_gamma_by_name():
    pytest.importorskip("torch")
    with pytest.raises(InvalidArgument, match=r"torch backend cannot evaluate .*gamma"):
        _final_loss("rmbs-gamma", "torch")


def test_a_function_scipy_lacks_is_refused_on_numpy_and_runs_on_mpmath():
    with pytest.raises(InvalidArgument, match=r"polylog .*numpy backend|numpy backend .*polylog"):
        _final_loss("rmbs-polylog", "numpy")
    assert np.isfinite(_final_loss("rmbs-polylog", "mpmath"))


def test_cli_erf_runs_and_torch_gamma_is_one_line(tmp_path, capsys):
    m = tmp_path / "m.py"
    m.write_text("import sympy as sp\nfrom theorems import Link\nx = sp.Symbol('x', real=True)\n"
                 "erflink = Link('rmbc-erf', h=2 + sp.erf(x))\ngamlink = Link('rmbc-gamma', h=sp.gamma(x**2 + 1))\n")
    for link in ("rmbc-erf", "rmbc-gamma"):
        (tmp_path / f"{link}.json").write_text(json.dumps({"loss": "logistic", "link": link, "V": V, "a": A,
                                                           "target": TARGET}))
    base = ("simulate", "--models", str(m), "--t-end", "1", "--times", "0,1", "--quiet")
    assert main([*base, "--init", str(tmp_path / "rmbc-erf.json"), "--backend", "numpy"]) == 0
    assert main([*base, "--init", str(tmp_path / "rmbc-erf.json"), "--backend", "mpmath"]) == 0
    capsys.readouterr()
    pytest.importorskip("torch")
    rc = main([*base, "--init", str(tmp_path / "rmbc-gamma.json"), "--backend", "torch"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("softpolar: error: ") and "gamma" in lines[0]
    assert "Traceback" not in err
