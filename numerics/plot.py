r"""Plots of integration results: weights $\varphi(a(t))$ and entropy against $t$.

:func:`plot_trajectory` serves :meth:`Trajectory.plot <numerics.Trajectory.plot>`,
:meth:`BatchTrajectory.plot <numerics.BatchTrajectory.plot>` and ``softpolar simulate --plot``.
The figure is built with :class:`matplotlib.figure.Figure` (no pyplot state, works under any
backend and in notebooks, where it is shown once); a PNG is written atomically when ``path``
is given.
"""
from __future__ import annotations
import sys

import numpy as np

from theorems import InvalidArgument
from .io import save_figure_atomic


def plot_trajectory(traj, path=None, *, element=None, title=None):
    """Two panels on a log-$t$ axis ($t=0$ is left out): weights, and entropy.

    For a batch the weights of ``element`` (default 0) are drawn and the entropy of every
    element (at most 50, thin lines). Returns the :class:`~matplotlib.figure.Figure`.
    Raises ``InvalidArgument`` when no output time is $> 0$ or ``element`` is out of range.
    """
    from matplotlib.figure import Figure

    arr = traj.to_numpy()
    t = arr["times"]
    keep = t > 0
    if not keep.any():
        raise InvalidArgument("plot needs at least one output time t > 0; expected times beyond 0")
    W, H = arr["weights"][keep], arr["entropy"][keep]
    ts = t[keep]
    label = ""
    if traj.batched:
        B = W.shape[1]
        e = 0 if element is None else element
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not -B <= int(e) < B:
            raise InvalidArgument(f"element={element!r} is not allowed; expected an integer in [0, {B})")
        W = W[:, int(e)]
        label = f" (element {int(e) % B} of {B})"
    elif element is not None:
        raise InvalidArgument(f"element={element!r} is not allowed for a single trajectory; expected None")
    fig = Figure(figsize=(9, 3.2))
    ax0, ax1 = fig.subplots(1, 2)
    n = W.shape[-1]
    for i in range(n):
        # phi_i, not w_i (w is the logistic target); tokens counted from 0, as in the API and on the CLI
        ax0.plot(ts, W[:, i], lw=1.2, label=rf"$\varphi_{{{i}}}$")
    ax0.set_xscale("log")
    ax0.set_xlabel("t")
    ax0.set_title(r"weights $\varphi(a(t))$" + label)
    if n <= 10:
        ax0.legend(fontsize=7, ncol=2, frameon=False)
    if traj.batched:
        for b in range(min(H.shape[1], 50)):
            ax1.plot(ts, H[:, b], lw=0.7, alpha=0.6)
    else:
        ax1.plot(ts, H, color="k", lw=1.2)
    ax1.set_xscale("log")
    ax1.set_xlabel("t")
    ax1.set_title(r"entropy $H(\varphi(a(t)))$")
    if title is None:
        p = getattr(traj, "problem", None)
        head = f"{p.loss} loss, {p.link} link, n={p.n}, d={p.d} " if p is not None else ""
        title = f"{head}({traj.backend}, {traj.method})"
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    if path is not None:
        save_figure_atomic(fig, path, format="png", dpi=130)
    _show_figures_in_notebook()
    return fig


def _show_figures_in_notebook() -> None:
    """In IPython, make a returned :class:`~matplotlib.figure.Figure` display as a PNG.

    IPython registers that formatter only once pyplot is set up; a figure built without pyplot
    (as here, so that it is shown once, not twice) would otherwise print as ``Figure(900x320)``.
    """
    if "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        return
    from matplotlib.figure import Figure

    png = ip.display_formatter.formatters["image/png"]
    try:
        png.lookup_by_type(Figure)
    except KeyError:
        from IPython.core.pylabtools import print_figure
        png.for_type(Figure, lambda fig: print_figure(fig, "png", bbox_inches="tight"))
