r"""Figures of the verification report (matplotlib, Agg canvas, no pyplot global state).

Each check may return :class:`~proofs_check.claim.Figure` objects whose
``kind`` names one of the drawing functions in :data:`DRAW`; :func:`draw` renders
one of them twice: a PNG at :data:`DPI` dots per inch for screens, and a vector PDF next
to it (same name, ``.pdf``) for papers. Every curve that stands for a token or an
instance has a legend entry (``token i``, counted from 0 as in every output: column i of the weights),
so identity survives in black-and-white print.
Kinds:

* ``flow``: weights $s_i(t)$ (log-log) and entropy $H(s(t))$ against $t$ (log axis);
* ``simplex``: trajectories of $s(t)$ in the 2-simplex ($n=3$);
* ``rate``: $(1-\max_is_i)\log^2(bt)$ over its predicted limit against $t$;
* ``kappa``: final entropy against the condition number $\kappa$;
* ``normalizations``: the six weightings side by side (logistic and square loss);
* ``image``: a PNG another layer already drew (``data["source"]``), copied into the report
  (the transformer experiments draw their own figures next to their grid results).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
import shutil
import tempfile

import numpy as np

from ._figsave import DPI, save  # the PNG resolution and the PNG+PDF writer, re-exported
from ._figures_curves import draw_curves
#: line styles cycled with the colours, so that curves stay apart in greyscale print
_STYLES = ("-", "--", "-.", ":")


def _token_style(i: int) -> dict:
    return {"ls": _STYLES[(i // 10) % len(_STYLES)], "label": f"token {i}"}


def _figure(nrows=1, ncols=1, size=(6.5, 2.6)):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _positive_times(times, *arrays):
    keep = np.asarray(times) > 0
    return (np.asarray(times)[keep],) + tuple(np.asarray(a)[keep] for a in arrays)


def draw_flow(data, path):
    t, w, H = _positive_times(data["times"], data["weights"], data["entropy"])
    fig, ax = _figure(1, 2)
    for i in range(w.shape[-1]):
        ax[0, 0].loglog(t, np.maximum(w[:, i], 1e-300), lw=1, **_token_style(i))
    ax[0, 0].legend(fontsize=6, frameon=False, ncol=2 if w.shape[-1] > 4 else 1)
    ax[0, 0].set_xlabel("t")
    ax[0, 0].set_ylabel("weights $s_i(t)$")
    ax[0, 0].set_title(data.get("title", ""))
    ax[0, 1].semilogx(t, H, color="k", lw=1.2)
    ax[0, 1].set_xlabel("t")
    ax[0, 1].set_ylabel("entropy $H(s(t))$")
    ax[0, 1].set_ylim(bottom=0)
    fig.tight_layout()
    save(fig, path)


def draw_simplex(data, path):
    fig, ax = _figure(1, 1, size=(4.0, 3.6))
    ax = ax[0, 0]
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    ax.plot(*np.vstack([corners, corners[:1]]).T, color="k", lw=0.8)
    for k, name in enumerate(("$e_0$", "$e_1$", "$e_2$")):
        ax.annotate(name, corners[k], textcoords="offset points", xytext=(-8 if k == 0 else 4, -10 if k < 2 else 4))
    for k, path_s in enumerate(data["paths"]):
        xy = np.asarray(path_s) @ corners
        end = int(np.argmax(np.asarray(path_s)[-1]))
        line, = ax.plot(xy[:, 0], xy[:, 1], lw=1, ls=_STYLES[k % len(_STYLES)],
                        label=f"run {k + 1}: to $e_{end}$")
        ax.plot(*xy[-1], "o", ms=3, color=line.get_color())
    ax.plot(*corners.mean(0), "k+", ms=8, label="start $a(0)=0$")
    ax.legend(fontsize=6, frameon=False, loc="upper left")
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("$s(t)$ for n = 3, from $a(0)=0$ (+)")
    fig.tight_layout()
    save(fig, path)


def draw_rate(data, path):
    fig, ax = _figure(1, 1, size=(5.5, 3.0))
    ax = ax[0, 0]
    for row in data["rows"]:
        ax.semilogx(10.0 ** np.asarray(row["log10_t"]), row["ratio"], lw=1.2, label=row["label"])
    ax.axhline(1.0, ls="--", color="k", lw=0.8)
    ax.set_xlabel("t")
    ax.set_ylabel(r"$(1-\max_i s_i)\,\log^2(bt)\,/\,(2(n-1)b/n)$")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    save(fig, path)


def draw_kappa(data, path):
    fig, ax = _figure(1, 2, size=(7.0, 2.8))
    k = data["kappa"]
    ax[0, 0].plot(k, data["H"], "o-", label="this re-run")
    ax[0, 0].plot(k, data["reference"], "x", color="k", label="reference re-run [R]")
    ax[0, 0].axhline(data["log_n"], ls=":", color="grey", lw=0.8, label="log 20")
    ax[0, 0].set_xlabel(r"condition number $\kappa$")
    ax[0, 0].set_ylabel(r"final $H(\sigma(a))$")
    ax[0, 0].legend(fontsize=7, frameon=False)
    steps = np.asarray(data["record"])
    Hh = np.asarray(data["H_hist"])
    for j, kk in enumerate(k):
        ax[0, 1].plot(steps, Hh[:, j], lw=1, label=rf"$\kappa={kk}$")
    ax[0, 1].set_xlabel("GD iteration")
    ax[0, 1].set_ylabel(r"$H(\sigma(a))$")
    ax[0, 1].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    save(fig, path)


def draw_normalizations(data, path):
    links = data["links"]
    fig, ax = _figure(len(links), 2, size=(7.0, 1.5 * len(links)))
    for col, loss in enumerate(("logistic", "square")):
        res = data["runs"][loss]
        for row, link in enumerate(links):
            r = res["runs"][link]
            steps = np.asarray(r["steps"])
            w = np.asarray(r["weights"])
            for i in range(w.shape[-1]):
                ax[row, col].semilogx(steps, w[:, i], lw=0.8, **_token_style(i))
            ax[row, col].set_ylabel(link, fontsize=8)
            if row == 0 and col == 1:
                ax[row, col].legend(fontsize=6, frameon=False, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            if row == 0:
                ax[row, col].set_title(f"{loss} loss: weights", fontsize=9)
            if row == len(links) - 1:
                ax[row, col].set_xlabel("GD iteration")
    fig.tight_layout()
    save(fig, path)


def copy_image(data, path):
    """Copy a PNG another layer drew, and its vector twin (same name, ``.pdf`` or ``.svg``) when it has one."""
    source = Path(data["source"])
    with open(source, "rb") as fh:
        if fh.read(8) != b"\x89PNG\r\n\x1a\n":
            raise ValueError(f"figure source={str(source)!r} is not a PNG file; expected a PNG")
    shutil.copyfile(source, path)
    for ext in VECTOR_SUFFIXES:
        twin = source.with_suffix(ext)
        if twin.is_file():
            shutil.copyfile(twin, Path(path).with_suffix(ext))


#: the drawer of each figure kind (``Figure.kind``): ``DRAW[kind](data, path)``
DRAW = {"flow": draw_flow, "simplex": draw_simplex, "rate": draw_rate, "kappa": draw_kappa,
        "normalizations": draw_normalizations, "image": copy_image}


def _register_curves():
    DRAW["curves"] = draw_curves


_register_curves()


#: the vector formats a figure may come with, next to its PNG
VECTOR_SUFFIXES = (".pdf", ".svg")


def draw(figure, path) -> list[Path]:
    """Render a :class:`~proofs_check.claim.Figure` to ``path`` (PNG) and its vector twin; return the files.

    A figure that carries its drawn files (``figure.rendered``, see :func:`prerender`) is written from those
    bytes, under ``path``'s name, with nothing drawn again."""
    path = Path(path)
    if figure.rendered:
        files = [path.with_name(path.stem + Path(name).suffix) for name in figure.rendered]
        for target, data in zip(files, figure.rendered.values()):
            target.write_bytes(data)
        return files
    DRAW[figure.kind](figure.data, path)
    return [path] + [path.with_suffix(e) for e in VECTOR_SUFFIXES if path.with_suffix(e).is_file()]


def render(figure) -> dict:
    """The files :func:`draw` writes for ``figure``, as ``{file name: bytes}`` (the PNG first, then its vector
    twins in :data:`VECTOR_SUFFIXES` order), drawn in a scratch folder of this process."""
    with tempfile.TemporaryDirectory(prefix="softpolar-figure-") as tmp:
        files = draw(dataclasses.replace(figure, rendered=None), Path(tmp) / figure.filename)
        return {p.name: p.read_bytes() for p in files}


def prerender(result):
    """``result`` (a :class:`~proofs_check.claim.ClaimResult`) with its outcome's figures drawn here, in this
    process (:func:`render`): a ``verify --jobs`` worker draws its claims' figures side by side with the other
    workers instead of leaving them all to the report, drawn one after another in the verify process. The report
    writes the same bytes it would have drawn (the drawing functions are deterministic: the PDF carries no date).
    A figure that fails to draw is left to the report, which fails on it as it would have."""
    outcome = getattr(result, "outcome", None)
    figures = getattr(outcome, "figures", ())
    if not figures or not (dataclasses.is_dataclass(result) and dataclasses.is_dataclass(outcome)):
        return result
    drawn = []
    for f in figures:
        try:
            drawn.append(f if f.rendered else dataclasses.replace(f, rendered=render(f)))
        except Exception:  # the report draws it (and raises there, as in a serial run)
            drawn.append(f)
    return dataclasses.replace(result, outcome=dataclasses.replace(result.outcome, figures=tuple(drawn)))
