r"""Row 10: batched, softpolar's torch backend vs ``torchode`` (per-sample step sizes), CPU.

Problem: row 4's batch (B flows of the logistic toy shape, $n=d=8$, seeded), float64, $t\in[0,T]$.

* **softpolar**: ``numerics.integrate_batch`` (each element its own step size), ``rtol=1e-8``,
  ``atol=1e-10``, with its default DOP853 and with ``method='dopri5'`` (the anchor's method);
* **today's code path** (the baseline): the same call with ``_legacy=True``, the stepper the
  backend had before the batched rewrite (whole active set gathered and scattered every step,
  ``tensordot`` stage sums, no starting-step estimate), kept inside the backend for this row;
* **anchor**: ``torchode`` 1.0 with ``Dopri5`` and an ``IntegralController`` at the same
  tolerances, ``AutoDiffAdjoint`` solver under ``torch.no_grad()``, evaluation times
  ``[0, T]`` per sample, softpolar's generated torch right-hand side as the vector field. Like
  softpolar (and unlike torchdiffeq) torchode gives each sample its own step size.

All five contenders run interleaved in one run; the lines are: new vs torchode (DOP853 vs Dopri5,
target $\ge 2$; Dopri5 vs Dopri5, target $\ge 1.5$), new vs today's (both methods), and today's vs
torchode (the ratios the issue started from). The load average at the start and end of the
measurement is in the notes. When a target is missed the row profiles softpolar's call
(``cProfile``, top functions by cumulative time) and prints it.
"""
from __future__ import annotations
import io

import numpy as np
from numerics import flow_rhs

from .row_batched import ATOL, RTOL, _flat, _reference, _rel, batch_problem, softpolar_batch
from ._runner import NotAvailable
from ._timing import interleaved, loadavg, ratio

TITLE = ("batched: torch backend (new and today's stepper) vs torchode Dopri5 (per-sample steps; logistic, "
         "n = d = 8, CPU)")
BATCHES = {"smoke": (8,), "quick": (4096,), "full": (256, 4096)}
T_END = {"smoke": "1", "quick": "100", "full": "1000"}
REPS = {"smoke": 1, "quick": 3, "full": 5}
SIZE = 8
TARGET_B = 4096
TARGET = 2.0          # torchode / softpolar, softpolar on its default DOP853
TARGET_SAME = 1.5     # torchode / softpolar, both on Dopri5


def torchode_batch(batch: dict, t_end: str, *, rtol=RTOL, atol=ATOL) -> dict:
    """The anchor; ``{"V", "a" (numpy, final), "info"}``."""
    try:
        import torchode as to
    except ImportError:
        raise NotAvailable("torchode is not installed (pip install softpolar[bench])") from None
    import torch

    rhs = flow_rhs("logistic", "softmax", backend="torch")
    B, d, n = batch["V"].shape
    dt = torch.float64
    w = torch.as_tensor(batch["w"], dtype=dt)
    y0 = torch.cat([torch.as_tensor(batch["V"], dtype=dt).reshape(B, d * n), torch.as_tensor(batch["a"], dtype=dt)], 1)
    nfev = [0]

    def f(t, y):
        nfev[0] += 1
        dV, da = rhs(y[:, :d * n].reshape(B, d, n), y[:, d * n:], w)
        return torch.cat([dV.reshape(B, d * n), da], dim=1)

    term = to.ODETerm(f)
    solver = to.AutoDiffAdjoint(to.Dopri5(term=term), to.IntegralController(atol=atol, rtol=rtol, term=term))
    t_eval = torch.tensor([[0.0, float(t_end)]], dtype=dt).repeat(B, 1)
    with torch.no_grad():
        sol = solver.solve(to.InitialValueProblem(y0=y0, t_eval=t_eval))
    if not bool((sol.status == 0).all()):
        raise RuntimeError(f"torchode did not finish every sample (status {sol.status.unique().tolist()})")
    y = sol.ys[:, -1].numpy()
    steps = sol.stats["n_steps"].numpy()
    return {"V": y[:, :d * n].reshape(B, d, n), "a": y[:, d * n:],
            "info": f"{nfev[0]} batched RHS calls, steps per sample median {int(np.median(steps))}, "
                    f"max {int(steps.max())}"}


def _profile(fn) -> str:
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(15)
    return "\n".join(ln for ln in s.getvalue().splitlines() if ln.strip())[-3000:]


def run(mode: str, log) -> dict:
    """Run row 10; see the module docstring."""
    import torch

    t_end = T_END[mode]
    warm = batch_problem(2, SIZE, seed=1)
    torchode_batch(warm, "0.1")
    for legacy in (False, True):
        softpolar_batch(warm, "0.1", legacy=legacy)
    lines, profile = [], None
    for B in BATCHES[mode]:
        batch = batch_problem(B, SIZE, seed=0)
        out = {}

        def job(key, **kw):
            return lambda: out.__setitem__(key, softpolar_batch(batch, t_end, **kw))

        log(f"row 10: B = {B}, t_end = {t_end}, {REPS[mode]} interleaved rep(s)")
        load0 = loadavg()
        res = interleaved({"new": job("new"), "new5": job("new5", method="dopri5"),
                           "old": job("old", legacy=True), "old5": job("old5", method="dopri5", legacy=True),
                           "torchode": lambda: out.__setitem__("o", torchode_batch(batch, t_end))},
                          reps=REPS[mode], warmup=0, min_sample_s=0)
        load1 = loadavg()
        ref = _reference(batch, t_end)
        k = ref.shape[0]
        err = {key: _rel(_flat(out[key], k), ref) for key in ("new", "new5", "old", "old5", "o")}
        t = {key: res[key]["median_s"] for key in res}
        at_target = B == TARGET_B
        case = f"cpu, B={B}, t_end={t_end}, rtol={RTOL:g}, atol={ATOL:g}"
        common = (f"load average {load0} at the start, {load1} at the end; torch threads "
                  f"{torch.get_num_threads()}; rel. error vs numpy backend (rtol 1e-12, first {k}): ")
        label = {"new": "torch backend (dop853)", "new5": "torch backend, method='dopri5'",
                 "old": "today's torch stepper (dop853)", "old5": "today's torch stepper, method='dopri5'"}
        for key, target in (("new", TARGET), ("new5", TARGET_SAME)):
            r = ratio(t["torchode"], t[key])
            met = (r >= target) if at_target and r is not None else None
            if met is False and profile is None:
                profile = _profile(lambda: softpolar_batch(batch, t_end, method="dop853" if key == "new" else
                                                           "dopri5"))
            lines.append({
                "case": case, "softpolar": label[key], "anchor": "torchode Dopri5", "softpolar_s": t[key],
                "anchor_s": t["torchode"], "ratio_label": "torchode/softpolar", "ratio": r,
                "target": f">= {target:g}" if at_target else None, "met": met,
                "notes": (common + f"softpolar {err[key]:.2g}, torchode {err['o']:.2g}; softpolar "
                          f"{out[key]['info']}; torchode {out['o']['info']}")})
        for key, old in (("new", "old"), ("new5", "old5")):
            lines.append({
                "case": case + ", new vs today's", "softpolar": label[key], "anchor": label[old],
                "softpolar_s": t[key], "anchor_s": t[old], "ratio_label": "today's/new",
                "ratio": ratio(t[old], t[key]), "target": None, "met": None,
                "notes": (common + f"new {err[key]:.2g}, today's {err[old]:.2g}; new {out[key]['info']}; "
                          f"today's {out[old]['info']}")})
        for key in ("old", "old5"):
            lines.append({
                "case": case + ", baseline", "softpolar": label[key], "anchor": "torchode Dopri5",
                "softpolar_s": t[key], "anchor_s": t["torchode"], "ratio_label": "torchode/softpolar",
                "ratio": ratio(t["torchode"], t[key]), "target": None, "met": None,
                "notes": common + f"today's {err[key]:.2g}, torchode {err['o']:.2g}"})
    out = {"lines": lines, "facts": []}
    if profile:
        out["profile"] = profile
    return out
