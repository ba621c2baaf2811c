r"""Asymptotic laws derived from a model's definitions (provenance D: derived here, not the paper's statement).

The polarization rate of the value-softmax flow on a margin loss $\ell(\langle w,\beta\rangle)$ with a normalized
link $\varphi_i=h(a_i)/(c+\sum_jk(a_j))$ is derived by leading-order matching, every step a SymPy computation on
the definitions:

1. **Tails.** $\lambda=h'/h$ and $k'/k$ must be the same positive constant (so $h=C_he^{\lambda x}$,
   $k=C_ke^{\lambda x}$: temperatures $T=1/\lambda$, shifts and scales), $c=0$, and $r=h/k$ is then a
   constant. The normalized weights $\hat\varphi=\varphi/\sum\varphi$ are a softmax at temperature $1/\lambda$.
2. **Loss tail.** $\mu=\lim_{z\to\infty}-\ell'(z)/\ell(z)$, finite and positive (logistic and $e^{-z}$: 1).
   The winner's value grows like $\mu^{-1}\log t$ and $-\ell'(m)\sim1/(\mu b r^2t)$ (with $b=|w|^2$).
3. **Gap equation.** With $\varepsilon=1-\max\hat\varphi=(n-1)e^{-y}$, $y=\lambda(a_{\rm top}-a_j)$, the gap obeys
   $dy/d\tau=\kappa\,\tau\,e^{-y}$ in $\tau=\log t$, $\kappa=\lambda^2n/(\mu^2br^2)$; ``sympy.dsolve`` solves it
   and ``sympy.limit`` gives $\varepsilon\tau^2\to2(n-1)/\kappa$.

So $1-\max\hat\varphi\sim C(\log t)^{-p}$ with $p=2$ and $C=2(n-1)b\,\mu^2r^2/(n\lambda^2)$: the paper's
model (C18) is $\lambda=\mu=r=1$, $C=2(n-1)b/n$; a softmax at temperature $T$ gives $2(n-1)bT^2/n$.

Where a step does not hold (another tail, a polynomial prefactor, $c\neq0$, a loss without an exponential
tail) no law is derived: :func:`rate_law` returns a :class:`NoLaw` naming the step and the reason, never a guess.

API: :func:`rate_law` ``(loss, link) -> Law | NoLaw`` (general: nothing here reads a model's name).
"""
from __future__ import annotations


import sympy as sp

__all__ = ["RATE_QUANTITY", "rate_law"]

from . import Law, NoLaw, b, n
from ._tails import link_rate, loss_tail, margin_model

#: the quantity every rate law here is about
RATE_QUANTITY = "1 - max normalized weight"

_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)


def rate_law(loss, link):
    r"""Derive $1-\max\hat\varphi\sim C(\log t)^{-p}$ for ``loss`` and ``link`` (names or definitions)."""
    q = RATE_QUANTITY
    L, K, fail = margin_model(loss, link, "no polarization rate")
    if fail:
        return NoLaw(q, *fail)
    h, k, lam, why = link_rate(K)
    if lam is None:
        return NoLaw(q, "tails", why)
    c = sp.nsimplify(K.c) if K.c is not None else sp.Integer(0)
    if c != 0:
        return NoLaw(q, "tails", f"the normalizer's constant c = {sp.sstr(c)} is not 0 (a sink; not derived here)")
    r = sp.simplify(h / k)
    if r.has(_x) or not r.is_positive:
        return NoLaw(q, "tails", f"h/k = {sp.sstr(r)} is not a positive constant")
    _ell, mu, fail = loss_tail(L)
    if fail:
        return NoLaw(q, *fail)
    # the gap equation dy/dtau = kappa tau exp(-y), solved by SymPy; eps = (n - 1) exp(-y)
    tau, kap = sp.symbols("tau kappa", positive=True)
    y = sp.Function("y")
    sols = sp.dsolve(sp.Eq(y(tau).diff(tau), kap * tau * sp.exp(-y(tau))), y(tau))
    sols = sols if isinstance(sols, list) else [sols]
    lead = None
    for s in sols:
        cand = sp.limit((n - 1) * sp.exp(-s.rhs) * tau**2, tau, sp.oo)
        if cand.is_finite and sp.simplify(cand / (n - 1)).is_positive:
            lead = sp.simplify(cand)
            break
    if lead is None:  # pragma: no cover - dsolve's form changed
        return NoLaw(q, "gap equation", "sympy.dsolve gave no solution with a finite positive limit")
    kappa = lam**2 * n / (mu**2 * b * r**2)
    const = sp.simplify(lead.subs(kap, kappa))
    steps = (f"h'/h = k'/k = lambda = {sp.sstr(lam)}; c = 0; h/k = r = {sp.sstr(r)}",
             f"-l'(z)/l(z) -> mu = {sp.sstr(mu)} as z -> oo ({L.name})",
             f"gap y = lambda (a_top - a_j): dy/dtau = kappa tau exp(-y), tau = log t, kappa = lambda^2 n/(mu^2 b r^2)"
             f" = {sp.sstr(sp.simplify(kappa))}",
             f"sympy.dsolve: {sp.sstr(sols[0].rhs)}; (n - 1) exp(-y) tau^2 -> {sp.sstr(lead)}",
             f"1 - max normalized weight ~ C (log t)^-2, C = {sp.sstr(const)}")
    return Law(q, sp.Integer(2), const, steps, tail_rate=lam)
