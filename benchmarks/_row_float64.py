r"""Row 3: float64, softpolar's numpy backend vs SciPy's DOP853 called directly, to $t=10^6$.

Problem: the authors' logistic toy, $n=d=8$, seed 123 (digest §1.3), $t\in[0,10^6]$.

* **softpolar**: ``numerics.simulate(problem, t_end=1e6, backend='numpy')`` (its default
  clock and tolerances);
* **anchor**: ``scipy.integrate.solve_ivp(f, (0, 1e6), y0, method='DOP853', rtol, atol)``
  in physical time on a hand-flattened, hand-written vectorized numpy right-hand side (the
  anchor of row 1), with *the same* ``rtol`` / ``atol`` as softpolar used (read back from
  its trajectory), as a researcher would call it.

Accuracy: both final states $(V, a)(10^6)$ against softpolar's mpmath backend at 30 digits
at 20 digits in quick mode (relative max-norm error), and the relative error of $1-\max_i s_i$, the slowly decaying
quantity of claim 18. Times are interleaved medians; no target is set by the issue.
"""
from __future__ import annotations

import numpy as np
import scipy.integrate

from ._row_rhs import handwritten_rhs
from ._softpolar import final_state, logistic_problem, simulate
from ._timing import interleaved, ratio, time_once

TITLE = "float64: numpy backend vs SciPy DOP853 (solve_ivp) direct (logistic, n = d = 8)"
T_END = {"smoke": "10", "quick": "1e6", "full": "1e6"}
REPS = {"smoke": 1, "quick": 3, "full": 5}
SIZE = 8
SEED = 123
#: digits of the mpmath reference: float64 errors (>= 1e-16) need a few more than 16
REF_DPS = {"smoke": 18, "quick": 20, "full": 30}


def scipy_dop853(problem, t_end: float, rtol: float, atol: float):
    """The anchor: ``solve_ivp`` DOP853 on the flat state; returns ``(y_end, nfev)``."""
    d, n = problem.d, problem.n
    w = np.array(problem.target)

    def f(t, y):
        dV, da = handwritten_rhs(y[:d * n].reshape(d, n), y[d * n:], w)
        return np.concatenate([dV.ravel(), da])

    y0 = np.concatenate([problem.V.ravel(), problem.a])
    sol = scipy.integrate.solve_ivp(f, (0.0, t_end), y0, method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"solve_ivp DOP853 failed: {sol.message}")
    return sol.y[:, -1], sol.nfev


def _one_minus_max(a):
    a = np.asarray(a, dtype=float)
    e = np.exp(a - a.max())
    s = e / e.sum()
    return 1.0 - s.max()


def run(mode: str, log) -> dict:
    """Run row 3; see the module docstring."""
    problem = logistic_problem(SEED, SIZE, SIZE)
    t_end = T_END[mode]
    T = float(t_end)
    simulate(problem, "1", backend="numpy")  # warm-up (lambdify, caches)
    log(f"row 3: reference, softpolar mpmath backend at dps {REF_DPS[mode]} to t = {t_end}")
    ref_s, ref = time_once(lambda: simulate(problem, t_end, backend="mpmath", dps=REF_DPS[mode]))
    ref_state = [float(x) for x in final_state(ref)]
    ref_gap = float(ref.one_minus_max[-1])
    probe = simulate(problem, t_end, backend="numpy")
    rtol, atol = float(probe.rtol), float(probe.atol)
    out = {}

    def soft():
        out["softpolar"] = simulate(problem, t_end, backend="numpy")

    def anchor():
        out["scipy"] = scipy_dop853(problem, T, rtol, atol)

    log(f"row 3: {REPS[mode]} interleaved rep(s) to t = {t_end}")
    res = interleaved({"softpolar": soft, "scipy": anchor}, reps=REPS[mode], warmup=0, min_sample_s=0)
    y_s = np.array([float(x) for x in final_state(out["softpolar"])])
    y_a, nfev = out["scipy"]
    ref_arr = np.array(ref_state)
    scale = np.max(np.abs(ref_arr))
    err_s = float(np.max(np.abs(y_s - ref_arr)) / scale)
    err_a = float(np.max(np.abs(y_a - ref_arr)) / scale)
    d, n = problem.d, problem.n
    gap_s = float(out["softpolar"].one_minus_max[-1])
    gap_a = _one_minus_max(y_a[d * n:])
    gerr_s, gerr_a = abs(gap_s - ref_gap) / ref_gap, abs(gap_a - ref_gap) / ref_gap
    ts, ta = res["softpolar"]["median_s"], res["scipy"]["median_s"]
    traj = out["softpolar"]
    lines = [{
        "case": f"t_end={t_end}, rtol={rtol:g}, atol={atol:g}", "softpolar": "numpy backend",
        "anchor": "SciPy DOP853", "softpolar_s": ts, "anchor_s": ta, "ratio_label": "DOP853/softpolar",
        "ratio": ratio(ta, ts), "target": None, "met": None,
        "notes": (f"rel. error of (V, a)(t_end) vs mpmath dps {REF_DPS[mode]}: softpolar {err_s:.2g}, "
                  f"DOP853 {err_a:.2g}; rel. error of 1-max s ({ref_gap:.4g}): softpolar "
                  f"{gerr_s:.2g}, DOP853 {gerr_a:.2g}; softpolar clock {traj.clock!r}, "
                  f"{traj.n_steps} steps; DOP853 {nfev} RHS calls; {REPS[mode]} interleaved rep(s)"),
    }]
    facts = [
        {"label": f"softpolar numpy backend relative error at t = {t_end}", "value": err_s, "unit": ""},
        {"label": f"SciPy DOP853 relative error at t = {t_end}", "value": err_a, "unit": ""},
        {"label": f"mpmath reference (dps {REF_DPS[mode]}) wall time to t = {t_end}", "value": ref_s, "unit": "s"},
    ]
    return {"lines": lines, "facts": facts}
