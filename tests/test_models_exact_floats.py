"""A float in a Link's ``c`` or in ssmax's ``scale`` is taken at its exact binary value, never rounded to a
"nice" number: before, sp.nsimplify turned c=1.000000000001 into 1 (softmax1's definition), c=1e-100 into 0
(softmax's: shift invariant), 0.333333333333 into 1/3, ssmax(4, 1.000000000001) into the built-in ssmax-n4,
and refused ssmax(4, 1e-300) as not positive."""
from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from theorems import InvalidArgument, Link, SINK_LINKS
from theorems import ssmax

x = sp.Symbol("x", real=True)


@pytest.mark.parametrize("c", [1.000000000001, 1e-100, 0.333333333333, 0.1, 5e-324])
def test_float_c_is_its_exact_binary_value(c):
    K = Link("rmaf-c", h=sp.exp(x), c=c)
    assert K.c == sp.Rational(*Fraction(c).as_integer_ratio()) and K.c.is_Rational
    assert K.c > 0 and not K.shift_invariant  # a positive constant: not softmax's definition
    assert not K.same_definition(SINK_LINKS["softmax1"])


def test_float_c_that_is_a_dyadic_rational_is_that_rational():
    assert Link("rmaf-half", h=sp.exp(x), c=0.5).c == sp.Rational(1, 2)
    assert Link("rmaf-one", h=sp.exp(x), c=1.0).same_definition(SINK_LINKS["softmax1"])
    assert Link("rmaf-sf", h=sp.exp(x), c=sp.Float(0.25)).c == sp.Rational(1, 4)


@pytest.mark.parametrize("c", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_float_c_is_refused(c):
    with pytest.raises(InvalidArgument, match="c=.*expected a finite real number"):
        Link("rmaf-bad", h=sp.exp(x), c=c)


def test_ssmax_float_scale_is_exact():
    near = ssmax(4, 1.000000000001)
    assert near is not ssmax(4) and not near.same_definition(ssmax(4))
    assert near.name == "ssmax-n4-s1.000000000001"
    tiny = ssmax(4, 1e-300)  # positive, however small
    assert tiny.name == "ssmax-n4-s1e-300"
    assert tiny.expr_h == sp.exp(sp.Rational(*Fraction(1e-300).as_integer_ratio()) * sp.log(4) * x)
    assert ssmax(4, 0.5) is ssmax(4, sp.Rational(1, 2)) and ssmax(4, 0.5).name == "ssmax-n4-s1_2"
    assert ssmax(4, 1.0) is ssmax(4)
    for bad in (0.0, -1e-300, float("nan"), float("inf"), "0.5"):
        with pytest.raises(InvalidArgument, match="scale"):
            ssmax(4, bad)
