r"""The front door: :func:`simulate` integrates one :class:`Problem` with a chosen backend.

========  =======================================  ==================================
backend   method                                   precision / clock default
========  =======================================  ==================================
mpmath    Gragg–Bulirsch–Stoer (any order)         ``dps`` digits (default 30); logistic: ``tau``*
numpy     SciPy DOP853 (``rtol=1e-12``)            float64; logistic: ``log``*
torch     batched DOP853 (:func:`integrate_batch`)  float64, ``device``; logistic: ``log``*
taylor    Taylor method compiled by heyoka         ``dps`` digits (``heyoka.real``), or float64
                                                   with ``dps=None``; logistic: ``tau``* (float64: ``log``*)
auto      ``taylor`` when heyoka is importable     as the backend it picks (the default)
          and the flow is smooth, else ``mpmath``
========  =======================================  ==================================

(*) for ``t_end > 100``; shorter logistic runs use the ``t`` clock (measured faster).

``auto`` (the default) is the high-precision choice: the taylor backend (optional extra
``[taylor]``, :mod:`numerics.integrate.taylor`) when ``heyoka`` is importable and the link is
smooth (read off the definition: not ``relu-norm``, ``l1-norm``, ``stablemax``, ``softpick``) and
no GBS-only feature is asked for (``atol``; the tail-bound freezing of square / kl states, i.e.
``freeze=True`` with those losses), else GBS (``mpmath``). The trajectory's ``backend`` says
which one ran, and a note says why.

Every backend evaluates the generated right-hand side of :func:`numerics.flow_rhs` (the
$\tau$ clock assembles it from the generated $\varphi$, $J_\varphi^\top$, $\ell'$, see
:mod:`numerics.integrate._clock`). Long horizons: the logistic loss runs in ``tau`` / ``log`` time
(``t_end=1e100`` works; numpy and torch stop at ``1e300``); square and kl losses run in
``t`` and freeze a converged state only by the rigorous tail bound of
:mod:`numerics.integrate._freeze` (reported in ``Trajectory.frozen_at`` / ``notes``). Any
failure raises :class:`IntegrationError`; bad input raises :class:`InvalidArgument`. The
``tau`` clock needs the working precision to resolve $\tau$ itself: after a long metastable
phase ($\tau\approx t/2$ up to $e^{78}$ for softmax1's sink, claim SINK2) steps of order 1 in
$\tau$ are below it, and GBS and taylor raise rather than return (which backend reaches which
escape: docs/models.md).

``rtol`` / ``atol`` bound each step's local error estimate, in the clock being stepped, so
one tolerance gives different global errors in different clocks (numpy, logistic toy
$n=d=8$ to $t=10^6$, ``rtol=1e-12``: ``log`` 2.1e-13, ``t`` 1.9e-14; see
:mod:`numerics.integrate._numpy`). ``backend='numpy', clock='t'`` reproduces a direct
``scipy.integrate.solve_ivp(..., method='DOP853')`` run on the flat state $(V, a)$ step for step.
"""
from __future__ import annotations

import time as _time

import numpy as np

from theorems import InvalidArgument, check_choice, check_int
from theorems.errors import show

from ._common import MAX_DPS, Trajectory, check_tolerance, prepare_times, resolve_clock
from ._mpmath import integrate_mpmath
from ._numpy import integrate_numpy
from . import taylor
from ..problem import Problem
from ._torch import integrate_batch

BACKENDS = ("auto", "mpmath", "numpy", "torch", "taylor")
DEFAULT_MAX_STEPS = {"mpmath": 20_000, "numpy": 100_000, "torch": 100_000, "taylor": 100_000}


def resolve_backend(problem: Problem, backend: str = "auto", *, atol=None,
                    freeze: bool = True) -> tuple[str, str]:
    """``(backend, reason)``: ``auto`` becomes ``taylor`` when it suits ``problem``, else ``mpmath``."""
    check_choice("backend", backend, BACKENDS)
    if backend != "auto":
        return backend, "requested"
    ok, why = taylor.suits(problem, freeze=freeze)
    if ok and atol is not None:
        ok, why = False, "atol given (the Taylor backend has one mixed tolerance)"
    return ("taylor", why) if ok else ("mpmath", why)


def _frozen_clock(problem, requested: str, clock: str) -> str:
    """The tau clock moves every parameter: with frozen ones, ``auto`` takes the log clock instead."""
    if clock == "tau" and problem.frozen and requested == "auto":
        return "log"
    return clock


def simulate(problem: Problem, *, t_end, times=None, backend: str = "auto", dps: int | None = 30,
             rtol=None, atol=None, device: str = "cpu", clock: str = "auto",
             max_steps: int | None = None, progress: bool = False,
             freeze: bool = True) -> Trajectory:
    r"""Integrate the gradient flow of ``problem`` up to ``t_end``.

    Args:
        problem: the initial-value problem (:class:`Problem`).
        t_end: final time (> 0); a number or a decimal string (exact for mpmath).
        times: output times (increasing, in ``[0, t_end]``); default 0 and 39 log-spaced
            times ending at ``t_end``. The returned lists are aligned with them.
        backend: ``auto`` (default) | ``mpmath`` | ``numpy`` | ``torch`` | ``taylor``.
        dps: decimal digits for mpmath / taylor (the integration carries 12 guard digits);
            ``None`` with ``backend='taylor'``: float64.
        rtol, atol: local error tolerances (defaults: mpmath ``10**-(dps+2)``, numpy and
            torch ``1e-12`` and ``rtol * 1e-2``).
        device: torch device (``cpu`` / ``cuda``); torch backend only.
        clock: ``auto`` | ``t`` | ``tau`` | ``log`` (see :mod:`numerics.integrate._common`).
        max_steps: accepted steps allowed (default 20 000 mpmath, 100 000 otherwise).
        progress: draw a progress bar on stderr.
        freeze: allow the tail-bound freezing of converged square / kl states.

    Raises:
        InvalidArgument: bad input. IntegrationError: the integrator could not reach ``t_end``.
    """
    if not isinstance(problem, Problem):
        raise InvalidArgument(f"problem={problem!r:.60} is not allowed; expected a numerics.Problem")
    check_choice("backend", backend, BACKENDS)
    if dps is None and backend != "taylor":
        raise InvalidArgument(f"dps=None is only allowed with backend='taylor' (float64); got "
                              f"backend={backend!r}; expected an integer dps >= 5")
    if dps is not None:
        dps = check_int("dps", dps, minimum=5, maximum=MAX_DPS)
    requested = backend
    backend, why = resolve_backend(problem, backend, atol=atol, freeze=freeze)
    if max_steps is None:
        max_steps = DEFAULT_MAX_STEPS[backend]
    max_steps = check_int("max_steps", max_steps, minimum=1)
    rtol, atol = check_tolerance("rtol", rtol), check_tolerance("atol", atol)
    if not isinstance(device, str):
        raise InvalidArgument(f"device={show(device)} is not allowed; expected a torch device name such as 'cpu' "
                              "or 'cuda'")
    if device != "cpu" and backend != "torch":
        raise InvalidArgument(f"device={show(device)} is only used by backend='torch'; expected "
                              "device='cpu' or backend='torch'")
    tstr = prepare_times(t_end, times)
    engine = ENGINES[backend]
    if backend != "taylor":
        clock = _frozen_clock(problem, clock, resolve_clock(problem.loss, clock, backend, tstr[-1]))
    traj = engine(problem, tstr, clock=clock, dps=dps, rtol=rtol, atol=atol, device=device, max_steps=max_steps,
                  progress=progress, freeze=freeze)
    if requested == "auto" and backend in AUTO_NOTE:
        traj.notes.append(AUTO_NOTE[backend].format(why=why))
    if backend in INPUT_NOTE:  # were exact inputs rounded (float64), or once to the working precision?
        traj.notes.append(INPUT_NOTE[backend](problem, dps))
    return traj


def _engine_taylor(problem, tstr, *, clock, dps, rtol, atol, max_steps, progress, **_):
    if atol is not None:
        raise InvalidArgument(f"atol={atol!r} is not allowed with backend='taylor' (heyoka has one "
                              "mixed absolute/relative tolerance); expected atol=None, or rtol")
    # multiprecision picks its clock like GBS (tau), float64 like numpy (log)
    clock = _frozen_clock(problem, clock, resolve_clock(problem.loss, clock, "numpy" if dps is None else "mpmath",
                                                        tstr[-1]))
    return taylor.integrate_taylor(problem, tstr, clock=clock, dps=dps, rtol=rtol, max_steps=max_steps,
                                    progress=progress)


def _taylor_input_note(problem, dps) -> str:
    if dps is None:  # float64: were exact inputs rounded?
        return problem.input_note("taylor")
    # multiprecision keeps exact inputs, rounded once to the working precision (like GBS)
    return problem.input_note("mpmath").replace("the mpmath working precision", "the working precision (heyoka.real)")


def _engine_mpmath(problem, tstr, *, device, **kw):
    return integrate_mpmath(problem, tstr, **kw)


def _engine_numpy(problem, tstr, *, dps, device, **kw):
    return integrate_numpy(problem, tstr, **kw)


def _engine_torch(problem, tstr, *, dps, **kw):
    return _simulate_torch(problem, tstr, **kw)


def _simulate_torch(problem, tstr, **kw) -> Trajectory:
    start = _time.perf_counter()
    r = integrate_batch(problem.V[None], problem.a[None], problem.target[None],
                        loss=problem.loss, link=problem.link, X=problem.X, t_end=tstr[-1],
                        times=tstr, frozen=problem.frozen, **kw)
    col = lambda key: r[key][:, 0].cpu().tolist()
    traj = Trajectory(times=[float(s) for s in tstr], a=col("a"), weights=col("weights"),
                      loss=col("loss"), entropy=col("entropy"), max_weight=col("max_weight"),
                      argmax=[int(i) for i in col("argmax")], one_minus_max=col("one_minus_max"),
                      V=r["V"][:, 0].cpu().numpy().astype(np.float64), backend="torch", clock=r["clock"],
                      method=r["method"].upper(),
                      n_steps=int(r["n_steps"][0]), n_rejected=int(r["n_rejected"][0]),
                      rtol=r["rtol"], atol=r["atol"], problem=problem)
    fz = float(r["frozen_at"][0])
    if fz == fz:
        traj.frozen_at = fz
        traj.notes.append(f"state frozen from t={fz:.6g} by the tail-bound rule")
    traj.wall_time = _time.perf_counter() - start
    return traj


#: the engine table :func:`simulate` picks from (one entry a backend; ``auto`` is resolved before)
ENGINES = {"mpmath": _engine_mpmath, "numpy": _engine_numpy, "torch": _engine_torch, "taylor": _engine_taylor}
#: the note an ``auto`` choice leaves, by the engine it chose
AUTO_NOTE = {"taylor": "backend auto -> taylor ({why})", "mpmath": "backend auto -> mpmath (GBS): {why}"}
#: the note on the inputs' rounding, by engine (GBS says it itself)
INPUT_NOTE = {"numpy": lambda problem, dps: problem.input_note("numpy"),
              "torch": lambda problem, dps: problem.input_note("torch"), "taylor": _taylor_input_note}
