r"""Row 3: float64, softpolar's numpy backend vs SciPy's DOP853 called directly, to $t=10^6$.

Problem: the authors' logistic toy, $n=d=8$, seed 123 (paper-notes#authors-settings), $t\in[0,10^6]$.

* **anchor**: ``scipy.integrate.solve_ivp(f, (0, 1e6), y0, method='DOP853', rtol, atol)``
  in physical time $t$ on the flat state $(V, a)$ with a hand-written vectorized numpy
  right-hand side (the anchor of row 1), as a researcher would call it, with *the same*
  ``rtol`` / ``atol`` as softpolar used (read back from its trajectory);
* **softpolar, same clock** (line 1, apples to apples):
  ``numerics.simulate(problem, t_end=1e6, backend='numpy', clock='t')``: the same method
  (SciPy's DOP853 class), clock $t$, state $(V, a)$, tolerances and error norm as the anchor,
  so both take the same steps (the notes print both step / RHS-call counts and the
  difference of the two final states, 4e-16 measured). The ratio is then the cost of one softpolar
  right-hand-side evaluation (generated ``flow_rhs`` plus the driver's wrapper) against the
  hand-written one;
* **softpolar, default settings** (line 2): the same call without ``clock``. For the
  logistic loss and ``t_end > 100`` ``clock='auto'`` is the ``log`` clock,
  $dy/d\sigma=e^\sigma f(y)$, $\sigma=\log(1+t)$ (:mod:`numerics.integrate._common`): at the same
  tolerances it takes fewer steps than the $t$ clock and ends with a larger error, because
  the local error per step is what the tolerances control, not the global error (measured
  in :mod:`numerics.integrate._numpy`). This line is *not* apples to apples: it compares the
  two tools' defaults.

Accuracy: the final states $(V, a)(10^6)$ against softpolar's mpmath backend at 30 digits
(20 in quick mode; relative max-norm error), and the relative error of $1-\max_i s_i$, the
slowly decaying quantity of claim 18. Times are interleaved medians; no target is set by the
issue.
"""
from __future__ import annotations

import numpy as np
import scipy.integrate

from .row_rhs import handwritten_rhs
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
    """The anchor: ``solve_ivp`` DOP853 on the flat state; returns ``(y_end, nfev, n_steps)``."""
    d, n = problem.d, problem.n
    w = np.array(problem.target)

    def f(t, y):
        dV, da = handwritten_rhs(y[:d * n].reshape(d, n), y[d * n:], w)
        return np.concatenate([dV.ravel(), da])

    y0 = np.concatenate([problem.V.ravel(), problem.a])
    sol = scipy.integrate.solve_ivp(f, (0.0, t_end), y0, method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"solve_ivp DOP853 failed: {sol.message}")
    return sol.y[:, -1], sol.nfev, len(sol.t) - 1


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
    d, n = problem.d, problem.n
    simulate(problem, "1", backend="numpy")  # warm-up (lambdify, caches)
    log(f"row 3: reference, softpolar mpmath backend at dps {REF_DPS[mode]} to t = {t_end}")
    ref_s, ref = time_once(lambda: simulate(problem, t_end, backend="mpmath", dps=REF_DPS[mode]))
    ref_arr = np.array([float(x) for x in final_state(ref)])
    scale = np.max(np.abs(ref_arr))
    ref_gap = float(ref.one_minus_max[-1])
    probe = simulate(problem, t_end, backend="numpy")
    rtol, atol = float(probe.rtol), float(probe.atol)
    out = {}

    def soft_t():
        out["softpolar_t"] = simulate(problem, t_end, backend="numpy", clock="t")

    def soft_default():
        out["softpolar_default"] = simulate(problem, t_end, backend="numpy")

    def anchor():
        out["scipy"] = scipy_dop853(problem, T, rtol, atol)

    log(f"row 3: {REPS[mode]} interleaved rep(s) to t = {t_end}")
    res = interleaved({"softpolar_t": soft_t, "softpolar_default": soft_default, "scipy": anchor},
                      reps=REPS[mode], warmup=0, min_sample_s=0)
    y_a, nfev, steps_a = out["scipy"]
    err_a = float(np.max(np.abs(y_a - ref_arr)) / scale)
    gerr_a = abs(_one_minus_max(y_a[d * n:]) - ref_gap) / ref_gap
    ta = res["scipy"]["median_s"]
    anchor_note = f"DOP853 direct: clock 't', {steps_a} steps, {nfev} RHS calls"
    lines, facts = [], []
    for key, label in (("softpolar_t", "numpy backend, clock='t' (same clock)"),
                       ("softpolar_default", "numpy backend, default settings")):
        traj = out[key]
        y_s = np.array([float(x) for x in final_state(traj)])
        err_s = float(np.max(np.abs(y_s - ref_arr)) / scale)
        gerr_s = abs(float(traj.one_minus_max[-1]) - ref_gap) / ref_gap
        ts = res[key]["median_s"]
        same = ""
        if traj.clock == "t":
            same_steps = traj.n_steps == steps_a and traj.n_rhs == nfev
            diff = float(np.max(np.abs(y_s - y_a)) / scale)
            same = (f"; same steps as DOP853 direct: {same_steps}, final states differ by "
                    f"{diff:.1g} (rel.); "
                    f"per RHS call incl. solver: softpolar {ts / traj.n_rhs * 1e6:.1f} us, "
                    f"DOP853 direct {ta / nfev * 1e6:.1f} us")
        lines.append({
            "case": f"t_end={t_end}, rtol={rtol:g}, atol={atol:g}",
            "softpolar": label, "anchor": "SciPy DOP853 (clock t)", "softpolar_s": ts,
            "anchor_s": ta, "ratio_label": "DOP853/softpolar", "ratio": ratio(ta, ts),
            "target": None, "met": None,
            "notes": (f"rel. error of (V, a)(t_end) vs mpmath dps {REF_DPS[mode]}: softpolar "
                      f"{err_s:.2g}, DOP853 {err_a:.2g}; rel. error of 1-max s ({ref_gap:.4g}): "
                      f"softpolar {gerr_s:.2g}, DOP853 {gerr_a:.2g}; softpolar clock "
                      f"{traj.clock!r}, {traj.n_steps} steps ({traj.n_rejected} rejected), "
                      f"{traj.n_rhs} RHS calls; {anchor_note}{same}; {REPS[mode]} interleaved "
                      "rep(s)"),
        })
        facts.append({"label": f"softpolar numpy backend (clock {traj.clock!r}) relative error "
                               f"at t = {t_end}", "value": err_s, "unit": ""})
    facts += [
        {"label": f"SciPy DOP853 relative error at t = {t_end}", "value": err_a, "unit": ""},
        {"label": f"mpmath reference (dps {REF_DPS[mode]}) wall time to t = {t_end}", "value": ref_s, "unit": "s"},
    ]
    return {"lines": lines, "facts": facts}
