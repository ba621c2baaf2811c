r"""Generated kernels of one :class:`theorems.optimizers.Optimizer` on one backend.

Every number an optimizer engine computes comes from the definition's expressions, lambdified by
:func:`numerics.lambdify_checked`: per block ($V$, $a$) the continuous form (one function per state and for
$\dot\theta$, arguments ``(g, theta, G2, t, lr, *states, *hyper)``), its limit at $t=0$
(:meth:`~theorems.optimizers.Optimizer.flow_at_start`), and the discrete assignments (arguments
``(g, theta, G2, k, lr, *states, *hyper)``). No kernel, and no engine, looks at the optimizer's name: the
name is a label in reports (a test runs a renamed copy of every built-in and requires identical numbers).

The squared gradient norm :data:`theorems.optimizers.G2` is the sum of $g^2$ over the rule's scope: the whole
parameter vector (``norm="all"``) or the block alone (``"block"``).
"""
from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from theorems import InvalidArgument, prove_zero
from theorems import optimizers as O

from ..lambdify import lambdify_checked

BLOCKS = O.BLOCKS


def _scale_free(rule) -> bool:
    """Every expression of the rule is invariant under $g\to cg$, $G_2\to c^2G_2$ ($c>0$), proven."""
    c = sp.Symbol("c", positive=True)
    exprs = rule.exprs()
    return prove_zero([e.subs({O.g: c * O.g, O.G2: c**2 * O.G2}, simultaneous=True) - e
                       for e in exprs]).status == "proved"


class BlockKernels:
    """The generated functions of one block's :class:`~theorems.optimizers.Rule`."""

    def __init__(self, opt, block: str, backend: str):
        rule = opt.rules[block]
        self.states = tuple(rule.state)
        self.init = {s: v for s, v in rule.state.items()}
        self.norm = rule.norm
        self.hyper = tuple(opt.hyper)
        fargs = [O.g, O.theta, O.G2, O.t, O.lr, *self.states, *self.hyper]
        sargs = [O.g, O.theta, O.G2, O.k, O.lr, *self.states, *self.hyper]
        self.flow = {s: lambdify_checked(fargs, e, backend=backend) for s, e in rule.flow.items()}
        self.smooth = opt.smooth
        self.start = None
        if opt.smooth:
            self.start = {s: lambdify_checked(fargs, e, backend=backend)
                          for s, e in opt.flow_at_start(block).items()}
        self.step = tuple((s, lambdify_checked(sargs, e, backend=backend)) for s, e in rule.step)
        self.order = (O.theta, *self.states)  # the flat layout of the continuous state
        self.uses_G2 = any(O.G2 in e.free_symbols for e in rule.exprs())
        self.scale_free = self.uses_G2 and not rule.state and _scale_free(rule)

    def flow_values(self, gv, th, G2, t, lr, st: dict, hv: tuple, *, at_start: bool = False):
        """``{symbol: time derivative}`` of theta and each state (``at_start``: the limit at t = 0)."""
        fns = self.start if at_start else self.flow
        args = (gv, th, G2, t, lr, *[st[s] for s in self.states], *hv)
        return {s: fns[s](*args) for s in self.order}

    def step_values(self, gv, th, G2, k, lr, st: dict, hv: tuple):
        """``(theta, states)`` after one discrete step, the assignments executed in order."""
        env = {O.theta: th, **st}
        for s, fn in self.step:
            env[s] = fn(gv, env[O.theta], G2, k, lr, *[env[x] for x in self.states], *hv)
        return env[O.theta], {s: env[s] for s in self.states}


class OptimizerKernels:
    """Both blocks' :class:`BlockKernels`, and the norm of each block's scope."""

    def __init__(self, opt, backend: str):
        self.opt = opt
        self.backend = backend
        self.blocks = {b: BlockKernels(opt, b, backend) for b in BLOCKS}

    def inputs(self, gV, ga):
        """``{block: (g, G2)}``: the gradient each block's kernels see and the squared norm over its scope.

        A rule whose flow and step are invariant under $g\to cg$, $G_2\to c^2G_2$ (normalized and polar updates:
        ``scale_free`` of :class:`BlockKernels`, proven symbolically) gets $g/c$ and $\\sum(g/c)^2$ with $c$ the largest
        $|g|$ of its scope: the same numbers in exact arithmetic, but $G_2$ no longer underflows when the gradient
        is tiny (normalized flow on the logistic loss: $|g|\approx e^{-s}$, and $G_2<10^{-308}$ from $s\approx
        354$; measured: the unscaled kernels returned inf there).
        """
        mp = self.backend == "mpmath"
        if mp:
            flatV = [x for row in gV for x in row]
            amax = lambda xs: max((abs(x) for x in xs), default=mpmath.mpf(0))
            ssq = lambda xs: mpmath.fsum(x * x for x in xs)
        else:
            flatV = gV
            amax = lambda xs: abs(xs).max()
            ssq = lambda xs: (xs * xs).sum()
        out = {}
        for b, kern in self.blocks.items():
            gb = gV if b == "V" else ga
            scope = [flatV if b == "V" else ga] if kern.norm == "block" else [flatV, ga]
            if kern.scale_free:
                c = max(amax(x) for x in scope)
                if c == 0:
                    c = 1
                if mp:
                    gs = [[x / c for x in row] for row in gb] if b == "V" else [x / c for x in gb]
                    G2 = sum((ssq([x / c for x in xs]) for xs in scope), mpmath.mpf(0))
                else:
                    gs = gb / c
                    G2 = sum(ssq(xs / c) for xs in scope)
                out[b] = (gs, G2)
            else:
                out[b] = (gb, sum(ssq(xs) for xs in scope) if kern.uses_G2 else 0.0)
        return out


@lru_cache(maxsize=None)
def optimizer_kernels(opt, backend: str) -> OptimizerKernels:
    """The cached :class:`OptimizerKernels` of an optimizer (name or definition) on ``backend``."""
    return OptimizerKernels(O.get_optimizer(opt), backend)


def hyper_numbers(opt, hyper, backend: str) -> tuple:
    """The hyperparameter values in the kernels' order: float64 (numpy, torch) or ``mpf`` (exact ones rounded once
    to the working precision)."""
    vals = O.hyper_values(opt, hyper)
    out = []
    for s in opt.hyper:
        q = vals[s]
        if backend == "mpmath":
            out.append(mpmath.mpf(int(q.p)) / int(q.q) if q.is_Rational else mpmath.mpf(str(q.evalf(60))))
        else:
            out.append(float(q))
    return tuple(out)


def check_smooth(opt, what: str) -> None:
    """Refuse a discontinuous flow where only smooth ones are integrated (the Filippov engine handles them)."""
    if not opt.smooth:
        raise InvalidArgument(f"optimizer {opt.name!r}: its continuous form is discontinuous (it switches on "
                              f"g_i = 0); {what} integrates smooth flows only; expected the Filippov engine "
                              "(numerics.optim.filippov_flow) or the discrete form (lr)")


def as_float(x) -> float:
    return float(x) if not isinstance(x, np.ndarray) else float(x.item())
