r"""Polarization to a vertex, settled: integrate on until $1-\max\hat\varphi$ is small, or the user's bound.

A vertex check (the ``vertex`` claim family) asks whether the normalized weights $\hat\varphi(t)$ of one instance
end at the vertex $e_{i^\star}$ of a predicted token. On a fixed horizon this is a threshold at a fixed time, and a
slow model fails it while it obeys it: a temperature-$T$ softmax has $1-\max\hat\varphi\approx 2(n-1)bT^2/(n\log^2t)$
(:mod:`theorems.asymptotics`), about 0.06 at $t=10^{40}$ for $T=5$. :func:`settle_vertex` integrates such an
instance on the log clock (the Taylor engine, as :func:`numerics.integrate.settle.settle_rate`) to the horizons
$t=10^E$ of :data:`numerics.integrate.settle.HORIZONS` up to ``max_log10_t``, and on the upper half of each grid
(in $\log\log t$) checks: the argmax is the predicted token at every grid time, $1-\max\hat\varphi$ decreases from
grid time to grid time, and it ends below ``gap``. The first horizon that passes gives ``verified``; a wrong argmax
or an increase on the window gives ``refuted`` (with the horizon and the values); the bound reached with the gap
still above ``gap`` gives ``undecided``, never a pass. The integrator raises on failure.
"""
from __future__ import annotations

import mpmath as mp
import numpy as np
from theorems import InvalidArgument

from .settle import DEFAULT_MAX_LOG10_T, HORIZONS, _grid, trajectory

__all__ = ["settle_vertex"]


def _weights(h_mp, row):
    hs = [h_mp(mp.mpf(v)) for v in row]
    tot = mp.fsum(hs)
    top = max(range(len(hs)), key=lambda i: hs[i])
    return top, float(mp.fsum(h for i, h in enumerate(hs) if i != top) / tot)


def settle_vertex(problem, *, winner: int, h_mp, gap: float, max_log10_t: int = DEFAULT_MAX_LOG10_T,
                  dps: int = 30) -> dict:
    """Does ``problem`` end at the vertex of token ``winner`` (see the module docstring)?

    Returns ``{"verdict": "verified" | "refuted" | "undecided", "horizon_log10_t": E, "one_minus_max": q,
    "argmax": i, "why": str}``.
    """
    if not (isinstance(max_log10_t, (int, np.integer)) and 100 <= max_log10_t <= 10**6):
        raise InvalidArgument(f"max_log10_t={max_log10_t!r} is not allowed; expected an integer in [100, 1000000] "
                              "(the bound on log10 t of the settling runs)")
    horizons = [E for E in HORIZONS if E <= max_log10_t] or [max_log10_t]
    for E in horizons:
        times = _grid(E)
        tr = trajectory(problem, E, dps=dps)  # the settling runs' own grid and engine
        logt = np.array([int(t[2:]) for t in times[1:]], float)
        tops, qs = zip(*(_weights(h_mp, row) for row in tr.a[1:]))
        tops, qs = np.array(tops), np.array(qs)
        win = logt >= np.sqrt(logt[0] * logt[-1])
        rec = {"horizon_log10_t": E, "one_minus_max": float(qs[-1]), "argmax": int(tops[-1]), "backend": tr.backend}
        if not np.all(tops[win] == winner):
            bad = int(np.nonzero(tops[win] != winner)[0][0])
            return {**rec, "verdict": "refuted", "failed": "winner",
                    "why": f"argmax {int(tops[win][bad])} != {winner} at t = 1e{int(logt[win][bad])}"}
        if not np.all(np.diff(qs[win]) < 0):
            return {**rec, "verdict": "refuted", "failed": "decreasing",
                    "why": f"1 - max weight increases on [1e{int(logt[win][0])}, 1e{E}]"}
        if qs[-1] < gap:
            return {**rec, "verdict": "verified",
                    "why": f"at the vertex by t = 1e{E}: 1 - max weight {qs[-1]:.3g} < {gap:g}, argmax {winner} "
                           f"on [1e{int(logt[win][0])}, 1e{E}]"}
    return {**rec, "verdict": "undecided",
            "why": f"not at the vertex by t = 1e{E} (the bound max_log10_t = {max_log10_t}): 1 - max weight "
                   f"{qs[-1]:.3g} >= {gap:g}, still decreasing with argmax {winner}"}
