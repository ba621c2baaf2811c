r"""Row 10: batched, softpolar's torch backend vs ``torchode`` (per-sample step sizes), CPU.

Problem: row 4's batch (B flows of the logistic toy shape, $n=d=8$, seeded), float64, $t\in[0,T]$.

* **softpolar**: ``numerics.integrate_batch`` (DOP853, each element its own step size),
  ``rtol=1e-8``, ``atol=1e-10``;
* **anchor**: ``torchode`` 1.0 with ``Dopri5`` and an ``IntegralController`` at the same
  tolerances, ``AutoDiffAdjoint`` solver under ``torch.no_grad()``, evaluation times
  ``[0, T]`` per sample, softpolar's generated torch right-hand side as the vector field. Like
  softpolar (and unlike torchdiffeq) torchode gives each sample its own step size.

Target: torchode / softpolar $\ge 1.5$ at B = 4096. When missed, the row profiles
softpolar's call (``cProfile``, top functions by cumulative time) and prints it.
"""
from __future__ import annotations

import numpy as np

from ._row_batched import ATOL, RTOL, _flat, _reference, _rel, batch_problem, softpolar_batch
from ._runner import NotAvailable
from ._timing import interleaved, ratio

TITLE = "batched: torch backend vs torchode Dopri5 (per-sample steps; logistic, n = d = 8, CPU)"
BATCHES = {"smoke": (8,), "quick": (4096,), "full": (256, 4096)}
T_END = {"smoke": "1", "quick": "100", "full": "1000"}
REPS = {"smoke": 1, "quick": 1, "full": 3}
SIZE = 8
TARGET_B = 4096
TARGET = 1.5


def torchode_batch(batch: dict, t_end: str, *, rtol=RTOL, atol=ATOL) -> dict:
    """The anchor; ``{"V", "a" (numpy, final), "info"}``."""
    try:
        import torchode as to
    except ImportError:
        raise NotAvailable("torchode is not installed (pip install softpolar[bench])") from None
    import torch

    from numerics import flow_rhs

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
    import io
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
    softpolar_batch(warm, "0.1")
    lines, profile = [], None
    for B in BATCHES[mode]:
        batch = batch_problem(B, SIZE, seed=0)
        out = {}
        log(f"row 10: B = {B}, t_end = {t_end}, {REPS[mode]} interleaved rep(s)")
        res = interleaved({"softpolar": lambda: out.__setitem__("s", softpolar_batch(batch, t_end)),
                           "softpolar_dopri5": lambda: out.__setitem__("s5", softpolar_batch(batch, t_end,
                                                                                             method="dopri5")),
                           "torchode": lambda: out.__setitem__("o", torchode_batch(batch, t_end))},
                          reps=REPS[mode], warmup=0, min_sample_s=0)
        ref = _reference(batch, t_end)
        k = ref.shape[0]
        r = ratio(res["torchode"]["median_s"], res["softpolar"]["median_s"])
        at_target = B == TARGET_B
        met = (r >= TARGET) if at_target and r is not None else None
        if met is False and profile is None:
            profile = _profile(lambda: softpolar_batch(batch, t_end))
        lines.append({
            "case": f"cpu, B={B}, t_end={t_end}, rtol={RTOL:g}, atol={ATOL:g}", "softpolar": "torch backend (dop853)",
            "anchor": "torchode Dopri5", "softpolar_s": res["softpolar"]["median_s"],
            "anchor_s": res["torchode"]["median_s"], "ratio_label": "torchode/softpolar", "ratio": r,
            "target": f">= {TARGET:g}" if at_target else None, "met": met,
            "notes": (f"rel. error vs numpy backend (rtol 1e-12, first {k}): "
                      f"softpolar {_rel(_flat(out['s'], k), ref):.2g}, "
                      f"torchode {_rel(_flat(out['o'], k), ref):.2g}; softpolar {out['s']['info']}; torchode "
                      f"{out['o']['info']}; torch threads {torch.get_num_threads()}")})
        r5 = ratio(res["torchode"]["median_s"], res["softpolar_dopri5"]["median_s"])
        lines.append({
            "case": f"cpu, B={B}, t_end={t_end}, same method", "softpolar": "torch backend, method='dopri5'",
            "anchor": "torchode Dopri5", "softpolar_s": res["softpolar_dopri5"]["median_s"],
            "anchor_s": res["torchode"]["median_s"], "ratio_label": "torchode/softpolar", "ratio": r5,
            "target": None, "met": None,
            "notes": (f"rel. error vs numpy backend: softpolar dopri5 {_rel(_flat(out['s5'], k), ref):.2g}; "
                      f"{out['s5']['info']}")})
    out = {"lines": lines, "facts": []}
    if profile:
        out["profile"] = profile
    return out
