r"""Asymptotic laws derived from a model's definitions (provenance D: derived here, never the paper's statement).

Each law is a SymPy derivation from the definitions of a loss and a link, returning a :class:`Law` (the
quantity, the exponent and the constant as expressions in ``n`` and ``b``, and the derivation's steps) or a
:class:`NoLaw` naming the step that did not hold and why, never a guess. The derivations live in one module each:

* :mod:`theorems.asymptotics._rate`: the polarization rate $1-\max\hat\varphi\sim C(\log t)^{-2}$
  (:func:`rate_law`).
* :mod:`theorems.asymptotics._loss`: the loss $\mathcal L\sim C\,t^{-1}$ (:func:`loss_law`).
* :mod:`theorems.asymptotics._values`: the value-norm growth $|v_{\rm top}|\sim C\log t$ (:func:`value_law`).
* :mod:`._bandit`, :mod:`._margin`, :mod:`._sinks`: the frozen-value rate (:func:`bandit_law`), the logit
  direction's rate (:func:`margin_law`: exponent only) and the sink's escape time (:func:`sink_escape_law`).
* :mod:`theorems.asymptotics._optim`: the polarization rate under an optimizer (:func:`optimizer_rate_law`).

:data:`LAWS` lists the derivations; :func:`asymptotics` ``(loss, link) -> list[dict]`` gives their JSON entries
(``quantity``, ``exponent``, ``constant`` as SymPy-parsable strings in ``n`` and ``b``), printed by
``softpolar derive --asymptotics``. Nothing here reads a model's name.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

__all__ = ["LAWS", "LOSS_QUANTITY", "Law", "NoLaw", "OPTIMIZER_LAWS", "OPTIMIZER_RATE_QUANTITY", "RATE_QUANTITY",
           "VALUE_QUANTITY", "asymptotics", "b", "bandit_law", "loss_law", "margin_law", "n",
           "optimizer_rate_law", "rate_law", "sink_escape_law", "value_law"]

n, b = sp.symbols("n b", positive=True)
_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)


@dataclass(frozen=True)
class Law:
    r"""A derived law $q(t)\sim C\,X^{-p}$: ``exponent`` $p$ and ``constant`` $C$ (SymPy, in ``n``, ``b``) on the
    ``clock`` $X$: ``"log t"`` (default) or ``"t"``."""

    quantity: str
    exponent: sp.Expr
    constant: sp.Expr
    steps: tuple = field(default_factory=tuple)
    #: the tail rate lambda of h (a temperature is 1/lambda); the law's constant scales as 1/lambda^2
    tail_rate: sp.Expr = sp.Integer(1)
    #: the law's variable X in q ~ C X^-p: "log t" or "t"
    clock: str = "log t"

    def constant_at(self, n_value: int, b_value: float) -> float:
        return float(self.constant.subs({n: n_value, b: b_value}))

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "exponent": sp.sstr(self.exponent), "constant": sp.sstr(self.constant),
                "clock": self.clock, "derivation": list(self.steps), "provenance": "D"}


@dataclass(frozen=True)
class NoLaw:
    """No law derived: ``step`` is the derivation step that did not hold, ``reason`` says why."""

    quantity: str
    step: str
    reason: str

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "exponent": None, "constant": None,
                "no_law": f"{self.step}: {self.reason}"}


from ._rate import RATE_QUANTITY, rate_law  # after Law and NoLaw above: the derivations use them
from ._loss import LOSS_QUANTITY, loss_law
from ._values import VALUE_QUANTITY, value_law
from ._bandit import bandit_law
from ._margin import margin_law
from ._sinks import sink_escape_law
from ._optim import OPTIMIZER_RATE_QUANTITY, optimizer_rate_law

#: the derivations, in the order ``derive --asymptotics`` prints them: each ``(loss, link) -> Law | NoLaw``
LAWS = (rate_law, loss_law, value_law, bandit_law, margin_law, sink_escape_law)
#: the derivations under an optimizer (its flow read off its definition): each ``(loss, link, optimizer)``
OPTIMIZER_LAWS = (optimizer_rate_law,)


def asymptotics(loss, link, optimizer=None) -> list[dict]:
    """The derived asymptotic laws of (``loss``, ``link``), as JSON entries (one per derivation in :data:`LAWS`);
    with ``optimizer``, those of :data:`OPTIMIZER_LAWS` under it."""
    if optimizer is not None:
        return [derive(loss, link, optimizer).to_json() for derive in OPTIMIZER_LAWS]
    return [derive(loss, link).to_json() for derive in LAWS]
