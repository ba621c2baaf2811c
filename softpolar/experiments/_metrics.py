r"""Sink, sparsity, massive-activation and single-token-flip metrics.

All functions take numpy arrays (or anything ``np.asarray`` accepts, e.g. CPU
tensors) and return plain numpy / Python numbers; nothing here needs torch.
Attention arrays have shape ``(B, H, T, T)`` (batch, head, query, key).

* :func:`bos_share` -- the authors' per-head BOS share [C]:
  $\mathrm{sink}_{h}=\frac1B\sum_b\frac{\sum_{q\in Q}A^{(b)}_{q,0}}{\sum_{q\in Q}\sum_k A^{(b)}_{q,k}}$,
  $Q=\{1,\dots,T-3\}$ (``[1:-2]``: not BOS, not the last two positions).
* :func:`bos_mass` -- the attention *mass* on BOS, $\frac1{B|Q|}\sum_b\sum_{q\in Q}A^{(b)}_{q,0}$
  per head, not divided by the row mass [D]; equal to :func:`bos_share` when rows sum to 1
  (softmax, gated softmax), smaller for ``softmax1`` when mass goes to its implicit zero
  sink; :func:`row_mass` is the mean row sum over the same queries.
* :func:`sink_head_fraction` -- the sink-head rule [C]: share $>0.9$, layer index 1 only,
  runs with induction accuracy $>0.95$ only.
* :func:`gu_sink_rate` -- Gu et al. (2024, "When attention sink emerges") with
  $\varepsilon=0.3$: $\alpha^{\ell,h}_k=\frac1{T-k}\sum_{i\ge k}A^{\ell,h}_{i,k}$ (mean
  attention key $k$ receives from the queries that see it), rate $=$ fraction of heads
  with $\alpha_k>\varepsilon$ (rows normalized first, see :func:`gu_alpha`).
* :func:`max_share` -- the per-head sparsity score [C]
  $\frac{\max_k A_{q,k}}{\sum_k A_{q,k}}$, averaged over queries and sequences.
* :func:`massive_activation_ratio` -- $\max_j|h_{t,j}|/\operatorname{median}_{t',j}|h_{t',j}|$
  on the residual stream (Sun et al. 2024's "massive activations"), per layer.
* :func:`single_token_flip_rate` -- the label-mixing test of the classification task [C].
* :func:`attention_entropy` -- Shannon entropy of normalized attention rows (polarization
  = low entropy), in nats.

Signed kernels (``linear-*``, ``mlp-*``) can produce negative weights, for which the
authors' BOS share is not a share (it can exceed 1 or be negative; we saw 7.05 and
-160 in smoke runs). :func:`bos_share` therefore has ``absolute=True`` by default,
which applies the same formula to $|A|$; for the non-negative kernels (softmax, sigmoid,
elu, elu·elu, uniform) both versions are identical. This is our choice [D], not the
paper's; the signed version is kept in every result file as ``bos_share_signed``.
"""
from __future__ import annotations

import warnings

import numpy as np

from numerics import entropy
from theorems import InvalidArgument

#: thresholds of the authors' sink-head rule [C] and of Gu et al.'s sink rate.
SINK_SHARE_THRESHOLD = 0.9
MIN_INDUCTION_ACCURACY = 0.95
GU_EPS = 0.3
#: guard added to a denominator, as in the authors' code [C].
_DEN_EPS = 1e-9


def _attention(attn) -> np.ndarray:
    a = np.asarray(attn, dtype=np.float64)
    if a.ndim != 4:
        raise InvalidArgument(f"attention of shape {a.shape} is not allowed; expected (B, H, T, T)")
    return a


def bos_share(attn, *, key: int = 0, queries: slice = slice(1, -2), absolute: bool = True) -> np.ndarray:
    r"""Per-head share of the attention mass that ``queries`` put on ``key`` [C].

    Computed per sequence, then averaged over the batch (the authors'
    ``rel_attn_bos_global`` evaluated one sequence at a time). Returns shape ``(H,)``.
    """
    a = _attention(attn)
    if absolute:
        a = np.abs(a)
    rows = a[:, :, queries, :]
    num = rows[..., key].sum(axis=-1)
    den = rows.sum(axis=(-1, -2))
    return (num / (den + _DEN_EPS)).mean(axis=0)


def bos_mass(attn, *, key: int = 0, queries: slice = slice(1, -2)) -> np.ndarray:
    r"""Per-head mean attention mass $A_{q,\mathrm{key}}$ over ``queries`` and the batch [D].

    Same queries as :func:`bos_share` (``[1:-2]``), but no division by the row mass: a head
    that sends its mass to softmax1's implicit sink has a small BOS mass even when the
    little it puts on real tokens is all on BOS. Signed weights are taken as $|A|$, as in
    :func:`bos_share`. Returns shape ``(H,)``.
    """
    a = np.abs(_attention(attn))
    return a[:, :, queries, key].mean(axis=(0, 2))


def row_mass(attn, *, queries: slice = slice(1, -2)) -> np.ndarray:
    r"""Per-head mean row mass $\sum_k|A_{q,k}|$ over ``queries`` and the batch (1 for softmax)."""
    a = np.abs(_attention(attn))
    return a[:, :, queries, :].sum(axis=-1).mean(axis=(0, 2))


def sink_heads(shares, *, threshold: float = SINK_SHARE_THRESHOLD) -> np.ndarray:
    """Boolean mask of sink heads: share strictly above ``threshold`` (0.9) [C]."""
    return np.asarray(shares, dtype=np.float64) > threshold


def sink_head_fraction(runs, *, threshold: float = SINK_SHARE_THRESHOLD,
                       min_accuracy: float = MIN_INDUCTION_ACCURACY, key: str = "bos_share"):
    r"""Mean fraction of layer-1 sink heads over the runs above ``min_accuracy`` [C].

    Args:
        runs: iterable of result dicts with ``"accuracy"`` and ``key`` (a per-layer list
            of per-head shares; layer index 1 is used, or the last layer if there is one).

    Returns:
        ``(fraction or None, n_used, n_total)``; ``None`` when no run passes the
        accuracy filter (the authors' red cross).
    """
    runs = list(runs)
    used = [r for r in runs if r["accuracy"] > min_accuracy]
    if not used:
        return None, 0, len(runs)
    fractions = []
    for r in used:
        layers = r[key]
        layer = layers[1] if len(layers) > 1 else layers[-1]
        fractions.append(float(np.mean(sink_heads(layer, threshold=threshold))))
    return float(np.mean(fractions)), len(used), len(runs)


def gu_alpha(attn, *, key: int = 0, normalize: bool = True) -> np.ndarray:
    r"""$\alpha_k$ per head: mean over queries $i\ge k$ of $A_{i,k}$, averaged over the batch.

    ``normalize`` first rescales every row to $|A_{i,\cdot}|/\sum_j|A_{i,j}|$ (a no-op for
    softmax and the normalized positive kernels). Without it an unnormalized sigmoid head
    at initialisation ($A_{ij}\approx0.5$ everywhere) would count as a sink [D].
    """
    a = _attention(attn)
    if normalize:
        a = np.abs(a)
        a = a / (a.sum(axis=-1, keepdims=True) + _DEN_EPS)
    return a[:, :, key:, key].mean(axis=(0, 2))


def gu_sink_rate(attn_layers, *, key: int = 0, eps: float = GU_EPS) -> float:
    r"""Gu et al.'s sink rate: fraction of all (layer, head) pairs with $\alpha_k>\varepsilon$."""
    alphas = np.concatenate([gu_alpha(a, key=key) for a in attn_layers])
    return float(np.mean(alphas > eps))


def max_share(attn, *, query: int | None = None, clip: bool = False) -> np.ndarray:
    r"""Per-head sparsity score $\max_kA_{q,k}/\sum_kA_{q,k}$, mean over queries and batch.

    ``query=None`` averages over every query row (for a causal mask, query 0 scores 1
    trivially, as in the authors' LLM metric over all valid queries); an int selects
    one row (``-1`` = the CLS row of the classification task). ``clip`` clips each
    score to ``[0, 1]`` (the authors' bar plots; only matters for signed kernels).
    """
    a = _attention(attn)
    rows = a if query is None else a[:, :, query:query + 1 if query != -1 else None, :]
    score = rows.max(axis=-1) / (rows.sum(axis=-1) + _DEN_EPS)
    if clip:
        score = np.clip(score, 0.0, 1.0)
    return score.mean(axis=(0, 2))


def attention_entropy(attn, *, query: int | None = None) -> np.ndarray:
    r"""Per-head mean Shannon entropy (nats) of the rows $p=|A_{q,\cdot}|/\sum_k|A_{q,k}|$.

    Uses :func:`numerics.entropy` (the project's one entropy, $0\log0=0$); rows with zero
    total mass (possible for unnormalized kernels) have no entropy and are left out.
    """
    a = np.abs(_attention(attn))
    rows = a if query is None else a[:, :, query:query + 1 if query != -1 else None, :]
    h = entropy(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN head -> NaN, on purpose
        return np.nanmean(h, axis=(0, 2))


def massive_activation_ratio(hidden, *, token: int | None = 0) -> np.ndarray:
    r"""Per-sequence ratio $\max_j|h_{t,j}|/\operatorname{median}_{t',j}|h_{t',j}|$.

    Args:
        hidden: residual stream ``(B, T, D)`` of one layer.
        token: the position $t$ (``0`` = first token); ``None`` takes the max over all
            positions except 0 (the "any other token" comparison).

    Returns:
        shape ``(B,)``.
    """
    h = np.abs(np.asarray(hidden, dtype=np.float64))
    if h.ndim != 3:
        raise InvalidArgument(f"hidden of shape {h.shape} is not allowed; expected (B, T, D)")
    med = np.median(h.reshape(h.shape[0], -1), axis=1)
    top = h[:, token, :].max(axis=-1) if token is not None else h[:, 1:, :].max(axis=(1, 2))
    return top / med


def single_token_flip_rate(predict, inputs, labels, *, n_pairs: int = 500, seed: int,
                           layer: int = -1, head: int = 0, rank: int = 0) -> float:
    r"""The authors' single-token ("label mixing") test [C].

    For ``n_pairs`` random pairs of evaluation samples with labels $a\ne b$: take the
    content token ranked ``rank`` by the CLS-row attention of (``layer``, ``head``) in
    sample $a$ (``rank=0``: the top-1 token) plus the 9 tokens of sample $b$ other than
    $b$'s top-1, shuffle, append CLS, and ask whether the model predicts $a$. Both
    directions are done; the rate is their average.

    ``rank != 0`` (e.g. ``-1``, the least-attended token) is the negative control: a token the head does *not*
    single out should
    rarely flip the label.

    Args:
        predict: callable ``ids (N, T) int64 -> (pred (N,), cls_attn (N, L, H, T))``.
        inputs, labels: the evaluation set (last column CLS).
    """
    inputs, labels = np.asarray(inputs), np.asarray(labels)
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    if classes.size < 2:
        raise InvalidArgument("labels must contain at least two classes for the flip test")
    ca = rng.integers(0, classes.size, size=n_pairs)
    la, lb = classes[ca], classes[(ca + rng.integers(1, classes.size, size=n_pairs)) % classes.size]
    by = {c: np.flatnonzero(labels == c) for c in classes}
    ia = np.array([rng.choice(by[c]) for c in la])
    ib = np.array([rng.choice(by[c]) for c in lb])
    content = inputs[:, :-1]
    _, cls_attn = predict(inputs)
    order = np.argsort(-np.asarray(cls_attn)[:, layer, head, :-1], axis=1, kind="stable")
    mixed, expected = [], []
    for src, dst, lab in ((ia, ib, la), (ib, ia, lb)):
        single = content[src, order[src, rank]]
        rest = np.take_along_axis(content[dst], order[dst, 1:], axis=1)
        mix = np.concatenate([single[:, None], rest], axis=1)
        mix = rng.permuted(mix, axis=1)
        mixed.append(np.concatenate([mix, inputs[dst, -1:]], axis=1))
        expected.append(lab)
    pred, _ = predict(np.concatenate(mixed))
    return float(np.mean(np.asarray(pred) == np.concatenate(expected)))
