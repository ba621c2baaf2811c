r"""The frozen-value (bandit) rate $(1-\max\hat\varphi)\,t\to C$, derived from the definitions (provenance D).

With the values frozen ($V$ fixed, so $u=V^\top w$ is fixed) only the logits move:
$\dot a=-\ell'(z)\,\partial z/\partial a$, $z=\langle u,\varphi\rangle$. Every step is a SymPy computation:

1. **Tails.** As for the rate law (:mod:`._loss`, ``tails``): $h=C_he^{\lambda x}$, $k=C_ke^{\lambda x}$, $c=0$,
   so $\varphi=r\,s$ with $s$ a softmax of $\alpha=\lambda a$ and $r=h/k$. Then
   $\partial z/\partial a=r\lambda(\operatorname{diag}s-ss^\top)u$ and
   $\dot\alpha=\kappa\,(\operatorname{diag}s-ss^\top)u$ with $\kappa=r\lambda^2(-\ell'(z))$.
2. **Clock.** $z\to r\,u_1$ ($u_1$ the largest projection, the winner), so $\kappa\to r\lambda^2g$,
   $g=-\ell'(r u_1)$ (SymPy; it must be positive): in $\tau=\kappa t$ the flow is the softmax policy gradient
   with rewards $u$.
3. **Losers.** With $\varepsilon_j=s_j$, $\Delta_j=u_1-u_j>0$, $S=\sum_j\varepsilon_j\Delta_j$ and $E=\sum_j
   \varepsilon_j$, the gap $y_j=\alpha_1-\alpha_j$ obeys exactly $dy_j/d\tau=(1-E)S-\varepsilon_j(S-\Delta_j)$
   $=S+\varepsilon_j\Delta_j-(E+\varepsilon_j)S$ (SymPy checks the identity): to first order the gaps' differences
   move by $\varepsilon_j\Delta_j-\varepsilon_k\Delta_k$, which is restoring, so the flow goes to the balanced
   manifold $\varepsilon_j\Delta_j=K$ for every loser.
4. **Balanced flow.** There $S=(n-1)K$, $d\log\varepsilon_j/d\tau=-dy_j/d\tau$, so $dK/d\tau=-nK^2$;
   ``sympy.dsolve`` and ``sympy.limit``: $\tau K\to1/n$, and $1-\max\hat\varphi=E=KG$ with
   $G=\sum_{j\neq1}1/\Delta_j$.

So $1-\max\hat\varphi\sim C\,t^{-1}$ with $C=G/(n\,r\lambda^2g)$: for the softmax and the logistic loss
$g=1/(1+e^{u_1})$ and $C=(1+e^{u_1})\,G/n$ (Mei et al.'s constant $G/n$ in the bandit's clock, arXiv 2005.06392,
times the logistic clock's $1+e^{u_1}$); at temperature $T$ it is $T^2$ times that. The constant is an
expression in ``n`` and the instance's symbols ``u1`` ($u_1$) and ``G`` ($\sum_{j\ne1}1/(u_1-u_j)$), listed in the
entry's ``symbols``. Where a step does not hold, :func:`bandit_law` returns a :class:`NoLaw` naming it.

API: :func:`bandit_law` ``(loss, link) -> BanditLaw | NoLaw``; :data:`U1`, :data:`G` (the instance's symbols).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from theorems import get_link, get_loss, sigmoid, softplus

__all__ = ["BANDIT_QUANTITY", "G", "U1", "BanditLaw", "bandit_law"]

from . import Law, NoLaw, n
from ._loss import tails

#: the quantity of the bandit law
BANDIT_QUANTITY = "1 - max normalized weight, values frozen (the bandit)"
#: the instance's symbols: the winner's projection u_1 = <v_top, w>, and G = sum over losers of 1/(u_1 - u_j)
U1 = sp.Symbol("u1", real=True)
G = sp.Symbol("G", positive=True)

_z = sp.Symbol("z", real=True)


@dataclass(frozen=True)
class BanditLaw(Law):
    """A :class:`Law` whose constant also depends on the instance (``symbols``: name -> meaning)."""

    symbols: tuple = ()

    def constant_for(self, n_value: int, u) -> float:
        """The constant at the projections ``u`` (a sequence with one largest entry)."""
        u = [sp.nsimplify(x) if isinstance(x, (int, sp.Rational)) else x for x in u]
        top = max(range(len(u)), key=lambda i: u[i])
        g = sum(1 / (u[top] - u[j]) for j in range(len(u)) if j != top)
        return float(self.constant.subs({n: n_value, U1: u[top], G: g}))

    def to_json(self) -> dict:
        return {**super().to_json(), "symbols": dict(self.symbols)}


def bandit_law(loss, link):
    r"""Derive $(1-\max\hat\varphi)\,t\to C$ with the values frozen, for ``loss`` and ``link`` (the module doc)."""
    L, K = get_loss(loss), get_link(link)
    q = BANDIT_QUANTITY
    if L.form != "margin":
        return NoLaw(q, "loss", f"loss {L.name!r} is of form {L.form!r}, not a margin loss l(<w, beta>)")
    lam, r, steps, fail = tails(K)
    if fail:
        return NoLaw(q, *fail)
    ell = L.ell(_z).replace(lambda e: isinstance(e, (softplus, sigmoid)), lambda e: e.rewrite(sp.exp))
    g = sp.simplify(-sp.diff(ell, _z).subs(_z, r * U1))
    if not g.is_positive:
        return NoLaw(q, "clock", f"-l'(r u1) = {sp.sstr(g)} is not provably positive for real u1 ({L.name!r}): "
                                 "the logits need not move towards the winner")
    # step 3: the exact gap field, and its first order (an identity in S, E, eps_j, Delta_j)
    S, E, eps, D, Kb, tau = sp.symbols("S E epsilon_j Delta_j K tau", positive=True)
    field = (1 - E) * S - eps * (S - D)
    rest = sp.expand(field - (S + eps * D))
    if sp.expand(rest + (E + eps) * S) != 0:  # pragma: no cover - an algebra slip would show here
        return NoLaw(q, "losers", f"dy_j/dtau - (S + eps_j Delta_j) = {sp.sstr(rest)} is not second order")
    # step 4: on the balanced manifold eps_j Delta_j = K: S = (n - 1) K; d log eps_j/dtau = -dy_j/dtau
    lead = (S + eps * D).subs({S: (n - 1) * Kb, eps * D: Kb})
    Kf = sp.Function("K")
    rhs = sp.expand(-Kb * lead)  # dK/dtau = K d log eps_j/dtau (Delta_j is fixed)
    sols = sp.dsolve(sp.Eq(Kf(tau).diff(tau), rhs.subs(Kb, Kf(tau))), Kf(tau))
    sols = sols if isinstance(sols, list) else [sols]
    limit = None
    for s in sols:
        cand = sp.simplify(sp.limit(tau * s.rhs, tau, sp.oo))
        if cand.is_finite and cand.is_positive:
            limit = cand
            break
    if limit is None:  # pragma: no cover - dsolve's form changed
        return NoLaw(q, "balanced flow", "sympy.dsolve gave no solution with tau K(tau) -> a finite positive limit")
    kappa = r * lam**2 * g
    const = sp.simplify(limit * G / kappa)
    steps = steps + (
        f"values frozen: d(lambda a)/dt = kappa (diag s - s s^T) u, kappa = r lambda^2 (-l'(z)); z -> r u1, "
        f"-l'(r u1) = {sp.sstr(g)} ({L.name}): kappa -> {sp.sstr(sp.simplify(kappa))}, tau = kappa t",
        f"losers: dy_j/dtau = (1 - E) S - eps_j (S - Delta_j) = S + eps_j Delta_j + ({sp.sstr(rest)}); the "
        "differences move by eps_j Delta_j - eps_k Delta_k: balanced manifold eps_j Delta_j = K",
        f"dK/dtau = {sp.sstr(rhs)}; sympy.dsolve: {sp.sstr(sols[0].rhs)}; tau K -> {sp.sstr(limit)}",
        f"1 - max normalized weight = sum_j eps_j = K G, G = sum_j 1/Delta_j: ~ C t^-1, C = {sp.sstr(const)}")
    return BanditLaw(q, sp.Integer(1), const, steps, tail_rate=lam, clock="t",
                     symbols=(("u1", "the winner's projection u_top = <v_top, w> (largest)"),
                              ("G", "sum over the losers j of 1/(u1 - u_j)")))
