"""The polarization families apply only to margin losses their statements cover: l' < 0 everywhere and l -> 0 as
z -> oo (strictly decreasing to an infimum 0 that is never attained), proven by SymPy, else refused with the reason.

Reviewer's case: l(z) = -e^{-z} (unbounded below) and l(z) = z^2 e^{-z} (minimum 0 at z = 0) were admitted because
only the limit was checked; every family then ended inconclusive (exit 1), and the second ran > 180 s.
"""
from __future__ import annotations


import pytest
import sympy as sp

from proofs_check.claims import applicability
from softpolar import main
from theorems import Loss

z = sp.Symbol("z", real=True)
POLARIZING = ("vertex", "top_gap", "no_crossing", "rate_law", "loss_law", "value_law")


@pytest.mark.parametrize("name,ell,where", [("rmbf-negexp", -sp.exp(-z), "l'(-4)"),
                                             ("rmbf-zsq", z**2 * sp.exp(-z), "l'(0) = 0")])
def test_losses_that_are_not_decreasing_are_refused_with_a_counterexample(name, ell, where):
    fams = dict((f, (ok, why)) for f, ok, why in applicability("softmax", Loss.margin(name, ell=ell)))
    for fam in POLARIZING:
        ok, why = fams[fam]
        assert not ok and where in why and "l' < 0 everywhere" in why


def test_a_loss_sympy_cannot_sign_is_refused_not_admitted():
    # l' = -e^{-z} (1/(1+e^{-z}) + (1+z)^2/(1+z^2)^2) < 0 really, but SymPy's sign rules cannot show it: refused,
    # with the reason
    fams = {f: (ok, why) for f, ok, why in
            applicability("softmax", Loss.margin("rmbf-hard", ell=sp.log(1 + sp.exp(-z)) + sp.exp(-z) / (1 + z**2)))}
    for fam in POLARIZING:
        ok, why = fams[fam]
        assert not ok and "could not prove" in why


@pytest.mark.parametrize("k, ell", list(enumerate([sp.log(1 + sp.exp(-z)), sp.exp(-z), sp.pi / 2 - sp.atan(z),
                                                   1 / (1 + sp.exp(z))**2])))
def test_decreasing_losses_with_an_unattained_infimum_are_admitted(k, ell):
    # one name per loss: applicability registers the definition under its name
    for f, ok, why in applicability("softmax", Loss.margin(f"rmbf-ok{k}", ell=ell)):
        if f in POLARIZING:
            assert ok, why
    assert all(ok for f, ok, _ in applicability("softmax", "logistic") if f in POLARIZING)


def test_verify_refuses_at_once_with_one_line(tmp_path, capsys):
    m = tmp_path / "m.py"
    m.write_text("import sympy as sp\nfrom theorems import Loss\nz = sp.Symbol('z', real=True)\n"
                 "zsq = Loss.margin('rmbv-zsq', ell=z**2*sp.exp(-z))\n")
    rc = main(["verify", "--models", str(m), "--link", "softmax", "--loss", "rmbv-zsq", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "l'(0) = 0" in lines[0] and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # refused before any claim ran (it integrated for > 180 s before)


def test_the_refusal_names_each_reason_once(tmp_path, capsys):
    """The one-line refusal repeated the same reason for each of the six families (about 1,200 characters)."""
    m = tmp_path / "m.py"
    m.write_text("import sympy as sp\nfrom theorems import Loss\nz = sp.Symbol('z', real=True)\n"
                 "negexp = Loss.margin('rmbv-negexp', ell=-sp.exp(-z))\n")
    rc = main(["verify", "--models", str(m), "--link", "softmax", "--loss", "rmbv-negexp",
               "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert err.count("l'(-4) = ") == 1
    assert "[vertex, no_polarization, top_gap, no_crossing, rate_law, loss_law, value_law]" in err
