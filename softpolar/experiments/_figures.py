"""Figures of the transformer experiments (PNG at 200 dpi + PDF, matplotlib ``Figure`` objects, no pyplot state).

* :func:`sink_bars` -- % sink heads in layer 1 per attention type, normalized vs
  unnormalized, a red x where no run passed the accuracy filter (authors' convention),
  with the mean induction accuracy underneath;
* :func:`attention_maps` -- layer-1 maps of a softmax model and an unnormalized-sigmoid
  model on the same evaluation sequence (colour scale -1 pink, 0 grey, +1 green);
* :func:`flip_bars` -- single-token flip rate and its control per attention type / shape;
* :func:`max_share_histogram` -- SmolLM2's per-head max-share histogram (the softmax half
  of the paper's Figure 7) next to the untrained control, and the massive-activation
  ratio per layer.
"""
from __future__ import annotations
from pathlib import Path

import numpy as np

from numerics.io import save_figure_atomic


def _figure(*args, **kwargs):
    from matplotlib.figure import Figure

    return Figure(*args, **kwargs)


#: resolution of the PNG figures; a vector PDF with the same name is written next to each (the
#: verification report copies both)
DPI = 200


def _save(fig, path) -> str:
    """Save ``fig`` atomically (:func:`numerics.io.save_figure_atomic`): a PNG at :data:`DPI` dpi and
    the PDF beside it, tight box."""
    save_figure_atomic(fig, Path(path).with_suffix(".pdf"), format="pdf", bbox_inches="tight",
                       metadata={"CreationDate": None})
    return str(save_figure_atomic(fig, path, dpi=DPI, bbox_inches="tight"))


def sink_bars(rows: list[dict], path) -> str:
    """Bar chart of ``sink_pct`` per attention type (rows from ``induction_table``)."""
    fig = _figure(figsize=(max(6.0, 0.7 * len(rows)), 5.5))
    ax, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    x = np.arange(len(rows))
    colors = ["tab:blue" if r["normalized"] else "tab:orange" for r in rows]
    heights = [r["sink_pct"] if r["sink_pct"] is not None else 0.0 for r in rows]
    ax.bar(x, heights, color=colors)
    for i, r in enumerate(rows):
        if r["sink_pct"] is None:
            ax.plot(i, 3, marker="x", color="red", markersize=12, mew=3)
        else:  # label every bar, so that a 0% bar is visibly a measured zero
            ax.text(i, r["sink_pct"] + 1.5, f"{r['sink_pct']:.0f}%", ha="center", fontsize=8)
    ax.set_ylabel("% sink heads (layer 1)")
    ax.set_ylim(0, 105)
    ax.set_title("Induction: BOS share > 0.9, runs with accuracy > 0.95 (x: none passed)")
    ax2.bar(x, [r["accuracy"] for r in rows], color=colors)
    ax2.axhline(0.95, color="k", lw=0.8, ls="--")
    ax2.set_ylabel("accuracy")
    ax2.set_ylim(0, 1.05)
    ax2.set_xticks(x, [r["label"] for r in rows], rotation=45, ha="right")
    return _save(fig, path)


def attention_maps(results: list[dict], path, *, kinds=("softmax", "sigmoid-unnorm"), layer: int = 1) -> str:
    """Layer-``layer`` maps of the first run of each of ``kinds`` (all heads)."""
    chosen = []
    for kind in kinds:
        run = next((r for r in results if r and r.get("status") == "ok"
                    and r["config"]["attention"] == kind), None)
        if run is not None:
            chosen.append(run)
    if not chosen:
        raise ValueError(f"no finished runs of {kinds} to draw")
    n_heads = max(len(r["attention_example"][min(layer, len(r["attention_example"]) - 1)])
                  for r in chosen)
    fig = _figure(figsize=(2.6 * n_heads, 2.8 * len(chosen)))
    axes = np.atleast_2d(fig.subplots(len(chosen), n_heads, squeeze=False))
    im = None
    for row, run in enumerate(chosen):
        maps = np.asarray(run["attention_example"][min(layer, len(run["attention_example"]) - 1)])
        tokens = ["BOS" if t == 0 else str(t) for t in run["example_tokens"]]
        for h in range(n_heads):
            ax = axes[row, h]
            if h >= len(maps):
                ax.axis("off")
                continue
            im = ax.imshow(maps[h], cmap="PiYG", vmin=-1, vmax=1)
            ax.set_title(f"{run['config']['attention']} L{layer} H{h}", fontsize=9)
            ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=6)
            ax.set_yticks(range(len(tokens)), tokens, fontsize=6)
    if im is not None:
        fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.7)
    return _save(fig, path)


def flip_bars(rows: list[dict], path) -> str:
    """Flip rate (and control) per classification row (attention type, L, H)."""
    fig = _figure(figsize=(max(6.0, 0.6 * len(rows)), 4.0))
    ax = fig.subplots()
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["flip_rate"] or 0.0 for r in rows], width=0.4, label="top-1 token")
    ax.bar(x + 0.2, [r["flip_rate_control"] or 0.0 for r in rows], width=0.4,
           label="least-attended token (control)")
    ax.set_xticks(x, [f"{r['label']} {r['layers']}L{r['heads']}H" for r in rows], rotation=60,
                  ha="right", fontsize=8)
    ax.set_ylabel("single-token flip rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title("Classification: one token decides the class")
    return _save(fig, path)


def max_share_histogram(res: dict, path) -> str:
    """SmolLM2 per-head max-share histogram (20 bins) and massive activations per layer."""
    fig = _figure(figsize=(11, 4))
    ax, ax2 = fig.subplots(1, 2)
    bins = np.linspace(0, 1, 21)
    for key, label in (("random", "random tokens"), ("text", "text"), ("control", "untrained control")):
        if key in res:
            ax.hist(res[key]["max_share"], bins=bins, alpha=0.55, label=label)
    ax.set_xlabel("avg. sparsity score (max share per head)")
    ax.set_ylabel("# heads")
    ax.set_title(f"{res['model']['name'] or 'SmolLM2'}: softmax heads (cf. paper Fig. 7)")
    ax.legend(fontsize=8)
    for key, style in (("random", "-"), ("text", "--")):
        ax2.semilogy(res[key]["massive_first"], style, label=f"first token ({key})")
        ax2.semilogy(res[key]["massive_other"], style, alpha=0.6, label=f"largest other ({key})")
    ax2.set_xlabel("residual stream after layer")
    ax2.set_ylabel("max |h| / median |h|")
    ax2.set_title("massive activations")
    ax2.legend(fontsize=8)
    return _save(fig, path)
