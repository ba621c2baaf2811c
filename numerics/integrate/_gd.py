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
import warnings

import mpmath
import numpy as np

from theorems import InvalidArgument, check_choice, check_int
from theorems.errors import SoftpolarWarning, check_real, show

from ._common import DESCENT_SLACK, MAX_DPS, IntegrationError, prepare_times
from ._system import GUARD_DIGITS, assemble_mpmath, assemble_numpy
from ..problem import Problem
from ..progress import Progress
from ..rhs import flow_rhs


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
    (at the latest at iterate ``k_end``, known to be non-finite). For a stack of problems (``V`` of shape
    ``(B, d, n)``) the message also names the first member that is non-finite there."""
    k, V, a = block
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        while k < k_end:
            dV, da = rhs(V, a, tgt, X)
            V, a, k = V + lr * dV, a + lr * da, k + 1
            if not _finite(V, a):
                break
    where = ""
    if V.ndim == 3:
        bad = [i for i in range(V.shape[0]) if not _finite(V[i], a[i])]
        where = f" (problems[{bad[0]}])" if bad else ""
    raise IntegrationError(lr * k, f"non-finite GD iterate at step {k}{where}")


def _descend_numpy(rhs, V, a, tgt, X, lr, record, bar=None, steps=None):
    r"""The float64 loop: the iterates ``record`` (strictly increasing, >= 0) of $\theta+\eta F(\theta)$ from
    ``(V, a)``, as flat states ``(..., d n + n)`` (``V`` row-major, then ``a``).

    One problem (``V (d, n)``, ``a (n,)``, ``tgt (m,)``, ``X (m, d)`` or ``None``) or a stack of ``B`` of them
    (a leading axis on each): the generated right-hand side is batched over leading axes and evaluates every
    member with the kernels it runs alone. The update is written in place into the loop's own copies (the
    float64 operations of ``V = V + lr * dV``, without the new array), and the steps run in segments between
    the recorded iterates and the finiteness tests (every :data:`FINITE_BLOCK` updates and at the end), so
    the loop body is the update alone. ``bar``: a :class:`Progress`, told ``k / steps`` at each test.
    """
    V, a = np.array(V, dtype=np.float64), np.array(a, dtype=np.float64)  # own copies, updated in place
    lead = V.shape[:-2]
    states = []
    block = (0, V.copy(), a.copy())  # the last iterate found finite, where a replay starts
    k = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for k_rec in record:
            while k < k_rec:
                stop = min(k_rec, (k // FINITE_BLOCK + 1) * FINITE_BLOCK)
                for _ in range(stop - k):
                    dV, da = rhs(V, a, tgt, X)
                    V += lr * dV
                    a += lr * da
                k = stop
                if k % FINITE_BLOCK == 0:
                    if not _finite(V, a):
                        _raise_first_nonfinite(rhs, block, k, lr, tgt, X)
                    block = (k, V.copy(), a.copy())
                    if bar is not None:
                        bar.update(k / max(steps or k, 1))
            states.append(np.concatenate([V.reshape(lead + (-1,)), a], axis=-1))
        if not _finite(V, a):
            _raise_first_nonfinite(rhs, block, record[-1], lr, tgt, X)
    return states


#: the most iterations a run may ask for: the recorded indices are int64 (a larger count was a ValueError from
#: formatting an integer of thousands of digits, found by tests/test_fuzz_api.py)
_MAX_STEPS = 2**63 - 1


def _check_run(lr, steps, record, max_steps):
    """The validated ``(lr, steps, record)`` of a GD run (``record=None``: :func:`default_record`)."""
    steps = check_int("steps", steps, minimum=0, maximum=_MAX_STEPS)
    if max_steps is not None and steps > check_int("max_steps", max_steps, minimum=1):
        raise InvalidArgument(f"steps={show(steps)} exceeds max_steps={show(max_steps)}; expected at most "
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
    return lr, steps, [int(k) for k in record]


def _assemble(problem, lr, record, states):
    """The numpy :class:`Trajectory` of one problem from its flat states."""
    d, n = problem.d, problem.n

    def unpack(y):
        return y[:d * n].reshape(d, n), y[d * n:]

    # assemble_numpy looked up at call time (the record mutant of proofs_check patches it)
    return assemble_numpy(problem, [lr * k for k in record], states, unpack, backend="numpy",
                          clock="t", method=f"GD(lr={lr:g})", n_steps=record[-1])


def _finish(traj, problem, lr, record, backend, start):
    traj.notes.append(f"gradient descent, lr={lr!r}, {record[-1]} steps; t = lr * k")
    traj.notes.append(problem.input_note(backend))
    _warn_if_ascending(traj, lr)
    traj.wall_time = _time.perf_counter() - start
    return traj


#: a requested time t is an iterate's time when |t - lr k| <= GD_TIME_RTOL * t for an integer k: GD
#: iterates exist only at t = lr k, and t / lr in float64 is off by a few ulps (0.3 / 0.1 = 2.9999...)
GD_TIME_RTOL = 1e-12
#: the most iterates a time horizon may ask for (t_end / lr) when max_steps is not given
DEFAULT_GD_MAX_STEPS = 10**7
#: the names the refusals of :func:`gd_iterates` give its arguments (the CLI passes its options' names)
_GD_NAMES = {"lr": "lr", "t_end": "t_end", "times": "times", "max_steps": "max_steps"}


def gd_iterates(lr, t_end, times=None, *, max_steps=None, names=None) -> tuple[list[int], int]:
    r"""How a time horizon becomes gradient-descent iterates: ``(record, cap)`` for a run with step ``lr``.

    Iterates exist only at $t=\eta k$: every requested time must be one (to :data:`GD_TIME_RTOL`), and two
    times may not name the same iterate. Without ``times``, ``t_end`` must be an iterate's time and the record is
    :func:`default_record` up to it (0 and log-spaced iterates, each reported at its own time ``lr * k``);
    ``t_end / lr`` may be at most ``max_steps`` (default :data:`DEFAULT_GD_MAX_STEPS`), the ``cap`` returned.
    Anything else is refused in one line (``InvalidArgument``); ``names``: what the messages call the arguments
    (``{"lr": "--gd-lr", ...}`` from the CLI; default their Python names).
    """
    name = {**_GD_NAMES, **(names or {})}
    lr = check_real(name["lr"], lr, minimum=0.0, strict_minimum=True)
    tv = [float(s) for s in prepare_times(t_end, ["0", t_end] if times is None else times)]
    cap = DEFAULT_GD_MAX_STEPS if max_steps is None else max_steps
    steps = tv[-1] / lr
    if not steps <= cap:
        raise InvalidArgument(f"{name['t_end']}={t_end} with {name['lr']}={lr!r} needs {steps:.3g} gradient "
                              f"descent steps; expected at most {name['max_steps']}={cap} (default "
                              f"{DEFAULT_GD_MAX_STEPS}; raise it to allow more)")

    def k_of(t, what):
        k = round(t / lr)
        if abs(k * lr - t) > GD_TIME_RTOL * t:
            lo, hi = math.floor(t / lr) * lr, math.ceil(t / lr) * lr
            raise InvalidArgument(f"{what}={t:g} is not a time of gradient descent with {name['lr']}={lr!r}: "
                                  f"iterates exist only at t = lr * k (nearest {lo:.6g} and {hi:.6g}); expected "
                                  f"times that are multiples of {name['lr']}")
        return int(k)

    if times is None:
        return default_record(k_of(tv[-1], name["t_end"])), cap
    ks = [k_of(t, name["times"]) for t in tv]
    if len(set(ks)) != len(ks):
        raise InvalidArgument(f"{name['times']}={','.join(f'{t:g}' for t in tv)} name the same gradient-descent "
                              f"iterate twice with {name['lr']}={lr!r}; expected distinct multiples of "
                              f"{name['lr']}")
    return ks, cap


def gradient_descent(problem: Problem, *, lr, steps: int | None = None, record=None, backend: str = "numpy",
                     dps: int = 30, progress: bool = False, max_steps: int | None = None, t_end=None,
                     times=None):
    r"""Run ``steps`` GD iterations with step ``lr``; return a :class:`Trajectory` at the
    iterations in ``record`` (default :func:`default_record`), with ``times = lr * k``.

    ``backend``: ``numpy`` (float64) or ``mpmath`` (``dps`` digits, slow: for checks).
    A non-finite iterate raises :class:`IntegrationError`; a loss above the initial one at a
    recorded iterate warns (:class:`DescentWarning`, also in ``Trajectory.notes``).
    ``max_steps``: refuse (``InvalidArgument``) more than this many iterations before starting.
    A time horizon instead of ``steps``/``record``: ``t_end`` (and ``times``, the output times) become the
    iterates by :func:`gd_iterates` (each time a multiple of ``lr``; ``t_end / lr`` at most ``max_steps``,
    default :data:`DEFAULT_GD_MAX_STEPS`), the policy of ``softpolar simulate --gd-lr``.
    Several problems of one shape: :func:`gradient_descent_batch` (the same iterates, cheaper).
    """
    start = _time.perf_counter()
    if not isinstance(problem, Problem):
        raise InvalidArgument(f"problem={show(problem)} is not allowed; expected a numerics.Problem")
    check_choice("backend", backend, ("numpy", "mpmath"))
    if t_end is not None:
        if steps is not None or record is not None:
            raise InvalidArgument(f"t_end={show(t_end)} is not allowed with steps={show(steps)} or "
                                  f"record={show(record)}; expected a time horizon (t_end, times) or iterates "
                                  "(steps, record), not both")
        record, cap = gd_iterates(lr, t_end, times, max_steps=max_steps)
        steps, max_steps = record[-1], max(cap, record[-1])
    elif times is not None:
        raise InvalidArgument(f"times={show(times)} is not allowed without t_end; expected t_end with times, or "
                              "record (iteration indices) with steps")
    elif steps is None:
        raise InvalidArgument("steps=None is not allowed; expected the number of iterations (or a time horizon "
                              "t_end)")
    steps = check_int("steps", steps, minimum=0, maximum=_MAX_STEPS)
    dps = check_int("dps", dps, minimum=5, maximum=MAX_DPS)
    lr, steps, record = _check_run(lr, steps, record, max_steps)
    bar = Progress(f"gd/{backend}", enabled=progress)
    d, n = problem.d, problem.n
    if backend == "numpy":
        rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)
        states = _descend_numpy(rhs, problem.V, problem.a, problem.target, problem.X, lr, record,
                                bar if progress else None, steps)
        bar.close()
        traj = _assemble(problem, lr, record, states)
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
    return _finish(traj, problem, lr, record, backend, start)


def _check_batch(problems) -> list:
    """``problems`` as a non-empty list of :class:`Problem` of one loss, link, frozen set and shape."""
    if isinstance(problems, Problem):
        raise InvalidArgument("problems=<one numerics.Problem> is not allowed; expected a list of numerics.Problem "
                              "(for one problem: numerics.gradient_descent)")
    if isinstance(problems, (str, bytes, dict)):
        raise InvalidArgument(f"problems={show(problems)} is not allowed; expected a list of numerics.Problem")
    try:
        problems = list(problems)
    except TypeError:
        raise InvalidArgument(f"problems={show(problems)} is not allowed; expected a list of "
                              "numerics.Problem") from None
    if not problems:
        raise InvalidArgument("problems=[] is not allowed; expected at least one numerics.Problem")
    for i, p in enumerate(problems):
        if not isinstance(p, Problem):
            raise InvalidArgument(f"problems[{i}]={show(p)} is not allowed; expected a numerics.Problem")

    def kind(p):
        return (p.loss, p.link, p.frozen, p.V.shape, p.target.shape, None if p.X is None else p.X.shape)

    first = kind(problems[0])
    for i, p in enumerate(problems[1:], 1):
        if kind(p) != first:
            names = ("loss", "link", "frozen", "V shape", "target shape", "X shape")
            diff = ", ".join(f"{nm} {x!r} (problems[0]: {y!r})" for nm, x, y in zip(names, kind(p), first)
                             if x != y)
            raise InvalidArgument(f"problems[{i}] has {diff}; expected every problem of a batch to share the "
                                  "loss, link, frozen parameters and shapes (run the others in another batch)")
    return problems


def gradient_descent_batch(problems, *, lr, steps: int, record=None, progress: bool = False,
                           max_steps: int | None = None) -> list:
    r"""Run :func:`gradient_descent` (numpy backend) on several problems at once: one list of
    :class:`Trajectory`, member ``i`` the run of ``problems[i]``.

    The problems share the loss, link, frozen parameters and the shapes of ``V``, ``target`` and ``X``
    (``InvalidArgument`` otherwise); ``lr``, ``steps``, ``record`` and ``max_steps`` are those of every run.
    The iterates are stacked on a leading axis and updated by one call of the generated right-hand side
    per step, which evaluates each member with the kernels of a single run: every member equals
    ``gradient_descent(problems[i], ...)`` bit for bit (tested) at a fraction of the interpreter overhead
    (5 problems of ``d = n = 20``: about 4x less CPU). A non-finite iterate of any member raises
    :class:`IntegrationError` naming the first non-finite step and the member; each trajectory warns on
    ascent as alone. ``wall_time`` of each trajectory is the batch's.
    """
    start = _time.perf_counter()
    problems = _check_batch(problems)
    lr, steps, record = _check_run(lr, steps, record, max_steps)
    p0 = problems[0]
    rhs = flow_rhs(p0.loss, p0.link, frozen=p0.frozen)
    V = np.stack([p.V for p in problems])
    a = np.stack([p.a for p in problems])
    tgt = np.stack([p.target for p in problems])
    X = None if p0.X is None else np.stack([p.X for p in problems])
    bar = Progress(f"gd/numpy x{len(problems)}", enabled=progress)
    states = _descend_numpy(rhs, V, a, tgt, X, lr, record, bar if progress else None, steps)
    bar.close()
    out = []
    for i, p in enumerate(problems):
        traj = _assemble(p, lr, record, [s[i] for s in states])
        traj.notes.append(f"run in a batch of {len(problems)} (numerics.gradient_descent_batch, member {i})")
        out.append(_finish(traj, p, lr, record, "numpy", start))
    wall = _time.perf_counter() - start
    for traj in out:
        traj.wall_time = wall
    return out
