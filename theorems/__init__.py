r"""theorems: the symbolic layer of softpolar (SymPy only).

Definitions of the value-softmax model $\mathcal L(V\varphi(a))$, its gradient flow
derived by SymPy, and the identities the paper's theory rests on, each proven
exactly for concrete sizes and for every size (an index normal form over sums of
symbolic length, :mod:`theorems.id_generic_proofs`), each with negative controls.
"""
from typing import TYPE_CHECKING as _TYPE_CHECKING

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


__all__ += [
    "TAU_SYSTEM_LATEX", "TauSystem", "TrappingRegion", "SignCheck", "InvarianceCheck", "TrappingLemmaReport",
    "tau_system", "check_tau_reduction", "trapping_region", "check_region_sign", "check_invariance",
    "check_gap_identities", "check_case_split", "check_winner_weight", "check_tie_invariance",
    "prove_trapping_lemma",
]


__all__ += ["IDENTITIES", "Identity", "IdentityResult", "get_identity", "run_identities", "scope_report"]


__all__ += ["SymmetryReport", "check_u_shift", "check_a_shift", "check_b_scaling", "prove_symmetries",
            "slice_coverage"]

# helpers of the layers above and of the tests (derive's and check_model's generic rows, the setup time bound, the
# decision procedure's parts, the sink links' pieces): importable from here, not in __all__

#: the door, resolved on first access (PEP 562): importing this package imports nothing beneath it; each
#: name -> (module, attribute), a relative module inside this package, ``None``: the module itself
_DOOR = {
    '__version__': ('._version', '__version__'),
    'InvalidArgument': ('.errors', 'InvalidArgument'),
    'check_choice': ('.errors', 'check_choice'),
    'check_int': ('.errors', 'check_int'),
    'sigmoid': ('._functions', 'sigmoid'),
    'softplus': ('._functions', 'softplus'),
    'check_function_derivatives': ('._functions', 'check_function_derivatives'),
    'Link': ('._links', 'Link'),
    'Loss': ('._losses', 'Loss'),
    'LINKS': ('._models', 'LINKS'),
    'LOSSES': ('._models', 'LOSSES'),
    'SINK_LINKS': ('._models', 'SINK_LINKS'),
    'ENTRY_POINT_GROUP': ('._models', 'ENTRY_POINT_GROUP'),
    'all_links': ('._models', 'all_links'),
    'all_losses': ('._models', 'all_losses'),
    'builtin_link': ('._models', 'builtin_link'),
    'builtin_link_names': ('._models', 'builtin_link_names'),
    'get_link': ('._models', 'get_link'),
    'get_loss': ('._models', 'get_loss'),
    'is_builtin': ('._models', 'is_builtin'),
    'is_paper_link': ('._models', 'is_paper_link'),
    'link_name': ('._models', 'link_name'),
    'load_entry_points': ('._models', 'load_entry_points'),
    'load_models_file': ('._models', 'load_models_file'),
    'loss_name': ('._models', 'loss_name'),
    'has_internal_clock': ('._models', 'has_internal_clock'),
    'models_scope': ('._models', 'models_scope'),
    'register': ('._models', 'register'),
    'same_link': ('._models', 'same_link'),
    'same_loss': ('._models', 'same_loss'),
    'SymbolicModel': ('._model', 'SymbolicModel'),
    'optimizers': ('.optimizers', None),
    'Optimizer': ('.optimizers', 'Optimizer'),
    'all_optimizers': ('.optimizers', 'all_optimizers'),
    'get_optimizer': ('.optimizers', 'get_optimizer'),
    'register_optimizer': ('.optimizers', 'register_optimizer'),
    'ProofResult': ('.proof', 'ProofResult'),
    'prove_zero': ('.proof', 'prove_zero'),
    'TAU_SYSTEM_LATEX': ('.trapping', 'TAU_SYSTEM_LATEX'),
    'TauSystem': ('.trapping', 'TauSystem'),
    'TrappingRegion': ('.trapping', 'TrappingRegion'),
    'SignCheck': ('.trapping', 'SignCheck'),
    'InvarianceCheck': ('.trapping', 'InvarianceCheck'),
    'TrappingLemmaReport': ('.trapping', 'TrappingLemmaReport'),
    'tau_system': ('.trapping', 'tau_system'),
    'check_tau_reduction': ('.trapping', 'check_tau_reduction'),
    'trapping_region': ('.trapping', 'trapping_region'),
    'check_region_sign': ('.trapping', 'check_region_sign'),
    'check_invariance': ('.trapping', 'check_invariance'),
    'check_gap_identities': ('.trapping', 'check_gap_identities'),
    'check_case_split': ('.trapping', 'check_case_split'),
    'check_winner_weight': ('.trapping', 'check_winner_weight'),
    'check_tie_invariance': ('.trapping', 'check_tie_invariance'),
    'prove_trapping_lemma': ('.trapping', 'prove_trapping_lemma'),
    'IDENTITIES': ('._identities', 'IDENTITIES'),
    'Identity': ('._identities', 'Identity'),
    'IdentityResult': ('._identities', 'IdentityResult'),
    'get_identity': ('._identities', 'get_identity'),
    'run_identities': ('._identities', 'run_identities'),
    'scope_report': ('._identities', 'scope_report'),
    'SymmetryReport': ('._symmetry', 'SymmetryReport'),
    'check_u_shift': ('._symmetry', 'check_u_shift'),
    'check_a_shift': ('._symmetry', 'check_a_shift'),
    'check_b_scaling': ('._symmetry', 'check_b_scaling'),
    'prove_symmetries': ('._symmetry', 'prove_symmetries'),
    'slice_coverage': ('._symmetry', 'slice_coverage'),
    'DEFAULT_SETUP_TIMEOUT': ('._deadline', 'DEFAULT_SETUP_TIMEOUT'),
    'check_timeout': ('._deadline', 'check_timeout'),
    'setup_deadline': ('._deadline', 'setup_deadline'),
    'combine': ('._id_base', 'combine'),
    'is_softmax': ('._id_base', 'is_softmax'),
    'piecewise': ('._id_base', 'piecewise'),
    'case_split_proofs': ('._links', 'case_split_proofs'),
    'smooth_pieces': ('._links', 'smooth_pieces'),
    'ssmax': ('._links', 'ssmax'),
    'clear_memo': ('.proof', 'clear_memo'),
    'decide': ('.proof', 'decide'),
    'exact_zero': ('.proof', 'exact_zero'),
    'generic_coverage': ('._identities', 'generic_coverage'),
    'generic_rows': ('._identities', 'generic_rows'),
    'run_generic': ('._identities', 'run_generic'),
}

if _TYPE_CHECKING:  # the same names for static readers (type checkers, the docs' API pages)
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
    from .proof import ProofResult, prove_zero
    from .trapping import (
        TAU_SYSTEM_LATEX, TauSystem, TrappingRegion, SignCheck, InvarianceCheck, TrappingLemmaReport,
        tau_system, check_tau_reduction, trapping_region, check_region_sign, check_invariance,
        check_gap_identities, check_case_split, check_winner_weight, check_tie_invariance, prove_trapping_lemma,
    )
    from ._identities import IDENTITIES, Identity, IdentityResult, get_identity, run_identities, scope_report
    from ._symmetry import (
        SymmetryReport, check_u_shift, check_a_shift, check_b_scaling, prove_symmetries, slice_coverage,
    )
    from ._deadline import DEFAULT_SETUP_TIMEOUT, check_timeout, setup_deadline
    from ._id_base import combine, is_softmax, piecewise
    from ._links import case_split_proofs, smooth_pieces, ssmax
    from .proof import clear_memo, decide, exact_zero
    from ._identities import generic_coverage, generic_rows, run_generic


from theorems.door import lazy_door as _lazy_door

__getattr__, __dir__ = _lazy_door(__name__, _DOOR)
