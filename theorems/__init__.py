r"""theorems: the symbolic layer of softpolar (SymPy only).

Definitions of the value-softmax model $\mathcal L(V\varphi(a))$, its gradient flow
derived by SymPy, and the identities the paper's theory rests on, each proven
exactly for concrete sizes and for every size (an index normal form over sums of
symbolic length, :mod:`theorems.id_generic_proofs`), each with negative controls.
"""
from ._version import __version__
from .errors import InvalidArgument, check_choice, check_int
from ._functions import sigmoid, softplus, check_function_derivatives
from ._links import Link
from ._losses import Loss
from ._models import (
    LINKS, LOSSES, SINK_LINKS, ENTRY_POINT_GROUP, all_links, all_losses, builtin_link, builtin_link_names,
    get_link, get_loss, is_builtin, is_paper_link, link_name, load_entry_points, load_models_file, loss_name,
    has_internal_clock, models_scope, register, same_link, same_loss,
)
from ._model import SymbolicModel
from . import optimizers
from .optimizers import Optimizer, all_optimizers, get_optimizer, register_optimizer
from ._proof import ProofResult, prove_zero

__all__ = [
    "InvalidArgument", "check_choice", "check_int",
    "sigmoid", "softplus", "check_function_derivatives",
    "LINKS", "SINK_LINKS", "Link", "get_link", "builtin_link", "builtin_link_names", "is_paper_link",
    "LOSSES", "Loss", "get_loss",
    "ENTRY_POINT_GROUP", "all_links", "all_losses", "is_builtin", "link_name", "loss_name",
    "has_internal_clock", "load_entry_points", "load_models_file", "models_scope", "register", "same_link", "same_loss",
    "SymbolicModel",
    "ProofResult", "prove_zero",
    "optimizers", "Optimizer", "all_optimizers", "get_optimizer", "register_optimizer",
]
__all__ += ["__version__"]

from .trapping import (
    TAU_SYSTEM_LATEX, TauSystem, TrappingRegion, SignCheck, InvarianceCheck, TrappingLemmaReport,
    tau_system, check_tau_reduction, trapping_region, check_region_sign, check_invariance,
    check_gap_identities, check_case_split, check_winner_weight, check_tie_invariance, prove_trapping_lemma,
)

__all__ += [
    "TAU_SYSTEM_LATEX", "TauSystem", "TrappingRegion", "SignCheck", "InvarianceCheck", "TrappingLemmaReport",
    "tau_system", "check_tau_reduction", "trapping_region", "check_region_sign", "check_invariance",
    "check_gap_identities", "check_case_split", "check_winner_weight", "check_tie_invariance",
    "prove_trapping_lemma",
]

from ._identities import IDENTITIES, Identity, IdentityResult, get_identity, run_identities, scope_report

__all__ += ["IDENTITIES", "Identity", "IdentityResult", "get_identity", "run_identities", "scope_report"]

from ._symmetry import (
    SymmetryReport, check_u_shift, check_a_shift, check_b_scaling, prove_symmetries, slice_coverage,
)

__all__ += ["SymmetryReport", "check_u_shift", "check_a_shift", "check_b_scaling", "prove_symmetries",
            "slice_coverage"]

# helpers of the layers above and of the tests (derive's and check_model's generic rows, the setup time bound, the
# decision procedure's parts, the sink links' pieces): importable from here, not in __all__
from ._deadline import DEFAULT_SETUP_TIMEOUT, check_timeout, setup_deadline
from ._id_base import combine, is_softmax, piecewise
from ._links import case_split_proofs, smooth_pieces, ssmax
from ._proof import clear_memo, decide, exact_zero
from ._identities import generic_coverage, generic_rows
