r"""A generic figure kind, ``curves``: panels of labelled series (the sink claims use it).

``data = {"panels": [{"xlabel", "ylabel", "xscale", "yscale", "series": [{"x", "y", "label"}]}]}``;
every series has a legend entry, so token or instance identity survives in print.
"""
from __future__ import annotations

import numpy as np

from ._figsave import save


def draw_curves(data, path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = data["panels"]
    fig = Figure(figsize=(5.8 * len(panels), 3.2), dpi=200)  # the PNG is saved at _figures.DPI
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        for s in panel["series"]:
            x, y = np.asarray(s["x"], float), np.asarray(s["y"], float)
            keep = np.isfinite(x) & np.isfinite(y)
            if panel.get("xscale") == "log":
                keep &= x > 0
            if panel.get("yscale") == "log":
                keep &= y > 0
            ax.plot(x[keep], y[keep], lw=1.3, label=s["label"], ls=s.get("ls", "-"))
        ax.set_xscale(panel.get("xscale", "linear"))
        ax.set_yscale(panel.get("yscale", "linear"))
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        if panel.get("title"):
            ax.set_title(panel["title"], fontsize=9)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    save(fig, path)
