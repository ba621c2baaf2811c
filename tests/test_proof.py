"""The one decision procedure behind ``prove_zero`` and ``decide`` (theorems/proof.py).

Pins its verdict semantics: exact proofs are ``proved`` (``exact-rational`` or
``simplify``), a non-zero expression is ``disproved`` at a genuine rational point,
what only the numeric stage can judge is ``numeric`` (never ``proved``), poles and
look-alike symbol names never produce a verdict, and the memo never changes a result.
"""
from __future__ import annotations

import pytest
import sympy as sp

from theorems import InvalidArgument, prove_zero, sigmoid, softplus
from theorems import proof
from theorems import ProofResult
from theorems import IDENTITIES, clear_memo, decide

a1, a2 = sp.symbols("a_1 a_2", real=True)
x = sp.Symbol("x", positive=True)
t = sp.Symbol("t", real=True)

ENTRY_POINTS = [
    pytest.param(lambda e: prove_zero(e), id="prove_zero"),
    pytest.param(lambda e: decide(e), id="decide"),
    pytest.param(lambda e: decide(e, negative=True), id="decide-negative"),
]


def _value_at(expr, counterexample):
    """The original expression at a reported counterexample point (exact rationals, 30 digits)."""
    point = {s: sp.Rational(counterexample[s.name]) for s in expr.free_symbols}
    assert set(counterexample) >= {s.name for s in expr.free_symbols}
    return sp.N(proof.expand_named(expr.xreplace(point)), 30)


def test_decide_is_the_same_function_everywhere():
    import sys

    assert IDENTITIES  # loads the identity modules, which re-export the procedure
    holders = {name: m.decide for name, m in list(sys.modules.items())
               if name.startswith("theorems.") and hasattr(m, "decide")}
    assert len(holders) >= 2 and "theorems.proof" in holders, sorted(holders)
    assert all(f is decide for f in holders.values()), sorted(n for n, f in holders.items() if f is not decide)


@pytest.mark.parametrize("run", ENTRY_POINTS)
def test_exp_rational_identity_is_proved_exactly(run):
    softmax_1 = sp.exp(a1) / (sp.exp(a1) + sp.exp(a2))
    exprs = [
        softmax_1 - 1 / (1 + sp.exp(a2 - a1)),                      # shift form of softmax
        sigmoid(a1) + sigmoid(-a1) - 1,                              # named function, exp(-q) = 1/exp(q)
        sp.diff(softplus(a1).rewrite(sp.exp), a1) - sigmoid(a1),     # log(1 + e^a) differentiated
        sp.exp(a1 * a2) * sp.exp(-a1 * a2) - 1,                      # opaque exp(q) paired with exp(-q)
    ]
    for e in exprs:
        res = run(e)
        assert (res.status, res.method) == ("proved", "exact-rational"), (e, res)
        assert res.holds and res.counterexample == {}
    # matrices and nested lists are decided entry by entry
    assert run([sp.Matrix([exprs[0], exprs[1]]), [exprs[2]]]).status == "proved"


@pytest.mark.parametrize("run", ENTRY_POINTS)
def test_nonzero_expression_is_disproved_at_a_genuine_point(run):
    wrong = sp.exp(a1) / (sp.exp(a1) + sp.exp(a2)) - sp.Rational(1, 2)
    res = run(wrong)
    assert (res.status, res.method) == ("disproved", "spot-check")
    assert not res.holds
    assert set(res.counterexample) == {"a_1", "a_2"}
    # the point is a real counterexample: the original expression is far from 0 there
    assert abs(_value_at(wrong, res.counterexample)) > 1e-6
    # a sign error hidden in a named function is found too
    res = run(sigmoid(a1) + sigmoid(-a1) + 1)
    assert res.status == "disproved" and abs(_value_at(sigmoid(a1) + sigmoid(-a1) + 1, res.counterexample)) > 1


@pytest.mark.parametrize("run", ENTRY_POINTS)
def test_what_only_the_numeric_check_can_judge_is_numeric_not_proved(run):
    # true for x > 0, but neither the rational reduction nor simplify() proves it
    e = sp.atan(x) + sp.atan(1 / x) - sp.pi / 2
    res = run(e)
    assert (res.status, res.method) == ("numeric", "spot-check")
    assert res.holds and res.status != "proved"
    assert "50-digit" in res.detail and res.counterexample == {}


def test_values_below_the_spot_threshold_are_numeric_above_it_disproved():
    e = sp.atan(x) + sp.atan(1 / x) - sp.pi / 2
    assert prove_zero(e + sp.Rational(1, 10 ** 45)).status == "numeric"   # below SPOT_ZERO = 1e-40
    assert prove_zero(e + sp.Rational(1, 10 ** 20)).status == "disproved"


def test_simplify_only_for_positive_checks():
    e = sp.sin(t) ** 2 + sp.cos(t) ** 2 - 1
    assert (prove_zero(e).status, prove_zero(e).method) == ("proved", "simplify")
    assert decide(e).method == "simplify"
    # negative controls skip simplify(); the identity still "holds" numerically, so the control fails loudly
    assert decide(e, negative=True).status == "numeric"
    assert prove_zero(e, try_simplify=False).status == "numeric"


def test_memoization_returns_the_same_result():
    e = sp.exp(a1) / (sp.exp(a1) + sp.exp(a2)) - 1 / (1 + sp.exp(a2 - a1)) + sigmoid(a1) - sigmoid(a1)
    wrong = e + sp.exp(a1 - a2) / 7
    first = [decide(e), decide(wrong), decide(wrong, negative=True), prove_zero(wrong)]
    assert e in proof.RATIONALIZER.memo  # the conversion is stored ...
    conv = proof.RATIONALIZER.conv(e)
    assert proof.RATIONALIZER.conv(e) is conv  # ... and reused
    second = [decide(e), decide(wrong), decide(wrong, negative=True), prove_zero(wrong)]
    assert first == second
    clear_memo()
    assert e not in proof.RATIONALIZER.memo
    assert [decide(e), decide(wrong), decide(wrong, negative=True), prove_zero(wrong)] == first
    assert first[0].status == "proved" and first[1].status == first[2].status == "disproved"


def test_seed_fixes_the_counterexample():
    wrong = sp.exp(a1) - a2
    assert prove_zero(wrong, seed=3) == prove_zero(wrong, seed=3)
    points = {tuple(sorted(decide(wrong, seed=s).counterexample.items())) for s in range(4)}
    assert len(points) > 1


def test_a_symbol_named_like_a_fresh_symbol_is_not_confused_with_it():
    # the rationalizer's E_x stands for exp(x); a caller's own symbol E_x is another variable
    e = sp.Symbol("E_x", positive=True) - sp.exp(sp.Symbol("x", real=True))
    assert prove_zero(e).status == "disproved"
    assert decide(e).status == "disproved"


def test_a_pole_is_never_a_disproof():
    # gamma(1 - k) has a pole at every positive integer k: nothing can be evaluated
    k = sp.Symbol("k", integer=True, positive=True)
    res = prove_zero(sp.gamma(1 - k) * (sp.atan(k) + sp.atan(1 / k) - sp.pi / 2))
    assert res.status == "undecided" and "poles" in res.detail


def test_bad_arguments():
    with pytest.raises(InvalidArgument, match="spot_points=0"):
        prove_zero(a1 - a1, spot_points=0)
    with pytest.raises(InvalidArgument, match="points=-1"):
        decide(a1 - a1, points=-1)
    with pytest.raises(InvalidArgument, match="expr="):
        prove_zero(object())


def test_proof_result_holds():
    assert ProofResult("proved", "m").holds and ProofResult("numeric", "m").holds
    assert not ProofResult("disproved", "m").holds and not ProofResult("undecided", "m").holds
