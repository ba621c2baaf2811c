r"""Identities of the ingredients: named functions, links (Jacobians, shift invariance), loss gradients.

* ``functions.derivatives`` [D]: the ``fdiff`` rules of ``softplus`` and ``sigmoid``.
* ``shift_invariance.softmax`` [D]: $\operatorname{softmax}(a+c\mathbf 1)=\operatorname{softmax}(a)$.
* ``jacobian.softmax`` [A/D]: $\partial s/\partial a=J(s)=\operatorname{diag}(s)-ss^\top$ (the paper's $C(s)$).
* ``jacobian.structured`` [D]: every link's component-wise Jacobian equals
  $(\operatorname{diag}(h')-\varphi h'^\top)/Z$ (normalized) or $\operatorname{diag}(h')$ (elementwise).
* ``jacobian.properties`` [D] (claim 2, candidate "Property D.3" [A]): $J=J^\top$, $J\mathbf 1=0$,
  $\operatorname{tr}J=1-\|s\|^2$.
* ``loss.gradient`` [D]: the closed gradient of each loss equals its component-wise derivative.
"""
from __future__ import annotations

import sympy as sp

from ._id_base import (ANY, WITNESS_CONST_Z, WITNESS_EXP, WITNESS_NEG_SOFTMAX, WITNESS_SOFTMAX2, Case, Identity,
                       d_schedule, decide, dot, model, on_case, one_class_kl)
from .id_generic_proofs import fn_check as _fn_check, fn_neg as _fn_neg, generic_fields
from ._models import get_link
from ._models import get_loss
from .proof import ProofResult

# ---- shift invariance --------------------------------------------------------------------
def _shift(link_name: str, n: int):
    c = sp.Symbol("c", real=True)
    a = model("logistic", "softmax", n, 1).a
    link = get_link(link_name)
    return link.phi(a + c * sp.ones(n, 1)) - link.phi(a)


def _shift_check(case: Case) -> ProofResult:
    return decide(_shift(case.link, case.n))


def _shift_neg(case: Case, link="sum-norm") -> ProofResult:
    # the same statement for the (not shift-invariant) sum normalization a_i / sum_j a_j
    return decide(_shift(link, case.n), negative=True)


# ---- softmax Jacobian ------------------------------------------------------------------
def _softmax_J(s: sp.Matrix, *, with_outer: bool = True) -> sp.Matrix:
    J = sp.diag(*s)
    return J - s * s.T if with_outer else J


def _jsoft_check(case: Case) -> ProofResult:
    m = model(case.loss, "softmax", case.n, 1)
    return decide(m.jacobian - _softmax_J(m.phi))


def _jsoft_neg(case: Case, link="softmax") -> ProofResult:
    m = model(case.loss, link, case.n, 1)
    return decide(m.jacobian - _softmax_J(m.phi, with_outer=False), negative=True)


# ---- structured Jacobian of every link -----------------------------------------------------
def _jstruct_check(case: Case) -> ProofResult:
    m = model(case.loss, case.link, case.n, 1)
    return decide(m.jacobian - m.link_def.jacobian_structured(m.a))


def _jstruct_neg(case: Case) -> ProofResult:
    # toggle the normalization term phi h'^T / Z: drop it (normalized links) or add it (elementwise)
    m = model(case.loss, case.link, case.n, 1)
    link, a = m.link_def, m.a
    dh = sp.Matrix([link.dh(ai) for ai in a])
    if link.normalized:
        wrong = sp.diag(*dh) / link.normalizer(a)
    else:
        wrong = sp.diag(*dh) - m.phi * dh.T
    return decide(m.jacobian - wrong, negative=True)


# ---- Jacobian properties ------------------------------------------------------------------
def _jprop(case: Case, sign: int, link="softmax") -> ProofResult:
    m = model(case.loss, link, case.n, 1)
    J, s, n = m.jacobian, m.phi, case.n
    return decide([J - J.T, J * sp.ones(n, 1), J.trace() - sign * (1 - dot(s, s))], negative=sign < 0)


def _jprop_check(case: Case) -> ProofResult:
    return _jprop(case, +1)


def _jprop_neg(case: Case) -> ProofResult:
    return _jprop(case, -1)  # tr J = ||s||^2 - 1 (flipped sign)


# ---- loss gradients ---------------------------------------------------------------------
def _grad_pairs(case: Case):
    loss = get_loss(case.loss)
    m = model(case.loss, "softmax", 2, case.d)
    b = sp.Matrix([sp.Symbol(f"b_{k + 1}", real=True) for k in range(case.d)])
    designs = [None]
    if loss.design:
        designs.append(model(case.loss, "softmax", 2, case.d, "symbolic").X)
    return [(loss.gradient(b, m.target, X), loss.gradient_structured(b, m.target, X)) for X in designs]


def _grad_check(case: Case) -> ProofResult:
    return decide([g - gs for g, gs in _grad_pairs(case)])


def _grad_neg(case: Case) -> ProofResult:
    return decide([g + gs for g, gs in _grad_pairs(case)], negative=True)


IDENTITIES = (
    Identity(
        id="functions.derivatives",
        title="Derivatives of the named functions softplus and sigmoid",
        statement=r"\frac{d}{dx}\operatorname{softplus}(x)=\sigma_{\mathrm{sig}}(x),\qquad "
                  r"\frac{d}{dx}\sigma_{\mathrm{sig}}(x)="
                  r"\sigma_{\mathrm{sig}}(x)\bigl(1-\sigma_{\mathrm{sig}}(x)\bigr)",
        provenance="D",
        note="Implementation check: the fdiff rules used by every derivation equal the derivatives "
             "of the exp forms.",
        check_case=_fn_check,
        negative=(("sigmoid' = sigmoid", _fn_neg),),
        witnesses=(("the same rule for exp (exp' = exp)", on_case(lambda c: _fn_neg(c, f=sp.exp), lambda c: c)),),
        losses=("logistic",), loss_free=True, link_free=True, size_free=True,
        **generic_fields("functions.derivatives"),
    ),
    Identity(
        id="shift_invariance.softmax",
        title="Softmax is invariant under adding a constant to all logits",
        statement=r"\operatorname{softmax}(a+c\mathbf 1)=\operatorname{softmax}(a)",
        provenance="D",
        note=r"Used by numerics to subtract $\max_ia_i$ before exponentiating. Negative control: the same "
             "statement for sum-norm.",
        check_case=_shift_check,
        negative=(("sum-norm is not shift invariant", _shift_neg),),
        witnesses=(("the same statement for softmax at temperature 1/2 (h = e^{2x}), shift invariant by design",
                    on_case(lambda c: _shift_neg(c, link=WITNESS_SOFTMAX2), lambda c: c)),),
        losses=("logistic",), loss_free=True,
        **generic_fields("shift_invariance.softmax"),
    ),
    Identity(
        id="jacobian.softmax",
        title=r"Softmax Jacobian $J(s)=\operatorname{diag}(s)-ss^\top$",
        statement=r"\frac{\partial s_i}{\partial a_j}=\delta_{ij}s_i-s_is_j,\qquad J(s)=\operatorname{diag}(s)-ss^\top",
        provenance="A/D",
        note="The paper writes $C(s)$ for this matrix [A]; derived here by component-wise differentiation.",
        check_case=_jsoft_check,
        negative=(("missing s s^T", _jsoft_neg),),
        witnesses=(("the elementwise link phi = e^a, whose Jacobian is diag(phi) exactly",
                    on_case(lambda c: _jsoft_neg(c, link=WITNESS_EXP), lambda c: c)),),
        losses=("logistic",), loss_free=True,
        **generic_fields("jacobian.softmax"),
    ),
    Identity(
        id="jacobian.structured",
        title="Structured Jacobian of every link",
        statement=r"J_\varphi(a)=\frac{1}{Z}\bigl(\operatorname{diag}(h'(a))-\varphi(a)\,k'(a)^\top\bigr),\ "
                  r"Z=c+\textstyle\sum_j k(a_j)\ \text{(normalized)};\quad J_\varphi=\operatorname{diag}(h'(a))\ "
                  r"\text{(elementwise)}",
        provenance="D",
        note="Non-smooth links (relu-norm, l1-norm, stablemax, softpick) are proven on the smooth region $a_i>0$ "
             "(positive logits); theorems._links.case_split_proofs covers every sign pattern.",
        check_case=_jstruct_check,
        negative=(("normalization term toggled", _jstruct_neg),),
        witnesses=(("the normalized link phi_i = e^{a_i}/n (k = 1 constant, so phi k'^T = 0 and dropping it changes "
                    "nothing)", on_case(_jstruct_neg, lambda c: c._replace(link=WITNESS_CONST_Z))),),
        losses=("logistic",), links=ANY, loss_free=True,
        **generic_fields("jacobian.structured"),
    ),
    Identity(
        id="jacobian.properties",
        title=r"$J(s)$ is symmetric, annihilates $\mathbf 1$, and has trace $1-\|s\|^2$",
        statement=r"J=J^\top,\qquad J\mathbf 1=0,\qquad \operatorname{tr}J=1-\|s\|^2",
        provenance="D",
        note="Candidate content of the paper's Property D.3 (content [M]); the eigenvalue bound "
             r"$\lambda_{\max}(J)\le\max_is_i$ is an inequality and is not part of this check.",
        check_case=_jprop_check,
        negative=(("tr J = ||s||^2 - 1", _jprop_neg),),
        witnesses=(("phi = -softmax (sum phi = -1: J symmetric, J 1 = 0, tr J = ||phi||^2 - 1)",
                    on_case(lambda c: _jprop(c, -1, link=WITNESS_NEG_SOFTMAX), lambda c: c)),),
        losses=("logistic",), loss_free=True,
        **generic_fields("jacobian.properties"),
    ),
    Identity(
        id="loss.gradient",
        title="Closed gradients of the losses",
        statement=r"\nabla\ell(\langle w,\beta\rangle)=\ell'(\langle w,\beta\rangle)\,w,\quad "
                  r"\nabla\tfrac12\|X\beta-y\|^2=X^\top(X\beta-y),\quad "
                  r"\nabla\bigl(-\textstyle\sum_kp_k\log\operatorname{softmax}(\beta)_k\bigr)="
                  r"(\textstyle\sum_kp_k)\operatorname{softmax}(\beta)-p",
        provenance="D",
        note=r"Square loss checked with $X=I$ and with a symbolic $d\times d$ design.",
        check_case=_grad_check,
        negative=(("flipped sign", _grad_neg),),
        witnesses=(("the kl loss with one class (d = 1): identically 0, its gradient is 0 = -0",
                    on_case(_grad_neg, one_class_kl)),),
        losses=ANY, link_free=True, d_values=d_schedule, size_free=True,
        **generic_fields("loss.gradient"),
    ),
)
