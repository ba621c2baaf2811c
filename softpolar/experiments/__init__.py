r"""experiments: transformer-level evidence for the paper's claims 31-33 (attention sinks,
single-token flips, a real pretrained model), offline.

Sits on top of :mod:`theorems` (validation, ``InvalidArgument``) and is never imported by
``theorems`` / ``numerics`` / ``proofs_check`` at import time. Importing this package does
not import torch: public names are resolved lazily on first access.

Public names:

* tasks: :func:`make_induction_data`, :func:`make_classification_data`;
* models: :data:`ATTENTION_KINDS`, :func:`attention_weights`, :class:`TransformerConfig`,
  :func:`build_model`;
* metrics: :func:`bos_share`, :func:`sink_head_fraction`, :func:`gu_sink_rate`,
  :func:`max_share`, :func:`massive_activation_ratio`, :func:`single_token_flip_rate`,
  :func:`attention_entropy`;
* runs and grids: :class:`RunConfig`, :func:`train_run`, :func:`grid_configs`,
  :func:`run_grid`;
* SmolLM2: :func:`pretrained_sinks`, :func:`find_gguf`, :class:`PretrainedUnavailable`;
* claims 31-33 for ``softpolar verify``: :mod:`softpolar.experiments.claims`.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "make_induction_data": "_tasks", "make_classification_data": "_tasks",
    "ATTENTION_KINDS": "_attention", "AttentionKind": "_attention",
    "attention_weights": "_attention",
    "TransformerConfig": "_model", "build_model": "_model",
    "bos_share": "_metrics", "sink_head_fraction": "_metrics", "gu_sink_rate": "_metrics",
    "max_share": "_metrics", "massive_activation_ratio": "_metrics",
    "single_token_flip_rate": "_metrics", "attention_entropy": "_metrics",
    "RunConfig": "_train", "train_run": "_train",
    "grid_configs": "_grid", "run_grid": "_grid", "execute": "_grid",
    "pretrained_sinks": "_pretrained", "find_gguf": "_pretrained",
    "PretrainedUnavailable": "_pretrained",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
