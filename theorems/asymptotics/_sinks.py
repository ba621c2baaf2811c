r"""The escape time of a normalizer's sink slot (SINK2), derived with its next order (provenance D).

For a link with a sink, $\varphi_i=h(a_i)/(c+\sum_jk(a_j))$ with $c>0$ and exponential tails
$h=C_he^{\lambda x}$, $k=C_ke^{\lambda x}$, and a margin loss, start every projection negative ($u_1(0)<0$ the
largest): the sink holds almost all the weight until the winner's projection $u_1$ reaches 0, at $\tau^*$ (the
internal clock $d\tau=-\ell'(z)\,dt$). Every step is a SymPy computation:

1. **Sink phase.** The normalizer is $\approx c$ and $z\approx0$, so with $P=1/\varphi_1$:
   $dP/d\tau=\lambda^2|u_1|$ and $d|u_1|/d\tau=-b\varphi_1=-b/P$.
2. **Invariant.** Eliminating $\tau$: $d(u_1^2)/dP=-2b/(\lambda^2P)$, so $Q=u_1^2+(2b/\lambda^2)\log P$ is
   conserved (``sympy.dsolve``); $u_1$ reaches 0 where $\log P^*=\lambda^2Q/(2b)$.
3. **Escape time.** $\tau^*=\int dP/(\lambda^2|u_1(P)|)$; with $P=P^*e^{-v}$ it is
   $P^*\int_0^{V}e^{-v}dv/(\lambda\sqrt{2bv})$, $V=\lambda^2Q/(2b)$, and ``sympy.integrate`` to $V=\infty$ gives
   $P^*\sqrt{\pi/(2b)}/\lambda$ (the rest is $O(e^{-V})$).

So $\log\tau^*+\log\varphi_1(\tau^*)\to\tfrac12\log(\pi/(2b))-\log\lambda$ (**the next-order relation**, no
transient in it), and $\log\tau^*=\lambda^2X+\beta+o(1)$, $X=u_1(0)^2/(2b)$, with **c = λ²** and
$\beta=\tfrac12\log(\pi/(2b))-\log\lambda+\lambda^2(Q-u_1(0)^2)/(2b)$. The invariant's value $Q$ is set by the
transient before the sink phase (from $a(0)=0$ with all $n+1$ slots comparable), for which no closed form is derived:
$\beta$ is derived up to that measured number, and $\gamma$ (the $1/X$ term of a fit $cX+\beta+\gamma/X$) is not
derived at all: the sink-phase model's own corrections are $O(e^{-V})$, so the $1/X$ term comes from the transient's
dependence of $Q-u_1(0)^2$ on $u_1(0)$ and from the approximations of step 1.

API: :func:`sink_escape_law` ``(loss, link) -> EscapeLaw | NoLaw``.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

__all__ = ["ESCAPE_QUANTITY", "EscapeLaw", "sink_escape_law"]

from . import Law, NoLaw, b
from ._tails import link_rate, margin_model

#: the quantity of the escape law
ESCAPE_QUANTITY = "log tau* (escape from the sink: the winner's projection u1 reaches 0)"

_x = sp.Symbol("x", real=True)


@dataclass(frozen=True)
class EscapeLaw(Law):
    r"""$\log\tau^*\sim c\,X$ (``exponent`` -1 on the clock $X=u_1(0)^2/(2b)$, ``constant`` $c$) and the derived
    next order: ``next_order`` $=\tfrac12\log(\pi/(2b))-\log\lambda$, the limit of
    $\log\tau^*+\log\varphi_1(\tau^*)$."""

    next_order: sp.Expr = sp.Integer(0)
    symbols: tuple = ()

    def next_order_at(self, b_value: float) -> float:
        return float(self.next_order.subs(b, b_value))

    def to_json(self) -> dict:
        return {**super().to_json(), "next_order": sp.sstr(self.next_order),
                "next_order_quantity": "log tau* + log phi_top(tau*)", "symbols": dict(self.symbols),
                "not_derived": "beta's transient part lambda^2 (Q - u1(0)^2)/(2b) (Q, the sink phase's invariant, "
                               "is set by the transient: measured, no closed form); gamma (the 1/X term) entirely"}


def sink_escape_law(loss, link):
    r"""Derive $\log\tau^*\sim c\,u_1(0)^2/(2b)$ and its next order for ``loss`` and ``link`` (the module doc)."""
    q = ESCAPE_QUANTITY
    L, K, fail = margin_model(loss, link, "no sink slot")
    if fail:
        return NoLaw(q, *fail)
    c = sp.nsimplify(K.c) if K.c is not None else sp.Integer(0)
    if not c.is_positive:
        return NoLaw(q, "sink", f"the normalizer's constant c = {sp.sstr(c)} is not positive: no sink slot, no "
                                "metastable phase")
    _h, _k, lam, why = link_rate(K)
    if lam is None:
        return NoLaw(q, "tails", why)
    # step 2: the invariant, from d(u^2)/dP = -2b/(lambda^2 P)
    P, P0, u0, v, V = sp.symbols("P P_0 u_0 v V", positive=True)
    w = sp.Function("w")  # w = u_1^2 as a function of P
    sol = sp.dsolve(sp.Eq(w(P).diff(P), -2 * b / (lam**2 * P)), w(P), ics={w(P0): u0**2})
    Q = sp.simplify(sol.rhs + 2 * b / lam**2 * sp.log(P))
    if Q.has(P):  # pragma: no cover - dsolve's form changed
        return NoLaw(q, "invariant", f"u1^2 + (2b/lambda^2) log P = {sp.sstr(Q)} depends on P")
    logPstar = sp.solve(sp.Eq(sol.rhs, 0), sp.log(P)) or [sp.simplify(sp.log(P0) + lam**2 * u0**2 / (2 * b))]
    # step 3: tau* = P* int_0^V e^-v dv / (lambda sqrt(2 b v)), V -> oo
    tail = sp.integrate(sp.exp(-v) / (lam * sp.sqrt(2 * b * v)), (v, 0, sp.oo))
    nxt = sp.simplify(sp.expand_log(sp.log(tail), force=True))
    c_lead = sp.simplify(lam**2)
    steps = (f"h'/h = k'/k = lambda = {sp.sstr(lam)}; sink c = {sp.sstr(c)} > 0; sink phase: normalizer ~ c, z ~ 0, "
             "P = 1/phi_1: dP/dtau = lambda^2 |u1|, d|u1|/dtau = -b/P",
             f"sympy.dsolve d(u1^2)/dP = -2b/(lambda^2 P): u1^2 = {sp.sstr(sol.rhs)}; invariant Q = u1^2 + "
             f"(2b/lambda^2) log P; u1 = 0 at log P* = {sp.sstr(logPstar[0] if logPstar else '?')}",
             f"tau* = P* int_0^oo exp(-v)/(lambda sqrt(2 b v)) dv = P* {sp.sstr(tail)} (sympy.integrate; the rest is "
             "O(exp(-V)))",
             f"log tau* + log phi_1(tau*) -> {sp.sstr(nxt)} (derived next order, no transient in it)",
             f"log tau* = c X + beta + o(1), X = u1(0)^2/(2b), c = {sp.sstr(c_lead)}, beta = {sp.sstr(nxt)} + "
             "lambda^2 (Q - u1(0)^2)/(2b): Q set by the transient (measured, not derived); gamma/X not derived")
    return EscapeLaw(q, sp.Integer(-1), c_lead, steps, tail_rate=lam, clock="u1(0)^2/(2 b)", next_order=nxt,
                     symbols=(("u1(0)", "the winner's initial projection (negative: every slot starts below the "
                                        "sink's 0)"),))
