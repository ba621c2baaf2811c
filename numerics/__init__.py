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
from typing import TYPE_CHECKING as _TYPE_CHECKING

# BACKENDS and prepare_times stay importable (internal helpers), not in __all__
__all__ = ["InvalidArgument", "lambdify_checked", "FlowRHS", "flow_rhs"]


# (taylor_coefficients, check_apriori, step_enclosure, CertifyInput, CheckResult, parse_init,
# write_json_atomic, family_init, simulate_winner, certify_family, near_tie_init stay importable
# for the layers above, but are not part of the public API: not in __all__)
__all__ += [
    "enclose", "Enclosure", "CertifyResult", "load_init", "certify", "check_certificate",
    "load_certificate",
]

# integration engine and `softpolar simulate`; torch stays lazy (inside functions)

__all__ += [
    "PRESETS", "Problem", "argmax", "entropy", "max_weight", "one_minus_max", "IntegrationError",
    "Trajectory", "BatchTrajectory", "plot_trajectory", "save_trajectory", "load_trajectory", "simulate",
    "integrate_batch",
    "reduced_logistic", "gradient_descent", "gradient_descent_batch", "default_record", "gd_iterates",
    "DEFAULT_GD_MAX_STEPS", "DescentWarning",
]

# the Taylor backend (heyoka stays lazy: importing numerics never imports it)

__all__ += ["taylor_available", "reduced_taylor", "taylor_events", "integrate_ensemble"]

# box enclosures and atlas certificates (flint stays lazy)

__all__ += ["enclose_box", "basin_winners", "check_atlas"]

__all__ += ["sink_atlas"]
# Coq re-proof of a point certificate or an atlas box (issue 37); certificate_to_coq for the layers above, not in
# __all__
__all__ += ["coq_chain", "replay_to_coq", "box_chain", "box_replay_to_coq", "replay_slope_bounds",
            "REPLAY_COQ_MAX_STEPS"]

#: the door, resolved on first access (PEP 562): importing this package imports nothing beneath it; each
#: name -> (module, attribute), a relative module inside this package, ``None``: the module itself
_DOOR = {
    'InvalidArgument': ('theorems', 'InvalidArgument'),
    'BACKENDS': ('.lambdify', 'BACKENDS'),
    'lambdify_checked': ('.lambdify', 'lambdify_checked'),
    'FlowRHS': ('.rhs', 'FlowRHS'),
    'flow_rhs': ('.rhs', 'flow_rhs'),
    'enclose': ('.validated.enclosure', 'enclose'),
    'Enclosure': ('.validated.enclosure', 'Enclosure'),
    'taylor_coefficients': ('.validated.enclosure', 'taylor_coefficients'),
    'check_apriori': ('.validated.enclosure', 'check_apriori'),
    'step_enclosure': ('.validated.enclosure', 'step_enclosure'),
    'CertifyInput': ('.validated.certify', 'CertifyInput'),
    'CertifyResult': ('.validated.certify', 'CertifyResult'),
    'CheckResult': ('.validated.certify', 'CheckResult'),
    'parse_init': ('.validated.certify', 'parse_init'),
    'load_init': ('.validated.certify', 'load_init'),
    'certify': ('.validated.certify', 'certify'),
    'check_certificate': ('.validated.certify', 'check_certificate'),
    'load_certificate': ('.validated.certify', 'load_certificate'),
    'write_json_atomic': ('.validated.certify', 'write_json_atomic'),
    'family_init': ('.validated.certify', 'family_init'),
    'simulate_winner': ('.validated.certify', 'simulate_winner'),
    'certify_family': ('.validated.certify', 'certify_family'),
    'near_tie_init': ('.validated.certify', 'near_tie_init'),
    'PRESETS': ('.problem', 'PRESETS'),
    'Problem': ('.problem', 'Problem'),
    'argmax': ('.metrics', 'argmax'),
    'entropy': ('.metrics', 'entropy'),
    'max_weight': ('.metrics', 'max_weight'),
    'one_minus_max': ('.metrics', 'one_minus_max'),
    'IntegrationError': ('.integrate._common', 'IntegrationError'),
    'Trajectory': ('.integrate._common', 'Trajectory'),
    'prepare_times': ('.integrate._common', 'prepare_times'),
    'BatchTrajectory': ('.integrate._trajectory', 'BatchTrajectory'),
    'plot_trajectory': ('.plot', 'plot_trajectory'),
    'load_trajectory': ('.integrate._npz', 'load_trajectory'),
    'save_trajectory': ('.integrate._npz', 'save_trajectory'),
    'simulate': ('.integrate._simulate', 'simulate'),
    'integrate_batch': ('.integrate._torch', 'integrate_batch'),
    'reduced_logistic': ('.integrate._clock', 'reduced_logistic'),
    'DEFAULT_GD_MAX_STEPS': ('.integrate._gd', 'DEFAULT_GD_MAX_STEPS'),
    'DescentWarning': ('.integrate._gd', 'DescentWarning'),
    'default_record': ('.integrate._gd', 'default_record'),
    'gd_iterates': ('.integrate._gd', 'gd_iterates'),
    'gradient_descent': ('.integrate._gd', 'gradient_descent'),
    'gradient_descent_batch': ('.integrate._gd', 'gradient_descent_batch'),
    'integrate_ensemble': ('.integrate.taylor', 'integrate_ensemble'),
    'reduced_taylor': ('.integrate.taylor', 'reduced_taylor'),
    'taylor_events': ('.integrate.taylor', 'taylor_events'),
    'taylor_available': ('.integrate.taylor', 'available'),
    'enclose_box': ('.validated.box', 'enclose_box'),
    'basin_winners': ('.validated.box_float', 'winners'),
    'check_atlas': ('.validated.atlas_check', 'check_atlas'),
    'sink_atlas': ('.validated.sink_atlas', 'sink_atlas'),
    'REPLAY_COQ_MAX_STEPS': ('.validated.coq_emit', 'REPLAY_COQ_MAX_STEPS'),
    'box_chain': ('.validated.coq_emit', 'box_chain'),
    'box_replay_to_coq': ('.validated.coq_emit', 'box_replay_to_coq'),
    'certificate_to_coq': ('.validated.coq_emit', 'certificate_to_coq'),
    'coq_chain': ('.validated.coq_emit', 'coq_chain'),
    'replay_to_coq': ('.validated.coq_emit', 'replay_to_coq'),
    'replay_slope_bounds': ('.validated.coq_emit', 'slope_bounds'),
}

if _TYPE_CHECKING:  # the same names for static readers (type checkers, the docs' API pages)
    from theorems import InvalidArgument
    from .lambdify import BACKENDS, lambdify_checked
    from .rhs import FlowRHS, flow_rhs
    from .validated.enclosure import enclose, Enclosure, taylor_coefficients, check_apriori, step_enclosure
    from .validated.certify import (
        CertifyInput, CertifyResult, CheckResult, parse_init, load_init, certify, check_certificate,
        load_certificate, write_json_atomic, family_init, simulate_winner, certify_family, near_tie_init,
    )
    from .problem import PRESETS, Problem
    from .metrics import argmax, entropy, max_weight, one_minus_max
    from .integrate._common import IntegrationError, Trajectory, prepare_times
    from .integrate._trajectory import BatchTrajectory
    from .plot import plot_trajectory
    from .integrate._npz import load_trajectory, save_trajectory
    from .integrate._simulate import simulate
    from .integrate._torch import integrate_batch
    from .integrate._clock import reduced_logistic
    from .integrate._gd import (DEFAULT_GD_MAX_STEPS, DescentWarning, default_record, gd_iterates, gradient_descent,
                                gradient_descent_batch)
    from .integrate.taylor import integrate_ensemble, reduced_taylor, taylor_events
    from .integrate.taylor import available as taylor_available
    from .validated.box import enclose_box
    from .validated.box_float import winners as basin_winners
    from .validated.atlas_check import check_atlas
    from .validated.sink_atlas import sink_atlas
    from .validated.coq_emit import (REPLAY_COQ_MAX_STEPS, box_chain, box_replay_to_coq, certificate_to_coq, coq_chain,
                                      replay_to_coq, slope_bounds as replay_slope_bounds)


from theorems.door import lazy_door as _lazy_door

__getattr__, __dir__ = _lazy_door(__name__, _DOOR)
