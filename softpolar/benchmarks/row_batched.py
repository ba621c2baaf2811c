r"""Row 4: batched, softpolar's torch backend vs ``torchdiffeq.odeint`` (dopri5).

Problem: B initializations of the logistic flow with $n=d=8$ (``V = 0.1 N(0,1)``, ``a = 0``,
``w`` a normalized Gaussian, drawn with ``numpy.random.RandomState(seed)``), float64,
$t\in[0,T]$, on the CPU (and on CUDA when ``torch.cuda.is_available()``).

* **softpolar**: ``numerics.integrate_batch`` (torch backend) with ``rtol`` / ``atol`` below,
  its default method (DOP853, the target applies to this line) and ``method='dopri5'``
  (the anchor's method, on its own line); each element has its own step size;
* **today's code path**: the default call with ``_legacy=True`` (the stepper before the batched
  rewrite, kept for the benchmarks), on its own line against the new one;
* **anchor**: ``torchdiffeq.odeint(f, y0, [0, T], method='dopri5', rtol, atol)`` with the
  *same* tolerances, in physical time, on the flat batched state ``(B, d*n + n)``, where
  ``f`` is softpolar's own generated torch right-hand side (its fastest RHS, so the ratio
  measures the integrators). torchdiffeq takes one step size for the whole batch (its error
  norm is an RMS over every entry).

Accuracy: the two final states are compared with each other and, for the first
:data:`N_CHECK` problems, with softpolar's numpy backend at ``rtol = 1e-12``.

Target: torchdiffeq / softpolar $\ge 2$ at B = 4096 (CPU).
"""
from __future__ import annotations

import numpy as np
from numerics import flow_rhs

from ._timing import interleaved, loadavg, ratio
from ._softpolar import _numerics_attr, final_state

TITLE = "batched: torch backend vs torchdiffeq.odeint dopri5 (logistic, n = d = 8)"
BATCHES = {"smoke": (8,), "quick": (256, 4096), "full": (256, 4096)}
T_END = {"smoke": "1", "quick": "100", "full": "1000"}
REPS = {"smoke": 1, "quick": 1, "full": 3}
RTOL, ATOL = 1e-8, 1e-10
SIZE = 8
TARGET_B = 4096
TARGET = 2.0
N_CHECK = 4


def batch_problem(B: int, size: int, seed: int = 0) -> dict:
    """``{"V": (B, d, n), "a": (B, n), "w": (B, d)}`` float64 numpy arrays (seeded)."""
    rs = np.random.RandomState(seed)
    V = 0.1 * rs.randn(B, size, size)
    a = np.zeros((B, size))
    w = rs.randn(B, size)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    return {"V": V, "a": a, "w": w}


def softpolar_batch(batch: dict, t_end: str, *, device: str = "cpu", rtol=RTOL, atol=ATOL,
                    method: str | None = None, legacy: bool = False) -> dict:
    """softpolar's torch backend on the batch; ``{"V", "a" (numpy, final), "info"}``.

    ``rtol`` / ``atol`` / ``method`` ``None``: softpolar's defaults. ``legacy``: the stepper the
    backend had before the batched rewrite (kept inside the backend as the benchmarks' baseline)."""
    fn = _numerics_attr("integrate_batch")
    kw = {} if method is None else {"method": method}
    if legacy:
        kw["_legacy"] = True
    res = fn(batch["V"], batch["a"], batch["w"], loss="logistic", link="softmax", t_end=t_end,
             times=[t_end], rtol=rtol, atol=atol, device=device, progress=False, **kw)
    steps = res["n_steps"].cpu().numpy()
    return {"V": res["V"][-1].cpu().numpy(), "a": res["a"][-1].cpu().numpy(),
            "info": (f"{res['method']}, clock {res['clock']!r}, steps per element median "
                     f"{int(np.median(steps))}, max {int(steps.max())}, element-steps "
                     f"{int(steps.sum() + res['n_rejected'].cpu().numpy().sum())} (rejected included)")}


def torchdiffeq_batch(batch: dict, t_end: str, *, device: str = "cpu", rtol=RTOL, atol=ATOL) -> dict:
    """The anchor (see module docstring); ``{"V", "a" (numpy, final), "info"}``."""
    import torch
    from torchdiffeq import odeint

    rhs = flow_rhs("logistic", "softmax", backend="torch")
    B, d, n = batch["V"].shape
    dt = torch.float64
    w = torch.as_tensor(batch["w"], dtype=dt, device=device)
    y0 = torch.cat([torch.as_tensor(batch["V"], dtype=dt, device=device).reshape(B, d * n),
                    torch.as_tensor(batch["a"], dtype=dt, device=device)], dim=1)
    nfev = [0]

    def f(t, y):
        nfev[0] += 1
        dV, da = rhs(y[:, :d * n].reshape(B, d, n), y[:, d * n:], w)
        return torch.cat([dV.reshape(B, d * n), da], dim=1)

    ts = torch.tensor([0.0, float(t_end)], dtype=dt, device=device)
    with torch.no_grad():
        y = odeint(f, y0, ts, rtol=rtol, atol=atol, method="dopri5")[-1]
    if device != "cpu":
        torch.cuda.synchronize()
    if not bool(torch.isfinite(y).all()):
        raise RuntimeError("torchdiffeq returned a non-finite state")
    y = y.cpu().numpy()
    return {"V": y[:, :d * n].reshape(B, d, n), "a": y[:, d * n:], "info": f"{nfev[0]} RHS calls"}


def _reference(batch: dict, t_end: str) -> np.ndarray:
    """Flat final states of the first :data:`N_CHECK` problems, numpy backend, rtol 1e-12."""
    Problem, simulate = _numerics_attr("Problem"), _numerics_attr("simulate")
    out = []
    for i in range(min(N_CHECK, batch["V"].shape[0])):
        p = Problem(loss="logistic", V=batch["V"][i], a=batch["a"][i], target=batch["w"][i])
        traj = simulate(p, t_end=t_end, times=[t_end], backend="numpy", rtol=1e-12, progress=False)
        out.append(np.array(final_state(traj), dtype=float))
    return np.stack(out)


def _flat(res, k=None):
    V, a = res["V"], res["a"]
    if k is not None:
        V, a = V[:k], a[:k]
    return np.concatenate([V.reshape(V.shape[0], -1), a], axis=1)


def _rel(x, y):
    return float(np.max(np.abs(x - y)) / np.max(np.abs(y)))


def run(mode: str, log) -> dict:
    """Run row 4; see the module docstring."""
    import torch

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    t_end = T_END[mode]
    lines = []
    for device in devices:
        warm = batch_problem(2, SIZE, seed=1)
        softpolar_batch(warm, "0.1", device=device)
        torchdiffeq_batch(warm, "0.1", device=device)
        for B in BATCHES[mode]:
            batch = batch_problem(B, SIZE, seed=0)
            out = {}

            def soft():
                out["softpolar"] = softpolar_batch(batch, t_end, device=device)

            def soft5():
                out["softpolar_dopri5"] = softpolar_batch(batch, t_end, device=device, method="dopri5")

            def old():
                out["old"] = softpolar_batch(batch, t_end, device=device, legacy=True)

            def anchor():
                out["torchdiffeq"] = torchdiffeq_batch(batch, t_end, device=device)

            log(f"row 4: {device}, B = {B}, t_end = {t_end}, {REPS[mode]} interleaved rep(s)")
            res = interleaved({"softpolar": soft, "softpolar_dopri5": soft5, "old": old, "torchdiffeq": anchor},
                              reps=REPS[mode], warmup=0, min_sample_s=0)
            ref = _reference(batch, t_end)
            k = ref.shape[0]
            err_a = _rel(_flat(out["torchdiffeq"], k), ref)
            ta = res["torchdiffeq"]["median_s"]
            for key, label in (("softpolar", "torch backend (default dop853)"),
                               ("softpolar_dopri5", "torch backend, method='dopri5'")):
                err_s = _rel(_flat(out[key], k), ref)
                between = _rel(_flat(out[key]), _flat(out["torchdiffeq"]))
                ts = res[key]["median_s"]
                at_target = B == TARGET_B and device == "cpu" and key == "softpolar"
                r = ratio(ta, ts)
                lines.append({
                    "case": f"{device}, B={B}, t_end={t_end}, rtol={RTOL:g}, atol={ATOL:g}",
                    "softpolar": label, "anchor": "torchdiffeq dopri5",
                    "softpolar_s": ts, "anchor_s": ta, "ratio_label": "torchdiffeq/softpolar", "ratio": r,
                    "target": f">= {TARGET:g}" if at_target else None,
                    "met": (r >= TARGET) if at_target else None,
                    "notes": (f"rel. error vs numpy backend (rtol 1e-12, first {k} problems): softpolar "
                              f"{err_s:.2g}, torchdiffeq {err_a:.2g}; softpolar vs torchdiffeq, whole "
                              f"batch: {between:.2g}; softpolar {out[key]['info']}; torchdiffeq "
                              f"{out['torchdiffeq']['info']}; torch threads {torch.get_num_threads()}"),
                })
            lines.append({
                "case": f"{device}, B={B}, t_end={t_end}, new vs today's",
                "softpolar": "torch backend (default dop853)",
                "anchor": "today's torch stepper (dop853)", "softpolar_s": res["softpolar"]["median_s"],
                "anchor_s": res["old"]["median_s"], "ratio_label": "today's/new",
                "ratio": ratio(res["old"]["median_s"], res["softpolar"]["median_s"]), "target": None, "met": None,
                "notes": (f"rel. error vs numpy backend: new {_rel(_flat(out['softpolar'], k), ref):.2g}, today's "
                          f"{_rel(_flat(out['old'], k), ref):.2g}; today's {out['old']['info']}; load average "
                          f"{loadavg()} at the end"),
            })
    return {"lines": lines, "facts": []}
