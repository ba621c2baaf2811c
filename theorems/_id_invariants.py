r"""Conserved quantities and invariant sets of the flow (paper-notes#flow; all [D]).

* ``sum_a.conserved``: $\frac{d}{dt}\sum_ia_i=0$ for every loss (softmax), since $\mathbf 1^\top J=0$.
* ``balance.per_token``: $\frac{d}{dt}\bigl(\tfrac12\|v_i\|^2-a_i\bigr)=s_i\langle\beta,-\nabla\mathcal L\rangle$.
* ``logistic.orthogonal_fixed``: $(I-ww^\top/b)\dot V=0$, $b=\|w\|^2$: the part of $V$ orthogonal
  to the target direction never moves (any link).
* ``square.rank_one``: for $\tfrac12\|\beta-y\|^2$ at $V=yc^\top$: $(I-yy^\top/\|y\|^2)\dot V=0$, so the
  set of rank-one $V$ with column space $\operatorname{span}(y)$ (including $V=0$) is invariant.
* ``two_token.first_integral``: for $n=2$, $\mathcal E=\tfrac12(u_1-u_2)^2-b\cosh(a_1-a_2)$,
  $u=V^\top w$, is constant (logistic; square loss on the rank-one set).
"""
from __future__ import annotations

import sympy as sp

from ._id_base import (ANY, Case, Identity, at, d_schedule, decide, link_schedule, dot, grad, model, on_case,
                       one_class_kl, unit_target)
from .id_generic_proofs import generic_fields
from ._models import LOSSES, get_loss
from .proof import ProofResult


# ---- sum of logits ------------------------------------------------------------------------------
def _sum_check(case: Case) -> ProofResult:
    m = model(case.loss, "softmax", case.n, case.d)
    return decide(sp.Add(*m.flow()[1]))


def _sum_neg(case: Case) -> ProofResult:
    # the flow with J = diag(s) (missing s s^T) does not conserve sum(a)
    m = model(case.loss, "softmax", case.n, case.d)
    da_wrong = -sp.diag(*m.phi) * m.V.T * grad(case.loss, "softmax", case.n, case.d)
    return decide(sp.Add(*da_wrong), negative=True)


# ---- per-token balance --------------------------------------------------------------------------
def _balance(case: Case, sign: int) -> ProofResult:
    m = model(case.loss, "softmax", case.n, case.d)
    g = grad(case.loss, "softmax", case.n, case.d)
    power = dot(m.beta, -g)
    out = []
    for i in range(case.n):
        q = sp.Add(*[m.V[k, i] ** 2 for k in range(case.d)]) / 2 - m.a[i]
        out.append(m.time_derivative(q) - sign * m.phi[i] * power)
    return decide(out, negative=sign < 0)


# ---- logistic: orthogonal part fixed ---------------------------------------------------------
def _projector(w: sp.Matrix, normalized: bool = True) -> sp.Matrix:
    b = dot(w, w)
    return sp.eye(len(w)) - (w * w.T / b if normalized else w * w.T)


def _orth(case: Case, normalized: bool, point=None) -> ProofResult:
    m = model("logistic", case.link, case.n, case.d)
    return decide(at(_projector(m.target, normalized) * m.flow()[0], point and point(m)), negative=not normalized)


# ---- square: rank-one invariance ---------------------------------------------------------------
def _rank_one_sub(m) -> dict:
    c = [sp.Symbol(f"c_{j + 1}", real=True) for j in range(m.n)]
    y = m.target
    return {m.V[k, j]: y[k] * c[j] for k in range(m.d) for j in range(m.n)}


def _rank_check(case: Case) -> ProofResult:
    m = model("square", case.link, case.n, case.d)
    dV = m.flow()[0].xreplace(_rank_one_sub(m))
    return decide(_projector(m.target) * dV)


def _rank_neg_generic_V(case: Case) -> ProofResult:
    m = model("square", case.link, case.n, case.d)
    return decide(_projector(m.target) * m.flow()[0], negative=True)


def _rank_neg_design(case: Case, d: int = 2) -> ProofResult:
    # always at d = 2 (a square symbolic design is the costliest model to derive; d = 2 suffices
    # to show that X != I breaks the invariance); the witness passes d = 1
    m = model("square", case.link, case.n, d, "symbolic")
    dV = m.flow()[0].xreplace(_rank_one_sub(m))
    return decide(_projector(m.target) * dV, negative=True)


# ---- two tokens: first integral --------------------------------------------------------------
def _energy(m, sign: int):
    w = m.target
    u = m.V.T * w
    b = dot(w, w)
    return (u[0] - u[1]) ** 2 / 2 - sign * b * sp.cosh(m.a[0] - m.a[1]).rewrite(sp.exp)


def _two(case: Case, sign: int, point=None) -> ProofResult:
    m = model(case.loss, "softmax", 2, case.d)
    rate = m.time_derivative(_energy(m, sign))
    if get_loss(case.loss).same_definition(LOSSES["square"]):
        rate = rate.xreplace(_rank_one_sub(m))
    return decide(at(rate, point and point(m)), negative=sign < 0)


def _equal_logits(m) -> dict:
    r"""$a_2=a_1$: $\sinh(a_1-a_2)=0$, so both $\pm b\cosh$ terms have rate 0 there."""
    return {m.a[1]: m.a[0]}


IDENTITIES = (
    Identity(
        id="sum_a.conserved",
        title="The sum of the logits is conserved",
        statement=r"\frac{d}{dt}\sum_{i=1}^n a_i=\mathbf 1^\top\dot a=-\mathbf 1^\top J(s)V^\top\nabla\mathcal L=0",
        provenance="D",
        note="Standard; the paper's wording is [M]. Holds for every loss with softmax.",
        check_case=_sum_check,
        negative=(("flow with J = diag(s) (missing s s^T)", _sum_neg),),
        witnesses=(("the kl loss with one class (d = 1): its gradient is 0, so the wrong flow is 0 too",
                    on_case(_sum_neg, one_class_kl)),),
        losses=ANY, d_values=d_schedule,
        **generic_fields("sum_a.conserved"),
    ),
    Identity(
        id="balance.per_token",
        title="Per-token balance between value norm and logit",
        statement=r"\frac{d}{dt}\Bigl(\tfrac12\|v_i\|^2-a_i\Bigr)=s_i\,\langle\beta,-\nabla\mathcal L(\beta)\rangle"
                  r"\quad(i=1,\dots,n)",
        provenance="D",
        note=r"Hence $\frac{d}{dt}\tfrac12\|V\|_F^2=\langle\beta,r\rangle$, and "
             r"$\frac{1}{s_i}\frac{d}{dt}\bigl(\tfrac12\|v_i\|^2-a_i\bigr)$ is the same for all $i$.",
        check_case=lambda c: _balance(c, +1),
        negative=(("flipped sign", lambda c: _balance(c, -1)),),
        witnesses=(("the kl loss with one class (d = 1): the flow and the power <beta, -g> are 0, so -0 = 0",
                    on_case(lambda c: _balance(c, -1), one_class_kl)),),
        losses=ANY, d_values=d_schedule,
        **generic_fields("balance.per_token"),
    ),
    Identity(
        id="logistic.orthogonal_fixed",
        title="Logistic loss: the part of $V$ orthogonal to the target never moves",
        statement=r"\Bigl(I-\frac{ww^\top}{\|w\|^2}\Bigr)\dot V=0\quad\Longrightarrow\quad "
                  r"V(t)=V(0)+w\,c(t)^\top,\ \dot c=-\ell'(z)\,\varphi(a)",
        provenance="D",
        note=r"Holds for every link, since $\dot V=-\ell'(z)\,w\varphi^\top$. $w$ is the paper's $\beta^*$.",
        check_case=lambda c: _orth(c, True),
        negative=(("P = I - w w^T without /b", lambda c: _orth(c, False)),),
        witnesses=(("the unit target w = e_1 (b = 1: dividing by b changes nothing)",
                    on_case(lambda c: _orth(c, False, unit_target), lambda c: c)),),
        losses=("logistic",), links=ANY, d_values=link_schedule,
        **generic_fields("logistic.orthogonal_fixed"),
    ),
    Identity(
        id="square.rank_one",
        title=r"Square loss ($X=I$): rank-one $V=yc^\top$ stays rank-one with column space $\operatorname{span}(y)$",
        statement=r"V=yc^\top\ \Longrightarrow\ \Bigl(I-\frac{yy^\top}{\|y\|^2}\Bigr)\dot V=0,\quad "
                  r"\mathcal L=\tfrac12\|V\varphi(a)-y\|^2",
        provenance="D",
        note="Matches [A]: the regression theory needs $V(0)$ rank-one or zero ($c=0$ included). "
             "Checked for $d=2,3$ (at $d=1$ every $V$ is rank-one). Negative controls: a generic $V$, "
             r"and a symbolic design $X\ne I$.",
        check_case=_rank_check,
        negative=(("generic V (not rank-one)", _rank_neg_generic_V),
                  ("symbolic 2 x 2 design X != I", _rank_neg_design)),
        witnesses=(("d = 1 (I - y y^T/||y||^2 = 0: every V is rank-one in span(y))",
                    on_case(_rank_neg_generic_V, lambda c: c._replace(d=1))),
                   ("a symbolic 1 x 1 design (d = 1: the projector is 0 whatever X)",
                    on_case(lambda c: _rank_neg_design(c, d=1), lambda c: c._replace(d=1)))),
        losses=("square",), d_values=lambda loss, n, link="softmax": (2, 3),
        **generic_fields("square.rank_one"),
    ),
    Identity(
        id="two_token.first_integral",
        title="Two tokens: an exact first integral",
        statement=r"n=2:\quad \frac{d}{dt}\Bigl(\tfrac12(u_1-u_2)^2-b\cosh(a_1-a_2)\Bigr)=0,"
                  r"\quad u=V^\top w,\ b=\|w\|^2",
        provenance="D",
        note=r"Logistic loss ($w=\beta^*$); square loss with $X=I$ on the invariant rank-one set $V=yc^\top$ "
             r"($w=y$). No analogous quadratic-in-$u$ integral for $n\ge3$ (not checked here).",
        check_case=lambda c: _two(c, +1),
        negative=(("+b cosh instead of -b cosh", lambda c: _two(c, -1)),),
        witnesses=(("equal logits a_1 = a_2 (sinh(a_1 - a_2) = 0: the cosh term has rate 0 with either sign)",
                    on_case(lambda c: _two(c, -1, _equal_logits), lambda c: c)),),
        losses=("logistic", "square"), n_values=(2,), d_values=d_schedule,
        **generic_fields("two_token.first_integral"),
    ),
)
