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

Step-size rule (as SciPy): factor $0.9\,\mathrm{err}^{-1/(q+1)}$ clipped to $[0.2, 10]$
(at most 1 after a rejection). Clocks: ``t`` or ``log`` ($\sigma=\log(1+t)$,
$dy/d\sigma=e^\sigma f$; ``auto`` = ``log`` for the logistic loss). Square / kl problems with
a normalized link freeze an element once the rigorous tail bound of
:mod:`numerics.integrate._freeze` is below tolerance.

Failures raise :class:`IntegrationError` naming the batch element, its time and the
reason (step-size underflow, ``max_steps``, non-finite state); nothing is returned short.
torch is imported inside the functions only.
"""
from __future__ import annotations

import math
import time as _time

import numpy as np
import scipy.integrate

from theorems import InvalidArgument, check_choice, check_int, get_link, get_loss
from theorems._errors import show

from ._common import DESCENT_SLACK, IntegrationError, check_tolerance, prepare_times, resolve_clock
from ._trajectory import BatchTrajectory
from ._freeze import FREEZE_FACTOR, freeze_rule
from .._metrics import argmax, entropy, max_weight, one_minus_max
from .._progress import Progress
from .._rhs import flow_rhs

METHODS = ("dop853", "dopri5")
DEFAULT_RTOL = 1e-12
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0


class _FakeProblem:
    """The attributes :class:`FreezeRule` reads, for a batch (target per element)."""

    def __init__(self, loss, link, n, target0, X0):
        self.loss, self.link, self.n = loss, link, n
        self.target, self.X = target0, X0


def _tableau(method, torch, dtype, device):
    cls = scipy.integrate.DOP853 if method == "dop853" else scipy.integrate.RK45
    t = lambda x: torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)  # noqa: E731
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


def integrate_batch(V0, a0=None, target=None, *, loss=None, link="softmax", X=None, t_end, times=None,
                    rtol=None, atol=None, device="cpu", dtype=None, clock="auto",
                    method="dop853", max_steps=100_000, freeze=True, progress=False,
                    frozen=()) -> BatchTrajectory:
    r"""Integrate B flows at once; return a :class:`~numerics.BatchTrajectory` aligned with ``times``.

    Args:
        V0: ``(B, d, n)``; a0: ``(B, n)``; target: ``(B, m)`` (numpy arrays or tensors). Or a
            :class:`~numerics.Problem` (a batch of one; its loss, link, X and frozen parameters),
            or a list of problems sharing loss, link, sizes and frozen parameters.
        frozen: parameters held fixed (see :attr:`numerics.Problem.frozen`).
        X: ``None``, ``(m, d)`` or ``(B, m, d)`` (square loss only).
        t_end, times: as :func:`numerics.simulate` (``times`` default: 0 and 39 log-spaced).
        rtol, atol: per-element tolerances (default ``1e-12`` and ``rtol * 1e-2``).
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
    from .._problem import Problem, _frozen_spec
    start = _time.perf_counter()
    probs = [V0] if isinstance(V0, Problem) else list(V0) if isinstance(V0, (list, tuple)) and V0 and \
        all(isinstance(p, Problem) for p in V0) else None
    if probs is not None:
        p0 = probs[0]
        if a0 is not None or target is not None or loss is not None:
            raise InvalidArgument("integrate_batch(problem, ...): a0, target and loss come from the problem; "
                                  "expected them unset")
        if any((p.loss, p.link, p.n, p.d, p.frozen, p.X is None) != (p0.loss, p0.link, p0.n, p0.d, p0.frozen,
                                                                     p0.X is None) for p in probs):
            raise InvalidArgument("integrate_batch: the problems differ in loss, link, sizes, design or frozen "
                                  "parameters; expected one batch of equal shape")
        V0 = np.stack([p.V for p in probs])
        a0 = np.stack([p.a for p in probs])
        target = np.stack([p.target for p in probs])
        X = None if p0.X is None else np.stack([p.X for p in probs])
        loss, link, frozen = p0.loss, p0.link, p0.frozen
    if loss is None:
        raise InvalidArgument("loss=None is not allowed; expected a loss name or theorems.Loss")
    loss, link = get_loss(loss).name, get_link(link).name
    check_choice("method", method, METHODS)
    check_int("max_steps", max_steps, minimum=1)
    dev = resolve_device(device)
    if dtype is None or dtype in ("float64", torch.float64):
        dtype = torch.float64
    elif dtype in ("float32", torch.float32):
        dtype = torch.float32
    else:
        raise InvalidArgument(f"dtype={show(dtype)} is not allowed; expected torch.float64 or torch.float32")
    rtol = check_tolerance("rtol", rtol)
    atol = check_tolerance("atol", atol)
    rtol = DEFAULT_RTOL if rtol is None else rtol
    atol = rtol * 1e-2 if atol is None else atol
    tstr = prepare_times(t_end, times)
    clock = resolve_clock(loss, clock, "torch", tstr[-1])
    tv = [float(s) for s in tstr]
    if tv[-1] > 1e300:
        raise InvalidArgument(f"t_end={show(t_end)} is not allowed with backend='torch'; expected <= 1e300")

    def as_t(name, x, ndim, required=True):
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
            raise InvalidArgument(f"{name} contains non-finite entries; expected finite numbers")
        return out

    V = as_t("V0", V0, 3)
    a = as_t("a0", a0, 2)
    tgt = as_t("target", target, 2)
    B, d, n = V.shape
    if a.shape != (B, n):
        raise InvalidArgument(f"a0 has shape {tuple(a.shape)}; expected ({B}, {n})")
    if X is not None:
        if not get_loss(loss).design:
            raise InvalidArgument(f"X is given for loss={show(loss)}; expected X only with a separable loss "
                                  "(e.g. 'square')")
        Xt = as_t("X", X, 3 if np.ndim(X) == 3 else 2)
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

    frozen = _frozen_spec(frozen, n)
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
    rule = None
    if freeze and not frozen:
        Xr = None if Xt is None else Xt[0].cpu().numpy().astype(np.float64)
        rule = freeze_rule(_FakeProblem(loss, link, n, tgt[0].cpu().numpy().astype(np.float64), Xr))
        if rule is not None and rule.kind == "square" and Xt is not None and B > 1 and \
                not bool((Xt == Xt[0]).all()):
            rule = None  # mu was computed for X[0]; per-element designs: no freezing
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
