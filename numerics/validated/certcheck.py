r"""An independent checker for polarization certificates: a second enclosure method, own code.

:func:`numerics.check_certificate` must not be fooled by a bug in the certifier's
enclosure code (:mod:`numerics.validated.enclosure`: ``tau_field``, ``taylor_coefficients``,
``check_apriori``, ``step_enclosure``). This module re-proves what a certificate
claims with **none** of that code: it imports nothing from :mod:`numerics.validated.enclosure`
or :mod:`numerics.validated.certify`, reads the certificate's numbers with its own parsers and
encloses the flow with a different method in a different formulation.

The method
==========
The certifier integrates ($\star$) $u'=b\,s$, $a'=J(s)u$ in $(u,a)$ with the softmax
written through exponentials (shifted by a reference token) and Taylor coefficients
from Picard iteration in ``arb_series`` arithmetic. Here the state is augmented by the
weights $s=\operatorname{softmax}(a)$, which turns ($\star$) into a **polynomial**
system (derived by hand from $s_k=e^{a_k}/\sum_m e^{a_m}$, so
$s_k'=s_k(a_k'-\sum_m s_ma_m')$):

.. math:: u_k'=b\,s_k,\qquad a_k'=g_k:=s_k(u_k-z),\qquad s_k'=s_k\Big(g_k-\sum_m s_mg_m\Big),
          \qquad z=\sum_m s_mu_m .

Every solution of ($\star$) gives a solution $(u,a,\operatorname{softmax}(a))$ of this
system, and its solutions are unique (polynomial right-hand side), so an enclosure of the
augmented system from a box containing $(u(0),a(0),\operatorname{softmax}(a(0)))$ encloses
the true $(u,a)$. The augmentation is checked numerically in the tests (it is not used by
the certifier, so a mistake here cannot agree with one there by construction).

One step of size $h$ from an interval vector $X$:

1. **First-order (existence) enclosure**: a box $B$ with $X+[0,h]\,F(B)\subset\operatorname{int}B$
   (Picard–Lindelöf on boxes), found by inflation and *checked* with interval endpoints.
2. **Taylor polynomial with Lagrange remainder**: the Taylor coefficients of a polynomial
   system follow from the plain Cauchy-product recurrence (no series arithmetic, no
   exponentials); $x(h)\in\sum_{k\le p}c_k(X)h^k+c_{p+1}(B)h^{p+1}$.

Why not an even simpler first-order method (Euler plus a logarithmic-norm bound)? The
certificate's bounds are the certifier's gap enclosures rounded down to 32 bits, so
the checker must reach an absolute accuracy of about $10^{-14}$ at $\tau^*\approx10$:
a first-order method with local error $O(h^2)$ would need $h\approx10^{-13}$, i.e.
$\sim10^{14}$ steps. A Taylor recurrence for a polynomial field is the simplest method
that reaches it; what makes it independent is that nothing (formulation, field
evaluation, coefficient algorithm, a-priori check, step choice) is shared.

The steps are the checker's own: each recorded step $[\tau_k,\tau_k+h_k]$ of the
certificate is split into $2^j$ equal pieces, $j$ chosen so that the remainder term stays
below ``tol``. At the end of every recorded step the checker's enclosure must *overlap*
the recorded end ball (both contain the true solution if both are right; disjoint means
the certificate's enclosure is wrong). At $\tau^*$ it proves every recorded gap bound
$a_i-a_j\ge L^a_j>0$, $u_i-u_j\ge L^u_j\ge0$ from its own enclosure.

Arithmetic: python-flint ``arb`` balls used directly (every rounding error is in the
radius); endpoints are converted to exact rationals (:class:`fractions.Fraction`) for every
decision, so a decision never rests on a float. ``arb`` is the only thing shared with
the certifier; the tests also compare against ``mpmath.iv`` on one certificate
(``arith='iv'``), which shares nothing.

API (for other modules, e.g. box enclosures elsewhere):

* :func:`enclose_tau_system` ``(u0, a0, b, tau_grid, ...)``: an independent enclosure of
  ($\star$) from exact rationals at the exact times of ``tau_grid``;
* :func:`independent_check` ``(cert)``: the re-verification of a certificate's mathematics
  (:class:`IndependentResult`; never raises on bad content).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from mpmath import iv
from mpmath.libmp import finf, fnan, fninf, from_rational, round_ceiling, round_floor

#: working precision (bits) of the independent enclosure.
CHECK_PREC = 160
#: Taylor order of the independent method.
CHECK_ORDER = 24
#: largest remainder term accepted per substep (absolute, every component).
CHECK_TOL = Fraction(1, 2**110)
#: most halvings of a recorded step.
MAX_SPLIT = 24
#: most substep tries per recorded step, pooled over the certificate (the work bound of a check, derived
#: from the certificate's own step count): every certificate of the CERT family (n = 3, 4, 6, 8, seeds 0-4,
#: and seed 5 at prec 64-1024, order 6-80) needed at most 3 tries per recorded step, so 64 refuses nothing
#: genuine, while a doctored step (one step of h = 16, say) that would halve 2^24 times is refused after
#: 64 tries instead of running for days
SUBSTEPS_PER_STEP = 64
#: largest binary exponent accepted when reading numbers from a certificate.
MAX_EXP = 100_000


class Reject(Exception):
    """A certificate statement that the independent checker could not prove (or that is malformed)."""


#: what the reading code may raise on a value of the wrong type, shape or size (``int('x')``, ``len(3)``,
#: ``x[1]`` of a short list): while the certificate is read, a refusal of it (``malformed certificate``). Once it
#: is read, any exception is a crash of the checker (``crashed``), never a finding about the certificate.
READ_ERRORS = (ArithmeticError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError)


# ---------------------------------------------------------------------------------------
# reading the certificate's numbers (own parsers)
# ---------------------------------------------------------------------------------------
_BALL = re.compile(r"^\s*(-?\d+)\*2\^(-?\d+)\s*\+/-\s*(\d+)\*2\^(-?\d+)\s*$")
_DYADIC = re.compile(r"^\s*(-?\d+)/2\^(\d+)\s*$")


def _pow2(e: int) -> Fraction:
    return Fraction(2) ** e


def parse_ball(text) -> tuple[Fraction, Fraction]:
    """``'M*2^E +/- R*2^F'`` -> exact ``(midpoint, radius)``; :class:`Reject` if malformed."""
    mt = _BALL.match(text) if isinstance(text, str) else None
    if mt is None:
        raise Reject(f"ball {str(text)[:60]!r} is not 'M*2^E +/- R*2^F'")
    m, e, r, f = (int(g) for g in mt.groups())
    if max(abs(e), abs(f), m.bit_length(), r.bit_length()) > MAX_EXP:
        raise Reject(f"ball {text[:60]!r} has exponents beyond 2^{MAX_EXP}")
    return m * _pow2(e), r * _pow2(f)


def parse_dyadic(text) -> Fraction:
    """``'m/2^k'`` -> exact Fraction; :class:`Reject` if malformed."""
    mt = _DYADIC.match(text) if isinstance(text, str) else None
    if mt is None:
        raise Reject(f"number {str(text)[:60]!r} is not 'm/2^k'")
    if int(mt.group(2)) > MAX_EXP or len(mt.group(1)) > MAX_EXP // 3:
        raise Reject(f"number {text[:60]!r} has an exponent beyond {MAX_EXP}")
    return Fraction(int(mt.group(1)), 1 << int(mt.group(2)))


#: the keys of every recorded step (anything else in a step is refused: nothing unread passes)
STEP_KEYS = frozenset({"h", "box", "end"})
#: the model a certificate may be about: the tau-system is the flow of this loss with this link (and no design)
INIT_MODEL = {"loss": "logistic", "link": "softmax"}
_INIT_KEYS = {"loss", "link", "V", "a", "target"}


def check_model(init) -> None:
    """The certificate's ``init`` names the model the tau-system is the flow of; :class:`Reject` otherwise.

    Exactly the keys ``loss, link, V, a, target`` (no design matrix ``X``), with ``loss`` and ``link``
    the strings of :data:`INIT_MODEL`: the enclosure below is of that model only.
    """
    if not isinstance(init, dict):
        raise Reject("init is not an object")
    keys = set(init)
    if keys != _INIT_KEYS:
        raise Reject(f"init keys: unexpected {sorted(map(str, keys - _INIT_KEYS))}, missing "
                     f"{sorted(_INIT_KEYS - keys)}; expected exactly {sorted(_INIT_KEYS)}")
    for key, want in INIT_MODEL.items():
        if not isinstance(init[key], str) or init[key] != want:
            raise Reject(f"init.{key}={str(init[key])[:40]!r}: this checker encloses the {want!r} model only")


def _dyadic_text(q: Fraction) -> str:
    """``'m/2^k'`` for a dyadic rational (the certificate's number format)."""
    k = q.denominator.bit_length() - 1
    if q.denominator != 1 << k:
        raise Reject(f"{q} is not a dyadic rational")
    return f"{q.numerator}/2^{k}"


def display_fields(winner: int, tau: Fraction, a_lower, u_lower, version: int = 4) -> dict:
    """Every display field of a certified certificate, derived here from the exact numbers (own code). Tokens
    are counted from 0 (``token`` = ``winner``) from version 4 on, from 1 in version 3 (issue 39)."""
    shown = winner + 1 if version == 3 else winner
    def texts(xs, fmt):
        return [None if x is None else fmt(x) for x in xs]

    return {
        "token": shown, "tau_star": _dyadic_text(tau), "tau_star_decimal": f"{float(tau):.10g}",
        "bounds": {"a_gap_lower": texts(a_lower, _dyadic_text), "u_gap_lower": texts(u_lower, _dyadic_text),
                   "a_gap_lower_decimal": texts(a_lower, lambda x: f"{float(x):.6g}"),
                   "u_gap_lower_decimal": texts(u_lower, lambda x: f"{float(x):.6g}")},
        "conclusion": f"softmax(a(t)) -> e_{shown} as t -> infinity",
    }


def _check_display(cert: dict, expected: dict) -> None:
    for key in ("token", "tau_star", "tau_star_decimal", "conclusion"):
        if cert.get(key) != expected[key]:
            raise Reject(f"{key}={str(cert.get(key))[:60]!r} does not match the value derived from the verified "
                         f"numbers {expected[key]!r}")
    bounds = cert.get("bounds")
    if not isinstance(bounds, dict) or set(bounds) != set(expected["bounds"]):
        raise Reject("bounds do not have exactly the fields a_gap_lower, u_gap_lower and their _decimal forms")
    for key, val in expected["bounds"].items():
        if bounds[key] != val:
            raise Reject(f"bounds.{key}={str(bounds[key])[:80]!r} does not match the value derived from the "
                         f"verified numbers {val!r}")


def exact_initial(init: dict) -> tuple[list[Fraction], list[Fraction], Fraction]:
    r"""$(u(0),a(0),b)$ exactly from the certificate's ``init`` (decimal strings or JSON numbers)."""
    def q(x):
        if isinstance(x, bool) or not isinstance(x, (str, int)):
            raise Reject(f"init number {x!r} is not a decimal string or integer")
        try:
            dec = Decimal(str(x).strip())
        except InvalidOperation:
            raise Reject(f"init number {x!r} is not a decimal") from None
        if not dec.is_finite() or (dec != 0 and abs(dec.adjusted()) > 10_000):
            raise Reject(f"init number {x!r} is not a finite decimal of moderate size")
        return Fraction(dec)
    try:
        Vm, a, w = init["V"], init["a"], init["target"]
        n, d = len(a), len(w)
        if n < 2 or d < 1 or len(Vm) != d or any(len(r) != n for r in Vm):
            raise Reject("init V, a, target have inconsistent shapes")
        wq = [q(x) for x in w]
        Vq = [[q(x) for x in row] for row in Vm]
        aq = [q(x) for x in a]
    except (KeyError, TypeError):
        raise Reject("init lacks V, a or target") from None
    u = [sum((Vq[k][j] * wq[k] for k in range(d)), Fraction(0)) for j in range(n)]
    b = sum((x * x for x in wq), Fraction(0))
    if b <= 0:
        raise Reject("b = |w|^2 is not positive")
    return u, aq, b


# ---------------------------------------------------------------------------------------
# interval arithmetic adapters
# ---------------------------------------------------------------------------------------
class _Arb:
    """python-flint ``arb`` balls, with exact rational endpoints for every decision."""

    name = "arb"

    def __init__(self, prec: int):
        import flint
        self.flint, self.prec = flint, prec

    def __enter__(self):
        self._old = self.flint.ctx.prec
        self.flint.ctx.prec = self.prec
        return self

    def __exit__(self, *exc):
        self.flint.ctx.prec = self._old

    def const(self, q: Fraction):
        q = Fraction(q)
        return self.flint.arb(self.flint.fmpq(q.numerator, q.denominator))

    def interval(self, lo: Fraction, hi: Fraction):
        mid, rad = (lo + hi) / 2, (hi - lo) / 2
        f = self.flint
        return f.arb(f.fmpq(mid.numerator, mid.denominator), f.arb(f.fmpq(rad.numerator, rad.denominator)))

    @staticmethod
    def exp(x):
        return x.exp()

    @staticmethod
    def _q(x) -> Fraction:
        m, e = x.man_exp()
        return int(m) * _pow2(int(e))

    def bounds(self, x) -> tuple[Fraction, Fraction]:
        if not x.is_finite():
            raise Reject("an enclosure became unbounded")
        return self._q(x.lower()), self._q(x.upper())


class _Iv:
    """``mpmath.iv`` intervals (shares no code with flint), same interface as :class:`_Arb`."""

    name = "iv"

    def __init__(self, prec: int):
        self.iv, self.prec = iv, prec

    def __enter__(self):
        self._old = self.iv.prec
        self.iv.prec = self.prec
        return self

    def __exit__(self, *exc):
        self.iv.prec = self._old

    def const(self, q: Fraction):
        return self.interval(q, q)

    def interval(self, lo: Fraction, hi: Fraction):
        lo, hi = Fraction(lo), Fraction(hi)
        return self.iv.make_mpf((from_rational(lo.numerator, lo.denominator, self.prec, round_floor),
                                     from_rational(hi.numerator, hi.denominator, self.prec, round_ceiling)))

    def exp(self, x):
        return self.iv.exp(x)

    @staticmethod
    def _q(raw) -> Fraction:
        if raw in (finf, fninf, fnan):
            raise Reject("an enclosure became unbounded")
        sign, man, exp, _ = raw
        return (-1) ** sign * int(man) * _pow2(int(exp))

    def bounds(self, x) -> tuple[Fraction, Fraction]:
        lo, hi = x._mpi_
        return self._q(lo), self._q(hi)


def arithmetic(name: str, prec: int):
    """The checker's ball arithmetic at ``prec`` bits, a context manager: ``"arb"`` (python-flint) or ``"iv"``
    (``mpmath.iv``)."""
    if name == "arb":
        return _Arb(prec)
    if name == "iv":
        return _Iv(prec)
    raise ValueError(f"arith={name!r}: expected 'arb' or 'iv'")


# ---------------------------------------------------------------------------------------
# the augmented polynomial system
# ---------------------------------------------------------------------------------------
def poly_field(U, A, S, b):
    r"""$(u',a',s')$ of the augmented system at interval vectors ``U, A, S``."""
    n = len(U)
    z = sum(S[m] * U[m] for m in range(n))
    g = [S[k] * (U[k] - z) for k in range(n)]
    q = sum(S[m] * g[m] for m in range(n))
    return [b * S[k] for k in range(n)], g, [S[k] * (g[k] - q) for k in range(n)]


def taylor(U, A, S, b, order: int):
    r"""Taylor coefficients $c_0..c_{\rm order}$ of $(u,a,s)$ through (every point of) ``(U, A, S)``.

    Cauchy-product recurrence of the polynomial field: with $Z=\sum_m S_mU_m$,
    $G_k=S_k(U_k-Z)$, $Q=\sum_mS_mG_m$, $H_k=S_k(G_k-Q)$, the coefficient $m+1$ of
    $u_k,a_k,s_k$ is $bS_k[m]$, $G_k[m]$, $H_k[m]$ divided by $m+1$; coefficient $m$ of
    each product needs coefficients $\le m$ only. Returns ``(cu, ca, cs)``.
    """
    n = len(U)
    cu, ca, cs = [[x] for x in U], [[x] for x in A], [[x] for x in S]
    D, G, E = ([[] for _ in range(n)] for _ in range(3))

    def cauchy(f, g, m):
        return sum(f[l] * g[m - l] for l in range(m + 1))

    for m in range(order):
        z = sum(cauchy(cs[k], cu[k], m) for k in range(n))
        for k in range(n):
            D[k].append(cu[k][m] - z)
            G[k].append(cauchy(cs[k], D[k], m))
        q = sum(cauchy(cs[k], G[k], m) for k in range(n))
        for k in range(n):
            E[k].append(G[k][m] - q)
            cu[k].append(b * cs[k][m] / (m + 1))
            ca[k].append(G[k][m] / (m + 1))
            cs[k].append(cauchy(cs[k], E[k], m) / (m + 1))
    return cu, ca, cs


@dataclass
class TauEnclosure:
    """Result of :func:`enclose_tau_system`: enclosures ``(U, A, S)`` at each grid time."""

    times: list
    states: list
    substeps: int = 0
    seconds: float = 0.0
    arith: str = "arb"
    display: dict | None = None
    notes: list = field(default_factory=list)


def _flat(U, A, S):
    return list(U) + list(A) + list(S)


def _step(ar, X, b, h: Fraction, order: int, tol: Fraction):
    """One substep from the flat interval vector ``X``: the end enclosure, or ``None`` (shrink h)."""
    n = len(X) // 3
    H = ar.const(h)
    T = ar.interval(Fraction(0), h)
    # 1. first-order enclosure: B with X + [0,h] F(B) inside int(B)
    F = _flat(*poly_field(X[:n], X[n:2 * n], X[2 * n:], b))
    K = [x + T * f for x, f in zip(X, F)]
    B = None
    for _ in range(8):
        cand = []
        for k in K:
            lo, hi = ar.bounds(k)
            pad = (hi - lo) / 2 + (abs(lo) + abs(hi) + 1) * Fraction(1, 2**(ar.prec // 2))
            cand.append(ar.interval(lo - pad, hi + pad))
        F = _flat(*poly_field(cand[:n], cand[n:2 * n], cand[2 * n:], b))
        K = [x + T * f for x, f in zip(X, F)]
        ok = True
        for k, c in zip(K, cand):
            klo, khi = ar.bounds(k)
            clo, chi = ar.bounds(c)
            if not (clo < klo and khi < chi):
                ok = False
                break
        if ok:
            B = cand
            break
    if B is None:
        return None
    # 2. Taylor polynomial on X, Lagrange remainder on B
    cx = [c for part in taylor(X[:n], X[n:2 * n], X[2 * n:], b, order) for c in part]
    cb = [c for part in taylor(B[:n], B[n:2 * n], B[2 * n:], b, order + 1) for c in part]
    out = []
    Hp = H ** (order + 1)
    for coeffs, rem in zip(cx, cb):
        r = rem[order + 1] * Hp
        lo, hi = ar.bounds(r)
        if max(abs(lo), abs(hi)) > tol:
            return None
        acc = coeffs[order]
        for k in range(order - 1, -1, -1):
            acc = acc * H + coeffs[k]
        out.append(acc + r)
    return out


def _pair(x) -> tuple[Fraction, Fraction]:
    """``(lo, hi)`` of an initial entry: a rational point or a ``(lo, hi)`` pair of rationals."""
    if isinstance(x, tuple):
        lo, hi = Fraction(x[0]), Fraction(x[1])
        if lo > hi:
            raise Reject(f"initial interval ({lo}, {hi}) has lo > hi")
        return lo, hi
    return Fraction(x), Fraction(x)


def _entry(ar, x):
    lo, hi = _pair(x)
    return ar.const(lo) if lo == hi else ar.interval(lo, hi)


def enclose_tau_system(u0, a0, b, tau_grid, *, prec: int = CHECK_PREC, order: int = CHECK_ORDER,
                       tol: Fraction = CHECK_TOL, arith: str = "arb", on_grid=None, max_tries: int | None = None,
                       deadline: float | None = None) -> TauEnclosure:
    r"""Enclose the solution of ($\star$) at the exact times ``tau_grid`` (increasing Fractions >= 0).

    Args:
        u0, a0: exact initial projections and logits: each a ``Fraction`` (a point) or a pair
            ``(lo, hi)`` of Fractions (a box: the enclosure then holds for every initial point
            in it, e.g. for box enclosures of many initializations at once); b: ``Fraction`` > 0.
        tau_grid: the times at which enclosures are returned (each interval between two grid
            times is split into $2^j$ equal substeps, $j\le$ :data:`MAX_SPLIT`, as needed).
        prec, order, tol: working precision (bits), Taylor order, largest remainder per substep.
        arith: ``'arb'`` (python-flint, fast) or ``'iv'`` (``mpmath.iv``, slow, shares no
            code with flint).
        on_grid: optional ``on_grid(index, U, A, S, ar)`` called at every grid time; it may
            raise :class:`Reject`.
        max_tries: most substep tries in all (tried and refused ones count), ``None``: no limit;
            deadline: a ``time.perf_counter()`` value, ``None``: none. Past either: :class:`Reject`.

    Returns a :class:`TauEnclosure` with the interval vectors ``(U, A, S)`` per grid time.
    Raises :class:`Reject` when a substep cannot be validated at $2^{-\rm MAX\_SPLIT}$ of a
    grid interval.
    """
    started = time.perf_counter()
    b = Fraction(b)
    n = len(u0)
    states = []
    substeps = 0
    with arithmetic(arith, prec) as ar:
        bb = ar.const(b)
        U = [_entry(ar, x) for x in u0]
        A = [_entry(ar, x) for x in a0]
        # s_k(0) = 1 / sum_m exp(a_m - a_k), enclosed with the arithmetic's own exp (a box of a(0)
        # gives a box of s(0) containing softmax of every point in it)
        S = []
        for k in range(n):
            tot = ar.const(Fraction(1))
            for m in range(n):
                if m != k:
                    d = (_pair(a0[m])[0] - _pair(a0[k])[1], _pair(a0[m])[1] - _pair(a0[k])[0])
                    tot = tot + ar.exp(ar.interval(*d))
            S.append(ar.const(Fraction(1)) / tot)
        X = U + A + S
        tau = Fraction(0)
        tries = 0
        for idx, t_next in enumerate(tau_grid):
            t_next = Fraction(t_next)
            if t_next < tau:
                raise Reject(f"grid time {t_next} is before {tau}")
            if t_next > tau:
                span = t_next - tau
                for j in range(MAX_SPLIT + 1):
                    pieces, h = 1 << j, span / (1 << j)
                    Y, ok = X, True
                    for _ in range(pieces):
                        if max_tries is not None and tries >= max_tries:
                            raise Reject(f"work bound: {max_tries} substep tries used up at tau = {float(tau):.6g} "
                                         f"({SUBSTEPS_PER_STEP} per recorded step; a genuine certificate needs "
                                         "a few)")
                        if deadline is not None and time.perf_counter() > deadline:
                            raise Reject(f"time budget used up at tau = {float(tau):.6g}, after {tries} substep "
                                         "tries")
                        tries += 1
                        Y = _step(ar, Y, bb, h, order, tol)
                        if Y is None:
                            ok = False
                            break
                    if ok:
                        substeps += pieces
                        X = Y
                        break
                else:
                    raise Reject(f"no validated substep on [{float(tau):.6g}, {float(t_next):.6g}] "
                                 f"with 2^{MAX_SPLIT} pieces")
                tau = t_next
            state = (X[:n], X[n:2 * n], X[2 * n:])
            states.append(state)
            if on_grid is not None:
                on_grid(idx, *state, ar)
    return TauEnclosure(list(tau_grid), states, substeps, time.perf_counter() - started, arith)


# ---------------------------------------------------------------------------------------
# the certificate check
# ---------------------------------------------------------------------------------------
def prove_gap_bounds(ar, U, A, n: int, winner: int, la, lu):
    r"""Prove $a_i-a_j\ge L^a_j>0$ and $u_i-u_j\ge L^u_j\ge0$ ($i$ = ``winner``) from the own enclosure.

    Returns the lower ends of the own gap enclosures (floats, for display); :class:`Reject` if any fails.
    """
    own_a, own_u = [], []
    for j in range(n):
        if j == winner:
            own_a.append(None)
            own_u.append(None)
            continue
        ga_lo, _ = ar.bounds(A[winner] - A[j])
        gu_lo, _ = ar.bounds(U[winner] - U[j])
        own_a.append(float(ga_lo))
        own_u.append(float(gu_lo))
        if not la[j] > 0:
            raise Reject(f"a-gap bound for token {j} is {la[j]}, not > 0")
        if not lu[j] >= 0:
            raise Reject(f"u-gap bound for token {j} is {lu[j]}, not >= 0")
        if not ga_lo >= la[j]:
            raise Reject(f"a_{winner} - a_{j} >= {float(la[j]):.6g} is not proven by the "
                         f"independent enclosure (its lower end is {float(ga_lo):.6g})")
        if not gu_lo >= lu[j]:
            raise Reject(f"u_{winner} - u_{j} >= {float(lu[j]):.6g} is not proven by the "
                         f"independent enclosure (its lower end is {float(gu_lo):.6g})")
    return own_a, own_u


@dataclass(frozen=True)
class IndependentResult:
    """Outcome of :func:`independent_check`.

    ``ok``; ``reason`` (first failure); ``winner`` (0-based), ``tau_star`` (exact Fraction),
    ``a_gap_lower`` / ``u_gap_lower`` (the certificate's bounds, each proven here, ``None``
    at the winner), ``own_a_gap_lower`` / ``own_u_gap_lower`` (lower ends of this checker's
    own gap enclosures, floats, for display), ``substeps``, ``seconds``.
    """

    ok: bool
    reason: str = ""
    winner: int | None = None
    tau_star: Fraction | None = None
    a_gap_lower: tuple = ()
    u_gap_lower: tuple = ()
    own_a_gap_lower: tuple = ()
    own_u_gap_lower: tuple = ()
    substeps: int = 0
    seconds: float = 0.0
    arith: str = "arb"
    display: dict | None = None
    #: ``'Type: message'`` of an exception of this checker's own code on a certificate it had read (``ok`` is
    #: then False: a crash is never a pass, and no refusal either); ``''`` otherwise
    crashed: str = ""


def independent_check(cert, *, arith: str = "arb", prec: int = CHECK_PREC, order: int = CHECK_ORDER,
                      tol: Fraction = CHECK_TOL, time_budget: float | None = None) -> IndependentResult:
    r"""Re-prove a certificate's mathematical content with the independent method.

    Checked: the exact initial data (own exact arithmetic) lie in the recorded initial
    balls and in the recorded ball for $b$; the flow is enclosed by this module's method
    over the recorded time grid, and at the end of every recorded step the own enclosure
    overlaps the recorded end ball; $\tau^*$ is the sum of the recorded steps; at $\tau^*$
    every recorded bound $a_i-a_j\ge L^a_j>0$, $u_i-u_j\ge L^u_j\ge0$ ($i$ = the recorded
    ``winner``) follows from the own enclosure. Display fields and the digest are the
    caller's business (:func:`numerics.check_certificate`). Never raises on bad content.

    Work bound: at most :data:`SUBSTEPS_PER_STEP` substep tries per recorded step (pooled), and with
    ``time_budget`` (seconds) at most that long; past either the certificate is refused (``reason`` says which).

    A malformed certificate (found while it is read) is refused; an exception of the enclosure or the proofs
    on a certificate that was read is a crash of this checker: ``ok`` False, ``crashed`` set.
    """
    if arith not in ("arb", "iv"):
        raise ValueError(f"arith={arith!r}: expected 'arb' or 'iv'")
    started = time.perf_counter()
    try:  # 1. reading: every number of the certificate, parsed and validated by this module's own code
        if not isinstance(cert, dict):
            raise Reject("certificate is not a JSON object")
        check_model(cert.get("init"))
        u0, a0, b = exact_initial(cert.get("init"))
        n = len(a0)
        winner = cert.get("winner")
        if isinstance(winner, bool) or not isinstance(winner, int) or not 0 <= winner < n:
            raise Reject(f"winner={winner!r} is not a token index")
        initial = cert.get("initial")
        if not isinstance(initial, list) or len(initial) != 2 * n:
            raise Reject("initial enclosure missing or of the wrong length")
        for k, (text, q) in enumerate(zip(initial, u0 + a0)):
            mid, rad = parse_ball(text)
            if abs(q - mid) > rad:
                raise Reject(f"initial ball {k} does not contain the exact initial value")
        bmid, brad = parse_ball(cert.get("b"))
        if abs(b - bmid) > brad:
            raise Reject("the ball for b does not contain |w|^2")
        steps = cert.get("steps")
        if not isinstance(steps, list):
            raise Reject("steps is not a list")
        grid, ends, tau = [Fraction(0)], [None], Fraction(0)
        for k, st in enumerate(steps):
            if not isinstance(st, dict):
                raise Reject(f"step {k} is not an object")
            if set(st) != STEP_KEYS:
                raise Reject(f"step {k} keys: unexpected {sorted(map(str, set(st) - STEP_KEYS))}, missing "
                             f"{sorted(STEP_KEYS - set(st))}; expected exactly {sorted(STEP_KEYS)}")
            h = parse_dyadic(st.get("h"))
            if h <= 0:
                raise Reject(f"step {k}: h = {h} is not positive")
            end = st.get("end")
            if not isinstance(end, list) or len(end) != 2 * n:
                raise Reject(f"step {k}: wrong number of end balls")
            box = st.get("box")  # the certifier's a-priori box: not used here (own boxes), but read: nothing unread
            if not isinstance(box, list) or len(box) != 2 * n:
                raise Reject(f"step {k}: wrong number of box balls")
            for x in box:
                parse_ball(x)
            tau += h
            grid.append(tau)
            ends.append([parse_ball(x) for x in end])
        tau_star = parse_dyadic(cert.get("tau_star"))
        if tau_star != tau:
            raise Reject(f"tau_star = {float(tau_star)} but the steps add up to {float(tau)}")
        bounds = cert.get("bounds")
        if not isinstance(bounds, dict):
            raise Reject("bounds missing")
        la_t, lu_t = bounds.get("a_gap_lower"), bounds.get("u_gap_lower")
        if not (isinstance(la_t, list) and isinstance(lu_t, list) and len(la_t) == n and len(lu_t) == n):
            raise Reject("bounds do not list one gap per token")
        if la_t[winner] is not None or lu_t[winner] is not None:
            raise Reject(f"bounds list a gap for the winner itself (token {winner})")
        la = [None if j == winner else parse_dyadic(la_t[j]) for j in range(n)]
        lu = [None if j == winner else parse_dyadic(lu_t[j]) for j in range(n)]
        display = display_fields(winner, tau_star, la, lu, version=cert.get("version"))
        _check_display(cert, display)  # cheap, before the enclosure; the numbers themselves are proven below
    except Reject as exc:
        return IndependentResult(False, str(exc), seconds=time.perf_counter() - started, arith=arith)
    except READ_ERRORS as exc:  # the reading code met a value of the wrong type/shape: a refusal, as above
        return IndependentResult(False, f"malformed certificate ({type(exc).__name__}: {str(exc)[:100]})",
                                 seconds=time.perf_counter() - started, arith=arith)
    try:  # 2. the enclosure and the proofs, on the numbers read above: an exception here is a crash
        def overlap(idx, U, A, S, ar):
            if ends[idx] is None:
                return
            for c, (x, (mid, rad)) in enumerate(zip(list(U) + list(A), ends[idx])):
                lo, hi = ar.bounds(x)
                if hi < mid - rad or lo > mid + rad:
                    raise Reject(f"step {idx - 1} (tau = {float(grid[idx]):.6g}): the recorded end ball of "
                                 f"component {c} is disjoint from the independent enclosure "
                                 f"[{float(lo):.17g}, {float(hi):.17g}]")

        enc = enclose_tau_system(u0, a0, b, grid, prec=prec, order=order, tol=tol, arith=arith,
                                 on_grid=overlap, max_tries=SUBSTEPS_PER_STEP * max(1, len(steps)),
                                 deadline=None if time_budget is None else started + time_budget)
        U, A, _ = enc.states[-1]
        with arithmetic(arith, prec) as ar:
            own_a, own_u = prove_gap_bounds(ar, U, A, n, winner, la, lu)
    except Reject as exc:
        return IndependentResult(False, str(exc), seconds=time.perf_counter() - started, arith=arith)
    except Exception as exc:  # a bug of this checker on input it accepted: recorded as a crash
        crash = f"{type(exc).__name__}: {str(exc)[:200]}"
        return IndependentResult(False, f"the independent checker crashed ({crash})",
                                 seconds=time.perf_counter() - started, arith=arith, crashed=crash)
    return IndependentResult(True, "", winner, tau_star, tuple(la), tuple(lu), tuple(own_a), tuple(own_u),
                             enc.substeps, time.perf_counter() - started, arith, display)


__all__ = ["Reject", "IndependentResult", "TauEnclosure", "independent_check", "enclose_tau_system",
           "exact_initial", "check_model", "display_fields", "INIT_MODEL", "parse_ball", "parse_dyadic", "poly_field",
           "taylor", "arithmetic"]
