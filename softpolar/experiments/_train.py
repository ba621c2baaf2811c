r"""One training run of the induction or classification task, described by a :class:`RunConfig`.

Losses [C]: induction
$\mathrm{CE}(\text{last position}) + w_{\rm aux}\,\mathrm{CE}(\text{earlier positions})$;
classification $\mathrm{CE}$ of the 4-way logits at the CLS position. Optimizer AdamW
(PyTorch default weight decay 0.01), constant learning rate, minibatches drawn by a
seeded permutation each epoch. Training is float32; metrics are computed in float64
numpy on the evaluation set after training.

Every random stream (train data, eval data, initialisation, batch order, flip-test
pairs) is derived from ``config.seed`` through ``numpy.random.SeedSequence`` so a run is
reproducible and its streams are independent.
"""
from __future__ import annotations

import hashlib
import json
import platform
import time
from dataclasses import asdict, dataclass, fields

import numpy as np

from theorems import InvalidArgument, check_choice, check_int

from ._attention import ATTENTION_KINDS
from ._metrics import (attention_entropy, bos_mass, bos_share, gu_sink_rate, massive_activation_ratio,
                       max_share, row_mass, single_token_flip_rate)
from ._model import POSITIONAL, TransformerConfig, build_model
from ._tasks import induction_model_vocab, make_classification_data, make_induction_data

TASKS = ("induction", "classification")
#: the flip test's negative control uses the least-attended content token instead of the top-1.
CONTROL_RANK = -1
#: independent random streams derived from the run seed.
_STREAMS = {"train": 0, "eval": 1, "init": 2, "order": 3, "flip": 4}


def subseed(seed: int, stream: str) -> int:
    """A 32-bit seed for ``stream`` derived from ``seed`` (independent streams)."""
    return int(np.random.SeedSequence([seed, _STREAMS[stream]]).generate_state(1)[0])


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines one run (the device is not part of it).

    Defaults are the smoke-grid sizes (see :mod:`softpolar.experiments.grid` for why); the
    authors' values [C] are d_model 128, batch 256, 10 epochs, 100k (induction) or
    10k (classification) training sequences.
    """

    task: str
    attention: str = "softmax"
    positional: str = "add"
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    use_mlp: bool = True
    use_layernorm: bool = True
    lr: float = 1e-3
    epochs: int = 7
    batch_size: int = 128
    n_train: int = 25_600
    n_eval: int = 1000
    vocab_size: int = 50
    aux_weight: float = 0.2
    shift_query: bool = True
    n_flip_pairs: int = 500
    seed: int = 0

    def __post_init__(self):
        check_choice("task", self.task, TASKS)
        check_choice("attention", self.attention, ATTENTION_KINDS)
        check_choice("positional", self.positional, POSITIONAL)
        for name in ("n_layers", "n_heads", "d_model", "epochs", "batch_size", "n_train",
                     "n_eval", "vocab_size", "n_flip_pairs"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("seed", self.seed, minimum=0)
        if not (isinstance(self.lr, float) and self.lr > 0):
            raise InvalidArgument(f"lr={self.lr!r} is not allowed; expected a positive float")
        if not (isinstance(self.aux_weight, float) and self.aux_weight >= 0):
            raise InvalidArgument(f"aux_weight={self.aux_weight!r}; expected a float >= 0")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RunConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise InvalidArgument(f"unknown RunConfig fields {sorted(unknown)}")
        return cls(**data)

    @property
    def run_id(self) -> str:
        """Readable, stable id: task, variant, shape, seed and a hash of the full config."""
        digest = hashlib.sha1(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]
        return (f"{self.task}-{self.attention}-{self.positional}-L{self.n_layers}H{self.n_heads}"
                f"-s{self.seed}-{digest}")

    def model_config(self) -> TransformerConfig:
        if self.task == "induction":
            vocab = induction_model_vocab(self.vocab_size, self.shift_query)
            return TransformerConfig(vocab_size=vocab, output_dim=vocab, d_model=self.d_model,
                                     n_layers=self.n_layers, n_heads=self.n_heads,
                                     use_mlp=self.use_mlp, use_layernorm=self.use_layernorm,
                                     attention=self.attention, positional=self.positional,
                                     causal=True)
        return TransformerConfig(vocab_size=self.vocab_size, output_dim=4, d_model=self.d_model,
                                 n_layers=self.n_layers, n_heads=self.n_heads,
                                 use_mlp=self.use_mlp, use_layernorm=self.use_layernorm,
                                 attention=self.attention, positional=self.positional,
                                 causal=False)

    def data(self, split: str):
        """``(inputs, targets)`` numpy arrays of ``split`` in ``{'train', 'eval'}``."""
        n = self.n_train if split == "train" else self.n_eval
        if self.task == "induction":
            return make_induction_data(n, vocab_size=self.vocab_size, shift_query=self.shift_query,
                                       seed=subseed(self.seed, split))
        return make_classification_data(n, vocab_size=self.vocab_size, seed=subseed(self.seed, split))


def _loss(cfg: RunConfig, logits, targets):
    import torch.nn.functional as F

    if cfg.task == "induction":
        main = F.cross_entropy(logits[:, -1], targets[:, -1])
        if cfg.aux_weight == 0.0:
            return main
        aux = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), targets[:, :-1].reshape(-1))
        return main + cfg.aux_weight * aux
    return F.cross_entropy(logits[:, -1], targets)


def _accuracy(cfg: RunConfig, logits, targets) -> float:
    gold = targets[:, -1] if cfg.task == "induction" else targets
    return float((logits[:, -1].argmax(-1) == gold).float().mean())


def train_run(config: RunConfig, *, device: str = "cpu", threads: int | None = None) -> dict:
    """Train one model and measure it; returns a JSON-ready result dict.

    Keys: ``config``, ``run_id``, ``accuracy`` (eval; the induction answer or the class),
    ``curve`` (eval accuracy after each epoch), ``final_train_loss``, ``bos_share`` /
    ``bos_share_signed`` (per layer, per head), ``share_key5`` (the same share on key 5, a
    control), ``max_share_cls`` and ``entropy_cls`` (CLS / last row, per layer, per head),
    ``gu_sink_rate``, ``massive_ratio_first``
    (per layer), ``bos_mass`` / ``row_mass`` (per layer, per head: the BOS mass not divided
    by the row mass, and the row mass; ``mass_key5``: the same mass on key 5, a control),
    ``gate_mean`` (per layer, per head: the mean sigmoid gate of a gated kernel over the eval
    set, positions and the head's channels; ``None`` when ungated), ``attention_example``
    (every layer's maps on eval sample 0), for classification ``flip_rate`` /
    ``flip_rate_control`` (per layer, per head), plus
    ``seconds`` (wall), ``cpu_seconds``, ``device`` and versions.
    """
    import torch

    old_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _train_run(config, device=device)
    finally:
        torch.set_num_threads(old_threads)


def _train_run(cfg: RunConfig, *, device: str) -> dict:
    import torch

    t0, c0 = time.perf_counter(), time.process_time()
    x_np, y_np = cfg.data("train")
    xe_np, ye_np = cfg.data("eval")
    x, y = torch.from_numpy(x_np).to(device), torch.from_numpy(y_np).to(device)
    xe, ye = torch.from_numpy(xe_np).to(device), torch.from_numpy(ye_np).to(device)
    model = build_model(cfg.model_config(), seed=subseed(cfg.seed, "init"), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    order_gen = torch.Generator().manual_seed(subseed(cfg.seed, "order"))
    curve, loss = [], torch.tensor(float("nan"))
    for _epoch in range(cfg.epochs):
        model.train()
        perm = torch.randperm(cfg.n_train, generator=order_gen).to(device)
        for start in range(0, cfg.n_train, cfg.batch_size):
            idx = perm[start:start + cfg.batch_size]
            loss = _loss(cfg, model(x[idx])["logits"], y[idx])
            if not torch.isfinite(loss):
                raise FloatingPointError(f"{cfg.run_id}: non-finite training loss {loss.item()}")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            curve.append(_accuracy(cfg, model(xe)["logits"], ye))
    result = {"config": cfg.to_dict(), "run_id": cfg.run_id, "accuracy": curve[-1], "curve": curve,
              "final_train_loss": float(loss.item())}
    result.update(_measure(cfg, model, xe_np, ye_np, device))
    # cpu_seconds: this process's CPU time, the load-independent cost on a shared machine
    result.update({"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
                   "device": str(device),
                   "torch": str(torch.__version__), "python": platform.python_version(),
                   "threads": torch.get_num_threads()})
    return result


def _forward_np(model, ids_np, device, gates=None, hidden=True):
    import torch

    with torch.no_grad():
        out = model(torch.from_numpy(np.ascontiguousarray(ids_np)).to(device))
    attn = [a.double().cpu().numpy() for a in out["attention"]]
    hidden = [h.double().cpu().numpy() for h in out["hidden"]] if hidden else None
    if gates is not None:
        gates.extend(None if g is None else g.double().cpu().numpy() for g in out["gates"])
    return out["logits"].double().cpu().numpy(), attn, hidden


def _gate_mean(g, n_heads):
    """Mean gate per head of a ``(B, T, d)`` gate array (head h owns channels h*d_h..(h+1)*d_h)."""
    b, t, d = g.shape
    return g.reshape(b, t, n_heads, d // n_heads).mean(axis=(0, 1, 3)).tolist()


def _measure(cfg: RunConfig, model, xe, ye, device) -> dict:
    gates: list = []
    logits, attn, hidden = _forward_np(model, xe, device, gates=gates)
    res = {
        "bos_share": [bos_share(a).tolist() for a in attn],
        "bos_share_signed": [bos_share(a, absolute=False).tolist() for a in attn],
        # negative control of the sink rule: the same share on an ordinary key (position 5)
        "share_key5": [bos_share(a, key=5).tolist() for a in attn],
        "max_share_cls": [max_share(a, query=-1, clip=True).tolist() for a in attn],
        "entropy_cls": [attention_entropy(a, query=-1).tolist() for a in attn],
        "gu_sink_rate": gu_sink_rate(attn) if cfg.task == "induction" else None,
        "massive_ratio_first": [float(massive_activation_ratio(h, token=0).mean()) for h in hidden],
        "bos_mass": [bos_mass(a).tolist() for a in attn],
        "mass_key5": [bos_mass(a, key=5).tolist() for a in attn],  # the same on an ordinary key (control)
        "row_mass": [row_mass(a).tolist() for a in attn],
        "gate_mean": (None if all(g is None for g in gates)
                      else [_gate_mean(g, cfg.n_heads) for g in gates]),
        "attention_example": [a[0].round(5).tolist() for a in attn],
        "example_tokens": xe[0].tolist(),
    }
    if cfg.task == "classification":
        def cls_prediction(lg, at):
            cls_rows = np.stack([a[:, :, -1, :] for a in at], axis=1)  # (N, L, H, T)
            return lg[:, -1].argmax(-1), cls_rows

        # every flip test first reads the evaluation set's own prediction and CLS rows: that is the forward
        # pass above (same model in eval mode, same input), so it is reused, not recomputed 4 x layers x heads times
        on_eval = cls_prediction(logits, attn)

        def predict(ids):
            if ids is xe:
                return on_eval
            lg, at, _ = _forward_np(model, ids, device, hidden=False)
            return cls_prediction(lg, at)

        flip, control = [], []
        for layer in range(cfg.n_layers):
            flip.append([single_token_flip_rate(predict, xe, ye, n_pairs=cfg.n_flip_pairs,
                                                seed=subseed(cfg.seed, "flip"), layer=layer, head=h)
                         for h in range(cfg.n_heads)])
            control.append([single_token_flip_rate(predict, xe, ye, n_pairs=cfg.n_flip_pairs,
                                                   seed=subseed(cfg.seed, "flip"), layer=layer,
                                                   head=h, rank=CONTROL_RANK)
                            for h in range(cfg.n_heads)])
        res["flip_rate"], res["flip_rate_control"] = flip, control
    return res
