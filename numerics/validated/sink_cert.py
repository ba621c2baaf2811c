r"""A validated enclosure of softmax1's metastable sink and of its escape into the trapping region [D].

The system is softmax1's reduced logistic system (:func:`theorems.sinks.softmax1_tau_system`) in the
internal clock $\tau$, written in the *inverse weights* $v_k=e^{-a_k}$ (the logits in log form):

.. math:: \frac{du_k}{d\tau}=b\,\varphi_k,\qquad \frac{dv_k}{d\tau}=\varphi_0\,(z-u_k),\qquad
          \varphi_0=\frac1{1+\sum_j1/v_j},\quad \varphi_k=\frac{\varphi_0}{v_k},\quad z=\sum_k\varphi_ku_k

(the rewrite is proven by :func:`theorems.sinks_lemma.rewrite_proofs`). Why these coordinates: in the
sink phase $v_k\approx|u_k|\,\tau$ grows linearly and every entry of the Jacobian is $O(1/v^2)$, which
is integrable in $\tau$, so interval enclosures do not wrap (in the logits $a$ the entries are $O(1)$
in the log clock, with signs that cancel in the true flow but not in interval arithmetic: measured,
the balls grew like $e^{1.6\,\theta}$); and in $\tau$ the take-over after the escape is not stiff.
The state is $(u,v)$, autonomous; one step is the method of :mod:`numerics.validated.enclosure` with
this field: an a-priori box $B$ with $X+[0,h]F(B)\subset\operatorname{int}B$ (checked in ball
arithmetic), then Taylor's theorem with the Lagrange remainder $c_{p+1}(B)h^{p+1}$, the coefficients by
Picard iteration in ``arb_series``. Only the generic pieces of that module are reused (exact
conversions, texts, step choice); the field, the coefficients and the a-priori check are this module's.

A **sink certificate** (:func:`certify_sink`) records, from exact initial data ($u(0)$ and
$v(0)=e^{-a(0)}$ positive rationals; $a(0)=0$ is $v(0)=1$), every step (exact dyadic $h$ in $\tau$, the
a-priori box, the end ball), the winner $i$ (the real token whose region the ball enters) and three
statements, each proven from the balls:

* *sink phase* (``None`` if there is none on a whole step): on the recorded steps $k_1..k_2$ the sink's
  weight $\varphi_0>1-\varepsilon$ on the whole a-priori box, so for every $\tau\in[T_1,T_2]$ (the start of
  step $k_1$, the end of step $k_2$) the sink holds more than $1-\varepsilon$ of the weight;
* *escape* (``None`` if $u_i(0)\ge0$): $u_i<0$ on the ball at the start of step $k^*$ and $u_i>0$ at its
  end, so $\tau^*\in[\tau^*_-,\tau^*_+]$ (the step's ends);
* *entry*: at the end of the last step the ball lies in $R^{(1)+}_i$ ($u_i\ge u_j$, $u_i\ge0$,
  $a_i>a_j$, $a_i>0$, i.e. $v_i<v_j$, $v_i<1$), with exact lower bounds of the gaps. By the
  trapping-region lemma of softmax1 (:mod:`theorems.sinks_lemma`) token $i$ then takes all the
  weight: $\varphi\to e_i$.

:func:`check_sink_certificate` replays the recorded steps with this module's arithmetic;
:mod:`numerics.validated.sink_certcheck` re-proves the three statements with none of this code.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
import copy

from theorems import InvalidArgument, check_int

from . import enclosure as V

FORMAT = "softpolar-sink-certificate"
VERSION = 1
SYSTEM = ("softmax1, logistic loss, reduced system in the internal clock tau, inverse weights v_k = e^(-a_k): "
          "du_k/dtau = b phi_k, dv_k/dtau = phi_0 (z - u_k), phi_0 = 1/(1 + sum_j 1/v_j), phi_k = phi_0/v_k, "
          "z = <u, phi>")
LEMMA = ("theorems.sinks_lemma (softmax1 trapping region, [D]): R1_i^+ = {u_i >= u_j, u_i >= 0, a_i > a_j, "
         "a_i > 0} is forward invariant and inside it softmax1(a) -> e_i (sign facts proven with SymPy, "
         "the continuation and divergence steps argued as for softmax)")
#: default working precision (bits) and Taylor order of the certifier
SINK_PREC, SINK_ORDER = 256, 24
#: significant bits of the recorded gap bounds (exact lower bounds, rounded down: the conclusion needs only their
#: signs; the independent checker's balls end up to 1e6 times wider than the certifier's on head-start
#: instances, measured, so 32 bits left it unable to re-prove bounds that were true)
GAP_BITS = 16
#: a step on which some u_k may cross 0 is halved until it is below this fraction of 1 + tau (so the escape
#: bracket [tau*_-, tau*_+] is that narrow; a choice of the certifier, the checkers only read the bracket)
ESCAPE_REL = Fraction(1, 2**12)
#: limits accepted from a certificate (a replay must not be made to run forever)
MAX_PREC, MAX_ORDER, MAX_STEPS = 2048, 60, 20_000


def _flint():
    import flint
    return flint


# ---------------------------------------------------------------------------------------
# the field, generic over arb and arb_series
# ---------------------------------------------------------------------------------------
def field(X, b, one):
    r"""$(du,dv)/d\tau$ at ``X = [u_1..u_n, v_1..v_n]`` (arb balls or arb series)."""
    n = len(X) // 2
    u, v = X[:n], X[n:]
    inv = [one / x for x in v]
    S = inv[0]
    for x in inv[1:]:
        S = S + x
    phi0 = one / (one + S)
    phi = [x * phi0 for x in inv]
    z = phi[0] * u[0]
    for k in range(1, n):
        z = z + phi[k] * u[k]
    return [b * p for p in phi] + [phi0 * (z - uk) for uk in u]


def sink_weight(X, one):
    r"""$\varphi_0=1/(1+\sum_k1/v_k)$ on a ball state."""
    n = len(X) // 2
    S = one / X[n]
    for x in X[n + 1:]:
        S = S + one / x
    return one / (one + S)


def taylor_coefficients(X, b, order: int):
    """Taylor coefficients $c_0..c_{order}$ in $\\tau$ through every point of ``X`` (Picard in series)."""
    flint = _flint()
    C = [[x] for x in X]
    # b as the series it is coerced to in every product b * phi_k (the same series, made once); one coefficient
    # of each F_k read (not the list of all of them)
    bs = flint.arb_series(b)
    # the iterates as series grown in place: coefficient m is set once (a ball of working precision, as the
    # constructor would round it); every operation of the field is truncated at m by the unit series ``one``
    # (prec m), so these longer-lived series give the products and quotients of series built at prec m
    xs = [flint.arb_series(c, prec=order + 1) for c in C]
    for m in range(1, order + 1):
        F = field(xs, bs, flint.arb_series([1], prec=m))
        for k, Fk in enumerate(F):
            c = Fk[m - 1] / m if m - 1 < len(Fk) else flint.arb(0)
            C[k].append(c)
            xs[k][m] = c
    return C


def check_apriori(X, b, h: Fraction, B) -> bool:
    r"""True iff $X+[0,h]F(B)\subset\operatorname{int}B$ in ball arithmetic."""
    T = V._interval_0_h(h)
    F = field(B, b, _flint().arb(1))
    return all(Bk.contains_interior(Xk + T * Fk) for Xk, Bk, Fk in zip(X, B, F))


def apriori_box(X, b, h: Fraction, iterations: int = 6):
    flint = _flint()
    T = V._interval_0_h(h)
    prec = flint.ctx.prec
    K = [Xk + T * Fk for Xk, Fk in zip(X, field(X, b, flint.arb(1)))]
    for _ in range(iterations):
        B = [V._inflate(Kk, 1.5, (abs(Kk.mid()) + 1) * flint.arb(2) ** (-(prec // 2))) for Kk in K]
        if check_apriori(X, b, h, B):
            return B
        try:
            F = field(B, b, flint.arb(1))
        except (ZeroDivisionError, ValueError):
            return None
        K = [(Xk + T * Fk).union(Bk) for Xk, Fk, Bk in zip(X, F, B)]
    return None


def one_step(X, b, h: Fraction, order: int, prec: int, CX=None):
    """``(box_text, box, end_text, end, remainder)`` or ``None`` (no a-priori box)."""
    B = apriori_box(X, b, h)
    if B is None:
        return None
    box_text, box = (list(t) for t in zip(*(V.canonical(x) for x in B)))
    if not check_apriori(X, b, h, box):
        return None
    CX = taylor_coefficients(X, b, order) if CX is None else CX
    CB = taylor_coefficients(box, b, order + 1)
    hb = V.arb_from_rational(h)
    hp = hb ** (order + 1)
    end, remainder = [], 0.0
    for cx, cb in zip(CX, CB):
        remainder = max(remainder, V._mag(cb[order + 1] * hp))
        acc = cb[order + 1]
        for k in range(order, -1, -1):
            acc = acc * hb + cx[k]
        end.append(acc)
    end_text, end = (list(t) for t in zip(*(V.canonical(V.pad(x, prec)) for x in end)))
    return box_text, box, end_text, end, remainder


# ---------------------------------------------------------------------------------------
# the statements proven from the balls
# ---------------------------------------------------------------------------------------
def _q(x) -> Fraction:
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def lower(x) -> Fraction:
    """Exact lower bound of a ball."""
    return _q(x.lower())


def upper(x) -> Fraction:
    return _q(x.upper())


def region_bounds(X, n: int, i: int = 0):
    r"""Exact lower bounds of the gaps of $R^{(1)+}_i$ on ``X``: ``(u_gaps, v_gaps)``; index 0 is the sink
    ($u_i-0$ and $1-v_i$, i.e. $a_i>0$), then the other real tokens $j$ in order ($u_i-u_j$ and $v_j-v_i$,
    i.e. $a_i>a_j$)."""
    u, v = X[:n], X[n:]
    others = [j for j in range(n) if j != i]
    return [lower(u[i])] + [lower(u[i] - u[j]) for j in others], \
           [lower(1 - v[i])] + [lower(v[j] - v[i]) for j in others]


def in_region(X, n: int, i: int = 0) -> bool:
    ug, vg = region_bounds(X, n, i)
    return all(g >= 0 for g in ug) and all(g > 0 for g in vg)


@dataclass
class SinkCertificate:
    """The certificate (``data``: the JSON-able dict) and the run's facts."""

    data: dict
    steps: int
    seconds: float
    status: str


def _rat(q: Fraction) -> str:
    return f"{q.numerator}/{q.denominator}"


def _parse_rat(text) -> Fraction:
    if not isinstance(text, str) or len(text) > 4000:
        raise InvalidArgument(f"rational={str(text)[:60]!r} is not allowed; expected a string 'p/q'")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise InvalidArgument(f"rational={text!r} is not allowed; expected 'p/q' with integers") from None


def _prove_statements(steps, n: int, eps: Fraction, one, i: int):
    r"""The sink-phase run (or ``None``: none on a whole step), the escape bracket of $u_i$ (``None`` when
    $u_i(0)\ge0$) and the entry bounds into $R^{(1)+}_i$, from the balls; ``(None, why)`` when one fails.

    ``steps``: dicts with ``tau``, ``h`` (exact), ``start``, ``box``, ``end`` (balls)."""
    best, cur = None, None
    for k, st in enumerate(steps):
        if lower(sink_weight(st["box"], one)) > 1 - eps:
            cur = (cur[0], k) if cur is not None else (k, k)
            if best is None or cur[1] - cur[0] > best[1] - best[0]:
                best = cur
        else:
            cur = None
    sink = None
    if best is not None:
        k1, k2 = best
        sink = {"steps": [k1, k2], "tau_lower": _rat(steps[k1]["tau"]),
                "tau_upper": _rat(steps[k2]["tau"] + steps[k2]["h"]), "eps": _rat(eps)}
    escape = None
    if upper(steps[0]["start"][i]) < 0:
        esc = next((k for k, st in enumerate(steps) if upper(st["start"][i]) < 0 < lower(st["end"][i])), None)
        if esc is None:
            return None, f"no step on which u_{i + 1} provably changes sign"
        escape = {"step": esc, "tau_star_lower": _rat(steps[esc]["tau"]),
                  "tau_star_upper": _rat(steps[esc]["tau"] + steps[esc]["h"])}
    last = steps[-1]["end"]
    if not in_region(last, n, i):
        return None, f"the last ball is not inside R1_{i + 1}^+"
    ug, vg = region_bounds(last, n, i)
    return {"sink_phase": sink, "escape": escape,
            "entry": {"tau": _rat(steps[-1]["tau"] + steps[-1]["h"]),
                      "u_gap_lower": [_rat(V.round_down(g, GAP_BITS)) for g in ug],
                      "v_gap_lower": [_rat(V.round_down(g, GAP_BITS)) for g in vg]}}, ""


def _exact(name: str, x) -> Fraction:
    """``x`` as an exact rational (a float at its exact binary value); ``InvalidArgument`` names ``name``."""
    if isinstance(x, bool):
        raise InvalidArgument(f"{name}={x!r} is not allowed; expected a rational number")
    try:
        q = Fraction(x)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise InvalidArgument(f"{name}={x!r} is not allowed; expected a rational number (int, Fraction, "
                              "'p/q' or a finite decimal)") from None
    return q


def _scale(X) -> float:
    return max(1.0, max(V._mag(x) for x in X))


def certify_sink(u0, b, *, v0=None, eps=Fraction(1, 10**6), prec: int = SINK_PREC, order: int = SINK_ORDER,
                 tau_max=Fraction(10**60), max_steps: int = 5000, time_budget: float | None = None,
                 v_margin=Fraction(1, 2)) -> SinkCertificate:
    r"""Enclose softmax1's system from $u(0)=$ ``u0`` and the inverse weights $v(0)=e^{-a(0)}=$ ``v0``
    (exact positive rationals; default 1, i.e. $a(0)=0$) until the ball lies in $R^{(1)+}_i$ for some real
    token $i$ (the winner) with $v_i\le$ ``v_margin`` ($a_i\ge\log2$ by default: a tightness choice);
    record the certificate (``data``) and prove its statements (module docstring): the sink phase (``None``
    when the sink never holds $1-\varepsilon$ on a whole step), the escape of $u_i$ (``None`` when
    $u_i(0)\ge0$), the entry.

    Raises ``InvalidArgument`` for bad input; the returned ``status`` is ``'certified'`` or why not. The
    per-step truncation target is relative: $2^{-\mathrm{prec}/3}\max(1,\max|x|)$.
    """
    check_int("prec", prec, minimum=64)
    check_int("order", order, minimum=4)
    for name, x in (("u0", u0), ("v0", v0)):
        if x is not None and (isinstance(x, (str, bytes)) or not hasattr(x, "__len__")):
            raise InvalidArgument(f"{name}={x!r} is not allowed; expected a sequence of rationals")
    u0 = [_exact("u0", x) for x in u0]
    n = len(u0)
    v0 = [Fraction(1)] * n if v0 is None else [_exact("v0", x) for x in v0]
    b, eps, tau_max = _exact("b", b), _exact("eps", eps), _exact("tau_max", tau_max)
    if n < 1 or len(v0) != n or b <= 0 or not 0 < eps < 1:
        raise InvalidArgument(f"u0 of length {n}, v0 of length {len(v0)}, b={b}, eps={eps}: expected n >= 1 "
                              "entries each, b > 0, 0 < eps < 1")
    if any(x <= 0 for x in v0):
        raise InvalidArgument(f"v0={[str(x) for x in v0]}: expected positive inverse weights e^(-a(0))")
    flint = _flint()
    started = time.perf_counter()
    with V.arb_context(prec, cap=order + 4):
        one = flint.arb(1)
        X = [V.canonical(V.arb_from_rational(q))[1] for q in [*u0, *v0]]
        bb = V.arb_from_rational(b)
        steps, tau, status, winner = [], Fraction(0), "certified", None
        rel = 2.0 ** -(prec // 3)
        CX = taylor_coefficients(X, bb, order)
        h_next = V.choose_step(CX, rel * _scale(X), order, 1.0)
        while True:
            if len(steps) >= max_steps or tau >= tau_max:
                status = f"no entry into any R1_i^+ within {len(steps)} steps, tau = {float(tau):.4g}"
                break
            if time_budget is not None and time.perf_counter() - started > time_budget:
                status = f"time budget {time_budget} s used at tau = {float(tau):.4g}"
                break
            tol = max(rel * _scale(X), 2.0**-6 * max(float(x.rad()) for x in X))
            h = V.to_dyadic(h_next)
            res = None
            while h > Fraction(1, 1 << 30):
                res = one_step(X, bb, h, order, prec, CX)
                if res is not None and res[4] <= tol:
                    crossing = any(upper(X[k]) < 0 <= upper(res[3][k]) for k in range(n))
                    if not (crossing and h > (tau + 1) * ESCAPE_REL):
                        break
                res, h = None, h / 2
            if res is None:
                status = f"step underflow at tau = {float(tau):.4g}"
                break
            box_text, box, end_text, end, rem = res
            steps.append({"tau": tau, "h": h, "start": X, "box": box, "end": end,
                          "box_text": box_text, "end_text": end_text})
            tau += h
            X = end
            if any(float(x.rad()) > 1e-6 * max(1.0, V._mag(x)) for x in X):
                status = f"balls too wide at tau = {float(tau):.4g}"
                break
            winner = next((i for i in range(n) if in_region(X, n, i) and upper(X[n + i]) <= v_margin), None)
            if winner is not None:
                break
            CX = taylor_coefficients(X, bb, order)
            grow = 2.0 if rem == 0 else min(2.0, 0.9 * (tol / rem) ** (1.0 / (order + 1)))
            h_next = min(V.choose_step(CX, rel * _scale(X), order, float(tau) + 1.0), float(h) * grow)
        facts, why = (None, status) if status != "certified" else _prove_statements(steps, n, eps, one, winner)
        if facts is None:
            status = why
    data = {"format": FORMAT, "version": VERSION, "system": SYSTEM, "lemma": LEMMA,
            "init": {"u0": [_rat(x) for x in u0], "v0": [_rat(x) for x in v0], "b": _rat(b)},
            "winner": None if winner is None else winner + 1, "eps": _rat(eps),
            "prec": prec, "order": order,
            "steps": [{"tau": V.dyadic_to_str(s["tau"]), "h": V.dyadic_to_str(s["h"]),
                       "box": s["box_text"], "end": s["end_text"]} for s in steps]}
    if facts is not None:
        data.update(facts)
    return SinkCertificate(data, len(steps), time.perf_counter() - started, status)


class ReplayVerdict(tuple):
    """``(ok, why)`` of :func:`check_sink_certificate`, with ``crashed``: ``'Type: message'`` of an exception of
    the replay's own code on a certificate it had read (``ok`` is then False, and it is no refusal), else ``''``."""

    crashed: str

    def __new__(cls, ok: bool, why: str, crashed: str = ""):
        out = super().__new__(cls, (ok, why))
        out.crashed = crashed
        return out


#: what reading a certificate's numbers may raise on a malformed one (a refusal, never a crash)
_READ_ERRORS = (InvalidArgument, KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError)


class _Malformed(Exception):
    pass


def _reading(f, *args):
    """``f(*args)``, a piece of the certificate's reading: its errors become :class:`_Malformed` (a refusal)."""
    try:
        return f(*args)
    except _READ_ERRORS as exc:
        raise _Malformed(str(exc)) from None


def check_sink_certificate(data: dict) -> ReplayVerdict:
    """Replay a sink certificate with this module's arithmetic: every a-priori inclusion, every end ball,
    and the three statements re-derived from the balls (the recorded ones, which the replay then vouches for;
    the statements are compared first, so a wrong one is refused without replaying the arithmetic).
    ``(ok, why)`` (a :class:`ReplayVerdict`: ``crashed`` says whether the replay's own code raised on a certificate
    it had read; a malformed one is refused); never raises on content."""
    try:
        return ReplayVerdict(*_replay(data))
    except _Malformed as exc:
        return ReplayVerdict(False, f"malformed certificate: {exc}")
    except Exception as exc:  # a bug of the replay on what it read: a crash, never a finding
        crash = f"{type(exc).__name__}: {str(exc)[:200]}"
        return ReplayVerdict(False, f"the replay crashed ({crash})", crash)


def _read_head(data):
    """The certificate's settings and initial data, read: ``None`` and why when refused."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        return None, "not a sink certificate of this version"
    prec, order = data["prec"], data["order"]
    if not (isinstance(prec, int) and 64 <= prec <= MAX_PREC and isinstance(order, int) and 4 <= order <= MAX_ORDER):
        return None, f"prec={prec!r}, order={order!r} out of range"
    if len(data["steps"]) > MAX_STEPS:
        return None, f"{len(data['steps'])} steps > {MAX_STEPS}"
    for key, want in (("system", SYSTEM), ("lemma", LEMMA)):
        if data.get(key) != want:
            return None, f"{key} is not this module's text"
    if set(data) != CERT_KEYS or set(data["init"]) != {"u0", "v0", "b"}:
        return None, (f"unknown or missing fields: {sorted(map(str, set(data) ^ CERT_KEYS))} at the top, init "
                      f"{sorted(map(str, data['init']))}; expected {sorted(CERT_KEYS)} and init u0, v0, b")
    init = data["init"]
    u0 = [_parse_rat(x) for x in init["u0"]]
    v0 = [_parse_rat(x) for x in init["v0"]]
    n = len(u0)
    if n < 1 or len(v0) != n or any(x <= 0 for x in v0):
        return None, "v0 must be n >= 1 positive rationals"
    winner = data["winner"]
    if isinstance(winner, bool) or not isinstance(winner, int) or not 1 <= winner <= n:
        return None, f"winner={winner!r} is not a token 1..{n}"
    b = _parse_rat(init["b"])
    if b <= 0:
        return None, "b <= 0"
    return (prec, order, u0, v0, n, winner, b, _parse_rat(data["eps"])), ""


#: the keys of a certified sink certificate and of each recorded step (the replay refuses others)
CERT_KEYS = frozenset({"format", "version", "system", "lemma", "init", "winner", "eps", "prec", "order", "steps",
                       "sink_phase", "escape", "entry"})
STEP_KEYS = frozenset({"tau", "h", "box", "end"})


def _read_step(st, tau, n):
    """One recorded step, read: ``(h, box, end)``, or ``(None, why)`` when it is refused."""
    if set(st) != STEP_KEYS:
        return None, f"fields {sorted(map(str, st))}; expected exactly {sorted(STEP_KEYS)}"
    if V.dyadic_from_str(st["tau"]) != tau:
        return None, f"tau {st['tau']} is not the sum of the previous steps"
    h = V.dyadic_from_str(st["h"])
    if h <= 0:
        return None, "h <= 0"
    box = [V.ball_from_str(t) for t in st["box"]]
    end_rec = [V.ball_from_str(t) for t in st["end"]]
    if len(box) != 2 * n or len(end_rec) != 2 * n:
        return None, "wrong number of balls"
    return (h, box, end_rec), ""


def _replay(data):
    head, why = _reading(_read_head, data)
    if head is None:
        return False, why
    prec, order, u0, v0, n, winner, b, eps = head
    flint = _flint()
    with V.arb_context(prec, cap=order + 4):
        one = flint.arb(1)
        X = [V.canonical(V.arb_from_rational(q))[1] for q in [*u0, *v0]]
        bb = V.arb_from_rational(b)
        # the statements depend on the recorded balls alone: a well-formed certificate whose statements do not
        # follow from them is refused before its arithmetic is replayed (of one wrong in both, the statement is
        # named); anything malformed is left to the step-by-step replay, which names it where it did before
        parsed, early = _parse_steps(data["steps"], X, n), None
        if parsed is not None:
            try:
                early = _prove_statements(parsed, n, eps, one, winner - 1)
            except _READ_ERRORS:
                early = None
        if early is not None:
            wrong = _compare_statements(data, *early)
            if wrong is not None:
                return wrong
        tau, steps = Fraction(0), []
        for k, st in enumerate(data["steps"]):
            if parsed is not None:
                h, box, end_rec = parsed[k]["h"], parsed[k]["box"], parsed[k]["end"]
            else:
                got, why = _reading(_read_step, st, tau, n)
                if got is None:
                    return False, f"step {k}: {why}"
                h, box, end_rec = got
            if not check_apriori(X, bb, h, box):
                return False, f"step {k}: the a-priori inclusion fails"
            CX, CB = taylor_coefficients(X, bb, order), taylor_coefficients(box, bb, order + 1)
            hb = V.arb_from_rational(h)
            for cx, cb, rec in zip(CX, CB, end_rec):
                acc = cb[order + 1]
                for j in range(order, -1, -1):
                    acc = acc * hb + cx[j]
                if not rec.contains(acc):
                    return False, f"step {k}: the recorded end ball does not contain the enclosure"
            steps.append({"tau": tau, "h": h, "start": X, "box": box, "end": end_rec})
            X, tau = end_rec, tau + h
        if not steps:
            return False, "no steps"
        if early is None:
            facts, why = _prove_statements(steps, n, eps, one, winner - 1)
            wrong = _compare_statements(data, facts, why)
            if wrong is not None:
                return wrong
    return True, f"{len(steps)} steps replayed, the three statements re-derived"


def _parse_steps(records, X, n: int):
    """The recorded steps as ``_prove_statements`` reads them (``start`` the previous recorded end, the first
    ``X``), or ``None`` when one is malformed or inconsistent (the step-by-step replay then names it)."""
    try:
        if not records:
            return None
        tau, out = Fraction(0), []
        for st in records:
            h = V.dyadic_from_str(st["h"])
            box = [V.ball_from_str(t) for t in st["box"]]
            end = [V.ball_from_str(t) for t in st["end"]]
            if (set(st) != STEP_KEYS or V.dyadic_from_str(st["tau"]) != tau or h <= 0 or len(box) != 2 * n
                    or len(end) != 2 * n):
                return None
            out.append({"tau": tau, "h": h, "start": X, "box": box, "end": end})
            X, tau = end, tau + h
        return out
    except (InvalidArgument, KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


def _compare_statements(data, facts, why):
    """``(False, why)`` when the re-derived statements are not the recorded ones, else ``None``."""
    if facts is None:
        return False, why
    for key in ("sink_phase", "escape", "entry"):
        if data.get(key) != facts[key]:
            return False, f"{key}: recorded {str(data.get(key))[:120]} differs from the replay {str(facts[key])[:120]}"
    return None


def doctored(data: dict, *, what: str) -> dict:
    """A wrong certificate for the controls: ``'eps'`` claims the same sink phase for eps = 1e-9 (the
    balls do not show it); ``'u0'`` moves u_1(0) by 1/1000 (the recorded steps no longer enclose that flow)."""
    out = copy.deepcopy(data)
    if what == "eps":
        out["eps"] = out["sink_phase"]["eps"] = _rat(Fraction(1, 10**9))
    elif what == "u0":
        out["init"]["u0"][0] = _rat(_parse_rat(out["init"]["u0"][0]) + Fraction(1, 1000))
    else:
        raise InvalidArgument(f"what={what!r} is not allowed; expected 'eps' or 'u0'")
    return out
