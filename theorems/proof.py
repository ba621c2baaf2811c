r"""Deciding $\mathrm{lhs}-\mathrm{rhs}=0$ exactly, and saying so honestly when we cannot.

One decision procedure (:func:`_decide`) with two entry points that differ only in
their defaults:

* :func:`prove_zero` ``(expr, *, spot_points=3, seed=0, try_simplify=True)``, the
  general one (trapping lemma, the claims of ``softpolar verify``);
* :func:`decide` ``(expr, *, negative=False, points=3, seed=0)``, used by the
  identity registry (``softpolar derive --check``). ``negative=True`` marks a
  negative control: a wrong variant expected to be ``disproved``.

The procedure, for ``expr`` a scalar, a matrix or a (nested) list of them:

1. *(negative controls only)* evaluate at genuine random points first (step 3):
   that is what disproves a wrong variant, and it avoids a costly exact test of a
   non-zero rational function;
2. **exact**: convert each entry with the process-wide, memoized
   :class:`_Rationalizer`: $e^{c\,x}\mapsto E_x^{c}$ ($x$ a symbol, $c$ rational,
   $E_x>0$ fresh), any other $e^{q}$ to one opaque positive symbol per canonical
   $\pm q$ (so $e^{-q}=1/Q$), $\log q$ to one opaque real symbol,
   $\operatorname{sigmoid}(x)=1/(1+e^{-x})$,
   $\operatorname{softplus}(x)=\log(1+e^{x})$. Every expression of the value-softmax
   model is then a rational function of the new symbols and the original ones, and
   it is identically zero iff the numerator polynomial of :func:`exact_zero`
   (fraction-free, gcd-free) is 0. Entries with other non-rational nodes but no
   function (Floats, fractional powers, ``E``, ``pi``) are tested with
   ``cancel(together(.)) == 0``. A zero here is zero for the true values of the
   opaque symbols too, so it is a proof (method ``exact-rational``); the converse
   is not claimed, so a non-zero residue is never read as a disproof;
3. **evaluation** of the entries not yet proven at ``points`` random rational points,
   each opaque symbol at the value of its definition, with :data:`EVAL_DIGITS`
   digits: a value above :data:`EVAL_NONZERO` is ``disproved`` and carries the
   point (method ``spot-check``). A pole at a point skips that point;
4. if ``try_simplify`` (default for :func:`prove_zero` and for positive checks of
   :func:`decide`): ``simplify`` of every open entry returns 0 -> ``proved``
   (method ``simplify``). "simplify did not return 0" alone is never a disproof;
5. **spot check** of the open entries (original form) at ``points`` other rational
   points with :data:`SPOT_DIGITS` digits: agreement to :data:`SPOT_ZERO`
   everywhere is ``numeric`` (reported as a spot check, never called a proof); a
   larger value is ``disproved`` with its point; an entry that cannot be evaluated
   (a pole at every point, or a non-numeric value) leaves the result ``undecided``.

Limits: the conversion memo of :data:`RATIONALIZER` lives as long as the process (it is
what makes the identity checks fast); :func:`clear_memo` empties it. Sizes of the
spot checks are small (3 points by default): ``numeric`` is evidence, not proof.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import sympy as sp

from .errors import InvalidArgument, check_int
from ._functions import sigmoid, softplus

#: Digits of the final spot check on the original expression (step 5).
SPOT_DIGITS = 50
#: |value| below this at every spot counts as numerically zero (10 digits of margin).
SPOT_ZERO = sp.Float(10) ** -40
#: Digits of the evaluation used for disproofs (step 3), and the threshold above which a value is non-zero.
#: The evaluation substitutes 60-digit Floats (not exact rationals) into the large converted flows, hence the
#: wider margin than :data:`SPOT_ZERO`.
EVAL_DIGITS = 60
EVAL_NONZERO = sp.Float(10) ** -30

_POLES = (sp.nan, sp.zoo, sp.oo, -sp.oo)


@dataclass(frozen=True)
class ProofResult:
    """Outcome of :func:`prove_zero` / :func:`decide`.

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


# ---- helpers --------------------------------------------------------------------------------------
def _entries(expr) -> list:
    """The scalar entries of a scalar, matrix or (nested) list/tuple of them, sympified."""
    if isinstance(expr, sp.MatrixBase):
        return [sp.sympify(e) for e in expr]
    if isinstance(expr, (list, tuple)):
        out = []
        for e in expr:
            out.extend(_entries(e))
        return out
    try:
        return [sp.sympify(expr)]
    except sp.SympifyError:
        raise InvalidArgument(
            f"expr={expr!r} (type {type(expr).__name__}) is not allowed; "
            "expected a SymPy expression, a number, a Matrix or a list of them") from None


def expand_named(e):
    """Replace ``softplus``/``sigmoid`` by their exp forms, touching nothing else.

    ``Expr.rewrite(exp)`` would also turn ``w**2`` into ``exp(2*log(w))``; and the
    named functions have no ``evalf`` of their own.
    """
    if not e.has(softplus, sigmoid):
        return e
    return e.replace(softplus, lambda x: sp.log(1 + sp.exp(x))).replace(
        sigmoid, lambda x: 1 / (1 + sp.exp(-x)))


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


def _draw(sym, rng, hi: int):
    """A random rational value for ``sym`` respecting its sign and integrality assumptions."""
    if sym.is_positive or sym.is_nonnegative:
        sign = 1
    elif sym.is_negative or sym.is_nonpositive:
        sign = -1
    else:
        sign = rng.choice([-1, 1])
    num = sign * rng.randint(1, hi)
    return sp.Integer(num) if sym.is_integer else sp.Rational(num, rng.randint(7, 13))


# ---- exact test for rational functions -------------------------------------------------------------
class _NotRational(Exception):
    """The expression has a node that is not a rational operation (a function, a Float, ...)."""


def _fractions(entries, *, lenient: bool = False):
    r"""Each entry as ``(numerator, {factor: multiplicity})`` over $\mathbb Q[\text{symbols}]$.

    See :func:`exact_zero`. With ``lenient=True`` an entry that is not rational gives
    ``None`` instead of raising :class:`_NotRational` (the memo stays shared).
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

    if not lenient:
        return R, [conv(e) for e in entries]
    out = []
    for e in entries:
        try:
            out.append(conv(e))
        except _NotRational:
            out.append(None)
    return R, out


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


def _exactly_zero(conv) -> list[bool]:
    """Step 2 on converted entries: for each, whether it is proven identically zero."""
    if not conv:
        return []
    _, fr = _fractions(conv, lenient=True)
    out = []
    for c, f in zip(conv, fr):
        if f is not None:
            out.append(not f[0])
        elif c.atoms(sp.Function):
            out.append(False)  # Abs, Max, exp(1/2), undefined functions ...: left to simplify
        else:
            out.append(sp.cancel(sp.together(c)) == 0)
    return out


# ---- exp/log atoms -> symbols ---------------------------------------------------------------------
class _Rationalizer:
    r"""Turn expressions into rational functions of fresh positive symbols (memoized).

    One instance per process (:data:`RATIONALIZER`), shared by every check, which makes the
    exact step fast on the large derived flows (each distinct sub-expression is
    converted once):

    * $e^{c\,x}$ with $x$ an original symbol and $c$ rational becomes $E_x^{c}$;
    * any other $e^{q}$ becomes an opaque positive symbol $Q$ per canonical ``q``
      (the converted argument reduced to lowest terms), with $e^{-q}=1/Q$;
    * ``log(q)`` becomes an opaque real symbol $L$ per canonical ``q``;
    * ``sigmoid(x)`` $=1/(1+e^{-x})$, ``softplus(x)`` $=\log(1+e^{x})$.

    The new symbols are ``Dummy`` symbols, so they never coincide with a caller's
    symbol of the same name. A converted expression that vanishes identically is 0
    for the true values of the opaque symbols too (sound). The converse is not
    claimed: :meth:`value` evaluates at a genuine point instead (each opaque symbol
    at the value of its definition).
    """

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        """Forget every conversion (the fresh symbols of earlier calls are no longer recognized)."""
        self.E: dict = {}        # original symbol -> E symbol
        self._E_inv: dict = {}   # E symbol -> original symbol
        self.opaque: dict = {}   # opaque symbol -> (kind, canonical argument expression)
        self._keys: dict = {}
        self.memo: dict = {}
        self._canon: dict = {}

    def conv(self, x):
        if x.is_Atom:
            return x
        hit = self.memo.get(x)
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
        self.memo[x] = r
        return r

    def _exp(self, arg):
        factor, rest = sp.Integer(1), []
        for term in sp.Add.make_args(sp.expand(arg)):
            coeff, base = term.as_coeff_Mul()
            if base.is_Symbol and coeff.is_Rational and base not in self.opaque and base not in self._E_inv:
                if base not in self.E:
                    self.E[base] = e = sp.Dummy(f"E_{base.name}", positive=True)
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
            sym = sp.Dummy(name, positive=True) if kind == "exp" else sp.Dummy(name, real=True)
            self._keys[(kind, key)] = sym
            self.opaque[sym] = (kind, key)
        return sym if sign == 1 else 1 / sym

    def originals(self, syms) -> set:
        """The caller's symbols that the (possibly fresh) symbols ``syms`` depend on."""
        out, stack = set(), list(syms)
        while stack:
            s = stack.pop()
            if s in self._E_inv:
                stack.append(self._E_inv[s])
            elif s in self.opaque:
                stack.extend(self.opaque[s][1].free_symbols)
            else:
                out.add(s)
        return out

    def value(self, sym, cache: dict, digits: int):
        """Numeric value of ``sym`` at a genuine point; ``cache`` holds the originals' values."""
        v = cache.get(sym)
        if v is not None:
            return v
        if sym in self._E_inv:
            v = sp.exp(self.value(self._E_inv[sym], cache, digits))
        elif sym in self.opaque:
            kind, key = self.opaque[sym]
            sub = {t: self.value(t, cache, digits) for t in key.free_symbols}
            x = sp.N(key.xreplace(sub), digits)
            v = sp.exp(x) if kind == "exp" else sp.log(x)
        else:
            raise KeyError(f"no value drawn for {sym}")  # internal: _evaluate draws every original
        cache[sym] = v
        return v


#: One rationalizer per process: its memo tables are shared by every check (in a worker of
#: :func:`theorems.run_identities`, by every case of that worker).
RATIONALIZER = _Rationalizer()


def clear_memo() -> None:
    """Empty the process-wide conversion memo (results do not change, only the speed of repeated checks)."""
    RATIONALIZER.clear()


# ---- the numeric stages ---------------------------------------------------------------------------
def _evaluate(conv, points: int, seed: int) -> ProofResult | None:
    """Step 3: a ``disproved`` result at a genuine point where some converted entry is non-zero, else None."""
    rz = RATIONALIZER
    rng = random.Random(seed)
    syms = [dag_symbols([c]) for c in conv]
    originals = sorted(rz.originals(set().union(*syms)), key=lambda t: (t.name, str(t.assumptions0)))
    for _ in range(points):
        pt = {s: _draw(s, rng, 30) for s in originals}
        cache = {s: sp.Float(q, EVAL_DIGITS) for s, q in pt.items()}
        for c, cs in zip(conv, syms):
            try:
                v = sp.N(c.xreplace({t: rz.value(t, cache, EVAL_DIGITS) for t in cs}), EVAL_DIGITS)
            except (OverflowError, MemoryError):
                continue  # beyond mpmath's exponent range at this point (exp(exp(...))): no evidence either way
            if not v.is_number or v.has(*_POLES):
                continue  # a pole at this point (or a value SymPy cannot evaluate): no evidence either way
            if abs(v) > EVAL_NONZERO:
                return ProofResult(
                    "disproved", "spot-check",
                    f"{EVAL_DIGITS}-digit evaluation at a rational point gives {sp.N(v, 8)}",
                    {str(k): str(q) for k, q in pt.items()})
    return None


def _spot(entries, points: int, seed: int, note: str) -> ProofResult:
    """Step 5: ``numeric``, ``disproved`` or ``undecided`` from a 50-digit evaluation of the original entries."""
    rng = random.Random(f"spot:{seed}")  # other points than step 3 (same seed)
    symbols = sorted(set().union(*[e.free_symbols for e in entries]),
                     key=lambda t: (t.name, str(t.assumptions0)))
    worst, checked = sp.Float(0), [0] * len(entries)
    for _ in range(points):
        point = {s: _draw(s, rng, 20) for s in symbols}
        for k, e in enumerate(entries):
            try:
                val = sp.N(expand_named(e.xreplace(point)), SPOT_DIGITS)
            except (OverflowError, MemoryError):
                continue  # beyond mpmath's exponent range: like a pole, this point says nothing
            if val.has(*_POLES):
                continue  # a pole: this point says nothing about this entry
            mag = abs(val)
            if not mag.is_number:
                return ProofResult("undecided", "spot-check", f"{note}; non-numeric value {val}")
            if mag > SPOT_ZERO:
                cex = {str(s): str(v) for s, v in point.items()}
                return ProofResult(
                    "disproved", "spot-check",
                    f"{note}; at a rational point the difference is {sp.N(val, 8)}", cex)
            checked[k] += 1
            worst = max(worst, mag)
    if not all(checked):
        return ProofResult("undecided", "spot-check",
                           f"{note}; {checked.count(0)} entr(y/ies) could not be evaluated at any of "
                           f"{points} random rational points (poles)")
    return ProofResult(
        "numeric", "spot-check",
        f"{note}; {SPOT_DIGITS}-digit evaluation at {points} random rational points, max |diff| = {sp.N(worst, 3)}",
    )


# ---- the decision procedure -----------------------------------------------------------------------
_EXACT_DETAIL = ("every entry is a rational function of exp(a_i) and the other symbols "
                 "(opaque symbols for other exp/log atoms); its numerator polynomial is 0")


def _decide(expr, *, negative: bool, points: int, seed: int, try_simplify: bool) -> ProofResult:
    """The decision procedure of the module docstring (steps 1-5)."""
    entries = _entries(expr)
    conv = [RATIONALIZER.conv(e) for e in entries]
    if negative:
        res = _evaluate(conv, points, seed)
        if res is not None:
            return res
    zero = _exactly_zero(conv)
    if all(zero):
        return ProofResult("proved", "exact-rational", _EXACT_DETAIL)
    open_entries = [e for e, z in zip(entries, zero) if not z]
    if not negative:
        res = _evaluate([c for c, z in zip(conv, zero) if not z], points, seed)
        if res is not None:
            return res
    # simplify() can run for minutes on a large wrong variant: negative controls skip it
    if try_simplify and all(sp.simplify(e) == 0 for e in open_entries):
        return ProofResult("proved", "simplify", "SymPy simplify() returns 0 for every entry not proven exactly")
    return _spot(open_entries, points, seed, note="SymPy could not decide exactly")


def prove_zero(expr, *, spot_points: int = 3, seed: int = 0, try_simplify: bool = True) -> ProofResult:
    """Decide whether ``expr`` (a scalar, matrix or list of them) is identically zero.

    Args:
        expr: a SymPy expression (or number), a Matrix, or a (nested) list/tuple of them.
        spot_points: random rational points of the numeric stages (an int >= 1).
        seed: fixes those points.
        try_simplify: try ``simplify`` before the final spot check.

    Returns:
        A :class:`ProofResult`: ``proved`` (method ``exact-rational`` or ``simplify``),
        ``disproved`` (method ``spot-check``, the point in ``counterexample``), ``numeric``
        (spot check only) or ``undecided``. See the module docstring for the procedure.

    Raises:
        InvalidArgument: ``expr`` is not sympifiable, ``spot_points`` < 1.
    """
    check_int("spot_points", spot_points, minimum=1)
    return _decide(expr, negative=False, points=spot_points, seed=seed, try_simplify=try_simplify)


def decide(expr, *, negative: bool = False, points: int = 3, seed: int = 0) -> ProofResult:
    """Decide ``expr == 0`` (scalar, matrix or list) exactly where possible: the identity registry's entry point.

    The procedure of :func:`prove_zero` (module docstring). Positive check
    (``negative=False``): exact, then evaluation, then ``simplify``, then the spot
    check, exactly as :func:`prove_zero` with ``spot_points=points``. Negative control
    (``negative=True``): the point evaluation runs first (it is what disproves a
    wrong variant, and it avoids a costly exact test of a non-zero rational
    function), and ``simplify`` is skipped.

    Raises:
        InvalidArgument: ``expr`` is not sympifiable, ``points`` < 1.
    """
    check_int("points", points, minimum=1)
    return _decide(expr, negative=negative, points=points, seed=seed, try_simplify=not negative)
