"""Thin adapters from the benchmark rows to softpolar's public integrators.

The rows call softpolar exactly as a user would (``numerics.simulate``,
``numerics.integrate_batch``); these helpers only pick out the final state. A missing
public entry point raises :class:`softpolar.benchmarks._runner.NotAvailable`.
"""
from __future__ import annotations

import mpmath
import numerics
from ._runner import NotAvailable


def _numerics_attr(name: str):
    fn = getattr(numerics, name, None)
    if fn is None:
        raise NotAvailable(f"numerics.{name} does not exist yet")
    return fn


def logistic_problem(seed: int, n: int, d: int, a0: str = "zero"):
    """The authors' logistic toy draw (``Problem.from_seed``, paper-notes#authors-settings) at size ``n``, ``d``."""
    Problem = _numerics_attr("Problem")
    return Problem.from_seed(seed, d=d, n=n, loss="logistic", a0=a0)


def simulate(problem, t_end, **kw):
    """``numerics.simulate(problem, t_end=t_end, times=[t_end], **kw)`` (the Trajectory)."""
    fn = _numerics_attr("simulate")
    return fn(problem, t_end=t_end, times=[t_end], progress=False, **kw)


def final_state(traj) -> list:
    """``[V (row-major)..., a...]`` at the last output time, as a flat list."""
    V, a = traj.V[-1], traj.a[-1]
    return [v for row in V for v in row] + list(a)


def rel_error(y, ref) -> mpmath.mpf:
    """$\\max_i |y_i-r_i| / \\max_i |r_i|$ at the current mpmath precision."""
    num = max(abs(mpmath.mpf(u) - mpmath.mpf(r)) for u, r in zip(y, ref))
    den = max(abs(mpmath.mpf(r)) for r in ref)
    return num / den


def digits(err) -> float:
    """Correct decimal digits, ``-log10(err)`` (``inf`` for an exact match)."""
    err = mpmath.mpf(err)
    return float("inf") if err == 0 else float(-mpmath.log10(err))
