r"""The loss law $\mathcal L(t)\sim C\,t^{-1}$, derived from the definitions (provenance D, not the paper's statement).

For a margin loss $\ell(z)$, $z=\langle w,\beta\rangle$, $\beta=V\varphi(a)$, the flow moves every value column along
$w$ ($\dot V=-\ell'(z)\,w\varphi^\top$) and the margin obeys
$\dot z=-\ell'(z)\,(b|\varphi|^2+|J^\top u|^2)$, $b=|w|^2$, $u=V^\top w$. Every step is a SymPy computation:

1. **Polarization and the winner's weight.** The tails step of the rate law (:mod:`._rate`): $h'/h=k'/k=\lambda>0$,
   $c=0$, $r=h/k$ a positive constant. Then the normalized weights go to a vertex (the rate law's gap equation:
   the losers' weights vanish like $(\log t)^{-2}$), $\varphi\to r\,e_{\rm top}$, $|\varphi|^2\to r^2$, and
   $|J^\top u|^2\to0$, so $\dot z\sim b r^2(-\ell'(z))$.
2. **Loss tail.** $\mu=\lim_{z\to\infty}-\ell'(z)/\ell(z)$, finite and positive (logistic and $e^{-z}$: 1). Then
   $\dot{\mathcal L}=\ell'(z)\dot z\sim-\mu^2br^2\mathcal L^2$.
3. **Loss equation.** ``sympy.dsolve`` solves $f'=-\kappa f^2$, $\kappa=\mu^2br^2$, and ``sympy.limit`` gives
   $t\,f(t)\to1/\kappa$.

So $\mathcal L(t)\sim C\,t^{-1}$ with $C=1/(\mu^2br^2)$: the paper's model (its claim 17, $t\mathcal L\to1/b$) is
$\mu=r=1$. The constant does not depend on the tail rate $\lambda$ (a temperature changes how fast the weights
polarize, not the loss). Where a step does not hold, :func:`loss_law` returns a :class:`NoLaw` naming it.

API: :func:`loss_law` ``(loss, link) -> Law | NoLaw``; :func:`prologue` (the loss tail, then :func:`tails`),
shared with :mod:`._values`.
"""
from __future__ import annotations

import sympy as sp
from theorems import get_link, get_loss

__all__ = ["LOSS_QUANTITY", "loss_law", "loss_tail", "prologue", "tails"]

from . import Law, NoLaw, b
from ._tails import link_rate, loss_tail

#: the quantity of the loss law
LOSS_QUANTITY = "loss L(t)"

_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)


def tails(K):
    r"""``(lambda, r, steps, None)`` when the link has the rate law's exponential tails ($h'/h=k'/k=\lambda>0$,
    $c=0$, $r=h/k>0$ constant); else ``(None, None, None, (step, reason))``."""
    if not K.normalized:
        return None, None, None, ("link", f"link {K.name!r} is elementwise (not normalized): no polarization")
    h, k, lam, why = link_rate(K)
    if lam is None:
        return None, None, None, ("tails", why)
    c = sp.nsimplify(K.c) if K.c is not None else sp.Integer(0)
    if c != 0:
        return None, None, None, ("tails", f"the normalizer's constant c = {sp.sstr(c)} is not 0 (a sink; not "
                                           "derived here)")
    r = sp.simplify(h / k)
    if r.has(_x) or not r.is_positive:
        return None, None, None, ("tails", f"h/k = {sp.sstr(r)} is not a positive constant")
    return lam, r, (f"h'/h = k'/k = lambda = {sp.sstr(lam)}; c = 0; h/k = r = {sp.sstr(r)}: the weights polarize "
                    f"(the rate law's gap equation), phi -> r e_top",), None


def prologue(loss, link, quantity):
    """The steps the loss and value laws share, in order: the loss tail (:func:`loss_tail`), then the link's tails
    (:func:`tails`). ``(L, ell, mu, lam, r, steps)``, or a :class:`NoLaw` for ``quantity`` naming the step that
    did not hold."""
    L, K = get_loss(loss), get_link(link)
    ell, mu, fail = loss_tail(L)
    if fail:
        return NoLaw(quantity, *fail)
    lam, r, steps, fail = tails(K)
    if fail:
        return NoLaw(quantity, *fail)
    return L, ell, mu, lam, r, steps


def loss_law(loss, link):
    r"""Derive $\mathcal L(t)\sim C\,t^{-1}$ for ``loss`` and ``link`` (names or definitions; see the module doc)."""
    q = LOSS_QUANTITY
    pro = prologue(loss, link, q)
    if isinstance(pro, NoLaw):
        return pro
    L, _ell, mu, lam, r, steps = pro
    t, kap = sp.symbols("t kappa", positive=True)
    f = sp.Function("f")
    sol = sp.dsolve(sp.Eq(f(t).diff(t), -kap * f(t) ** 2), f(t))
    sols = sol if isinstance(sol, list) else [sol]
    lead = None
    for s in sols:
        cand = sp.limit(t * s.rhs, t, sp.oo)
        if cand.is_finite and cand.is_positive:
            lead = sp.simplify(cand)
            break
    if lead is None:  # pragma: no cover - dsolve's form changed
        return NoLaw(q, "loss equation", "sympy.dsolve gave no solution with t f(t) -> a finite positive limit")
    kappa = mu**2 * b * r**2
    const = sp.simplify(lead.subs(kap, kappa))
    steps = steps + (f"-l'(z)/l(z) -> mu = {sp.sstr(mu)} as z -> oo ({L.name}); |phi|^2 -> r^2, |J^T u|^2 -> 0",
                     f"dz/dt = -l'(z) (b |phi|^2 + |J^T u|^2) ~ b r^2 (-l'(z)): dL/dt ~ -kappa L^2, kappa = mu^2 b r^2"
                     f" = {sp.sstr(kappa)}",
                     f"sympy.dsolve: {sp.sstr(sols[0].rhs)}; t f(t) -> {sp.sstr(lead)}",
                     f"loss L(t) ~ C t^-1, C = {sp.sstr(const)}")
    return Law(q, sp.Integer(1), const, steps, tail_rate=lam, clock="t")
