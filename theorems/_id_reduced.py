r"""The reduced $(u,a)$ system and the internal clock (paper-notes#logistic and #square; [D]).

* ``reduced.logistic``: with $u=V^\top w$, $b=\|w\|^2$, $z=\langle w,\beta\rangle=\langle u,s\rangle$ and
  $\gamma=-\ell'(z)=1/(1+e^{z})$, the derived flow gives $\dot u=\gamma bs$, $\dot a=\gamma J(s)u$.
  The paper prints $-\gamma$ in Eqs. (6)-(7) and (15)-(16) while its own earlier lines use $+\gamma$;
  the chain rule gives $+\gamma$ [A]. The negative control is the printed sign.
* ``clock.logistic``: in the internal time $d\tau=-\ell'(z)\,dt$ the system is the loss-free
  $\frac{du}{d\tau}=bs$, $\frac{da}{d\tau}=J(s)u$.
* ``clock.square_rank_one``: for $\tfrac12\|\beta-y\|^2$ on $V=yc^\top$ the same system holds with
  $d\tau=\rho\,dt$, $\rho=(b-z)/b$.
"""
from __future__ import annotations

import sympy as sp

from ._id_base import Case, Identity, at, decide, dot, model, on_case, unit_target, zero_V
from ._id_invariants import _rank_one_sub
from .id_generic_proofs import generic_fields
from ._models import get_loss
from .proof import ProofResult


def _logistic_parts(case: Case):
    m = model("logistic", "softmax", case.n, case.d)
    w, s = m.target, m.phi
    u = m.V.T * w
    z = dot(w, m.beta)
    gamma = -get_loss("logistic").dell(z)
    du = sp.Matrix([m.time_derivative(ui) for ui in u])
    J = sp.diag(*s) - s * s.T
    return m, u, s, J, dot(w, w), gamma, du, m.flow()[1]


def _reduced(case: Case, sign: int, point=None) -> ProofResult:
    m, u, s, J, b, gamma, du, da = _logistic_parts(case)
    return decide(at([du - sign * gamma * b * s, da - sign * gamma * J * u], point and point(m)), negative=sign < 0)


def _zero_target(m) -> dict:
    r"""$w=0$ ($b=0$, $u=0$): no signal, nothing moves, whatever the sign of $\gamma$."""
    return {w: sp.Integer(0) for w in m.target}


def _clock_logistic(case: Case, wrong: bool, point=None) -> ProofResult:
    m, u, s, J, b, gamma, du, da = _logistic_parts(case)
    rate = 1 - gamma if wrong else gamma  # wrong: sigmoid(z) = -l'(-z), the sign inside l' flipped
    return decide(at([du / rate - b * s, da / rate - J * u], point and point(m)), negative=wrong)


def _clock_square(case: Case, wrong: bool, point=None) -> ProofResult:
    m = model("square", "softmax", case.n, case.d)
    sub = _rank_one_sub(m)
    y, s = m.target, m.phi
    b = dot(y, y)
    u = (m.V.T * y).xreplace(sub)
    z = dot(u, s)
    rho = (b - z) if wrong else (b - z) / b
    du = sp.Matrix([m.time_derivative(ui) for ui in m.V.T * y]).xreplace(sub)
    da = m.flow()[1].xreplace(sub)
    J = sp.diag(*s) - s * s.T
    # rho vanishes at the minimizer; the clock statement is checked in multiplied-out form
    return decide(at([du - rho * b * s, da - rho * J * u], point and point(m)), negative=wrong)


IDENTITIES = (
    Identity(
        id="reduced.logistic",
        title=r"Logistic loss: the closed reduced $(u,a)$ system, with $+\gamma$",
        statement=r"\dot u=\gamma\,b\,s,\qquad \dot a=\gamma\,J(s)\,u,\qquad u=V^\top w,\ b=\|w\|^2,\ "
                  r"\gamma=-\ell'(\langle u,s\rangle)=\frac{1}{1+e^{\langle u,s\rangle}}",
        provenance="D",
        note=r"Sign: the paper prints $-\gamma$ in Eq. (6)/(7) (and App. B Eq. (15)/(16)), but $+\gamma$ is "
             "correct [A]; the printed sign is the negative control.",
        check_case=lambda c: _reduced(c, +1),
        negative=(("-gamma as printed in Eqs. (6)/(7)", lambda c: _reduced(c, -1)),),
        witnesses=(("the zero target w = 0 (b = 0, u = 0: nothing moves, either sign of gamma)",
                    on_case(lambda c: _reduced(c, -1, _zero_target), lambda c: c)),),
        losses=("logistic",), d_values=lambda loss, n, link="softmax": (1, 2, 3),
        **generic_fields("reduced.logistic"),
    ),
    Identity(
        id="clock.logistic",
        title=r"Logistic loss in internal time $d\tau=-\ell'(z)\,dt$",
        statement=r"\frac{du}{d\tau}=b\,s,\qquad \frac{da}{d\tau}=J(s)\,u,\qquad d\tau=-\ell'(z)\,dt",
        provenance="D",
        note=r"Loss-independent form: the loss enters only through the clock $\tau$.",
        check_case=lambda c: _clock_logistic(c, False),
        negative=(("clock factor sigmoid(z) instead of sigmoid(-z)", lambda c: _clock_logistic(c, True)),),
        witnesses=(("V = 0 (z = 0, where sigmoid(z) = sigmoid(-z) = 1/2)",
                    on_case(lambda c: _clock_logistic(c, True, zero_V), lambda c: c)),),
        losses=("logistic",), d_values=lambda loss, n, link="softmax": (1, 2, 3),
        **generic_fields("clock.logistic"),
    ),
    Identity(
        id="clock.square_rank_one",
        title=r"Square loss on the rank-one set: same system with $d\tau=\rho\,dt$",
        statement=r"V=yc^\top:\quad \dot u=\rho\,b\,s,\quad \dot a=\rho\,J(s)\,u,\qquad "
                  r"\rho=\frac{b-z}{b}=1-\langle c,s\rangle,\ z=\langle u,s\rangle,\ u=V^\top y",
        provenance="D",
        note=r"$X=I$. Same trajectory as the logistic system in $\tau$; it stops where $\langle u,s\rangle=b$. "
             r"Checked in multiplied-out form since $\rho=0$ at the minimizer.",
        check_case=lambda c: _clock_square(c, False),
        negative=(("rho = b - z (missing /b)", lambda c: _clock_square(c, True)),),
        witnesses=(("the unit target y = e_1 (b = 1: dividing by b changes nothing)",
                    on_case(lambda c: _clock_square(c, True, unit_target), lambda c: c)),),
        losses=("square",), d_values=lambda loss, n, link="softmax": (1, 2, 3),
        **generic_fields("clock.square_rank_one"),
    ),
)
