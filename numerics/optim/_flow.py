r"""The continuous form of an optimizer: $\dot\theta$ and the state ODEs, integrated in $t$.

The flat state is $[V, a, \text{states of }V, \text{states of }a]$ (each row-major); its right-hand side is the
generated kernels of :mod:`numerics.optim._kernels` on the gradient $g=-F(\theta)$ of :func:`numerics.flow_rhs`.
At $t=0$ exactly the kernels of :meth:`theorems.optimizers.Optimizer.flow_at_start` are used (Adam's bias
correction is $0/0$ there; its limit is derived by SymPy). Backends: ``numpy`` (SciPy DOP853, the stepping loop of
:mod:`numerics.integrate._numpy`) and ``mpmath`` (Gragg–Bulirsch–Stoer of :mod:`numerics.integrate._gbs`, ``dps``
digits: the long horizons). Smooth flows only: sign flow goes through :mod:`numerics.optim._filippov`.
"""
from __future__ import annotations

import time as _time

import mpmath
import numpy as np

from theorems import InvalidArgument, check_choice
from theorems import optimizers as O

from ..integrate import (DEFAULT_RTOL, GUARD_DIGITS, RTOL_MIN, IntegrationError, NonFinite, assemble_mpmath,
                         assemble_numpy, check_dps, default_tol_mp, dop853_solve, gbs_solve)
from ..problem import Problem
from ..rhs import flow_rhs
from ._kernels import check_smooth, hyper_numbers, optimizer_kernels

FLOW_BACKENDS = ("numpy", "mpmath")


class Layout:
    """Offsets of the flat state: ``V`` (d n), ``a`` (n), then each block's states in definition order."""

    def __init__(self, kern, d: int, n: int):
        self.d, self.n = d, n
        self.size = {"V": d * n, "a": n}
        self.slots = []  # (block, symbol, start)
        pos = d * n + n
        for b in ("V", "a"):
            for s in kern.blocks[b].states:
                self.slots.append((b, s, pos))
                pos += self.size[b]
        self.total = pos

    def initial(self, kern, V0, a0, conv):
        y = [conv(x) for x in list(np.ravel(V0)) + list(a0)] if conv else list(np.ravel(V0)) + list(a0)
        for b, s, _ in self.slots:
            v0 = kern.blocks[b].init[s]
            y += [(conv or float)(v0)] * self.size[b]
        return y


def optimizer_flow(problem: Problem, optimizer, *, times, hyper=None, lr=None, backend: str = "numpy",
                   dps: int = 30, rtol=None, atol=None, max_steps: int = 100_000):
    r"""Integrate ``optimizer``'s continuous form from ``problem``'s initial point; output at ``times`` (decimal
    strings from :func:`numerics.prepare_times`, starting at 0).

    ``lr``: the time scale of a continuous form that uses it (Adam's moment rates $-\log\beta_i/\eta$); refused
    when the form does not use it, required when it does. ``hyper``: ``{name: value}`` overrides.
    """
    start = _time.perf_counter()
    if not isinstance(problem, Problem):
        raise InvalidArgument(f"problem={problem!r} is not allowed; expected a numerics.Problem")
    opt = O.get_optimizer(optimizer)
    check_choice("backend", backend, FLOW_BACKENDS)
    check_smooth(opt, f"backend {backend!r}")
    uses_lr = any(O.lr in e.free_symbols for r in opt.rules.values() for e in r.flow.values())
    if uses_lr and lr is None:
        raise InvalidArgument(f"optimizer {opt.name!r}: its continuous form has time scales set by the learning "
                              "rate; expected lr (e.g. --lr 0.01)")
    lr_v = 1.0 if lr is None else float(lr)
    d, n = problem.d, problem.n
    if backend == "numpy":
        rtol = DEFAULT_RTOL if rtol is None else rtol
        if rtol < RTOL_MIN:
            raise InvalidArgument(f"rtol={rtol!r} is not allowed with backend='numpy'; expected rtol >= "
                                  f"{RTOL_MIN:.3g}")
        atol = rtol * 1e-2 if atol is None else atol
        kern = optimizer_kernels(opt, "numpy")
        hv = hyper_numbers(opt, hyper, "numpy")
        lay = Layout(kern, d, n)
        rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)
        tgt, X = problem.target, problem.X

        def f(x, y):
            dy = _rhs_np(kern, lay, rhs, y, x, lr_v, hv, tgt, X)
            if not np.isfinite(dy).all():
                raise NonFinite(x)
            return dy

        y0 = np.array(lay.initial(kern, problem.V, problem.a, None), dtype=np.float64)
        tv = [float(s) for s in times]
        outputs, stats, _ = dop853_solve(f, 0.0, y0, tv, rtol=rtol, atol=atol, max_steps=max_steps,
                                         t_of=lambda x, y: x)

        def unpack(y):
            return y[:d * n].reshape(d, n), y[d * n:d * n + n]

        traj = assemble_numpy(problem, tv, [y for _, y in outputs], unpack, backend="numpy", clock="t",
                              method=f"DOP853 {opt.name} flow", rtol=rtol, atol=atol, **stats)
        traj.optimizer_states = [y[d * n + n:].tolist() for _, y in outputs]
    else:
        dps = check_dps(dps)
        with mpmath.workdps(dps + GUARD_DIGITS):
            rtol = default_tol_mp(dps) if rtol is None else rtol
            atol = rtol if atol is None else atol
            kern = optimizer_kernels(opt, "mpmath")
            hv = hyper_numbers(opt, hyper, "mpmath")
            lay = Layout(kern, d, n)
            rhs = flow_rhs(problem.loss, problem.link, backend="mpmath", frozen=problem.frozen)
            tgt, X = problem.mp_values("target"), problem.mp_values("X")
            V0, a0 = problem.mp_values("V"), problem.mp_values("a")
            y0 = [x for row in V0 for x in row] + list(a0)
            for b, s, _ in lay.slots:
                v0 = kern.blocks[b].init[s]
                y0 += [mpmath.mpf(int(v0.p)) / int(v0.q)] * lay.size[b]
            lr_m = mpmath.mpf(repr(lr_v))

            def f(x, y):
                return _rhs_mp(kern, lay, rhs, y, x, lr_m, hv, tgt, X)

            targets = [mpmath.mpf(s) for s in times]
            outputs, stats, _ = gbs_solve(f, mpmath.mpf(0), y0, targets, rtol=mpmath.mpf(rtol),
                                          atol=mpmath.mpf(atol), max_steps=max_steps, t_of=lambda x, y: x)

            def unpack(y):
                return [y[i * n:(i + 1) * n] for i in range(d)], y[d * n:d * n + n]

            traj = assemble_mpmath(problem, targets, [y for _, y in outputs], unpack, tgt, X, dps=dps,
                                   backend="mpmath", clock="t", method=f"GBS {opt.name} flow", rtol=float(rtol),
                                   atol=float(atol), **stats)
    vals = O.hyper_values(opt, hyper)
    params = ", ".join(f"{s}={float(v):g}" for s, v in vals.items())
    traj.notes.append(f"optimizer {opt.name} (continuous form)" + (f", lr={lr!r} (time scales)" if uses_lr else "")
                      + (f"; {params}" if params else ""))
    traj.notes.append(problem.input_note(backend))
    traj.wall_time = _time.perf_counter() - start
    return traj


def _blocks_np(lay, y):
    d, n = lay.d, lay.n
    return y[:d * n].reshape(d, n), y[d * n:d * n + n]


def _rhs_np(kern, lay, rhs, y, x, lr, hv, tgt, X):
    """The flat time derivative (numpy)."""
    V, a = _blocks_np(lay, y)
    dV, da = rhs(V, a, tgt, X)
    inp = kern.inputs(-dV.reshape(-1), -da)
    grads = {b: inp[b][0] for b in inp}
    G2 = {b: inp[b][1] for b in inp}
    thetas = {"V": y[:lay.size["V"]], "a": y[lay.size["V"]:lay.size["V"] + lay.size["a"]]}
    st = {"V": {}, "a": {}}
    for b, s, p in lay.slots:
        st[b][s] = y[p:p + lay.size[b]]
    out = np.empty_like(y)
    at0 = x == 0
    for b in ("V", "a"):
        vals = kern.blocks[b].flow_values(grads[b], thetas[b], G2[b], x, lr, st[b], hv, at_start=at0)
        lo = 0 if b == "V" else lay.size["V"]
        out[lo:lo + lay.size[b]] = vals[O.theta]
    for b, s, p in lay.slots:
        vals_b = kern.blocks[b].flow_values(grads[b], thetas[b], G2[b], x, lr, st[b], hv, at_start=at0)
        out[p:p + lay.size[b]] = vals_b[s]
    return out


def _rhs_mp(kern, lay, rhs, y, x, lr, hv, tgt, X):
    """The flat time derivative (mpmath, coordinate by coordinate)."""
    d, n = lay.d, lay.n
    V = [y[i * n:(i + 1) * n] for i in range(d)]
    a = y[d * n:d * n + n]
    dV, da = rhs(V, a, tgt, X)
    inp = kern.inputs([[-v for row in dV for v in row]], [-v for v in da])
    grads = {"V": inp["V"][0][0], "a": inp["a"][0]}
    G2 = {b: inp[b][1] for b in inp}
    thetas = {"V": y[:d * n], "a": a}
    at0 = x == 0
    out = [None] * lay.total
    for b in ("V", "a"):
        bk = kern.blocks[b]
        lo = 0 if b == "V" else d * n
        slots = [(s, p) for bb, s, p in lay.slots if bb == b]
        for i in range(lay.size[b]):
            st = {s: y[p + i] for s, p in slots}
            vals = bk.flow_values(grads[b][i], thetas[b][i], G2[b], x, lr, st, hv, at_start=at0)
            out[lo + i] = vals[O.theta]
            for s, p in slots:
                out[p + i] = vals[s]
    if not all(mpmath.isfinite(v) for v in out):
        raise IntegrationError(float(x), "non-finite right-hand side")
    return out
