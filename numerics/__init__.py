r"""numerics: generated numpy / torch / mpmath evaluation of the value-softmax flow.

Built on :mod:`theorems` (the symbolic layer). Public names:

* :func:`flow_rhs` / :class:`FlowRHS`: the generated right-hand side of the flow;
* :func:`lambdify_checked`: the one lambdify wrapper (CSE, stable kernels);
* :class:`InvalidArgument`: the exception for bad input (from :mod:`theorems`).
"""
from theorems import InvalidArgument

from ._lambdify import BACKENDS, lambdify_checked
from ._rhs import FlowRHS, flow_rhs

__all__ = ["InvalidArgument", "BACKENDS", "lambdify_checked", "FlowRHS", "flow_rhs"]
