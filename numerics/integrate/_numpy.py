r"""float64 reference integrator: SciPy's DOP853 (Dormand–Prince 8(5,3)), stepped by hand.

The right-hand side is the generated :func:`numerics.flow_rhs` (numpy backend), put in the
requested clock (see :mod:`numerics.integrate._common`):

* ``t``: $y'=f(y)$; ``log``: $\frac{dy}{d\sigma}=e^\sigma f(y)$ with $\sigma=\log(1+t)$;
* ``tau`` (logistic): $\frac{d(V,a)}{d\tau}=f(V,a)/\gamma$, $\frac{dT}{d\tau}=e^{-T}/\gamma$,
  $\gamma=-\ell'(z)$ with $\ell'$ lambdified from :mod:`theorems`, $T=\log(1+t)$.

Outputs come from DOP853's 7th-order dense output; in the ``tau`` clock the time $\tau_k$ with
$T(\tau_k)=\log(1+t_k)$ is found by Brent's method on that interpolant (to 4 ulps of
$\tau$). The loop counts steps (``max_steps``), checks every state for finiteness and
raises :class:`IntegrationError` on any failure; the square / kl losses freeze
converged states only by the rigorous tail bound (:mod:`numerics.integrate._freeze`).
``Trajectory.n_rhs`` is SciPy's ``nfev``; ``n_rejected`` counts rejected attempts (each
attempt of ``step()`` costs ``n_stages = 12`` evaluations, so a step that used $12k$ of them
had $k-1$ rejections).

Cost and accuracy against SciPy's DOP853 called directly (``softpolar bench --rows 3``:
logistic toy, $n=d=8$, $t\in[0,10^6]$, ``rtol=1e-12``, ``atol=1e-14``, mpmath reference):

* the *same* problem (clock ``t``, state $(V,a)$, tolerances, SciPy's RMS error norm) gives
  the same run: 128 steps, 1538 right-hand-side calls for both, final states equal to
  4e-16 (relative), error 1.9e-14 for both. The only difference is the cost of one call:
  ~26 us here against ~13 us for a hand-written flat numpy function, almost all of it the
  generated ``flow_rhs`` at this small size (~23 us against ~11.5 us, row 1); this
  driver adds ~2.5 us (views, one concatenation, the finiteness check; was ~4 us);
* the *default* (``clock='auto'`` = ``log`` for the logistic loss beyond ``t = 100``) is a
  different ODE, $dy/d\sigma=e^\sigma f(y)$: 71 accepted steps (11 rejected), 986 calls,
  error 2.1e-13 (the $t$ clock: 1.9e-14). The tolerances bound the local error estimate
  of each step, not the global error, and the two clocks place the steps differently:
  the ``log`` clock puts 20 of its 71 accepted steps on $t>10^3$, the $t$ clock 73 of its
  128 (t <= 10: 12 against 7). At equal error the ``log`` clock is the
  cheaper one (``rtol=1e-13``: 1190 calls, error 1.3e-14), and it is the clock that reaches
  ``t = 1e300``; pass ``clock='t'`` to reproduce a direct ``solve_ivp`` run step for step.

float64 limits: ``t_end <= 1e300`` (beyond, $e^{-T}$ and $\gamma$ leave the float range; use
the mpmath backend).
"""
from __future__ import annotations

import math
import time as _time

import numpy as np
import scipy.integrate
import scipy.optimize
import sympy as sp

from theorems import InvalidArgument, get_loss

from ._common import IntegrationError, Trajectory, check_descent, check_resolved, exp_neg_T
from ._freeze import FREEZE_FACTOR, freeze_rule
from ..lambdify import lambdify_checked
from ..progress import Progress
from ..rhs import flow_rhs
from ._system import assemble_numpy

_z = sp.Symbol("z", real=True)
#: largest t the float64 backends accept (e^{-log(1+t)} and gamma stay normal numbers).
NP_T_MAX = 1e300
DEFAULT_RTOL = 1e-12


class NonFinite(Exception):
    def __init__(self, x):
        self.x = x


def dell_numpy(loss: str):
    """$\\ell'(z)$ lambdified (numpy) from :attr:`theorems.Loss.dell`."""
    return lambdify_checked([_z], get_loss(loss).dell(_z), backend="numpy")


_add_reduce = np.add.reduce  # bound once: np.sum's wrapper costs ~1 us per call


def all_finite(v) -> bool:
    """``np.all(np.isfinite(v))``, fast path first: a finite sum means finite entries.

    A NaN or infinite entry makes the sum NaN or infinite, so the fast path never passes a
    bad vector; only a sum that overflows (all entries finite) takes the full check. Call it
    under ``np.errstate(over="ignore", invalid="ignore")`` (as :func:`dop853_solve` does).
    """
    return math.isfinite(_add_reduce(v)) or bool(np.isfinite(v).all())


def make_system_np(problem, clock):
    """Return ``(f, y0, unpack)`` for the flat state ``[V.ravel(), a, (T)]``.

    ``f(x, y)`` raises ``NonFinite`` on a non-finite right-hand side. In the ``t`` and
    ``log`` clocks it is one call of the generated ``flow_rhs`` plus one concatenation (and
    one scaling by $e^\\sigma$): the wrapper's own cost per call is about 2.5 us
    (measured in the module docstring).
    """
    rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)
    d, n = problem.d, problem.n
    target, X = problem.target, problem.X
    dn = d * n

    def unpack(y):
        return y[:dn].reshape(d, n), y[dn:dn + n]

    if clock in ("t", "log"):
        log_clock = clock == "log"

        def f(x, y):
            dV, da = rhs(y[:dn].reshape(d, n), y[dn:], target, X)
            out = np.concatenate((dV.reshape(dn), da))
            if log_clock:
                out *= math.exp(x)
            if not all_finite(out):
                raise NonFinite(x)
            return out
    else:
        dell = dell_numpy(problem.loss)

        def f(x, y):
            # tau clock, assembled from generated pieces (numerics.integrate._clock):
            # dV/dtau = w phi^T, da/dtau = J_phi^T V^T w, dT/dtau = e^{-T} / gamma(z)
            V, a = unpack(y)
            phi = rhs.phi(a)
            u = target @ V
            gamma = -float(dell(float(np.dot(u, phi))))
            if not gamma > 0:  # gamma = -ell'(z) underflowed (huge margin z)
                raise NonFinite(x)
            try:
                eT = exp_neg_T(float(y[-1]))  # guarded: T < -1 only in a diverging trial step
            except OverflowError:
                raise NonFinite(x) from None
            out = np.concatenate([np.outer(target, phi).ravel(), rhs.jvp_T(a, u), [eT / gamma]])
            if not all_finite(out):
                raise NonFinite(x)
            return out

    y0 = np.concatenate([problem.V.ravel(), problem.a] + ([[0.0]] if clock == "tau" else []))
    return f, y0, unpack


def _t_of(clock, x, y):
    if clock == "t":
        return x
    return math.expm1(y[-1] if clock == "tau" else x)


def dop853_solve(f, x0, y0, targets, *, component=None, rtol, atol, max_steps, t_of,
                 freeze=None, progress=None):
    """Step DOP853 from ``(x0, y0)`` through the output coordinates ``targets``.

    Mirrors :func:`numerics.integrate._gbs.gbs_solve`: ``component`` is ``None`` (targets are
    values of ``x``) or the index of an increasing state component; ``freeze(x, y)`` returns
    ``None`` or a bound. Returns ``(outputs [(x, y)], stats, frozen)``.
    """
    coord = (lambda x, y: x) if component is None else (lambda x, y: y[component])
    outputs, k = [], 0
    while k < len(targets) and targets[k] <= coord(x0, y0):
        outputs.append((x0, y0.copy()))
        k += 1
    stats = {"n_steps": 0, "n_rejected": 0, "n_rhs": 0}
    frozen = None
    if k == len(targets):
        return outputs, stats, frozen
    x_bound = targets[-1] if component is None else math.inf
    c0, span = coord(x0, y0), targets[-1] - coord(x0, y0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        try:
            solver = scipy.integrate.DOP853(f, x0, y0, x_bound, rtol=rtol, atol=atol)
        except NonFinite as exc:
            raise IntegrationError(t_of(x0, y0), f"non-finite right-hand side at the start "
                                   f"(x = {exc.x:.6g})") from None
        n_stages = solver.n_stages
        while k < len(targets):
            if stats["n_steps"] >= max_steps:
                raise IntegrationError(t_of(solver.t, solver.y), f"max_steps={max_steps} reached "
                                       "before the last output time")
            x_prev, y_prev, nfev = solver.t, solver.y, solver.nfev  # step() rebinds solver.y
            try:
                msg = solver.step()
            except NonFinite as exc:
                raise IntegrationError(t_of(x_prev, y_prev), "non-finite right-hand side "
                                       f"(at x = {exc.x:.6g})") from None
            if solver.status == "failed":
                raise IntegrationError(t_of(x_prev, y_prev), f"DOP853 failed: {msg}")
            stats["n_steps"] += 1
            # every attempt costs n_stages evaluations (rk_step); the extra ones were rejected
            stats["n_rejected"] += (solver.nfev - nfev) // n_stages - 1
            if not all_finite(solver.y):
                raise IntegrationError(t_of(x_prev, y_prev), "non-finite state")
            sol = None
            cur = coord(solver.t, solver.y)
            while k < len(targets) and targets[k] <= cur:
                c = targets[k]
                if c == cur:
                    outputs.append((solver.t, solver.y.copy()))
                else:
                    if sol is None:
                        try:  # DOP853's dense output evaluates three more stages of the field
                            sol = solver.dense_output()
                        except NonFinite as exc:
                            raise IntegrationError(t_of(x_prev, y_prev), "non-finite right-hand side in the "
                                                   f"dense output (at x = {exc.x:.6g})") from None
                    if component is None:
                        xs = c
                    else:
                        xs = scipy.optimize.brentq(lambda s, sol=sol, c=c: sol(s)[component] - c, x_prev,
                                                   solver.t, xtol=1e-300,
                                                   rtol=4 * np.finfo(float).eps)
                    outputs.append((xs, sol(xs)))
                k += 1
            if progress is not None and span > 0:
                progress.update((cur - c0) / span)
            if freeze is not None and k < len(targets):
                bound = freeze(solver.t, solver.y)
                if bound is not None:
                    frozen = (solver.t, solver.y.copy(), bound)
                    while k < len(targets):
                        outputs.append((solver.t, solver.y.copy()))
                        k += 1
        stats["n_rhs"] = solver.nfev
    return outputs, stats, frozen


#: smallest rtol DOP853 honours (scipy clamps smaller ones to it, with a warning)
RTOL_MIN = 100 * float(np.finfo(float).eps)


def integrate_numpy(problem, times, *, clock, rtol=None, atol=None, max_steps=100_000,
                    progress=False, freeze=True) -> Trajectory:
    """Integrate ``problem`` with DOP853; ``times`` are decimal strings (see ``prepare_times``)."""
    start = _time.perf_counter()
    rtol = DEFAULT_RTOL if rtol is None else rtol
    if rtol < RTOL_MIN:  # scipy would raise it to this floor with a warning: the run would not be at rtol
        raise InvalidArgument(f"rtol={rtol!r} is not allowed with backend='numpy'; expected rtol >= {RTOL_MIN:.3g} "
                              "(100 float64 epsilons, scipy's floor for DOP853); use backend='mpmath' for tighter")
    atol = rtol * 1e-2 if atol is None else atol
    tv = [float(s) for s in times]
    if tv[-1] > NP_T_MAX:
        raise InvalidArgument(f"t_end={times[-1]} is not allowed with backend='numpy'; expected "
                              f"t_end <= {NP_T_MAX:g} (float64 range); use backend='mpmath'")
    f, y0, unpack = make_system_np(problem, clock)
    rule = freeze_rule(problem) if freeze and clock in ("t", "log") else None

    def freeze_check(x, y):
        V, a = unpack(y)
        B = float(rule.bound_np(V, a))
        big = float(np.max(np.abs(y)))
        ynorm = big * float(np.linalg.norm(y / big)) if big > 0 else 0.0  # no overflow above 1e154
        tol = FREEZE_FACTOR * max(atol, rtol * ynorm)
        # B <= inf would freeze anything: only finite bounds and tolerances count
        return B if math.isfinite(B) and math.isfinite(tol) and B <= tol else None

    targets = [t if clock == "t" else math.log1p(t) for t in tv]
    check_resolved(times, targets, "backend='numpy' (float64)")
    bar = Progress(f"numpy/{clock}", enabled=progress)
    try:
        outputs, stats, frozen = dop853_solve(
            f, 0.0, y0, targets, component=(len(y0) - 1 if clock == "tau" else None), rtol=rtol,
            atol=atol, max_steps=max_steps, t_of=lambda x, y: _t_of(clock, x, y),
            freeze=None if rule is None else freeze_check, progress=bar)
    finally:
        bar.close()
    taus = [float(x) for x, _ in outputs] if clock == "tau" else None
    states = [y for _, y in outputs]
    outputs.clear()  # the states list holds the only references: assemble_numpy frees each once copied
    traj = assemble_numpy(problem, tv, states, unpack, backend="numpy", clock=clock, method="DOP853",
                          rtol=rtol, atol=atol, consume=True, **stats)
    if taus is not None:
        traj.tau = taus
    check_descent(traj.loss, traj.times, rtol=rtol, where=" (backend numpy)",
                  initial=assemble_numpy(problem, [0.0], [y0], unpack, backend="numpy", clock=clock,
                                         method="DOP853", n_steps=0).loss[0])
    if frozen is not None:
        x, y, B = frozen
        traj.frozen_at, traj.freeze_bound = _t_of(clock, x, y), B
        traj.notes.append(f"state frozen from t={traj.frozen_at:.6g}: {rule.describe()}, B={B:.3g}")
    traj.wall_time = _time.perf_counter() - start
    return traj
