r"""The tails every law here starts from, read off the definitions once (SymPy).

* :func:`margin_model`: the loss is a margin loss and the link normalized (where every law here applies);
* :func:`exp_rate`: $\lambda=f'/f$ when $f=C e^{\lambda x}$ ($C,\lambda>0$ constants);
* :func:`link_rate`: the link's $h$ and $k$ have the same exponential tail, $h'/h=k'/k=\lambda$ (the rate law's,
  the loss and value laws' and the sink escape law's first step);
* :func:`loss_tail`: $\mu=\lim_{z\to\infty}-\ell'(z)/\ell(z)$, finite and positive.

Each returns the reason a step does not hold instead of a value, never a guess.
"""
from __future__ import annotations

import sympy as sp
from theorems import get_link, get_loss, sigmoid, softplus

__all__ = ["exp_rate", "link_rate", "loss_tail", "margin_model"]

_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)


def exp_rate(expr, what):
    """``(lambda, None)`` when ``expr`` is ``C exp(lambda x)`` with constants C > 0, lambda > 0; else
    ``(None, reason)``."""
    expr = sp.sympify(expr)
    if expr.is_constant() and expr.free_symbols == set():
        return None, f"{what} = {sp.sstr(expr)} is constant (no exponential tail)"
    lam = sp.simplify(sp.diff(expr, _x) / expr)
    if lam.has(_x):
        return None, (f"{what}'/{what} = {sp.sstr(lam)} is not constant: {what} is not C exp(lambda x) (a polynomial "
                      "prefactor or another tail; no law is derived for it here)")
    if not lam.is_positive:
        return None, f"{what}'/{what} = {sp.sstr(lam)} is not provably positive"
    return lam, None


def link_rate(K):
    """``(h, k, lambda, None)`` when the link ``K``'s h(x) and k(x) (k = h where the link has none) have the same
    exponential tail, h'/h = k'/k = lambda > 0 constant; else ``(h, k, None, reason)``."""
    h = K.h(_x)
    k = K.k(_x) if callable(getattr(K, "k", None)) else h
    lam, why = exp_rate(h, "h")
    if lam is None:
        return h, k, None, why
    lam_k, why = exp_rate(k, "k")
    if lam_k is None:
        return h, k, None, why
    if sp.simplify(lam - lam_k) != 0:
        return h, k, None, f"h'/h = {sp.sstr(lam)} and k'/k = {sp.sstr(lam_k)} differ"
    return h, k, lam, None


def loss_tail(L):
    """``(ell, mu, None)``: the loss as a SymPy expression in z (softplus/sigmoid rewritten to exp) and
    $\\mu=\\lim-\\ell'/\\ell$ when finite and positive; else ``(ell, None, (step, reason))``."""
    if L.form != "margin":
        return None, None, ("loss", f"loss {L.name!r} is of form {L.form!r}, not a margin loss l(<w, beta>)")
    ell = L.ell(_z).replace(lambda e: isinstance(e, (softplus, sigmoid)), lambda e: e.rewrite(sp.exp))
    try:
        mu = sp.limit(sp.simplify(-sp.diff(ell, _z) / ell), _z, sp.oo)
    except (NotImplementedError, ValueError):  # pragma: no cover - SymPy could not decide
        return ell, None, ("loss tail", f"lim -l'(z)/l(z), z -> oo: SymPy could not decide for {L.name!r}")
    if not (mu.is_finite and mu.is_positive):
        return ell, None, ("loss tail", f"-l'(z)/l(z) -> {sp.sstr(mu)} as z -> oo for {L.name!r} (not a positive "
                                        "finite rate: no exponential tail)")
    return ell, mu, None


def margin_model(loss, link, no_link):
    """``(L, K, None)``: the definitions of ``loss`` and ``link`` (names or definitions) when the link is normalized
    and the loss a margin loss l(<w, beta>); else ``(L, K, (step, reason))``. ``no_link``: what an elementwise link
    has not (for the reason)."""
    L, K = get_loss(loss), get_link(link)
    if not K.normalized:
        return L, K, ("link", f"link {K.name!r} is elementwise (not normalized): {no_link}")
    if L.form != "margin":
        return L, K, ("loss", f"loss {L.name!r} is of form {L.form!r}, not a margin loss l(<w, beta>)")
    return L, K, None
