r"""Pluggable attention kernels: softmax and the normalized / unnormalized alternatives [C].

The table of variants follows the authors' ``src/attention.py`` (paper-notes#transformers):
with $s_{ij}=q_i\cdot k_j/\sqrt{d_h}$,

==================  =====================================  ==================================
name                weights $A_{ij}$ before normalization  normalization ("-norm")
==================  =====================================  ==================================
``softmax``         $\mathrm{softmax}_j(s_{ij})$           (built in)
``sigmoid-*``       $\mathrm{sigm}(s_{ij})$                $A/(\sum_j A_{ij}+10^{-9})$
``eluelu-*``        $(\mathrm{elu}(q_i)+1)\cdot(\mathrm{elu}(k_j)+1)$ (no $1/\sqrt{d_h}$)  same
``elu-*``           $\mathrm{elu}(s_{ij})+1$               same
``linear-*``        $s_{ij}$ (raw dot product)             $A/\max(|\sum_j A_{ij}|,1)$
``mlp-*``           $f(q_i)\cdot f(k_j)/\sqrt{d_h}$, $f$ a shared $d_h\to4d_h\to d_h$ GELU MLP   same as linear
``uniform``         $1$                                    $A/(\sum_j A_{ij}+10^{-9})$
==================  =====================================  ==================================

Masking: softmax puts $-\infty$ on masked logits; every other kernel multiplies the
masked weights by 0 *before* normalizing, as in the authors' code [C]. The
unnormalized kernels can therefore put zero total mass on a row (a "no-op"), which is
the paper's explanation of why they need no sink.

Plot labels and the authors' code names are kept in :data:`ATTENTION_KINDS` so
figures and tables use the paper's vocabulary.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from theorems import check_choice

#: added to a row sum before dividing (authors' value [C]).
ROW_SUM_EPS = 1e-9


@dataclass(frozen=True)
class AttentionKind:
    """One attention variant: our ``name``, the plot ``label``, the authors' ``code_name``."""

    name: str
    label: str
    code_name: str
    family: str
    normalized: bool

    def __post_init__(self):
        if "-" in self.name and self.name.endswith("-norm") != self.normalized:
            raise ValueError(f"{self.name}: suffix and normalized={self.normalized} disagree")


def _kinds():
    out = [AttentionKind("softmax", "softmax", "softmax", "softmax", True)]
    for family, label, code in (("sigmoid", "sigmoid", "sigmoid_{}"),
                                ("eluelu", "elu·elu", "linear{}"),
                                ("elu", "elu", "coupled_linear_{}"),
                                ("linear", "linear", "raw_dotproduct_{}"),
                                ("mlp", "mlp", "mlp_{}")):
        for norm in (True, False):
            suffix = "norm" if norm else "unnorm"
            if family == "eluelu":
                code_name = "linear" if norm else "linear_unnorm"
            else:
                code_name = code.format(suffix)
            out.append(AttentionKind(f"{family}-{suffix}", f"{label} ({'norm' if norm else 'unnorm'})",
                                     code_name, family, norm))
    out.append(AttentionKind("uniform", "uniform", "uniform", "uniform", True))
    return {k.name: k for k in out}


#: every variant by name (12, as in the authors' sweeps).
ATTENTION_KINDS: dict[str, AttentionKind] = _kinds()


def get_attention_kind(name: str) -> AttentionKind:
    """The :class:`AttentionKind` called ``name``; :class:`InvalidArgument` otherwise."""
    check_choice("attention", name, ATTENTION_KINDS)
    return ATTENTION_KINDS[name]


def attention_weights(q, k, *, kind: str, mask=None, mlp=None):
    r"""Attention weights $A$ of shape ``(..., T_q, T_k)`` for queries/keys ``(..., T, d_h)``.

    Args:
        q, k: torch tensors ``(..., T, d_h)``.
        kind: a name in :data:`ATTENTION_KINDS`.
        mask: optional bool tensor broadcastable to ``(..., T_q, T_k)``; ``True`` = visible.
        mlp: the shared kernel MLP $f$ (a torch module), required for ``mlp-*`` only.

    Returns:
        ``A`` with masked entries exactly 0. Rows of ``softmax`` and the ``*-norm`` positive
        kernels sum to 1 (up to the $10^{-9}$ guard); unnormalized rows are unconstrained.
    """
    import torch
    import torch.nn.functional as F

    spec = get_attention_kind(kind)
    scale = 1.0 / math.sqrt(q.shape[-1])
    if spec.family == "softmax":
        logits = (q @ k.transpose(-2, -1)) * scale
        if mask is not None:
            logits = logits.masked_fill(~mask, float("-inf"))
        return torch.softmax(logits, dim=-1)
    if spec.family == "sigmoid":
        w = torch.sigmoid((q @ k.transpose(-2, -1)) * scale)
    elif spec.family == "eluelu":
        w = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)
    elif spec.family == "elu":
        w = F.elu((q @ k.transpose(-2, -1)) * scale) + 1
    elif spec.family == "linear":
        w = (q @ k.transpose(-2, -1)) * scale
    elif spec.family == "mlp":
        if mlp is None:
            raise ValueError("attention kind 'mlp-*' needs the kernel MLP (mlp=...)")
        w = (mlp(q) @ mlp(k).transpose(-2, -1)) * scale
    else:  # uniform
        w = torch.ones(q.shape[:-1] + (k.shape[-2],), dtype=q.dtype, device=q.device)
    if mask is not None:
        w = w * mask.to(w.dtype)
    if not spec.normalized:
        return w
    row = w.sum(dim=-1, keepdim=True)
    if spec.family in ("linear", "mlp"):
        return w / torch.clamp(row.abs(), min=1.0)
    return w / (row + ROW_SUM_EPS)
