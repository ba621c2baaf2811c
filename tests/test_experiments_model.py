"""Attention kernels (paper-notes#transformers) against float64 oracles written from the table, and the model."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from softpolar.experiments import ATTENTION_KINDS, TransformerConfig, attention_weights, build_model
from theorems import InvalidArgument


def _oracle(kind, q, k, mask, mlp=None):
    """Float64 numpy version of the authors' table of attention variants, row by row (independent of the module)."""
    q, k = q.double().numpy(), k.double().numpy()
    d = q.shape[-1]
    elu1 = lambda z: np.where(z > 0, z, np.expm1(np.minimum(z, 0))) + 1
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    fam, _, norm = kind.partition("-")
    if kind == "gated-softmax":  # the gate acts on the attention output, not on the weights
        fam = "softmax"
    if fam == "softmax1":  # Miller's softmax-off-by-one: e^s / (1 + sum of the visible e^s)
        e = np.exp(s) * mask
        return e / (1.0 + e.sum(-1, keepdims=True))
    if fam == "softmax":
        z = np.where(mask, s, -np.inf)
        z = np.exp(z - z.max(-1, keepdims=True))
        return z / z.sum(-1, keepdims=True)
    w = {"sigmoid": lambda: 1 / (1 + np.exp(-s)),
         "eluelu": lambda: elu1(q) @ np.swapaxes(elu1(k), -1, -2),
         "elu": lambda: elu1(s),
         "linear": lambda: s,
         "uniform": lambda: np.ones_like(s),
         "mlp": lambda: (mlp(torch.from_numpy(q).float()).double().detach().numpy()
                         @ np.swapaxes(mlp(torch.from_numpy(k).float()).double().detach().numpy(),
                                       -1, -2)) / math.sqrt(d)}[fam]()
    w = w * mask
    if fam == "uniform" or norm == "norm":
        row = w.sum(-1, keepdims=True)
        return w / np.maximum(np.abs(row), 1.0) if fam in ("linear", "mlp") else w / (row + 1e-9)
    return w


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
@pytest.mark.parametrize("causal", [True, False])
def test_kernels_match_the_table(kind, causal, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 3, 5, 4, generator=g), torch.randn(2, 3, 5, 4, generator=g)
    mask = torch.ones(5, 5, dtype=torch.bool).tril() if causal else None
    mlp = None
    if kind.startswith("mlp"):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            mlp = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    got = attention_weights(q, k, kind=kind, mask=mask, mlp=mlp).detach().double().numpy()
    m = np.ones((5, 5), bool) if mask is None else mask.numpy()
    want = _oracle(kind, q, k, m, mlp)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # float32 kernel vs float64 oracle
    assert (got[..., ~m] == 0).all(), "masked weights are exactly 0"


def test_normalized_rows_sum_to_one_and_unnormalized_do_not():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 2, 6, 8, generator=g), torch.randn(1, 2, 6, 8, generator=g)
    mask = torch.ones(6, 6, dtype=torch.bool).tril()
    for kind in ("softmax", "sigmoid-norm", "elu-norm", "eluelu-norm", "uniform"):
        rows = attention_weights(q, k, kind=kind, mask=mask).sum(-1)
        assert torch.allclose(rows, torch.ones_like(rows), atol=1e-6), kind
    # negative control: the same check rejects the unnormalized variants
    for kind in ("sigmoid-unnorm", "elu-unnorm", "eluelu-unnorm"):
        rows = attention_weights(q, k, kind=kind, mask=mask).sum(-1)
        assert not torch.allclose(rows, torch.ones_like(rows), atol=1e-6), kind
    rows = attention_weights(q, k, kind="linear-norm", mask=mask).sum(-1).abs()
    assert (rows <= 1 + 1e-6).all()


def test_mlp_kernel_needs_its_mlp_and_unknown_kinds_are_rejected():
    q = torch.zeros(1, 1, 2, 2)
    with pytest.raises(ValueError, match="mlp"):
        attention_weights(q, q, kind="mlp-norm")
    with pytest.raises(InvalidArgument, match="attention"):
        attention_weights(q, q, kind="cosine")


@pytest.mark.parametrize("positional", ["add", "concat", "none"])
def test_model_shapes_and_causality(positional):
    cfg = TransformerConfig(vocab_size=20, output_dim=7, d_model=16, n_heads=2, positional=positional)
    model = build_model(cfg, seed=0)
    ids = torch.randint(0, 20, (3, 6), generator=torch.Generator().manual_seed(1))
    out = model(ids)
    assert out["logits"].shape == (3, 6, 7) and out["logits"].dtype == torch.float32
    assert [a.shape for a in out["attention"]] == [(3, 2, 6, 6)] * 2
    assert len(out["hidden"]) == 3
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 20
    out2 = model(changed)
    assert torch.allclose(out["logits"][:, :-1], out2["logits"][:, :-1], atol=1e-6)
    assert not torch.allclose(out["logits"][:, -1], out2["logits"][:, -1])


def test_noncausal_model_sees_the_future():
    cfg = TransformerConfig(vocab_size=20, output_dim=4, d_model=16, n_heads=2, positional="none",
                            causal=False)
    model = build_model(cfg, seed=0)
    ids = torch.arange(6).view(1, 6)
    changed = ids.clone()
    changed[0, -1] = 9
    assert not torch.allclose(model(ids)["logits"][0, 0], model(changed)["logits"][0, 0])


def test_build_model_is_seeded_and_leaves_the_global_rng_alone():
    cfg = TransformerConfig(vocab_size=10, output_dim=10, d_model=8, n_heads=2)
    state = torch.random.get_rng_state()
    a, b, c = build_model(cfg, seed=1), build_model(cfg, seed=1), build_model(cfg, seed=2)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.embed.weight, b.embed.weight)
    assert not torch.equal(a.embed.weight, c.embed.weight)


@pytest.mark.parametrize("kwargs", [dict(d_model=10, n_heads=4), dict(positional="rotary"),
                                    dict(n_layers=0), dict(positional="concat", d_model=9, n_heads=1)])
def test_config_validation(kwargs):
    with pytest.raises(InvalidArgument):
        TransformerConfig(vocab_size=10, output_dim=10, **kwargs)
