r"""The claim families with the optimizer as a third argument: ``family_claims(link, loss, optimizer=...)``.

Which records apply is read off the optimizer's definition (:mod:`theorems.optimizers`), never its name:

* a flow that *is* gradient flow ($\dot\theta=-\lambda\nabla F$ with $\lambda\equiv1$ on $V$ and $a$, no state,
  :meth:`~theorems.optimizers.Optimizer.gf_multiplier`) gets the (loss, link) families unchanged: their verdicts,
  rate laws included, are gradient flow's;
* any other flow gets the optimizer's own records (:func:`._claims_optim.optimizer_claims`): polarization, winner,
  and a rate law where one is derived for its clock (gradient flow on the arc-length clock, proven by
  :func:`theorems.optimizers.time_change`); where none is derived, no rate record is made and the polarization
  record's evidence carries the measured decay.

Limits: the families' own checks (C15/C18 generalized) run under gradient flow only; the sign flow's rate
$e^{-2t}$ (OPT.SIGN.RATE) is measured, not yet derived from the definition.
"""
from __future__ import annotations

from theorems import optimizers as O
from theorems import get_link, get_loss

from ._claims_optim import _law, optimizer_claims


def optimizer_records(link, loss, optimizer) -> list | None:
    """The records of ``verify --link L --loss S --optimizer O`` for a flow other than gradient flow; ``None`` when
    the flow is gradient flow itself (the caller, :func:`._families.family_claims`, then builds the families).
    ``optimizer``: a name (a built-in or a ``--models`` one) or an :class:`~theorems.optimizers.Optimizer`."""
    opt = O.get_optimizer(optimizer)
    if _law(opt) == "gf":  # gradient flow itself, read off the definition (lambda = 1 on both blocks)
        return None
    return optimizer_claims(opt, loss=get_loss(loss).name, link=get_link(link).name)
