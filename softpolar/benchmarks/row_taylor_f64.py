r"""Row 9: the Taylor backend in float64 against softpolar's numpy backend, and heyoka's SIMD
ensembles against the torch backend on the CPU.

* single flow: the authors' logistic toy (seed 123, $n=d=8$) to $t_{\rm end}$ in the ``log``
  clock, ``backend='taylor', dps=None`` (heyoka, tolerance machine epsilon) against
  ``backend='numpy'`` (DOP853, ``rtol=1e-12``, its default); both warm. Ratio numpy/taylor.
  Errors against a 30-digit Taylor run are reported (the tolerances differ; see notes).
* ensemble: B flows ($n=d=8$, row 4's draw) to $t=100$: ``numerics.integrate_ensemble``
  (heyoka batch mode, SIMD lanes, float64, default tolerance) against
  ``numerics.integrate_batch`` (torch DOP853, ``rtol=1e-8``, ``atol=1e-10``, CPU). Ratio torch/ensemble.
"""
from __future__ import annotations

import numpy as np
from numerics import integrate_ensemble

from .row_batched import batch_problem, softpolar_batch
from .row_taylor import heyoka_or_skip
from ._softpolar import final_state, logistic_problem, simulate
from ._timing import interleaved, ratio

TITLE = "Taylor float64 vs numpy backend (n = d = 8); heyoka ensembles vs torch backend (CPU)"
T_END = {"smoke": "10", "quick": "1e4", "full": "1e6"}
BATCH = {"smoke": (8, "1"), "quick": (4096, "100"), "full": (4096, "100")}
REPS = {"smoke": 1, "quick": 5, "full": 7}
SIZE = {"smoke": 3, "quick": 8, "full": 8}


def run(mode: str, log) -> dict:
    """Run row 9; see the module docstring."""
    heyoka_or_skip()

    problem = logistic_problem(123, SIZE[mode], SIZE[mode])
    t_end = T_END[mode]
    out = {}
    log(f"row 9: float64 taylor vs numpy, t_end {t_end}")
    res = interleaved({
        "taylor": lambda: out.__setitem__("taylor", simulate(problem, t_end, backend="taylor", dps=None, clock="log")),
        "numpy": lambda: out.__setitem__("numpy", simulate(problem, t_end, backend="numpy", clock="log"))},
        reps=REPS[mode], warmup=1, min_sample_s=0.05)
    ref = np.array([float(v) for v in final_state(simulate(problem, t_end, backend="taylor", dps=30, clock="tau"))])
    err = {k: float(np.max(np.abs(np.array(final_state(out[k]), float) - ref)) / np.max(np.abs(ref)))
           for k in ("taylor", "numpy")}
    lines = [{"case": f"n=d={problem.n}, t_end {t_end}, log clock", "softpolar": "taylor backend float64 (heyoka)",
              "anchor": "numpy backend (DOP853 rtol 1e-12)", "softpolar_s": res["taylor"]["median_s"],
              "anchor_s": res["numpy"]["median_s"], "ratio_label": "numpy/taylor",
              "ratio": ratio(res["numpy"]["median_s"], res["taylor"]["median_s"]), "target": None, "met": None,
              "notes": (f"rel. error vs a 30-digit run: taylor {err['taylor']:.2g}, numpy {err['numpy']:.2g}; "
                        f"steps taylor {out['taylor'].n_steps}, numpy {out['numpy'].n_steps}")}]
    B, tb = BATCH[mode]
    batch = batch_problem(B, SIZE[mode], seed=0)
    ens = {}
    log(f"row 9: ensemble B = {B} to t = {tb}: heyoka batch vs torch backend")
    res = interleaved({
        "ensemble": lambda: ens.__setitem__("h", integrate_ensemble(batch["V"], batch["a"], batch["w"], loss="logistic",
                                                                    t_end=float(tb))),
        "torch": lambda: ens.__setitem__("t", softpolar_batch(batch, tb))},
        reps=max(1, REPS[mode] // 2), warmup=1, min_sample_s=0)
    diff = float(np.max(np.abs(ens["h"]["a"][:, -1] - ens["t"]["a"])))
    lines.append({"case": f"B={B}, n=d={SIZE[mode]}, t_end {tb}, CPU", "softpolar": "integrate_ensemble (heyoka SIMD)",
                  "anchor": "torch backend (integrate_batch)", "softpolar_s": res["ensemble"]["median_s"],
                  "anchor_s": res["torch"]["median_s"], "ratio_label": "torch/ensemble",
                  "ratio": ratio(res["torch"]["median_s"], res["ensemble"]["median_s"]), "target": None, "met": None,
                  "notes": f"max |a| difference between the two {diff:.2g}; torch {ens['t']['info']}; "
                           f"heyoka max steps per lane group {ens['h']['n_steps']}"})
    return {"lines": lines, "facts": []}
