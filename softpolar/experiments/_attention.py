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

Two kernels that are not in the authors' table were added here [D] to ask whether the sink
goes away when the model has another way to "do nothing":

* ``softmax1`` (softmax-off-by-one, E. Miller 2023): $A_{ij}=e^{s_{ij}}/(1+\sum_{j'}e^{s_{ij'}})$,
  the sum over the visible keys only. It is softmax over the row $[0, s_{i\cdot}]$ with the
  extra entry dropped: an explicit sink token with logit 0 and value vector 0, so a head
  can put mass on "nothing" instead of on BOS. Rows sum to $<1$ (``normalized=False``: the
  row mass is free in $(0,1)$); computed as a softmax over the padded row, so it is as
  stable as softmax for large logits.
* ``gated-softmax`` (gated attention, Qiu et al. 2025, arXiv 2505.06708): the weights are
  plain softmax; the block multiplies the attention output by a sigmoid gate before
  $W_O$, $\mathrm{out}_i=W_O\,[\sigma(W_\theta y_i+b_\theta)\odot(A V)_i]$, with $y_i$ the
  pre-LayerNormed hidden state at query position $i$. We implement the variant Qiu et al.
  recommend and study most (their "G1"): gate at the attention (SDPA) output, elementwise
  (one gate per channel, $d_{\rm model}$ gates per position, so each head's $d_h$ channels
  have their own gates: head-specific), query-dependent, multiplicative sigmoid. The
  head-wise variant (one scalar per head) is cheaper but the elementwise one is what their
  headline sink and massive-activation numbers use. The gate is a trainable
  ``nn.Linear(d_model, d_model)`` (``gate=True`` here; built in
  :mod:`softpolar.experiments._model`): weight PyTorch's default init, bias 0, so at
  initialization $\sigma(W_\theta y)$ with $W_\theta y$ of standard deviation
  $\approx1/\sqrt3$ for unit-variance $y$: gates start near $0.5$ (roughly
  $0.5\pm0.14$), halving the attention output.

:data:`AUTHORS_KINDS` lists the authors' 12 (the ``paper`` grids and claims C31/C32 use only
those); ``origin`` says which is which.

Masking: softmax (and softmax1, gated-softmax) put $-\infty$ on masked logits; every other kernel multiplies the
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
    """One attention variant: our ``name``, the plot ``label``, the authors' ``code_name``.

    ``normalized``: rows sum to 1. ``gate``: the block gates the attention output (see the
    module docstring). ``origin``: ``"C"`` for the authors' table, ``"D"`` for a kernel added
    here (its ``code_name`` is then ``""``: there is none).
    """

    name: str
    label: str
    code_name: str
    family: str
    normalized: bool
    gate: bool = False
    origin: str = "C"

    def __post_init__(self):
        if self.name.endswith(("-norm", "-unnorm")) and self.name.endswith("-norm") != self.normalized:
            raise ValueError(f"{self.name}: suffix and normalized={self.normalized} disagree")
        if self.origin not in ("C", "D"):
            raise ValueError(f"{self.name}: origin={self.origin!r}; expected 'C' or 'D'")


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
    # not in the authors' table [D]: an explicit zero sink, and a sigmoid gate after attention
    out.append(AttentionKind("softmax1", "softmax1", "", "softmax1", False, origin="D"))
    out.append(AttentionKind("gated-softmax", "gated softmax", "", "softmax", True, gate=True, origin="D"))
    return {k.name: k for k in out}


#: every variant by name: the authors' 12, then ``softmax1`` and ``gated-softmax``.
ATTENTION_KINDS: dict[str, AttentionKind] = _kinds()
#: the authors' 12 (their sweeps; the ``paper`` grids and the claim-31/32 grids use these only).
AUTHORS_KINDS: tuple[str, ...] = tuple(k for k, v in ATTENTION_KINDS.items() if v.origin == "C")
#: the kernels added here [D], in table order.
EXTRA_KINDS: tuple[str, ...] = tuple(k for k, v in ATTENTION_KINDS.items() if v.origin == "D")


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
        ``A`` with masked entries exactly 0. Rows of ``softmax`` (and ``gated-softmax``, whose
        gate acts on the output, not here) and the ``*-norm`` positive kernels sum to 1 (up to
        the $10^{-9}$ guard); ``softmax1`` rows sum to less than 1; unnormalized rows are
        unconstrained.
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
    if spec.family == "softmax1":
        logits = (q @ k.transpose(-2, -1)) * scale
        if mask is not None:
            logits = logits.masked_fill(~mask, float("-inf"))
        sink = torch.zeros(logits.shape[:-1] + (1,), dtype=logits.dtype, device=logits.device)
        return torch.softmax(torch.cat([sink, logits], dim=-1), dim=-1)[..., 1:]
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
