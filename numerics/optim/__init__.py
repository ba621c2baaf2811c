r"""Optimizer engines: the discrete and continuous forms of a :class:`theorems.optimizers.Optimizer`.

* :func:`optimizer_descent`: ``steps`` updates with learning rate ``lr`` (numpy, torch, mpmath);
* :func:`optimizer_flow`: the continuous form (numpy DOP853, mpmath GBS to long horizons), smooth flows;
* :func:`slaved_flow`: a stateful flow (Adam) to extreme horizons: the full ODE until its states relax, then
  the derived quasi-static flow on the log clock;
* :func:`filippov_flow`: a discontinuous flow (sign flow) across its switching surfaces $g_i=0$, reporting
  crossings and sliding segments (Filippov) or refusing with the reason.

Every engine evaluates kernels generated from the definition (:mod:`numerics.optim._kernels`); none reads the
optimizer's name.
"""
from ._discrete import optimizer_descent, steps_for
from ._filippov import filippov_flow
from ._flow import optimizer_flow
from ._kernels import optimizer_kernels
from ._slaved import slaved_flow, slaving_residual

__all__ = ["filippov_flow", "optimizer_descent", "optimizer_flow", "optimizer_kernels", "slaved_flow",
           "slaving_residual", "steps_for"]
