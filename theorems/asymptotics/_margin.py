r"""MARGIN: the centered logit direction tends to $e_{\rm top}-\mathbf 1/n$; its rate, derived up to a constant that
is not (provenance D).

On the rate law's path (:mod:`._rate`: exponential tails, $c=0$, a margin loss with an exponential tail), write
$y_j=\lambda(a_{\rm top}-a_j)$ for the losers. Every step is a SymPy computation:

1. **Limit direction.** $a-\bar a\mathbf 1$ is, up to a positive factor, $e_{\rm top}-\mathbf 1/n$ plus a
   part proportional to the losers' spread $\delta_j=y_j-\bar y$: when the spread stays bounded while $\bar y\to\infty$
   (the rate law's gap $\bar y=\log(C_1+\kappa\tau^2/2)$, $\tau=\log t$), the direction tends to
   $e_{\rm top}-\mathbf 1/n$, and $1-\cos=\tfrac{n}{2(n-1)}|\delta|^2/\bar y^2\,(1+o(1))$.
2. **Spread.** The losers' gaps obey $\dot y_j\propto S+\varepsilon_j\Delta_j$ with a common part (as in the
   bandit law, :mod:`._bandit`); the difference part relaxes at the rate $\frac1n d\bar y/d\tau$, so
   $d\delta/d\tau=-\frac1n\frac{d\bar y}{d\tau}\,\delta$; with $d\bar y/d\tau\to2/\tau$ ``sympy.dsolve``
   gives $\delta\propto\tau^{-2/n}$ (the forcing by the unequal $u_j$ is $O(1/\tau)$, smaller for $n\ge3$).
3. **Rate.** $1-\cos\sim D\,(\log t)^{-4/n}(\log\log t)^{-2}$: exponent $4/n$ with a $(\log\log t)^{-2}$ factor.

**No constant is derived.** $D$ is the squared amplitude of the slow mode $\tau^{-2/n}$ at the end of the
transient, fixed by the whole path from $a(0)$ (no closed form), and the corrections are powers
$\tau^{-(1-2/n)}$ and $1/\log\tau$, not a series in $1/\log t$: :func:`margin_law` returns a :class:`MarginRate`
whose JSON entry has ``exponent`` and ``constant`` ``None`` with the reason (``no_law``) and the derived exponent
under ``exponent_derived``. Measured on the reduced system (n = 3, 4, 6 to t = 1e300), the local exponent of the
spread is 0.61, 0.47, 0.31 against the derived 2/n = 0.67, 0.5, 0.33, still moving.

API: :func:`margin_law` ``(loss, link) -> MarginRate | NoLaw``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

__all__ = ["MARGIN_QUANTITY", "MarginRate", "margin_law"]

from . import NoLaw, n
from ._rate import rate_law

#: the quantity of the margin rate
MARGIN_QUANTITY = "1 - cos(a - mean(a), e_top - 1/n) (the logit direction)"


@dataclass(frozen=True)
class MarginRate:
    """The derived exponent of a law whose constant is not derived (``reason`` says why)."""

    quantity: str
    exponent: sp.Expr
    factor: str
    reason: str
    steps: tuple = field(default_factory=tuple)

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "exponent": None, "constant": None,
                "no_law": f"constant: {self.reason} (the exponent is derived: {sp.sstr(self.exponent)}, "
                                  f"with a factor {self.factor})", "exponent_derived": sp.sstr(self.exponent),
                "factor": self.factor, "clock": "log t", "derivation": list(self.steps), "provenance": "D"}


def margin_law(loss, link):
    r"""Derive the exponent of $1-\cos$ for ``loss`` and ``link`` (the module doc); the constant is not derived."""
    q = MARGIN_QUANTITY
    rate = rate_law(loss, link)
    if isinstance(rate, NoLaw):
        return NoLaw(q, rate.step, rate.reason)
    tau, C1, kap = sp.symbols("tau C1 kappa", positive=True)
    ybar = sp.log(C1 + kap * tau**2 / 2)  # the rate law's gap (sympy.dsolve there)
    drift = sp.limit(tau * sp.diff(ybar, tau), tau, sp.oo)  # tau dy/dtau -> 2
    d = sp.Function("delta")
    sol = sp.dsolve(sp.Eq(d(tau).diff(tau), -drift / (n * tau) * d(tau)), d(tau))
    p_spread = sp.simplify(-sp.limit(tau * sp.diff(sp.log(sol.rhs), tau), tau, sp.oo))
    p = sp.simplify(2 * p_spread)
    steps = (f"the rate law's path ({rate.steps[0]}); gap ybar = log(C1 + kappa tau^2/2): tau dybar/dtau -> "
             f"{sp.sstr(drift)}",
             "a - mean(a) = (positive) (e_top - 1/n) + (spread part): 1 - cos = n/(2(n-1)) |delta|^2/ybar^2 (1 + o(1))",
             f"spread: d delta/dtau = -(1/n)(dybar/dtau) delta; sympy.dsolve: delta = {sp.sstr(sol.rhs)}, "
             f"delta ~ tau^-{sp.sstr(p_spread)}",
             f"1 - cos ~ D (log t)^-{sp.sstr(p)} (log log t)^-2; D not derived")
    return MarginRate(q, p, "(log log t)^-2",
                      "D, the squared amplitude of the slow mode tau^(-2/n) at the end of the transient, is fixed by "
                      "the whole path from a(0) (no closed form), and the corrections are powers tau^-(1-2/n) and "
                      "1/log tau, not a series in 1/log t", steps)
