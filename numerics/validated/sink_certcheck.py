r"""The independent checker of sink certificates: another formulation, another enclosure method, own code.

:func:`check_sink_independent` re-proves the three statements of a certificate of
:mod:`numerics.validated.sink_cert` (sink phase, escape bracket, entry into $R^{(1)+}_1$) with none of
its code: it imports nothing from :mod:`numerics.validated.sink_cert` or
:mod:`numerics.validated.enclosure` (the import-graph test of ``tests/test_sink_cert.py`` enforces it),
reads the numbers with the parsers of :mod:`numerics.validated.certcheck` and encloses the flow in
other coordinates with another Taylor method.

The method
==========
The same coordinates as the certifier, $(u,v)$ with $v_k=e^{-a_k}$ (in the logits interval enclosures
wrap, measured: the balls grew like $e^{1.6\theta}$ in the log clock; a first version of this checker in
$(u,e^{a},\varphi_0)$, a polynomial system, ended with balls $10^7$ times wider than the certifier's and
could not re-prove its bounds), but its own field code and another Taylor method:

.. math:: u_k'=b\,r\,y_k,\qquad v_k'=r\,(z-u_k),\qquad y_k=1/v_k,\quad r=\frac1{1+\sum_ky_k},\quad
          z=r\sum_ku_ky_k

(written from the definitions here; that it is the derived system is proven exactly in
``tests/test_sink_cert.py`` and by the claim SINK2.CERT: SymPy evaluates :func:`poly_field` on symbols and
:func:`theorems.prove_zero` decides). The Taylor coefficients come from Cauchy products and the division
recurrence $R=1/D$: $R_m=-\sum_{i<m}R_iD_{m-i}/D_0$ (no series arithmetic, no Picard iteration; the
certifier uses ``arb_series`` Picard iterates).

One substep of size $h$: a box $B$ with $X+[0,h]F(B)\subset\operatorname{int}B$ found by inflation and
decided on exact rational endpoints; then $x(h)\in\sum_{k\le p}c_k(X)h^k+c_{p+1}(B)h^{p+1}$, refused
when that remainder exceeds the tolerance (and refused before $B$ is sought when $c_{p+1}(X)h^{p+1}$
already does: $X\subset B$, so the box's remainder ball contains the point's). Each recorded step of
the certificate is split into $2^j$ equal substeps ($j$ the smallest that works). At
the end of every recorded step the checker's ball must overlap the recorded one (both contain the true
state if both are right); the statements are then proven from the checker's own balls: $r>1-\varepsilon$
on every substep box of the claimed sink steps, $u_i<0$ at the start and $u_i>0$ at the end of the claimed
escape step, and at the end every claimed gap bound ($u_i\ge L$, $u_i-u_j\ge L$, $1-v_i\ge L$,
$v_j-v_i\ge L$; the $v$-gaps $L>0$).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from operator import mul

from .certcheck import READ_ERRORS, Reject, parse_ball, parse_dyadic

#: working precision (bits), Taylor order, largest remainder per substep (relative to max(1, |x|)), most halvings
CHECK_PREC, CHECK_ORDER, CHECK_REL_TOL, MAX_SPLIT = 224, 20, Fraction(1, 2**90), 12
FORMAT, VERSION = "softpolar-sink-certificate", 1
#: the statement the checker proves things about (its own copy of the text a certificate must carry)
SYSTEM = ("softmax1, logistic loss, reduced system in the internal clock tau, inverse weights v_k = e^(-a_k): "
          "du_k/dtau = b phi_k, dv_k/dtau = phi_0 (z - u_k), phi_0 = 1/(1 + sum_j 1/v_j), phi_k = phi_0/v_k, "
          "z = <u, phi>")
MAX_STEPS = 20_000
#: most substep tries per recorded step, pooled over the certificate (the work bound, from the certificate's own
#: step count): the SINK2.CERT certificate and its witness (431 and 600 steps) needed about 4 tries per step, so
#: 64 refuses nothing genuine, while a doctored step that would halve 2^12 times is refused after 64 tries
SUBSTEPS_PER_STEP = 64


def _arb(q: Fraction):
    import flint
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def _ball(mid: Fraction, rad: Fraction):
    import flint
    return flint.arb(flint.fmpq(mid.numerator, mid.denominator), flint.arb(flint.fmpq(rad.numerator, rad.denominator)))


def _q(y) -> Fraction:
    """The exact value of a zero-radius ball (an endpoint)."""
    m, e = y.man_exp()
    m, e = int(m), int(e)
    return Fraction(m << e) if e >= 0 else Fraction(m, 1 << -e)


def _ends(x) -> tuple[Fraction, Fraction]:
    if not x.is_finite():
        raise Reject("an enclosure became unbounded")
    return _q(x.lower()), _q(x.upper())


def _qq(y):
    """The exact value of a zero-radius ball, as a ``flint.fmpq`` (the same rational as :func:`_q`, faster)."""
    import flint
    m, e = y.man_exp()
    m, e = int(m), int(e)
    return flint.fmpq(m << e) if e >= 0 else flint.fmpq(m, 1 << -e)


def _endsq(x):
    """:func:`_ends` as ``flint.fmpq`` (for the substep's exact tests)."""
    if not x.is_finite():
        raise Reject("an enclosure became unbounded")
    return _qq(x.lower()), _qq(x.upper())


def _mig(x):
    """An exact lower bound of $|y|$ over the (finite) ball ``x``: 0 when it contains 0."""
    lo, hi = _endsq(x)
    return lo if lo > 0 else -hi if hi < 0 else 0


def _inside(K, cand) -> bool:
    """Every ``K`` ball strictly inside its ``cand`` ball (exact endpoint comparisons)."""
    for k, c in zip(K, cand):
        if not k.is_finite():
            raise Reject("an enclosure became unbounded")
        if not (c.lower() < k.lower() and k.upper() < c.upper()):
            return False
    return True


def _rational(text) -> Fraction:
    if not isinstance(text, str) or len(text) > 4000:
        raise Reject(f"{str(text)[:40]!r} is not a rational 'p/q'")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise Reject(f"{text[:40]!r} is not a rational 'p/q'") from None


# ---------------------------------------------------------------------------------------
# the polynomial system and its Taylor recurrence
# ---------------------------------------------------------------------------------------
def poly_field(U, Vv, b, one):
    r"""$(u',v')$ at ``U``, ``Vv`` (lists; ``one`` the ring's unit): works on balls and SymPy expressions."""
    n = len(U)
    y = [one / x for x in Vv]
    r = one / (one + sum(y))
    z = r * sum(U[k] * y[k] for k in range(n))
    return [b * r * y[k] for k in range(n)], [r * (z - U[k]) for k in range(n)]


def _inverse(D, R, m, one):
    """Coefficient ``m`` of ``1/D`` from those of ``D`` (0..m) and of ``1/D`` (0..m-1)."""
    return one / D[0] if m == 0 else -sum(map(mul, R[1:m], D[m - 1:0:-1]), R[0] * D[m]) / D[0]


def cauchy_coefficient(f, g, m):
    r"""Coefficient ``m`` of the Cauchy product $fg$: $\sum_{i\le m}f_ig_{m-i}$ in the order of $i$.

    ``map`` over two slices (no generator), started at the first product rather than at 0: a ball product has
    a midpoint of at most the working precision, so adding it to an exact 0 is exact, and the sum is the one
    ``sum(f[i] * g[m - i] for i in range(m + 1))`` gives, bit for bit."""
    return sum(map(mul, f[1:m + 1], g[m - 1::-1]), f[0] * g[m]) if m else f[0] * g[0]


def _total(xs):
    """``xs[0] + xs[1] + ...`` (left to right; the same balls as ``sum(xs)``, see :func:`cauchy_coefficient`)."""
    acc = xs[0]
    for x in xs[1:]:
        acc = acc + x
    return acc


def taylor(U, Vv, b, order: int, one):
    r"""Coefficients ``(cu, cv)`` of orders 0..order through the point/box ``(U, V)``.

    Cauchy products for every product and the division recurrence ($R=1/D$:
    $R_m=-\sum_{i<m}R_iD_{m-i}/D_0$) for $y_k=1/v_k$ and $r=1/(1+\sum_ky_k)$: no series arithmetic.
    The coefficient of each order does not depend on ``order`` (each is computed once, from lower ones)."""
    n = len(U)
    ks = range(n)
    cu, cv = [[x] for x in U], [[x] for x in Vv]
    Y, UY = ([[] for _ in ks] for _ in range(2))
    D, R, Zs, Z = [], [], [], []
    for m in range(order):
        for k in ks:
            Y[k].append(_inverse(cv[k], Y[k], m, one))      # y_k = 1/v_k
            UY[k].append(cauchy_coefficient(cu[k], Y[k], m))
        ysum = _total([Y[k][m] for k in ks])
        D.append(one + ysum if m == 0 else ysum)
        R.append(_inverse(D, R, m, one))                    # r = 1/(1 + sum_k y_k)
        Zs.append(_total([UY[k][m] for k in ks]))
        Z.append(cauchy_coefficient(R, Zs, m))              # z = r sum_k u_k y_k
        rz = cauchy_coefficient(R, Z, m)                    # the same for every k: computed once
        for k in ks:
            cu[k].append(b * cauchy_coefficient(R, Y[k], m) / (m + 1))
            cv[k].append((rz - cauchy_coefficient(R, cu[k], m)) / (m + 1))
    return cu, cv


def sink_weight(Vv, one):
    return one / (one + sum(one / x for x in Vv))


def _substep(X, b, h: Fraction, order: int, prec: int, cx=None):
    r"""``(end, box)`` of one substep from the flat ball vector ``X = u + v``, or ``None``.

    ``cx``: ``taylor(X, order + 1)`` when the caller has it (every try of a recorded step starts at the same
    point). Its coefficient $p+1$ decides first whether the remainder test below must fail: the box contains
    $X$, so the box's ball of $c_{p+1}h^{p+1}$ contains every value that $X$'s ball does, and when the smallest
    $|\cdot|$ on $X$'s ball is already above the tolerance, so is the largest on the box's: the substep is
    refused (``None``, as the test would) without seeking the box."""
    import flint
    n = len(X) // 2
    one = _arb(1)
    H = _arb(h)
    Hp = H ** (order + 1)
    tol = flint.fmpq(CHECK_REL_TOL.numerator, CHECK_REL_TOL.denominator)
    cu, cv = taylor(X[:n], X[n:], b, order + 1, one) if cx is None else cx
    for coeffs, x in zip(cu + cv, X):
        pr = coeffs[order + 1] * Hp
        if pr.is_finite():
            xlo, xhi = _endsq(x)
            if _mig(pr) > tol * max(1, abs(xlo), abs(xhi)):
                return None
    T = _ball(h / 2, h / 2)
    du, dv = poly_field(X[:n], X[n:], b, one)
    K = [x + T * f for x, f in zip(X, du + dv)]
    box = None
    pad_rel = flint.fmpq(1, 2 ** (prec // 2))
    for _ in range(8):
        cand = []
        for k in K:
            lo, hi = _endsq(k)
            half = (hi - lo) / 2
            pad = half + (abs(lo) + abs(hi) + 1) * pad_rel
            cand.append(flint.arb((lo + hi) / 2, flint.arb(half + pad)))
        if any(c.lower() <= 0 for c in cand[n:]):
            return None
        du, dv = poly_field(cand[:n], cand[n:], b, one)
        K = [x + T * f for x, f in zip(X, du + dv)]
        if _inside(K, cand):
            box = cand
            break
    if box is None:
        return None
    bu, bv = taylor(box[:n], box[n:], b, order + 1, one)
    out = []
    for coeffs, rem, x in zip(cu + cv, bu + bv, X):
        rr = rem[order + 1] * Hp
        lo, hi = _endsq(rr)
        xlo, xhi = _endsq(x)
        if max(abs(lo), abs(hi)) > tol * max(1, abs(xlo), abs(xhi)):
            return None
        acc = coeffs[order]
        for k in range(order - 1, -1, -1):
            acc = acc * H + coeffs[k]
        out.append(acc + rr)
    return out, box


def _overlap(mine, rec_mid: Fraction, rec_rad: Fraction) -> bool:
    lo, hi = _ends(mine)
    return lo <= rec_mid + rec_rad and rec_mid - rec_rad <= hi


@dataclass
class SinkCheckResult:
    """``ok`` with ``reason``; ``substeps`` taken; ``seconds``; ``crashed``: ``'Type: message'`` of an exception
    of this checker's code on a certificate it had read (``ok`` is then False, and it is no refusal), else ``''``."""

    ok: bool
    reason: str
    substeps: int = 0
    seconds: float = 0.0
    crashed: str = ""


def check_sink_independent(cert, *, prec: int = CHECK_PREC, order: int = CHECK_ORDER,
                           time_budget: float | None = None) -> SinkCheckResult:
    """Re-prove a sink certificate's statements (module docstring); never raises on bad content.

    Work bound: at most :data:`SUBSTEPS_PER_STEP` substep tries per recorded step (pooled) and, with
    ``time_budget`` (seconds), at most that long; past either the certificate is refused (``reason`` says which).
    """
    import flint
    started = time.perf_counter()
    old = flint.ctx.prec
    flint.ctx.prec = prec
    crashed = ""
    try:
        try:  # reading: a malformed certificate is refused
            parsed = _read(cert)
        except READ_ERRORS as exc:
            raise Reject(f"malformed certificate: {type(exc).__name__}: {exc}") from None
        try:  # the enclosure and the proofs on what was read: an exception here is a crash of this checker
            ok, why, sub = _check(parsed, prec, order, None if time_budget is None else (started + time_budget,
                                                                                          time_budget))
        except Reject:
            raise
        except Exception as exc:  # recorded as a crash, never as a finding
            crashed = f"{type(exc).__name__}: {str(exc)[:200]}"
            ok, why, sub = False, f"the independent checker crashed ({crashed})", 0
    except Reject as exc:
        ok, why, sub = False, str(exc), 0
    finally:
        flint.ctx.prec = old
    return SinkCheckResult(ok, why, sub, time.perf_counter() - started, crashed)


#: the keys of a certified sink certificate and of each of its objects (anything else is refused: nothing unread
#: passes; ``prec``, ``order`` and ``lemma`` are the certifier's settings and text, which its replay checks)
KEYS = {"": {"format", "version", "system", "lemma", "init", "winner", "eps", "prec", "order", "steps", "sink_phase",
             "escape", "entry"},
        "init": {"u0", "v0", "b"}, "step": {"tau", "h", "box", "end"}, "sink_phase": {"steps", "tau_lower", "tau_upper",
                                                                                       "eps"},
        "escape": {"step", "tau_star_lower", "tau_star_upper"}, "entry": {"tau", "u_gap_lower", "v_gap_lower"}}


def _keys(obj, what: str, where: str) -> None:
    if not isinstance(obj, dict) or set(obj) != KEYS[what]:
        got = set(obj) if isinstance(obj, dict) else set()
        raise Reject(f"{where or 'the certificate'}: keys {sorted(map(str, got))} are not {sorted(KEYS[what])}")


def _read(cert) -> dict:
    """Every number of the certificate, parsed and validated (:class:`Reject` or an exception of
    :data:`numerics.validated.certcheck.READ_ERRORS` on a malformed one: both a refusal)."""
    if not isinstance(cert, dict) or cert.get("format") != FORMAT or cert.get("version") != VERSION:
        raise Reject("not a sink certificate of the version this checker reads")
    _keys(cert, "", "")
    _keys(cert["init"], "init", "init")
    for what in ("sink_phase", "escape"):
        if cert[what] is not None:
            _keys(cert[what], what, what)
    _keys(cert["entry"], "entry", "entry")
    for k, st in enumerate(cert["steps"] if isinstance(cert["steps"], list) else []):
        _keys(st, "step", f"step {k}")
    if cert.get("system") != SYSTEM:
        raise Reject("the certificate is about another system than the one this checker encloses")
    u0 = [_rational(x) for x in cert["init"]["u0"]]
    v0 = [_rational(x) for x in cert["init"]["v0"]]
    n = len(u0)
    if n < 1 or len(v0) != n or any(x <= 0 for x in v0):
        raise Reject("v0 must be n >= 1 positive rationals")
    win = cert["winner"]
    if isinstance(win, bool) or not isinstance(win, int) or not 1 <= win <= n:
        raise Reject(f"winner {str(win)[:20]!r} is not a token 1..{n}")
    bq = _rational(cert["init"]["b"])
    if bq <= 0:
        raise Reject("b <= 0")
    steps = cert["steps"]
    if not isinstance(steps, list) or not 0 < len(steps) <= MAX_STEPS:
        raise Reject("steps: expected a non-empty list")
    sink, esc, entry = cert["sink_phase"], cert["escape"], cert["entry"]
    eps = _rational(cert["eps"])
    if not 0 < eps < 1:
        raise Reject("eps not in (0, 1)")
    k1, k2 = sink["steps"] if sink is not None else (-1, -2)
    if sink is not None and _rational(sink["eps"]) != eps:
        raise Reject("sink_phase.eps differs from eps")
    k_esc = esc["step"] if esc is not None else -1
    if esc is None and u0[win - 1] < 0:
        raise Reject(f"u_{win}(0) < 0 but no escape is claimed")
    for k in (k1, k2, k_esc) if sink is not None else (k_esc,):
        if isinstance(k, bool) or not isinstance(k, int) or not (k == -1 or 0 <= k < len(steps)):
            raise Reject("step indices out of range")
    if sink is not None and not (0 <= k1 <= k2):
        raise Reject("sink_phase steps out of order")
    taus, hs, recs = [], [], []
    for k, st in enumerate(steps):
        taus.append(parse_dyadic(st["tau"]))
        hs.append(parse_dyadic(st["h"]))
        if hs[-1] <= 0:
            raise Reject(f"step {k}: h <= 0")
        recs.append([parse_ball(t) for t in st["end"]])
        if len(recs[-1]) != 2 * n:
            raise Reject(f"step {k}: wrong number of recorded balls")
    claims = {"sink": None if sink is None else (_rational(sink["tau_lower"]), _rational(sink["tau_upper"])),
              "escape": None if esc is None else (_rational(esc["tau_star_lower"]), _rational(esc["tau_star_upper"])),
              "entry": _rational(entry["tau"]),
              "u_gap": [_rational(x) for x in entry["u_gap_lower"]],
              "v_gap": [_rational(x) for x in entry["v_gap_lower"]]}
    return {"u0": u0, "v0": v0, "n": n, "win": win, "b": bq, "eps": eps, "k1": k1, "k2": k2, "k_esc": k_esc,
            "taus": taus, "hs": hs, "recs": recs, "claims": claims}


def _check(c, prec, order, budget=None):
    """The enclosure and the proofs on a certificate :func:`_read` read (an exception here is a crash)."""
    n, win, eps, k1, k2, k_esc = c["n"], c["win"], c["eps"], c["k1"], c["k2"], c["k_esc"]
    i = win - 1
    b = _arb(c["b"])
    X = [_arb(x) for x in c["u0"]] + [_arb(x) for x in c["v0"]]
    nsteps = len(c["hs"])
    tau, substeps, tries, max_tries = Fraction(0), 0, 0, SUBSTEPS_PER_STEP * nsteps
    one = _arb(1)
    for k, (t_k, h, rec) in enumerate(zip(c["taus"], c["hs"], c["recs"])):
        if t_k != tau:
            raise Reject(f"step {k}: tau is not the sum of the previous steps")
        if k == k_esc and not _ends(X[i])[1] < 0:
            raise Reject(f"escape step {k}: u_{win} < 0 at its start is not proven")
        cx = None  # the point coefficients at X, for the first substep of every try
        for j in range(MAX_SPLIT + 1):
            pieces, Y, boxes = 2 ** j, X, []
            for piece in range(pieces):
                if tries >= max_tries:
                    raise Reject(f"work bound: {max_tries} substep tries used up at step {k} ({SUBSTEPS_PER_STEP} "
                                 "per recorded step; a genuine certificate needs a few)")
                if budget is not None and time.perf_counter() > budget[0]:
                    raise Reject(f"time budget of {budget[1]:g} s used up at step {k}, after {tries} substep tries")
                tries += 1
                if piece == 0 and cx is None:
                    cx = taylor(X[:n], X[n:], b, order + 1, one)
                res = _substep(Y, b, h / pieces, order, prec, cx if piece == 0 else None)
                if res is None:
                    break
                Y, box = res
                boxes.append(box)
            else:
                break
        else:
            raise Reject(f"step {k}: no enclosure with 2^{MAX_SPLIT} substeps")
        substeps += pieces
        if k1 <= k <= k2:
            for box in boxes:
                if not _ends(sink_weight(box[n:], one))[0] > 1 - eps:
                    raise Reject(f"step {k}: the sink's weight > 1 - eps is not proven on the whole step")
        if not all(_overlap(m, *r) for m, r in zip(Y, rec)):
            raise Reject(f"step {k}: the recorded end ball is disjoint from the independent enclosure")
        if k == k_esc and not _ends(Y[i])[0] > 0:
            raise Reject(f"escape step {k}: u_{win} > 0 at its end is not proven")
        X, tau = Y, tau + h

    def end_of(k):
        return c["taus"][k] + c["hs"][k]

    claims = c["claims"]
    if claims["sink"] is not None and claims["sink"] != (c["taus"][k1], end_of(k2)):
        raise Reject("sink_phase: the tau interval is not that of the claimed steps")
    if claims["escape"] is not None and claims["escape"] != (c["taus"][k_esc], end_of(k_esc)):
        raise Reject("escape: the tau bracket is not that of the claimed step")
    if claims["entry"] != tau:
        raise Reject("entry: tau is not the end of the last step")
    U, Vv = X[:n], X[n:]
    others = [j for j in range(n) if j != i]
    ug = [U[i]] + [U[i] - U[j] for j in others]
    vg = [one - Vv[i]] + [Vv[j] - Vv[i] for j in others]
    lu, lv = claims["u_gap"], claims["v_gap"]
    if len(lu) != n or len(lv) != n:
        raise Reject("entry: expected n gap bounds of each kind")
    for g, L in zip(ug, lu):
        if not (L >= 0 and _ends(g)[0] >= L):
            raise Reject(f"entry: the u-gap bound {L} is not proven")
    for g, L in zip(vg, lv):
        if not (L > 0 and _ends(g)[0] >= L):
            raise Reject(f"entry: the v-gap bound {L} is not proven (or not > 0)")
    parts = []
    if claims["sink"] is not None:
        parts.append(f"sink weight > 1 - {eps} on steps {k1}..{k2}")
    if claims["escape"] is not None:
        parts.append(f"u_{win} changes sign on step {k_esc}")
    parts.append(f"the end ball inside R1_{win}^+")
    return True, (f"re-proven independently: {', '.join(parts)} ({nsteps} recorded steps, {substeps} "
                  "substeps)"), substeps
