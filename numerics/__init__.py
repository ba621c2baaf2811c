r"""numerics: generated numpy / torch / mpmath evaluation of the value-softmax flow.

Built on :mod:`theorems` (the symbolic layer). Public names:

* :func:`flow_rhs` / :class:`FlowRHS`: the generated right-hand side of the flow;
* :func:`lambdify_checked`: the one lambdify wrapper (CSE, stable kernels);
* :class:`InvalidArgument`: the exception for bad input (from :mod:`theorems`);
* :func:`simulate` (one flow -> :class:`Trajectory`) and :func:`integrate_batch` (a batch ->
  :class:`BatchTrajectory`), one interface: short repr, ``to_numpy``, ``to_dict``,
  ``to_dataframe`` (pandas), ``plot``; :func:`save_trajectory` / :func:`load_trajectory`: every array in
  one binary ``.npz``;
* :func:`certify` / :func:`check_certificate` (validated numerics).

``__all__`` lists what users call; the other names imported here are internal helpers of the
layers above.
"""
from theorems import InvalidArgument

from .lambdify import BACKENDS, lambdify_checked
from .rhs import FlowRHS, flow_rhs

# BACKENDS and prepare_times stay importable (internal helpers), not in __all__
__all__ = ["InvalidArgument", "lambdify_checked", "FlowRHS", "flow_rhs"]

from .validated.enclosure import enclose, Enclosure, taylor_coefficients, check_apriori, step_enclosure
from .validated.certify import (
    CertifyInput, CertifyResult, CheckResult, parse_init, load_init, certify, check_certificate,
    load_certificate, write_json_atomic, family_init, simulate_winner, certify_family, near_tie_init,
)

# (taylor_coefficients, check_apriori, step_enclosure, CertifyInput, CheckResult, parse_init,
# write_json_atomic, family_init, simulate_winner, certify_family, near_tie_init stay importable
# for the layers above, but are not part of the public API: not in __all__)
__all__ += [
    "enclose", "Enclosure", "CertifyResult", "load_init", "certify", "check_certificate",
    "load_certificate",
]

# integration engine and `softpolar simulate`; torch stays lazy (inside functions)
from .problem import PRESETS, Problem
from .metrics import argmax, entropy, max_weight, one_minus_max
from .integrate._common import IntegrationError, Trajectory, prepare_times
from .integrate._trajectory import BatchTrajectory
from .plot import plot_trajectory
from .integrate._npz import load_trajectory, save_trajectory
from .integrate._simulate import simulate
from .integrate._torch import integrate_batch
from .integrate._clock import reduced_logistic
from .integrate._gd import DEFAULT_GD_MAX_STEPS, default_record, gd_iterates, gradient_descent, gradient_descent_batch

__all__ += [
    "PRESETS", "Problem", "argmax", "entropy", "max_weight", "one_minus_max", "IntegrationError",
    "Trajectory", "BatchTrajectory", "plot_trajectory", "save_trajectory", "load_trajectory", "simulate",
    "integrate_batch",
    "reduced_logistic", "gradient_descent", "gradient_descent_batch", "default_record", "gd_iterates",
    "DEFAULT_GD_MAX_STEPS",
]

# the Taylor backend (heyoka stays lazy: importing numerics never imports it)
from .integrate._taylor import integrate_ensemble, reduced_taylor, taylor_events
from .integrate._taylor import available as taylor_available

__all__ += ["taylor_available", "reduced_taylor", "taylor_events", "integrate_ensemble"]

# box enclosures and atlas certificates (flint stays lazy)
from .validated.box import enclose_box
from .validated.box_float import winners as basin_winners
from .validated.atlas_check import check_atlas

__all__ += ["enclose_box", "basin_winners", "check_atlas"]
from .validated.sink_atlas import sink_atlas

__all__ += ["sink_atlas"]
# Coq re-proof of a point certificate or an atlas box (issue 37); certificate_to_coq for the layers above, not in
# __all__
from .validated._coq_emit import (REPLAY_COQ_MAX_STEPS, box_chain, box_replay_to_coq, certificate_to_coq, coq_chain,
                                  replay_to_coq, slope_bounds as replay_slope_bounds)
__all__ += ["coq_chain", "replay_to_coq", "box_chain", "box_replay_to_coq", "replay_slope_bounds",
            "REPLAY_COQ_MAX_STEPS"]
