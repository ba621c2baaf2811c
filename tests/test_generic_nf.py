"""The index normal form and the size-generic model (theorems/id_generic_nf.py, id_generic_model.py).

Pins: every rewrite is an equality (true identities reduce to no terms), a false statement
never reduces to no terms, the point families evaluate exactly, the sign test is sound, and
the index forms are the package's own definitions at concrete sizes.
"""
from __future__ import annotations

import pytest
import sympy as sp

from theorems import SymbolicModel, sigmoid
from theorems import id_generic_model as G
from theorems.id_generic_nf import (D, N, Ambiguous, Family, NotNormalizable, family_value, is_zero,
                                     nonzero_for_all_sizes, normal_form)
from theorems.id_generic_proofs import FAMILIES, prove_parts, refute_parts
from theorems import decide

i, j, k, m = sp.symbols("i j k m", integer=True, positive=True)
x = sp.IndexedBase("x", real=True)
yv = sp.IndexedBase("y", real=True)
s = G.s


# ---- normal form: true identities ---------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    sp.Sum(s(i), (i, 1, N)) - 1,                                                     # re-summation: sum s = 1
    sp.Sum(sp.KroneckerDelta(j, m) * x[j], (j, 1, N)) - x[m],                        # delta elimination
    sp.KroneckerDelta(k, m) * (x[k] - x[m]),                                         # free-free delta
    sp.Sum(1, (i, 1, N)) - N,                                                        # empty sum over an index
    sp.Sum(x[i] * sp.Sum(yv[j], (j, 1, N)), (i, 1, N)) - sp.Sum(yv[i] * sp.Sum(x[j], (j, 1, N)), (i, 1, N)),
    sp.Sum(x[i], (i, 1, N)) ** 2 - sp.Sum(sp.Sum(x[i] * x[j], (j, 1, N)), (i, 1, N)),
    sp.exp(G.a[i] + 1) - sp.E * sp.exp(G.a[i]),
])
def test_true_identities_reduce_to_no_terms(expr):
    assert is_zero(expr, {m: N, k: N})


@pytest.mark.parametrize("expr", [
    sp.Sum(s(i), (i, 1, N)) - sp.Rational(1, 2),
    sp.Sum(x[i] ** 2, (i, 1, N)) - sp.Sum(x[i], (i, 1, N)) ** 2,   # needs n = 1 (or special x)
    sp.Sum(sp.KroneckerDelta(j, m) * x[j], (j, 1, N)) - x[k],
    sp.Sum(1, (i, 1, N)) - D,
])
def test_false_statements_keep_terms(expr):
    assert not is_zero(expr, {m: N, k: N})


def test_unsupported_constructs_are_reported():
    with pytest.raises(NotNormalizable):
        normal_form(sp.Sum(x[i], (i, 0, N)))
    with pytest.raises(NotNormalizable):
        normal_form(sp.Sum(x[i], (i, 1, sp.Symbol("L", integer=True, positive=True))))
    # sum_{i<=n} sum_{k<=d} delta_ik x_i: only min(n, d) terms survive; the delta stays (no contraction)
    assert normal_form(sp.Sum(sp.Sum(sp.KroneckerDelta(i, k) * x[i], (i, 1, N)), (k, 1, D)))


def test_pdiff_refuses_a_bound_index():
    expr = sp.Sum(x[k] * G.a[k], (k, 1, N))
    with pytest.raises(ValueError, match="summation variable"):
        G.pdiff(expr, G.a[k])
    assert is_zero(G.pdiff(expr, G.a[m]) - x[m], {m: N})
    assert not is_zero(G.pdiff(expr, G.a[m]) - x[m])  # m of unknown range: the delta is not contracted


# ---- point families and the sign test ----------------------------------------------------------
def test_family_values_are_exact():
    fam, _ = FAMILIES[0]
    assert sp.simplify(family_value(sp.Sum(s(i), (i, 1, N)), fam)) == 1
    assert family_value(sp.Sum(G.a[i], (i, 1, N)), fam) == sp.log(2)
    # s_1 = 2 / (2 + (n - 1)) on a = (log 2, 0, 0, ...)
    assert sp.simplify(family_value(s(i), fam, {i: 1}) - 2 / (N + 1)) == 0


def test_family_refuses_what_it_cannot_evaluate():
    fam = Family({}, {"x": 1}, {N: 2, D: 1}, {}, {"x": (N,), "y": (N,)})
    with pytest.raises(Ambiguous):
        family_value(x[k], fam)  # a free index without a position
    with pytest.raises(KeyError):
        family_value(sp.Sum(yv[i], (i, 1, N)), fam)  # no value for y
    assert family_value(sp.Sum(x[i], (i, 1, N)), fam) == N
    with pytest.raises(Ambiguous):
        family_value(x[3], fam)  # position 3 lies in the open class: its deltas would be wrong


@pytest.mark.parametrize("value, expected", [
    ((N - 1) / (N + 1), True), (N * D + 1, True), (-2 / (N + 1) ** 2, True), (sp.exp(-N), True),
    (N - 2, False), (N - 3, False), (D - N, False), (sp.Integer(0), False),
    ((1 - 2 * sigmoid(-2 / (N + 1))) / (N + 1), True), (sp.exp(1 / N) - 1, True), (1 - sp.exp(-1 / D), True),
    (1 - 2 * sigmoid(N - 2), False), (sp.exp(N - 2) - 1, False),
])
def test_nonzero_for_all_sizes(value, expected):
    assert nonzero_for_all_sizes(value) is expected


def test_refute_reports_a_true_statement_as_proved():
    # the planted bug under which a generic control would pass: the "wrong" variant is true
    assert refute_parts([("true", sp.Sum(s(i), (i, 1, N)) - 1)], "planted").status == "proved"
    res = refute_parts([("false", sp.Sum(s(i), (i, 1, N)) - 2)], "control")
    assert res.status == "disproved" and "for every size" in res.detail


def test_prove_parts_disproves_only_with_a_nonzero_value():
    assert prove_parts([("t", sp.Sum(s(i), (i, 1, N)) - 1)], "t").status == "proved"
    assert prove_parts([("f", sp.Sum(s(i), (i, 1, N)) - 2)], "f").status == "disproved"
    # non-zero normal form but zero on every family point: undecided, never disproved
    res = prove_parts([("u", sp.Sum(G.V[1, i] * sp.KroneckerDelta(i, 3), (i, 1, N)))], "u")
    assert res.status == "undecided"


# ---- the index forms are the package's definitions -------------------------------------------------
def test_bridge_holds_and_has_power(monkeypatch):
    assert G.bridge("logistic", "identity", "softmax", sizes=((2, 2),))[0]
    wrong = G.GLoss.grad
    monkeypatch.setattr(G.GLoss, "grad", lambda self, b, kk: -wrong(self, b, kk))
    ok, text = G.bridge.__wrapped__("logistic", "identity", "softmax", sizes=((2, 2),))
    assert not ok and "logistic/softmax" in text


def test_generic_structured_flow_equals_the_derived_flow_at_a_size_outside_the_bridge():
    m = SymbolicModel("square", "softmax", 4, 3)
    loss = G.GLoss("square", "identity")
    Vdot, adot = G.structured_flow(G.SOFTMAX, lambda kk: G.grad_at_beta(loss, G.SOFTMAX, kk))
    dV, da = m.flow()
    diffs = [G.concretize(Vdot(kk, jj), m, None) - dV[kk - 1, jj - 1] for kk in (1, 3) for jj in (1, 4)]
    diffs += [G.concretize(adot(ii), m, None) - da[ii - 1] for ii in (1, 4)]
    assert decide(diffs).status == "proved"


# ---- every rewrite preserves the value: random expressions at concrete sizes ----------------------
W = sp.IndexedBase("W", real=True)
_TOK, _OUT = N, D
_FREE_IDX = [(m, N), (k, D)]


def _random_expr(rng, depth, scope):
    def idx(kind):
        cands = [v for v, t in scope if t == kind]
        return rng.choice(cands) if cands else None

    if depth == 0 or rng.random() < 0.25:
        ti, to = idx(_TOK), idx(_OUT)
        options = [sp.Rational(rng.randint(-3, 3), rng.randint(1, 3))]
        if ti is not None:
            options += [x[ti], sp.exp(G.a[ti]), s(ti)]
        if to is not None:
            options += [yv[to]]
        if ti is not None and to is not None:
            options += [W[to, ti]]
        t2, o2 = idx(_TOK), idx(_OUT)
        if ti is not None and t2 is not None:
            options += [sp.KroneckerDelta(ti, t2)] * 3
        if to is not None and o2 is not None:
            options += [sp.KroneckerDelta(to, o2)] * 2
        return rng.choice(options)
    op = rng.choice(["add", "mul", "mul", "sum", "sum", "sq", "inv"])
    if op == "add":
        return _random_expr(rng, depth - 1, scope) + _random_expr(rng, depth - 1, scope)
    if op == "mul":
        return _random_expr(rng, depth - 1, scope) * _random_expr(rng, depth - 1, scope)
    if op == "sq":
        return _random_expr(rng, depth - 1, scope) ** 2
    if op == "inv":  # a positive denominator
        return 1 / (1 + _random_expr(rng, depth - 1, scope) ** 2)
    kind = rng.choice([_TOK, _OUT])
    v = G.fresh("b")
    return sp.Sum(_random_expr(rng, depth - 1, scope + [(v, kind)]), (v, 1, kind))


def _value(expr, n, d, point):
    e = G.expand_finite(sp.sympify(expr).xreplace({N: n, D: d, m: 2, k: 1}))
    e = e.replace(lambda z: isinstance(z, sp.Indexed), lambda z: point[(z.base.label.name, *map(int, z.indices))])
    return sp.N(e, 30)


@pytest.mark.parametrize("seed", range(6))
def test_normal_form_preserves_the_value(seed):
    import random

    from theorems.id_generic_nf import rebuild

    rng = random.Random(seed)
    vals = random.Random(1000 + seed)
    point = {}
    for name, shape in (("x", (4,)), ("a", (4,)), ("y", (3,)), ("W", (3, 4))):
        for ix in __import__("itertools").product(*[range(1, t + 1) for t in shape]):
            point[(name, *ix)] = sp.Rational(vals.randint(-9, 9), vals.randint(1, 5))
    for _ in range(25):
        expr = _random_expr(rng, 4, list(_FREE_IDX))
        try:
            nf = rebuild(normal_form(expr, dict(_FREE_IDX)))
        except NotNormalizable:
            continue
        for n, d in ((2, 1), (3, 2), (4, 3)):
            lhs, rhs = _value(expr, n, d, point), _value(nf, n, d, point)
            assert abs(lhs - rhs) <= 1e-20 * (1 + abs(lhs)), (expr, n, d, lhs, rhs)


# ---- the bridge over sizes and links ------------------------------------------------------------------
def test_flow_proof_bridges_every_builtin_link():
    from theorems.id_generic_proofs import BRIDGE_GRID, PROOFS, bridge_grid
    from theorems import LINKS

    res = PROOFS["flow.structured"].prove()
    assert res.status == "proved"
    assert all(name in res.detail for name in LINKS)
    assert {link for _, link, _ in bridge_grid(((2, 1),))} == set(LINKS)
    assert set(BRIDGE_GRID) == {(n, d) for n in range(2, 7) for d in range(1, 4)}


@pytest.mark.slow
@pytest.mark.parametrize("link", ["softmax", "sigmoid", "relu-norm", "l1-norm", "l2-norm", "sum-norm"])
def test_bridge_on_the_whole_grid(link):
    # n = 2..6, d = 1..3, every loss: the index forms are the matrix code's definitions (minutes in all)
    from theorems.id_generic_proofs import BRIDGE_GRID, bridge_grid
    from theorems import LINKS

    assert link in LINKS
    for (loss, design), name, (n, d) in bridge_grid(BRIDGE_GRID, (link,)):
        ok, text = G.bridge.__wrapped__(loss, design, name, sizes=((n, d),))
        assert ok, text
