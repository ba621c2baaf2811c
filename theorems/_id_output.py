r"""Effective dynamics of the output $\beta$ and of the attention entropy.

* ``output.dynamics`` [A/D] (paper Lemma D.2, App. D.1, p. 20 [A]):
  $\dot\beta=-M\nabla\mathcal L$, $M=\|s\|^2I+VJ(s)^2V^\top$. The printed $M$ drops the
  square on $J$, a typo per [A]; the negative control shows the unsquared form is false.
* ``entropy.rate`` [D]: $\frac{d}{dt}H(s)=-a^\top J(s)^2V^\top r$, $r=-\nabla\mathcal L$.
"""
from __future__ import annotations

import sympy as sp

from ._id_base import Case, Identity, at, d_schedule, decide, dot, grad, model, on_case, placeholders, zero_V
from .id_generic_proofs import generic_fields
from .proof import ProofResult


def _parts(case: Case):
    """The model, placeholder s and g, J(s) on the placeholders, and the substitution back."""
    m = model(case.loss, "softmax", case.n, case.d)
    s, g = placeholders("s", case.n), placeholders("g", case.d)
    back = dict(zip(s, m.phi))
    back.update(zip(g, grad(case.loss, "softmax", case.n, case.d)))
    return m, s, sp.diag(*s) - s * s.T, g, back


def _output(case: Case, power: int, point=None) -> ProofResult:
    m, s, J, g, back = _parts(case)
    lhs = sp.Matrix([m.time_derivative(bk) for bk in m.beta])
    M = dot(s, s) * sp.eye(case.d) + m.V * (J * J if power == 2 else J) * m.V.T
    return decide(at(lhs - (-M * g).xreplace(back), point and point(m)), negative=power != 2)


def entropy(m) -> sp.Expr:
    r"""$H(s)=-\sum_is_i\log s_i$, with $\log s_i$ expanded to $a_i-\log\sum_je^{a_j}$ (valid: both sides positive)."""
    return -sp.Add(*[si * sp.expand_log(sp.log(si), force=True) for si in m.phi])


def _entropy(case: Case, power: int, point=None) -> ProofResult:
    m, s, J, g, back = _parts(case)
    lhs = m.time_derivative(entropy(m))
    rhs = -(m.a.T * (J * J if power == 2 else J) * m.V.T * (-g))[0, 0]
    return decide(at(lhs - rhs.xreplace(back), point and point(m)), negative=power != 2)


def _zero_logits(m) -> dict:
    r"""$a=0$: uniform $s$, maximal entropy; $a^\top=0$ and $\sum_i\dot s_i=0$ make both rates 0."""
    return {ai: sp.Integer(0) for ai in m.a}


IDENTITIES = (
    Identity(
        id="output.dynamics",
        title=r"Effective output dynamics $\dot\beta=-(\|s\|^2I+VJ^2V^\top)\nabla\mathcal L$",
        statement=r"\dot\beta=\dot Vs+V\dot s=-\bigl(\|s\|^2I_d+V\,J(s)^2\,V^\top\bigr)\nabla\mathcal L(\beta)",
        provenance="A/D",
        note="Lemma D.2 (App. D.1, p. 20) per [A]. The printed $M$ drops the square on $J$ (a typo per [A]); "
             r"the unsquared form $VJV^\top$ is false (negative control). $M\succeq\frac1nI$.",
        check_case=lambda c: _output(c, 2),
        negative=(("unsquared J (the printed M)", lambda c: _output(c, 1)),),
        witnesses=(("V = 0 (the V J^k V^T term vanishes, squared or not: beta' = -||s||^2 g)",
                    on_case(lambda c: _output(c, 1, zero_V), lambda c: c)),),
        d_values=d_schedule,
        **generic_fields("output.dynamics"),
    ),
    Identity(
        id="entropy.rate",
        title="Rate of change of the attention entropy",
        statement=r"\frac{d}{dt}H(s)=-\langle\log s,\dot s\rangle=-a^\top J(s)\,\dot a=-a^\top J(s)^2V^\top r,"
                  r"\quad r=-\nabla\mathcal L(\beta)",
        provenance="D",
        note=r"Not sign-definite in general. Logistic: $=-\gamma\,a^\top J^2u$. The log of the "
             "normalizer is treated as a free symbol in the exact proof (sound: its coefficient cancels).",
        check_case=lambda c: _entropy(c, 2),
        negative=(("unsquared J", lambda c: _entropy(c, 1)),),
        witnesses=(("uniform logits a = 0 (maximal entropy: a^T = 0 and sum_i s_i' = 0 make both rates 0)",
                    on_case(lambda c: _entropy(c, 1, _zero_logits), lambda c: c)),),
        d_values=d_schedule,
        **generic_fields("entropy.rate"),
    ),
)
