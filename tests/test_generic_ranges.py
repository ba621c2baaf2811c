"""The index normal form with ranged indices: a delta is contracted only into an index provably in range.

Pins: the auditor's out-of-range contractions are no longer proved (or disproved when true), and a
property test compares the prover's verdict on random identities that mix token, output and concrete
indices with exact evaluation at several concrete sizes: never ``proved`` when a size refutes the
identity, never ``disproved`` when every size (and the disproof's own witness point) satisfies it.
"""
from __future__ import annotations

import itertools
import random

import pytest
import sympy as sp

from theorems import _id_generic_model as G
from theorems._id_generic_nf import MIN_SIZE, D, N, in_range, is_zero, normal_form
from theorems._id_generic_proofs import FAMILIES, free_ranges, prove_parts, refute_parts

b, c = sp.symbols("b c", integer=True, positive=True)
q = sp.Symbol("q", integer=True, positive=True)
dl = sp.KroneckerDelta


# ---- the auditor's expressions ------------------------------------------------------------------------
AUDIT = [
    # (label, expression that the old normal form reduced to 0 or to a wrong residue, ranges, true?)
    ("sum_{b<=n} delta_{b,3} = 1 (false at n = 2)", sp.Sum(dl(b, 3), (b, 1, N)) - 1, {}, False),
    ("sum_{b<=n} delta_{b,3} a_b = a_3 (false at n = 2)", sp.Sum(dl(b, 3) * G.a[b], (b, 1, N)) - G.a[3], {}, False),
    ("sum_{k<=d} delta_{k,q} g_k = g_q, q a token index", sp.Sum(dl(c, q) * G.g[c], (c, 1, D)) - G.g[q], {q: N}, False),
    ("sum_{b<=n} delta_{b,q} c_b = c_q, q an output index",
     sp.Sum(dl(b, q) * G.c[b], (b, 1, N)) - G.c[q], {q: D}, False),
    ("sum_{b<=n} delta_{b,n+1} = 0 (true)", sp.Sum(dl(b, N + 1), (b, 1, N)), {}, True),
]


@pytest.mark.parametrize("label, expr, ranges, true", AUDIT, ids=[a[0] for a in AUDIT])
def test_audit_expressions(label, expr, ranges, true):
    res = prove_parts([(label, expr)], label, ranges=ranges)
    if true:
        assert res.status == "proved", res.detail
        assert refute_parts([(label, expr)], label, ranges=ranges).status == "proved"  # never "disproved"
    else:
        assert res.status != "proved", res.detail
        assert not is_zero(expr, ranges)
        assert refute_parts([(label, expr)], label, ranges=ranges).status != "proved"


def test_the_old_contraction_is_what_the_audit_expressions_need():
    # the in-range versions of the same expressions are proved: the rule is restricted, not removed
    assert is_zero(sp.Sum(dl(b, 2), (b, 1, N)) - 1)              # 2 <= n for every n >= MIN_SIZE[n] = 2
    assert is_zero(sp.Sum(dl(b, 1) * G.g[b], (b, 1, D)) - G.g[1])
    assert is_zero(sp.Sum(dl(c, q) * G.g[c], (c, 1, D)) - G.g[q], {q: D})
    assert is_zero(sp.Sum(dl(b, N), (b, 1, N)) - 1)
    assert is_zero(sp.Sum(sp.Sum(dl(b, c) * G.c[b], (b, 1, N)), (c, 1, N)) - sp.Sum(G.c[b], (b, 1, N)))
    # a token and an output bound index: only min(n, d) terms survive, nothing is contracted
    assert normal_form(sp.Sum(sp.Sum(dl(b, c) * G.c[b], (b, 1, N)), (c, 1, D)))


@pytest.mark.parametrize("x, hi, ranges, expected", [
    (1, N, {}, True), (2, N, {}, True), (3, N, {}, None), (2, D, {}, None), (N + 1, N, {}, False),
    (0, D, {}, False), (N, N, {}, True), (q, N, {q: N}, True), (q, N, {q: D}, None), (q, N, {}, None),
    (N - 1, N, {}, True), (D + N, N, {}, False), (q + 1, N, {q: N}, None),
])
def test_in_range(x, hi, ranges, expected):
    assert in_range(x, hi, ranges) is expected


def test_free_ranges_from_slots_and_declarations():
    i, k = G.IDX["i"], G.IDX["k"]
    assert free_ranges(G.V[k, i] * G.a[i]) == {k: D, i: N}
    assert free_ranges(sp.Sum(G.V[k, i], (k, 1, D))) == {i: N}        # a bound k is not free
    assert free_ranges(dl(i, k)) == {}                                 # deltas alone give no range
    assert free_ranges(G.a[q] * G.g[q], {q: N}) == {q: N}
    with pytest.raises(Exception, match="declare its range"):
        free_ranges(G.a[q] * G.g[q])


def test_a_free_index_of_unknown_range_is_placed_at_position_1_only():
    # c_q - c_1 with q of unknown range (deltas only): the family must not put q at position 2
    t = G.IDX["t"]  # the families place t at position 2
    expr = sp.Sum(dl(b, t), (b, 1, N)) - 1
    res = refute_parts([("e", expr)], "e")
    assert res.status != "disproved", res.detail


# ---- property test: random identities with mixed ranges ---------------------------------------------
TOK, OUT = N, D
I_, T_, K_ = G.IDX["i"], G.IDX["t"], G.IDX["k"]
FREE = {I_: TOK, T_: TOK, K_: OUT}
CONCRETE = [sp.Integer(1), sp.Integer(2), sp.Integer(3), N, N + 1, D, D + 1]


def _leaf(rng, scope):
    toks = [v for v, r in scope if r == TOK]
    outs = [v for v, r in scope if r == OUT]
    ti, to = rng.choice(toks), rng.choice(outs) if outs else None
    opts = [sp.Rational(rng.randint(-2, 2), rng.randint(1, 2)), G.c[ti], G.s(ti)]
    if to is not None:
        opts += [G.g[to], G.V[to, ti]]
    anyidx = [v for v, _ in scope]
    deltas = [dl(rng.choice(anyidx), rng.choice(anyidx + CONCRETE)) for _ in range(4)]
    return rng.choice(opts + deltas)


def _random_expr(rng, depth, scope):
    if depth == 0 or rng.random() < 0.3:
        return _leaf(rng, scope)
    op = rng.choice(["add", "mul", "mul", "sum", "sum", "sum"])
    if op == "add":
        return _random_expr(rng, depth - 1, scope) + _random_expr(rng, depth - 1, scope)
    if op == "mul":
        return _random_expr(rng, depth - 1, scope) * _random_expr(rng, depth - 1, scope)
    hi = rng.choice([TOK, OUT])
    v = G.fresh("b")
    body = _random_expr(rng, depth - 1, scope + [(v, hi)])
    if rng.random() < 0.6:  # make a contraction likely: a delta of v with some index or concrete value
        body = body * dl(v, rng.choice([x for x, _ in scope] + CONCRETE))
    return sp.Sum(body, (v, 1, hi))


def _naive(e):
    """The unsound rule: sum_v delta(v, x) T(v) = T(x) whatever x is (what an unranged prover does)."""
    if e.is_Atom:
        return e
    if isinstance(e, sp.Sum) and len(e.limits) == 1:
        v = e.limits[0][0]
        body = _naive(e.function)
        for f in sp.Mul.make_args(body):
            if isinstance(f, sp.KroneckerDelta) and v in f.args:
                other = f.args[1] if f.args[0] == v else f.args[0]
                if not other.has(v):
                    return (body / f).xreplace({v: other})
        return sp.Sum(body, e.limits[0])
    return e.func(*[_naive(x) for x in e.args])


def _random_point(rng, n, d):
    """Values for every entry, also beyond the range (an out-of-range contraction reads g_3 at d = 2): an
    identity that is "proved" must hold for every value of such entries too."""
    top = max(n, d) + 2
    pt = {("a", i): sp.log(sp.Rational(rng.randint(1, 5), rng.randint(1, 3))) for i in range(1, top + 1)}
    for name in ("c", "g"):
        pt.update({(name, i): sp.Rational(rng.randint(-4, 4), rng.randint(1, 3)) for i in range(1, top + 1)})
    pt.update({("V", k, i): sp.Rational(rng.randint(-4, 4), rng.randint(1, 3))
               for k in range(1, top + 1) for i in range(1, top + 1)})
    return pt


def _family_point(fam, n, d):
    pt = {}
    top = max(n, d) + 2
    for name in ("a", "c", "g", "V"):
        types = fam.index_types[name]
        for ix in itertools.product(*[range(1, top + 1) for _ in types]):
            cls = tuple(i if i <= fam.explicit[ty] else None for i, ty in zip(ix, types))
            pt[(name, *ix)] = fam.lookup(name, cls)
    return pt


def _exact(expr, n, d, free, point):
    e = G._expand_finite(sp.sympify(expr).xreplace({N: n, D: d}).xreplace(free))
    e = sp.sympify(e.replace(lambda z: isinstance(z, sp.Indexed),
                             lambda z: sp.sympify(point[(z.base.label.name, *map(int, z.indices))])))
    return sp.simplify(e) if e.has(sp.exp, sp.log) else sp.together(e)


SIZES = [(2, 1), (2, 3), (3, 2), (4, 1)]


def _check_identity(expr, rng):
    """(verdict, refuted at some size?); raises AssertionError on an unsound verdict."""
    res = prove_parts([("random", expr)], "random", ranges=FREE)
    refuted = False
    for n, d in SIZES:
        point = _random_point(rng, n, d)
        for vi, vt, vk in {(1, 2, 1), (n, n, d), (2, 1, d)}:
            if _exact(expr, n, d, {I_: vi, T_: vt, K_: vk}, point) != 0:
                refuted = True
                break
        if refuted:
            break
    if res.status == "proved":
        assert not refuted, (expr, res.detail)
    if res.status == "disproved":
        # the disproof's witness is a family point: the identity must fail there at some size it names
        fails = False
        for fam, _ in FAMILIES:
            sizes = [(max(2, fam.explicit[N]) + j, max(1, fam.explicit[D]) + j2) for j in (0, 1, 2) for j2 in (0, 1)]
            for n, d in sizes:
                fails |= _exact(expr, n, d, {I_: 1, T_: 2, K_: 1}, _family_point(fam, n, d)) != 0
        assert fails or refuted, (expr, res.detail)
    return res.status, refuted


def _run(seed: int, count: int):
    rng = random.Random(seed)
    tally = {}
    for _ in range(count):
        e = _random_expr(rng, 3, [(I_, TOK), (T_, TOK), (K_, OUT)])
        kind = rng.choice(["naive", "naive", "self", "perturb"])
        if kind == "naive":
            expr = e - _naive(e)
        elif kind == "self":
            expr = e - e.xreplace({v: G.fresh("b") for v in (e.atoms(sp.Dummy))})
        else:
            expr = e - _random_expr(rng, 2, [(I_, TOK), (T_, TOK), (K_, OUT)])
        status, refuted = _check_identity(expr, rng)
        key = (status, "refuted" if refuted else "holds at the tested sizes")
        tally[key] = tally.get(key, 0) + 1
    return tally


@pytest.mark.parametrize("seed", range(2))
def test_random_identities_with_mixed_ranges(seed, capsys):
    tally = _run(seed, 25)
    with capsys.disabled():
        print(f"\n[generic prover property test] seed {seed}, 25 identities: {tally}")
    assert sum(tally.values()) == 25
    assert any(k[0] == "proved" for k in tally)       # the generator reaches every verdict it should
    assert any(k[1] == "refuted" for k in tally)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 10))
def test_random_identities_with_mixed_ranges_long(seed, capsys):
    tally = _run(seed, 50)
    with capsys.disabled():
        print(f"\n[generic prover property test] seed {seed}, 50 identities: {tally}")
    assert sum(tally.values()) == 50


def test_min_sizes_are_the_premise_of_the_generic_statements():
    assert MIN_SIZE == {N: 2, D: 1, G.M: 1}


def test_the_property_test_catches_the_unranged_contraction(monkeypatch):
    # the planted bug: contract every delta whatever the range (the rule before ranges were tracked)
    import theorems._id_generic_nf as nf
    monkeypatch.setattr(nf, "in_range", lambda x, hi, ranges=None: True)
    with pytest.raises(AssertionError):
        _run(0, 25)
    assert is_zero(AUDIT[0][1])  # and the auditor's first expression is "proved" again
