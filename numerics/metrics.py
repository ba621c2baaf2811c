r"""Polarization metrics of the weights $\varphi(a)$, for every backend.

Each function takes the weights as

* a numpy array (the last axis indexes tokens; leading axes are batch axes),
* a torch tensor (same convention; torch is never imported here), or
* a list of numbers (the mpmath backend: returns ``mpf``, evaluated at the current
  ``mp.prec``).

Definitions (for weights $w$ with $w_i\ge0$ and $\sum_i w_i>0$, $p=w/\sum_i w_i$; for
normalized links $p=w$):

* :func:`entropy` $H=-\sum_i p_i\log p_i$ ($0\log0=0$). For weights that are not a
  nonnegative nonzero vector (``sum-norm`` can leave the simplex) $H$ is undefined:
  NaN. For the unnormalized ``sigmoid`` link this is the entropy of the normalized
  gates, the quantity the authors plot (paper-notes#alternatives).
* :func:`max_weight` $\max_i w_i$ and :func:`argmax` (first maximiser).
* :func:`one_minus_max` $1-\max_i p_i=\sum_{j\ne i^\star}p_j$, summed from the small
  weights so it keeps full relative precision when $p$ is nearly one-hot (claim 18
  needs $1-\max_i s_i$ at $t=10^{100}$, where it is about $3\cdot10^{-5}$).
"""
from __future__ import annotations

import math

import mpmath
import numpy as np


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _is_list(x) -> bool:
    return isinstance(x, (list, tuple))


def entropy(weights):
    """Shannon entropy of the normalized weights (natural log); NaN where undefined."""
    if _is_list(weights):
        w = [mpmath.mpf(x) for x in weights]
        total = mpmath.fsum(w)
        if any(x < 0 for x in w) or not total > 0:
            return mpmath.mpf("nan")
        return -mpmath.fsum(x / total * mpmath.log(x / total) for x in w if x > 0)
    if _is_torch(weights):
        import torch
        w = weights
        total = w.sum(dim=-1, keepdim=True)
        p = w / total
        terms = torch.where(p > 0, p * torch.log(torch.where(p > 0, p, torch.ones_like(p))),
                            torch.zeros_like(p))
        H = -terms.sum(dim=-1)
        bad = (w < 0).any(dim=-1) | ~(total[..., 0] > 0)
        return torch.where(bad, torch.full_like(H, math.nan), H)
    w = np.asarray(weights, dtype=np.float64)
    total = np.sum(w, axis=-1, keepdims=True)
    bad = np.any(w < 0, axis=-1) | ~(total[..., 0] > 0)
    safe_total = np.where(total > 0, total, 1.0)
    p = w / safe_total
    logp = np.log(np.where(p > 0, p, 1.0))
    H = -np.sum(np.where(p > 0, p * logp, 0.0), axis=-1)
    return np.where(bad, np.nan, H)


def max_weight(weights):
    """$\\max_i w_i$ of the raw weights."""
    if _is_list(weights):
        return max(mpmath.mpf(x) for x in weights)
    if _is_torch(weights):
        return weights.amax(dim=-1)
    return np.max(np.asarray(weights, dtype=np.float64), axis=-1)


def argmax(weights):
    """Index of the largest weight (first one on ties); ints (numpy / torch int64 arrays)."""
    if _is_list(weights):
        w = [mpmath.mpf(x) for x in weights]
        return max(range(len(w)), key=lambda i: (w[i], -i))
    if _is_torch(weights):
        return weights.argmax(dim=-1)
    return np.argmax(np.asarray(weights, dtype=np.float64), axis=-1)


def one_minus_max(weights):
    """$1-\\max_i p_i$ of the normalized weights, summed from the other weights; NaN where
    the weights are not a nonnegative nonzero vector."""
    if _is_list(weights):
        w = [mpmath.mpf(x) for x in weights]
        total = mpmath.fsum(w)
        if any(x < 0 for x in w) or not total > 0:
            return mpmath.mpf("nan")
        k = argmax(w)
        return mpmath.fsum(x for i, x in enumerate(w) if i != k) / total
    if _is_torch(weights):
        import torch
        w = weights
        total = w.sum(dim=-1)
        k = w.argmax(dim=-1, keepdim=True)
        others = w.scatter(-1, k, torch.zeros_like(k, dtype=w.dtype)).sum(dim=-1)
        bad = (w < 0).any(dim=-1) | ~(total > 0)
        return torch.where(bad, torch.full_like(total, math.nan), others / total)
    w = np.asarray(weights, dtype=np.float64)
    total = np.sum(w, axis=-1)
    k = np.argmax(w, axis=-1)
    mask = np.arange(w.shape[-1]) == k[..., None]
    others = np.sum(np.where(mask, 0.0, w), axis=-1)
    bad = np.any(w < 0, axis=-1) | ~(total > 0)
    return np.where(bad, np.nan, others / np.where(total > 0, total, 1.0))
