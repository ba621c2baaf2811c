r"""The discrete form of an optimizer: ``steps`` updates with learning rate ``lr``, iterate $k$ at $t=k\,\eta$.

:func:`optimizer_descent` runs the assignments of ``step`` of :class:`theorems.optimizers.Rule` (generated kernels,
:mod:`numerics.optim._kernels`) on the gradient $g=-F(\theta)$ of the generated flow (:func:`numerics.flow_rhs`),
block by block, on numpy or torch (float64) or mpmath (``dps`` digits). The built-in ``gd`` and ``adam`` agree
with ``torch.optim.SGD`` and ``torch.optim.Adam`` (``foreach=False``) fed the same gradient to float64 rounding at
every step (tests/test_optimizers_engines.py); ``simulate --optimizer adam --lr 0.01 --t-end T`` takes
``round(T / lr)`` steps.
"""
from __future__ import annotations

import time as _time

import mpmath
import numpy as np

from theorems import InvalidArgument, check_choice, check_int
from theorems import optimizers as O
from theorems.errors import check_real

from ..integrate import GUARD_DIGITS, MAX_DPS, IntegrationError, assemble_mpmath, assemble_numpy, default_record
from ..problem import Problem
from ..rhs import flow_rhs
from ._kernels import hyper_numbers, optimizer_kernels

DISCRETE_BACKENDS = ("numpy", "torch", "mpmath")


def steps_for(t_end, lr) -> int:
    """``round(t_end / lr)``, refused unless ``t_end`` is a whole number of steps (to 1e-9 relative): the
    iterates live on the grid $k\\eta$."""
    t_end = check_real("t_end", t_end, minimum=0.0)
    lr = check_real("lr", lr, minimum=0.0, strict_minimum=True)
    q = t_end / lr
    steps = int(round(q))
    if abs(q - steps) > 1e-9 * max(1.0, q):
        raise InvalidArgument(f"t_end={t_end!r} with lr={lr!r} is {q:.6g} steps; expected a whole number of steps "
                              "(t_end a multiple of lr)")
    return steps


def _init_states(kern, shape_of, backend, like=None):
    out = {}
    for b, bk in kern.blocks.items():
        st = {}
        for s, v0 in bk.init.items():
            if backend == "mpmath":
                st[s] = [[mpmath.mpf(0) + mpmath.mpf(int(v0.p)) / int(v0.q)] * shape_of[b][1]
                         for _ in range(shape_of[b][0])] if b == "V" else \
                    [mpmath.mpf(int(v0.p)) / int(v0.q)] * shape_of[b][0]
            elif backend == "torch":
                import torch
                st[s] = torch.full(shape_of[b], float(v0), dtype=torch.float64)
            else:
                st[s] = np.full(shape_of[b], float(v0))
        out[b] = st
    return out


def _mp_block(fn_values, bk, gv, th, G2, k, lr, st, hv):
    """Apply a block's kernels coordinate by coordinate (mpmath: scalar functions)."""
    flat = isinstance(th[0], list)
    if flat:
        rows = []
        new_st = {s: [] for s in bk.states}
        for i, row in enumerate(th):
            r_th, r_st = [], {s: [] for s in bk.states}
            for j, x in enumerate(row):
                x1, s1 = fn_values(gv[i][j], x, G2, k, lr, {s: st[s][i][j] for s in bk.states}, hv)
                r_th.append(x1)
                for s in bk.states:
                    r_st[s].append(s1[s])
            rows.append(r_th)
            for s in bk.states:
                new_st[s].append(r_st[s])
        return rows, new_st
    out, new_st = [], {s: [] for s in bk.states}
    for j, x in enumerate(th):
        x1, s1 = fn_values(gv[j], x, G2, k, lr, {s: st[s][j] for s in bk.states}, hv)
        out.append(x1)
        for s in bk.states:
            new_st[s].append(s1[s])
    return out, new_st


def optimizer_descent(problem: Problem, optimizer, *, lr, steps: int, record=None, hyper=None,
                      backend: str = "numpy", dps: int = 30, max_steps: int | None = None):
    r"""Run ``steps`` updates of ``optimizer``'s discrete form with learning rate ``lr``; return a
    :class:`numerics.Trajectory` at the iterates ``record`` (default :func:`numerics.integrate._gd.default_record`),
    ``times = lr * k``.

    ``hyper``: ``{name: value}`` overriding the optimizer's hyperparameters (``beta1``, ``eps``, ...).
    ``backend``: ``numpy`` or ``torch`` (float64) or ``mpmath`` (``dps`` digits; exact inputs rounded once).
    A non-finite iterate raises :class:`IntegrationError` naming the step.
    """
    start = _time.perf_counter()
    if not isinstance(problem, Problem):
        raise InvalidArgument(f"problem={problem!r} is not allowed; expected a numerics.Problem")
    opt = O.get_optimizer(optimizer)
    check_choice("backend", backend, DISCRETE_BACKENDS)
    steps = check_int("steps", steps, minimum=0)
    if max_steps is not None and steps > check_int("max_steps", max_steps, minimum=1):
        raise InvalidArgument(f"steps={steps} exceeds max_steps={max_steps}; expected at most max_steps updates")
    lr = check_real("lr", lr, minimum=0.0, strict_minimum=True)
    dps = check_int("dps", dps, minimum=5, maximum=MAX_DPS)
    record = default_record(steps) if record is None else [int(x) for x in record]
    if not record or any(b <= a for a, b in zip(record, record[1:])) or record[0] < 0 or record[-1] > steps:
        raise InvalidArgument(f"record={record!r} is not allowed; expected strictly increasing integers in "
                              f"[0, {steps}]")
    d, n = problem.d, problem.n
    shapes = {"V": (d, n), "a": (n,)}
    if backend == "mpmath":
        with mpmath.workdps(dps + GUARD_DIGITS):
            kern = optimizer_kernels(opt, "mpmath")
            hv = hyper_numbers(opt, hyper, "mpmath")
            rhs = flow_rhs(problem.loss, problem.link, backend="mpmath", frozen=problem.frozen)
            V, a = problem.mp_values("V"), problem.mp_values("a")
            tgt, X = problem.mp_values("target"), problem.mp_values("X")
            h = mpmath.mpf(repr(lr))
            st = _init_states(kern, shapes, "mpmath")
            states, j = [], 0
            for kk in range(steps + 1):
                if kk == record[j]:
                    states.append([x for row in V for x in row] + list(a))
                    j += 1
                    if j == len(record):
                        break
                dV, da = rhs(V, a, tgt, X)
                inp = kern.inputs([[-x for x in row] for row in dV], [-x for x in da])
                kk1 = mpmath.mpf(kk + 1)
                V, st["V"] = _mp_block(kern.blocks["V"].step_values, kern.blocks["V"], inp["V"][0], V, inp["V"][1],
                                       kk1, h, st["V"], hv)
                a, st["a"] = _mp_block(kern.blocks["a"].step_values, kern.blocks["a"], inp["a"][0], a, inp["a"][1],
                                       kk1, h, st["a"], hv)
                if not all(mpmath.isfinite(x) for x in a):
                    raise IntegrationError(h * (kk + 1), f"non-finite {opt.name} iterate at step {kk + 1}")

            def unpack(y):
                return [y[i * n:(i + 1) * n] for i in range(d)], y[d * n:d * n + n]

            traj = assemble_mpmath(problem, [h * x for x in record], states, unpack, tgt, X, dps=dps,
                                   backend="mpmath", clock="t", method=f"{opt.name}(lr={lr:g})",
                                   n_steps=record[-1])
    else:
        kern = optimizer_kernels(opt, backend)
        hv = hyper_numbers(opt, hyper, backend)
        rhs = flow_rhs(problem.loss, problem.link, backend=backend, frozen=problem.frozen)
        if backend == "torch":
            import torch
            conv = lambda x: None if x is None else torch.tensor(np.asarray(x), dtype=torch.float64)
            V, a, tgt, X = conv(problem.V), conv(problem.a), conv(problem.target), conv(problem.X)
            finite = lambda x: bool(torch.isfinite(x).all())
            flat = lambda V, a: torch.cat([V.reshape(-1), a]).numpy().copy()
        else:
            V, a, tgt, X = (np.array(problem.V, dtype=np.float64), np.array(problem.a, dtype=np.float64),
                            problem.target, problem.X)
            finite = lambda x: bool(np.isfinite(x).all())
            flat = lambda V, a: np.concatenate([V.reshape(-1), a])
        if backend == "torch":
            hv = tuple(torch.tensor(x, dtype=torch.float64) for x in hv)
        st = _init_states(kern, shapes, backend)
        states, j = [], 0
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for kk in range(steps + 1):
                if kk == record[j]:
                    states.append(flat(V, a))
                    j += 1
                    if j == len(record):
                        break
                dV, da = rhs(V, a, tgt, X)
                inp = kern.inputs(-dV, -da)
                # torch.optim evaluates beta**step with step a Python float: the same here
                kk1 = float(kk + 1)
                if backend == "torch":  # torch's printer writes torch.pow(beta1, k): tensors in, same C pow
                    kk1 = torch.tensor(kk1, dtype=torch.float64)
                V, st["V"] = kern.blocks["V"].step_values(inp["V"][0], V, inp["V"][1], kk1, lr, st["V"], hv)
                a, st["a"] = kern.blocks["a"].step_values(inp["a"][0], a, inp["a"][1], kk1, lr, st["a"], hv)
                if not (finite(V) and finite(a)):
                    raise IntegrationError(lr * (kk + 1), f"non-finite {opt.name} iterate at step {kk + 1}")

        def unpack(y):
            return y[:d * n].reshape(d, n), y[d * n:]

        traj = assemble_numpy(problem, [lr * x for x in record], states, unpack, backend=backend, clock="t",
                              method=f"{opt.name}(lr={lr:g})", n_steps=record[-1])
    vals = O.hyper_values(opt, hyper)
    params = ", ".join(f"{s}={float(v):g}" for s, v in vals.items())
    traj.notes.append(f"optimizer {opt.name} (discrete form), lr={lr!r}, {record[-1]} steps; t = lr * k"
                      + (f"; {params}" if params else ""))
    traj.notes.append(problem.input_note(backend))
    traj.wall_time = _time.perf_counter() - start
    return traj

