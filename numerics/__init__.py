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

from ._validated import enclose, Enclosure, taylor_coefficients, check_apriori, step_enclosure
from ._certify import (
    CertifyInput, CertifyResult, CheckResult, parse_init, load_init, certify, check_certificate,
    load_certificate, write_json_atomic, family_init, simulate_winner, certify_family, near_tie_init,
)

__all__ += [
    "enclose", "Enclosure", "taylor_coefficients", "check_apriori", "step_enclosure",
    "CertifyInput", "CertifyResult", "CheckResult", "parse_init", "load_init", "certify", "check_certificate",
    "load_certificate", "write_json_atomic", "family_init", "simulate_winner", "certify_family", "near_tie_init",
]
