"""softmax1 and gated attention as transformer kernels: the kernel against an explicit construction, masking,
causality, the trainable gate, the grids that run them, and stored results that stay valid."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from softpolar.experiments import (ATTENTION_KINDS, RunConfig, TransformerConfig, attention_weights,
                                   build_model, grid_configs)
from softpolar.experiments import AUTHORS_KINDS, EXTRA_KINDS, bos_mass, bos_share, row_mass

NEW = ("softmax1", "gated-softmax")


def _qk(seed, shape=(2, 3, 6, 4), scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(*shape, generator=g), scale * torch.randn(*shape, generator=g)


def _softmax1_oracle(q, k, mask):
    """Miller's formula written out in float64: e^{s_ij} / (1 + sum_{visible j'} e^{s_ij'}), 0 where masked."""
    q, k = q.double().numpy(), k.double().numpy()
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    e = np.exp(s) * mask
    return e / (1.0 + e.sum(-1, keepdims=True))


def test_the_table_has_the_two_new_kernels_marked_as_ours():
    assert set(NEW) == set(EXTRA_KINDS) and len(AUTHORS_KINDS) == 12
    assert all(ATTENTION_KINDS[k].origin == "D" and ATTENTION_KINDS[k].code_name == "" for k in NEW)
    assert not ATTENTION_KINDS["softmax1"].normalized and not ATTENTION_KINDS["softmax1"].gate
    assert ATTENTION_KINDS["gated-softmax"].normalized and ATTENTION_KINDS["gated-softmax"].gate
    assert not any(ATTENTION_KINDS[k].gate for k in AUTHORS_KINDS)


@pytest.mark.parametrize("causal", [True, False])
def test_softmax1_is_softmax_over_a_zero_logit_sink_and_rows_sum_below_one(causal, seed):
    q, k = _qk(seed)
    mask = torch.ones(6, 6, dtype=torch.bool).tril() if causal else None
    m = np.ones((6, 6), bool) if mask is None else mask.numpy()
    got = attention_weights(q, k, kind="softmax1", mask=mask).double().numpy()
    np.testing.assert_allclose(got, _softmax1_oracle(q, k, m), rtol=1e-5, atol=1e-7)  # float32 vs float64
    # the same thing as the explicit sink construction: softmax over [0, s_i.] with the sink column dropped
    s = (q @ k.transpose(-2, -1)).double() / 2.0
    s = s.masked_fill(~torch.from_numpy(m), float("-inf"))
    padded = torch.cat([torch.zeros(s.shape[:-1] + (1,), dtype=s.dtype), s], dim=-1)
    np.testing.assert_allclose(got, torch.softmax(padded, -1)[..., 1:].numpy(), rtol=1e-5, atol=1e-7)
    rows = got.sum(-1)
    assert (rows < 1.0).all() and (rows > 0.0).all()
    assert (got[..., ~m] == 0).all(), "masked weights are exactly 0"
    # negative control: plain softmax on the same logits fails the "below one" check
    soft = attention_weights(q, k, kind="softmax", mask=mask).double().numpy().sum(-1)
    assert not (soft < 1.0 - 1e-6).all()


def test_softmax1_is_stable_for_large_logits_and_gives_mass_to_the_sink_for_small_ones():
    q, k = _qk(3, scale=30.0)  # logits of order 1e3: exp overflows float32 without the shift
    a = attention_weights(q, k, kind="softmax1", mask=torch.ones(6, 6, dtype=torch.bool).tril())
    assert torch.isfinite(a).all() and (a.sum(-1) <= 1.0 + 1e-6).all()
    # all logits very negative: almost all the mass goes to the implicit sink
    q, k = torch.ones(1, 1, 3, 4), -torch.ones(1, 1, 3, 4) * 5.0
    assert (attention_weights(q, k, kind="softmax1").sum(-1) < 1e-3).all()


def test_gated_softmax_weights_are_softmax():
    q, k = _qk(5)
    mask = torch.ones(6, 6, dtype=torch.bool).tril()
    assert torch.equal(attention_weights(q, k, kind="gated-softmax", mask=mask),
                       attention_weights(q, k, kind="softmax", mask=mask))


def _cfg(kind, **kw):
    return TransformerConfig(vocab_size=20, output_dim=20, d_model=16, n_heads=2, attention=kind, **kw)


@pytest.mark.parametrize("kind", NEW)
def test_future_tokens_change_nothing_before_them(kind):
    model = build_model(_cfg(kind), seed=0)
    ids = torch.randint(0, 20, (3, 8), generator=torch.Generator().manual_seed(1))
    changed = ids.clone()
    changed[:, 5:] = (changed[:, 5:] + 7) % 20
    a, b = model(ids), model(changed)
    assert torch.allclose(a["logits"][:, :5], b["logits"][:, :5], atol=1e-6)
    for x, y in zip(a["attention"], b["attention"]):
        assert torch.allclose(x[:, :, :5], y[:, :, :5], atol=1e-6)
        assert (x.triu(1) == 0).all(), "no weight on a future key"
    # negative control: the perturbed positions themselves do change
    assert not torch.allclose(a["logits"][:, 5:], b["logits"][:, 5:])


def test_the_gate_is_trainable_starts_near_one_half_and_is_the_only_difference_from_softmax():
    gated, plain = build_model(_cfg("gated-softmax"), seed=3), build_model(_cfg("softmax"), seed=3)
    gate_params = [n for n, _ in gated.named_parameters() if ".gate." in n]
    assert gate_params == ["blocks.0.gate.weight", "blocks.0.gate.bias", "blocks.1.gate.weight",
                           "blocks.1.gate.bias"]
    assert not any(".gate." in n for n, _ in plain.named_parameters())
    for block in gated.blocks:
        assert torch.equal(block.gate.bias, torch.zeros_like(block.gate.bias))  # documented initial bias 0
    # created after every other module: block 0 draws the same initial values as the ungated model
    sd_g, sd_p = gated.state_dict(), plain.state_dict()
    for name in ("embed.weight", "pos.weight", "blocks.0.q.weight", "blocks.0.o.bias", "blocks.0.mlp.2.weight"):
        assert torch.equal(sd_g[name], sd_p[name]), name
    ids = torch.randint(0, 20, (4, 8), generator=torch.Generator().manual_seed(2))
    out = gated(ids)
    g = torch.cat([x.flatten() for x in out["gates"]])
    assert ((g > 0) & (g < 1)).all() and abs(float(g.detach().mean()) - 0.5) < 0.1
    assert all(x is None for x in plain(ids)["gates"])
    # trainable: a loss gradient reaches the gate, and one optimizer step moves it
    out["logits"].square().mean().backward()
    assert all(p.grad is not None and float(p.grad.abs().max().detach()) > 0
               for n, p in gated.named_parameters() if ".gate." in n)
    before = gated.blocks[0].gate.weight.detach().clone()
    torch.optim.SGD(gated.parameters(), lr=0.1).step()
    assert not torch.equal(before, gated.blocks[0].gate.weight)
    # an open gate (sigma = 1) with the softmax model's other weights is the softmax model
    gated2 = build_model(_cfg("gated-softmax"), seed=3)
    state = {k: v for k, v in plain.state_dict().items()}
    for i in range(2):
        state[f"blocks.{i}.gate.weight"] = torch.zeros(16, 16)
        state[f"blocks.{i}.gate.bias"] = torch.full((16,), 40.0)  # sigmoid(40) == 1.0 in float32
    gated2.load_state_dict(state)
    assert torch.allclose(gated2(ids)["logits"], plain(ids)["logits"], atol=1e-6)
    state["blocks.1.gate.bias"] = torch.full((16,), -40.0)  # a closed gate in layer 1: a different model
    gated2.load_state_dict(state)
    assert not torch.allclose(gated2(ids)["logits"], plain(ids)["logits"], atol=1e-3)


def test_bos_mass_is_the_share_when_rows_sum_to_one_and_smaller_with_a_sink():
    q, k = _qk(7, shape=(4, 2, 8, 4))
    mask = torch.ones(8, 8, dtype=torch.bool).tril()
    soft = attention_weights(q, k, kind="softmax", mask=mask).double().numpy()
    # float32 softmax rows sum to 1 within a few float32 ulps (6e-8 each): rtol 1e-6
    np.testing.assert_allclose(bos_mass(soft), bos_share(soft), rtol=1e-6)
    np.testing.assert_allclose(row_mass(soft), 1.0, rtol=1e-6)
    one = attention_weights(q, k, kind="softmax1", mask=mask).double().numpy()
    assert (bos_mass(one) < bos_share(one)).all() and (row_mass(one) < 1).all()


def test_grids_run_the_new_kernels_for_induction_only_and_old_runs_keep_their_ids():
    tiny = [c.attention for c in grid_configs("induction", "tiny")]
    assert tiny == ["softmax", "sigmoid-unnorm", *NEW]
    assert [c.attention for c in grid_configs("classification", "tiny")] == ["softmax", "sigmoid-unnorm"]
    smoke = [c.attention for c in grid_configs("induction", "smoke")]
    assert smoke == [*AUTHORS_KINDS, *NEW]
    assert {c.attention for c in grid_configs("induction", "paper")} == set(AUTHORS_KINDS)
    assert {c.attention for c in grid_configs("classification", "smoke")} == set(AUTHORS_KINDS)
    # the run ids (file names of stored results) of the existing kernels are those of before the new kernels
    assert RunConfig(task="induction").run_id == "induction-softmax-add-L2H4-s0-b113a1c035"
    assert (RunConfig(task="classification", attention="sigmoid-unnorm").run_id
            == "classification-sigmoid-unnorm-add-L2H4-s0-507c2ba24a")


@pytest.mark.parametrize("kind", NEW)
def test_a_tiny_run_records_mass_row_mass_and_gates(kind):
    from softpolar.experiments import train_run

    cfg = RunConfig(task="induction", attention=kind, d_model=16, n_heads=2, n_train=128, epochs=1,
                    batch_size=64, n_eval=32, n_flip_pairs=10)
    res = train_run(cfg, threads=1)
    assert len(res["bos_mass"]) == 2 and len(res["bos_mass"][1]) == 2
    if kind == "softmax1":
        assert res["gate_mean"] is None and all(0 < m < 1 for m in res["row_mass"][1])
    else:
        assert np.shape(res["gate_mean"]) == (2, 2) and all(0 < g < 1 for g in res["gate_mean"][1])
        np.testing.assert_allclose(res["row_mass"][1], 1.0, rtol=1e-6)
