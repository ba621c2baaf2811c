"""User-defined links and losses: the public contract (theorems.Link, theorems.Loss, the registry)."""
from __future__ import annotations

import math

import pytest
import sympy as sp

import theorems as T
from theorems import InvalidArgument, Link, Loss

x = sp.Symbol("x", real=True)
q = sp.Symbol("q", positive=True)
z = sp.Symbol("z")

SOFTMAX1 = Link("softmax1", h=sp.exp(q), c=1)
EXP_MARGIN = Loss.margin("exp-margin", ell=sp.exp(-z))


def test_softmax1_phi_is_the_definition():
    a = sp.Matrix([sp.Rational(3, 10), sp.Rational(-2, 10)])
    phi = [float(v) for v in SOFTMAX1.phi(a)]
    e1, e2 = math.exp(0.3), math.exp(-0.2)
    assert phi == pytest.approx([e1 / (1 + e1 + e2), e2 / (1 + e1 + e2)], rel=1e-15)
    assert phi == pytest.approx([0.426, 0.258], abs=5e-4)


def test_exp_margin_gradient_and_value_are_not_kl():
    b = sp.Matrix(sp.symbols("b1:4", real=True))
    w = sp.Matrix([1, 0, 0])
    assert EXP_MARGIN.value(b, w) == sp.exp(-b[0])
    g = EXP_MARGIN.gradient_structured(b, w)
    assert list(g) == [-sp.exp(-b[0]), 0, 0]
    assert sp.simplify(EXP_MARGIN.gradient(b, w) - g) == sp.zeros(3, 1)
    # the numbers of the issue: z = log(1/0.9005), gradient [-0.9005, 0, 0]
    zz = -math.log(0.9005)
    pt = {b[0]: zz, b[1]: zz, b[2]: zz - 0.0822}
    assert [float(v.subs(pt)) for v in g] == pytest.approx([-0.9005, 0, 0], abs=1e-12)
    assert float(EXP_MARGIN.value(b, w).subs(pt)) == pytest.approx(0.9005, abs=1e-12)


def test_builtins_are_instances_of_the_public_classes():
    assert all(type(v) is Link for v in T.LINKS.values())
    assert all(type(v) is Loss for v in T.LOSSES.values())
    assert [L.form for L in T.LOSSES.values()] == ["margin", "separable", "cross_entropy"]
    assert T.LINKS["softmax"].shift_invariant and not T.LINKS["sum-norm"].shift_invariant
    assert not SOFTMAX1.shift_invariant and SOFTMAX1.shift_factor is not None
    assert not T.LINKS["relu-norm"].smooth and T.LINKS["l2-norm"].smooth


def test_registry_is_read_only_and_refuses_clashes():
    with pytest.raises(TypeError):
        T.LOSSES["exp"] = EXP_MARGIN  # the old path: writing into the dict
    with pytest.raises(InvalidArgument, match="shadow"):
        T.register(Link("softmax", h=sp.exp(x), c=1))
    T.register(SOFTMAX1)  # the built-in's definition under its name (softmax1 is a built-in): a no-op
    T.register(Link("softmax1", h=sp.exp(x), c=1))
    with pytest.raises(InvalidArgument, match="shadow"):
        T.register(Link("softmax1", h=sp.exp(2 * x)))
    T.register(Link("softmax1-user", h=sp.exp(x), c=1))
    T.register(Link("softmax1-user", h=sp.exp(x), c=1))  # the same definition again: a no-op
    with pytest.raises(InvalidArgument, match="another definition"):
        T.register(Link("softmax1-user", h=sp.exp(2 * x)))
    with pytest.raises(InvalidArgument, match="expected one of"):
        T.get_loss("exp")


@pytest.mark.parametrize("bad, match", [
    (dict(h=sp.exp(x) * z), "2 free symbols"),
    (dict(h="exp(x)"), "string"),
    (dict(h=sp.Integer(3)), "constant"),
    (dict(h=sp.exp(x), c=sp.oo), "finite real"),
    (dict(h=sp.exp(x), c=1, normalized=False), "elementwise"),
])
def test_bad_definitions_are_refused(bad, match):
    with pytest.raises(InvalidArgument, match=match):
        Link("bad", **bad)


def test_subclass_overriding_phi_is_refused():
    with pytest.raises(InvalidArgument, match="overrides phi"):
        class Softmax1(Link):  # the class statement itself must fail
            def phi(self, a):
                return a
    with pytest.raises(InvalidArgument, match="overrides gradient_structured"):
        class ExpLoss(Loss):
            def gradient_structured(self, beta, target, X=None):
                return beta


def test_same_definition_under_another_name():
    twin = Link("softmax-twin", h=sp.exp(q))
    assert twin.same_definition(T.LINKS["softmax"]) and twin != T.LINKS["softmax"]
    ident = T.IDENTITIES["replicator"]
    assert ident.applicability("logistic", twin)[0]
    ok, why = ident.applicability("logistic", SOFTMAX1)
    assert not ok and "softmax" in why


def test_models_file(tmp_path):
    f = tmp_path / "mymodels.py"
    f.write_text("import sympy as sp\nfrom theorems import Link, Loss\nx = sp.Symbol('x')\n"
                 "stablemax = Link('stablemax', h=sp.Piecewise((x + 1, x >= 0), (1 / (1 - x), True)))\n"
                 "expm = Loss.margin('exp-margin', ell=sp.exp(-x))\n")
    defs = T.load_models_file(f)
    assert [d.name for d in defs] == ["stablemax", "exp-margin"]
    assert T.get_link("stablemax").smooth is False
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InvalidArgument, match="boom"):
        T.load_models_file(bad)
    with pytest.raises(InvalidArgument, match="no such file"):
        T.load_models_file(tmp_path / "missing.py")


def test_flow_structured_proved_for_user_pieces():
    T.register(SOFTMAX1, EXP_MARGIN)
    ident = T.IDENTITIES["flow.structured"]
    for link in (SOFTMAX1, "l2-norm"):
        assert ident.check(2, 1, loss="exp-margin", link=link).status == "proved"
        assert ident.negative_control(2, 1, loss="exp-margin", link=link).status == "disproved"
    assert T.IDENTITIES["jacobian.structured"].check(3, loss="exp-margin", link=SOFTMAX1).status == "proved"
