r"""The system assembly every engine shares: the metrics of a :class:`Trajectory` at each output state.

An engine integrates the flow and hands its output states here, with the ``unpack`` of its state vector:
:func:`assemble_numpy` (float64 arrays) and :func:`assemble_mpmath` (at the working precision, rounded to
``dps`` digits, :data:`GUARD_DIGITS` carried while integrating). The engines import this module, never each
other, for it.
"""
from __future__ import annotations

import mpmath
import numpy as np

from ._common import Trajectory
from ..metrics import argmax, entropy, max_weight, one_minus_max
from ..rhs import flow_rhs

#: extra decimal digits carried while integrating.
GUARD_DIGITS = 12


def assemble_numpy(problem, tv, states, unpack, *, consume: bool = False, **meta) -> Trajectory:
    """Metrics at each output state (flat numpy vectors), as a :class:`Trajectory`.

    ``V`` is kept as one float64 array ``(K, d, n)`` (nested lists of Python floats would take about four
    times its bytes: 1.3 GB for n = d = 1024 at 40 times). ``consume=True``: ``states`` is the caller's
    own list, and each entry is dropped once copied, so the states and the result never both exist
    in full (peak memory about one copy of the output arrays, not two).
    """
    rhs = flow_rhs(problem.loss, problem.link)
    K = len(states)
    V0, a0 = unpack(states[0])
    Vs = np.empty((K,) + np.shape(V0), dtype=np.float64)
    As = np.empty((K,) + np.shape(a0), dtype=np.float64)
    for k in range(K):
        Vs[k], As[k] = unpack(states[k])
        if consume:
            states[k] = None
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        W = rhs.phi(As)
        tgt = np.broadcast_to(problem.target, (K,) + problem.target.shape)
        X = None if problem.X is None else np.broadcast_to(problem.X, (K,) + problem.X.shape)
        L = rhs.loss_value(Vs, As, tgt, X)
        H, M, I, G = entropy(W), max_weight(W), argmax(W), one_minus_max(W)
    return Trajectory(times=list(tv), a=As.tolist(), weights=W.tolist(), loss=L.tolist(),
                      entropy=H.tolist(), max_weight=M.tolist(), argmax=[int(i) for i in I],
                      one_minus_max=G.tolist(), V=Vs, problem=problem, **meta)


def assemble_mpmath(problem, tv, states, unpack, target, X, *, dps, **meta) -> Trajectory:
    """Metrics at each state, computed at the working precision, rounded to ``dps``."""
    rhs = flow_rhs(problem.loss, problem.link, backend="mpmath")
    cols = {k: [] for k in ("a", "weights", "loss", "entropy", "max_weight", "argmax",
                            "one_minus_max", "V")}
    for y in states:
        V, a = unpack(y)
        W = rhs.phi(a)
        row = {"a": list(a), "weights": W, "loss": rhs.loss_value(V, a, target, X),
               "entropy": entropy(W), "max_weight": max_weight(W), "argmax": argmax(W),
               "one_minus_max": one_minus_max(W), "V": [list(r) for r in V]}
        with mpmath.workdps(dps):
            for key, val in row.items():
                cols[key].append(_round(val))
    with mpmath.workdps(dps):
        times = [+t for t in tv]
    return Trajectory(times=times, problem=problem, dps=dps, **cols, **meta)


def _round(v):
    if isinstance(v, list):
        return [_round(x) for x in v]
    if isinstance(v, int):
        return v
    return +mpmath.mpf(v)
