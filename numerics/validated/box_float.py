r"""Float64 basin maps of the tau-system: a vectorised numpy integrator of the reduced flow.

The reduced coordinates of :mod:`numerics.validated.box` ($p_k=u_k-u_n$, $g_k=a_k-a_n$, $k<n$; the shift
symmetries of :mod:`theorems._symmetry` make them sufficient), integrated for a whole batch of
initial conditions at once with the classical fourth-order Runge--Kutta method at a fixed step
$h$ (every point of the batch shares the clock $\tau$). A point is *settled* at the first step
where it lies in $R_i^+$ with margin (``a_i - a_j > margin`` and ``u_i - u_j > margin`` for all
$j\ne i$); by the trapping lemma [D] the exact flow from such a point polarizes to $i$, so up
to the float64 integration error the point's winner is $i$. Points not settled by ``tau_max``
get winner ``-1``.

This is a float64 map, not a proof: it is the reference the certified atlas is compared with,
and the source of the basin boundary drawn over it. Step-size check (README): on 256 x 256 grids
of conflict3 and conflict4, ``h = 0.05`` and ``h = 0.025`` give the same winner at every pixel.
"""
from __future__ import annotations

import numpy as np

from theorems import InvalidArgument


def reduced_field_np(Y: np.ndarray, b: float) -> np.ndarray:
    r"""$F(y)$ for a batch ``Y`` of shape ``(N, 2(n-1))`` (float64), same formulas as
    :func:`numerics.validated.box.reduced_field`."""
    N, d = Y.shape
    n = d // 2 + 1
    u = np.concatenate([Y[:, :n - 1], np.zeros((N, 1))], axis=1)
    a = np.concatenate([Y[:, n - 1:], np.zeros((N, 1))], axis=1)
    a = a - a.max(axis=1, keepdims=True)
    e = np.exp(a)
    s = e / e.sum(axis=1, keepdims=True)
    z = (s * u).sum(axis=1, keepdims=True)
    fu = b * s
    fa = s * (u - z)
    return np.concatenate([fu[:, :n - 1] - fu[:, n - 1:], fa[:, :n - 1] - fa[:, n - 1:]], axis=1)


def settled_winner(Y: np.ndarray, margin: float) -> np.ndarray:
    """Token ``i`` with the point in $R_i^+$ by ``margin`` (``-1`` if none)."""
    N, d = Y.shape
    n = d // 2 + 1
    u = np.concatenate([Y[:, :n - 1], np.zeros((N, 1))], axis=1)
    a = np.concatenate([Y[:, n - 1:], np.zeros((N, 1))], axis=1)
    i = np.argmax(a, axis=1)
    rows = np.arange(N)
    ua, aa = u[rows, i][:, None], a[rows, i][:, None]
    du, da = ua - u, aa - a
    mask = np.ones_like(du, dtype=bool)
    mask[rows, i] = False
    ok = np.where(mask, (du > margin) & (da > margin), True).all(axis=1)
    return np.where(ok, i, -1)


def winners(Y0, b: float = 1.0, *, h: float = 0.05, tau_max: float = 200.0, margin: float = 1e-9,
            chunk: int = 1 << 18) -> np.ndarray:
    """Float64 winner (0-based, ``-1`` undecided) of every row of ``Y0`` (reduced initial states)."""
    Y0 = np.asarray(Y0, dtype=np.float64)
    if Y0.ndim != 2 or Y0.shape[1] < 2 or Y0.shape[1] % 2:
        raise InvalidArgument(f"Y0 of shape {Y0.shape}: expected (N, 2(n-1)) with n >= 2")
    if not (h > 0 and tau_max > 0):
        raise InvalidArgument(f"h={h!r}, tau_max={tau_max!r}: expected positive numbers")
    out = np.full(len(Y0), -1, dtype=np.int64)
    for start in range(0, len(Y0), chunk):
        idx = np.arange(start, min(start + chunk, len(Y0)))
        Y = Y0[idx].copy()
        tau = 0.0
        while len(idx):
            w = settled_winner(Y, margin)
            done = w >= 0
            out[idx[done]] = w[done]
            idx, Y = idx[~done], Y[~done]
            if not len(idx) or tau >= tau_max:
                break
            k1 = reduced_field_np(Y, b)
            k2 = reduced_field_np(Y + 0.5 * h * k1, b)
            k3 = reduced_field_np(Y + 0.5 * h * k2, b)
            k4 = reduced_field_np(Y + h * k3, b)
            Y = Y + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
            tau += h
    return out


def boundary_mask(W: np.ndarray) -> np.ndarray:
    """Pixels of a 2-D winner image ``W`` with a 4-neighbour of another winner."""
    B = np.zeros(W.shape, dtype=bool)
    B[:-1, :] |= W[:-1, :] != W[1:, :]
    B[1:, :] |= W[1:, :] != W[:-1, :]
    B[:, :-1] |= W[:, :-1] != W[:, 1:]
    B[:, 1:] |= W[:, 1:] != W[:, :-1]
    return B
