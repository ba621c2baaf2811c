r"""The claim modules: the paper's claims by group, the claim families and the model checks.

Each ``_claims_*`` module holds a ``CLAIMS`` list that :mod:`proofs_check.catalog` loads by name;
:mod:`._families` builds the claim families of any (loss, link), :mod:`._check_model` checks a user's model
against them, :mod:`._crosscheck` re-runs a claim's numbers under a second engine.

The door: the names other parts of softpolar may use are :data:`__all__` (sorted); they load on first use
(PEP 562), so importing the wing costs nothing.
"""
from __future__ import annotations

import importlib

#: each name of the door, and the module of this wing that defines it (``module:name`` where it is named so there)
_DOOR = {
    "BANDIT_TIMES": "_sinks_bandit",
    "BANDIT_TOL": "_sinks_bandit",
    "BUILDERS": "_families",
    "FAMILIES": "_families",
    "PAPER_INSTANCES": "_families",
    "SINK2_CROSSCHECK_TOL": "_sinks_sink2:CROSSCHECK_TOL",
    "SINK2_DPS": "_sinks_sink2",
    "SINK2_POSITIVE_U0": "_sinks_sink2",
    "SINK_EPS": "_sinks_sink2",
    "TAKEOVER_EPS": "_sinks_sink2",
    "VERTEX_B": "_claims_regression",
    "applicability": "_families",
    "authors_tied": "_claims_common",
    "bandit_check": "_sinks_bandit",
    "bandit_constant": "_sinks_bandit",
    "bandit_control": "_sinks_bandit",
    "bandit_witness": "_sinks_bandit",
    "c10_run": "_claims_calculus",
    "check_model": "_check_model",
    "engine_crosscheck": "_crosscheck",
    "family_claims": "_families",
    "generic_coverage": "_check_model",
    "high_precision_backend": "_claims_common",
    "logistic_row": "_claims_regression",
    "optimizer_claims": "_claims_optim",
    "partial_polarization_test": "_claims_regression",
    "reduced_instances": "_crosscheck",
    "settle_in_t": "_optim_settle",
    "sink2_check": "_sinks_sink2",
    "sink2_control": "_sinks_sink2",
    "sink2_run": "_sinks_sink2",
    "sink2_takeover": "_sinks_sink2",
    "sink2_witness": "_sinks_sink2",
    "sink_cert_verdict": "_sinks_sink2",
    "square_partial_runs": "_claims_regression",
    "square_vertex_runs": "_claims_regression",
    "t_grid": "_optim_settle",
    "tied_aligned_runs": "_claims_alternatives",
    "tied_maximum": "_claims_regression",
    "with_engine_crosscheck": "_crosscheck",
}
__all__ = sorted(_DOOR)


def __getattr__(name: str):
    if name in _DOOR:
        module, _, inner = _DOOR[name].partition(":")
        value = getattr(importlib.import_module(f".{module}", __name__), inner or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
