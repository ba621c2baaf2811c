r"""Two engines, one answer: the long-horizon logistic claims re-run on GBS and on the Taylor backend.

In ``softpolar verify --profile full`` the claims that rest on trajectories to $t=10^{100}$
(C15, C17, C18: the asymptotic instances; C20: one random instance per $n$) integrate the
reduced logistic system $(u,a)$ of the same instances with two independent engines at
``ctx.dps`` digits:

* GBS (:func:`numerics.reduced_logistic`, ``backend='mpmath'``): Gragg-Bulirsch-Stoer
  extrapolation over the generated right-hand side;
* Taylor (:func:`numerics.reduced_taylor`): the SymPy-derived flow compiled by heyoka.

They share the derivation and nothing numerical. At each mark $t\in\{10^{10},10^{50},10^{100}\}$
the digits of agreement are $-\log_{10}$ of the largest difference in $a$ (relative to
$\max(1,|a|)$) and in $1-\max_i s_i$ (relative). The threshold is ``dps - 5`` digits, the GBS
backend's own standard (runs at ``dps`` and ``2 dps`` agree to ``dps - 5`` digits: the accuracy the
mpmath engine promises).
Fewer digits turn a verified claim into ``inconclusive`` (the claim fails): the trajectories
it rests on are not established. Without heyoka the cross-check is skipped and says so.
"""
from __future__ import annotations

import time
from decimal import Decimal

import mpmath
import numerics

from ..claim import Outcome

#: output times of the cross-check.
MARKS = ("1e10", "1e50", "1e100")
#: digits of agreement required below the working precision (see module docstring).
DIGITS_MARGIN = 5


def _digits(x, y, cap):
    """Digits of agreement of two lists of mpf (relative to max(1, |y|)), at most ``cap`` (both
    results are rounded to ``cap`` = dps digits, so equal values agree to all of them)."""
    err = max(abs(a - b) / max(mpmath.mpf(1), abs(b)) for a, b in zip(x, y))
    return float(cap) if err == 0 else min(float(cap), float(-mpmath.log10(err)))


def _one_minus_max(a):
    m = max(a)
    e = [mpmath.exp(v - m) for v in a]
    return 1 - 1 / mpmath.fsum(e)  # the largest weight is e^0 / sum


def engine_crosscheck(ctx, instances, *, key: str, marks=MARKS) -> dict | None:
    """Integrate ``instances`` (dicts with ``name``, ``u0``, ``a0``, ``b``) on both engines.

    Returns ``None`` outside the full profile; otherwise a JSON-able dict with per-instance
    digits, ``min_digits``, ``threshold`` and ``agree`` (or ``skipped`` when heyoka is missing).
    Memoized in ``ctx`` under ``key``.
    """
    if not ctx.full:
        return None

    def compute():
        if not numerics.taylor_available():
            return {"skipped": "heyoka is not installed (extra [taylor]); the Taylor engine did not run"}
        dps = ctx.dps
        times = ["0", *marks]
        rows, secs = [], {"gbs": 0.0, "taylor": 0.0}
        for inst in instances:
            u0, a0, b = [float(v) for v in inst["u0"]], [float(v) for v in inst["a0"]], float(inst["b"])
            t0 = time.perf_counter()
            # b as the exact decimal expansion of the double: reduced_logistic reads a float through its
            # shortest repr (not its binary value), which alone limits the agreement to ~17 digits
            g = numerics.reduced_logistic(u0, a0, str(Decimal(b)), t_end=marks[-1], times=times, dps=dps)
            t1 = time.perf_counter()
            ty = numerics.reduced_taylor(u0, a0, b, t_end=marks[-1], times=times, dps=dps)
            t2 = time.perf_counter()
            secs["gbs"] += t1 - t0
            secs["taylor"] += t2 - t1
            with mpmath.workdps(dps + 10):
                da = [_digits(ty["a"][k], g.a[k], dps) for k in range(1, len(times))]
                ds = [_digits([_one_minus_max(ty["a"][k])], [_one_minus_max(g.a[k])], dps)
                      for k in range(1, len(times))]
            rows.append({"instance": inst["name"], "digits_a": [round(v, 1) for v in da],
                         "digits_one_minus_max_s": [round(v, 1) for v in ds]})
        threshold = dps - DIGITS_MARGIN
        low = min(min(r["digits_a"] + r["digits_one_minus_max_s"]) for r in rows)
        return {"engines": ["GBS (mpmath)", "Taylor (heyoka)"], "dps": dps, "marks": list(marks), "rows": rows,
                "min_digits": low, "threshold": threshold, "agree": low >= threshold,
                "seconds": {k: round(v, 2) for k, v in secs.items()}}

    return ctx.memo(("engine_crosscheck", key), compute)


def with_engine_crosscheck(ctx, out: Outcome, instances, *, key: str, marks=MARKS) -> Outcome:
    """``out`` with the two-engine cross-check appended (full profile, verified outcomes only).

    ``instances``: a list of instance dicts, or a callable returning one (evaluated only when the
    cross-check runs); ``marks``: the output times compared (as in :func:`engine_crosscheck`). A disagreement below
    the threshold makes the outcome ``inconclusive``.
    """
    if not ctx.full or out.verdict != "verified":
        return out
    check = engine_crosscheck(ctx, instances() if callable(instances) else instances, key=key, marks=marks)
    details = {**out.details, "engine_crosscheck": check}
    if "skipped" in check:
        return Outcome("verified", out.evidence + f"; engine cross-check skipped ({check['skipped']})",
                       details=details, figures=out.figures)
    ev = (out.evidence + f"; GBS and Taylor engines at {check['dps']} digits agree to >= {check['min_digits']:.1f} "
          f"digits at t=" + ", ".join(check["marks"]) + f" ({len(check['rows'])} instances; required "
          f"{check['threshold']})")
    if not check["agree"]:
        return Outcome("inconclusive", ev, details=details, figures=out.figures,
                       reason=f"the two engines disagree: {check['min_digits']:.1f} digits < {check['threshold']}")
    return Outcome("verified", ev, details=details, figures=out.figures)


def reduced_instances(runs, *, first_only: bool = False) -> list:
    """Instance dicts (``name``, ``u0``, ``a0``, ``b``) from claim runs: single instances (``u0`` 1-d)
    or batches (``u0`` 2-d, then the first member of each batch when ``first_only``)."""
    out = []
    for r in runs:
        u0 = r["u0"]
        if getattr(u0, "ndim", 1) == 1:
            out.append({"name": r.get("name", f"n={len(u0)}"), "u0": u0, "a0": r["a0"], "b": r["b"]})
            continue
        count = 1 if first_only else len(u0)
        for i in range(count):
            out.append({"name": f"n={u0.shape[1]} #{i}", "u0": u0[i], "a0": r["a0"][i], "b": r["b"][i]})
    return out
