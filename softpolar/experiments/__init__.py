r"""experiments: transformer-level evidence for the paper's claims 31-33 (attention sinks,
single-token flips, a real pretrained model), offline.

Sits on top of :mod:`theorems` (validation, ``InvalidArgument``) and is never imported by
``theorems`` / ``numerics`` / ``proofs_check`` at import time. Importing this package does
not import torch: public names are resolved lazily on first access.

Public names:

* tasks: :func:`make_induction_data`, :func:`make_classification_data`, :func:`token_label`,
  :data:`BOS`, :data:`CLS`;
* models: :data:`ATTENTION_KINDS`, :data:`AUTHORS_KINDS`, :data:`EXTRA_KINDS`,
  :func:`attention_weights`, :class:`TransformerConfig`, :func:`build_model`;
* metrics: :func:`bos_share`, :func:`bos_mass`, :func:`row_mass`, :func:`sink_head_fraction`,
  :func:`gu_alpha`, :func:`gu_sink_rate`, :func:`max_share`, :func:`massive_activation_ratio`,
  :func:`single_token_flip_rate`, :func:`attention_entropy`;
* runs and grids: :class:`RunConfig`, :func:`train_run`, :func:`grid_configs`,
  :func:`run_grid` (the grid runner itself: :mod:`softpolar.experiments.grid`);
* result folders of ``softpolar experiment``: :data:`MARKER`, :data:`MARKER_VERSION`;
* SmolLM2: :func:`pretrained_sinks`, :func:`find_gguf`, :class:`PretrainedUnavailable`
  (:mod:`softpolar.experiments.pretrained`), its GGUF reader and forward pass
  (:mod:`softpolar.experiments.llama`) and byte-level BPE (:mod:`softpolar.experiments.tokenizer`);
* claims 31-33 for ``softpolar verify``: :mod:`softpolar.experiments.claims`.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "make_induction_data": "_tasks", "make_classification_data": "_tasks",
    "token_label": "_tasks", "BOS": "_tasks", "CLS": "_tasks",
    "ATTENTION_KINDS": "_attention", "AttentionKind": "_attention",
    "AUTHORS_KINDS": "_attention", "EXTRA_KINDS": "_attention",
    "attention_weights": "_attention",
    "TransformerConfig": "_model", "build_model": "_model",
    "bos_share": "_metrics", "sink_head_fraction": "_metrics", "gu_sink_rate": "_metrics",
    "max_share": "_metrics", "massive_activation_ratio": "_metrics",
    "single_token_flip_rate": "_metrics", "attention_entropy": "_metrics",
    "bos_mass": "_metrics", "row_mass": "_metrics", "gu_alpha": "_metrics",
    "RunConfig": "_train", "train_run": "_train",
    "grid_configs": "grid", "run_grid": "grid", "execute": "grid",
    "pretrained_sinks": "pretrained", "find_gguf": "pretrained",
    "PretrainedUnavailable": "pretrained",
    "MARKER": "_cmd", "MARKER_VERSION": "_cmd",
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
