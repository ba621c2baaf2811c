"""A link (or margin / separable loss) must be a real scalar expression of its variable: a Matrix-valued or a
provably non-real one is refused at construction (before, both loaded and simulate / derive crashed later with a
traceback: ShapeError, "Casting complex values to real discards the imaginary part")."""
from __future__ import annotations

import subprocess
import sys

import pytest
import sympy as sp

from theorems import InvalidArgument, Link, Loss, SINK_LINKS, sigmoid

x, z, u, y = sp.symbols("x z u y", real=True)


@pytest.mark.parametrize("h, why", [
    (sp.Matrix([sp.exp(x), x]), "2x1 matrix"),
    (sp.ImmutableMatrix([[sp.exp(x)]]), "1x1 matrix"),
    (sp.Lambda(x, sp.Matrix([x, x])), "2x1 matrix"),
    (sp.exp(sp.I * x), "not real"),
    (sp.I * sp.exp(x), "not real"),
    (sp.sqrt(x), "not real"),
    (sp.log(x), "not real"),
    (sp.polylog(2, x), "not real"),
    (sp.exp(x) + sp.I, "not real"),
])
def test_non_scalar_or_non_real_link_is_refused(h, why):
    with pytest.raises(InvalidArgument, match=r"link 'rmas-bad': h.*" + why + r".*expected a real scalar expression"):
        Link("rmas-bad", h=h)


def test_non_real_k_and_loss_generators_are_refused():
    with pytest.raises(InvalidArgument, match="k.*not real"):
        Link("rmas-k", h=sp.exp(x), k=sp.exp(sp.I * x))
    with pytest.raises(InvalidArgument, match="k.*not a finite real constant"):
        Link("rmas-kc", h=sp.exp(x), k=sp.I)
    with pytest.raises(InvalidArgument, match="ell.*not real"):
        Loss.margin("rmas-ell", ell=sp.log(z))
    with pytest.raises(InvalidArgument, match="ell.*matrix"):
        Loss.margin("rmas-ellm", ell=sp.Matrix([z, z]))
    with pytest.raises(InvalidArgument, match="f.*matrix"):
        Loss.separable("rmas-fm", f=sp.Matrix([u - y, u]), variables=(u, y))
    with pytest.raises(InvalidArgument, match="f.*not real"):
        Loss.separable("rmas-fc", f=sp.sqrt(u - y), variables=(u, y))


@pytest.mark.parametrize("h", [sp.exp(x), sigmoid(x), sp.gamma(x) + 3, sp.erf(x) + 2, sp.Abs(x) ** sp.Rational(1, 3),
                               sp.exp(sp.I * x) + sp.exp(-sp.I * x) + 3, sp.besselj(0, x) + 2,
                               SINK_LINKS["stablemax"].expr_h])
def test_real_links_sympy_cannot_always_decide_are_accepted(h):
    assert Link("rmas-ok", h=h).expr_h is not None


def test_models_file_with_a_matrix_or_complex_link_is_exit_2_one_line(tmp_path):
    for name, h in (("vec", "sp.Matrix([sp.exp(x), x])"), ("cpx", "sp.exp(sp.I*x)")):
        f = tmp_path / f"{name}.py"
        f.write_text("import sympy as sp\nfrom theorems import Link\nx = sp.Symbol('x', real=True)\n"
                     f"K = Link({name!r}, h={h})\n")
        res = subprocess.run([sys.executable, "-m", "softpolar", "simulate", "--models", str(f), "--link", name,
                              "--loss", "logistic", "--seed", "1", "--d", "2", "--n", "2", "--t-end", "1"],
                             capture_output=True, text=True, timeout=120)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1, res.stderr
        assert f"link '{name}': h" in lines[0] and "expected a real scalar expression" in lines[0]
