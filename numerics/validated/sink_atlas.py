r"""An atlas of softmax1's sink against the real tokens over a slice of initial conditions [D].

The slice (two real tokens, logistic loss, $b$ fixed): $u(0)=(x,\,x-\tfrac12)$ and a head start of the
second token in the logits, $a(0)=(0,\log w)$, i.e. the inverse weights $v(0)=(1,1/w)$ (exact rationals).
For each grid point:

* **float64** (the clock $\theta$ of :mod:`theorems.sinks_lemma`, right-hand side generated from
  :func:`theorems.sinks_lemma.softmax1_theta_system`, DOP853 at rtol $10^{-10}$, until one real token
  holds all but $10^{-6}$ of the weight): the winner, the largest sink weight along the run, and whether
  the sink held more than $1-\varepsilon$ (a sink phase);
* **certified** (optional, :func:`numerics.validated.sink_cert.certify_sink` from the exact point, then
  the independent checker :mod:`numerics.validated.sink_certcheck`): the winner's entry into its trapping
  region $R^{(1)+}_i$, the sink phase and the escape when they exist; or the reason the point was not
  certified (``balls too wide``: the naive-interval engine's limit, see ``docs/sinks.md``).

Points, not cells: the certificates are for the grid's initial conditions only (the softmax box
engine, :mod:`numerics.validated.box`, encloses whole cells; it has no softmax1 field).
"""
from __future__ import annotations

import math
from fractions import Fraction
import numpy as np

from theorems import InvalidArgument
from numerics import IntegrationError, lambdify_checked
from theorems.sinks_lemma import softmax1_theta_system
from .sink_cert import certify_sink
from .sink_certcheck import check_sink_independent

#: the float run stops when one real token holds all but this much of the weight
FLOAT_END = 1e-6


def _theta_rhs(n: int):
    import sympy as sp

    args, rhs, _ = softmax1_theta_system(n)
    return lambdify_checked(args, sp.Matrix(rhs), backend="numpy")


def float_point(u0, a0, b, *, eps, theta_max=1e8, _rhs=None) -> dict:
    """The float64 classification of one initial condition (module docstring)."""
    from scipy.integrate import solve_ivp

    n = len(u0)
    f = _rhs or _theta_rhs(n)

    def weights(y):
        a = np.asarray(y[1 + n:], float)
        m = max(a.max(), 0.0)
        e = np.exp(a - m)
        Z = np.exp(-m) + e.sum()
        return np.exp(-m) / Z, e / Z

    def end(t, y):
        return 1.0 - weights(y)[1].max() - FLOAT_END

    end.terminal = True
    y0 = np.array([0.0, *map(float, u0), *map(float, a0)])
    sol = solve_ivp(lambda t, y: np.asarray(f(*y, float(b)), float).ravel(), (0.0, theta_max), y0, method="DOP853",
                    rtol=1e-10, atol=1e-12, events=end)
    if sol.status != 1:
        raise IntegrationError(float(sol.t[-1]), f"DOP853 in the theta clock: {sol.message}")
    sinks = [weights(y)[0] for y in sol.y.T]
    return {"winner": int(np.argmax(sol.y[1 + n:, -1])) + 1, "sink_max": float(max(sinks)),
            "sink_phase": bool(max(sinks) > 1 - float(eps)), "log_tau_end": math.log(sol.y[0, -1])}


def sink_atlas(xs, ws, *, b=Fraction(1, 10), eps=Fraction(1, 100), certify: bool = True, time_budget: float = 30.0,
               prec: int = 256, order: int = 24) -> list[dict]:
    """One row per grid point ``(x, w)`` (rationals): the float classification and, if ``certify``, the
    certificate's status, winner and statements, and the independent checker's verdict (``independent_crashed``:
    what crashed in its own code, else None; ``independent`` is then False, and says nothing about the
    certificate)."""
    xs, ws = [Fraction(x) for x in xs], [Fraction(w) for w in ws]
    if not xs or not ws or any(w <= 0 for w in ws):
        raise InvalidArgument(f"xs={xs!r}, ws={ws!r}: expected non-empty grids, every w > 0")
    rhs = _theta_rhs(2)
    rows = []
    for x in xs:
        for w in ws:
            u0, v0 = [x, x - Fraction(1, 2)], [Fraction(1), 1 / w]
            row = {"x": str(x), "w": str(w), **float_point(u0, [0.0, math.log(w)], b, eps=eps, _rhs=rhs)}
            if certify:
                c = certify_sink(u0, b, v0=v0, eps=eps, prec=prec, order=order, time_budget=time_budget)
                row.update({"cert_status": c.status, "cert_winner": c.data.get("winner"), "cert_steps": c.steps,
                            "cert_seconds": round(c.seconds, 2)})
                if c.status == "certified":
                    ind = check_sink_independent(c.data)
                    row.update({"cert_sink_phase": c.data["sink_phase"] is not None,
                                "cert_escape": c.data["escape"] is not None, "independent": ind.ok,
                                "independent_reason": ind.reason,
                                # an exception in the checker's own code: no verdict on the certificate either way
                                "independent_crashed": ind.crashed or None})
            rows.append(row)
    return rows
