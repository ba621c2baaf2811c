"""A general-form loss's smoothness is judged at the output dimension actually used: a loss that adds
|b_3 - t_3| only when d >= 3 counted as smooth (read at d = 2 only), so backend='auto' at d = 3 picked taylor,
which then refused it ("contains sign", exit 2) instead of falling back to mpmath as documented."""
from __future__ import annotations

import subprocess
import sys

import sympy as sp

from theorems import Loss


def _val(b, t):
    out = sum(((b[k] - t[k]) ** 2 for k in range(b.shape[0])), sp.Integer(0)) / 2
    if b.shape[0] > 2:
        out += sp.Abs(b[2] - t[2])
    return out


SNEAKY = Loss("rmasm-sneaky", value=_val, target="y")
SMOOTH = Loss("rmasm-smooth", value=lambda b, t: sum(((b[k] - t[k]) ** 2 for k in range(b.shape[0])),
                                                      sp.Integer(0)) / 2, target="y")


def test_general_form_smoothness_is_judged_at_each_d():
    assert SNEAKY.smooth_at(2) and not SNEAKY.smooth_at(3) and not SNEAKY.smooth_at(5)
    assert SMOOTH.smooth_at(1) and SMOOTH.smooth_at(3)
    # without a size a general form's smoothness is not known: conservatively not smooth
    assert SNEAKY.smooth is False and SMOOTH.smooth is False
    for L in Loss.margin("rmasm-m", ell=sp.exp(-sp.Symbol("z", real=True))), :
        assert L.smooth and L.smooth_at(3)


def test_smooth_reason_and_auto_backend_use_the_problem_size():
    from numerics import Problem
    from numerics.integrate import resolve_backend, smooth_reason

    assert "not smooth at d = 3" in smooth_reason(SNEAKY, "softmax", d=3)
    assert smooth_reason(SNEAKY, "softmax", d=2) == ""
    assert "not known to be smooth" in smooth_reason(SNEAKY, "softmax")  # no size: conservative
    p3 = Problem(SNEAKY, V=[[1, 0], [0, 1], [1, 1]], a=[0, 0], target=[1, 0, 1], link="softmax")
    assert resolve_backend(p3, "auto")[0] == "mpmath"


def test_cli_auto_falls_back_to_mpmath_at_d_3(tmp_path):
    f = tmp_path / "m7.py"
    f.write_text("import sympy as sp\nfrom theorems import Loss\n"
                 "def val(b, t):\n"
                 "    out = sum(((b[k] - t[k])**2 for k in range(b.shape[0])), sp.Integer(0)) / 2\n"
                 "    if b.shape[0] > 2:\n        out += sp.Abs(b[2] - t[2])\n    return out\n"
                 "sneaky = Loss('sneaky', value=val, target='y')\n")
    res = subprocess.run([sys.executable, "-m", "softpolar", "simulate", "--models", str(f), "--loss", "sneaky",
                          "--link", "softmax", "--seed", "1", "--d", "3", "--n", "2", "--t-end", "0.5",
                          "--backend", "auto", "--json"], capture_output=True, text=True, timeout=170)
    assert res.returncode == 0, res.stderr
    assert "mpmath" in res.stdout and "auto" in res.stdout
