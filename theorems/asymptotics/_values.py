r"""The value-norm growth $|v_{\rm top}(t)|\sim C\log t$, derived from the definitions (provenance D).

Every step is a SymPy computation on the definitions of a margin loss $\ell$ and a normalized link:

1. **Polarization, loss tail, loss law.** As for the loss law (:mod:`._loss`): $\varphi\to r\,e_{\rm top}$,
   $\mu=\lim-\ell'/\ell$, and $\ell(z(t))\sim1/(\mu^2br^2t)$.
2. **Margin.** $\nu=-\lim_{z\to\infty}\log\ell(z)/z$ (``sympy.limit``; it equals $\mu$ when both exist), so
   $\log\ell(z)=-\nu z+o(z)$ and $z(t)\sim\log t/\nu$.
3. **Winner's projection.** $z=\sum_iu_i\varphi_i$ with the losers' $u_j$ bounded ($\dot u_j=-\ell'b\varphi_j$,
   integrable) and $\varphi_{\rm top}\to r$: $u_{\rm top}\sim z/r$.
4. **Norm.** $\dot V=-\ell'(z)\,w\varphi^\top$ moves each value column along $w$ only, so
   $v_{\rm top}(t)=v_{\rm top}(0)+w\,(u_{\rm top}(t)-u_{\rm top}(0))/b$ and $|v_{\rm top}|\sim u_{\rm top}/\sqrt b$.

So $|v_{\rm top}|\sim C(\log t)^{1}$ (exponent $p=-1$ in the form $C(\log t)^{-p}$) with $C=1/(\nu r\sqrt b)$: the
paper's model (its claim 19, $|v_{\rm top}|\sim\log(bt)/|\beta^*|$) is $\nu=r=1$. Where a step does not hold,
:func:`value_law` returns a :class:`NoLaw` naming it.

API: :func:`value_law` ``(loss, link) -> Law | NoLaw``.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["VALUE_QUANTITY", "value_law"]

from . import Law, NoLaw, b
from ._loss import prologue

#: the quantity of the value-norm law
VALUE_QUANTITY = "|v_top| (norm of the winner's value vector)"

_z = sp.Symbol("z", real=True)


def value_law(loss, link):
    r"""Derive $|v_{\rm top}|\sim C\log t$ for ``loss`` and ``link`` (names or definitions; see the module doc)."""
    q = VALUE_QUANTITY
    pro = prologue(loss, link, q)
    if isinstance(pro, NoLaw):
        return pro
    L, ell, mu, lam, r, steps = pro
    try:
        nu = sp.limit(-sp.expand_log(sp.log(ell), force=True) / _z, _z, sp.oo)
    except (NotImplementedError, ValueError):  # pragma: no cover - SymPy could not decide
        return NoLaw(q, "margin", f"lim -log l(z)/z, z -> oo: SymPy could not decide for {L.name!r}")
    if not (nu.is_finite and nu.is_positive):
        return NoLaw(q, "margin", f"-log l(z)/z -> {sp.sstr(nu)} as z -> oo for {L.name!r} (not a positive finite "
                                  "rate)")
    if sp.simplify(nu - mu) != 0:  # pragma: no cover - L'Hopital: both limits exist, so they agree
        return NoLaw(q, "margin", f"-log l(z)/z -> {sp.sstr(nu)} differs from -l'/l -> {sp.sstr(mu)}")
    const = sp.simplify(1 / (nu * r * sp.sqrt(b)))
    steps = steps + (f"-l'(z)/l(z) -> mu = {sp.sstr(mu)}; -log l(z)/z -> nu = {sp.sstr(nu)} ({L.name}); the loss law "
                     f"l(z(t)) ~ 1/(mu^2 b r^2 t) gives z(t) ~ log t/nu",
                     "z = sum_i u_i phi_i, the losers' u_j converge, phi_top -> r: u_top ~ z/r",
                     "dV/dt = -l'(z) w phi^T: v_top = v_top(0) + w (u_top - u_top(0))/b, |v_top| ~ u_top/sqrt(b)",
                     f"|v_top| ~ C (log t)^1, C = {sp.sstr(const)}")
    return Law(q, sp.Integer(-1), const, steps, tail_rate=lam)
