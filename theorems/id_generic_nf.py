r"""Index normal form: deciding identities between index sums of *symbolic* length.

A size-generic statement of this package is an expression built from ``Indexed``
quantities ($a_i$, $V_{kj}$, $w_k$, ...), finite sums ``Sum(body, (i, 1, n))`` whose
upper limit is a symbol ($n$ tokens, $d$ outputs, $m$ design rows), Kronecker deltas
(what SymPy's ``diff`` of ``a[l]`` by ``a[m]`` produces), rational numbers, and
function applications ($e^x$, softplus, sigmoid, an undefined generator $h$ and its
derivative). :func:`normal_form` rewrites such an expression into a sum of *terms*

.. math:: c\,\sum_{b_1,\dots,b_r}\ \prod_f f(b,\text{free})^{e_f},

$c\in\mathbb Q$, $e_f\in\mathbb Z$, by rules that preserve the value for every
size $n\ge2$, $d\ge1$, $m\ge1$ (:data:`MIN_SIZE`) and every value of the free indices in their ranges.

**Ranges.** Every index carries its range. A bound index carries the upper limit of its sum
(:class:`BoundIndex`); a free index gets its range from the ``ranges`` argument (``{i: N, k: D}``:
$i\in1..n$, $k\in1..d$), and a free index missing there has *no* known range; a concrete index
is a number or an expression in the sizes ($3$, $n+1$). An index $x$ provably lies in $1..R$
when its range is $R$ itself, or when it is concrete and $1\le x\le R$ for every size from
:data:`MIN_SIZE` on (:func:`in_range`). Nothing else is assumed: $3\le n$, $k\le n$ for an output
index $k$, or $j\le d$ for a bound token index $j$ are not provable, so such deltas stay.

The rules:

1. **expansion**: products of sums become one sum over fresh bound indices
   ($\sum_iA_i\sum_jB_j=\sum_{i,j}A_iB_j$); positive integer powers are multiplied out;
2. **delta elimination**: $\sum_{b=1}^R\delta_{bx}\,T(b)=T(x)$ for a bound $b$ *only when $x$
   provably lies in* $1..R$ (see *ranges* below); the term is $0$ when $x$ provably lies outside
   ($\sum_{b\le n}\delta_{b,n+1}=0$); otherwise the delta stays and so does the term (the
   identity is then at best ``undecided``). Between two free indices,
   $\delta_{xy}T(x,y)=\delta_{xy}T(x,x)$ (true whatever their ranges);
3. **re-summation**: a bound index that no factor mentions contributes its range
   ($\sum_{b=1}^n1=n$); a bound index whose factors mention no other bound index is
   summed into one factor $\sum_b\prod f(b)$ (an *atom*), so that the normalizer
   $Z=\sum_le^{a_l}$ written anywhere is the same atom and $\sum_ie^{a_i}Z^{-1}=1$;
4. **atoms**: every other node is an atom; the arguments of functions and the bases of
   negative or fractional powers are normalized first, so equal atoms are equal
   expressions; powers of equal atoms add up ($Z\cdot Z^{-2}=Z^{-1}$), $e^{x+y}=e^xe^y$;
5. **canonical naming**: bound indices are renamed canonically (signature ordering,
   then the lexicographically least permutation among ties); equal terms are collected.

Every rule is an equality, so a normal form with no terms is a **proof** that the
expression vanishes for every size (and every value of its symbols where it is
defined). A non-empty normal form is *not* a disproof (the rules are not complete);
:func:`family_value` then evaluates the normal form exactly on a *family of points*
indexed by $n$ and $d$, which can disprove a statement for every size at once (see
:mod:`theorems.id_generic_proofs`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

#: Upper limits of sums, one per index type: tokens, outputs, rows of a design matrix.
N, D, M = (sp.Symbol(s, integer=True, positive=True) for s in ("n", "d", "m"))
RANGES = (N, D, M)
#: The sizes every generic statement is made for (n >= 2 tokens, d >= 1 outputs, m >= 1 rows):
#: a concrete index c lies in 1..R for every size iff 1 <= c <= MIN_SIZE[R] (for a number c).
MIN_SIZE = {N: 2, D: 1, M: 1}


class BoundIndex(sp.Dummy):
    """A summation index that carries its range (``.range``, one of :data:`RANGES`)."""

    def __new__(cls, name, hi):
        obj = super().__new__(cls, name, integer=True, positive=True)
        obj.range = hi
        return obj


def _range_of(x, ranges):
    """The range symbol of the index ``x`` (a bound index, or a free one declared in ``ranges``), else None."""
    if isinstance(x, BoundIndex):
        return x.range
    return ranges.get(x)


def _all_sizes_nonneg(p) -> bool:
    """Whether the polynomial ``p`` in the sizes is >= 0 for every size from :data:`MIN_SIZE` on."""
    nus = {r: sp.Dummy("nu", nonnegative=True) for r in RANGES}
    q = sp.expand(sp.sympify(p).xreplace({r: nus[r] + MIN_SIZE[r] for r in RANGES}))
    gens = list(nus.values())
    if q.free_symbols - set(gens) or not q.is_polynomial(*gens):
        return False
    coeffs = sp.Poly(q, *gens).coeffs() if q.free_symbols else [q]
    return all(c.is_nonnegative for c in coeffs)


def in_range(x, hi, ranges=None):
    """True if the index ``x`` provably lies in ``1..hi`` for every size and index value, False if provably not,
    None if neither is provable (the range of ``x`` is unknown or different, or the sizes decide it)."""
    ranges = ranges or {}
    x = sp.sympify(x)
    rx = _range_of(x, ranges) if x.is_Symbol else None
    if rx is not None:
        return True if rx == hi else None
    if x.free_symbols - set(RANGES):
        return None  # an index of unknown range, or an expression in indices
    if _all_sizes_nonneg(x - 1) and _all_sizes_nonneg(hi - x):
        return True
    if _all_sizes_nonneg(-x) or _all_sizes_nonneg(x - hi - 1):  # x <= 0 or x >= hi + 1 (integers)
        return False
    return None


class NotNormalizable(Exception):
    """The expression has a construct the normal form does not handle (reported as ``undecided``)."""


@dataclass(frozen=True)
class Term:
    """$c\\sum_{\\text{bound}}\\prod_f f^{e_f}$: ``bound`` is a tuple of (index Dummy, range)."""

    coeff: sp.Rational
    bound: tuple
    factors: tuple  # ((atom, exponent), ...)


def _fresh(hi) -> BoundIndex:
    return BoundIndex("b", hi)


def _rename(t: Term, mapping: dict) -> Term:
    if not mapping:
        return t
    return Term(t.coeff, tuple((mapping.get(b, b), hi) for b, hi in t.bound),
                tuple((f.xreplace(mapping), e) for f, e in t.factors))


def _refresh(t: Term) -> Term:
    return _rename(t, {b: _fresh(hi) for b, hi in t.bound})


def _mul(t1: Term, t2: Term) -> Term:
    t2 = _refresh(t2)
    return Term(t1.coeff * t2.coeff, t1.bound + t2.bound, t1.factors + t2.factors)


# ---- keys ---------------------------------------------------------------------------------------
_KEY_MEMO: dict = {}


def atom_key(atom) -> str:
    """A string equal for equal atoms up to the names of their bound (``Sum``) variables."""
    hit = _KEY_MEMO.get(atom)
    if hit is not None:
        return hit

    def canon(e, depth):
        if e.is_Atom:
            return e
        if isinstance(e, sp.Sum):
            body, sub = e.function, {}
            lims = []
            for j, (v, lo, hi) in enumerate(e.limits):
                ph = sp.Symbol(f"_#{depth}.{j}", integer=True, positive=True)
                sub[v] = ph
                lims.append((ph, lo, hi))
            return sp.Sum(canon(body.xreplace(sub), depth + 1), *lims)
        return e.func(*[canon(x, depth) for x in e.args])

    out = sp.srepr(canon(atom, 0)) if atom.has(sp.Sum) else sp.srepr(atom)
    if len(_KEY_MEMO) > 200_000:
        _KEY_MEMO.clear()
    _KEY_MEMO[atom] = out
    return out


# ---- conversion to terms ---------------------------------------------------------------------
def _terms(e, R: dict) -> list[Term]:
    if e.is_Rational:
        return [] if e == 0 else [Term(e, (), ())]
    if e.is_Add:
        return [t for x in e.args for t in _terms(x, R)]
    if e.is_Mul:
        out = [Term(sp.Integer(1), (), ())]
        for x in e.args:
            xs = _terms(x, R)
            out = [_mul(a, b) for a in out for b in xs]
        return out
    if e.is_Pow:
        base, ex = e.args
        if ex.is_Integer and ex > 0 and (base.is_Add or base.is_Mul or isinstance(base, sp.Sum)):
            bs = _terms(base, R)
            out = [Term(sp.Integer(1), (), ())]
            for _ in range(int(ex)):
                out = [_mul(a, b) for a in out for b in bs]
            return out
        if ex.is_Integer:
            nf = normal_form(base, R)
            if len(nf) == 1 and not nf[0].bound:
                t = nf[0]
                return [Term(t.coeff ** ex, (), tuple((f, k * ex) for f, k in t.factors))]
            return [Term(sp.Integer(1), (), ((rebuild(nf), ex),))]
        return [Term(sp.Integer(1), (), ((sp.Pow(rebuild(normal_form(base, R)), ex), 1),))]
    if isinstance(e, sp.Sum):
        # rename every summation variable to a fresh BoundIndex first, so that the body (and any atom
        # normalized inside it) sees each index with its range; an inner sum rebinding the same name is
        # renamed along and keeps shadowing the outer one
        body, bound = e.function, []
        for v, lo, hi in e.limits:
            if lo != 1:
                raise NotNormalizable(f"sum from {lo}: only sums from 1 are handled")
            if hi.is_Integer:  # a concrete length: expand
                body = sp.Add(*[body.xreplace({v: sp.Integer(k)}) for k in range(1, int(hi) + 1)])
                continue
            if hi not in RANGES:
                raise NotNormalizable(f"sum up to {hi}: expected one of {RANGES}")
            b = _fresh(hi)
            body = body.xreplace({v: b})
            bound.append((b, hi))
        return [Term(t.coeff, t.bound + tuple(bound), t.factors) for t in _terms(body, R)]
    if isinstance(e, sp.exp):
        nf = normal_form(e.args[0], R)
        facs = []
        for t in nf:
            if not t.bound and t.coeff.is_Integer and len(t.factors) == 1 and t.factors[0][1] == 1:
                facs.append((sp.exp(t.factors[0][0]), int(t.coeff)))
            else:
                facs.append((sp.exp(rebuild([t])), 1))
        return [Term(sp.Integer(1), (), tuple(facs))]
    if isinstance(e, (sp.Derivative, sp.Subs, sp.KroneckerDelta, sp.Indexed)) or e.is_Symbol or e.is_number:
        return [Term(sp.Integer(1), (), ((e, 1),))]
    if isinstance(e, sp.Function):
        return [Term(sp.Integer(1), (), ((e.func(*[rebuild(normal_form(x, R)) for x in e.args]), 1),))]
    raise NotNormalizable(f"unsupported node {type(e).__name__}")


# ---- simplification of one term ----------------------------------------------------------------
def _eliminate_deltas(t: Term, R: dict) -> Term | None:
    """Contract every delta that a bound index can absorb soundly; ``None`` if a delta is provably 0."""
    kept = []
    while True:
        for pos, (f, _k) in enumerate(t.factors):  # noqa: B007 (pos and f are used after the break)
            if isinstance(f, sp.KroneckerDelta):
                break
        else:
            return Term(t.coeff, t.bound, t.factors + tuple((dl, 1) for dl in kept))
        x, y = f.args
        rest = t.factors[:pos] + t.factors[pos + 1:]
        bound = dict(t.bound)
        if x in bound or y in bound:
            # sum_{old <= R} delta(old, new) T(old) = T(new) iff new lies in 1..R; = 0 iff new lies outside
            choices = [(x, y)] * (x in bound) + [(y, x)] * (y in bound)
            verdicts = [(old, new, in_range(new, bound[old], R)) for old, new in choices]
            if any(v is False for _, _, v in verdicts):
                return None
            ok = [(old, new) for old, new, v in verdicts if v]
            if not ok:  # not provably in range: the delta and its sum stay
                t = Term(t.coeff, t.bound, rest)
                kept.append(f)
                continue
            old, new = ok[0]
            t = _rename(Term(t.coeff, tuple(bh for bh in t.bound if bh[0] != old), rest), {old: new})
            kept = [dl.xreplace({old: new}) for dl in kept]
            continue
        # two free (or concrete) indices: 0 if one provably lies outside the other's range; otherwise keep the
        # delta once and identify the indices in every other factor (true whatever their ranges)
        for u, v in ((x, y), (y, x)):
            ru = _range_of(u, R) if u.is_Symbol else None
            if ru is not None and in_range(v, ru, R) is False:
                return None
        lo_, hi_ = sorted((x, y), key=sp.default_sort_key)
        if not hi_.is_Symbol:
            lo_, hi_ = hi_, lo_
        if not hi_.is_Symbol:  # two expressions: nothing to identify
            t = Term(t.coeff, t.bound, rest)
            kept.append(f)
            continue
        t = _rename(Term(t.coeff, t.bound, rest), {hi_: lo_})
        kept = [dl.xreplace({hi_: lo_}) for dl in kept] + [sp.KroneckerDelta(lo_, hi_)]


def _merge(t: Term) -> Term | None:
    coeff, merged, atoms = t.coeff, {}, {}
    for f, k in t.factors:
        if f.is_Rational:
            if f == 0:
                if k > 0:
                    return None
                _raise_zero_division()
            coeff *= f ** k
            continue
        key = atom_key(f)
        merged[key] = merged.get(key, 0) + k
        atoms.setdefault(key, f)
    facs = []
    for key, k in merged.items():
        if k == 0:
            continue
        f = atoms[key]
        if isinstance(f, sp.KroneckerDelta):
            k = 1  # delta**k == delta
        facs.append((f, k))
    return Term(coeff, t.bound, tuple(facs))


def _raise_zero_division():
    raise ZeroDivisionError("division by zero in a generic expression")


def _resum(t: Term) -> Term:
    changed = True
    while changed:
        changed = False
        bset = {b for b, _ in t.bound}
        for b, hi in t.bound:
            mine = [(f, k) for f, k in t.factors if f.has(b)]
            others = [(f, k) for f, k in t.factors if not f.has(b)]
            if any((f.free_symbols & bset) - {b} for f, _ in mine):
                continue
            if mine and any(isinstance(f, sp.KroneckerDelta) for f, _ in mine):
                continue
            nb = tuple(bh for bh in t.bound if bh[0] != b)
            if not mine:
                t = Term(t.coeff, nb, tuple(others) + ((hi, 1),))
            else:
                v = _fresh(hi)
                body = sp.Mul(*[f ** k for f, k in mine]).xreplace({b: v})
                t = Term(t.coeff, nb, tuple(others) + ((sp.Sum(body, (v, 1, hi)), 1),))
            changed = True
            break
    return t


def _simplify_term(t: Term, R: dict) -> Term | None:
    t = _eliminate_deltas(t, R)
    if t is None:
        return None
    t = _merge(t)
    if t is None:
        return None
    t = _resum(t)
    return _merge(t)


# ---- canonical form of a term ------------------------------------------------------------------
_STAR = sp.Symbol("_star", integer=True, positive=True)
_OTHER = sp.Symbol("_other", integer=True, positive=True)


def _canonical(t: Term):
    """(key, term with canonically ordered bound indices)."""
    if not t.bound:
        key = (tuple(), tuple(sorted((atom_key(f), k) for f, k in t.factors)))
        return key, t
    bset = [b for b, _ in t.bound]
    sig = {}
    for b, hi in t.bound:
        sub = {c: _OTHER for c in bset if c != b}
        sub[b] = _STAR
        sig[b] = (str(hi), tuple(sorted((atom_key(f.xreplace(sub)), k) for f, k in t.factors if f.has(b))))
    order = sorted(t.bound, key=lambda bh: sig[bh[0]])
    groups = [list(g) for _, g in itertools.groupby(order, key=lambda bh: sig[bh[0]])]
    best = None
    for choice in itertools.product(*[itertools.permutations(g) for g in groups]):
        seq = [bh for g in choice for bh in g]
        names = {b: sp.Symbol(f"_i{j}", integer=True, positive=True) for j, (b, _) in enumerate(seq)}
        key = (tuple(str(hi) for _, hi in seq),
               tuple(sorted((atom_key(f.xreplace(names)), k) for f, k in t.factors)))
        if best is None or key < best[0]:
            best = (key, seq)
        if len(groups) == len(t.bound):
            break
    key, seq = best
    return key, Term(t.coeff, tuple(seq), t.factors)


def normal_form(expr, ranges: dict | None = None) -> list[Term]:
    """The canonical list of non-zero terms of ``expr`` (empty: ``expr`` is identically 0).

    ``ranges`` maps free indices to their range (one of :data:`RANGES`); undeclared ones have none.
    """
    R = _check_ranges(ranges)
    raw = _terms(sp.sympify(expr), R)
    acc: dict = {}
    for t in raw:
        t = _simplify_term(t, R)
        if t is None or t.coeff == 0:
            continue
        key, t = _canonical(t)
        if key in acc:
            old = acc[key]
            acc[key] = Term(old.coeff + t.coeff, old.bound, old.factors)
        else:
            acc[key] = t
    return [acc[k] for k in sorted(acc) if acc[k].coeff != 0]


def rebuild(terms: list[Term]) -> sp.Expr:
    """A SymPy expression equal to the sum of ``terms`` (bound indices as ``Sum`` over fresh dummies)."""
    out = []
    for t in terms:
        t = _refresh(t)
        body = sp.Mul(*[f ** k for f, k in t.factors])
        if t.bound:
            body = sp.Sum(body, *[(b, 1, hi) for b, hi in t.bound])
        out.append(t.coeff * body)
    return sp.Add(*out)


def is_zero(expr, ranges: dict | None = None) -> bool:
    """Whether :func:`normal_form` proves ``expr`` identically zero for every size (free indices in ``ranges``)."""
    return not normal_form(expr, ranges)


def _check_ranges(ranges) -> dict:
    R = dict(ranges or {})
    for x, hi in R.items():
        if not (isinstance(x, sp.Symbol) and hi in RANGES):
            raise ValueError(f"ranges: {x!r} -> {hi!r}; expected an index symbol -> one of {RANGES}")
    return R


# ---- evaluation on a family of points ----------------------------------------------------------
class Ambiguous(Exception):
    """The family cannot evaluate an expression (two indices of the open class compared)."""


@dataclass(frozen=True)
class Family:
    r"""A point for every size: explicit positions $1..P$ per index type plus one *open* class.

    ``values[name]`` maps a tuple of index classes (an ``int`` position, or ``None`` for
    any position beyond ``explicit[range]``) to a number; a missing key falls back to
    ``default[name]``. ``functions`` substitutes undefined functions (``h`` by ``exp``);
    ``index_types[name]`` gives the range of each index (an explicit position must lie within
    ``explicit`` of its range).
    Because a value depends on the class of each index only, a sum over an index is the
    sum over the explicit positions plus (range - P) times the open-class value, exactly.
    """

    values: dict
    default: dict
    explicit: dict  # range symbol -> number of explicit positions
    functions: dict
    index_types: dict  # name -> tuple of range symbols, one per index

    def lookup(self, name: str, classes: tuple):
        table = self.values.get(name, {})
        if classes in table:
            return table[classes]
        if name in self.default:
            return self.default[name]
        raise KeyError(f"the family gives no value for {name}{classes}")


_OPEN = {r: sp.Symbol(f"_open_{r}", integer=True, positive=True) for r in RANGES}
_OPEN_INV = {v: k for k, v in _OPEN.items()}


def _expand_sums(e, fam: Family):
    if e.is_Atom:
        return e
    if isinstance(e, sp.Sum):
        body = e.function
        for v, _lo, hi in reversed(e.limits):
            if hi.is_Integer:
                body = sp.Add(*[body.xreplace({v: sp.Integer(k)}) for k in range(1, int(hi) + 1)])
                continue
            p = fam.explicit[hi]
            parts = [body.xreplace({v: sp.Integer(k)}) for k in range(1, p + 1)]
            parts.append((hi - p) * body.xreplace({v: _OPEN[hi]}))
            body = sp.Add(*parts)
        return _expand_sums(body, fam)
    return e.func(*[_expand_sums(x, fam) for x in e.args])


def _index_class(x, top: int):
    if x.is_Integer:
        if not 1 <= int(x) <= top:
            raise Ambiguous(f"index {x} is not an explicit position (1..{top}) of the family")
        return int(x)
    if x in _OPEN_INV:
        return None
    raise Ambiguous(f"index {x} has no class")


def _classes(x, fam: Family) -> tuple:
    types = fam.index_types.get(x.base.label.name)
    if types is None or len(types) != len(x.indices):
        raise KeyError(f"the family gives no index types for {x}")
    return tuple(_index_class(i, fam.explicit[t]) for i, t in zip(x.indices, types))


def _substitute(e, fam: Family):
    def delta(x, y):
        if x == y:
            if x in _OPEN_INV:
                raise Ambiguous("two open-class indices compared")
            return sp.Integer(1)
        if x.is_Integer or y.is_Integer:
            num, other = (x, y) if x.is_Integer else (y, x)
            if other in _OPEN_INV:
                _index_class(num, fam.explicit[_OPEN_INV[other]])
            return sp.Integer(0)
        raise Ambiguous("two open-class indices compared")

    for f, g in fam.functions.items():
        e = e.replace(f, g)
    e = e.doit()  # derivatives of the substituted functions, before the points are put in
    e = e.replace(lambda x: isinstance(x, sp.KroneckerDelta), lambda x: delta(*x.args))
    return e.replace(lambda x: isinstance(x, sp.Indexed),
                     lambda x: fam.lookup(x.base.label.name, _classes(x, fam)))


def family_value(expr, fam: Family, free: dict | None = None, ranges: dict | None = None) -> sp.Expr:
    """The exact value of ``expr`` on the family, a function of the range symbols.

    ``free`` assigns each free index a position (an int within the explicit ones); ``ranges`` are the
    free indices' ranges (as for :func:`normal_form`): a position must lie within the explicit
    positions of its index's range, so that the point is a point of every size the family covers.
    """
    R = _check_ranges(ranges)
    for x, pos in (free or {}).items():
        hi = R.get(x)
        if hi is None and int(pos) != 1:  # position 1 lies in every range; others need the index's range
            raise Ambiguous(f"free index {x} at position {pos}: its range is not declared")
        if hi is not None and not 1 <= int(pos) <= fam.explicit[hi]:
            raise Ambiguous(f"free index {x} at position {pos}: outside the explicit positions 1..{fam.explicit[hi]} "
                            f"of its range {hi}")
    e = rebuild(normal_form(expr, R))  # every bound index is now a fresh dummy: only free ones are replaced
    e = rebuild(normal_form(e.xreplace({k: sp.Integer(v) for k, v in (free or {}).items()}), R))
    return sp.cancel(sp.together(_substitute(_expand_sums(e, fam), fam)))


def _sign(f) -> int | None:
    r"""+1 or -1 if the factor ``f`` has that sign everywhere (SymPy's rules, plus $\pm(e^u-1)$, $u$ of one sign)."""
    if f.is_positive:
        return 1
    if f.is_negative:
        return -1
    if f.is_Pow and f.exp.is_Integer:
        sb = _sign(f.base)
        return None if sb is None else sb ** int(f.exp)
    if f.is_Add and len(f.args) == 2 and -1 in f.args:  # exp(u) - 1 has the sign of u
        e = f - (-1)
        if isinstance(e, sp.exp):
            u = e.args[0]
            return 1 if u.is_positive else -1 if u.is_negative else None
    if f.is_Add and len(f.args) == 2 and 1 in f.args:  # 1 - exp(u) has the sign of -u
        e = 1 - f
        if isinstance(e, sp.exp):
            u = e.args[0]
            return -1 if u.is_positive else 1 if u.is_negative else None
    return None


def nonzero_for_all_sizes(value, minimum: dict | None = None) -> bool:
    r"""A sufficient test that a function of $n,d,m$ is non-zero for every $n\ge2$, $d,m\ge1$ (or ``minimum``).

    Substituting $n=2+\nu$, $d=1+\delta$, $m=1+\mu$ (or the given minimum sizes) with $\nu,\delta,\mu\ge0$: either
    SymPy's sign rules show the value positive (or negative) outright, or numerator and
    denominator are polynomials in $\nu,\delta,\mu$, each with all coefficients of one sign
    and a non-zero constant term, so that neither vanishes anywhere on that range.
    """
    nu, de, mu = sp.symbols("nu delta mu", nonnegative=True)
    lo = {N: 2, D: 1, M: 1, **(minimum or {})}
    shift = {N: nu + lo[N], D: de + lo[D], M: mu + lo[M]}
    shifted = sp.sympify(value).xreplace(shift)
    if shifted.is_positive or shifted.is_negative:  # SymPy's sign rules (products, exp, sums of positives)
        return True
    factored = sp.factor(sp.together(shifted.rewrite(sp.exp)))
    if factored != 0 and all(_sign(f) for f in sp.Mul.make_args(factored)):
        return True
    num, den = sp.fraction(sp.cancel(sp.together(value)))
    for poly in (num, den):
        p = sp.expand(poly.xreplace(shift))
        if p.free_symbols - {nu, de, mu} or not p.is_polynomial(nu, de, mu):
            return False
        coeffs = sp.Poly(p, nu, de, mu).coeffs() if p.free_symbols else [p]
        signs = set()
        for c in coeffs:
            if c.is_positive:
                signs.add(1)
            elif c.is_negative:
                signs.add(-1)
            else:
                return False
        const = p.xreplace({nu: 0, de: 0, mu: 0})
        if len(signs) != 1 or const == 0:
            return False
    return True
