r"""Settle an optimizer's derived rate law in the optimizer's own time $t$, then compare (provenance D).

The laws of :func:`theorems.asymptotics.optimizer_rate_law` that the optimizer engines reach are on the clocks
``"t"`` ($q\sim C\,t^{-p}$: normalized flow, $t$ the arc length) and ``"exp t"`` ($q\sim C\,e^{-pt}$: sign flow).
The optimizer engines integrate in $t$ (:mod:`numerics.optim`), not on gradient flow's log clock, so the horizons
here are values of $t$; everything else is the settling of :func:`numerics.integrate.settle.settle_law`, its criterion
:func:`numerics.integrate.settle.settle_decision` called, not copied:

* on each horizon $T$, a grid (geometric on $[T/10, T]$ for ``"t"``, uniform on $[T/2, T]$ for ``"exp t"``) and
  its upper half as the window;
* the local exponent between grid times ($-d\log q/d\log t$, or $-d\log q/dt$), extrapolated linearly in the
  law's correction variable ($1/t$ for ``"t"``; $q$ itself for ``"exp t"``, where $q=S/(1+S)$ makes the
  corrections $O(q)$); the ratio $\rho=q\,t^p/C$ (or $q\,e^{pt}/C$) and its extrapolation, the intercept of a
  quadratic in the same variable;
* settled: two successive horizons' exponents within ``tol_exponent / 2`` and extrapolations within ``tol / 2``
  (relative), the last extrapolation within ``tol`` of the last measured ratio; an exponent settled farther than
  ``tol_exponent`` from the law's is refuted at once. Then ``verified`` or ``refuted``; never settled within the
  horizons: ``undecided``.

Tolerances: the rate law's (:data:`numerics.integrate.settle.RATE_TOL`, half of the 1 % near miss), on the
exponent *relative* ($|p_{\rm loc}-p|\le$ ``RATE_TOL`` $\cdot p$: the exponent near miss $1.01\,p$ is two
tolerances away whatever $p$ is).
"""
from __future__ import annotations

import math

import numpy as np
from numerics.integrate import settle
from numerics.integrate.settle import RATE_TOL
from theorems import InvalidArgument

__all__ = ["CLOCKS_IN_T", "settle_in_t", "t_grid"]

#: the law clocks an optimizer engine reaches (integrating in t)
CLOCKS_IN_T = ("t", "exp t")
_POINTS = 24


def t_grid(T: float, clock: str) -> list[str]:
    """The output times of horizon ``T`` (decimal strings, starting at ``"0"``)."""
    xs = np.geomspace(T / 10, T, _POINTS) if clock == "t" else np.linspace(T / 2, T, _POINTS)
    return ["0"] + [f"{x:.12g}" for x in xs]


def _measure(t, q, exponent, constant, clock):
    t, q = np.asarray(t, float), np.asarray(q, float)
    if not (np.all(np.isfinite(q)) and np.all(q > 0)):
        raise ValueError(f"1 - max weight is not finite and positive on the grid up to t = {t[-1]:g}")
    lq = np.log(q)
    win = t >= (math.sqrt(t[0] * t[-1]) if clock == "t" else 0.5 * (t[0] + t[-1]))
    X = np.log(t) if clock == "t" else t
    corr = 1.0 / t if clock == "t" else q  # the law's correction variable
    p_pts = -np.diff(lq[win]) / np.diff(X[win])
    cw = corr[win]
    x_mid = np.sqrt(cw[1:] * cw[:-1])
    p_loc = float(np.linalg.lstsq(np.vstack([np.ones_like(x_mid), x_mid]).T, p_pts, rcond=None)[0][0])
    ratio = np.exp(lq + exponent * X - math.log(constant))
    rho_inf = float(np.linalg.lstsq(np.vander(cw, 3, increasing=True), ratio[win], rcond=None)[0][0])
    return {"t": float(t[-1]), "exponent_local": p_loc, "exponent_last": float(p_pts[-1]),
            "ratio_last": float(ratio[-1]), "ratio_extrapolated": rho_inf, "q_last": float(q[-1])}


def settle_in_t(run, *, exponent: float, constant, clock: str, horizons, tol: float | None = None,
                tol_exponent: float | None = None) -> dict:
    r"""Check $q\sim C\,t^{-p}$ (``clock="t"``) or $q\sim C\,e^{-pt}$ (``"exp t"``), $p$ = ``exponent``, over
    growing ``horizons`` (values of $t$) until settled (the criterion: the module docstring).

    ``run(T) -> {"t": [...], "q": [...], "constant": float | None}`` on :func:`t_grid` ``(T, clock)`` after 0;
    ``constant``: a number, or ``None`` to take each run's own (a constant fixed by the state, sign flow's).
    Returns ``{"verdict", "settled", "history", "why", "horizon", ...}`` as
    :func:`numerics.integrate.settle.settle_law` does.
    """
    if clock not in CLOCKS_IN_T:
        raise InvalidArgument(f"clock={clock!r} is not allowed; expected one of {CLOCKS_IN_T}")
    if not (math.isfinite(exponent) and exponent > 0):
        raise InvalidArgument(f"exponent={exponent!r} is not allowed; expected a finite positive number")
    tol = RATE_TOL if tol is None else tol
    tol_exponent = RATE_TOL * exponent if tol_exponent is None else tol_exponent
    hist = []
    for T in horizons:
        r = run(T)
        C = constant if constant is not None else r.get("constant")
        if C is None or not (math.isfinite(C) and C > 0):
            raise ValueError(f"no positive constant to compare with at t = {T:g} (got {C!r})")
        hist.append({**_measure(r["t"], r["q"], exponent, C, clock), "constant": float(C)})
        if len(hist) < 2:
            continue
        prev, last = hist[-2], hist[-1]
        decision = settle.settle_decision(prev, last, exponent=exponent, tol=tol, tol_exponent=tol_exponent)
        if decision is None:
            continue
        if decision["constant_ok"] is None:
            why = (f"settled at t = {T:g}: local exponent {last['exponent_local']:.5f} (previous horizon "
                   f"{prev['exponent_local']:.5f}); the law's {exponent:.5g} is off by more than {tol_exponent:.3g}")
        else:
            what = "q t^p/C" if clock == "t" else "q exp(p t)/C"
            why = (f"settled at t = {T:g}: local exponent {last['exponent_local']:.5f} (law {exponent:.5g}), "
                   f"{what} -> {last['ratio_extrapolated']:.5f} (extrapolated; {last['ratio_last']:.5f} "
                   f"measured at t = {T:g})")
        return {**decision, "settled": True, "history": hist, "horizon": T, "why": why}
    last = hist[-1]
    trend = ", ".join(f"t = {h['t']:g}: p {h['exponent_local']:.4f}, ratio {h['ratio_last']:.4f}" for h in hist[-3:])
    return {"verdict": "undecided", "settled": False, "history": hist, "horizon": last["t"],
            "why": f"not settled by t = {last['t']:g} (the last horizon): {trend}"}
