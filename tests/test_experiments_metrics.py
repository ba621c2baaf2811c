"""Sink / sparsity / massive-activation / flip metrics on hand-built inputs with closed forms."""
from __future__ import annotations

import numpy as np
import pytest

from softpolar.experiments import (attention_entropy, bos_share, gu_alpha, gu_sink_rate, massive_activation_ratio,
                         max_share, single_token_flip_rate, sink_head_fraction)
from theorems import InvalidArgument


def _causal_uniform(T, B=1, H=1):
    a = np.tril(np.ones((T, T)))
    a = a / a.sum(-1, keepdims=True)
    return np.broadcast_to(a, (B, H, T, T)).copy()


def _all_on_bos(T, B=1, H=1):
    a = np.zeros((B, H, T, T))
    a[..., 0] = 1.0
    return a


def test_bos_share_closed_forms():
    T = 12
    assert np.allclose(bos_share(_all_on_bos(T)), 1.0)
    # uniform causal rows: query q puts 1/(q+1) on BOS; queries 1..9 each sum to 1
    want = np.mean([1 / (q + 1) for q in range(1, T - 2)])
    assert np.allclose(bos_share(_causal_uniform(T)), want)
    # per-head result, averaged over the batch (per-sequence ratio first)
    a = np.concatenate([_all_on_bos(T), _causal_uniform(T)], axis=0)
    assert np.allclose(bos_share(a), (1 + want) / 2)


def test_bos_share_signed_vs_absolute():
    a = _all_on_bos(6)
    a[..., 1] = -0.5  # a signed kernel: BOS 1, another key -0.5
    assert np.allclose(bos_share(a, absolute=False), 2.0)  # the authors' formula: not a share
    assert np.allclose(bos_share(a), 1 / 1.5)


def test_sink_head_fraction_applies_the_accuracy_filter():
    runs = [{"accuracy": 0.99, "bos_share": [[0.1, 0.1], [0.95, 0.5]]},
            {"accuracy": 0.97, "bos_share": [[0.1, 0.1], [0.95, 0.99]]},
            {"accuracy": 0.50, "bos_share": [[0.1, 0.1], [0.0, 0.0]]}]
    frac, used, total = sink_head_fraction(runs)
    assert (frac, used, total) == (0.75, 2, 3)
    assert sink_head_fraction(runs[2:]) == (None, 0, 1)
    # the threshold is strict: exactly 0.9 is not a sink
    assert sink_head_fraction([{"accuracy": 1.0, "bos_share": [[0], [0.9]]}])[0] == 0.0


def test_gu_sink_rate_and_normalization():
    T = 16  # uniform causal alpha_0 = H_T / T: 0.21 < 0.3 at T = 16 (but 0.34 at T = 8)
    layers = [_all_on_bos(T, H=2), _causal_uniform(T, H=2)]
    assert gu_sink_rate(layers) == 0.5  # 2 of 4 heads
    # uniform causal: alpha_0 = mean_i 1/(i+1)
    assert np.allclose(gu_alpha(_causal_uniform(T)), np.mean(1 / np.arange(1, T + 1)))
    # an unnormalized head of constant 0.5 weights is not a sink after row normalization ...
    flat = 0.5 * np.tril(np.ones((1, 1, T, T)))
    assert gu_sink_rate([flat]) == 0.0
    # ... but it would be one without it (the reason for the normalization)
    assert gu_alpha(flat, normalize=False)[0] > 0.3


def test_max_share_and_entropy():
    T = 5
    assert np.allclose(max_share(_all_on_bos(T)), 1.0)
    assert np.allclose(attention_entropy(_all_on_bos(T)), 0.0)
    uni = np.full((1, 1, T, T), 1.0 / T)
    assert np.allclose(max_share(uni, query=-1), 1.0 / T)
    assert np.allclose(attention_entropy(uni, query=-1), np.log(T))
    signed = np.full((1, 1, T, T), -1.0)
    signed[..., 0] = 3.0  # max/sum = 3 / (3 - 4) = -3: clipped to 0
    assert max_share(signed, query=-1, clip=True)[0] == 0.0
    with pytest.raises(InvalidArgument):
        max_share(np.ones((2, 2)))


def test_massive_activation_ratio():
    h = np.ones((2, 4, 3))
    h[:, 0, 1] = -500.0
    assert np.allclose(massive_activation_ratio(h, token=0), 500.0)
    assert np.allclose(massive_activation_ratio(h, token=None), 1.0)


def _oracle_model(vocab=41, labels=4):
    """A single-token model: the CLS row attends only to a "favourite" token (the first token
    of each group) and predicts its group; without a favourite it falls back to a majority vote."""
    group = (vocab - 1) // labels
    majority = _majority_model(vocab, labels)

    def predict(ids):
        ids = np.asarray(ids)
        pred, attn = majority(ids)
        attn = attn.copy()
        fav = ((ids - 1) % group == 0) & (ids != 0)
        for i in np.flatnonzero(fav.any(1)):
            j = int(np.flatnonzero(fav[i])[0])
            pred[i] = (ids[i, j] - 1) // group
            attn[i] = 0.0
            attn[i, 0, 0, j] = 1.0
        return pred, attn
    return predict


def _majority_model(vocab=41, labels=4):
    group = (vocab - 1) // labels

    def predict(ids):
        ids = np.asarray(ids)
        lab = (ids[:, :-1] - 1) // group
        votes = np.stack([(lab == c).sum(1) for c in range(labels)], 1)
        return votes.argmax(1), np.full((len(ids), 1, 1, ids.shape[1]), 1.0 / ids.shape[1])
    return predict


def test_flip_rate_detects_a_single_token_model_and_its_control():
    from softpolar.experiments import make_classification_data

    x, y = make_classification_data(200, seed=0)
    # a single-token model flips every time on its top-1 token ...
    assert single_token_flip_rate(_oracle_model(), x, y, n_pairs=100, seed=1) == 1.0
    # ... and never on its least-attended token (negative control)
    assert single_token_flip_rate(_oracle_model(), x, y, n_pairs=100, seed=1, rank=-1) == 0.0
    # a majority-vote model is not fooled by one token
    assert single_token_flip_rate(_majority_model(), x, y, n_pairs=100, seed=1) == 0.0
