r"""A small pre-LayerNorm transformer with a pluggable attention kernel [C].

Architecture as in the authors' ``TransformerLM`` (paper-notes#transformers): token
embedding, positional embedding combined by ``add`` (same width), ``concat`` (half
token, half position) or ``none``; ``n_layers`` blocks

.. math::
    x \leftarrow x + W_O\,\mathrm{Attn}(\mathrm{LN}_1 x),\qquad
    x \leftarrow x + \mathrm{MLP}(\mathrm{LN}_2 x)

(Q/K/V/O linear maps with bias, MLP ratio 4 with GELU, LayerNorm and MLP
switchable), a final LayerNorm and a linear head on every position. For a gated kernel
(``gated-softmax``, see :mod:`softpolar.experiments._attention`) the attention term is
$W_O\,[\sigma(W_\theta\,\mathrm{LN}_1x+b_\theta)\odot\mathrm{Attn}(\mathrm{LN}_1x)]$, the gate an
elementwise ``nn.Linear(d, d)`` (bias 0 at initialization, so gates start near 0.5); its
modules are created after every other module of the block, so the other kernels'
initializations (and every stored result of them) are unchanged. The attention
weights of every layer are returned so the metrics can read them; the residual
stream after every block is returned for the massive-activation ratio.

Training is float32 on any torch device (``device=``); parameters are initialised
with PyTorch's defaults under an explicit ``seed`` (the global torch RNG is forked
and restored, so building a model never changes the caller's random state).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from theorems import InvalidArgument, check_choice, check_int

from ._attention import ATTENTION_KINDS, attention_weights, get_attention_kind

POSITIONAL = ("add", "concat", "none")


@dataclass(frozen=True)
class TransformerConfig:
    """Shape and variant of :class:`TinyTransformer`; validated at construction."""

    vocab_size: int
    output_dim: int
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    mlp_ratio: int = 4
    use_mlp: bool = True
    use_layernorm: bool = True
    attention: str = "softmax"
    positional: str = "add"
    causal: bool = True
    max_len: int = 64

    def __post_init__(self):
        for name in ("vocab_size", "output_dim", "d_model", "n_layers", "n_heads", "mlp_ratio",
                     "max_len"):
            check_int(name, getattr(self, name), minimum=1)
        check_choice("attention", self.attention, ATTENTION_KINDS)
        check_choice("positional", self.positional, POSITIONAL)
        if self.d_model % self.n_heads:
            raise InvalidArgument(f"d_model={self.d_model!r} is not allowed with n_heads="
                                  f"{self.n_heads!r}; expected d_model divisible by n_heads")
        if self.positional == "concat" and self.d_model % 2:
            raise InvalidArgument(f"d_model={self.d_model!r} must be even with positional='concat'")

    def to_dict(self) -> dict:
        return asdict(self)


def _modules():
    """Build the torch module classes on first use (torch is imported lazily)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cfg: TransformerConfig):
            super().__init__()
            d, self.h = cfg.d_model, cfg.n_heads
            self.dh = d // self.h
            self.attention = cfg.attention
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.ln1 = nn.LayerNorm(d) if cfg.use_layernorm else nn.Identity()
            self.ln2 = nn.LayerNorm(d) if (cfg.use_layernorm and cfg.use_mlp) else nn.Identity()
            self.mlp = (nn.Sequential(nn.Linear(d, cfg.mlp_ratio * d), nn.GELU(),
                                      nn.Linear(cfg.mlp_ratio * d, d)) if cfg.use_mlp else None)
            self.kernel_mlp = (nn.Sequential(nn.Linear(self.dh, 4 * self.dh), nn.GELU(),
                                             nn.Linear(4 * self.dh, self.dh))
                               if cfg.attention.startswith("mlp-") else None)
            # created last: the modules above draw the same initial values as without a gate
            self.gate = nn.Linear(d, d) if get_attention_kind(cfg.attention).gate else None
            if self.gate is not None:
                nn.init.zeros_(self.gate.bias)

        def forward(self, x, mask):
            b, t, d = x.shape
            y = self.ln1(x)
            split = lambda z: z.view(b, t, self.h, self.dh).transpose(1, 2)
            q, k, v = split(self.q(y)), split(self.k(y)), split(self.v(y))
            a = attention_weights(q, k, kind=self.attention, mask=mask, mlp=self.kernel_mlp)
            z = (a @ v).transpose(1, 2).reshape(b, t, d)
            g = None
            if self.gate is not None:  # elementwise, head-specific, from the query-side state y_i
                g = torch.sigmoid(self.gate(y))
                z = g * z
            x = x + self.o(z)
            if self.mlp is not None:
                x = x + self.mlp(self.ln2(x))
            return x, a, g

    class TinyTransformer(nn.Module):
        """Pre-LN transformer; ``forward(ids)`` -> dict(logits, attention, hidden, gates)."""

        def __init__(self, cfg: TransformerConfig):
            super().__init__()
            self.config = cfg
            d = cfg.d_model
            tok_d = d // 2 if cfg.positional == "concat" else d
            self.embed = nn.Embedding(cfg.vocab_size, tok_d)
            self.pos = (nn.Embedding(cfg.max_len, d - tok_d if cfg.positional == "concat" else d)
                        if cfg.positional != "none" else None)
            self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
            self.ln_f = nn.LayerNorm(d) if cfg.use_layernorm else nn.Identity()
            self.head = nn.Linear(d, cfg.output_dim)

        def forward(self, ids):
            b, t = ids.shape
            if t > self.config.max_len:
                raise InvalidArgument(f"sequence length {t} exceeds max_len={self.config.max_len}")
            x = self.embed(ids)
            if self.pos is not None:
                p = self.pos(torch.arange(t, device=ids.device)).expand(b, t, -1)
                x = torch.cat([x, p], dim=-1) if self.config.positional == "concat" else x + p
            mask = None
            if self.config.causal:
                mask = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()
            attention, hidden, gates = [], [x], []
            for block in self.blocks:
                x, a, g = block(x, mask)
                attention.append(a)
                hidden.append(x)
                gates.append(g)
            return {"logits": self.head(self.ln_f(x)), "attention": attention, "hidden": hidden,
                    "gates": gates}

    return TinyTransformer


_CLASSES = {}


def build_model(config: TransformerConfig, *, seed: int, device="cpu"):
    """A float32 :class:`TinyTransformer` for ``config`` initialised from ``seed`` on ``device``.

    The global torch RNG is forked (and restored afterwards), so this is reproducible and
    leaves the caller's random state untouched.
    """
    import torch

    if "cls" not in _CLASSES:
        _CLASSES["cls"] = _modules()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = _CLASSES["cls"](config)
    return model.to(device=device, dtype=torch.float32)
