r"""Batched adaptive Runge–Kutta in torch: B initial conditions at once, on CPU or CUDA.

:func:`integrate_batch` integrates the generated right-hand side
(``flow_rhs(loss, link, backend='torch')``, batched over the leading axis) for every element
of the batch with its *own* step size and its own error norm: a step is accepted or
rejected per element, so a hard trajectory does not slow down or spoil the others. Steps
are shortened to land exactly on each output time (in the clock's coordinate).

Methods (tableaus taken from SciPy's public classes, so no coefficient is typed here):

* ``dop853`` (default): Dormand–Prince 8(5,3), SciPy's error norm (5th and 3rd order
  estimates combined), exponent $-1/8$;
* ``dopri5``: Dormand–Prince 5(4), RMS error norm, exponent $-1/5$.

Step-size rule (``controller='i'``, as SciPy): factor $0.9\,\mathrm{err}^{-1/(q+1)}$ clipped
to $[0.2, 10]$ (at most 1 after a rejection); ``controller='pi'``: Hairer's stabilized control
(:data:`CONTROLLERS`). The first step is Hairer's estimate (SciPy's ``select_initial_step``, one
extra slope). Clocks: ``t`` or ``log`` ($\sigma=\log(1+t)$, $dy/d\sigma=e^\sigma f$; ``auto`` =
``log`` for the logistic loss). Square / kl problems with a normalized link freeze an element
once the rigorous tail bound of :mod:`numerics.integrate._freeze` is below tolerance.

The stepper (:func:`_march`) keeps work arrays of the running elements only and compacts them
when an element finishes or freezes, so the batch stops marching in lockstep once its members
are done; the slopes of a step, each multiplied by its element's step size, are the rows of one
buffer, and every stage sum is one matrix product on those rows (rows ordered so that each
stage reads a contiguous block); the checks of a step (underflow, ``max_steps``, outputs hit,
rejections, magnitude) come to the host in one synchronization. Bench row 10 measures it
against the stepper it replaced (``_legacy=True``, kept for that row) and against torchode.

Failures raise :class:`IntegrationError` naming the batch element, its time and the
reason (step-size underflow, ``max_steps``, non-finite state, a state entry of
:data:`STATE_LIMIT` or more); nothing is returned short.
torch is imported inside the functions only.
"""
from __future__ import annotations

import math
import time as _time

import numpy as np
import scipy.integrate

from theorems import InvalidArgument, check_choice, check_int, get_link, get_loss
from theorems.errors import show

from ._common import (DESCENT_SLACK, IntegrationError, check_resolved, check_tolerance, prepare_times,
                      resolve_clock)
from ._trajectory import BatchTrajectory
from ._freeze import FREEZE_FACTOR, freeze_rule
from ..metrics import argmax, entropy, max_weight, one_minus_max
from ..progress import Progress
from ..rhs import flow_rhs
from ..problem import Problem, frozen_spec

METHODS = ("dop853", "dopri5")
DEFAULT_RTOL = 1e-12
#: smallest ``rtol`` accepted, in units of the dtype's machine epsilon: below ~10 eps the error estimate is
#: the rounding of the step itself and the controller shrinks the step without end (measured, float32,
#: square loss n = d = 3 to t = 1e4: rtol 3e-8 ~ eps/4 takes 926 steps, 1e-8 and the float64 default
#: 1e-12 burn max_steps). float64: 2.2e-15; float32: 1.2e-6.
RTOL_FLOOR_EPS = 10
#: default ``rtol`` by dtype: float64 ``DEFAULT_RTOL``; float32 ``100 * eps`` (1.2e-5), a decade above its floor
#: (the float64 default is below float32's floor).
DEFAULT_RTOL_EPS32 = 100


def rtol_floor(dtype) -> float:
    """The smallest ``rtol`` :func:`integrate_batch` accepts in ``dtype`` (:data:`RTOL_FLOOR_EPS` eps)."""
    import torch
    return RTOL_FLOOR_EPS * float(torch.finfo(dtype).eps)


def default_rtol(dtype) -> float:
    """``rtol`` when none is given: ``DEFAULT_RTOL`` (float64), ``DEFAULT_RTOL_EPS32`` eps (float32)."""
    import torch
    return DEFAULT_RTOL if dtype == torch.float64 else DEFAULT_RTOL_EPS32 * float(torch.finfo(dtype).eps)
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0


class _FakeProblem:
    """The attributes :class:`FreezeRule` reads, for a batch (target per element)."""

    def __init__(self, loss, link, n, target0, X0):
        self.loss, self.link, self.n = loss, link, n
        self.target, self.X = target0, X0


def _tableau(method, torch, dtype, device):
    cls = scipy.integrate.DOP853 if method == "dop853" else scipy.integrate.RK45
    t = lambda x: torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)
    tab = {"A": t(cls.A), "B": t(cls.B), "C": t(cls.C), "s": cls.n_stages,
           "q": cls.error_estimator_order}
    if method == "dop853":
        tab["E3"], tab["E5"] = t(cls.E3), t(cls.E5)
    else:
        tab["E"] = t(cls.E)
    return tab


def _check_descent_batch(L, tv, rtol) -> None:
    """:func:`numerics.integrate._common.check_descent` for every batch element of ``L`` (K, B)."""
    import torch
    finite = torch.isfinite(L)
    if not bool(finite.all()):
        k, b = (int(v) for v in (~finite).nonzero()[0])
        raise IntegrationError(tv[k], f"non-finite loss at output {k} (batch element {b})")
    if L.shape[0] < 2:
        return
    slack = max(DESCENT_SLACK, 100.0 * float(rtol), 1e3 * torch.finfo(L.dtype).eps)
    low = torch.cummin(L, dim=0).values[:-1]
    scale = torch.cummax(L.abs(), dim=0).values[1:]
    rise = L[1:] > low + slack * scale
    if bool(rise.any()):
        k, b = (int(v) for v in rise.nonzero()[0])
        raise IntegrationError(tv[k + 1], f"the loss rose from {float(low[k, b]):.6g} to "
                                          f"{float(L[k + 1, b]):.6g} at output {k + 1} (batch element "
                                          f"{b}); gradient flow cannot raise the loss, so the computed "
                                          "states are wrong (overflow or loss of accuracy); rescale "
                                          "the input or use backend='mpmath'")


def resolve_device(device: str):
    """``torch.device(device)``; ``InvalidArgument`` if unknown or unavailable."""
    import torch
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise InvalidArgument(f"device={show(device)} is not allowed; expected 'cpu' or 'cuda[:k]'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidArgument(f"device={show(device)} is not available (torch.cuda.is_available() is "
                              "False); expected 'cpu'")
    if dev.type not in ("cpu", "cuda"):
        raise InvalidArgument(f"device={show(device)} is not allowed; expected 'cpu' or 'cuda[:k]'")
    return dev


class _Run:
    """The state one integration shares between :func:`integrate_batch` and its stepper."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


#: step-size controllers, ``(safety, smallest factor, largest factor, beta, alpha)``: a step with
#: error norm ``err`` (<= 1: accepted) gets the factor ``safety * err**-alpha * err_prev**beta``
#: clipped to the factor range (a rejected one ``max(smallest, safety * err**-alpha)``, and no
#: growth on the step after a rejection); ``err_prev`` is the last accepted error, at least 1e-4
#: (1e-4 at the start).
#:
#: * ``"i"`` (default): SciPy's rule, beta = 0, alpha = 1/(q+1) (q the error estimator's order),
#:   factors in [0.2, 10];
#: * ``"pi"``: Hairer's stabilized (PI) control as in his Fortran codes (Hairer, Norsett & Wanner,
#:   *Solving ODEs I*, II.4; *II*, IV.2): beta = 0.04 (dopri5.f's default; dop853.f's formula
#:   alpha = 1/8 - 0.2 beta with the same beta), alpha = 1/5 - 0.75 beta for dopri5, factors in
#:   [0.2, 10] (dopri5.f) and [1/3, 6] (dop853.f).
#:
#: Measured on bench row 10's batch (4096 logistic flows, n = d = 8, rtol 1e-8): the I rule takes
#: 42844 element-steps (DOP853; 130524 with dopri5), PI 52635 (145345): the flows are smooth, the
#: I rule rejects 2 % of the steps and PI's damping costs more steps than it saves rejections.
CONTROLLERS = ("i", "pi")
#: the new stepper refuses states with an entry of this magnitude or more: the square loss's slope is a
#: product of two state entries (da = J^T V^T g), so above ~1.3e154 it overflows float64 (1.8e308), and
#: from 1e150 on the stage sums and the freezing rule's norms have under 1e8 of headroom; such a flow
#: (time scale ~1/|V|^2) is not resolved in float64 (backend='mpmath' is)
STATE_LIMIT = 1e150
_CONTROL = {("i", "dop853"): (0.9, 0.2, 10.0, 0.0, 1.0 / 8.0),
            ("i", "dopri5"): (0.9, 0.2, 10.0, 0.0, 1.0 / 5.0),
            ("pi", "dop853"): (0.9, 1.0 / 3.0, 6.0, 0.04, 1.0 / 8.0 - 0.2 * 0.04),
            ("pi", "dopri5"): (0.9, 0.2, 10.0, 0.04, 1.0 / 5.0 - 0.75 * 0.04)}


class _Plan:
    """The stage arithmetic of one method, laid out for one matrix product per stage.

    The stage slopes, each already multiplied by its step size, are rows of one buffer
    ``(rows, B * N)``; row order is chosen so that the nonzero coefficients of each stage
    (and of the solution and error weights) are contiguous rows, read by one ``addmm``.
    ``runs[s]`` lists ``(first row, coefficients (1, k))`` for stage ``s``; ``final`` is
    ``(first row, end row, weights)``, the solution weights then the error weights (one product
    per weight row)."""

    def __init__(self, method, torch, dtype, device):
        cls = scipy.integrate.DOP853 if method == "dop853" else scipy.integrate.RK45
        S = cls.n_stages
        A, Bw, C = (np.asarray(v, dtype=np.float64) for v in (cls.A, cls.B, cls.C))
        if method == "dop853":
            E = np.stack([cls.E5, cls.E3])  # SciPy's 5th and 3rd order estimates (last entry 0)
            order = [0] + list(range(3, S)) + [S, 1, 2]   # stages 1 and 2 are used by stages 2-4 only
        else:
            E = np.asarray(cls.E, dtype=np.float64)[None]
            order = list(range(S + 1))
        self.S, self.rows, self.pos = S, S + 1, {st: i for i, st in enumerate(order)}
        self.q = cls.error_estimator_order
        self.C = [float(v) for v in C]
        t = lambda v: torch.as_tensor(np.asarray(v, dtype=np.float64), dtype=dtype, device=device)
        self.runs = [None] + [[(r0, t(cf)[None]) for r0, cf in self._runs(A[s, :s])] for s in range(1, S)]
        W = np.vstack([Bw[None], E[:, :S]])           # solution weights, then error weights (stages < S)
        used = [self.pos[st] for st in range(S) if np.any(W[:, st] != 0)]
        r0, r1 = min(used), max(used) + 1
        M = np.zeros((W.shape[0], r1 - r0))
        for st in range(S):
            if self.pos[st] in range(r0, r1):
                M[:, self.pos[st] - r0] = W[:, st]
        if any(np.any(W[:, st] != 0) and self.pos[st] not in range(r0, r1) for st in range(S)):
            raise AssertionError("solution / error weights outside their rows")  # pragma: no cover
        self.final = (r0, r1, t(M))
        # weight of the slope at the new point (FSAL stage) in the error estimate: dopri5 only
        self.e_last = [float(v) for v in E[:, S]] if E.shape[1] > S else [0.0] * E.shape[0]
        self.fsal_err = any(v != 0 for v in self.e_last)

    def _runs(self, coeffs):
        """Contiguous row ranges of the nonzero ``coeffs`` (zeros inside a range of 2+ are read as 0)."""
        rows = sorted((self.pos[st], float(v)) for st, v in enumerate(coeffs) if v != 0)
        out, cur = [], None
        for r, v in rows:
            if cur is not None and r <= cur[0] + len(cur[1]) + 1:   # at most one zero row in between
                cur[1].extend([0.0] * (r - cur[0] - len(cur[1])) + [v])
            else:
                cur = (r, [v])
                out.append(cur)
        return [(r0, np.asarray(cf)) for r0, cf in out]


def _start_step(c, q, xw, yw, fw, sub):
    """Hairer's starting step (SciPy's ``select_initial_step``) for each element: h0 from the norms d0 of y and
    d1 of f; one more slope at y + h0 f estimates the second derivative d2; h1 = (0.01 / max(d1, d2))**(1/(q+1)),
    h = min(100 h0, h1), never past the last output time."""
    torch, N = c.torch, c.N
    scale = c.atol + c.rtol * yw.abs()
    d0 = torch.linalg.vector_norm(yw / scale, dim=1) / math.sqrt(N)
    d1 = torch.linalg.vector_norm(fw / scale, dim=1) / math.sqrt(N)
    h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.full_like(d0, 1e-6), 0.01 * d0 / d1)
    h0 = torch.minimum(h0, c.targets[-1] - xw).clamp(min=1e-12)
    f1 = c.f(xw + h0, yw + h0[:, None] * fw, sub)
    d2 = torch.linalg.vector_norm((f1 - fw) / scale, dim=1) / math.sqrt(N) / h0
    dm = torch.maximum(d1, d2)
    h1 = torch.where(dm <= 1e-15, (h0 * 1e-3).clamp(min=1e-6), (0.01 / dm) ** (1.0 / (q + 1)))
    h1 = torch.where(torch.isfinite(h1), h1, h0)
    return torch.minimum(torch.minimum(100 * h0, h1), c.targets[-1] - xw).clamp(min=1e-12)


def _error_norm(torch, method, plan, fv, fnew, hcol, scale, finite):
    """Each element's scaled error norm of the step (DOP853's blend of its 5th- and 3rd-order estimates, else the
    embedded estimate, with the FSAL slope where the tableau has one); ``inf`` where the step is not finite.
    ``fv`` rows 1 (and 2) hold the error combinations; they are overwritten."""
    Ba, N = fnew.shape
    if method == "dop853":
        e5 = fv[1].view(Ba, N).div_(scale)
        e3 = fv[2].view(Ba, N).div_(scale)
        n5 = torch.linalg.vector_norm(e5, dim=1).square_()
        n3 = torch.linalg.vector_norm(e3, dim=1).square_()
        denom = n5 + 0.01 * n3
        err = torch.where(denom > 0, n5 / torch.sqrt(denom * N), torch.zeros_like(n5))
    else:
        e = fv[1].view(Ba, N)
        if plan.fsal_err:
            e.addcmul_(fnew, hcol, value=plan.e_last[0])
        err = torch.linalg.vector_norm(e.div_(scale), dim=1) / math.sqrt(N)
    return torch.where(finite & torch.isfinite(err), err, torch.full_like(err, math.inf))


def _march(c) -> None:
    """The stepper: per-element step sizes (:data:`CONTROLLERS`), finished elements retired.

    Work arrays hold only the elements still running (compacted when one finishes or freezes);
    the stage sums are one matrix product per stage on the stacked, step-scaled slopes; one
    host synchronization per step (flags of every check at once)."""
    torch, B, d, n, N, K = c.torch, c.B, c.d, c.n, c.N, c.K
    dtype, dev, rtol, atol, rhs, dn = c.dtype, c.dev, c.rtol, c.atol, c.rhs, c.d * c.n
    plan = _Plan(c.method, torch, dtype, dev)
    safe, fac_min, fac_max, beta, alpha = _CONTROL[c.controller, c.method]
    eps, tiny = torch.finfo(dtype).eps, torch.finfo(dtype).tiny
    log_clock = c.clock == "log"
    idx = (c.k_next < K).nonzero()[:, 0]
    if not idx.numel():
        return
    xw, yw, kw = c.x[idx], c.y[idx], c.k_next[idx]
    tw, Xw = c.tgt[idx], None if c.Xt is None else c.Xt[idx]
    big = yw.abs().amax(dim=1) >= STATE_LIMIT
    if bool(big.any()):
        _too_big(c, idx, big, xw)
    fw = c.f(xw, yw, (tw, Xw))
    if not bool(torch.isfinite(fw).all()):
        bad = int(idx[(~torch.isfinite(fw)).any(dim=1)][0])
        raise IntegrationError(0.0, f"non-finite right-hand side at the start (batch element {bad})")
    hw = _start_step(c, plan.q, xw, yw, fw, (tw, Xw))
    err_old = torch.full_like(hw, 1e-4)
    after_rej = torch.zeros_like(hw, dtype=torch.bool)
    ns_w = torch.zeros_like(kw)
    nr_w = torch.zeros_like(kw)
    B0 = idx.numel()
    Kbuf = torch.empty((plan.rows, B0 * N), dtype=dtype, device=dev)
    ybuf = torch.empty(B0 * N, dtype=dtype, device=dev)
    fin = torch.empty((plan.final[2].shape[0], B0 * N), dtype=dtype, device=dev)
    bar = Progress(f"torch/{c.clock} B={B}", enabled=c.progress)
    span = float(c.targets[-1])

    def slope(c_s, ys, col, out):
        """The clock's slope at stage time ``xw + c_s * hs`` times the step, written into ``out`` (Ba, N)
        (the flow is autonomous: the time enters through the log clock's factor only)."""
        dV, da = rhs(ys[:, :dn].reshape(-1, d, n), ys[:, dn:], tw, Xw)
        if log_clock:
            col = col * torch.exp(xw + c_s * hs)[:, None]
        torch.mul(dV.reshape(-1, dn), col, out=out[:, :dn])
        torch.mul(da, col, out=out[:, dn:])

    def retire(keep):
        """Write back the elements that are done; keep the rest."""
        nonlocal idx, xw, yw, fw, hw, kw, tw, Xw, err_old, after_rej, ns_w, nr_w
        gone = idx[~keep]
        c.n_steps[gone], c.n_rej[gone] = ns_w[~keep], nr_w[~keep]
        c.x[gone] = xw[~keep]
        idx, xw, yw, fw, hw, kw, tw = idx[keep], xw[keep], yw[keep], fw[keep], hw[keep], kw[keep], tw[keep]
        Xw = None if Xw is None else Xw[keep]
        err_old, after_rej, ns_w, nr_w = err_old[keep], after_rej[keep], ns_w[keep], nr_w[keep]

    try:
        while idx.numel():
            Ba = idx.numel()
            M = Ba * N
            K2 = Kbuf[:, :M]
            Kr = K2.view(plan.rows, Ba, N)     # Kr[r]: slope row r as (Ba, N)
            tg = c.targets[kw]
            room = tg - xw
            clipped = hw >= room
            hs = torch.where(clipped, room, hw)
            stuck = hs <= torch.clamp(10 * eps * xw.abs(), min=tiny)
            hcol = hs[:, None]
            torch.mul(fw, hcol, out=Kr[0])   # fw: the clock's slope at xw (FSAL from the last step)
            ys = ybuf[:M].view(1, M)
            y1 = yw.view(1, M)
            for s in range(1, plan.S):
                runs = plan.runs[s]
                r0, cf = runs[0]
                torch.addmm(y1, cf, K2[r0:r0 + cf.shape[1]], out=ys)
                for r0, cf in runs[1:]:
                    ys.addmm_(cf, K2[r0:r0 + cf.shape[1]])
                slope(plan.C[s], ys.view(Ba, N), hcol, Kr[plan.pos[s]])
            r0, r1, Wt = plan.final
            fv = fin[:, :M]
            # one product per weight row: a (3, k) @ (k, M) product is threaded by the BLAS even at
            # M = 576, and on a loaded machine each threaded call waits ~50 ms for its second thread
            ynew = torch.addmm(yw.view(1, M), Wt[0:1], K2[r0:r1]).view(Ba, N)
            for i in range(1, Wt.shape[0]):
                torch.mm(Wt[i:i + 1], K2[r0:r1], out=fv[i:i + 1])
            xn = xw + hs
            fnew = c.f(xn, ynew, (tw, Xw))
            ya_new = ynew.abs()
            # a row's largest |entry| is finite iff the row is (amax propagates NaN): two cheap
            # passes where isfinite(...).all(dim=1) makes four
            ymax = ya_new.amax(dim=1)
            finite = torch.isfinite(ymax) & torch.isfinite(fnew.abs().amax(dim=1))
            scale = torch.maximum(yw.abs(), ya_new).mul_(rtol).add_(atol)
            err = _error_norm(torch, c.method, plan, fv, fnew, hcol, scale, finite)
            acc = err <= 1
            grow = err.clamp(min=tiny) ** -alpha
            f_acc = (safe * grow * err_old ** beta).clamp(fac_min, fac_max)
            f_acc = torch.where(after_rej, f_acc.clamp(max=1.0), f_acc)
            factor = torch.where(acc, f_acc, (safe * grow).clamp(fac_min, 1.0))
            hnew = hs * factor
            hw = torch.where(acc & clipped, torch.maximum(hnew, hw), hnew)
            err_old = torch.where(acc, err.clamp(min=1e-4), err_old)
            after_rej = ~acc
            x_prev, xw = xw, torch.where(acc, torch.where(clipped, tg, xn), xw)
            ns_w += acc
            nr_w += after_rej
            hit = acc & clipped
            over = (ns_w >= c.max_steps) | (nr_w > c.max_steps)
            big = acc & (ymax >= STATE_LIMIT)
            last = hit & (kw == K - 1)   # elements whose last output this step reaches: they retire
            f_stuck, f_over, f_hit, f_rej, f_big, f_last = torch.stack(
                [stuck.any(), over.any(), hit.any(), after_rej.any(), big.any(), last.any()]).tolist()
            if f_big:
                _too_big(c, idx, big, xw)
            if f_stuck:
                bad = int(stuck.nonzero()[0, 0])
                raise IntegrationError(float(c.t_of(x_prev[bad:bad + 1])[0]),
                                       f"step size underflow (batch element {int(idx[bad])})")
            if f_rej:
                rj = after_rej.nonzero()[:, 0]
                ynew[rj], fnew[rj] = yw[rj], fw[rj]
            yw, fw = ynew, fnew
            if f_over:
                bad = int(over.nonzero()[0, 0])
                raise IntegrationError(float(c.t_of(xw[bad:bad + 1])[0]),
                                       f"max_steps={c.max_steps} reached (batch element {int(idx[bad])})")
            if f_hit:
                hh = hit.nonzero()[:, 0]
                c.out_y[kw[hh], idx[hh]] = yw[hh]
                kw[hh] += 1
            if c.rule is not None:
                f_last = _freeze_step(c, idx, xw, yw, kw, tw, Xw, acc) or f_last
            if f_last:
                retire(kw < K)
            if c.progress and idx.numel():
                bar.update(float(xw.min()) / span if span > 0 else 1.0, note=f"{B - idx.numel()}/{B} done")
    finally:
        bar.close()


def _too_big(c, idx, big, xw):
    bad = int(big.nonzero()[0, 0])
    raise IntegrationError(float(c.t_of(xw[bad:bad + 1])[0]),
                           f"a state entry reached {STATE_LIMIT:g} in magnitude (batch element {int(idx[bad])}); "
                           "float64 cannot resolve this flow (its slope is a product of such entries); rescale "
                           "the input or use backend='mpmath'")


def _freeze_step(c, idx, xw, yw, kw, tw, Xw, acc) -> bool:
    """The freezing rule on the accepted, running elements (marks them done: ``kw = K``); whether any froze."""
    torch, K, dn = c.torch, c.K, c.d * c.n
    sel = (acc & (kw < K)).nonzero()[:, 0]
    if not sel.numel():
        return False
    Vs = yw[sel, :dn].reshape(-1, c.d, c.n)
    Bnd = c.rule.bound_torch(Vs, yw[sel, dn:], tw[sel], None if Xw is None else Xw[sel])
    # |y| scaled by its largest entry (a plain norm overflows to inf above ~1.3e154, and
    # B <= inf would freeze anything); freeze only on finite values
    ya_ = yw[sel].abs()
    tiny = torch.finfo(yw.dtype).tiny
    big = ya_.amax(dim=1).clamp(min=tiny)
    ynorm = big * torch.linalg.vector_norm(ya_ / big[:, None], dim=1)
    tol = FREEZE_FACTOR * torch.clamp(c.rtol * ynorm, min=c.atol)
    fz = sel[torch.isfinite(Bnd) & torch.isfinite(tol) & (Bnd <= tol)]
    if fz.numel():
        g = idx[fz]
        c.frozen_at[g] = c.t_of(xw[fz])
        for kk in range(K):
            s2 = fz[kw[fz] <= kk]
            if s2.numel():
                c.out_y[kk, idx[s2]] = yw[s2]
        kw[fz] = K
        return True
    return False


def _march_legacy(c) -> None:
    """Today's stepper, kept as the benchmark baseline (``integrate_batch(..., _legacy=True)``).

    The whole active set is gathered and scattered back on every step, the stage sums are
    ``tensordot`` calls, the step-size rule is SciPy's I controller."""
    torch, B, d, n, N, K = c.torch, c.B, c.d, c.n, c.N, c.K
    x, y, k_next, targets, tgt, Xt, tab, rule = c.x, c.y, c.k_next, c.targets, c.tgt, c.Xt, c.tab, c.rule
    f, t_of, method, rtol, atol, out_y, frozen_at = c.f, c.t_of, c.method, c.rtol, c.atol, c.out_y, c.frozen_at
    n_steps, n_rej, max_steps, progress, dtype, dev, clock = (c.n_steps, c.n_rej, c.max_steps, c.progress,
                                                              c.dtype, c.dev, c.clock)
    active = (k_next < K).nonzero()[:, 0]
    h = torch.zeros(B, dtype=dtype, device=dev)
    fcur = torch.zeros((B, N), dtype=dtype, device=dev)
    if active.numel():
        fcur[active] = f(x[active], y[active], (tgt[active], None if Xt is None else Xt[active]))
        if not bool(torch.isfinite(fcur[active]).all()):
            bad = int(active[(~torch.isfinite(fcur[active])).any(dim=1)][0])
            raise IntegrationError(0.0, f"non-finite right-hand side at the start (batch element {bad})")
        scale = atol + rtol * y[active].abs()
        d0 = torch.linalg.vector_norm(y[active] / scale, dim=1) / math.sqrt(N)
        d1 = torch.linalg.vector_norm(fcur[active] / scale, dim=1) / math.sqrt(N)
        h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.full_like(d0, 1e-6), 0.01 * d0 / d1)
        h[active] = torch.minimum(h0, targets[-1] - x[active]).clamp(min=1e-12)
    bar = Progress(f"torch/{clock} B={B}", enabled=progress)
    span = float(targets[-1])
    exponent = -1.0 / (tab["q"] + 1)
    eps, tiny = torch.finfo(dtype).eps, torch.finfo(dtype).tiny
    try:
        while active.numel():
            xa, ya, fa, ha = x[active], y[active], fcur[active], h[active]
            sub = (tgt[active], None if Xt is None else Xt[active])
            tg = targets[k_next[active]]
            hs = torch.minimum(ha, tg - xa)
            clipped = hs >= tg - xa
            # a step that no longer moves x (relative to |x|; any positive step moves x = 0)
            stuck = hs <= torch.clamp(10 * eps * xa.abs(), min=tiny)
            if bool(stuck.any()):
                bad = int(active[stuck][0])
                raise IntegrationError(float(t_of(x[bad:bad + 1])[0]),
                                       f"step size underflow (batch element {bad})")
            S = tab["s"]
            Kt = torch.empty((S + 1,) + tuple(ya.shape), dtype=dtype, device=dev)
            Kt[0] = fa
            A, Cc = tab["A"], tab["C"]
            hcol = hs[:, None]
            for s in range(1, S):
                dy = torch.tensordot(A[s, :s], Kt[:s], dims=1) * hcol
                Kt[s] = f(xa + Cc[s] * hs, ya + dy, sub)
            ynew = ya + hcol * torch.tensordot(tab["B"], Kt[:S], dims=1)
            fnew = f(xa + hs, ynew, sub)
            Kt[S] = fnew
            scale = atol + rtol * torch.maximum(ya.abs(), ynew.abs())
            if method == "dop853":
                e5 = torch.tensordot(tab["E5"], Kt, dims=1) / scale
                e3 = torch.tensordot(tab["E3"], Kt, dims=1) / scale
                n5, n3 = (e5 * e5).sum(dim=1), (e3 * e3).sum(dim=1)
                denom = n5 + 0.01 * n3
                err = torch.where(denom > 0, hs.abs() * n5 / torch.sqrt(denom * N),
                                  torch.zeros_like(n5))
            else:
                e = torch.tensordot(tab["E"], Kt, dims=1) * hcol / scale
                err = torch.linalg.vector_norm(e, dim=1) / math.sqrt(N)
            finite = torch.isfinite(ynew).all(dim=1) & torch.isfinite(fnew).all(dim=1)
            err = torch.where(finite & torch.isfinite(err), err, torch.full_like(err, math.inf))
            acc = err <= 1
            factor = torch.where(err == 0, torch.full_like(err, _MAX_FACTOR),
                                 (_SAFETY * err.clamp(min=tiny) ** exponent).clamp(_MIN_FACTOR, _MAX_FACTOR))
            factor = torch.where(acc, factor, factor.clamp(max=1.0))
            hnew = hs * factor
            hnew = torch.where(acc & clipped, torch.maximum(hnew, ha), hnew)
            # accepted elements move; landing exactly on the output coordinate when clipped
            xn = torch.where(acc, torch.where(clipped, tg, xa + hs), xa)
            yn = torch.where(acc[:, None], ynew, ya)
            fn = torch.where(acc[:, None], fnew, fa)
            x[active], y[active], fcur[active], h[active] = xn, yn, fn, hnew
            n_steps[active] += acc.long()
            n_rej[active] += (~acc).long()
            if bool((n_rej[active] > max_steps).any()) or bool((n_steps[active] >= max_steps).any()):
                bad = int(active[(n_steps[active] >= max_steps) | (n_rej[active] > max_steps)][0])
                raise IntegrationError(float(t_of(x[bad:bad + 1])[0]),
                                       f"max_steps={max_steps} reached (batch element {bad})")
            hit = acc & clipped
            if bool(hit.any()):
                idx = active[hit]
                out_y[k_next[idx], idx] = y[idx]
                k_next[idx] += 1
            if rule is not None:
                idx = active[acc & (k_next[active] < K)]
                if idx.numel():
                    Vs = y[idx, :d * n].reshape(-1, d, n)
                    Bnd = rule.bound_torch(Vs, y[idx, d * n:], tgt[idx],
                                           None if Xt is None else Xt[idx])
                    # |y| scaled by its largest entry (a plain norm overflows to inf above
                    # ~1.3e154, and B <= inf would freeze anything); freeze only on finite values
                    ya_ = y[idx].abs()
                    big = ya_.amax(dim=1).clamp(min=tiny)
                    ynorm = big * torch.linalg.vector_norm(ya_ / big[:, None], dim=1)
                    tol = FREEZE_FACTOR * torch.clamp(rtol * ynorm, min=atol)
                    fz = idx[torch.isfinite(Bnd) & torch.isfinite(tol) & (Bnd <= tol)]
                    if fz.numel():
                        frozen_at[fz] = t_of(x[fz])
                        for kk in range(K):
                            sel = fz[k_next[fz] <= kk]
                            if sel.numel():
                                out_y[kk, sel] = y[sel]
                        k_next[fz] = K
            active = (k_next < K).nonzero()[:, 0]
            if progress and active.numel():
                bar.update(float(x[active].min()) / span if span > 0 else 1.0,
                           note=f"{B - active.numel()}/{B} done")
    finally:
        bar.close()


def _unpack_problems(V0, a0, target, loss, link, X, frozen):
    """``integrate_batch``'s first argument as arrays: a :class:`~numerics.Problem` or a list of problems sharing
    loss, link, sizes, design and frozen parameters becomes ``(V0, a0, target, loss, link, X, frozen)``; arrays
    pass through."""
    probs = [V0] if isinstance(V0, Problem) else list(V0) if isinstance(V0, (list, tuple)) and V0 and \
        all(isinstance(p, Problem) for p in V0) else None
    if probs is None:
        return V0, a0, target, loss, link, X, frozen
    p0 = probs[0]
    if a0 is not None or target is not None or loss is not None:
        raise InvalidArgument("integrate_batch(problem, ...): a0, target and loss come from the problem; "
                              "expected them unset")
    if any((p.loss, p.link, p.n, p.d, p.frozen, p.X is None) != (p0.loss, p0.link, p0.n, p0.d, p0.frozen,
                                                                 p0.X is None) for p in probs):
        raise InvalidArgument("integrate_batch: the problems differ in loss, link, sizes, design or frozen "
                              "parameters; expected one batch of equal shape")
    X = None if p0.X is None else np.stack([p.X for p in probs])
    return (np.stack([p.V for p in probs]), np.stack([p.a for p in probs]), np.stack([p.target for p in probs]),
            p0.loss, p0.link, X, p0.frozen)


def _resolve_dtype(torch, dtype):
    """``dtype`` as a torch float dtype: ``None``/``'float64'``/``torch.float64`` or ``'float32'``/``torch.float32``."""
    named = dtype is None or isinstance(dtype, (str, torch.dtype))  # an array's == is elementwise: test the type
    if named and (dtype is None or dtype in ("float64", torch.float64)):
        return torch.float64
    if named and dtype in ("float32", torch.float32):
        return torch.float32
    raise InvalidArgument(f"dtype={show(dtype)} is not allowed; expected torch.float64 or torch.float32")


def _batch_tolerances(rtol, atol, dtype, tname):
    """``(rtol, atol)`` checked and defaulted for ``dtype`` (``rtol`` at least :func:`rtol_floor`)."""
    rtol = check_tolerance("rtol", rtol)
    atol = check_tolerance("atol", atol)
    if rtol is not None and rtol < rtol_floor(dtype):
        raise InvalidArgument(f"rtol={rtol!r} is not allowed with backend='torch' and dtype={tname}; expected rtol >= "
                              f"{rtol_floor(dtype):.3g} ({RTOL_FLOOR_EPS} x {tname} epsilon: a smaller rtol asks for "
                              "less than the rounding of one step, and the run burns max_steps)")
    rtol = default_rtol(dtype) if rtol is None else rtol
    return rtol, rtol * 1e-2 if atol is None else atol


def _batch_times(torch, t_end, times, dtype, tname):
    """The output times as exact strings and as floats, refused beyond 1e300 or the dtype's range, or where the
    dtype cannot tell two of them apart."""
    tstr = prepare_times(t_end, times)
    tv = [float(s) for s in tstr]
    if tv[-1] > 1e300:
        raise InvalidArgument(f"t_end={show(t_end)} is not allowed with backend='torch'; expected <= 1e300")
    tmax = float(torch.finfo(dtype).max)
    for k, t in enumerate(tv):  # a time beyond the dtype's range would come back as inf
        if t > tmax:
            name = "t_end" if k == len(tv) - 1 and times is None else f"times[{k}]"
            raise InvalidArgument(f"{name}={show(tstr[k])} is not allowed with backend='torch' and dtype={tname}; "
                                  f"expected a time <= {tmax:.4g} (the largest {tname})")
    check_resolved(tstr, torch.tensor(tv, dtype=dtype).tolist(), f"backend='torch' (dtype={tname})")
    return tstr, tv


def _as_tensor(torch, name, x, ndim, dtype, dev, tname, required=True):
    """``x`` as a finite ``ndim``-d tensor of ``dtype`` on ``dev``; one :class:`InvalidArgument` naming ``name``
    otherwise (complex, wrong shape, non-finite, or beyond the dtype's range)."""
    if x is None:
        if required:
            raise InvalidArgument(f"{name}=None is not allowed; expected a {ndim}-d array")
        return None
    try:
        if torch.is_tensor(x):
            if x.is_complex():
                raise TypeError("complex numbers are not real")
            out = x.to(dtype=dtype, device=dev)
        else:
            if np.iscomplexobj(x):
                raise TypeError("complex numbers are not real")
            out = torch.tensor(np.array(x, dtype=np.float64), dtype=dtype, device=dev)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise InvalidArgument(f"{name} is not allowed ({show(exc, 120)}); expected a {ndim}-d array "
                              "of real numbers") from None
    if out.dim() != ndim:
        raise InvalidArgument(f"{name} has shape {tuple(out.shape)}; expected a {ndim}-d array")
    if not bool(torch.isfinite(out).all()):
        src = x if torch.is_tensor(x) else torch.as_tensor(np.array(x, dtype=np.float64))
        if bool(torch.isfinite(src).all()):  # finite before the cast: beyond the dtype's range
            raise InvalidArgument(f"{name} has entries beyond the range of {tname} (largest "
                                  f"{float(torch.finfo(dtype).max):.4g}); expected entries within it, or "
                                  "dtype=float64")
        raise InvalidArgument(f"{name} contains non-finite entries; expected finite numbers")
    return out


def _batch_arrays(torch, V0, a0, target, X, loss, dtype, dev, tname):
    """``(V, a, target, X, m)`` as tensors with their shapes checked against each other: ``V`` (B, d, n),
    ``a`` (B, n), ``X`` ``None`` or (B, m, d) (a 2-d design is shared by the batch), ``target`` (B, m)."""
    V = _as_tensor(torch, "V0", V0, 3, dtype, dev, tname)
    a = _as_tensor(torch, "a0", a0, 2, dtype, dev, tname)
    tgt = _as_tensor(torch, "target", target, 2, dtype, dev, tname)
    B, d, n = V.shape
    if a.shape != (B, n):
        raise InvalidArgument(f"a0 has shape {tuple(a.shape)}; expected ({B}, {n})")
    if X is not None:
        if not get_loss(loss).design:
            raise InvalidArgument(f"X is given for loss={show(loss)}; expected X only with a separable loss "
                                  "(e.g. 'square')")
        Xt = _as_tensor(torch, "X", X, 3 if np.ndim(X) == 3 else 2, dtype, dev, tname)
        if Xt.dim() == 2:
            Xt = Xt.expand(B, *Xt.shape)
        if Xt.shape[0] != B or Xt.shape[2] != d:
            raise InvalidArgument(f"X has shape {tuple(Xt.shape)}; expected (m, {d}) or ({B}, m, {d})")
        m = Xt.shape[1]
    else:
        Xt, m = None, d
    if tgt.shape != (B, m):
        raise InvalidArgument(f"target has shape {tuple(tgt.shape)}; expected ({B}, {m})")
    if get_loss(loss).target_positive and (bool((tgt < 0).any()) or
                         float((tgt.sum(dim=-1) - 1).abs().max()) > 1e-9):
        raise InvalidArgument(f"target rows must be distributions (p >= 0, sum 1) for loss={loss!r}")
    return V, a, tgt, Xt, m


def _batch_freeze_rule(loss, link, n, tgt, Xt, B):
    """The freezing rule of the batch (:func:`freeze_rule` on its first element), or ``None`` where the elements
    have different designs (the square loss's mu was computed for ``X[0]``)."""
    Xr = None if Xt is None else Xt[0].cpu().numpy().astype(np.float64)
    rule = freeze_rule(_FakeProblem(loss, link, n, tgt[0].cpu().numpy().astype(np.float64), Xr))
    if rule is not None and rule.kind == "square" and Xt is not None and B > 1 and not bool((Xt == Xt[0]).all()):
        return None
    return rule


def integrate_batch(V0, a0=None, target=None, *, loss=None, link="softmax", X=None, t_end, times=None,
                    rtol=None, atol=None, device="cpu", dtype=None, clock="auto",
                    method="dop853", max_steps=100_000, freeze=True, progress=False,
                    frozen=(), controller="i", _legacy=False) -> BatchTrajectory:
    r"""Integrate B flows at once; return a :class:`~numerics.BatchTrajectory` aligned with ``times``.

    Args:
        V0: ``(B, d, n)``; a0: ``(B, n)``; target: ``(B, m)`` (numpy arrays or tensors). Or a
            :class:`~numerics.Problem` (a batch of one; its loss, link, X and frozen parameters),
            or a list of problems sharing loss, link, sizes and frozen parameters.
        frozen: parameters held fixed (see :attr:`numerics.Problem.frozen`).
        X: ``None``, ``(m, d)`` or ``(B, m, d)`` (square loss only).
        t_end, times: as :func:`numerics.simulate` (``times`` default: 0 and 39 log-spaced).
        rtol, atol: per-element tolerances (default ``rtol``: ``1e-12`` in float64, 100 eps = 1.2e-5 in float32
            (:func:`default_rtol`); ``atol``: ``rtol * 1e-2``). An ``rtol`` below :func:`rtol_floor` (10 eps of
            the dtype) is refused, as are times and states beyond the dtype's range.
        controller: ``'i'`` (default, SciPy's rule) or ``'pi'`` (Hairer's stabilized control); see
            :data:`CONTROLLERS`.
        device: ``cpu`` / ``cuda[:k]``; dtype: ``torch.float64`` (default) or ``float32``.

    Returns:
        a :class:`~numerics.BatchTrajectory` (the interface of :class:`~numerics.Trajectory`:
        ``to_numpy``, ``to_dataframe``, ``plot``, ``element(i)``; also readable as a mapping,
        ``result["V"]``) with ``times`` (K,), ``V`` (K, B, d, n), ``a`` (K, B, n), ``weights`` (K, B, n), ``loss``,
        ``entropy``, ``max_weight``, ``one_minus_max`` (K, B), ``argmax`` (K, B) int64,
        ``n_steps`` / ``n_rejected`` (B,) int64, ``frozen_at`` (B,) (NaN where not frozen),
        and ``clock``, ``method`` (str). All tensors on ``device``.
    """
    import torch
    start = _time.perf_counter()
    V0, a0, target, loss, link, X, frozen = _unpack_problems(V0, a0, target, loss, link, X, frozen)
    if loss is None:
        raise InvalidArgument("loss=None is not allowed; expected a loss name or theorems.Loss")
    loss, link = get_loss(loss).name, get_link(link).name
    check_choice("method", method, METHODS)
    check_choice("controller", controller, CONTROLLERS)
    check_int("max_steps", max_steps, minimum=1)
    dev = resolve_device(device)
    dtype = _resolve_dtype(torch, dtype)
    tname = str(dtype).replace("torch.", "")
    rtol, atol = _batch_tolerances(rtol, atol, dtype, tname)
    tstr, tv = _batch_times(torch, t_end, times, dtype, tname)
    clock = resolve_clock(loss, clock, "torch", tstr[-1])
    V, a, tgt, Xt, m = _batch_arrays(torch, V0, a0, target, X, loss, dtype, dev, tname)
    B, d, n = V.shape

    frozen = frozen_spec(frozen, n)
    rhs = flow_rhs(loss, link, backend="torch", frozen=frozen)
    N = d * n + n
    y = torch.cat([V.reshape(B, d * n), a], dim=1).contiguous()
    K = len(tv)
    targets = torch.tensor([t if clock == "t" else math.log1p(t) for t in tv], dtype=dtype,
                           device=dev)
    out_y = torch.empty((K, B, N), dtype=dtype, device=dev)
    x = torch.zeros(B, dtype=dtype, device=dev)
    k_next = torch.zeros(B, dtype=torch.long, device=dev)
    while True:  # outputs at the start
        sel = (k_next < K) & (targets[k_next.clamp(max=K - 1)] <= x)
        if not bool(sel.any()):
            break
        idx = sel.nonzero()[:, 0]
        out_y[k_next[idx], idx] = y[idx]
        k_next[idx] += 1
    tab = _tableau(method, torch, dtype, dev)
    rule = _batch_freeze_rule(loss, link, n, tgt, Xt, B) if freeze and not frozen else None
    frozen_at = torch.full((B,), math.nan, dtype=dtype, device=dev)
    n_steps = torch.zeros(B, dtype=torch.long, device=dev)
    n_rej = torch.zeros(B, dtype=torch.long, device=dev)

    def f(xs, ys, sub):
        """Right-hand side on a subset; ``sub = (target, X)`` rows of the active elements."""
        Vs = ys[:, :d * n].reshape(-1, d, n)
        dV, da = rhs(Vs, ys[:, d * n:], sub[0], sub[1])
        out = torch.cat([dV.reshape(-1, d * n), da], dim=1)
        if clock == "log":
            out = out * torch.exp(xs)[:, None]
        return out

    def t_of(xs):
        return xs if clock == "t" else torch.expm1(xs)

    c = _Run(torch=torch, B=B, d=d, n=n, N=N, K=K, x=x, y=y, k_next=k_next, targets=targets, tgt=tgt, Xt=Xt,
             tab=tab, rule=rule, f=f, t_of=t_of, rhs=rhs, clock=clock, method=method, rtol=rtol, atol=atol,
             out_y=out_y, frozen_at=frozen_at, n_steps=n_steps, n_rej=n_rej, max_steps=max_steps,
             progress=progress, dtype=dtype, dev=dev, controller=controller)
    (_march_legacy if _legacy else _march)(c)
    Vs = out_y[:, :, :d * n].reshape(K, B, d, n)
    As = out_y[:, :, d * n:]
    W = rhs.phi(As)
    tg = tgt.expand(K, B, m)
    Xk = None if Xt is None else Xt.expand(K, *Xt.shape)
    L = rhs.loss_value(Vs, As, tg, Xk)
    _check_descent_batch(L, tv, rtol)
    return BatchTrajectory(
        times=torch.tensor(tv, dtype=dtype, device=dev), V=Vs, a=As, weights=W, loss=L,
        entropy=entropy(W), max_weight=max_weight(W), argmax=argmax(W), one_minus_max=one_minus_max(W),
        n_steps=n_steps, n_rejected=n_rej, frozen_at=frozen_at, clock=clock, method=method, rtol=rtol,
        atol=atol, wall_time=_time.perf_counter() - start)
