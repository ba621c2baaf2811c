r"""The Taylor backend: the derived flow compiled by heyoka (optional extra ``[taylor]``).

The system comes from :func:`numerics.integrate.taylor_sympy.flow_system` (the SymPy-derived flow,
scalar pieces rewritten for ``heyoka.from_sympy`` and proven equal to the originals) and is
converted with ``heyoka.from_sympy``; nothing is retyped. heyoka then builds a Taylor method of
order $\approx-\tfrac12\ln(\mathrm{tol})$ by automatic differentiation and compiles it with LLVM.

* **Precision**: ``dps=None`` gives float64 (heyoka's default tolerance, machine epsilon);
  ``dps=P`` gives ``heyoka.real`` with ``ceil((P + GUARD_DIGITS) log2 10)`` bits (the same 12 guard
  digits as the GBS backend) and tolerance ``10**-(P+2)``; results are rounded to ``P`` digits
  (``mpf``), exactly like ``backend='mpmath'``. Problem data (float64) enter exactly.
* **Clocks** ``t``, ``log``, ``tau`` as for the other backends (:mod:`numerics.integrate._common`).
  ``t``/``log``: dense output on the grid of requested times (``propagate_grid``). ``tau``: a
  terminal event stops at $T=\log(1+t_{\rm end})$ exactly; the intermediate $t_k$ are located on
  the continuous output by a safeguarded secant solve of $T(\tau)=\log(1+t_k)$.
* **Cache**: compiled integrators are kept per (loss, link, n, d, m, precision, tolerance, clock,
  events) for the life of the process (:func:`cache_info`, :func:`clear_cache`); the problem data
  (target, design) and the non-dyadic rationals are runtime parameters, so one compilation
  serves every problem of that shape.
* **Events** (:func:`taylor_events`): the exact times at which two logits swap rank
  ($a_i=a_j$, claim C14's orderings), and the first entry into the trapping region
  $R_i^+=\{u_i\ge u_j,\ a_i>a_j\}$ (a float64 *prediction*; certificates stay with the validated
  engine).
* **Ensembles** (:func:`integrate_ensemble`): heyoka's SIMD batch mode, float64, a CPU path to
  compare with :func:`numerics.integrate_batch`.

Failures raise :class:`IntegrationError` (non-finite state, ``max_steps``, an event that never
fires); never a short trajectory. Bad input raises :class:`InvalidArgument`. The square / kl
tail-freezing rule of the other backends is not used: the Taylor step grows by itself as the
state converges.
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass

import mpmath
import numpy as np

from theorems import InvalidArgument, get_loss, same_loss

from ._common import IntegrationError, Trajectory, check_descent, check_resolved, prepare_times
from ._freeze import freeze_rule
from ._system import GUARD_DIGITS, assemble_mpmath, assemble_numpy
from ..progress import Progress
from .taylor_sympy import TranslationError, _pieces, flow_system, smooth_reason
from ._clock import _mp, _vector

#: accepted steps allowed by default.
DEFAULT_MAX_STEPS = 100_000


def _import_heyoka():
    """``heyoka`` or ``None`` (the tests monkeypatch this to simulate an install without it)."""
    try:
        import heyoka
    except ImportError:
        return None
    return heyoka


def available() -> bool:
    """Whether the Taylor backend can run (``heyoka`` importable)."""
    return _import_heyoka() is not None


def _hy():
    hy = _import_heyoka()
    if hy is None:
        raise InvalidArgument("backend='taylor' is not available: heyoka is not installed; expected "
                              "`pip install softpolar[taylor]`, or backend='mpmath' / 'auto'")
    return hy


def suits(problem, *, freeze: bool = False) -> tuple[bool, str]:
    """``(ok, reason)``: does the Taylor backend suit ``problem``?

    No when heyoka is missing, when the link or loss is not smooth (read off the expressions:
    ``relu-norm``, ``l1-norm``, a ``Piecewise``), and, with ``freeze=True``, for the square / kl losses, whose
    converged states the GBS and numpy
    backends freeze by a rigorous tail bound (:mod:`numerics.integrate._freeze`) that this backend
    does not compute.
    """
    if not available():
        return False, "heyoka is not installed"
    why = smooth_reason(problem.loss, problem.link, problem.d)
    if why:
        return False, why + " (no Taylor expansion)"
    try:  # the pieces must translate for heyoka.from_sympy, with a proven rewrite (cached per definition)
        _translatable(problem.loss, problem.link, problem.d)
    except TranslationError as e:
        return False, f"the flow has no heyoka form ({e})"
    if freeze and freeze_rule(problem) is not None:
        return False, f"loss {problem.loss!r} with freeze=True (the tail-bound freezing is GBS's)"
    return True, "heyoka importable and the flow is smooth"


def _translatable(loss, link, d: int = 2):
    general = get_loss(loss).form == "general"
    key = (loss, link, d if general else None)  # a general form's expression depends on d
    if key not in _TRANSLATABLE:
        try:
            _pieces(loss, link, d)
            if general:
                flow_system(loss, link, 2, d, clock="t")
            _TRANSLATABLE[key] = None
        except TranslationError as e:
            _TRANSLATABLE[key] = e
    if _TRANSLATABLE[key] is not None:
        raise _TRANSLATABLE[key]


_TRANSLATABLE: dict = {}


def prec_bits(dps: int) -> int:
    """Working precision in bits for ``dps`` digits (plus the GBS backend's guard digits)."""
    return int(math.ceil((dps + GUARD_DIGITS) * math.log2(10)))


# ---- compilation cache -------------------------------------------------------------------------
@dataclass
class Compiled:
    ta: object
    system: object
    n_params: int
    precision: object
    clock: str
    build_seconds: float
    n_events: int = 0
    event_ids: list = None


_CACHE: dict = {}
_STATS = {"hits": 0, "misses": 0}


def cache_info() -> dict:
    """``{'entries', 'hits', 'misses'}`` of the in-process cache of compiled integrators."""
    return {"entries": len(_CACHE), **_STATS}


def clear_cache() -> None:
    """Empty the in-process cache of compiled integrators and reset its hit and miss counts."""
    _CACHE.clear()
    _STATS.update(hits=0, misses=0)


def to_real(hy, value, prec):
    """``value`` (float, int, mpf, decimal string, Fraction-like p/q) as ``heyoka.real``."""
    if isinstance(value, mpmath.mpf):  # exactly (sign, mantissa, exponent), whatever mpmath's current precision
        sign, man, exp, _ = value._mpf_
        if not man:
            if value != 0:
                raise InvalidArgument(f"value={value!r} is not allowed; expected a finite number")
            return hy.real(0, prec)
        m = -int(man) if sign else int(man)
        if exp >= 0:
            return hy.real(m << int(exp), prec)
        # every operand at ``prec``: heyoka.real arithmetic with a Python int (or an int exponent) works at
        # max(prec, 64) bits, and the integrator refuses a value whose precision is not its own
        return _at(hy, hy.real(m, prec) * hy.real(2, prec) ** hy.real(int(exp), prec), prec)
    if hasattr(value, "p") and hasattr(value, "q"):  # a SymPy Rational
        return _at(hy, hy.real(int(value.p), prec) / hy.real(int(value.q), prec), prec)
    return hy.real(value, prec)


def _at(hy, x, prec):
    """``x`` (a ``heyoka.real``) at exactly ``prec`` bits (a no-op when it has them)."""
    return x if x.prec == prec else hy.real(x, prec)


def _num(hy, value, precision):
    return float(value) if precision is None else to_real(hy, value, precision)


def _arr(hy, values, precision):
    if precision is None:
        return np.asarray([float(v) for v in values], dtype=float)
    return np.array([to_real(hy, v, precision) for v in values])


def _tol(hy, precision, dps, rtol):
    if precision is None:
        return None if rtol is None else float(rtol)
    t = 10.0 ** (-(dps + 2)) if rtol is None else rtol
    return hy.real(mpmath.nstr(mpmath.mpf(t), 20), precision)


def compiled(loss, link, n, d, *, clock, precision=None, tol=None, m=None, reduced=False, events=(), frozen=()):
    """The compiled integrator for this shape (cached); ``precision`` is ``None`` (float64) or bits."""
    key = (loss, link, n, d, m, reduced, precision, None if tol is None else str(tol), clock, tuple(events),
           tuple(frozen))
    hit = _CACHE.get(key)
    if hit is not None:
        _STATS["hits"] += 1
        return hit
    _STATS["misses"] += 1
    hy = _hy()
    start = _time.perf_counter()
    S = flow_system(loss, link, n, d, clock=clock, m=m, reduced=reduced, frozen=frozen)
    hvars, sys, npar = S.to_heyoka(hy)
    kw = {}
    t_events, nt_events = [], []
    if clock == "tau":
        # terminal event: T reaches c = log(1 + t_end), written T * (1/c) - 1 (parameter npar = 1/c):
        # heyoka's step-size control includes the event functions' magnitudes, and T - c with a
        # large c would inflate the steps (measured: c = 1e300 gives one step of 1e14)
        t_events.append(_event(hy, hvars[S.layout["T"]] * hy.par[npar] - 1.0, precision, terminal=True))
        npar += 1
    ev_exprs = _event_exprs(hy, S, hvars, events, n)
    first_id = len(_EVENT_IDS)
    for expr in ev_exprs:
        nt_events.append(_event(hy, expr, precision, terminal=False))
    if t_events:
        kw["t_events"] = t_events
    if nt_events:
        kw["nt_events"] = nt_events
    dim = len(hvars)
    if precision is None:
        init = [0.0] * dim
        pars = [0.0] * npar
        if tol is not None:
            kw["tol"] = tol
        ta = hy.taylor_adaptive(sys, init, pars=pars, compact_mode=True, **kw)
    else:
        init = [hy.real(0, precision)] * dim
        pars = [hy.real(0, precision)] * npar
        ta = hy.taylor_adaptive(sys, init, pars=pars, fp_type=hy.real, compact_mode=True, tol=tol, **kw)
    out = Compiled(ta, S, npar, precision, clock, _time.perf_counter() - start, len(nt_events))
    out.event_ids = list(range(first_id, first_id + len(nt_events)))
    _CACHE[key] = out
    return out


# events record into one module-level list (the callbacks are compiled into the integrator)
_RECORDER: list = []


def _event(hy, expr, precision, *, terminal):
    fp = {} if precision is None else {"fp_type": hy.real}
    if terminal:
        return hy.t_event(expr, **fp)
    k = len(_EVENT_IDS)
    _EVENT_IDS.append(k)

    def cb(ta, t, d_sgn, _k=k):
        _RECORDER.append((_k, t, int(d_sgn)))
    return hy.nt_event(expr, cb, **fp)


_EVENT_IDS: list = []


def _event_exprs(hy, S, hvars, events, n):
    """Event functions: ('swap', i, j) -> a_i - a_j; ('gap_u', i, j) -> u_i - u_j."""
    out = []
    a0 = S.layout["a"][0]
    for ev in events:
        kind, i, j = ev
        if kind == "swap":
            out.append(hvars[a0 + i] - hvars[a0 + j])
        elif kind == "gap_u":
            if "u" in S.layout:
                u0 = S.layout["u"][0]
                out.append(hvars[u0 + i] - hvars[u0 + j])
            else:  # u = V^T w, linear in V
                d = len(S.params) if S.params else 1
                V0 = S.layout["V"][0]
                terms = [hy.par[k] * (hvars[V0 + k * n + i] - hvars[V0 + k * n + j]) for k in range(d)]
                out.append(hy.sum(terms))
        else:
            raise InvalidArgument(f"event kind {kind!r} is not allowed; expected 'swap' or 'gap_u'")
    return out


# ---- running ----------------------------------------------------------------------------------
def _outcome_error(hy, outcome, t_reached, max_steps):
    oc = hy.taylor_outcome
    if outcome == oc.err_nf_state:
        return IntegrationError(t_reached, "non-finite state (Taylor step)")
    if outcome == oc.step_limit:
        return IntegrationError(t_reached, f"max_steps={max_steps} reached before the last output time")
    return IntegrationError(t_reached, f"heyoka stopped with outcome {outcome!r}")


def _is_event(hy, outcome) -> bool:
    return outcome not in tuple(hy.taylor_outcome.__members__.values())


def _load(hy, C, y0, params, precision):
    ta = C.ta
    ta.state[:] = _arr(hy, y0, precision)
    ta.pars[:] = _arr(hy, params, precision)
    ta.time = _num(hy, 0, precision)
    if C.clock == "tau" or C.n_events:
        ta.reset_cooldowns()


def _rational_values(C):
    return [r for _, r in C.system.rationals]


def _callback(C, coords, progress):
    """heyoka's per-step callback reporting the fraction of the run done to ``progress`` (or ``None``)."""
    if progress is None or progress.mode == "off":
        return {}
    end = float(coords[-1])
    if not end > 0:
        return {}
    Tidx = C.system.layout["T"] if C.clock == "tau" else None

    def cb(ta):
        x = float(ta.time) if Tidx is None else float(ta.state[Tidx])
        progress.update(x / end)
        return True
    return {"callback": cb}


def run(C, y0, params, coords, *, max_steps, t_of, progress=None):
    """Integrate the loaded system to the output coordinates ``coords`` (list of numbers in the
    working precision: times for t/log, values of $T$ for tau). Returns ``(xs, states, n_steps)``.
    ``progress``: a :class:`numerics.progress.Progress` updated after every step (or ``None``)."""
    hy = _hy()
    prec = C.precision
    ta = C.ta
    del _RECORDER[:]
    end = [(1 / coords[-1]) if prec is None else _at(hy, to_real(hy, 1, prec) / coords[-1], prec)] \
        if C.clock == "tau" else []
    _load(hy, C, list(y0), list(params) + _rational_values(C) + end, prec)
    cb = _callback(C, coords, progress)
    if C.clock != "tau":
        zero = _num(hy, 0, prec)
        pad = not coords[0] == zero  # propagate_grid starts at the current time
        grid = _arr(hy, ([zero] if pad else []) + list(coords), prec)
        res = ta.propagate_grid(grid, max_steps=max_steps, **cb)
        outcome, nsteps, states = res[0], int(res[3]), res[-1]
        if outcome != hy.taylor_outcome.time_limit:
            raise _outcome_error(hy, outcome, t_of(ta.time, ta.state), max_steps)
        k0 = 1 if pad else 0
        return list(grid)[k0:], [states[k] for k in range(k0, len(grid))], nsteps
    Tidx = C.system.layout["T"]
    big = _num(hy, "1e300", prec) if prec is not None else 1e300
    # continuous output (every step's Taylor coefficients kept) only when intermediate times need it
    dense = any(c > 0 for c in coords[:-1])
    res = ta.propagate_until(big, max_steps=max_steps, c_output=dense, **cb)
    outcome, nsteps, co = res[0], int(res[3]), res[4]
    if not _is_event(hy, outcome):
        raise _outcome_error(hy, outcome, t_of(ta.time, ta.state), max_steps)
    tau_end, y_end = ta.time, np.array(ta.state)
    xs, states = [], []
    zero = _num(hy, 0, prec)
    # locate T = c well below the step tolerance, as the GBS backend does (numerics.integrate._gbs)
    eps = 2.0 ** -(53 if prec is None else prec)
    gtol = max(float(ta.tol) / 100, 1024 * eps)
    for c in coords[:-1]:
        if c <= zero:
            xs.append(zero)
            states.append(_arr(hy, y0, prec))
            continue
        x, y = _locate(co, Tidx, c, zero, tau_end, prec, gtol * max(abs(c), 1),
                       ftol=max(float(ta.tol), 1024 * eps) * max(abs(float(c)), 1.0))
        xs.append(x)
        states.append(y)
    xs.append(tau_end)
    states.append(y_end)
    return xs, states, nsteps


def _locate(co, idx, c, lo, hi, prec, gtol, ftol=math.inf):
    """tau in [lo, hi] with T(tau) = c on the continuous output (Illinois; T is increasing).

    A bracket that shrinks to the resolution of tau while T is still more than ``ftol`` (the step tolerance, or
    the rounding floor of ``gtol``)
    away from ``c`` is an :class:`IntegrationError`: tau is so large that its working precision cannot tell the
    output apart from its neighbours (measured: softmax1 after a sink phase, tau ~ 1e34 at 107 bits, where the
    located states were all the same wrong state)."""
    # bracket on the step grid first
    times = co.times
    k_lo, k_hi = 0, len(times) - 1
    while k_hi - k_lo > 1:
        mid = (k_lo + k_hi) // 2
        Tm = co(times[mid])[idx]
        if Tm < c:
            k_lo = mid
        else:
            k_hi = mid
    a, b = times[k_lo], times[k_hi]
    fa, fb = co(a)[idx] - c, co(b)[idx] - c
    eps = 2.0 ** -(53 if prec is None else prec)
    tol = abs(b) * eps * 8 + (abs(c) + 1) * 0
    side = 0
    y = None
    for _ in range(200):
        if fa == 0:
            return a, np.array(co(a))
        if fb == 0:
            return b, np.array(co(b))
        x = b - fb * (b - a) / (fb - fa)
        if not (min(a, b) < x < max(a, b)):
            x = (a + b) * 0.5  # a float factor keeps the precision of a heyoka.real (an int would not)
        y = np.array(co(x))  # a copy: co() returns a view of its own buffer
        fx = y[idx] - c
        if fx == 0:
            return x, y
        if abs(b - a) <= tol * 4 + eps * abs(x):
            if abs(fx) > ftol:
                raise IntegrationError(None, f"cannot locate the output T = log(1 + t) = {float(c):.6g}: the "
                                       f"internal time tau ~ {float(x):.3g} has no resolution left at this precision "
                                       f"(T is still {float(abs(fx)):.3g} away); expected a larger dps, or "
                                       "clock='log'")
            return x, y
        if (fx > 0) == (fb > 0):
            b, fb = x, fx
            if side == -1:
                fa = fa * 0.5
            side = -1
        else:
            a, fa = x, fx
            if side == 1:
                fb = fb * 0.5
            side = 1
        if abs(fx) <= gtol:
            return x, y
    raise IntegrationError(None, f"could not locate T = {c} on the continuous output")


def integrate_taylor(problem, times, *, clock, dps=None, rtol=None, max_steps=DEFAULT_MAX_STEPS,
                     progress=False) -> Trajectory:
    """Integrate ``problem`` with the compiled Taylor method; ``times`` are decimal strings.

    ``dps=None``: float64 (result floats, like ``backend='numpy'``); ``dps=P``: ``heyoka.real``
    with :func:`prec_bits` ``(P)`` bits, result ``mpf`` rounded to ``P`` digits.
    """
    start = _time.perf_counter()
    hy = _hy()
    ok, why = suits(problem)
    if not ok:
        raise InvalidArgument(f"link={problem.link!r} with loss={problem.loss!r} is not allowed with backend='taylor' "
                              f"({why}); expected a smooth link and loss, or backend='mpmath' / 'auto'")
    prec = None if dps is None else prec_bits(dps)
    tol = _tol(hy, prec, dps, rtol)
    m = None if problem.X is None else problem.X.shape[0]
    t0c = _time.perf_counter()
    C = compiled(problem.loss, problem.link, problem.n, problem.d, clock=clock, precision=prec, tol=tol, m=m,
                 frozen=problem.frozen)
    compile_s = _time.perf_counter() - t0c
    d, n = problem.d, problem.n
    y0 = [float(v) for v in problem.V.ravel()] + [float(v) for v in problem.a] + ([0.0] if clock == "tau" else [])
    params = [float(v) for v in problem.target] + ([] if problem.X is None else [float(v) for v in problem.X.ravel()])
    if prec is None:
        tv = [float(s) for s in times]
        coords = tv if clock == "t" else [math.log1p(t) for t in tv]
    else:
        with mpmath.workprec(prec):
            tvm = [mpmath.mpf(s) for s in times]
            coords = [to_real(hy, x, prec) for x in (tvm if clock == "t" else [mpmath.log1p(t) for t in tvm])]
            # exact inputs (decimal strings, rationals) rounded once to the working precision, like GBS
            y0 = [v for row in problem.mp_values("V") for v in row] + list(problem.mp_values("a")) + \
                ([mpmath.mpf(0)] if clock == "tau" else [])
            params = list(problem.mp_values("target")) + \
                ([] if problem.X is None else [v for row in problem.mp_values("X") for v in row])

    check_resolved(times, coords, "backend='taylor' (" + ("float64" if prec is None else f"{prec}-bit real") + ")")

    def t_of(x, y):
        if clock == "t":
            return float(x)
        s = float(y[-1]) if clock == "tau" else float(x)
        return math.expm1(min(s, 700.0))

    bar = Progress(f"taylor/{clock}" + ("" if dps is None else f" dps={dps}"), enabled=bool(progress))
    try:
        xs, states, nsteps = run(C, y0, params, coords, max_steps=max_steps, t_of=t_of, progress=bar)
    finally:
        bar.close()
    dn = d * n
    meta = dict(backend="taylor", clock=clock, method=f"Taylor (heyoka, order {C.ta.order})", n_steps=nsteps,
                n_rejected=0, n_rhs=0, rtol=float(C.ta.tol) if prec is None else float(rtol or 10.0 ** -(dps + 2)),
                atol=None)
    if prec is None:
        st = [np.asarray(y, dtype=float) for y in states]

        def unpack(y):
            return y[:dn].reshape(d, n), y[dn:dn + n]
        traj = assemble_numpy(problem, [float(s) for s in times], st, unpack, **meta)
        if clock == "tau":
            traj.tau = [float(x) for x in xs]
    else:
        with mpmath.workprec(prec):
            st = [[_to_mpf(v) for v in y] for y in states]
            target, X = problem.mp_values("target"), problem.mp_values("X")

            def unpack(y):
                return [y[i * n:(i + 1) * n] for i in range(d)], y[dn:dn + n]
            tv = [mpmath.mpf(s) for s in times]
            traj = assemble_mpmath(problem, tv, st, unpack, target, X, dps=dps, **meta)
            if clock == "tau":
                with mpmath.workdps(dps):
                    traj.tau = [+_to_mpf(x) for x in xs]
    check_descent(traj.loss, traj.times, rtol=meta["rtol"], where=" (backend taylor)")
    traj.notes.append(f"taylor backend: heyoka {getattr(hy, '__version__', '?')}, "
                      f"{'float64' if prec is None else f'{prec}-bit real'}, compile/cache lookup {compile_s:.2f} s")
    traj.wall_time = _time.perf_counter() - start
    return traj


def _to_mpf(v):
    """A ``heyoka.real`` (or float) as ``mpf`` at the current mpmath precision (exactly when it fits)."""
    if isinstance(v, (float, np.floating)):
        return mpmath.mpf(float(v))
    return mpmath.mpf(str(v))


def reduced_taylor(u0, a0, b, *, t_end, times, dps=None, link="softmax", max_steps=DEFAULT_MAX_STEPS):
    r"""The reduced logistic system $(u,a,T)$ in $\tau$ (claim 7) with the Taylor backend.

    ``times``: physical output times (decimal strings or numbers, increasing, last = ``t_end``).
    ``u0``, ``a0``, ``b``: numbers; exact ones (decimal strings, ints, Fractions) are rounded once, to
    float64 or (``dps``) to the working precision, never through a float first.
    Returns ``{'tau', 'u', 'a'}``: lists (one entry per time) of ``mpf`` (``dps``) or floats.
    """
    hy = _hy()
    # exact inputs (decimal strings, ints, Fractions) stay exact until they are rounded once: to float64,
    # or to the working precision with dps (floats and mpf are taken as the numbers they are)
    u0, a0, (b,) = _vector("u0", u0), _vector("a0", a0), _vector("b", [b])
    n = len(u0)
    if len(a0) != n:
        raise InvalidArgument(f"a0 has {len(a0)} entries and u0 {n}; expected the same number of tokens")
    tstr = prepare_times(t_end, times)
    prec = None if dps is None else prec_bits(dps)
    tol = _tol(hy, prec, dps, None)
    C = compiled("logistic", link, n, 1, clock="tau", precision=prec, tol=tol, reduced=True)
    if prec is None:
        y0, params = [float(v) for v in u0] + [float(v) for v in a0] + [0.0], [float(b)]
        coords = [math.log1p(float(t)) for t in tstr]
    else:
        with mpmath.workprec(prec):
            y0 = [_mp(v) for v in u0] + [_mp(v) for v in a0] + [mpmath.mpf(0)]
            params = [_mp(b)]
            coords = [to_real(hy, mpmath.log1p(mpmath.mpf(t)), prec) for t in tstr]
    xs, states, nsteps = run(C, y0, params, coords, max_steps=max_steps,
                             t_of=lambda x, y: math.expm1(min(float(y[-1]), 700.0)))
    conv = (lambda v: float(v)) if prec is None else _to_mpf
    ctx = mpmath.workprec(prec or 53)
    with ctx:
        out = {"tau": [conv(x) for x in xs], "u": [[conv(v) for v in y[:n]] for y in states],
               "a": [[conv(v) for v in y[n:2 * n]] for y in states], "n_steps": nsteps}
    if dps is not None:
        with mpmath.workdps(dps):
            for k in ("tau",):
                out[k] = [+x for x in out[k]]
            for k in ("u", "a"):
                out[k] = [[+x for x in row] for row in out[k]]
    return out


# ---- events -------------------------------------------------------------------------------------
def taylor_events(problem, *, t_end, winner=None, pairs=None, clock="tau", max_steps=DEFAULT_MAX_STEPS):
    r"""Float64 event times along the flow of a logistic ``problem`` (physical times $t$).

    Returns ``{'swaps': [(t, i, j, direction)], 'entry_R_plus': t or None, 'winner': i}``:
    ``swaps`` every crossing $a_i=a_j$ (``pairs``, default all $i<j$) at $t>0$, in time order,
    ``direction`` $+1$ when $a_i-a_j$ becomes positive; ``entry_R_plus`` the first time from
    which the state stays in $R_i^+=\{u_i\ge u_j,\ a_i>a_j\ \forall j\ne i\}$ up to ``t_end``
    (``winner`` $i$, default the argmax of the final weights), ``None`` if it is not inside at
    ``t_end``. A float64 prediction located by heyoka's event root finder, not a certificate.
    """
    _hy()  # a clear error when heyoka is missing, before any work
    if not same_loss(problem.loss, "logistic"):
        raise InvalidArgument(f"loss={problem.loss!r} is not allowed for taylor_events; expected the logistic loss")
    n, d = problem.n, problem.d
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)] if pairs is None else [tuple(p) for p in pairs]
    win_events = [("gap_u", w, j) for w in range(n) for j in range(n) if j != w]
    events = tuple(("swap", i, j) for i, j in pairs) + tuple(win_events)
    C = compiled("logistic", problem.link, n, d, clock=clock, events=events)
    y0 = [float(v) for v in problem.V.ravel()] + [float(v) for v in problem.a] + ([0.0] if clock == "tau" else [])
    params = [float(v) for v in problem.target]
    t_end = float(t_end)
    coords = [0.0, t_end if clock == "t" else math.log1p(t_end)]
    del _RECORDER[:]
    xs, states, _ = run(C, y0, params, coords, max_steps=max_steps, t_of=lambda x, y: float(x))
    rec = list(_RECORDER)
    ev_ids = _event_ids_of(C)
    kinds = {eid: ev for eid, ev in zip(ev_ids, events)}
    co_needed = clock == "tau"
    out_swaps, crossings = [], {}
    # physical time of an event: tau clock -> expm1(T(tau)); re-integrate to read T at the event
    if co_needed:
        times_phys = _physical_times(C, y0, params, [t for _, t, _ in rec], clock, max_steps, coords[-1])
    else:
        times_phys = [float(t) if clock == "t" else math.expm1(float(t)) for _, t, _ in rec]
    for (eid, _, sgn), tp in zip(rec, times_phys):
        kind = kinds.get(eid)
        if kind is None or not tp > 0:
            continue
        if kind[0] == "swap":
            out_swaps.append((tp, kind[1], kind[2], sgn))
        crossings.setdefault(kind, []).append(tp)
    y_end = np.asarray(states[-1], dtype=float)
    a_end = y_end[d * n:d * n + n]
    V_end = y_end[:d * n].reshape(d, n)
    u_end = V_end.T @ np.asarray(params)
    win = int(np.argmax(a_end)) if winner is None else int(winner)
    inside = all(u_end[win] >= u_end[j] and a_end[win] > a_end[j] for j in range(n) if j != win)
    entry = None
    if inside:
        last = [max(crossings.get(("swap", min(win, j), max(win, j)), [0.0]) + crossings.get(("gap_u", win, j), [0.0]))
                for j in range(n) if j != win]
        entry = max(last)
    out_swaps.sort()
    return {"swaps": out_swaps, "entry_R_plus": entry, "winner": win}


def _event_ids_of(C):
    """The recorder ids of ``C``'s non-terminal events, in the order they were given."""
    return C.event_ids


def _physical_times(C, y0, params, taus, clock, max_steps, c_end):
    if not taus:
        return []
    hy = _hy()
    _load(hy, C, y0, params + [1 / c_end], None)
    res = C.ta.propagate_until(max(float(t) for t in taus) * (1 + 1e-12) + 1e-300, max_steps=max_steps, c_output=True)
    co = res[4]
    Tidx = C.system.layout["T"]
    return [math.expm1(float(co(float(t))[Tidx])) for t in taus]


# ---- ensembles ----------------------------------------------------------------------------------
def integrate_ensemble(V, a, target, *, loss, link="softmax", t_end, times=None, clock="t",
                       max_steps=DEFAULT_MAX_STEPS):
    """B float64 flows of the same shape with heyoka's SIMD batch mode (CPU).

    ``V`` (B, d, n), ``a`` (B, n), ``target`` (B, d). ``times``: output times (default
    ``[0, t_end]``). Clocks ``t`` / ``log``. Returns ``{'V': (B, K, d, n), 'a': (B, K, n), 'n_steps'}``.
    """
    hy = _hy()
    V, a, target = np.asarray(V, float), np.asarray(a, float), np.asarray(target, float)
    B, d, n = V.shape
    if clock not in ("t", "log"):
        raise InvalidArgument(f"clock={clock!r} is not allowed for integrate_ensemble; expected 't' or 'log'")
    times = np.asarray([0.0, float(t_end)] if times is None else times, float)
    coords = times if clock == "t" else np.log1p(times)
    key = ("ensemble", loss, link, n, d, clock)
    C = _CACHE.get(key)
    bs = hy.recommended_simd_size()
    if C is None:
        S = flow_system(loss, link, n, d, clock=clock)
        hvars, sys, npar = S.to_heyoka(hy)
        ta = hy.taylor_adaptive_batch(sys, np.zeros((len(hvars), bs)), pars=np.zeros((max(npar, 1), bs)),
                                      compact_mode=True)
        C = Compiled(ta, S, npar, None, clock, 0.0)
        _CACHE[key] = C
    ta, S = C.ta, C.system
    rats = [float(r) for _, r in S.rationals]
    K = len(times)
    outV = np.empty((B, K, d, n))
    outA = np.empty((B, K, n))
    steps = 0
    for s0 in range(0, B, bs):
        idx = np.arange(s0, s0 + bs) % B  # pad the last chunk by repeating
        y0 = np.concatenate([V[idx].reshape(bs, -1), a[idx]], axis=1).T
        ta.state[:] = y0
        ta.pars[:] = np.concatenate([target[idx].T, np.tile(np.asarray(rats)[:, None], (1, bs))], axis=0) \
            if rats else target[idx].T
        ta.set_time(0.0)
        grid = np.repeat(coords[:, None], bs, axis=1)
        res = ta.propagate_grid(grid, max_steps=max_steps)
        outcomes = ta.propagate_res  # per lane: (outcome, min_h, max_h, n_steps)
        for lane, oc in enumerate(outcomes):
            if oc[0] != hy.taylor_outcome.time_limit and s0 + lane < B:
                raise IntegrationError(float(ta.time[lane]), f"ensemble member {s0 + lane}: heyoka outcome {oc[0]!r}")
        steps = max(steps, max(int(oc[3]) for oc in outcomes))
        st = res[-1]  # (K, dim, bs)
        take = min(bs, B - s0)
        for lane in range(take):
            outV[s0 + lane] = st[:, :d * n, lane].reshape(K, d, n)
            outA[s0 + lane] = st[:, d * n:d * n + n, lane]
    return {"V": outV, "a": outA, "n_steps": steps, "times": times}


__all__ = ["available", "suits", "integrate_taylor", "reduced_taylor", "taylor_events", "integrate_ensemble",
           "cache_info", "clear_cache", "prec_bits", "to_real", "TranslationError"]
