r"""The internal clock of the logistic loss and the reduced $(u,a)$ system.

For $\mathcal L=\ell(\langle w,V\varphi(a)\rangle)$ the flow is $\dot V=\gamma\,w\varphi^\top$,
$\dot a=\gamma J_\varphi^\top V^\top w$ with $\gamma=-\ell'(z)>0$ (the structured gradient
$g=\ell'(z)w$, identity ``flow.structured``). Hence, in the internal clock $d\tau=\gamma\,dt$:

.. math::
    \frac{dV}{d\tau}=w\,\varphi(a)^\top,\qquad \frac{da}{d\tau}=J_\varphi(a)^\top V^\top w,\qquad
    \frac{dT}{d\tau}=\frac{e^{-T}}{\gamma(z)},\quad T=\log(1+t),

which no longer depends on the loss (paper-notes#logistic, [D]; identities ``clock.*`` in
:mod:`theorems`). With $u=V^\top w$ and $b=\|w\|^2$ the pair $(u,a)$ closes (paper-notes#logistic,
claim 7, [D]; identity ``reduced.logistic``):

.. math::
    \frac{du}{d\tau}=b\,\varphi(a),\qquad\frac{da}{d\tau}=J_\varphi(a)^\top u,\qquad z=\langle u,\varphi(a)\rangle .

Both right-hand sides are *assembled* from generated pieces only: ``flow_rhs(...).phi``
($\varphi$), ``flow_rhs(...).jvp_T`` ($J_\varphi^\top x$) and $\ell'$ lambdified from
:attr:`theorems.Loss.dell`; the tests compare the assembled $\tau$ right-hand side with the
generated $t$ right-hand side divided by $\gamma$ (and a wrong variant that the same check
rejects). The relation holds for every link (the derivation never uses the softmax form).

:func:`reduced_logistic` integrates $(u,a,T)$ in $\tau$ (mpmath: GBS; numpy: DOP853) and reports
times $t$, internal times $\tau$, $u$, $a$, the weights and their metrics, and the loss
$\ell(z)$.
"""
from __future__ import annotations

import math
import time as _time
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp
from mpmath.libmp import from_rational, round_nearest

from theorems import InvalidArgument, check_choice, check_int, get_link, get_loss, same_loss
from theorems.errors import show

from ._common import MAX_DPS, Trajectory, _parse_time, check_tolerance, exp_neg_T, prepare_times
from ._gbs import gbs_solve
from ._mpmath import default_tol_mp, dell_mpmath
from ._numpy import DEFAULT_RTOL, NP_T_MAX, NonFinite, dell_numpy, dop853_solve
from ._system import GUARD_DIGITS
from ..lambdify import lambdify_checked
from ..metrics import argmax, entropy, max_weight, one_minus_max
from ..problem import Problem, exact_entry
from ..progress import Progress
from ..rhs import flow_rhs

_z = sp.Symbol("z", real=True)


def _vector(argument, value):
    """A non-empty list of finite numbers; exact entries (decimal strings, ``Decimal``, ints,
    ``Fraction``) become :class:`~fractions.Fraction`, ``mpf`` and floats stay as given."""
    if isinstance(value, np.ndarray):
        items = value.tolist() if value.ndim == 1 else None
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = None
    if not items or any(isinstance(v, (list, tuple, np.ndarray)) for v in items):
        raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a non-empty 1-d list of "
                              "numbers")
    out = []
    for v in items:
        if isinstance(v, mpmath.mpf):
            if not mpmath.isfinite(v):
                raise InvalidArgument(f"{argument} contains non-finite entries; expected finite numbers")
            out.append(v)
            continue
        q = exact_entry(argument, v)
        if q is not None:
            out.append(q)
        elif isinstance(v, (float, np.floating)) and math.isfinite(float(v)):
            out.append(float(v))
        elif isinstance(v, (float, np.floating)):
            raise InvalidArgument(f"{argument} contains non-finite entries; expected finite numbers")
        else:
            raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a list of numbers")
    return out


def _mp(v):
    """``v`` at the current mpmath precision: a Fraction rounded once (to nearest), others as mpf."""
    if isinstance(v, Fraction):
        return mpmath.mp.make_mpf(from_rational(v.numerator, v.denominator, mpmath.mp.prec, round_nearest))
    return mpmath.mpf(v)


def _input_note(values, backend: str) -> str:
    exact = [v for v in values if isinstance(v, Fraction)]
    if not exact:
        return "inputs: float64 / mpf values (exact as given)"
    err = max((abs(Fraction(float(q)) - q) / abs(q) for q in exact if q != 0), default=Fraction(0))
    if backend == "mpmath":
        return ("inputs: exact (decimal/rational values kept, rounded once to the mpmath working precision; "
                f"float64 rounding would have been {float(err):.2g})")
    return f"inputs: exact values rounded to float64 for this backend (largest relative rounding {float(err):.2g})"


def _reduced_inputs(p, dps: int):
    r"""``(u0, a0, b, link)`` of a logistic :class:`~numerics.Problem`: $u_0=V^\top w$, $a_0=a$, $b=\|w\|^2$ from its
    exact values (rationals, rounded once well above the working precision)."""
    if not same_loss(p.loss, "logistic") or p.frozen:
        raise InvalidArgument(f"reduced_logistic(problem): loss={p.loss!r}, frozen={p.frozen}; expected the "
                              "logistic loss and no frozen parameter (the reduced system is its flow)")
    Vq = [[Fraction(x) for x in row] for row in p.exact_values("V")]
    wq = [Fraction(x) for x in p.exact_values("target")]
    aq = [Fraction(x) for x in p.exact_values("a")]
    dd = len(wq)
    with mpmath.workdps(int(dps) + 30):  # exact rationals rounded once, well above the working precision
        def mp(q):
            return mpmath.mpf(q.numerator) / q.denominator
        u0 = [mp(q) for q in (sum((Vq[k][j] * wq[k] for k in range(dd)), Fraction(0)) for j in range(len(aq)))]
        a0 = [mp(q) for q in aq]
        b = mp(sum((x * x for x in wq), Fraction(0)))
    return u0, a0, b, p.link


def _reduced_mpmath(rhs, ell_expr, u0, a0, b_text, times, in_tau, *, dps, rtol, atol, max_steps, bar):
    """The reduced system at ``dps`` digits (Gragg-Bulirsch-Stoer in mpmath); the trajectory at ``dps``."""
    n = len(u0)
    with mpmath.workdps(dps + GUARD_DIGITS):
        rtol = default_tol_mp(dps) if rtol is None else rtol
        atol = rtol if atol is None else atol
        dell = dell_mpmath("logistic")
        ell = lambdify_checked([_z], ell_expr, backend="mpmath")
        bb = mpmath.mpf(b_text)

        def f(x, y):
            u, a = y[:n], y[n:2 * n]
            phi = rhs.phi(a)
            out = [bb * p for p in phi]
            out.extend(rhs.jvp_T(a, u))
            out.append(-exp_neg_T(y[-1]) / dell(mpmath.fdot(u, phi)))  # guarded e^{-T}
            return out

        y0 = [_mp(v) for v in u0] + [_mp(v) for v in a0] + [mpmath.mpf(0)]  # exact inputs: one rounding
        tv = [mpmath.mpf(s) for s in times]
        targets = tv if in_tau else [mpmath.log1p(t) for t in tv]
        try:
            outputs, stats, _ = gbs_solve(
                f, mpmath.mpf(0), y0, targets, component=None if in_tau else 2 * n,
                rtol=rtol, atol=atol, max_steps=max_steps,
                t_of=lambda x, y: mpmath.expm1(y[-1]), progress=bar)
        finally:
            bar.close()
        rows = []
        for x, y in outputs:
            u, a = y[:n], y[n:2 * n]
            W = rhs.phi(a)
            rows.append((mpmath.expm1(y[-1]), x, u, a, W, ell(mpmath.fdot(u, W))))
        with mpmath.workdps(dps):
            r = lambda v: [+x for x in v] if isinstance(v, list) else +v
            traj = Trajectory(
                times=[r(t) for t, *_ in rows], tau=[r(x) for _, x, *_ in rows],
                u=[r(u) for *_, u, a, W, L in rows], a=[r(a) for *_, a, W, L in rows],
                weights=[r(W) for *_, W, L in rows], loss=[r(L) for *_, L in rows],
                entropy=[+entropy(W) for *_, W, L in rows],
                max_weight=[+max_weight(W) for *_, W, L in rows],
                argmax=[argmax(W) for *_, W, L in rows],
                one_minus_max=[+one_minus_max(W) for *_, W, L in rows],
                V=None, backend="mpmath", clock="tau", method="GBS", dps=dps, rtol=rtol,
                atol=atol, **stats)
    return traj


def _reduced_numpy(rhs, ell_expr, u0, a0, b_text, times, in_tau, *, t_end, rtol, atol, max_steps, bar):
    """The reduced system in float64 (DOP853); refused beyond ``NP_T_MAX`` in physical time."""
    n = len(u0)
    rtol = DEFAULT_RTOL if rtol is None else rtol
    atol = rtol * 1e-2 if atol is None else atol
    tv = [float(s) for s in times]
    if not in_tau and tv[-1] > NP_T_MAX:
        raise InvalidArgument(f"t_end={show(t_end)} is not allowed with backend='numpy'; "
                              f"expected t_end <= {NP_T_MAX:g}")
    dell = dell_numpy("logistic")
    ell = lambdify_checked([_z], ell_expr, backend="numpy")
    bb = float(b_text)

    def f(x, y):
        u, a = y[:n], y[n:2 * n]
        phi = rhs.phi(a)
        gamma = -float(dell(float(np.dot(u, phi))))
        try:  # guarded e^{-T}; gamma underflows to 0 for a huge margin z
            eT = exp_neg_T(float(y[-1]))
        except OverflowError:
            raise NonFinite(x) from None
        if not gamma > 0:
            raise NonFinite(x)
        return np.concatenate([bb * phi, rhs.jvp_T(a, u), [eT / gamma]])

    y0 = np.array([float(v) for v in u0] + [float(v) for v in a0] + [0.0])
    targets = tv if in_tau else [math.log1p(t) for t in tv]
    try:
        with np.errstate(over="ignore"):
            outputs, stats, _ = dop853_solve(
                f, 0.0, y0, targets, component=None if in_tau else 2 * n, rtol=rtol,
                atol=atol, max_steps=max_steps,
                t_of=lambda x, y: math.expm1(min(y[-1], 709.0)), progress=bar)
    finally:
        bar.close()
    Y = np.array([y for _, y in outputs])
    U, A = Y[:, :n], Y[:, n:2 * n]
    with np.errstate(over="ignore", under="ignore"):
        W = rhs.phi(A)
        tt = np.expm1(Y[:, -1])
    traj = Trajectory(
        times=tt.tolist(), tau=[float(x) for x, _ in outputs], u=U.tolist(), a=A.tolist(),
        weights=W.tolist(), loss=ell(np.sum(U * W, axis=-1)).tolist(),
        entropy=entropy(W).tolist(), max_weight=max_weight(W).tolist(),
        argmax=[int(i) for i in argmax(W)], one_minus_max=one_minus_max(W).tolist(), V=None,
        backend="numpy", clock="tau", method="DOP853", rtol=rtol, atol=atol, **stats)
    return traj


def reduced_logistic(u0, a0=None, b=None, *, tau_end=None, t_end=None, times=None, dps: int = 30,
                     backend: str = "mpmath", link: str = "softmax", rtol=None, atol=None,
                     max_steps: int = 20_000, progress: bool = False) -> Trajectory:
    r"""Integrate the reduced logistic system $(u,a)$ in the internal clock $\tau$.

    Give exactly one of ``tau_end`` (then ``times`` are $\tau$ values) or ``t_end`` (then
    ``times`` are physical times, located by solving $T(\tau)=\log(1+t_k)$ inside the
    step). ``u0``, ``a0``: the initial projections $u=V^\top w$ and logits; ``b``: $\|w\|^2>0$.
    Numbers may be ``mpf`` (taken at the working precision). Or ``reduced_logistic(problem, ...)``
    with a logistic :class:`~numerics.Problem`: $u_0=V^\top w$, $a_0=a$, $b=\|w\|^2$ and its link
    (exact inputs exactly). Returns a :class:`Trajectory`
    with ``V=None``, ``u`` and ``tau`` filled; ``loss`` is $\ell(z)$, $z=\langle u,\varphi\rangle$.
    """
    start = _time.perf_counter()
    if isinstance(u0, Problem):
        if a0 is not None or b is not None:
            raise InvalidArgument("reduced_logistic(problem, ...): a0 and b come from the problem; expected them unset")
        u0, a0, b, link = _reduced_inputs(u0, dps)
    if a0 is None or b is None:
        raise InvalidArgument("reduced_logistic: a0 and b are required (or pass a numerics.Problem)")
    check_choice("backend", backend, ("mpmath", "numpy"))
    get_link(link)
    u0 = _vector("u0", u0)
    a0 = _vector("a0", a0)
    if len(u0) != len(a0):
        raise InvalidArgument(f"u0 has {len(u0)} entries and a0 has {len(a0)}; expected equal lengths")
    if (tau_end is None) == (t_end is None):
        raise InvalidArgument(f"tau_end={show(tau_end)}, t_end={show(t_end)}: expected exactly one of them")
    check_int("dps", dps, minimum=5, maximum=MAX_DPS)
    check_int("max_steps", max_steps, minimum=1)
    rtol, atol = check_tolerance("rtol", rtol), check_tolerance("atol", atol)
    b_text = _parse_time("b", b)
    if not mpmath.mpf(b_text) > 0:
        raise InvalidArgument(f"b={show(b)} is not allowed; expected b = |w|^2 > 0")
    in_tau = tau_end is not None
    times = prepare_times(tau_end if in_tau else t_end, times)
    rhs = flow_rhs("logistic", link, backend=backend)
    ell_expr = get_loss("logistic").ell(_z)
    bar = Progress(f"reduced/{backend}", enabled=progress)
    if backend == "mpmath":
        traj = _reduced_mpmath(rhs, ell_expr, u0, a0, b_text, times, in_tau, dps=dps, rtol=rtol, atol=atol,
                               max_steps=max_steps, bar=bar)
    else:
        traj = _reduced_numpy(rhs, ell_expr, u0, a0, b_text, times, in_tau, t_end=t_end, rtol=rtol, atol=atol,
                              max_steps=max_steps, bar=bar)
    if not in_tau:
        # the requested times, not the values reconstructed from T (equal within tolerance)
        if backend == "mpmath":
            with mpmath.workdps(dps):
                traj.times = [mpmath.mpf(s) for s in times]
        else:
            traj.times = [float(s) for s in times]
    traj.notes.append(f"reduced logistic system (u, a) in tau, link={link}, b={b_text}")
    traj.notes.append(_input_note(list(u0) + list(a0), backend))
    traj.wall_time = _time.perf_counter() - start
    return traj
