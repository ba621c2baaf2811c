r"""softpolar: machine-checked theory of *Gradient Flow Polarizes Softmax Outputs towards
Low-Entropy Solutions* (Varre, Rofin, Flammarion, arXiv 2603.06248).

The product's face. The three layers underneath are import packages of their own:
:mod:`theorems` (SymPy derivations and proofs), :mod:`numerics` (generated numerics,
integrators, validated numerics) and :mod:`proofs_check` (claims, checks, reports, the CLI).
This package re-exports what a user calls and holds the top floor,
:mod:`softpolar.experiments` (transformer-level evidence) and :mod:`softpolar.benchmarks`.

Importing it is cheap: names are resolved on first access (numpy, torch and SymPy load only
when a function that needs them is used).

``python -m softpolar`` is the command line (same as the ``softpolar`` console script).
"""
from __future__ import annotations

import importlib

#: public name -> (module, attribute); ``__version__`` too, so that importing softpolar (or a submodule such as
#: softpolar.experiments) does not import proofs_check and the layers under it
_EXPORTS = {
    "__version__": ("proofs_check", "__version__"),
    # integration
    "Problem": ("numerics", "Problem"),
    "PRESETS": ("numerics", "PRESETS"),
    "simulate": ("numerics", "simulate"),
    "integrate_batch": ("numerics", "integrate_batch"),
    "gradient_descent": ("numerics", "gradient_descent"),
    "reduced_logistic": ("numerics", "reduced_logistic"),
    "Trajectory": ("numerics", "Trajectory"),
    "BatchTrajectory": ("numerics", "BatchTrajectory"),
    "plot_trajectory": ("numerics", "plot_trajectory"),
    "save_trajectory": ("numerics", "save_trajectory"),
    "load_trajectory": ("numerics", "load_trajectory"),
    "IntegrationError": ("numerics", "IntegrationError"),
    "flow_rhs": ("numerics", "flow_rhs"),
    # validated numerics
    "certify": ("numerics", "certify"),
    "atlas": ("softpolar.atlas", None),  # the callable atlas wing: softpolar.atlas(spec, out, ...)
    "check_certificate": ("numerics", "check_certificate"),
    "load_init": ("numerics", "load_init"),
    "load_certificate": ("numerics", "load_certificate"),
    # definitions: bring your own link and loss
    "Link": ("theorems", "Link"),
    "Loss": ("theorems", "Loss"),
    "register": ("theorems", "register"),
    "load_models_file": ("theorems", "load_models_file"),
    "get_link": ("theorems", "get_link"),
    "get_loss": ("theorems", "get_loss"),
    "check_model": ("proofs_check.claims._check_model", "check_model"),
    # symbolic layer
    "SymbolicModel": ("theorems", "SymbolicModel"),
    "run_identities": ("theorems", "run_identities"),
    "prove_zero": ("theorems", "prove_zero"),
    "derive": ("proofs_check.derivation", "build_derivation"),
    # claims
    "registry": ("proofs_check", "registry"),
    "select": ("proofs_check", "select"),
    "run_claim": ("proofs_check", "run_claim"),
    "Context": ("proofs_check", "Context"),
    "write_report": ("proofs_check", "write_report"),
    # errors
    "InvalidArgument": ("theorems", "InvalidArgument"),
    # the command line as a function: main(["verify", "--profile", "quick"]) returns the exit code
    "main": ("softpolar._cli", "main"),
}

__all__ = [*_EXPORTS]

# this layer's claims (C31-C33 of the transformer experiments, ATLAS) and subcommands (experiment, bench,
# atlas) join `softpolar verify` and the CLI through the entry-point groups `softpolar.claims` and
# `softpolar.commands` (setup.cfg), so `python -m proofs_check` is the same program


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'softpolar' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
