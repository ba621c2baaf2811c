r"""Building blocks of the identity registry: :class:`Identity`, :class:`Case`, helpers.

An *identity* is a statement about the derived gradient flow of
$F(V,a)=\mathcal L(V\varphi(a))$ (or about one of its ingredients) that
``softpolar derive --check`` re-proves for every size $n=2..6$ it applies to,
together with a *negative control*: a deliberately wrong variant (flipped sign,
missing $ss^\top$, unsquared $J$, ...) that the very same check must reject
with status ``disproved`` (a counterexample point, never merely "undecided").

Every check starts from the definitions held by :class:`theorems.SymbolicModel`
(its :meth:`~theorems.SymbolicModel.flow` and
:meth:`~theorems.SymbolicModel.time_derivative`, derived scalar by scalar) and
compares with the structured or claimed form through :func:`theorems.prove_zero`.

This module holds no identities itself; the topic modules ``_id_*.py`` do, and
:mod:`theorems._identities` collects them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, NamedTuple

import sympy as sp

from ._losses import get_loss
from ._model import SymbolicModel
from ._functions import sigmoid, softplus
from ._proof import ProofResult, prove_zero

#: Sizes re-proved by ``softpolar derive --check``.
DEFAULT_NS = (2, 3, 4, 5, 6)

#: Status order for combining the results of several cases of one identity:
#: the combined status is the worst one.
_WORST_FIRST = ("disproved", "undecided", "numeric", "proved")
#: For negative controls the order is reversed: a wrong variant that "holds" is the worst outcome.
_NEG_WORST_FIRST = ("proved", "numeric", "undecided", "disproved")

#: Links whose generator is piecewise ($\max(x,0)$, $|x|$): their flow is proven on
#: the region $a_i>0$, where the generator is smooth (declared with ``positive_logits``).
PIECEWISE_LINKS = frozenset({"relu-norm", "l1-norm"})


class Case(NamedTuple):
    """One concrete instance of an identity: loss, link and sizes ``n`` (tokens), ``d`` (output)."""

    loss: str
    link: str
    n: int
    d: int


def d_schedule(loss: str, n: int, link: str = "softmax") -> tuple[int, ...]:
    """Output dimensions ``d`` proven at ``n`` tokens for identities of the full $(V,a)$ flow.

    ``d = 1, 2, 3`` for ``n <= 4`` and ``d = 1, 2`` for ``n = 5, 6`` (the brief allows a
    smaller ``d`` at large ``n``: the $d=3$ cases at $n=5,6$ alone would double the
    cost of ``softpolar derive --check``). ``kl`` starts at ``d = 2``: with one class
    the cross-entropy is identically 0, a trivial case in which the negative
    controls cannot fail. ``softpolar derive --n N --d D`` proves any other size on
    demand.
    """
    ds = (1, 2, 3) if n <= 4 else (1, 2)
    return tuple(d for d in ds if d >= 2) if loss == "kl" else ds


def link_schedule(loss: str, n: int, link: str = "softmax") -> tuple[int, ...]:
    """Output dimensions for identities that range over *every* link.

    softmax: :func:`d_schedule`. Other links (the paper compares them under the
    logistic and square losses only): ``d = 1, 2`` for ``n <= 4`` and ``d = 1``
    for ``n = 5, 6``; with the kl loss ``d = 2`` for ``n <= 3`` only. This keeps
    ``softpolar derive --check`` within its time budget; ``softpolar derive``
    re-proves any requested (loss, link, n, d) on demand.
    """
    if link == "softmax":
        return d_schedule(loss, n)
    if loss == "kl":
        return (2,) if n <= 3 else ()
    return (1, 2) if n <= 4 else (1,)


@lru_cache(maxsize=256)
def model(loss: str, link: str, n: int, d: int, design: str = "identity") -> SymbolicModel:
    """A cached :class:`SymbolicModel` (its derived flow is cached inside it).

    Piecewise links get ``positive_logits=True`` (see :data:`PIECEWISE_LINKS`).
    The cache is per process, so each worker of :func:`run_identities` derives a
    flow at most once per (loss, link, n, d).
    """
    return SymbolicModel(loss, link, n, d, design=design, positive_logits=link in PIECEWISE_LINKS)


def derived_grad(m: SymbolicModel) -> sp.Matrix:
    r"""$\nabla\mathcal L(\beta)$ differentiated component by component at free symbols.

    The derivative is taken at free symbols $b_k$ and then evaluated at $\beta=V\varphi(a)$.
    """
    b = sp.Matrix([sp.Symbol(f"b_{k + 1}", real=True) for k in range(m.d)])
    g = get_loss(m.loss).gradient(b, m.target, m.X)
    return g.xreplace(dict(zip(b, m.beta)))


@lru_cache(maxsize=256)
def structured(loss: str, link: str, n: int, d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """:meth:`SymbolicModel.flow_structured` of the cached :func:`model` (cached: it is used twice per case)."""
    return model(loss, link, n, d).flow_structured()


@lru_cache(maxsize=256)
def grad(loss: str, link: str, n: int, d: int, design: str = "identity") -> sp.Matrix:
    """:func:`derived_grad` of the cached :func:`model` (cached too)."""
    return derived_grad(model(loss, link, n, d, design))


def dag_symbols(exprs) -> set:
    """Free symbols of ``exprs``, visiting each shared sub-expression once (``free_symbols`` does not)."""
    seen, out, stack = set(), set(), list(exprs)
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if e.is_Symbol:
            out.add(e)
        elif not e.is_Atom:
            stack.extend(e.args)
    return out


def placeholders(prefix: str, size: int) -> sp.Matrix:
    """A column of plain symbols ``prefix_1..prefix_size``.

    Claimed right-hand sides are built on placeholders (cheap matrix products of
    small polynomials) and the model's expressions are substituted afterwards with
    ``xreplace``; building them directly multiplies large expressions and is slow.
    """
    return sp.Matrix([sp.Symbol(f"_{prefix}_{i + 1}", real=True) for i in range(size)])


def dot(x, y):
    """$\\langle x,y\\rangle$ of two equal-length sequences."""
    return sp.Add(*[xi * yi for xi, yi in zip(x, y)])


class _Rationalizer:
    r"""Turn model expressions into rational functions of fresh positive symbols (memoized).

    The same reduction as :func:`theorems.prove_zero` (``exact-rational``), done once
    per distinct sub-expression (one instance per process, shared by every check),
    which makes it fast on the large derived flows:

    * $e^{c\,x}$ with $x$ an original symbol and $c$ rational becomes $E_x^{c}$;
    * any other $e^{q}$ becomes an opaque positive symbol $Q$ per canonical ``q``
      (the converted argument reduced to lowest terms), with $e^{-q}=1/Q$;
    * ``log(q)`` becomes an opaque real symbol $L$ per canonical ``q``;
    * ``sigmoid(x)`` $=1/(1+e^{-x})$, ``softplus(x)`` $=\log(1+e^{x})$.

    A converted expression that vanishes identically is 0 for the true values of the
    opaque symbols too (sound). The converse is not claimed, so a non-zero residue is
    never read as a disproof: :meth:`value` evaluates at a genuine point instead (each
    opaque symbol at the value of its definition).
    """

    def __init__(self):
        self.E: dict = {}        # original symbol -> E symbol
        self._E_inv: dict = {}   # E symbol -> original symbol
        self.opaque: dict = {}   # opaque symbol -> (kind, canonical argument expression)
        self._keys: dict = {}
        self._memo: dict = {}
        self._canon: dict = {}

    def conv(self, x):
        if x.is_Atom:
            return x
        hit = self._memo.get(x)
        if hit is not None:
            return hit
        if isinstance(x, sp.exp):
            r = self._exp(self.conv(x.args[0]))
        elif isinstance(x, sigmoid):
            r = 1 / (1 + self._exp(-self.conv(x.args[0])))
        elif isinstance(x, softplus):
            r = self._opaque("log", 1 + self._exp(self.conv(x.args[0])))
        elif isinstance(x, sp.log):
            r = self._opaque("log", self.conv(x.args[0]))
        else:
            r = x.func(*[self.conv(a) for a in x.args])
        self._memo[x] = r
        return r

    def _exp(self, arg):
        factor, rest = sp.Integer(1), []
        for term in sp.Add.make_args(sp.expand(arg)):
            coeff, base = term.as_coeff_Mul()
            if base.is_Symbol and coeff.is_Rational and base not in self.opaque and base not in self._E_inv:
                if base not in self.E:
                    self.E[base] = e = sp.Symbol(f"E_{base.name}", positive=True)
                    self._E_inv[e] = base
                factor *= self.E[base] ** coeff
            elif term.is_Rational:
                factor *= sp.exp(term)
            else:
                rest.append(term)
        if rest:
            factor *= self._opaque("exp", sp.Add(*rest))
        return factor

    def _canonical(self, arg):
        """(lowest-terms form of ``arg``, sign) with a positive leading coefficient; cached."""
        hit = self._canon.get(arg)
        if hit is not None:
            return hit
        try:
            R, [(num, den)] = _fractions([arg])
            dpoly = R.one
            for f, k in den.items():
                dpoly = dpoly * f ** k
            num, dpoly = num.cancel(dpoly)
            sign = 1
            if num and num.LC < 0:
                num, sign = -num, -1
            out = (num.as_expr() / dpoly.as_expr(), sign)
        except _NotRational:
            key = sp.cancel(sp.together(arg))
            out = (sp.cancel(-key), -1) if key.could_extract_minus_sign() else (key, 1)
        self._canon[arg] = out
        return out

    def _opaque(self, kind, arg):
        key, sign = self._canonical(arg)
        if kind == "log" and sign < 0:
            key, sign = -key, 1  # logs are not paired with their negatives
        sym = self._keys.get((kind, key))
        if sym is None:
            name = f"Q_{len(self._keys)}" if kind == "exp" else f"L_{len(self._keys)}"
            sym = sp.Symbol(name, positive=True) if kind == "exp" else sp.Symbol(name, real=True)
            self._keys[(kind, key)] = sym
            self.opaque[sym] = (kind, key)
        return sym if sign == 1 else 1 / sym

    def value(self, sym, cache: dict, pt: dict, rng, digits: int):
        """Numeric value of ``sym`` at a genuine point; originals get random rationals on first use."""
        v = cache.get(sym)
        if v is not None:
            return v
        if sym in self._E_inv:
            v = sp.exp(self.value(self._E_inv[sym], cache, pt, rng, digits))
        elif sym in self.opaque:
            kind, key = self.opaque[sym]
            sub = {t: self.value(t, cache, pt, rng, digits) for t in key.free_symbols}
            x = sp.N(key.xreplace(sub), digits)
            v = sp.exp(x) if kind == "exp" else sp.log(x)
        else:
            if sym.is_positive:
                q = sp.Rational(rng.randint(1, 30), rng.randint(7, 13))
            else:
                q = sp.Rational(rng.choice([-1, 1]) * rng.randint(1, 30), rng.randint(7, 13))
            pt[sym] = q
            v = sp.Float(q, digits)
        cache[sym] = v
        return v


#: One rationalizer per process: its memo tables are shared by every check in a worker.
_RZ = _Rationalizer()


class _NotRational(Exception):
    """The expression has a node that is not a rational operation (a function, a Float, ...)."""


def _fractions(entries):
    r"""Each entry as ``(numerator, {factor: multiplicity})`` over $\mathbb Q[\text{symbols}]$.

    See :func:`exact_zero`.
    """
    from sympy.polys.domains import QQ
    from sympy.polys.rings import ring

    syms = sorted(dag_symbols(entries), key=lambda t: t.name)
    R, *gens = ring(syms or [sp.Dummy("unused")], QQ)
    gmap = dict(zip(syms, gens))
    memo: dict = {}

    def conv(e):
        hit = memo.get(e)
        if hit is not None:
            return hit
        if e.is_Symbol:
            out = (gmap[e], {})
        elif e.is_Rational:
            out = (R(QQ(int(e.p), int(e.q))), {})
        elif e.is_Add:
            parts = [conv(t) for t in e.args]
            lcm: dict = {}
            for _, den in parts:
                for f, k in den.items():
                    lcm[f] = max(lcm.get(f, 0), k)
            num = R.zero
            for pn, den in parts:
                for f, k in lcm.items():
                    if k - den.get(f, 0):
                        pn = pn * f ** (k - den.get(f, 0))
                num += pn
            out = (num, lcm)
        elif e.is_Mul:
            num, den = R.one, {}
            for t in e.args:
                pn, pd = conv(t)
                num = num * pn
                for f, k in pd.items():
                    den[f] = den.get(f, 0) + k
            out = (num, den)
        elif e.is_Pow and e.exp.is_Integer:
            k = int(e.exp)
            pn, pd = conv(e.base)
            if k >= 0:
                out = (pn ** k, {f: m * k for f, m in pd.items()})
            else:
                if not pn:
                    raise ZeroDivisionError(f"division by an expression that is identically 0: {e.base}")
                num = R.one
                for f, m in pd.items():
                    num = num * f ** (-m * k)
                if pn.LC < 0:
                    pn = -pn
                    num = -num if k % 2 else num
                out = (num, {pn: -k})
        else:
            raise _NotRational(type(e).__name__)
        memo[e] = out
        return out

    return R, [conv(e) for e in entries]


def exact_zero(entries) -> bool:
    r"""Whether every entry, a rational function of its symbols, is identically zero.

    Fraction-free and gcd-free: each node becomes ``(numerator, {factor: multiplicity})``
    with polynomials over $\mathbb Q$ (``sympy.polys.rings``); sums bring their
    terms onto the least common multiple of the factor dictionaries, and every
    factor is normalized to a positive leading coefficient. The expression is then
    exactly ``numerator / prod(factor**multiplicity)`` with a non-zero denominator,
    so it vanishes identically iff the numerator polynomial is 0. Much faster than
    ``cancel(together(...))`` on the derived flows (0.1 s instead of 14 s for the
    square-loss flow at n=6, d=3), because no polynomial gcd is computed.

    Raises :class:`_NotRational` if an entry is not built from symbols, rationals,
    ``+``, ``*`` and integer powers.
    """
    entries = [sp.sympify(e) for e in entries]
    if not entries:
        return True
    _, fr = _fractions(entries)
    return all(not num for num, _ in fr)


#: Digits of the evaluation used for disproofs, and the threshold above which a value is non-zero.
EVAL_DIGITS = 60
EVAL_NONZERO = sp.Float(10) ** -30


def decide(expr, *, negative: bool = False, points: int = 3, seed: int = 0) -> ProofResult:
    """Decide ``expr == 0`` (scalar, matrix or list) exactly where possible.

    Positive check (``negative=False``): convert with the process-wide
    :class:`_Rationalizer` and decide the exp-free result with :func:`exact_zero`
    (``exact-rational``; the same criterion as :func:`prove_zero`, computed without
    gcds; entries that are not rational go to :func:`prove_zero`). If that does not
    prove it, evaluate at genuine random points with 60 digits: a value above 1e-30
    is ``disproved`` (with the point); otherwise fall back to :func:`prove_zero` on
    the original expression (simplify, then the 50-digit spot check it reports as
    ``numeric``).

    Negative control (``negative=True``): the point evaluation runs first (it is
    what disproves a wrong variant, and it avoids a costly exact test of a non-zero
    rational function); if every point gives 0 the positive path runs.
    """
    import random

    entries = [sp.sympify(e) for e in (list(expr) if isinstance(expr, (sp.MatrixBase, list, tuple)) else [expr])]
    entries = [x for e in entries for x in (list(e) if isinstance(e, sp.MatrixBase) else [e])]
    rz = _RZ

    def evaluate():
        rng = random.Random(seed)
        for _ in range(points):
            cache, pt = {}, {}
            for e in entries:
                c = rz.conv(e)
                sub = {t: rz.value(t, cache, pt, rng, EVAL_DIGITS) for t in dag_symbols([c])}
                v = sp.N(c.xreplace(sub), EVAL_DIGITS)
                if not v.is_number or v.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                    break  # a pole at this point: try the next one
                if abs(v) > EVAL_NONZERO:
                    return ProofResult(
                        "disproved", "spot-check",
                        f"{EVAL_DIGITS}-digit evaluation at a rational point gives {sp.N(v, 8)}",
                        {str(k): str(x) for k, x in sorted(pt.items(), key=lambda kv: kv[0].name)})
        return None

    if negative:
        res = evaluate()
        if res is not None:
            return res
    conv = [rz.conv(e) for e in entries]
    try:
        if exact_zero(conv):
            return ProofResult("proved", "exact-rational",
                               "every entry is a rational function of exp(a_i) and the other symbols "
                               "(opaque symbols for other exp/log atoms); its numerator polynomial is 0")
    except _NotRational:
        res = prove_zero(conv, try_simplify=False)
        if res.status == "proved":
            return res
    if not negative:
        dis = evaluate()
        if dis is not None:
            return dis
    # simplify() can run for minutes on a large wrong variant; negative controls skip it
    return prove_zero(entries, try_simplify=not negative)


def combine(results: list[tuple[str, ProofResult]], *, negative: bool = False) -> ProofResult:
    """Merge labelled results of several cases into one (the worst status wins).

    For a positive check the order is disproved > undecided > numeric > proved.
    For negative controls (``negative=True``) a wrong variant that holds is the
    worst outcome: proved > numeric > undecided > disproved.
    """
    if not results:
        return ProofResult("undecided", "none", "no applicable case")
    order = _NEG_WORST_FIRST if negative else _WORST_FIRST
    worst_label, worst = min(results, key=lambda lr: order.index(lr[1].status))
    methods = "+".join(sorted({r.method for _, r in results}))
    counts = {}
    for _, r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    detail = f"{len(results)} case(s) ({summary})"
    if worst.status != order[-1]:
        detail += f"; worst case {worst_label}: {worst.detail}"
    return ProofResult(worst.status, methods, detail, dict(worst.counterexample))


CheckFn = Callable[[Case], ProofResult]
GenericFn = Callable[[], ProofResult]


@dataclass(frozen=True)
class Identity:
    r"""One identity of the symbolic layer, with its negative control(s).

    Attributes:
        id: stable identifier (``flow.structured``, ``output.dynamics``, ...).
        title: one line, plain text.
        statement: the claim in LaTeX (math mode body, no ``$``).
        provenance: digest tag(s), e.g. ``"A/D"``; ``A`` = the paper per public reading notes,
            ``D`` = derived for this project (never presented as the paper's statement).
        note: provenance remarks (typos or sign issues in the paper, restrictions).
        losses, links: where it applies.
        n_values: ``None`` for any $n\ge2$, else the allowed $n$ (e.g. ``(2,)``).
        d_values: function ``(loss, n, link='softmax') -> tuple of d`` proven for that loss and
            link at ``n`` (may be empty);
            ``None``: ``d`` does not enter (one case with ``d=1``). An explicit ``d`` passed to
            :meth:`check` is used when it is at least the smallest scheduled one.
        size_free: the statement does not involve $n$ either (checked once, reported at ``n=2``).
        negative: tuples ``(description, fn)``; each ``fn(case)`` must come out ``disproved``.
        generic: optional size-generic proof, and ``generic_note`` saying what it assumes or
            why no generic proof is attempted.
    """

    id: str
    title: str
    statement: str
    provenance: str
    check_case: CheckFn
    negative: tuple[tuple[str, CheckFn], ...]
    losses: tuple[str, ...] = ("logistic", "square", "kl")
    links: tuple[str, ...] = ("softmax",)
    n_values: tuple[int, ...] | None = None
    d_values: Callable[..., tuple[int, ...]] | None = None
    size_free: bool = False
    note: str = ""
    generic: GenericFn | None = None
    generic_note: str = ""
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if not self.negative:
            raise ValueError(f"identity {self.id!r} has no negative control")
        if not self.losses or not self.links:
            raise ValueError(f"identity {self.id!r} applies to nothing")

    def applies(self, n: int) -> bool:
        """Whether the identity has cases at ``n`` tokens."""
        if self.size_free:
            return n == 2
        return self.n_values is None or n in self.n_values

    def cases(self, n: int, d: int | None = None, *, loss: str | None = None,
              link: str | None = None) -> list[Case]:
        """The concrete cases at ``n`` (optionally one ``d``, loss, link)."""
        if not self.applies(n):
            return []
        out = []
        for lo in self.losses:
            for li in self.links:
                if (loss is not None and lo != loss) or (link is not None and li != link):
                    continue
                ds = (1,) if self.d_values is None else self.d_values(lo, n, li)
                if d is not None and self.d_values is not None:
                    ds = (d,) if ds and d >= min(ds) else ()
                out.extend(Case(lo, li, n, dd) for dd in ds)
        return out

    def check(self, n: int, d: int | None = None, *, loss: str | None = None,
              link: str | None = None) -> ProofResult:
        """Prove the identity for every applicable case at ``n`` (and ``d``); worst status wins."""
        return combine([(_label(c), self.check_case(c)) for c in self.cases(n, d, loss=loss, link=link)])

    def negative_control(self, n: int, d: int | None = None, *, loss: str | None = None,
                         link: str | None = None) -> ProofResult:
        """Run every wrong variant on every case; ``disproved`` only if all of them are."""
        out = []
        for c in self.cases(n, d, loss=loss, link=link):
            for desc, fn in self.negative:
                out.append((f"{_label(c)} [{desc}]", fn(c)))
        return combine(out, negative=True)


def _label(c: Case) -> str:
    return f"{c.loss}/{c.link} n={c.n} d={c.d}"
