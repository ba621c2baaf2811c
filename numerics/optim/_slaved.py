r"""A stateful optimizer's flow to extreme horizons: the full ODE until its states relax, then the slaved flow.

The moments of Adam relax at the rates $r_i=-\log\beta_i/\eta$ while the gradient decays like $1/t$: the state ODEs
are stiff on the long horizons the rate laws need ($t=10^{100}$ and beyond), and no engine that steps in $t$ gets
there. :func:`slaved_flow` handles the fast relaxation as a singular perturbation:

1. **the full flow** (:func:`numerics.optim.optimizer_flow`, every state integrated) from $t=0$ to ``t_slave``;
   there the *slaving residual* is measured, the largest relative distance of every state from the zero of its own
   flow at the current gradient (Adam: $|m-g|/|g|$, $|v-g^2|/g^2$; it decays like $1/(r_it)$); the run refuses
   (:class:`theorems.InvalidArgument`) when it exceeds ``slave_tol``;
2. **the quasi-static flow** (:func:`theorems.optimizers.quasi_static`, derived by SymPy from the same definition:
   every state at that zero, the bias corrections at 1) from the state at ``t_slave``, on the log clock
   $\tau=\log t$ ($d\theta/d\tau=t\,f^*(g)$, not stiff: $f^*(g)\sim g/\varepsilon\sim1/t$), SciPy DOP853 or
   Radau (the cross-check) in float64.

The second phase drops a relative perturbation $O(1/(r_it))$ of the flow, which integrates to a finite shift of
the state; a law whose constant does not depend on the state (the rate law $C(\log t)^{-2}$) is unchanged by it.
Float64 bounds the horizon: $g\sim1/t$ and the $a$-gradient $\sim q/t$ must stay normal numbers, $t\le10^{300}$.
"""
from __future__ import annotations

import math
import time as _time

import numpy as np

from theorems import InvalidArgument
from theorems import optimizers as O

from ..integrate import IntegrationError, assemble_numpy, dop853_solve
from ..problem import Problem
from ..rhs import flow_rhs
from ._flow import Layout, _rhs_np, optimizer_flow
from ._kernels import hyper_numbers, optimizer_kernels

#: the largest horizon of the float64 slaved flow (the a-gradient ~ q/t must stay a normal float64)
MAX_T = 1e300
SLAVED_METHODS = ("DOP853", "Radau")


def slaving_residual(opt, problem: Problem, y, t: float, lr: float, hyper=None) -> float:
    r"""The largest relative distance of the states in the flat state ``y`` (:class:`numerics.optim._flow.Layout`)
    from the zero of their own flow at the current gradient: $\max|s-s^*(g)|/\max|s^*(g)|$ per block and state."""
    kern = optimizer_kernels(opt, "numpy")
    lay = Layout(kern, problem.d, problem.n)
    hv = hyper_numbers(opt, hyper, "numpy")
    rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)
    dy = _rhs_np(kern, lay, rhs, np.asarray(y, float), t, lr, hv, problem.target, problem.X)
    worst = 0.0
    for _b, s, p in lay.slots:
        n = lay.size[_b]
        ds = dy[p:p + n]  # the state's flow r (s* - s): relative distance |ds| / |ds + r s|, r from the definition
        rate = _relax_rate(opt, _b, s, lr, hyper)
        star = y[p:p + n] + ds / rate
        worst = max(worst, float(np.max(np.abs(ds / rate)) / max(np.max(np.abs(star)), 1e-300)))
    return worst


def _relax_rate(opt, block, s, lr, hyper):
    """$-\\partial\\dot s/\\partial s$ (a number: the state's linear relaxation rate), from the definition."""
    e = opt.rules[block].flow[s]
    rate = -e.diff(s)
    vals = {sym: float(v) for sym, v in O.hyper_values(opt, hyper).items()}
    r = rate.subs({O.lr: lr, **vals})
    if r.free_symbols or not float(r) > 0:
        raise InvalidArgument(f"optimizer {opt.name!r}: the state {s}'s flow {e} is not a linear relaxation "
                              f"(its rate {rate} is not a positive number): no slaved flow")
    return float(r)


def slaved_flow(problem: Problem, optimizer, *, times, lr, hyper=None, t_slave: float = 1000.0,
                slave_tol: float = 0.05, rtol: float = 1e-10, method: str = "DOP853", max_steps: int = 10**6):
    r"""``optimizer``'s continuous form from ``problem``'s initial point, output at ``times`` (decimal strings from
    0, increasing, up to :data:`MAX_T`): the full flow to ``t_slave``, then the quasi-static flow on the log clock
    (the module docstring). ``method``: the second phase's integrator (``"DOP853"``, or ``"Radau"`` for a
    cross-check). The trajectory's notes record the slaving residual at ``t_slave``.
    """
    start = _time.perf_counter()
    opt = O.get_optimizer(optimizer)
    if method not in SLAVED_METHODS:
        raise InvalidArgument(f"method={method!r} is not allowed; expected one of {SLAVED_METHODS}")
    if not any(opt.rules[b].state for b in O.BLOCKS):
        raise InvalidArgument(f"optimizer {opt.name!r} has no state: nothing to slave (use optimizer_flow)")
    tv = [float(s) for s in times]
    if not (tv[0] == 0 and all(b > a for a, b in zip(tv, tv[1:])) and tv[-1] <= MAX_T):
        raise InvalidArgument(f"times={list(times)[:3]}...: expected increasing decimal strings from 0 up to "
                              f"{MAX_T:g}")
    if not (math.isfinite(t_slave) and t_slave > 0):
        raise InvalidArgument(f"t_slave={t_slave!r} is not allowed; expected a positive number")
    early = [s for s, x in zip(times, tv) if x < t_slave]
    full = optimizer_flow(problem, opt, times=early + [repr(float(t_slave))], hyper=hyper, lr=lr,
                          backend="numpy", rtol=rtol, max_steps=max_steps)
    d, n = problem.d, problem.n
    y_s = np.concatenate([np.ravel(full.V[-1]), np.asarray(full.a[-1], float),
                          np.asarray(full.optimizer_states[-1], float)])
    resid = slaving_residual(opt, problem, y_s, float(t_slave), float(lr), hyper)
    if not resid <= slave_tol:
        raise InvalidArgument(f"t_slave={t_slave!r}: the states are {resid:.3g} (relative) from their quasi-static "
                              f"values, more than slave_tol={slave_tol!r}; expected a later t_slave")
    qs = O.quasi_static(opt)
    kern = optimizer_kernels(qs, "numpy")
    hv = hyper_numbers(qs, hyper, "numpy")
    lay = Layout(kern, d, n)
    rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)

    def f(x, y):
        t = math.exp(x)
        return t * _rhs_np(kern, lay, rhs, y, t, float(lr), hv, problem.target, problem.X)

    late = [x for x in tv if x >= t_slave]
    y0 = y_s[:d * n + n]
    if method == "DOP853":
        outputs, stats, _ = dop853_solve(f, math.log(t_slave), y0, [math.log(x) for x in late], rtol=rtol,
                                         atol=rtol * 1e-2, max_steps=max_steps, t_of=lambda x, y: math.exp(x))
        states = [y for _, y in outputs]
    else:
        import scipy.integrate as si
        sol = si.solve_ivp(f, (math.log(t_slave), math.log(late[-1])), y0, method="Radau", rtol=rtol,
                           atol=rtol * 1e-2, t_eval=[math.log(x) for x in late])
        if sol.status != 0:
            raise IntegrationError(late[-1], f"Radau: {sol.message}")
        states = list(sol.y.T)
        stats = {"n_steps": int(sol.t.size), "n_rejected": 0, "n_rhs": int(sol.nfev)}
    head = [np.concatenate([np.ravel(V), np.asarray(a, float)]) for V, a in zip(full.V[:len(early)],
                                                                              full.a[:len(early)])]

    def unpack(y):
        return y[:d * n].reshape(d, n), y[d * n:d * n + n]

    traj = assemble_numpy(problem, tv, head + states, unpack, backend="numpy", clock="log t",
                          method=f"{opt.name} flow to t = {t_slave:g}, then quasi-static ({method}, log clock)",
                          rtol=rtol, atol=rtol * 1e-2, **stats)
    traj.notes.append(f"optimizer {opt.name} (continuous form), lr={lr!r}; full flow (DOP853) to t = {t_slave:g}, "
                      f"slaving residual there {resid:.3g} (relative); then {qs.name} on the log clock ({method})")
    traj.notes.append(problem.input_note("numpy"))
    traj.slaving_residual = resid
    traj.wall_time = _time.perf_counter() - start
    return traj
