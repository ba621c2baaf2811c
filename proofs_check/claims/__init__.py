r"""The claim modules: the paper's claims by group, the claim families and the model checks.

Each ``_claims_*`` module holds a ``CLAIMS`` list that :mod:`proofs_check.catalog` loads by name;
:mod:`._families` builds the claim families of any (loss, link), :mod:`._check_model` checks a user's model
against them, :mod:`._crosscheck` re-runs a claim's numbers under a second engine.

The door: the names other parts of softpolar may use are :data:`__all__` (sorted); they load on first use
(PEP 562), so importing the wing costs nothing.
"""
from __future__ import annotations

import importlib

#: each name of the door, and the module of this wing that defines it
_DOOR = {
    "BUILDERS": "_families",
    "FAMILIES": "_families",
    "PAPER_INSTANCES": "_families",
    "applicability": "_families",
    "check_model": "_check_model",
    "family_claims": "_families",
    "generic_coverage": "_check_model",
    "optimizer_claims": "_claims_optim",
    "settle_in_t": "_optim_settle",
    "t_grid": "_optim_settle",
    "high_precision_backend": "_claims_common",
}
__all__ = sorted(_DOOR)


def __getattr__(name: str):
    if name in _DOOR:
        value = getattr(importlib.import_module(f".{_DOOR[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
