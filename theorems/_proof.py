r"""Deciding $\mathrm{lhs}-\mathrm{rhs}=0$ exactly, and saying so honestly when we cannot.

:func:`prove_zero` is the one decision procedure behind every identity:

1. rewrite the named functions (``softplus``, ``sigmoid``) in terms of ``exp``;
2. split exponentials of sums, then replace each $e^{a_i}$ by a fresh positive
   symbol $E_i$. Every expression of the value-softmax model is then a rational
   function of the $E_i$ and the other symbols, and ``cancel`` decides whether it
   is identically zero: an exact proof (method ``exact-rational``);
3. if transcendental atoms remain, try ``simplify`` (method ``simplify``);
4. if SymPy still cannot decide, evaluate at random rational points with 50
   digits. Agreement to 1e-40 is reported as ``numeric`` (a spot check, never
   called a proof); a clear non-zero value is a ``disproved`` result and carries
   the counterexample point. "simplify did not return 0" alone is never read as
   a disproof.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import sympy as sp

from ._functions import sigmoid, softplus

#: Spot checks run at this many significant digits.
SPOT_DIGITS = 50
#: |value| below this at every spot counts as numerically zero (10 digits of margin).
SPOT_ZERO = sp.Float(10) ** -40


@dataclass(frozen=True)
class ProofResult:
    """Outcome of :func:`prove_zero`.

    ``status`` is ``proved`` (exact), ``numeric`` (50-digit spot check only),
    ``disproved`` (a counterexample in ``counterexample``) or ``undecided``.
    """

    status: str
    method: str
    detail: str = ""
    counterexample: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.status in ("proved", "numeric")


def _entries(expr):
    if isinstance(expr, sp.MatrixBase):
        return list(expr)
    if isinstance(expr, (list, tuple)):
        out = []
        for e in expr:
            out.extend(_entries(e))
        return out
    return [sp.sympify(expr)]


def _expand_named(e):
    """Replace ``softplus``/``sigmoid`` by their exp forms, touching nothing else.

    ``Expr.rewrite(exp)`` would also turn ``w**2`` into ``exp(2*log(w))``, which
    hides rational structure from the exact test.
    """
    if not e.has(softplus, sigmoid):
        return e
    return e.replace(softplus, lambda x: sp.log(1 + sp.exp(x))).replace(
        sigmoid, lambda x: 1 / (1 + sp.exp(-x)))


def _exp_to_rational(e):
    """Turn ``e`` into a rational function of fresh positive symbols; return (expr, mapping).

    $e^{c\\,x}$ (x a symbol, c rational) becomes $E_x^c$. Any other exponential
    $e^{q}$ has its argument canonicalized (recursively, then ``cancel``) and is
    replaced by one opaque positive symbol per distinct argument. If the result
    cancels to 0 with the opaque symbols free, it is 0 for their true values too,
    so the proof is sound; the converse is not claimed.
    """
    e = _expand_named(e)
    mapping: dict = {}
    opaque: dict = {}

    def conv(x):
        if x.is_Atom:
            return x
        if isinstance(x, sp.exp):
            arg = sp.expand(conv(x.args[0]))
            factor = sp.Integer(1)
            rest_terms = []
            for term in sp.Add.make_args(arg):
                coeff, rest = term.as_coeff_Mul()
                if rest.is_Symbol and coeff.is_Rational and rest in mapping.values():
                    rest_terms.append(term)
                elif rest.is_Symbol and coeff.is_Rational:
                    if rest not in mapping:
                        mapping[rest] = sp.Symbol(f"E_{rest.name}", positive=True)
                    factor *= mapping[rest] ** coeff
                elif term.is_Rational:
                    factor *= sp.exp(term)
                else:
                    rest_terms.append(term)
            if rest_terms:
                key = sp.cancel(sp.together(sp.Add(*rest_terms)))
                if key not in opaque:
                    opaque[key] = sp.Symbol(f"Q_{len(opaque)}", positive=True)
                factor *= opaque[key]
            return factor
        return x.func(*[conv(arg) for arg in x.args])

    return conv(e), mapping


def _sample_point(symbols, rng):
    point = {}
    for s in symbols:
        lo, hi = (1, 20) if s.is_positive else (-20, 20)
        num = rng.randint(lo, hi) or 1
        point[s] = sp.Rational(num, rng.randint(7, 13))
    return point


def prove_zero(expr, *, spot_points: int = 3, seed: int = 0, try_simplify: bool = True) -> ProofResult:
    """Decide whether ``expr`` (a scalar, matrix or list of them) is identically zero.

    See the module docstring for the procedure. ``seed`` fixes the spot-check points.
    """
    entries = _entries(expr)
    remaining = []
    for e in entries:
        r, _ = _exp_to_rational(e)
        if r.atoms(sp.Function) - r.atoms(sp.Abs, sp.sign, sp.Max, sp.Heaviside):
            remaining.append(e)
            continue
        if r.atoms(sp.Abs, sp.sign, sp.Max, sp.Heaviside):
            remaining.append(e)
            continue
        if sp.cancel(sp.together(r)) != 0:
            return _spot(entries, spot_points, seed, note="the exact rational form is not zero")
    if not remaining:
        return ProofResult("proved", "exact-rational",
                           "every entry is a rational function of exp(a_i) and the other symbols; cancel() gives 0")
    if try_simplify and all(sp.simplify(e) == 0 for e in remaining):
        return ProofResult("proved", "simplify", "SymPy simplify() returns 0 for every entry")
    return _spot(entries, spot_points, seed, note="SymPy could not decide exactly")


def _spot(entries, spot_points, seed, note) -> ProofResult:
    rng = random.Random(seed)
    symbols = sorted(set().union(*[e.free_symbols for e in entries]), key=lambda s: s.name)
    worst = sp.Float(0)
    for _ in range(spot_points):
        point = _sample_point(symbols, rng)
        for e in entries:
            val = sp.N(_expand_named(e.xreplace(point)), SPOT_DIGITS)
            mag = abs(val)
            if not mag.is_number:
                return ProofResult("undecided", "spot-check", f"{note}; non-numeric value {val}")
            if mag > SPOT_ZERO:
                cex = {str(k): str(v) for k, v in point.items()}
                return ProofResult(
                    "disproved", "spot-check",
                    f"{note}; at a rational point the difference is {sp.N(val, 8)}", cex,
                )
            worst = max(worst, mag)
    return ProofResult(
        "numeric", "spot-check",
        f"{note}; {SPOT_DIGITS}-digit evaluation at {spot_points} random rational points, max |diff| = {sp.N(worst, 3)}",
    )
