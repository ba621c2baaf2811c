r"""Identities of the gradient flow itself.

* ``flow.structured`` [A/D] (paper Eqs. (3)-(4) [A]): the flow derived scalar by scalar from
  $F(V,a)=\mathcal L(V\varphi(a))$ equals
  $\dot V=-g\varphi^\top$, $\dot a=-J_\varphi^\top V^\top g$, $g=\nabla\mathcal L(\beta)$, for every loss and link.
* ``replicator`` [D]: for softmax, $\dot a_i=s_i(f_i-\sum_js_jf_j)$, $f=-V^\top g$ (a replicator field
  with fitness $f$).
* ``attention.dynamics`` [A/D]: $\dot s=J(s)\dot a=J(s)^2V^\top r$, $r=-g$ ([A]: "$ds/dt=C(s)^2V^\top r$").
"""
from __future__ import annotations

import sympy as sp

from ._id_base import (ANY, WITNESS_CONST_Z, WITNESS_EXP, Case, Identity, decide, d_schedule, dot, grad, link_schedule,
                       model, on_case, one_class_kl, placeholders, structured)
from ._models import get_loss
from .id_generic_proofs import generic_fields
from .proof import ProofResult


# ---- flow.structured ------------------------------------------------------------------------
def _flow_check(case: Case) -> ProofResult:
    m = model(case.loss, case.link, case.n, case.d)
    dV, da = m.flow()
    sV, sa = structured(case.loss, case.link, case.n, case.d)
    return decide([dV - sV, da - sa])


def _flow_neg_sign(case: Case) -> ProofResult:
    m = model(case.loss, case.link, case.n, case.d)
    dV, _ = m.flow()
    sV, _ = structured(case.loss, case.link, case.n, case.d)
    return decide(dV + sV, negative=True)  # dV = +g phi^T: ascent instead of descent


def _flow_neg_outer(case: Case) -> ProofResult:
    # J with its normalization term toggled: for softmax, diag(s) instead of diag(s) - s s^T
    m = model(case.loss, case.link, case.n, case.d)
    _, da = m.flow()
    link, a = m.link_def, m.a
    dh = sp.Matrix([link.dh(ai) for ai in a])
    if link.normalized:
        J = sp.diag(*dh) / link.normalizer(a)
    else:
        J = sp.diag(*dh) - m.phi * dh.T
    return decide(da - (-J.T * m.V.T * m.grad_loss), negative=True)


# ---- replicator ---------------------------------------------------------------------------------
def _fitness(case: Case, link="softmax"):
    m = model(case.loss, link, case.n, case.d)
    return m, -m.V.T * grad(case.loss, link, case.n, case.d)


def _repl_check(case: Case) -> ProofResult:
    m, f = _fitness(case)
    s = m.phi
    fbar = dot(s, f)
    return decide([m.flow()[1][i] - s[i] * (f[i] - fbar) for i in range(case.n)])


def _repl_neg(case: Case, link="softmax") -> ProofResult:
    m, f = _fitness(case, link)
    wrong = [m.flow()[1][i] - m.phi[i] * f[i] for i in range(case.n)]  # mean fitness dropped
    return decide(wrong, negative=True)


# ---- attention dynamics -----------------------------------------------------------------------
def _att(case: Case, power: int) -> ProofResult:
    m, f = _fitness(case)
    s, fp = placeholders("s", case.n), placeholders("f", case.n)
    J = sp.diag(*s) - s * s.T
    back = dict(zip(s, m.phi))
    back.update(zip(fp, f))
    lhs = sp.Matrix([m.time_derivative(si) for si in m.phi])
    return decide(lhs - ((J * J if power == 2 else J) * fp).xreplace(back), negative=power != 2)


IDENTITIES = (
    Identity(
        id="flow.structured",
        title=r"Gradient flow of $F(V,a)=\mathcal L(V\varphi(a))$ in structured form",
        statement=r"\dot V=-\nabla\mathcal L(\beta)\,\varphi(a)^\top,\qquad "
                  r"\dot a=-J_\varphi(a)^\top V^\top\nabla\mathcal L(\beta)\qquad "
                  r"(\text{softmax: }\dot V=r s^\top,\ \dot a=J(s)V^\top r,\ r=-\nabla\mathcal L)",
        provenance="A/D",
        note="Paper Eqs. (3)-(4), p. 3 [A] for softmax; other links and the kl loss [D]. "
             "Non-smooth links (relu-norm, l1-norm, stablemax, softpick) on the smooth region $a_i>0$. "
             "Sizes in --check: softmax $d=1,2,3$ "
             r"($n\le4$), $d=1,2$ ($n=5,6$); other links $d=1,2$ ($n\le4$), $d=1$ ($n=5,6$), with kl $d=2$ at "
             r"$n\le3$ only.",
        check_case=_flow_check,
        negative=(("dV with flipped sign", _flow_neg_sign),
                  ("J without its normalization term (missing s s^T)", _flow_neg_outer)),
        witnesses=(("the kl loss with one class (d = 1): identically 0, so dV = 0 = -0",
                    on_case(_flow_neg_sign, one_class_kl)),
                   ("the normalized link phi_i = e^{a_i}/n (k = 1 constant: its J has no phi k'^T term to drop)",
                    on_case(_flow_neg_outer, lambda c: c._replace(link=WITNESS_CONST_Z, d=get_loss(c.loss).min_d)))),
        losses=ANY, links=ANY, d_values=link_schedule,
        **generic_fields("flow.structured"),
    ),
    Identity(
        id="replicator",
        title=r"Softmax logits follow a replicator field with fitness $f=-V^\top\nabla\mathcal L$",
        statement=r"\dot a_i=s_i\Bigl(f_i-\textstyle\sum_j s_jf_j\Bigr),\qquad f=-V^\top\nabla\mathcal L(\beta),"
                  r"\quad \textstyle\sum_j s_jf_j=\langle\beta,-\nabla\mathcal L\rangle",
        provenance="D",
        note="Column form of the flow: logit $i$ grows while the fitness of token $i$ is above the "
             "$s$-weighted mean fitness.",
        check_case=_repl_check, losses=ANY,
        negative=(("mean fitness dropped (missing s s^T)", _repl_neg),),
        witnesses=(("the elementwise link phi = e^a (J = diag(phi): a_i' = phi_i f_i exactly)",
                    on_case(lambda c: _repl_neg(c, link=WITNESS_EXP), lambda c: c)),),
        d_values=d_schedule,
        **generic_fields("replicator"),
    ),
    Identity(
        id="attention.dynamics",
        title=r"Attention weights move by $J(s)^2V^\top r$",
        statement=r"\dot s=J(s)\,\dot a=J(s)^2\,V^\top r,\qquad r=-\nabla\mathcal L(\beta)",
        provenance="A/D",
        note=r"[A]: $\dot s=C(s)^2V^\top r$ (Lemma D.2 context). Not the classical replicator $J(s)f$.",
        check_case=lambda c: _att(c, 2), losses=ANY,
        negative=(("unsquared J (classical replicator)", lambda c: _att(c, 1)),),
        witnesses=(("the kl loss with one class (d = 1): the flow is 0, so s' = 0 = J(s) V^T r",
                    on_case(lambda c: _att(c, 1), one_class_kl)),),
        d_values=d_schedule,
        **generic_fields("attention.dynamics"),
    ),
)
