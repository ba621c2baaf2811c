r"""Gradient descent with a fixed step: the authors' discrete runs, and GD $\to$ flow.

$\theta_{k+1}=\theta_k+\eta\,F(\theta_k)$ with $F=(\dot V,\dot a)$ the generated right-hand
side (:func:`numerics.flow_rhs`, which is $-\nabla$ of the objective), so iterate $k$ is
reported at time $t=\eta k$. Iterate $k$ is the state *after* $k$ updates (the authors'
notebook records iteration $i$ after $i+1$ updates). Forward Euler has global error
$O(\eta)$ on a fixed interval $[0,t]$; the tests fit that slope.

The presets of :data:`numerics.PRESETS` carry the authors' ``lr`` and ``steps``.
"""
from __future__ import annotations

import math
import time as _time

import mpmath
import numpy as np

from theorems import InvalidArgument, check_choice, check_int
from theorems._errors import SoftpolarWarning, check_real, show

from ._common import DESCENT_SLACK, MAX_DPS, IntegrationError
from ._mpmath import GUARD_DIGITS, assemble_mpmath
from ._numpy import assemble_numpy
from .._problem import Problem
from .._progress import Progress
from .._rhs import flow_rhs


def default_record(steps: int, num: int = 40) -> list[int]:
    """0, ``num`` log-spaced iteration indices and ``steps`` (unique, increasing)."""
    if steps <= num:
        return list(range(steps + 1))
    ks = np.unique(np.round(np.logspace(0, math.log10(steps), num)).astype(np.int64))
    return sorted({0, steps, *[int(k) for k in ks]})


class DescentWarning(SoftpolarWarning, RuntimeWarning):
    """Gradient descent raised the loss above its initial value: ``lr`` is too large for descent
    (the iterates do not follow the flow, which cannot raise the loss)."""


def _warn_if_ascending(traj, lr) -> None:
    import warnings

    L = [float(x) for x in traj.loss]
    if not L:
        return
    scale = max(abs(v) for v in L if math.isfinite(v)) if any(math.isfinite(v) for v in L) else 0.0
    for k, v in enumerate(L[1:], 1):
        if not v <= L[0] + DESCENT_SLACK * scale:
            msg = (f"gradient descent raised the loss from {L[0]:.6g} to {v:.6g} (iterate "
                   f"{traj.n_steps if k == len(L) - 1 else k}); lr={lr!r} is too large for descent, "
                   "so these iterates do not approximate the gradient flow")
            traj.notes.append("WARNING: " + msg)
            warnings.warn(msg, DescentWarning, stacklevel=3)
            return


#: the numpy loop tests its iterate for non-finite entries after every ``FINITE_BLOCK`` updates and after the
#: last one (the test cost 18 % of a small problem's step). A non-finite entry stays non-finite under
#: $\theta+\eta F$ (inf plus a finite number is inf, nan absorbs everything), so a failed test replays the block
#: from its last finite iterate, testing after every update: the error names the same first non-finite step
#: as a test after every update would, and no non-finite iterate is ever returned.
FINITE_BLOCK = 256


def _finite(V, a) -> bool:
    return bool(np.all(np.isfinite(V)) and np.all(np.isfinite(a)))


def _raise_first_nonfinite(rhs, block, k_end, lr, tgt, X):
    """Replay the updates from ``block = (k0, V, a)`` (a finite iterate) and raise at the first non-finite one
    (at the latest at iterate ``k_end``, known to be non-finite)."""
    k, V, a = block
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        while k < k_end:
            dV, da = rhs(V, a, tgt, X)
            V, a, k = V + lr * dV, a + lr * da, k + 1
            if not _finite(V, a):
                break
    raise IntegrationError(lr * k, f"non-finite GD iterate at step {k}")


def gradient_descent(problem: Problem, *, lr, steps: int, record=None, backend: str = "numpy",
                     dps: int = 30, progress: bool = False, max_steps: int | None = None):
    r"""Run ``steps`` GD iterations with step ``lr``; return a :class:`Trajectory` at the
    iterations in ``record`` (default :func:`default_record`), with ``times = lr * k``.

    ``backend``: ``numpy`` (float64) or ``mpmath`` (``dps`` digits, slow: for checks).
    A non-finite iterate raises :class:`IntegrationError`; a loss above the initial one at a
    recorded iterate warns (:class:`DescentWarning`, also in ``Trajectory.notes``).
    ``max_steps``: refuse (``InvalidArgument``) more than this many iterations before starting.
    """
    start = _time.perf_counter()
    if not isinstance(problem, Problem):
        raise InvalidArgument(f"problem={show(problem)} is not allowed; expected a numerics.Problem")
    check_choice("backend", backend, ("numpy", "mpmath"))
    steps = check_int("steps", steps, minimum=0)
    dps = check_int("dps", dps, minimum=5, maximum=MAX_DPS)
    if max_steps is not None and steps > check_int("max_steps", max_steps, minimum=1):
        raise InvalidArgument(f"steps={steps} exceeds max_steps={max_steps}; expected at most "
                              f"max_steps iterations (raise max_steps to allow more)")
    lr = check_real("lr", lr, minimum=0.0, strict_minimum=True)
    try:
        record = default_record(steps) if record is None else list(record)
    except TypeError:
        raise InvalidArgument(f"record={show(record)} is not allowed; expected a list of iteration "
                              "indices") from None
    if not record or any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) for k in record) \
            or any(b <= a for a, b in zip(record, record[1:])) or record[0] < 0 or record[-1] > steps:
        raise InvalidArgument(f"record={show(record)} is not allowed; expected strictly increasing "
                              f"integers in [0, {steps}]")
    record = [int(k) for k in record]
    bar = Progress(f"gd/{backend}", enabled=progress)
    d, n = problem.d, problem.n
    if backend == "numpy":
        rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)
        V, a = problem.V.copy(), problem.a.copy()
        tgt, X = problem.target, problem.X
        states, j = [], 0
        block = (0, V, a)  # the last iterate found finite, where a replay starts
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for k in range(steps + 1):
                if k == record[j]:
                    states.append(np.concatenate([V.ravel(), a]))
                    j += 1
                    if j == len(record):
                        break
                dV, da = rhs(V, a, tgt, X)
                V = V + lr * dV
                a = a + lr * da
                if (k + 1) % FINITE_BLOCK == 0:
                    if not _finite(V, a):
                        _raise_first_nonfinite(rhs, block, k + 1, lr, tgt, X)
                    block = (k + 1, V, a)
                if progress and k % 1000 == 0:
                    bar.update(k / max(steps, 1))
            if not _finite(V, a):
                _raise_first_nonfinite(rhs, block, record[-1], lr, tgt, X)
        bar.close()

        def unpack(y):
            return y[:d * n].reshape(d, n), y[d * n:]

        traj = assemble_numpy(problem, [lr * k for k in record], states, unpack, backend="numpy",
                              clock="t", method=f"GD(lr={lr:g})", n_steps=record[-1])
    else:
        with mpmath.workdps(dps + GUARD_DIGITS):
            rhs = flow_rhs(problem.loss, problem.link, backend="mpmath", frozen=problem.frozen)
            h = mpmath.mpf(repr(float(lr)))
            # exact inputs rounded once to the working precision (float64 entries as given)
            V, a = problem.mp_values("V"), problem.mp_values("a")
            tgt, X = problem.mp_values("target"), problem.mp_values("X")
            states, j = [], 0
            for k in range(steps + 1):
                if k == record[j]:
                    states.append([v for row in V for v in row] + list(a))
                    j += 1
                    if j == len(record):
                        break
                dV, da = rhs(V, a, tgt, X)
                V = [[v + h * dv for v, dv in zip(row, drow)] for row, drow in zip(V, dV)]
                a = [v + h * dv for v, dv in zip(a, da)]
                if progress and k % 100 == 0:
                    bar.update(k / max(steps, 1))
            bar.close()

            def unpack(y):
                return [y[i * n:(i + 1) * n] for i in range(d)], y[d * n:d * n + n]

            traj = assemble_mpmath(problem, [h * k for k in record], states, unpack, tgt, X,
                                   dps=dps, backend="mpmath", clock="t",
                                   method=f"GD(lr={lr:g})", n_steps=record[-1])
    traj.notes.append(f"gradient descent, lr={lr!r}, {record[-1]} steps; t = lr * k")
    traj.notes.append(problem.input_note(backend))
    _warn_if_ascending(traj, lr)
    traj.wall_time = _time.perf_counter() - start
    return traj
