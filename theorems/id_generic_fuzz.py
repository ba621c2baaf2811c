r"""Random identities with mixed index ranges, judged by exact evaluation: a soundness test of the prover.

:func:`run` builds random expressions of token, output and concrete indices (deltas between any of
them, sums of both lengths, softmax weights, vectors and a matrix), turns each into an identity (the
expression minus its *unranged* contraction, minus itself renamed, or minus another random
expression), asks :func:`theorems.id_generic_proofs.prove_parts` for a verdict and evaluates the
identity exactly at several concrete sizes: ``proved`` must hold at every size tried, ``disproved``
must fail at some size (at the disproof's own family point or a random one). An unsound verdict is
an ``AssertionError``. Used by the tests and by the checker mutants (:mod:`proofs_check.mutation.checker_mutants`).
"""
from __future__ import annotations

import itertools
import random

import sympy as sp

from . import id_generic_model as G
from .id_generic_nf import D, N
from .id_generic_proofs import FAMILIES, prove_parts

dl = sp.KroneckerDelta

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
    e = G.expand_finite(sp.sympify(expr).xreplace({N: n, D: d}).xreplace(free))
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


def run(seed: int, count: int) -> dict:
    """``count`` random identities from ``seed``: a tally of (verdict, refuted or not); AssertionError if unsound."""
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
