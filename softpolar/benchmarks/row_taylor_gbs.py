r"""Row 8: softpolar's two high-precision engines, GBS against the Taylor backend (heyoka).

Problem: the authors' logistic toy (seed 123, $n=d=8$), ``numerics.simulate`` with
``backend='mpmath'`` (GBS) and ``backend='taylor'`` at the same ``dps``, final state only,
the ``tau`` clock for both (their ``auto`` choice). The Taylor backend is timed warm (its
integrator compiled once per process and cached; the compile time is a fact of its own).
The ratio is GBS / taylor.

Fact with a target: $t=10^{100}$ at dps 50, $n=d=8$ with the taylor backend in
under 3 s after compilation (GBS took 33 s when the issue was filed).
"""
from __future__ import annotations

import mpmath

from .row_taylor import heyoka_or_skip
from ._softpolar import digits, final_state, logistic_problem, rel_error, simulate
from ._timing import interleaved, loadavg, ratio, time_once

TITLE = "GBS (mpmath) vs the Taylor backend (logistic toy n = d = 8, tau clock)"
CASES = {"smoke": (("10", 15),), "quick": (("1e4", 30),), "full": (("1e4", 30), ("1e100", 50))}
HORIZON = {"smoke": ("1e10", 15), "quick": ("1e100", 50), "full": ("1e100", 50)}
REPS = {"smoke": 1, "quick": 1, "full": 3}
SIZE = {"smoke": 3, "quick": 8, "full": 8}
LIMIT_S = 3.0


def run(mode: str, log) -> dict:
    """Run row 8; see the module docstring."""
    heyoka_or_skip()
    problem = logistic_problem(123, SIZE[mode], SIZE[mode])
    lines, facts = [], []
    for t_end, dps in CASES[mode]:
        out = {}
        sec_c, _ = time_once(lambda: simulate(problem, t_end, backend="taylor", dps=dps, clock="tau"))
        log(f"row 8: dps {dps}, t_end {t_end}: GBS vs taylor, {REPS[mode]} interleaved rep(s)")
        res = interleaved({
            "gbs": lambda: out.__setitem__("gbs", simulate(problem, t_end, backend="mpmath", dps=dps, clock="tau")),
            "taylor": lambda: out.__setitem__("taylor", simulate(problem, t_end, backend="taylor", dps=dps,
                                                                 clock="tau"))},
            reps=REPS[mode], warmup=0, min_sample_s=0)
        with mpmath.workdps(dps + 5):
            agree = digits(rel_error(final_state(out["taylor"]), final_state(out["gbs"])))
        lines.append({"case": f"dps {dps}, t_end {t_end}, n=d={problem.n}", "softpolar": "taylor backend (warm)",
                      "anchor": "GBS backend", "softpolar_s": res["taylor"]["median_s"],
                      "anchor_s": res["gbs"]["median_s"], "ratio_label": "GBS/taylor",
                      "ratio": ratio(res["gbs"]["median_s"], res["taylor"]["median_s"]), "target": None,
                      "met": None,
                      "notes": (f"final states agree to {agree:.1f} digits; steps GBS {out['gbs'].n_steps} "
                                f"({out['gbs'].n_rhs} RHS calls), taylor {out['taylor'].n_steps}; first taylor "
                                f"call incl. compilation {sec_c:.2f} s")})
    t_end, dps = HORIZON[mode]
    simulate(problem, "1", backend="taylor", dps=dps, clock="tau")  # compile (cached per process)
    log(f"row 8: taylor backend to t = {t_end} at dps {dps} (after compilation)")
    sec, traj = time_once(lambda: simulate(problem, t_end, backend="taylor", dps=dps, clock="tau"))
    facts.append({"label": f"taylor backend, n=d={problem.n}, t = {t_end}, dps {dps}, after compilation: wall time",
                  "value": sec, "unit": "s",
                  "notes": f"target < {LIMIT_S:g} s; {'met' if sec < LIMIT_S else 'MISSED'} at load {loadavg()}; "
                           f"{traj.n_steps} steps, {traj.method}"})
    return {"lines": lines, "facts": facts}
