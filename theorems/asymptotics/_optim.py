r"""The polarization rate under an optimizer, derived from its flow's definition (provenance D, not the paper's).

:func:`optimizer_rate_law` ``(loss, link, optimizer) -> Law | NoLaw`` reads the optimizer's continuous form
(:class:`theorems.optimizers.Optimizer`), never its name, and composes it with the gradient-flow derivations of
:mod:`._rate` and :mod:`._loss`. The quantity is $q=1-\max_i\hat\varphi_i$; the cases, each a SymPy computation:

1. **A constant multiple of gradient flow** ($\dot\theta=-c\,g$, $c>0$ free of $g$, $\theta$, $G_2$, no state, the
   same $c$ on $V$ and $a$): gradient flow on the clock $ct$. The law is gradient flow's (:func:`._rate.rate_law`),
   $q\sim C(\log t)^{-2}$, the same $C$ ($\log(bct)=\log(bt)(1+O(1/\log t))$).
2. **The arc-length clock** ($\dot\theta=-g/\lVert\nabla F\rVert$ over all parameters, proven by
   :func:`theorems.optimizers.time_change`): the optimizer's time is the arc length $s$ of the gradient-flow path.
   Along gradient flow $\lVert\nabla F\rVert\sim\lVert\nabla_VF\rVert=-\ell'(z)\,|w|\,|\varphi|\sim\mu\,\mathcal
   L\,\sqrt b\,r$ with $\mathcal L\sim C_{\mathcal L}/t$ (:func:`._loss.loss_law`), so $ds/dt\sim k/t$,
   $s\sim k\log t$, and $q\sim C_{\rm GF}/(\log t)^2=C_{\rm GF}k^2/s^2$: $q\sim C\,s^{-2}$ with
   $C=2(n-1)/(n\lambda^2)$ (the loss's $\mu$, $b$ and $r$ cancel).
3. **A flow that depends on the sign of $g$ only** (no state; $f(cg)=f(g)$ for $c>0$ on both blocks, sign flow):
   every value column moves by the same vector ($\partial F/\partial V_{ki}=\ell'(z)w_k\varphi_i$ has the sign of
   $-w_k$ for every $i$), so the gaps $u_i-u_j$ are constant. Once $z$ has passed every loser's $u_j$ (the last
   switching event), $g_{\rm top}<0<g_j$ and the logits move at the constant speeds $f(-1)$, $f(+1)$: the gaps
   grow like $\kappa t/\lambda$, $\kappa=\lambda(f(-1)-f(+1))$, and $q=S/(1+S)$ with $S=\sum_{j}e^{\lambda(a_j-
   a_{\rm top})}$ exactly. So $q\sim C\,e^{-\kappa t}$ (clock ``"exp t"``, exponent $\kappa$). The constant
   $C=S(t_1)e^{\kappa t_1}$ at any time $t_1$ after the last switching event is fixed by the transient (the
   crossing times of $z$), not an expression in $n$ and $b$: the law says so (``constant`` NaN,
   ``constant_reason``), and a check takes it from the state at $t_1$.
4. **Optimizer states** (Adam, RMSProp): the *quasi-static* flow $f^*(g)$, each state at the zero of its own flow
   and $t\to\infty$ (the bias corrections $\to1$), at the hyperparameters' values. If
   $f^*(g)/(-g)\to\lambda^*\in(0,\infty)$ as $g\to0^\pm$ (Adam: $f^*=-g/(|g|+\varepsilon)$, $\lambda^*=1/\varepsilon$),
   the flow is eventually gradient flow on the clock $\lambda^*t$, and the law is gradient flow's (case 1). Its
   regime is stated: $\lVert\nabla_VF\rVert\sim1/(\mu r\sqrt b\,t)\ll1/\lambda^*$, i.e.
   $t\gg\lambda^*/(\mu r\sqrt b)$ ($10^8$ for Adam's default $\varepsilon$): the earlier, sign-like regime of Adam
   (where $|g|\gg\varepsilon$ and the second moment lags) is not derived here.

Anything else (blocks on different clocks, as Muon; a multiplier depending on $\lVert\nabla F\rVert$ other than the
arc length; a quasi-static multiplier $0$ or $\infty$, as Adam with $\varepsilon=0$) is a :class:`NoLaw` naming the
step and the reason.
"""
from __future__ import annotations

import sympy as sp
from theorems import get_link, get_loss, optimizers as O

__all__ = ["OPTIMIZER_RATE_QUANTITY", "StateLaw", "optimizer_rate_law"]

from . import Law, NoLaw, b
from ._loss import loss_law, loss_tail, tails
from ._rate import RATE_QUANTITY, rate_law

#: the quantity of the optimizer's rate law (the rate law's)
OPTIMIZER_RATE_QUANTITY = RATE_QUANTITY

_c = sp.Symbol("c", positive=True)
_tt = sp.Symbol("t", positive=True)


class StateLaw(Law):
    """A :class:`~theorems.asymptotics.Law` whose constant is fixed by the state at a time in the law's regime,
    not an expression in ``n`` and ``b`` (``constant`` NaN; ``to_json`` gives ``constant`` None and the reason)."""

    def to_json(self) -> dict:
        return {**super().to_json(), "constant": None,
                "no_constant": "the constant is fixed by the transient: C = S(t1) exp(kappa t1) from the state at "
                               "any t1 after the last switching event, not an expression in n and b"}


def _same(x, y) -> bool:
    return sp.simplify(x - y) == 0


def optimizer_rate_law(loss, link, optimizer):
    r"""Derive $1-\max\hat\varphi$'s law under ``optimizer`` for ``loss`` and ``link`` (names or definitions; the
    cases: the module docstring). Returns a :class:`~theorems.asymptotics.Law` (``clock`` ``"log t"``, ``"t"``
    or ``"exp t"``) or a :class:`~theorems.asymptotics.NoLaw`."""
    L, K, opt = get_loss(loss), get_link(link), O.get_optimizer(optimizer)
    q = OPTIMIZER_RATE_QUANTITY
    head = f"optimizer {opt.name}: "
    mult = {blk: opt.gf_multiplier(blk) for blk in O.BLOCKS}
    if all(v is not None for v in mult.values()):
        if not _same(mult["V"], mult["a"]) or opt.rules["V"].norm != opt.rules["a"].norm:
            return NoLaw(q, "clock", f"{head}the V block moves as gradient flow times {sp.sstr(mult['V'])}, the a "
                                     f"block times {sp.sstr(mult['a'])}: not a time change of gradient flow (no law "
                                     "derived; with Muon the logits converge, OPT.MUON)")
        lam = mult["V"]
        if not lam.free_symbols:
            return _gf_clock(L, K, lam, head + f"dtheta/dt = -{sp.sstr(lam)} g: gradient flow on the clock "
                                              f"{sp.sstr(lam)} t (no state)")
        if all(O.time_change(opt, blk)["arc_length"] for blk in O.BLOCKS) and opt.rules["V"].norm == "all":
            return _arc_length(L, K, head)
        norm = "over each block separately" if opt.rules["V"].norm == "block" else "over all parameters"
        return NoLaw(q, "clock", f"{head}the multiplier {sp.sstr(lam)} ({norm}) depends on |grad F| and is not the "
                                 "arc-length clock of the whole flow: the clock int lambda dt is not derived here")
    hv = dict(opt.hyper)
    if not any(opt.rules[blk].state for blk in O.BLOCKS):
        return _sign_like(L, K, opt, hv, head)
    return _quasi_static(L, K, opt, hv, head)


def _gf_clock(L, K, lam, first):
    law = rate_law(L, K)
    if isinstance(law, NoLaw):
        return law
    steps = (first, "log(b lam t) = log(b t) (1 + O(1/log t)): gradient flow's law, the same constant") + law.steps
    return Law(law.quantity, law.exponent, law.constant, steps, tail_rate=law.tail_rate, clock="log t")


def _arc_length(L, K, head):
    q = OPTIMIZER_RATE_QUANTITY
    gf, loss = rate_law(L, K), loss_law(L, K)
    for law in (gf, loss):
        if isinstance(law, NoLaw):
            return NoLaw(q, law.step, law.reason)
    _ell, mu, _fail = loss_tail(L)
    _lam, r, _steps, _fail = tails(K)
    grad = mu * loss.constant / _tt * sp.sqrt(b) * r  # |grad F| ~ |grad_V F| = -l'(z) |w| |phi| ~ mu L sqrt(b) r
    k = sp.simplify(grad * _tt)
    s = sp.integrate(grad, _tt)  # the arc length, up to a constant: k log t
    if not _same(sp.diff(s, _tt) - grad, 0) or not _same(sp.simplify(s / sp.log(_tt)), k):
        return NoLaw(q, "arc length", f"int |grad F| dt = {sp.sstr(s)} is not k log t")  # pragma: no cover
    const = sp.simplify(gf.constant * k**2)
    steps = (head + "dtheta/dt = -g/|grad F| over all parameters: gradient flow on the arc-length clock s "
                    "(theorems.optimizers.time_change, proven)",
             f"along gradient flow |grad F| ~ |grad_V F| = -l'(z) |w| |phi| ~ mu L sqrt(b) r, L ~ "
             f"{sp.sstr(loss.constant)}/t (the loss law): ds/dt ~ k/t, k = {sp.sstr(k)}",
             f"s = int |grad F| dt = {sp.sstr(s)} + O(1): log t ~ s/k",
             f"gradient flow's law C_GF (log t)^-2, C_GF = {sp.sstr(gf.constant)}: q ~ C_GF k^2 s^-2",
             f"1 - max normalized weight ~ C s^-2 (s: the optimizer's time), C = {sp.sstr(const)}")
    return Law(OPTIMIZER_RATE_QUANTITY, sp.Integer(2), const, steps, tail_rate=gf.tail_rate, clock="t")


def _sign_like(L, K, opt, hv, head):
    q = OPTIMIZER_RATE_QUANTITY
    speeds = {}
    for blk in O.BLOCKS:
        f = opt.rules[blk].flow[O.theta].subs(hv)
        extra = sorted(map(str, f.free_symbols - {O.g}))
        if extra:
            return NoLaw(q, "flow", f"{head}the {blk}-flow {sp.sstr(f)} depends on {extra}, not on g alone: no "
                                    "law derived")
        if not _same(f.subs(O.g, _c * O.g), f):
            return NoLaw(q, "flow", f"{head}the {blk}-flow {sp.sstr(f)} depends on the size of g, not only on its "
                                    "sign, and is not a multiple of gradient flow: no law derived")
        speeds[blk] = (f.subs(O.g, -1), f.subs(O.g, 1))
    lam, _r, _steps, fail = tails(K)
    if fail:
        return NoLaw(q, *fail)
    _ell, mu, fail = loss_tail(L)
    if fail:
        return NoLaw(q, *fail)
    up, down = speeds["a"]
    kappa = sp.simplify(lam * (up - down))
    if not kappa.is_positive:
        return NoLaw(q, "speeds", f"{head}the winner's logit moves at {sp.sstr(up)} and a loser's at "
                                  f"{sp.sstr(down)}: the gap does not grow (kappa = {sp.sstr(kappa)})")
    steps = (head + "the flow depends on the sign of g only (f(c g) = f(g), c > 0, proven on both blocks)",
             "dF/dV_ki = l'(z) w_k phi_i has the sign of -w_k for every i (l' < 0, phi > 0): every value column "
             "moves by the same vector, the gaps u_i - u_j are constant",
             f"after the last switching event g_top < 0 < g_j: da_top/dt = f(-1) = {sp.sstr(up)}, da_j/dt = f(+1) = "
             f"{sp.sstr(down)}",
             f"h'/h = lambda = {sp.sstr(lam)}: q = S/(1 + S), S = sum_j exp(lambda (a_j - a_top)) = S(t1) "
             f"exp(-kappa (t - t1)), kappa = lambda (f(-1) - f(+1)) = {sp.sstr(kappa)}",
             f"1 - max normalized weight ~ C exp(-{sp.sstr(kappa)} t), C = S(t1) exp(kappa t1) from the state at "
             "any t1 after the last switching event")
    return StateLaw(q, kappa, sp.nan, steps, tail_rate=lam, clock="exp t")


def _quasi_static(L, K, opt, hv, head):
    q = OPTIMIZER_RATE_QUANTITY
    lams = {}
    for blk in O.BLOCKS:
        f, why = O.quasi_static_flow(opt, blk, hv)
        if f is None:
            return NoLaw(q, "quasi-static", head + why)
        extra = f.free_symbols - {O.g, O.lr} - set(hv)
        if extra:
            return NoLaw(q, "quasi-static", f"{head}the quasi-static {blk}-flow {sp.sstr(f)} depends on "
                                            f"{sorted(map(str, extra))}: no law derived")
        ends = [sp.limit(f / (-O.g), O.g, 0, d) for d in ("+", "-")]
        if not (ends[0].is_finite and ends[0].is_positive and _same(ends[0], ends[1])):
            return NoLaw(q, "quasi-static", f"{head}the quasi-static {blk}-flow {sp.sstr(f)} over -g tends to "
                                            f"{sp.sstr(ends[0])} and {sp.sstr(ends[1])} as g -> 0+ and 0-: not a "
                                            "positive finite multiple of gradient flow (no law derived)")
        lams[blk] = (f, ends[0])
    if not _same(lams["V"][1], lams["a"][1]):
        return NoLaw(q, "quasi-static", f"{head}the blocks' quasi-static multipliers differ")
    f, lam_star = lams["V"]
    law = _gf_clock(L, K, lam_star, head + f"quasi-static flow (each state at the zero of its flow, t -> oo, "
                                           f"the decay rates' signs at the parameters' defaults): dtheta/dt = "
                                           f"{sp.sstr(f)} ~ "
                                           f"-{sp.sstr(lam_star)} g as g -> 0")
    if isinstance(law, NoLaw):
        return law
    _ell, mu, _f = loss_tail(L)
    _lam, r, _s, _f = tails(K)
    onset = sp.simplify(lam_star / (mu * r * sp.sqrt(b)))
    regime = (f"regime: |grad_V F| ~ 1/(mu r sqrt(b) t) << {sp.sstr(1 / lam_star)}, i.e. t >> {sp.sstr(onset)} "
              f"(= {float(onset.subs(hv).subs(b, 1)):.3g} at b = 1 and the default parameters); the earlier regime "
              f"(|g| >> {sp.sstr(1 / lam_star)}) is not derived")
    return Law(law.quantity, law.exponent, law.constant, (law.steps[0], regime) + law.steps[1:],
               tail_rate=law.tail_rate, clock="log t")

