r"""Validated (interval) integration of the logistic tau-system with arb balls.

The system ($\star$) of :mod:`theorems.trapping` (paper-notes#logistic, [D]):

.. math:: \frac{du}{d\tau}=b\,s,\qquad \frac{da}{d\tau}=J(s)u,\qquad s=\operatorname{softmax}(a).

Every quantity is an arb ball (``python-flint``: midpoint, radius, every
rounding error added to the radius), so each result *contains* the exact value.
One step from an enclosure $X_0\ni x(\tau_0)$ with an exact dyadic step $h$:

1. **A-priori enclosure** (existence and a box for the whole step). Find a box
   $B$ with

   .. math:: X_0+[0,h]\,f(B)\subset\operatorname{int}B .

   Then for every $y\in X_0$ the solution through $y$ exists on $[0,h]$ and
   stays in $B$: if it left $B$ first at $\theta<h$, then
   $x(\theta)=y+\int_0^\theta f(x)\in X_0+[0,h]f(B)\subset\operatorname{int}B$,
   a contradiction. $B$ is found by Picard iteration on boxes
   $B\leftarrow\operatorname{inflate}(X_0+[0,h]f(B))$; the inclusion is *checked*
   in ball arithmetic (:func:`check_apriori`), so the way $B$ was found does not matter.
2. **Tight enclosure** at $\tau_0+h$: Taylor's theorem with the Lagrange
   remainder, component by component,

   .. math:: x(\tau_0+h)\in\sum_{k=0}^{p}c_k(X_0)\,h^k+c_{p+1}(B)\,h^{p+1},

   where $c_k(y)$ is the $k$-th Taylor coefficient of the solution through $y$
   (the system is autonomous, so the remainder term is $c_{p+1}(x(\xi))$ with
   $x(\xi)\in B$). The $c_k$ are computed exactly as functions of the initial
   ball by Picard iteration in truncated power-series arithmetic
   (``arb_series``): after $k$ iterations the first $k+1$ coefficients are the
   true ones (:func:`taylor_coefficients`).

The softmax is evaluated as $s_k=e^{a_k-a_r}/\sum_m e^{a_m-a_r}$ with a reference
token $r$ (the largest midpoint) and $u_k-z=(u_k-u_r)-\sum_m s_m(u_m-u_r)$: exact
identities that keep the dependency (wrapping) effect of interval arithmetic
small once one token dominates.

Step sizes are *chosen* with floating point (they only need to be good, not
correct); everything that decides containment is ball arithmetic at ``prec``
bits. No float enters an enclosure: initial data come from exact rationals
(:func:`arb_from_rational`), step sizes are exact dyadics.

Global state: python-flint's ``ctx.prec`` and ``ctx.cap`` are set inside
:func:`arb_context` and restored on exit. flint is imported lazily.
"""
from __future__ import annotations

import contextlib
import math
import re
import time
from dataclasses import dataclass, field
from fractions import Fraction

from theorems import InvalidArgument, check_int

#: Default working precision in bits (about 38 decimal digits).
DEFAULT_PREC = 128
#: Default Taylor order p (remainder term of order p+1).
DEFAULT_ORDER = 20
#: Bits of the mantissa of a chosen step size (steps are m * 2^-k with m < 2^STEP_BITS).
STEP_BITS = 24
#: Largest binary exponent accepted when reading balls and dyadics (guards the checker's run time).
MAX_EXPONENT = 100_000


def _flint():
    import flint  # lazy: keeps `import numerics` light
    return flint


@contextlib.contextmanager
def arb_context(prec: int, cap: int = 64):
    """Set flint's working precision (bits) and series cap; restore both on exit."""
    ctx = _flint().ctx
    old_prec, old_cap = ctx.prec, ctx.cap
    ctx.prec, ctx.cap = prec, max(cap, old_cap)
    try:
        yield
    finally:
        ctx.prec, ctx.cap = old_prec, old_cap


# ---------------------------------------------------------------------------------------
# exact conversions
# ---------------------------------------------------------------------------------------
def arb_from_rational(q: Fraction):
    """The arb ball of the current precision that contains the rational ``q`` (exact if dyadic and short)."""
    flint = _flint()
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def _dyadic(m: int, e: int) -> Fraction:
    return Fraction(m) * (Fraction(2) ** e)


def ball_to_str(x) -> str:
    """Exact text of a ball: ``'M*2^E +/- R*2^F'`` with integers M, E, R, F (midpoint and radius)."""
    m, e = x.mid().man_exp()
    r, f = x.rad().man_exp()
    return f"{int(m)}*2^{int(e)} +/- {int(r)}*2^{int(f)}"


_BALL_RE = re.compile(r"^\s*(-?\d+)\*2\^(-?\d+)\s*\+/-\s*(\d+)\*2\^(-?\d+)\s*$")


def ball_from_str(text: str):
    """Inverse of :func:`ball_to_str`; the ball is rebuilt exactly (raises ``InvalidArgument`` if it cannot be)."""
    flint = _flint()
    mt = _BALL_RE.match(text) if isinstance(text, str) else None
    if mt is None:
        raise InvalidArgument(f"ball={text!r} is not allowed; expected 'M*2^E +/- R*2^F' with integers")
    m, e, r, f = (int(g) for g in mt.groups())
    if max(abs(e), abs(f), m.bit_length(), r.bit_length()) > MAX_EXPONENT:
        raise InvalidArgument(f"ball={text[:60]!r}...: exponents or mantissas beyond 2^{MAX_EXPONENT}")
    mid, rad = _dyadic(m, e), _dyadic(r, f)
    x = flint.arb(flint.fmpq(mid.numerator, mid.denominator), flint.arb(flint.fmpq(rad.numerator, rad.denominator)))
    xm, xe = x.mid().man_exp()
    if _dyadic(int(xm), int(xe)) != mid:
        raise InvalidArgument(f"ball={text!r}: midpoint needs more than the working precision to be exact")
    xr, xf = x.rad().man_exp()
    if _dyadic(int(xr), int(xf)) < rad:
        raise InvalidArgument(f"ball={text!r}: radius was rounded down")
    return x


def dyadic_to_str(q: Fraction) -> str:
    """Exact text of a dyadic rational step or time: ``'m/2^k'``."""
    q = Fraction(q)
    k = q.denominator.bit_length() - 1
    if q.denominator != 1 << k:
        raise InvalidArgument(f"q={q!r} is not a dyadic rational")
    return f"{q.numerator}/2^{k}"


def dyadic_from_str(text: str) -> Fraction:
    """Inverse of :func:`dyadic_to_str`."""
    mt = re.match(r"^\s*(-?\d+)/2\^(\d+)\s*$", text) if isinstance(text, str) else None
    if mt is None:
        raise InvalidArgument(f"dyadic={text!r} is not allowed; expected 'm/2^k' with integers m, k >= 0")
    if int(mt.group(2)) > MAX_EXPONENT or len(mt.group(1)) > MAX_EXPONENT // 3:
        raise InvalidArgument(f"dyadic={text[:60]!r}: exponent beyond {MAX_EXPONENT}")
    return Fraction(int(mt.group(1)), 1 << int(mt.group(2)))


def _lower(x) -> float:
    return float(x.lower())


def _mag(x) -> float:
    """A float upper bound (up to float rounding) of |x|: for step-size heuristics only."""
    return float(abs(x).upper())


# ---------------------------------------------------------------------------------------
# the vector field, generic over arb and arb_series
# ---------------------------------------------------------------------------------------
def round_down(q: Fraction, bits: int) -> Fraction:
    """The largest dyadic rational with ``bits`` significant bits that is ``<= q`` (0 stays 0): a short,
    exact lower bound of ``q`` for the gap margins the certifier and the box engine store (their
    checkers re-derive each margin and test it, so the rounding is a presentation choice, never trusted)."""
    if q == 0:
        return Fraction(0)
    e = abs(q).numerator.bit_length() - abs(q).denominator.bit_length()
    scale = Fraction(2) ** (bits - 1 - e)
    return Fraction(math.floor(q * scale)) / scale


def softmax_ref(a, ref: int, one):
    r"""$s_k=e^{a_k-a_r}/\sum_m e^{a_m-a_r}$ for a list ``a`` of arb balls or arb series.

    Softmax is shift invariant, so the reference token $r$ is any choice (exact); the largest
    logit keeps the balls tight. ``one`` is the unit of the ring.
    """
    n = len(a)
    e = [one if k == ref else (a[k] - a[ref]).exp() for k in range(n)]
    total = e[0]
    for k in range(1, n):
        total = total + e[k]
    inv = one / total
    return [inv if k == ref else e[k] * inv for k in range(n)]


def tau_field(u, a, b, ref: int, one):
    r"""$(du/d\tau, da/d\tau)$ of ($\star$) for lists ``u``, ``a`` of arb balls or arb series.

    ``ref`` is the reference token $r$; ``one`` the unit of the ring (``arb(1)``
    or a series). Uses $s_k=e^{a_k-a_r}/\sum_m e^{a_m-a_r}$ (softmax is shift
    invariant) and $u_k-z=p_k-\sum_m s_mp_m$, $p_k=u_k-u_r$ ($\sum_m s_m=1$).
    """
    n = len(u)
    s = softmax_ref(a, ref, one)
    p = [None if k == ref else u[k] - u[ref] for k in range(n)]
    y = None
    for k in range(n):
        if k != ref:
            term = s[k] * p[k]
            y = term if y is None else y + term
    du = [s[k] * b for k in range(n)]
    da = [-(s[k] * y) if k == ref else s[k] * (p[k] - y) for k in range(n)]
    return du, da


def reference_token(X) -> int:
    """Index of the largest logit midpoint in the state list ``X = u + a``."""
    n = len(X) // 2
    mids = [float(X[n + k].mid()) for k in range(n)]
    return max(range(n), key=lambda k: mids[k])


def field_arb(X, b, ref: int):
    """$f(X)$ for a state list of balls ``X = [u_1..u_n, a_1..a_n]``."""
    flint = _flint()
    n = len(X) // 2
    du, da = tau_field(X[:n], X[n:], b, ref, flint.arb(1))
    return du + da


def taylor_coefficients(X, b, order: int, ref: int):
    r"""Taylor coefficients $c_0..c_{\mathrm{order}}$ of the solution through (every point of) ``X``.

    Picard iteration in power-series arithmetic: $x^{(m)}=X+\int_0^\tau f(x^{(m-1)})$
    truncated at length $m+1$; the coefficient of $\tau^m$ is final after
    iteration $m$. Returns one list of ``order + 1`` arb balls per component.
    Must run inside :func:`arb_context` with ``cap >= order + 1``.
    """
    flint = _flint()
    arb_series, arb = flint.arb_series, flint.arb
    n = len(X) // 2
    C = [[x] for x in X]
    for m in range(1, order + 1):
        xs = [arb_series(c, prec=m) for c in C]
        one = arb_series([1], prec=m)
        du, da = tau_field(xs[:n], xs[n:], b, ref, one)
        for k, F in enumerate(du + da):
            coeffs = F.coeffs()
            new = coeffs[m - 1] / m if m - 1 < len(coeffs) else arb(0)
            C[k].append(new)
    return C


def _interval_0_h(h: Fraction):
    """A ball containing $[0,h]$ (h exact dyadic)."""
    flint = _flint()
    return arb_from_rational(h) * flint.arb(flint.fmpq(1, 2), flint.fmpq(1, 2))


def check_apriori(X, b, h: Fraction, B, ref: int | None = None) -> bool:
    r"""True iff $X+[0,h]f(B)\subset\operatorname{int}B$ is proven in ball arithmetic.

    The reference token only changes how $f$ is evaluated, not its value, so any
    ``ref`` is sound; by default :func:`reference_token` ``(X)``, as used when the
    box is made (a checker must evaluate the same way to reproduce the verdict).
    """
    if ref is None:
        ref = reference_token(X)
    T = _interval_0_h(h)
    F = field_arb(B, b, ref)
    return all(Bk.contains_interior(Xk + T * Fk) for Xk, Bk, Fk in zip(X, B, F))


def _inflate(x, factor: float, floor):
    """A ball with the same midpoint and radius ``factor * rad + floor`` (floor: an arb >= 0)."""
    flint = _flint()
    return flint.arb(x.mid(), x.rad() * factor + floor)


def apriori_enclosure(X, b, h: Fraction, ref: int, *, iterations: int = 6):
    """Find a box $B$ satisfying :func:`check_apriori` for the step ``h``, or ``None``."""
    flint = _flint()
    T = _interval_0_h(h)
    prec = flint.ctx.prec
    F = field_arb(X, b, ref)
    K = [Xk + T * Fk for Xk, Fk in zip(X, F)]
    for _ in range(iterations):
        B = [_inflate(Kk, 1.5, (abs(Kk.mid()) + 1) * flint.arb(2) ** (-(prec // 2))) for Kk in K]
        if check_apriori(X, b, h, B, ref):
            return B
        F = field_arb(B, b, ref)
        K = [Xk + T * Fk for Xk, Fk in zip(X, F)]
        K = [Kk.union(Bk) for Kk, Bk in zip(K, B)]
    return None


def step_enclosure(X, b, h: Fraction, B, order: int, ref: int | None = None, CX=None):
    r"""Tight enclosure of $x(\tau_0+h)$: $\sum_{k\le p}c_k(X)h^k+c_{p+1}(B)h^{p+1}$.

    Sound only when ``B`` satisfies :func:`check_apriori` for ``(X, h)``; the
    caller must check that first (:func:`validated_step` does).
    """
    if ref is None:
        ref = reference_token(X)
    hb = arb_from_rational(h)
    if CX is None:
        CX = taylor_coefficients(X, b, order, ref)
    CB = taylor_coefficients(B, b, order + 1, reference_token(B))
    out = []
    remainder = 0.0
    hp = hb ** (order + 1)
    for cx, cb in zip(CX, CB):
        acc = cb[order + 1]
        remainder = max(remainder, _mag(acc * hp))
        for k in range(order, -1, -1):
            acc = acc * hb + cx[k]
        out.append(acc)
    return out, remainder


def pad(x, prec: int):
    """Widen a ball by a few units in the last place, so a re-computation with another flint build still fits."""
    flint = _flint()
    extra = (abs(x.mid()) + flint.arb(2) ** (-prec)) * flint.arb(2) ** (-(prec - 8))
    return flint.arb(x.mid(), x.rad() * (1 + 2.0 ** -20) + extra)


def choose_step(CX, tol: float, order: int, h_max: float) -> float:
    """A step with estimated truncation error ``tol`` from the last two Taylor coefficients (float heuristic)."""
    h = h_max
    for k in (order - 1, order):
        mag = max(_mag(c[k]) for c in CX)
        if mag > 0 and math.isfinite(mag):
            h = min(h, (tol / mag) ** (1.0 / k))
    return 0.8 * h


def to_dyadic(h: float) -> Fraction:
    """Round a positive float step down to a dyadic with ``STEP_BITS`` mantissa bits."""
    if not (h > 0 and math.isfinite(h)):
        raise InvalidArgument(f"h={h!r} is not a positive finite step")
    k = STEP_BITS - math.frexp(h)[1]
    return Fraction(math.floor(h * 2.0**k), 1) / (Fraction(2) ** k) if k >= 0 else Fraction(math.floor(h))


# ---------------------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------------------
@dataclass
class Step:
    """One validated step: start time, exact step, a-priori box, end enclosure.

    ``box_text`` / ``end_text`` are the exact texts (:func:`ball_to_str`) and
    ``box`` / ``end`` the balls read back from them (:func:`ball_from_str`):
    the run itself continues from the read-back balls, so a checker that reads
    the same texts repeats the run's arithmetic exactly.
    """

    tau: Fraction
    h: Fraction
    box: list
    end: list
    box_text: list
    end_text: list


@dataclass
class Enclosure:
    r"""A validated enclosure of ($\star$) from ``tau = 0``.

    ``initial``: the initial balls; ``steps``: the validated steps; ``status``:
    ``'complete'`` (reached ``tau_end``), ``'stopped'`` (the ``stop`` predicate
    fired), ``'too wide'``, ``'step underflow'``, ``'max steps'`` or
    ``'time budget'``; ``reason``: words for the last three. The union of the
    a-priori boxes encloses the solution on $[0,\tau]$; ``final`` the state at ``tau``.
    """

    initial: list
    b: object
    initial_text: list
    b_text: str
    prec: int
    order: int
    steps: list = field(default_factory=list)
    status: str = "complete"
    reason: str = ""
    seconds: float = 0.0

    @property
    def tau(self) -> Fraction:
        return self.steps[-1].tau + self.steps[-1].h if self.steps else Fraction(0)

    @property
    def final(self) -> list:
        return self.steps[-1].end if self.steps else self.initial

    def max_radius(self) -> float:
        return max(float(x.rad()) for x in self.final)


def canonical(x) -> tuple[str, object]:
    """``(text, ball)``: the exact text of ``x`` and the ball read back from it (which contains ``x``)."""
    text = ball_to_str(x)
    return text, ball_from_str(text)


def validated_step(X, b, h: Fraction, order: int, *, prec: int, CX=None, max_remainder: float | None = None):
    """One step from ``X`` with step ``h``.

    Returns ``((box_text, box, end_text, end), remainder)`` on success and
    ``(None, why)`` when no a-priori box was found or the Lagrange remainder
    term (a float upper bound of its largest component) exceeds
    ``max_remainder`` (a tightness choice, not a soundness one). The box is
    re-checked after its round trip through text; ``CX``: the Taylor
    coefficients :func:`taylor_coefficients` ``(X, b, order, reference_token(X))``
    if already computed.
    """
    ref = reference_token(X)
    B = apriori_enclosure(X, b, h, ref)
    if B is None:
        return None, "no a-priori box"
    box_text, box = zip(*(canonical(x) for x in B))
    box = list(box)
    if not check_apriori(X, b, h, box, ref):
        return None, "no a-priori box"
    end, remainder = step_enclosure(X, b, h, box, order, ref, CX)
    if max_remainder is not None and not remainder <= max_remainder:
        return None, f"remainder {remainder:.3g} > {max_remainder:.3g}"
    end_text, end = zip(*(canonical(pad(x, prec)) for x in end))
    return (list(box_text), box, list(end_text), list(end)), remainder


#: the default truncation tolerance stops shrinking at this many bits: 2**-(prec/2) would underflow to
#: 0.0 as a float from prec 2100 (every step then fails: "step underflow" at 4096 bits) and costs
#: steps ~ tol**(-1/order) before that (512 bits: 4,539 steps where 128 bits takes 29). Beyond it,
#: a higher precision tightens the rounding of every ball, not the truncation target.
TOL_BITS_MAX = 64


def default_tolerance(prec: int) -> float:
    """The default per-step truncation tolerance: ``2**-(prec/2)``, and ``2**-64`` from 128 bits on."""
    return 2.0 ** -min(prec / 2, TOL_BITS_MAX)


def enclose(u0, a0, b, tau_end, *, prec: int = DEFAULT_PREC, order: int = DEFAULT_ORDER,
            tol: float | None = None, h_max: float = 1.0, max_width: float = 1e-2,
            max_steps: int = 100_000, time_budget: float | None = None, stop=None,
            progress=None) -> Enclosure:
    r"""Validated enclosure of ($\star$) on $[0,\tau_{\rm end}]$ from exact initial data.

    Args:
        u0, a0: sequences of ``Fraction`` (exact initial projections and logits).
        b: ``Fraction`` > 0, $\|w\|^2$.
        tau_end: ``Fraction`` or decimal string; the enclosure stops there.
        prec: working precision in bits.
        order: Taylor order $p$.
        tol: target truncation error per step (absolute); default
            $2^{-\mathrm{prec}/2}$. A step whose Lagrange remainder term
            exceeds $\max(\mathrm{tol}, 2^{-6}\cdot$ current largest radius$)$, or
            for which no a-priori box is found, is retried with $h/2$ (down to
            $2^{-40}$: status ``'step underflow'``).
        h_max: largest step.
        max_width: give up (status ``'too wide'``) when a ball radius exceeds it.
        max_steps, time_budget: give up after that many steps / seconds.
        stop: ``stop(X, tau) -> bool`` called on the initial state and after
            every step; ``True`` ends the enclosure with status ``'stopped'``.
        progress: optional ``progress(tau_float)`` callback.
    """
    check_int("prec", prec, minimum=32)
    check_int("order", order, minimum=2)
    n = len(u0)
    if n < 2 or len(a0) != n:
        raise InvalidArgument(f"u0, a0 of lengths {len(u0)}, {len(a0)}: expected equal lengths >= 2")
    tau_end = Fraction(tau_end)
    if tau_end < 0:
        raise InvalidArgument(f"tau_end={tau_end} is not allowed; expected >= 0")
    tol = default_tolerance(prec) if tol is None else float(tol)
    started = time.perf_counter()
    with arb_context(prec, cap=order + 4):
        X_text, X = (list(t) for t in zip(*(canonical(arb_from_rational(q)) for q in list(u0) + list(a0))))
        b_text, bb = canonical(arb_from_rational(Fraction(b)))
        enc = Enclosure(initial=X, b=bb, initial_text=X_text, b_text=b_text, prec=prec, order=order)
        tau = Fraction(0)
        if stop is not None and stop(X, tau):
            enc.status = "stopped"
            enc.seconds = time.perf_counter() - started
            return enc
        h_next = None
        width = max(float(x.rad()) for x in X)
        CX = taylor_coefficients(X, bb, order, reference_token(X))
        while tau < tau_end:
            if len(enc.steps) >= max_steps:
                enc.status, enc.reason = "max steps", f"{max_steps} steps taken, tau = {float(tau):.6g}"
                break
            if time_budget is not None and time.perf_counter() - started > time_budget:
                enc.status, enc.reason = "time budget", f"{time_budget} s used, tau = {float(tau):.6g}"
                break
            step_tol = max(tol, width * 2.0**-6)
            if h_next is None:
                h_next = choose_step(CX, step_tol, order, h_max)
            h = min(to_dyadic(max(h_next, 1e-300)), tau_end - tau)
            result, why = None, ""
            while h > Fraction(1, 1 << 40):
                result, info = validated_step(X, bb, h, order, prec=prec, CX=CX, max_remainder=step_tol)
                if result is not None:
                    break
                why = info
                h = h / 2
            if result is None:
                enc.status = "step underflow"
                enc.reason = f"no step h >= 2^-40 at tau = {float(tau):.6g} ({why})"
                break
            box_text, box, end_text, end = result
            grow = 2.0 if info == 0 else min(2.0, 0.9 * (step_tol / info) ** (1.0 / (order + 1)))
            enc.steps.append(Step(tau, h, box, end, box_text, end_text))
            tau += h
            X = end
            if progress is not None:
                progress(float(tau))
            width = max(float(x.rad()) for x in X)
            if not all(x.is_finite() for x in X) or width > max_width:
                enc.status = "too wide"
                enc.reason = f"ball radius {width:.3g} > {max_width:g} at tau = {float(tau):.6g}"
                break
            if stop is not None and stop(X, tau):
                enc.status = "stopped"
                break
            CX = taylor_coefficients(X, bb, order, reference_token(X))
            h_next = min(choose_step(CX, max(tol, width * 2.0**-6), order, h_max), float(h) * grow)
        enc.seconds = time.perf_counter() - started
    return enc
