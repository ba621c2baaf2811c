r"""Shared machinery of the claim checks: seeds, symbolic verdicts, flows on a log clock, limit fits.

Numerical conventions used by every check:

* **Integrators.** Trajectories come from :mod:`numerics`: :func:`numerics.simulate`
  (one flow), :func:`numerics.integrate_batch` (a batch, torch float64),
  :func:`numerics.reduced_logistic` (the logistic $(u,a)$ system in the internal
  clock $\tau$, to $t=10^{100}$ and beyond; at ``ctx.dps`` digits in the full profile with the Taylor
  backend, :func:`high_precision_backend`, GBS kept as the cross-check) and
  :func:`numerics.gradient_descent`. One exception, :func:`stiff_flow` (SciPy LSODA),
  is documented there.
* **Generated kernels.** Right-hand sides come from :func:`numerics.flow_rhs`
  (lambdified from :mod:`theorems`); nothing here re-types a derived formula.
* **Tolerances** are stated where they are used, with the reason.
"""
from __future__ import annotations

import math

import numpy as np

import sympy as sp

from numerics.metrics import entropy  # noqa: F401 - the one entropy helper, used by the claim modules
from theorems import prove_zero, sigmoid, softplus
import numerics

from ..claim import Outcome

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

    ``expr.rewrite(sp.exp)`` would also turn powers such as ``w**2`` into
    ``exp(2*log(w))``; replacing just the two named functions keeps the expression a
    rational function of exponentials. (:func:`theorems.prove_zero` converts the two
    named functions itself since it shares :func:`theorems._id_base.decide`'s procedure;
    this explicit pre-step is kept so that the expressions shown in reports are the
    exp forms.)
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
# flows: the integrators of :mod:`numerics`

# Tolerances: the numerics integrators' float64 default (rtol 1e-12) is used throughout; the
# property searches resolve effects of 1e-7 and more, the fits effects of 1e-4.


def _floats(rows):
    return np.array([[float(x) for x in row] for row in rows], dtype=float)


def high_precision_backend(engines=None) -> str:
    """The engine of the high-precision runs under ``engines`` (a :class:`..claim.Engines`, ``ctx.engines``;
    ``None``: the current settings): ``taylor`` (heyoka, a hard requirement of the package) when importable,
    else ``mpmath`` (GBS); always ``mpmath`` under ``--engines baseline`` (``high_precision='mpmath'``, the
    code path before the Taylor backend). GBS stays the fallback and the full profile's
    cross-check (:mod:`._crosscheck`): the two engines share the derivation and nothing numerical."""
    if engines is not None and engines.high_precision == "mpmath":
        return "mpmath"
    return "taylor" if numerics.taylor_available() else "mpmath"


def logistic_reduced(u0, a0, b, times, *, backend="numpy", dps=30):
    r"""The reduced logistic system (claim 7), one run per instance.

    .. math:: \frac{du}{d\tau}=b\,\sigma(a),\qquad \frac{da}{d\tau}=J(\sigma(a))\,u,\qquad d\tau=\gamma\,dt,\quad
        \gamma=\frac{1}{1+e^{\langle u,\sigma(a)\rangle}}

    integrated in $\tau$ with $T=\log(1+t)$ carried along, output at the requested
    physical ``times`` (increasing, first may be 0; up to $10^{100}$ and beyond).
    ``u0``, ``a0``: (B, n); ``b``: (B,). ``backend``: ``numpy`` (DOP853, float64,
    :func:`numerics.reduced_logistic`), ``mpmath`` (GBS at ``dps`` digits, the same function) or
    ``taylor`` (:func:`numerics.reduced_taylor`: the derived flow compiled by heyoka, at ``dps``
    digits; about 30x faster than GBS on this system, bench row 8). Returns float arrays ``u``, ``a``
    (B, K, n), ``tau`` (B, K), and the trajectories themselves (``raw``: Trajectory objects, or the
    taylor backend's dicts).
    """
    u0, a0 = np.atleast_2d(np.asarray(u0, float)), np.atleast_2d(np.asarray(a0, float))
    B = len(u0)
    b = np.broadcast_to(np.asarray(b, float), (B,))
    times = np.asarray(times, float)
    tlist = [float(t) for t in times]
    if backend == "taylor":
        raw = [numerics.reduced_taylor(u0[i].tolist(), a0[i].tolist(), float(b[i]), t_end=tlist[-1], times=tlist,
                                       dps=dps) for i in range(B)]
        return {"u": np.stack([_floats(tr["u"]) for tr in raw]), "a": np.stack([_floats(tr["a"]) for tr in raw]),
                "tau": np.array([[float(x) for x in tr["tau"]] for tr in raw]), "times": times, "b": np.array(b),
                "raw": raw}
    raw = [numerics.reduced_logistic(u0[i].tolist(), a0[i].tolist(), float(b[i]), t_end=tlist[-1], times=tlist,
                                     backend=backend, dps=dps) for i in range(B)]
    return {"u": np.stack([_floats(tr.u) for tr in raw]), "a": np.stack([_floats(tr.a) for tr in raw]),
            "tau": np.array([[float(x) for x in tr.tau] for tr in raw]), "times": times, "b": np.array(b),
            "raw": raw}


def star_system(u0, a0, b, taus):
    r"""The loss-independent system $(\star)$ $du/d\tau=b\,s$, $da/d\tau=J(s)u$ at the requested $\tau$ (numpy)."""
    taus = np.asarray(taus, float)
    order = np.argsort(taus)
    tr = numerics.reduced_logistic(np.asarray(u0, float).tolist(), np.asarray(a0, float).tolist(), float(b),
                                   tau_end=float(taus[order[-1]]), times=[float(x) for x in taus[order]],
                                   backend="numpy")
    inv = np.argsort(order)
    return _floats(tr.u)[inv], _floats(tr.a)[inv]


def flow(loss, link, V0, a0, target, times, *, X=None, device="cpu", clock="auto"):
    r"""The full gradient flow $(\dot V,\dot a)$ for a batch, at the requested times.

    One instance: :func:`numerics.simulate` (numpy, DOP853); several:
    :func:`numerics.integrate_batch` (torch, float64, on ``device``). The clock is the
    integrators' ``auto`` choice (log clock for the logistic loss, so $t=10^{100}$ is
    reachable). ``V0`` (B, d, n), ``a0`` (B, n), ``target`` (B, m), ``X`` (B, m, d) or
    None. Returns ``V`` (B, K, d, n), ``a`` (B, K, n).
    """
    V0 = np.asarray(V0, float)
    if V0.ndim == 2:
        V0 = V0[None]
    a0 = np.atleast_2d(np.asarray(a0, float))
    target = np.atleast_2d(np.asarray(target, float))
    times = np.asarray(times, float)
    tlist = [float(t) for t in times]
    if len(V0) == 1:
        Xi = None if X is None else np.asarray(X, float).reshape(-1, V0.shape[1])
        prob = numerics.Problem(loss, V0[0], a0[0], target[0], link=link, X=Xi)
        tr = numerics.simulate(prob, t_end=tlist[-1], times=tlist, backend="numpy", clock=clock, freeze=False)
        V = np.array([np.asarray(v, float) for v in tr.V])[None]
        return {"V": V, "a": _floats(tr.a)[None], "times": times}
    out = numerics.integrate_batch(V0, a0, target, loss=loss, link=link, X=X, t_end=tlist[-1], times=tlist,
                                   device=device, clock=clock, freeze=False)
    V = out["V"].detach().cpu().numpy().transpose(1, 0, 2, 3)
    a = out["a"].detach().cpu().numpy().transpose(1, 0, 2)
    return {"V": V, "a": a, "times": times}


def stiff_flow(loss, link, V0, a0, target, times, *, rtol=1e-10, atol=1e-13):
    r"""One flow that converges exponentially, on the log clock $y=\log(1+t)$ with SciPy's LSODA.

    $\frac{dX}{dy}=(1+t)F(X)$: once the flow contracts at a fixed rate, the log clock
    multiplies that rate by $1+t$ and the problem turns stiff. LSODA switches to a
    BDF method there; the explicit integrators of :mod:`numerics` reach the same
    values (checked in the full profile) but need ~20x longer. The field is the
    generated :func:`numerics.flow_rhs`.
    """
    from scipy.integrate import solve_ivp

    rhs = numerics.flow_rhs(loss, link, backend="numpy")
    V0, a0, target = (np.asarray(x, float) for x in (V0, a0, target))
    d, n = V0.shape
    times = np.asarray(times, float)

    def fun(y, x):
        dV, da = rhs(x[: d * n].reshape(d, n), x[d * n:], target)
        return math.exp(y) * np.concatenate([dV.ravel(), da])

    sol = solve_ivp(fun, (0.0, float(np.log1p(times[-1]))), np.concatenate([V0.ravel(), a0]), method="LSODA",
                    t_eval=np.log1p(times), rtol=rtol, atol=atol)
    if sol.status != 0 or sol.y.shape[1] != len(times) or not np.all(np.isfinite(sol.y)):
        reached = float(sol.t[-1]) if len(sol.t) else 0.0
        raise RuntimeError(f"LSODA failed at t={math.expm1(reached):.6g}: {sol.message}")
    return {"V": sol.y[: d * n].T.reshape(-1, d, n), "a": sol.y[d * n:].T, "times": times}


def gradient_descent(loss, link, V0, a0, target, *, lr, steps, X=None, record=None):
    r"""Plain GD with :func:`numerics.gradient_descent` (numpy); ``record``: iterations to keep.

    Returns ``steps`` (recorded iterations), ``V`` (K, d, n) and ``a`` (K, n).
    """
    prob = numerics.Problem(loss, np.asarray(V0, float), np.asarray(a0, float), np.asarray(target, float),
                            link=link, X=None if X is None else np.asarray(X, float))
    record = sorted(set(int(r) for r in (record or ())) | {0, int(steps)})
    tr = numerics.gradient_descent(prob, lr=lr, steps=steps, record=record)
    return {"steps": record, "V": np.array([np.asarray(v, float) for v in tr.V]), "a": _floats(tr.a)}


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
    """Logistic toy (paper-notes#authors-settings): W = 0.1 N, a = 0 (one draw consumed), beta* normalized."""
    rs = np.random.RandomState(seed)
    W = 0.1 * rs.randn(dim, dim)
    a = 0.0 * rs.randn(dim)
    beta = rs.randn(dim)
    return W, a, beta / np.linalg.norm(beta)


def authors_comparison(n_features: int = 10, n_latent: int = 10, *, v_scale: float = 0.1, seed: int = 42):
    """Normalization comparison (paper-notes#alternatives): target, then re-seeded V = v_scale N and a = 1 + 0.1 N."""
    rs = np.random.RandomState(seed)
    target = rs.randn(n_features)
    target = target / np.linalg.norm(target)
    rs = np.random.RandomState(seed)
    V = v_scale * rs.randn(n_features, n_latent)
    a = np.ones(n_latent) + rs.randn(n_latent) * 0.1
    return V, a, target


def authors_conditioning(kappa: float, dim: int = 20, n_samples: int = 20, seed: int = 123):
    """Conditioning toy (paper-notes#authors-settings): W = 1e-5 N, a = 1e-3 N, X with singular values
    linspace(1, 1/kappa), y = N."""
    rs = np.random.RandomState(seed)
    W = 0.00001 * rs.randn(dim, dim)
    a = 0.001 * rs.randn(dim)
    X_raw = rs.randn(n_samples, dim)
    U, _, Vt = np.linalg.svd(X_raw, full_matrices=False)
    X = U @ np.diag(np.linspace(1, 1 / kappa, min(n_samples, dim))) @ Vt
    y = rs.randn(n_samples)
    return W, a, X, y


def authors_kl(d: int = 10, k: int = 10, seed: int = 123):
    """KL toy (paper-notes#authors-settings): V = 0.1 N (tokens x classes), a = 0 (one draw consumed),
    p = softmax(10 U[0,1])."""
    rs = np.random.RandomState(seed)
    V = 0.1 * rs.randn(d, k)
    a = 0.0 * rs.randn(d)
    p = softmax(10 * rs.rand(k))
    return V, a, p


def authors_tied(D: int, seed: int = 42):
    """Tied toy (paper-notes#authors-settings): target normalized; re-seeded, one D x D draw consumed,
    a = 1 + 0.1 N; U = I."""
    rs = np.random.RandomState(seed)
    target = rs.randn(D)
    target = target / np.linalg.norm(target)
    rs = np.random.RandomState(seed)
    rs.randn(D, D)
    a = np.ones(D) + rs.randn(D) * 0.1
    return np.eye(D), a, target
