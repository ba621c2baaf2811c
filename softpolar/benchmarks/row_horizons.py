r"""Row 6: the long-horizon numbers the mpmath engine was built for (wall times, no anchor, no ratio).

* $t=10^{100}$ at dps 50 for $n=d=8$: ``numerics.simulate(problem, t_end='1e100',
  backend='mpmath', dps=50)`` on the authors' logistic toy (seed 123); the target is
  under 60 s on 2 cores.
* 4096 initializations of $n=d=8$ to $t=10^4$ with the torch backend on the CPU
  (``numerics.integrate_batch``, default method and tolerances); the target is under
  60 s on 2 CPU cores.

Both are single runs (absolute times on a shared machine: the load is printed with them).
Quick mode runs them as in full mode (they are the issue's numbers); smoke mode shrinks them.
"""
from __future__ import annotations

from .row_batched import batch_problem, softpolar_batch
from ._softpolar import logistic_problem, simulate
from ._timing import loadavg, time_once

TITLE = "issue-3 horizons: t = 1e100 at dps 50 (n = d = 8); torch 4096 x (n = d = 8) to t = 1e4"
MP_CASE = {"smoke": ("1e10", 15), "quick": ("1e100", 50), "full": ("1e100", 50)}
BATCH_CASE = {"smoke": (8, "10"), "quick": (4096, "1e4"), "full": (4096, "1e4")}
LIMIT_S = 60.0


def run(mode: str, log) -> dict:
    """Run row 6; see the module docstring."""
    facts = []
    t_end, dps = MP_CASE[mode]
    problem = logistic_problem(123, 8, 8)
    simulate(problem, "1", backend="mpmath", dps=15)  # warm-up
    log(f"row 6: mpmath backend, n = d = 8, t_end = {t_end}, dps {dps}")
    sec, traj = time_once(lambda: simulate(problem, t_end, backend="mpmath", dps=dps))
    facts.append({"label": f"mpmath backend, n=d=8, t = {t_end}, dps {dps}: wall time", "value": sec,
                  "unit": "s", "notes": f"target < {LIMIT_S:g} s; "
                  f"{'met' if sec < LIMIT_S else 'MISSED'} at load {loadavg()}; "
                  f"clock {traj.clock!r}, {traj.n_steps} steps"})
    B, t_end_b = BATCH_CASE[mode]
    log(f"row 6: torch backend, B = {B}, n = d = 8, t_end = {t_end_b}, CPU")
    batch = batch_problem(B, 8, seed=0)
    softpolar_batch(batch_problem(2, 8, seed=1), "1", device="cpu", rtol=None, atol=None)  # warm-up
    sec_b, res = time_once(lambda: softpolar_batch(batch, t_end_b, device="cpu", rtol=None, atol=None))
    facts.append({"label": f"torch backend, B={B} x (n=d=8), t = {t_end_b}, CPU: wall time", "value": sec_b,
                  "unit": "s", "notes": f"target < {LIMIT_S:g} s; "
                  f"{'met' if sec_b < LIMIT_S else 'MISSED'} at load {loadavg()}; {res['info']}"})
    return {"lines": [], "facts": facts}
