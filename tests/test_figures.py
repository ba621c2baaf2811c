"""Report figures: a PNG of at least 200 dpi, a vector PDF next to it, a legend naming every token."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from proofs_check import Figure
from proofs_check.report import draw


def _saved_figures(monkeypatch) -> list:
    """The matplotlib figures that get saved from now on, in order (matplotlib's ``savefig`` watched)."""
    from matplotlib.figure import Figure as MplFigure

    seen, real = [], MplFigure.savefig

    def savefig(self, *args, **kwargs):
        seen.append(self)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(MplFigure, "savefig", savefig)
    return seen


def _png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _flow_data(n=5):
    t = np.logspace(-2, 3, 40)
    w = np.exp(-np.outer(1 / (1 + t), np.arange(n)))
    w /= w.sum(1, keepdims=True)
    return {"times": t, "weights": w, "entropy": -(w * np.log(w)).sum(1), "title": "test"}


def test_flow_figure_png_200_dpi_pdf_and_token_legend(tmp_path, monkeypatch):
    seen = _saved_figures(monkeypatch)
    files = draw(Figure("flow.png", "flow", "c", _flow_data(5)), tmp_path / "flow.png")
    assert [p.name for p in files] == ["flow.png", "flow.pdf"]
    width, height = _png_size(tmp_path / "flow.png")
    assert width >= 6.5 * 200 - 2 and height >= 2.6 * 200 - 2  # figsize in inches x 200 dpi
    assert (tmp_path / "flow.pdf").read_bytes()[:5] == b"%PDF-"
    weights_axes = seen[0].axes[0]
    legend = weights_axes.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == [f"token {i}" for i in range(5)]


@pytest.mark.parametrize("kind, data", [
    ("simplex", {"paths": [np.array([[1 / 3, 1 / 3, 1 / 3], [0.8, 0.1, 0.1]]),
                           np.array([[1 / 3, 1 / 3, 1 / 3], [0.1, 0.1, 0.8]])]}),
    ("normalizations", {"links": ["softmax", "l1-norm"], "runs": {
        loss: {"runs": {link: {"steps": [1, 10, 100], "weights": np.full((3, 4), 0.25)}
                        for link in ("softmax", "l1-norm")}} for loss in ("logistic", "square")}}),
])
def test_every_multi_curve_figure_has_a_legend(kind, data, tmp_path, monkeypatch):
    seen = _saved_figures(monkeypatch)
    draw(Figure(f"{kind}.png", kind, "c", data), tmp_path / f"{kind}.png")
    labels = [t.get_text() for ax in seen[0].axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert labels, f"{kind}: no legend"
    if kind == "simplex":
        assert labels[:2] == ["run 1: to $e_0$", "run 2: to $e_2$"]
    else:
        assert labels == [f"token {i}" for i in range(4)]
