r"""Discontinuous optimizer flows (sign flow) across their switching surfaces $g_i=0$, in Filippov's sense.

The flow of a non-smooth :class:`theorems.optimizers.Optimizer` (``sign(g)``, ``Abs(g)``: the switching functions of
:meth:`~theorems.optimizers.Optimizer.switching_functions`) is smooth inside each region of fixed signs
$\sigma_i=\operatorname{sign}g_i$: there it is the definition with $\operatorname{sign}(g)\to\sigma$,
$|g|\to\sigma g$ (generated kernels). The engine integrates one region at a time (SciPy DOP853, dense output) and
stops at the first coordinate whose $\sigma_ig_i$ reaches 0 (an event, located to float64 rounding). There, with
$G$ the coordinates vanishing together (one surface: their normals $\nabla g_i$ are parallel, checked) and $i^*\in
G$, the rates $r_\pm=\nabla g_{i^*}\cdot F_\pm$ of the fields on the two sides (Hessian-vector products by torch
autograd of the generated gradient) decide, with $s=\sigma_{i^*}$ before the event:

* $s\,r_{\rm new}<0$: **transversal crossing** (the field on the far side carries the state on): signs flipped;
* $s\,r_{\rm new}>0$: **attracting sliding** (both fields push onto the surface): Filippov's convex combination,
  the field with $\sigma_G$ replaced by the $u\in(-1,1)$ that keeps $g_{i^*}=0$ (the field is affine in
  $\sigma$, checked, so this is $\lambda F_{\rm old}+(1-\lambda)F_{\rm new}$);
* while sliding on surfaces $S$ (one $u_q$ per surface, from the linear system $\frac{d}{dt}g_{i^*_p}=0$, $p\in S$:
  the Filippov set of a field affine in each surface's sign is the image of the box $[-1,1]^{|S|}$, and a
  non-singular system picks one point of it) another surface met is joined (sliding on the intersection) when the
  enlarged system has its solution inside the box, else crossed when the field beyond it carries the state on;
  a $u_q$ reaching $\pm1$ releases surface $q$ into the region $\sigma_q=u_q$;
* a tangential contact ($r=0$), two surfaces met at one event, a singular system, no consistent continuation, a
  coordinate exactly 0 at the start, a zero that is float64 rounding (checked at 40 digits: a winner's logit
  gradient falls below the rounding of its terms once polarization is complete to $10^{-16}$), or more than
  ``max_switches`` events (possible Zeno accumulation):
  **refused** with the reason (:class:`numerics.IntegrationError`), never integrated through blindly.

The report (``Trajectory.switching``) lists every crossing and sliding segment with its times and coordinates.
Limits: float64 only; stateless flows only (the states of a non-smooth optimizer would need their own analysis);
the sliding state drifts off the surface by the integrator's error (reported as ``max_drift``).
"""
from __future__ import annotations

import time as _time

import numpy as np
import scipy.integrate
import sympy as sp
import mpmath

from theorems import InvalidArgument
from theorems import optimizers as O

from ..integrate import IntegrationError, assemble_numpy
from ..lambdify import lambdify_checked
from ..problem import Problem
from ..rhs import flow_rhs, frozen_masks
from ._kernels import hyper_numbers

_sigma = sp.Symbol("sigma", real=True)
#: a coordinate whose |g_i| / |dg_i/dt| (the time before it reaches 0) is below this at an event is on the surface
ON_SURFACE = 1e-8
#: |r| below this fraction of |F| |grad g| counts as tangential
TANGENTIAL = 1e-10
#: an event where max|g| / max|dg/dt| (the time before the whole gradient vanishes) is below this is a critical
#: point reached in finite time (sign flow on the square loss: 1e-12); a gradient that decays (logistic: e^{-ct},
#: ratio about 1/c) is not
CRITICAL = 1e-8


def _loss(sysm, y):
    dn = sysm.d * sysm.n
    return float(sysm.rhs.loss_value(y[:dn].reshape(sysm.d, sysm.n), y[dn:], sysm.tgt, sysm.X))


def _summary(log) -> str:
    kinds = [e["kind"] for e in log]
    return ", ".join(f"{kinds.count(k)} {k}" for k in ("crossing", "sliding", "release") if k in kinds) or "none"


def _region_kernels(opt, block):
    r = opt.rules[block]
    if r.state:
        raise InvalidArgument(f"optimizer {opt.name!r}: a discontinuous flow with optimizer states; expected a "
                              "stateless flow (the Filippov engine handles sign-type flows of the parameters only)")
    opt.switching_functions(block)  # refuses surfaces other than g_i = 0
    e = r.flow[O.theta].replace(sp.sign, lambda x: _sigma).replace(sp.Abs, lambda x: _sigma * x)
    if sp.diff(e, _sigma, 2) != 0:
        raise InvalidArgument(f"optimizer {opt.name!r}: its {block}-flow is not affine in sign(g); expected a flow "
                              "whose Filippov set is the image of the sign box (e.g. -sign(g), -c sign(g))")
    args = [O.g, O.theta, O.G2, O.t, O.lr, _sigma, *opt.hyper]
    return lambdify_checked(args, e, backend="numpy"), r.norm


class _System:
    def __init__(self, problem, opt, hyper, lr):
        import torch

        self.torch = torch
        self.d, self.n = problem.d, problem.n
        self.N = self.d * self.n + self.n
        self.rhs = flow_rhs(problem.loss, problem.link, frozen=problem.frozen)
        self.rhs_t = flow_rhs(problem.loss, problem.link, backend="torch", frozen=problem.frozen)
        self.tgt, self.X = problem.target, problem.X
        conv = lambda x: None if x is None else torch.tensor(np.asarray(x), dtype=torch.float64)
        self.tgt_t, self.X_t = conv(self.tgt), conv(self.X)
        self.kern = {b: _region_kernels(opt, b) for b in ("V", "a")}
        self.hv = hyper_numbers(opt, hyper, "numpy")
        self.lr = 1.0 if lr is None else float(lr)
        self._key, self._g = None, None

    def grad_exact(self, y, i: int, dps: int = 40):
        """$g_i$ at the float64 state ``y`` (its exact binary values) computed with ``dps`` digits (mpmath)."""
        with mpmath.workdps(dps):
            rhs = flow_rhs(self.rhs.loss, self.rhs.link, backend="mpmath", frozen=self.rhs.frozen)
            dn = self.d * self.n
            V = [[mpmath.mpf(float(v)) for v in y[k * self.n:(k + 1) * self.n]] for k in range(self.d)]
            a = [mpmath.mpf(float(v)) for v in y[dn:]]
            tgt = [mpmath.mpf(float(v)) for v in self.tgt]
            X = None if self.X is None else [[mpmath.mpf(float(v)) for v in row] for row in self.X]
            dV, da = rhs(V, a, tgt, X)
            return -float(([v for row in dV for v in row] + list(da))[i])

    def grad(self, y):
        key = y.tobytes()
        if key != self._key:  # the event functions ask for the same state one after another: computed once
            dn = self.d * self.n
            dV, da = self.rhs(y[:dn].reshape(self.d, self.n), y[dn:], self.tgt, self.X)
            self._key, self._g = key, -np.concatenate([dV.reshape(-1), da])
        return self._g

    def hvp(self, y, v):
        """$H(y)\\,v$: the directional derivative of the gradient (torch autograd of the generated kernels)."""
        torch = self.torch
        dn = self.d * self.n

        def grad_t(z):
            dV, da = self.rhs_t(z[:dn].reshape(self.d, self.n), z[dn:], self.tgt_t, self.X_t)
            return -torch.cat([dV.reshape(-1), da])

        # the Hessian is symmetric, so H v is the gradient of <grad F(z), v> (plain autograd: torch.func's import
        # warns about torch.jit on this torch)
        z = torch.tensor(y, requires_grad=True)
        (out,) = torch.autograd.grad(grad_t(z) @ torch.tensor(v), z)
        return out.numpy()

    def field(self, t, y, sigma, g=None):
        g = self.grad(y) if g is None else g
        dn = self.d * self.n
        sl = {"V": slice(0, dn), "a": slice(dn, self.N)}
        sV, sa = float(g[sl["V"]] @ g[sl["V"]]), float(g[sl["a"]] @ g[sl["a"]])
        out = np.empty(self.N)
        for b, (fn, norm) in self.kern.items():
            G2 = (sV if b == "V" else sa) if norm == "block" else sV + sa
            out[sl[b]] = fn(g[sl[b]], y[sl[b]], G2, t, self.lr, sigma[sl[b]], *self.hv)
        return out


def filippov_flow(problem: Problem, optimizer, *, times, hyper=None, lr=None, rtol=1e-12, atol=None,
                  max_switches: int = 10_000):
    r"""Integrate a discontinuous optimizer flow to the output ``times`` (decimal strings starting at 0), crossing
    or sliding on its switching surfaces, or refuse (see the module docstring). Returns a :class:`Trajectory` with
    ``switching`` (a list of events: crossings, sliding segments with their drift, releases) and notes."""
    start = _time.perf_counter()
    opt = O.get_optimizer(optimizer)
    if opt.smooth:
        raise InvalidArgument(f"optimizer {opt.name!r} has a smooth flow; expected a discontinuous one (use "
                              "numerics.optim.optimizer_flow)")
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        raise InvalidArgument("the Filippov engine needs torch (Hessian-vector products at the switching "
                              "surfaces); expected torch installed") from None
    sysm = _System(problem, opt, hyper, lr)
    atol = rtol * 1e-2 if atol is None else atol
    tv = [float(x) for x in times]
    T = tv[-1]
    y = np.concatenate([np.ravel(problem.V), np.asarray(problem.a, float)])
    t = 0.0
    log, outputs = [], {}
    g = sysm.grad(y)
    held = np.zeros(sysm.N, bool)  # frozen parameters (numerics.Problem.frozen): their gradient is 0 by definition
    masks = frozen_masks(problem.frozen, problem.n)
    if masks is not None:
        held[:sysm.d * sysm.n] = np.tile(masks[0] == 0, sysm.d)
        held[sysm.d * sysm.n:] = masks[1] == 0
    if np.any((g == 0) & ~held):
        raise IntegrationError(0.0, f"gradient coordinates {np.flatnonzero((g == 0) & ~held).tolist()} are exactly 0 "
                                    "at the "
                                    "start: sign(0) is set-valued there and the Filippov solution is not unique "
                                    "without further analysis; refused")
    sigma = np.sign(g)
    scale0 = float(np.max(np.abs(g)))
    S: list = []  # sliding surfaces: (coords, representative)
    try:
        y, t, count = _run(sysm, y, t, T, tv, sigma, scale0, S, log, outputs, rtol, atol, max_switches)
    except IntegrationError as exc:
        exc.switching = log
        raise
    return _finish(problem, opt, tv, T, y, outputs, log, count, rtol, atol, start)


def _run(sysm, y, t, T, tv, sigma, scale0, S, log, outputs, rtol, atol, max_switches):
    count = 0
    while t < T:
        if count > max_switches:
            raise IntegrationError(t, f"more than max_switches={max_switches} switching events before t = {T:g} "
                                      "(switches may accumulate: a Zeno point); refused")
        Sfix = list(S)
        free = np.ones(sysm.N, bool)
        for G, _ in Sfix:
            free[G] = False
        active = np.flatnonzero(free & (sigma != 0))

        def f(tt, yy, Sfix=Sfix, sigma=sigma):
            return _sliding_field(sysm, tt, yy, sigma, Sfix)[0]

        # one event per coordinate (direction -1: s_i g_i falling through 0): a minimum over coordinates would miss
        # a crossing while a just-crossed coordinate, starting at -0, rises through 0 (measured: it did)
        evs = [lambda tt, yy, i=int(i), si=float(sigma[i]): si * sysm.grad(yy)[i] for i in active]
        n_hit = len(evs)
        for q in range(len(Sfix)):
            for sign in (1.0, -1.0):
                evs.append(lambda tt, yy, q=q, sign=sign, Sfix=Sfix, sigma=sigma:
                           1.0 - sign * _sliding_field(sysm, tt, yy, sigma, Sfix)[1][q])
        for e in evs:
            e.terminal, e.direction = True, -1
        sol = scipy.integrate.solve_ivp(f, (t, T), y, method="DOP853", rtol=rtol, atol=atol, events=evs,
                                        dense_output=True)
        if sol.status == -1:
            raise IntegrationError(t, f"DOP853 failed: {sol.message}")
        t_stop = float(sol.t[-1])
        for tt in tv:
            if t <= tt <= t_stop and tt not in outputs:
                outputs[tt] = sol.sol(tt) if tt != t else y.copy()
        for G, _ in Sfix:  # drift of the sliding surfaces over this segment
            drift = max(float(np.max(np.abs(sysm.grad(sol.sol(tt))[G]))) for tt in np.linspace(t, t_stop, 9))
            for e in log:
                if e["kind"] == "sliding" and e["coords"] == G.tolist() and "t_end" not in e:
                    e["max_drift"] = max(drift, e.get("max_drift", 0.0))
        y, t = sol.y[:, -1].copy(), t_stop
        if sol.status == 0:
            break
        count += 1
        fired = [i for i, ev in enumerate(sol.t_events) if len(ev)]
        if fired[0] < n_hit and sol.y.shape[1] >= 2:
            # is the zero real, or float64 rounding of a coordinate far below its terms (a winner's logit gradient
            # is gamma s (u - z) with u - z of order e^{-2t}: float64 returns exactly 0)? At 40 digits, a real zero
            # has been passed a moment later along the field that reached it; a rounding artefact keeps its sign
            i = int(active[fired[0]])
            dt = 1e-6 * max(t - float(sol.t[-2]), 1e-12)
            after = sysm.grad_exact(y + dt * _sliding_field(sysm, t, y, sigma, S)[0], i)
            if sigma[i] * after > 0:
                raise IntegrationError(t, f"float64 cannot resolve gradient coordinate {i} here (float64 gives "
                                          f"{sysm.grad(y)[i]:.3g}; at 40 digits it keeps its sign, {after:.3g} a "
                                          "moment later): a rounding artefact, not a switching surface; refused. "
                                          "A shorter horizon stays above float64's rounding of the gradient's "
                                          f"terms. Events so far: {_summary(log)}")
        if fired[0] >= n_hit:  # a u_q reached +-1: surface q is released into the region sigma_q = u_q
            q, sign = divmod(fired[0] - n_hit, 2)
            G, _ = S.pop(q)
            sigma[G] = 1.0 if sign == 0 else -1.0
            for e in log:
                if e["kind"] == "sliding" and e["coords"] == G.tolist() and "t_end" not in e:
                    e["t_end"] = t
            log.append({"kind": "release", "t": t, "coords": G.tolist(), "side": float(sigma[G][0])})
            continue
        g = sysm.grad(y)
        scale = float(np.max(np.abs(g)))
        # the whole gradient vanishing at a finite time (not decaying, as on the logistic loss): max|g| over the
        # rate at which the field moves it, dg/dt = H F, is the time left before g = 0
        dg = sysm.hvp(y, _sliding_field(sysm, t, y, sigma, S)[0])
        rate = float(np.max(np.abs(dg)))
        if scale <= CRITICAL * rate:
            raise IntegrationError(t, f"the flow reached a critical point in finite time (max|g| = {scale:.3g}, "
                                      f"vanishing within {scale / rate:.2g} time units; loss there "
                                      f"{_loss(sysm, y):.3g}): every "
                                      "sign is set-valued, the Filippov set is a whole box and the continuation is "
                                      f"not unique; refused. Events so far: {_summary(log)}")
        # the coordinates on the surface with the one(s) that fired: those that reach 0 within ON_SURFACE time units
        # (|g_i| / |dg_i/dt|), not those that are merely small (a losing token's V-gradient decays like e^{-2t})
        with np.errstate(divide="ignore", invalid="ignore"):
            soon = (sigma * dg < 0) & (np.abs(g) <= ON_SURFACE * np.abs(dg)) & free & (sigma != 0)
        new = np.union1d(active[fired], np.flatnonzero(soon))
        if len(new) == 0:
            raise IntegrationError(t, "a switching event without a vanishing gradient coordinate; refused")
        normals = {int(i): sysm.hvp(y, np.eye(sysm.N)[i]) for i in new}
        rep = max(normals, key=lambda i: np.linalg.norm(normals[i]))
        for ni in normals.values():  # one surface at a time: parallel normals
            nr = normals[rep]
            if abs(ni @ nr) < (1 - 1e-8) * np.linalg.norm(ni) * np.linalg.norm(nr):
                raise IntegrationError(t, f"gradient coordinates {new.tolist()} vanish together on different surfaces "
                                          "(two surfaces met at one event: the continuation is not decided); refused. "
                                          f"Events so far: {_summary(log)}")
        Gq, s_q = new, sigma[rep]
        # (1) slide on S + {q}: the enlarged system's solution inside the box
        trial = S + [(Gq, rep)]
        _, u, ok = _sliding_field(sysm, t, y, sigma, trial, check=True)
        if ok and np.all(np.abs(u) < 1):
            S = trial
            log.append({"kind": "sliding", "t": t, "coords": Gq.tolist()})
            continue
        # (2) cross q: beyond it (sigma_q flipped), the field (sliding on S) carries s_q g_q below 0
        flipped = sigma.copy()
        flipped[Gq] = -s_q
        F, u, ok = _sliding_field(sysm, t, y, flipped, S, check=True)
        rate = sysm.hvp(y, F)[rep]
        tiny = TANGENTIAL * np.linalg.norm(normals[rep]) * np.linalg.norm(F)
        if ok and np.all(np.abs(u) < 1) and s_q * rate < -tiny:
            sigma = flipped
            log.append({"kind": "crossing", "t": t, "coords": Gq.tolist()})
            continue
        raise IntegrationError(t, f"no consistent Filippov continuation at the surface g{Gq.tolist()} = 0 (neither "
                                  "sliding inside the sign box nor a transversal crossing: a tangential or repelling "
                                  "contact, where the solution is not unique); refused. Events so far: "
                                  f"{_summary(log)}")
    return y, t, count


def _finish(problem, opt, tv, T, y, outputs, log, count, rtol, atol, start):
    for tt in tv:
        outputs.setdefault(tt, y.copy())  # T itself, where solve_ivp ended
    d, n = problem.d, problem.n

    def unpack(yy):
        return yy[:d * n].reshape(d, n), yy[d * n:]

    traj = assemble_numpy(problem, tv, [outputs[tt] for tt in tv], unpack, backend="numpy", clock="t",
                          method=f"DOP853 + Filippov ({opt.name} flow)", rtol=rtol, atol=atol, n_steps=count)
    for e in log:
        if e["kind"] == "sliding":
            e.setdefault("t_end", T)
    traj.switching = log
    n_cross = sum(e["kind"] == "crossing" for e in log)
    n_slide = sum(e["kind"] == "sliding" for e in log)
    traj.notes.append(f"optimizer {opt.name} (discontinuous flow, Filippov): {n_cross} transversal crossings, "
                      f"{n_slide} sliding segments")
    for e in log:
        if e["kind"] == "sliding":
            traj.notes.append(f"sliding on g{e['coords']} = 0 from t={e['t']:.6g} to t={e['t_end']:.6g} "
                              f"(max drift {e.get('max_drift', 0.0):.2g})")
    traj.notes.append(problem.input_note("numpy"))
    traj.wall_time = _time.perf_counter() - start
    return traj


def _sliding_field(sysm, t, y, sigma, S, *, check: bool = False):
    """``(F, u[, ok])``: the Filippov field sliding on the surfaces ``S`` (``u_q`` in place of the signs of
    surface ``q``, solving $\frac{d}{dt}g_{i^*_p}=0$ for every $p$) and ``u``; ``ok`` False for a singular
    system (``check=True``; otherwise a singular system raises)."""
    g = sysm.grad(y)
    if not S:
        F = sysm.field(t, y, sigma, g)
        return (F, np.zeros(0), True) if check else (F, np.zeros(0))
    s0 = sigma.copy()
    for G, _ in S:
        s0[G] = 0.0
    F0 = sysm.field(t, y, s0, g)
    B = []
    for G, _ in S:
        s1 = s0.copy()
        s1[G] = sigma[G]  # the group's pattern of signs, scaled by u_q (one scalar per surface)
        B.append(sysm.field(t, y, s1, g) - F0)
    reps = [r for _, r in S]
    HF0 = sysm.hvp(y, F0)[reps]
    R = np.array([sysm.hvp(y, b)[reps] for b in B]).T
    try:
        u = np.linalg.solve(R, -HF0)
        ok = bool(np.all(np.isfinite(u))) and np.linalg.cond(R) < 1e12
    except np.linalg.LinAlgError:
        u, ok = np.full(len(S), np.nan), False
    if not ok and not check:
        raise IntegrationError(t, "singular sliding system on the surfaces "
                                  f"{[G.tolist() for G, _ in S]}: Filippov's solution is not unique; refused")
    F = F0 + sum(uq * b for uq, b in zip(u, B)) if ok else F0
    return (F, u, ok) if check else (F, u)
