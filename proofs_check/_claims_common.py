r"""Shared machinery of the claim checks: seeds, symbolic verdicts, flows on a log clock, limit fits.

Numerical conventions used by every check:

* **Log clock.** Long horizons are integrated in $y=\log(1+t)$: for any state $X$
  of the flow $\dot X=F(X)$, $\frac{dX}{dy}=(1+t)\,F(X)=e^{y}F(X)$. Requested times
  are exact output points, and $t=10^{100}$ is $y\approx230$. For the logistic
  reduced system (claim 7) the factor $e^{y}\gamma=e^{\,y-\log(1+e^{z})}$ is
  formed in log space, so nothing overflows.
* **Generated kernels.** Right-hand sides come from :func:`numerics.flow_rhs`
  (lambdified from :mod:`theorems`); nothing here re-types a derived formula.
* **Tolerances** are stated where they are used, with the reason.
"""
from __future__ import annotations

import math

import numpy as np

import sympy as sp

from theorems import prove_zero, sigmoid, softplus

from ._registry import Outcome

# ---------------------------------------------------------------------------------------
# seeds


def rng_for(ctx, salt: int) -> np.random.Generator:
    """An independent generator per claim: ``default_rng([seed, salt])``."""
    return np.random.default_rng([int(ctx.seed), int(salt)])


# ---------------------------------------------------------------------------------------
# small numerics


def softmax(a, axis=-1):
    a = np.asarray(a, dtype=float)
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def entropy(w, axis=-1):
    """Shannon entropy of (normalized) weights; ``0 log 0 = 0``."""
    w = np.asarray(w, dtype=float)
    w = w / w.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, -w * np.log(np.where(w > 0, w, 1.0)), 0.0)
    return terms.sum(axis=axis)


def fmt(x, digits=4) -> str:
    """Compact float formatting for evidence lines."""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x == 0 or (1e-3 <= abs(x) < 1e5):
        return f"{x:.{digits}g}"
    return f"{x:.{max(digits - 1, 1)}e}"


def log10_times(k_max: float, per_decade: int = 4, k_min: float = -2.0) -> np.ndarray:
    """Times $10^{k}$, $k$ from ``k_min`` to ``k_max``, ``per_decade`` points per decade."""
    n = int(round((k_max - k_min) * per_decade)) + 1
    return 10.0 ** np.linspace(k_min, k_max, n)


# ---------------------------------------------------------------------------------------
# symbolic verdicts


def _named_to_exp(expr):
    """Replace ``sigmoid``/``softplus`` by their exp forms *without* ``rewrite(exp)``.

    ``expr.rewrite(sp.exp)`` (which :func:`theorems.prove_zero` applies when the
    named functions are present) also turns powers such as ``w**2`` into
    ``exp(2*log(w))``; those become opaque symbols and an exact identity is then
    only spot-checked. Replacing just the two named functions keeps the
    expression a rational function of exponentials.
    """
    def one(e):
        e = sp.sympify(e)
        if not e.has(sigmoid, softplus):
            return e
        return e.replace(sigmoid, lambda x: 1 / (1 + sp.exp(-x))).replace(
            softplus, lambda x: sp.log(1 + sp.exp(x)))
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(one)
    if isinstance(expr, (list, tuple)):
        return [_named_to_exp(e) for e in expr]
    return one(expr)


def symbolic_outcome(items, *, what: str) -> Outcome:
    """Turn ``[(label, expr)]`` into one verdict by :func:`theorems.prove_zero` on each expr.

    ``verified`` when every item is proved exactly; ``refuted`` at the first
    disproved item (its rational counterexample point and the nonzero value);
    ``inconclusive`` when SymPy could only spot-check or could not decide.
    """
    proved, numeric = [], []
    for label, expr in items:
        res = prove_zero(_named_to_exp(expr))
        if res.status == "disproved":
            return Outcome(
                "refuted",
                f"{what}: disproved for {label} ({res.detail})",
                details={"proved": proved, "disproved": label, "method": res.method},
                counterexample={"case": label, "point": res.counterexample, "value": res.detail},
            )
        if res.status == "proved":
            proved.append(label)
        elif res.status == "numeric":
            numeric.append(label)
        else:
            return Outcome("inconclusive", f"{what}: SymPy could not decide {label}",
                           details={"proved": proved}, reason=res.detail or "undecided")
    if numeric:
        return Outcome("inconclusive", f"{what}: exact for {len(proved)} cases, only a 50-digit spot check for "
                       f"{', '.join(numeric)}", details={"proved": proved, "numeric_only": numeric},
                       reason="no exact proof for: " + ", ".join(numeric))
    return Outcome("verified", f"{what}: proved exactly (rational function of exp(a_i) cancels to 0) for "
                   f"{len(proved)} cases: {', '.join(proved)}", details={"proved": proved})


def sizes(ctx, *, d_values=(1, 2), min_d: int = 1) -> list[tuple[int, int]]:
    """(n, d) pairs for the exact proofs: n = 2..3 (quick) or 2..6 (full)."""
    ns = range(2, 7) if ctx.full else range(2, 4)
    ds = [d for d in (d_values if not ctx.full else tuple(sorted(set(d_values) | {3}))) if d >= min_d]
    out = []
    for n in ns:
        for d in ds:
            if ctx.full and n >= 5 and d >= 3:
                continue  # the largest cases add minutes and no new structure
            out.append((n, d))
    return out


# ---------------------------------------------------------------------------------------
# flows on the log clock (scipy DOP853 on the generated right-hand side)

#: DOP853 tolerances for float64 checks: 1e-11 relative keeps ~4 digits of margin
#: over the 1e-7-level effects the property searches resolve.
RTOL, ATOL = 1e-11, 1e-13


def _solve(fun, y0, y_eval, rtol, atol, method="DOP853"):
    from scipy.integrate import solve_ivp

    y_eval = np.asarray(y_eval, dtype=float)
    sol = solve_ivp(fun, (0.0, float(y_eval[-1])), np.asarray(y0, dtype=float), method=method,
                    t_eval=y_eval, rtol=rtol, atol=atol)
    if sol.status != 0 or sol.y.shape[1] != len(y_eval) or not np.all(np.isfinite(sol.y)):
        reached = float(sol.t[-1]) if len(sol.t) else 0.0
        raise RuntimeError(f"integration failed at log(1+t)={reached:.6g} (t={math.expm1(reached):.6g}): "
                           f"{sol.message}")
    return sol.y


def logistic_reduced(u0, a0, b, times, *, rtol=RTOL, atol=ATOL):
    r"""The reduced logistic system (claim 7) for a batch, at the requested times.

    .. math:: \dot u=\gamma\,b\,\sigma(a),\qquad \dot a=\gamma\,J(\sigma(a))\,u,\qquad \gamma=\frac{1}{1+e^{\langle u,\sigma(a)\rangle}}

    integrated on the clock $y=\log(1+t)$. ``u0``, ``a0``: (B, n); ``b``: (B,);
    ``times``: increasing (K,), first entry may be 0. Returns ``u``, ``a`` of
    shape (B, K, n) and the internal time ``tau`` (B, K) recovered exactly as
    $\tau=(\sum_i u_i-\sum_i u_i(0))/b$ (since $\sum_i\sigma_i=1$).
    """
    from numerics import flow_rhs

    rhs = flow_rhs("logistic", "softmax", backend="numpy")
    u0, a0 = np.atleast_2d(np.asarray(u0, float)), np.atleast_2d(np.asarray(a0, float))
    B, n = u0.shape
    b = np.broadcast_to(np.asarray(b, float), (B,)).copy()
    times = np.asarray(times, float)
    y_eval = np.log1p(times)

    def fun(y, x):
        X = x.reshape(B, 2 * n)
        u, a = X[:, :n], X[:, n:]
        s = rhs.phi(a)
        z = np.sum(s * u, axis=-1, keepdims=True)
        scale = np.exp(y - np.logaddexp(0.0, z))  # (1+t) * gamma, in log space
        return np.concatenate([scale * b[:, None] * s, scale * rhs.jvp_T(a, u)], axis=-1).ravel()

    Y = _solve(fun, np.concatenate([u0, a0], axis=-1).ravel(), y_eval, rtol, atol)
    Y = Y.reshape(B, 2 * n, len(times)).transpose(0, 2, 1)
    u, a = Y[..., :n], Y[..., n:]
    tau = (u.sum(-1) - u0.sum(-1)[:, None]) / b[:, None]
    return {"u": u, "a": a, "tau": tau, "times": times, "b": b}


def flow(loss, link, V0, a0, target, times, *, X=None, rtol=RTOL, atol=ATOL, method="DOP853"):
    r"""The full gradient flow $(\dot V,\dot a)$ for a batch, at the requested times (log clock).

    ``V0`` (B, d, n), ``a0`` (B, n), ``target`` (B, m), ``X`` (B, m, d) or None.
    Returns ``V`` (B, K, d, n), ``a`` (B, K, n). ``method="LSODA"`` (stiffness
    switching) is for flows that converge exponentially: on the log clock their
    contraction rate is multiplied by $1+t$ and an explicit method crawls.
    """
    from numerics import flow_rhs

    rhs = flow_rhs(loss, link, backend="numpy")
    V0 = np.asarray(V0, float)
    if V0.ndim == 2:
        V0 = V0[None]
    a0 = np.atleast_2d(np.asarray(a0, float))
    target = np.atleast_2d(np.asarray(target, float))
    B, d, n = V0.shape
    if X is not None:
        X = np.asarray(X, float)
        if X.ndim == 2:
            X = np.broadcast_to(X, (B,) + X.shape)
    times = np.asarray(times, float)

    def fun(y, x):
        V = x[: B * d * n].reshape(B, d, n)
        a = x[B * d * n:].reshape(B, n)
        dV, da = rhs(V, a, target, X)
        return math.exp(y) * np.concatenate([dV.ravel(), da.ravel()])

    Y = _solve(fun, np.concatenate([V0.ravel(), a0.ravel()]), np.log1p(times), rtol, atol, method)
    V = Y[: B * d * n].reshape(B, d, n, -1).transpose(0, 3, 1, 2)
    a = Y[B * d * n:].reshape(B, n, -1).transpose(0, 2, 1)
    return {"V": V, "a": a, "times": times}


def gradient_descent(loss, link, V0, a0, target, *, lr, steps, X=None, record=(), grad_scale=1.0):
    r"""Plain GD $V\leftarrow V+\eta\,c\,\dot V$, $a\leftarrow a+\eta\,c\,\dot a$ on the generated flow field.

    ``grad_scale`` $c$ rescales the objective (the authors' conditioning toy uses
    $\|y-X\beta\|^2$ without the $\tfrac12$: $c=2$). Batched over a leading axis.
    ``record``: iteration counts (after that many steps) at which to store
    ``(V, a)``. Returns ``{"V", "a", "steps"}`` with the recorded states.
    """
    from numerics import flow_rhs

    rhs = flow_rhs(loss, link, backend="numpy")
    V = np.array(V0, dtype=float)
    a = np.array(a0, dtype=float)
    record = sorted(set(int(r) for r in record) | {int(steps)})
    out_V, out_a, out_k = [], [], []
    k = 0
    step = lr * grad_scale
    for r in record:
        while k < r:
            dV, da = rhs(V, a, target, X)
            V += step * dV
            a += step * da
            k += 1
        out_V.append(V.copy())
        out_a.append(a.copy())
        out_k.append(k)
    return {"V": out_V, "a": out_a, "steps": out_k}


# ---------------------------------------------------------------------------------------
# asymptotic fits


def limit_fit(log_t, ratio, *, degree: int = 2) -> dict:
    r"""Fit ``ratio`` $=c_0+c_1x+\dots+c_kx^k$ with $x=1/\log t$ and return the extrapolated limit $c_0$.

    Used for asymptotic laws $f(t)/g(t)\to1$: the corrections of the laws checked
    here are power series in $1/\log t$ (to leading orders), so the intercept at
    $x=0$ is the limit. Also returns the relative rms residual (a law of the wrong
    shape fits badly) and the last observed ratio.
    """
    log_t = np.asarray(log_t, float)
    ratio = np.asarray(ratio, float)
    x = 1.0 / log_t
    A = np.vander(x, degree + 1, increasing=True)
    coef, *_ = np.linalg.lstsq(A, ratio, rcond=None)
    resid = ratio - A @ coef
    scale = max(float(np.max(np.abs(ratio))), 1e-300)
    return {"limit": float(coef[0]), "coefficients": [float(c) for c in coef],
            "rms_rel": float(np.sqrt(np.mean(resid ** 2)) / scale),
            "last": float(ratio[-1]), "x_range": [float(x.min()), float(x.max())]}


def law_accepted(fit: dict, *, tol: float, rms: float = 1e-3) -> bool:
    """A fitted law is accepted when its extrapolated limit is 1 within ``tol`` and the fit is good."""
    return abs(fit["limit"] - 1.0) <= tol and fit["rms_rel"] <= rms


# ---------------------------------------------------------------------------------------
# the authors' random streams (legacy numpy MT19937, explicit RandomState objects)


def authors_logistic_toy(dim: int = 8, seed: int = 123):
    """Logistic toy (digest 6.1.1): W = 0.1 N, a = 0 (one draw consumed), beta* normalized."""
    rs = np.random.RandomState(seed)
    W = 0.1 * rs.randn(dim, dim)
    a = 0.0 * rs.randn(dim)
    beta = rs.randn(dim)
    return W, a, beta / np.linalg.norm(beta)


def authors_comparison(n_features: int = 10, n_latent: int = 10, *, v_scale: float = 0.1, seed: int = 42):
    """Normalization comparison (digest 5.2): target, then re-seeded V = v_scale N and a = 1 + 0.1 N."""
    rs = np.random.RandomState(seed)
    target = rs.randn(n_features)
    target = target / np.linalg.norm(target)
    rs = np.random.RandomState(seed)
    V = v_scale * rs.randn(n_features, n_latent)
    a = np.ones(n_latent) + rs.randn(n_latent) * 0.1
    return V, a, target


def authors_conditioning(kappa: float, dim: int = 20, n_samples: int = 20, seed: int = 123):
    """Conditioning toy (digest 4.3): W = 1e-5 N, a = 1e-3 N, X with singular values linspace(1, 1/kappa), y = N."""
    rs = np.random.RandomState(seed)
    W = 0.00001 * rs.randn(dim, dim)
    a = 0.001 * rs.randn(dim)
    X_raw = rs.randn(n_samples, dim)
    U, _, Vt = np.linalg.svd(X_raw, full_matrices=False)
    X = U @ np.diag(np.linspace(1, 1 / kappa, min(n_samples, dim))) @ Vt
    y = rs.randn(n_samples)
    return W, a, X, y


def authors_kl(d: int = 10, k: int = 10, seed: int = 123):
    """KL toy (digest 5.1): V = 0.1 N (tokens x classes), a = 0 (one draw consumed), p = softmax(10 U[0,1])."""
    rs = np.random.RandomState(seed)
    V = 0.1 * rs.randn(d, k)
    a = 0.0 * rs.randn(d)
    p = softmax(10 * rs.rand(k))
    return V, a, p


def authors_tied(D: int, seed: int = 42):
    """Tied toy (digest 6.1.3): target normalized; re-seeded, one D x D draw consumed, a = 1 + 0.1 N; U = I."""
    rs = np.random.RandomState(seed)
    target = rs.randn(D)
    target = target / np.linalg.norm(target)
    rs = np.random.RandomState(seed)
    rs.randn(D, D)
    a = np.ones(D) + rs.randn(D) * 0.1
    return np.eye(D), a, target
