r"""Row 17: scaling, one problem at $n = d \in \{64, 256, 1024\}$ (and 4096 in full mode), time and peak
memory per backend, each against its anchor in the same run.

The problem is the authors' logistic draw at size $n = d$ (``Problem.from_seed(1, d=n, n=n,
loss='logistic')``: $V = 0.1\,N(0,1)$, $a = 0$, $w$ a normalized Gaussian), float64 on the CPU.

* **numpy backend**: one evaluation of the generated right-hand side (``numerics.flow_rhs('logistic',
  'softmax')``) against the hand-written numpy RHS of row 1 (:func:`.row_rhs.handwritten_rhs`), interleaved
  and calibrated as in row 1; both results agree to 1e-12 before any timing. Peak memory: the bytes numpy
  allocates during one call (``tracemalloc``, which numpy reports to), the arguments excluded.
* **torch backend**: ``numerics.integrate_batch`` on that one problem (a batch of one) with
  ``method='dopri5'``, ``clock='t'`` (physical time, as the anchor) against ``torchdiffeq.odeint(...,
  method='dopri5')`` with the same ``rtol`` / ``atol`` on the flat state, whose right-hand side is
  softpolar's generated torch RHS (as in row 4: the ratio measures the integrators). Interleaved runs to
  :data:`T_END`; the final states agree to :data:`AGREE_TORCH`. Peak memory: in a fresh process per
  contender and size, the peak resident set (``VmHWM``) less the resident set just before the call
  (imports and the problem excluded).

Targets (issue 39): torch backend / torchdiffeq $\le 1.5$ and generated / hand-written $\le 1.2$, both at
$n = d = 1024$. The 4096 size (V has 16.8 M entries; the torch run holds several copies of the state) is in
the full mode only: on the 2-core machine of these reports it costs minutes of the quick budget.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
from numerics import flow_rhs

from ._timing import interleaved, ratio
from ._softpolar import _numerics_attr, logistic_problem
from .row_batched import torchdiffeq_batch
from .row_rhs import handwritten_rhs

TITLE = "scaling: one problem at n = d = 64 .. 4096, numpy RHS vs hand-written, torch backend vs torchdiffeq"
SIZES = {"smoke": (8, 16), "quick": (64, 256, 1024), "full": (64, 256, 1024, 4096)}
#: interleaved repetitions (torch runs; the RHS timings are calibrated samples, 5 a contender)
REPS = {"smoke": 1, "quick": 3, "full": 5}
RHS_REPS = {"smoke": 2, "quick": 5, "full": 9}
T_END = "10"
RTOL, ATOL = 1e-8, 1e-10
TARGET_N = 1024
TARGET_TORCH, TARGET_NUMPY = 1.5, 1.2
AGREE_RHS = 1e-12
AGREE_TORCH = 1e-5
#: this row reports medians of interleaved repetitions: ``--repeat K`` sets the torch repetitions
REPEATABLE = True


def problem(n: int) -> dict:
    """``{"V": (n, n), "a": (n,), "w": (n,)}``, float64: ``Problem.from_seed(1, d=n, n=n, loss='logistic')``."""
    p = logistic_problem(1, n, n)
    return {"V": np.array(p.V, dtype=float), "a": np.array(p.a, dtype=float),
            "w": np.array(p.target, dtype=float)}


def softpolar_torch(prob: dict, t_end: str = T_END) -> dict:
    """The torch backend on the one problem (a batch of one, dopri5, physical time)."""
    fn = _numerics_attr("integrate_batch")
    res = fn(prob["V"][None], prob["a"][None], prob["w"][None], loss="logistic", link="softmax", t_end=t_end,
             times=[t_end], rtol=RTOL, atol=ATOL, method="dopri5", clock="t", progress=False)
    steps = int(res["n_steps"].cpu().numpy().sum())
    return {"y": np.concatenate([res["V"][-1].cpu().numpy().ravel(), res["a"][-1].cpu().numpy().ravel()]),
            "info": f"{steps} steps"}


def torchdiffeq_torch(prob: dict, t_end: str = T_END) -> dict:
    """The anchor: row 4's ``torchdiffeq`` call on the batch of one."""
    out = torchdiffeq_batch({"V": prob["V"][None], "a": prob["a"][None], "w": prob["w"][None]}, t_end,
                            rtol=RTOL, atol=ATOL)
    return {"y": np.concatenate([out["V"].ravel(), out["a"].ravel()]), "info": out["info"]}


CONTENDERS = {"softpolar": softpolar_torch, "torchdiffeq": torchdiffeq_torch}


def _rss_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"no {field} in /proc/self/status")


def peak_child(name: str, n: int) -> None:
    """In a fresh process: one call of contender ``name`` at size ``n``; print its peak memory above the
    resident set before the call, in bytes (JSON)."""
    import torch

    torch.set_num_threads(1)
    prob = problem(n)
    CONTENDERS[name](prob, "0.01")  # imports, lambdify, first-call allocations of torch's own
    before = _rss_kib("VmRSS")
    CONTENDERS[name](prob)
    print(json.dumps({"peak_bytes": (_rss_kib("VmHWM") - before) * 1024}))


def peak_torch(name: str, n: int) -> int | None:
    """:func:`peak_child` in a subprocess (same interpreter, this tree first on the path); ``None`` where
    ``/proc`` is not there."""
    if not Path("/proc/self/status").exists():
        return None
    root = str(Path(__file__).resolve().parent.parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    code = ("import sys; from softpolar.benchmarks.row_scaling import peak_child; "
            "peak_child(sys.argv[1], int(sys.argv[2]))")
    res = subprocess.run([sys.executable, "-c", code, name, str(n)], capture_output=True, text=True, env=env,
                         timeout=1800, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"row 17: the memory child of {name} at n = d = {n} exited {res.returncode}: "
                           f"{res.stderr[-300:]}")
    return int(json.loads(res.stdout.strip().splitlines()[-1])["peak_bytes"])


def peak_numpy(fn, *args) -> int:
    """Peak bytes numpy allocates during ``fn(*args)`` (``tracemalloc``)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def rel_error(x, y) -> float:
    """max |x - y| / max |y|: how far ``x`` lies from the reference ``y`` (the rows' agreement measure)."""
    x, y = np.asarray(x), np.asarray(y)
    return float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300))


def _mib(b) -> str:
    return "-" if b is None else f"{b / 2**20:.1f}"


def run(mode: str, log, repeat: int | None = None) -> dict:
    """Run row 17; see the module docstring."""
    import torch

    rhs = flow_rhs("logistic", "softmax")
    reps = repeat or REPS[mode]
    lines, table = [], []
    softpolar_torch(problem(8), "0.1")  # warm-up: imports, the torch RHS's lambdify
    torchdiffeq_torch(problem(8), "0.1")
    for n in SIZES[mode]:
        prob = problem(n)
        V, a, w = prob["V"], prob["a"], prob["w"]
        at_target = n == TARGET_N
        # numpy: the RHS, generated vs hand-written
        gen, ref = rhs(V, a, w), handwritten_rhs(V, a, w)
        err = max(rel_error(gen[0], ref[0]), rel_error(gen[1], ref[1]))
        if not err <= AGREE_RHS:
            raise RuntimeError(f"row 17, n = d = {n}: the numpy RHS disagrees with the hand-written one "
                               f"({err:.3g} > {AGREE_RHS:g}); refusing to time them")
        log(f"row 17: n = d = {n}, numpy RHS")
        res = interleaved({"generated": lambda: rhs(V, a, w), "handwritten": lambda: handwritten_rhs(V, a, w)},
                          reps=RHS_REPS[mode], min_sample_s=0.002 if mode == "smoke" else 0.02)
        tg, th = res["generated"]["median_s"], res["handwritten"]["median_s"]
        mg, mh = peak_numpy(rhs, V, a, w), peak_numpy(handwritten_rhs, V, a, w)
        r_np = ratio(tg, th)
        lines.append({"case": f"n=d={n}, one RHS evaluation", "softpolar": "numpy backend (generated RHS)",
                      "anchor": "hand-written numpy RHS", "softpolar_s": tg, "anchor_s": th,
                      "ratio_label": "generated/hand-written", "ratio": r_np,
                      "target": f"<= {TARGET_NUMPY:g}" if at_target else None,
                      "met": (r_np <= TARGET_NUMPY) if at_target else None,
                      "notes": f"agree to {err:.1e} rel; {RHS_REPS[mode]} interleaved calibrated samples; peak "
                               f"allocated {_mib(mg)} / {_mib(mh)} MiB (tracemalloc)"})
        # torch: one problem, dopri5, vs torchdiffeq
        log(f"row 17: n = d = {n}, torch backend vs torchdiffeq ({reps} interleaved rep(s))")
        out = {}
        res = interleaved({name: (lambda name=name, fn=fn: out.__setitem__(name, fn(prob)))
                           for name, fn in CONTENDERS.items()}, reps=reps, warmup=0, min_sample_s=0)
        agree = rel_error(out["softpolar"]["y"], out["torchdiffeq"]["y"])
        if not agree <= AGREE_TORCH:
            raise RuntimeError(f"row 17, n = d = {n}: the torch backend and torchdiffeq end {agree:.3g} apart "
                               f"(> {AGREE_TORCH:g})")
        ts, ta = res["softpolar"]["median_s"], res["torchdiffeq"]["median_s"]
        samples = list(zip(res["softpolar"]["samples_s"], res["torchdiffeq"]["samples_s"]))
        ratios = [s / t for s, t in samples]
        log(f"row 17: n = d = {n}, peak memory (a fresh process per contender)")
        ms, ma = peak_torch("softpolar", n), peak_torch("torchdiffeq", n)
        r_t = ratio(ts, ta)
        lines.append({"case": f"n=d={n}, t_end={T_END}, rtol={RTOL:g}, atol={ATOL:g}",
                      "softpolar": "torch backend, dopri5, clock 't'", "anchor": "torchdiffeq dopri5",
                      "softpolar_s": ts, "anchor_s": ta, "ratio_label": "softpolar/torchdiffeq", "ratio": r_t,
                      "ratios": ratios if len(ratios) > 1 else None,
                      "target": f"<= {TARGET_TORCH:g}" if at_target else None,
                      "met": (r_t <= TARGET_TORCH) if at_target else None,
                      "notes": f"final states agree to {agree:.1e} rel; softpolar {out['softpolar']['info']}, "
                               f"torchdiffeq {out['torchdiffeq']['info']}; {reps} interleaved rep(s); peak memory "
                               f"above the call's start {_mib(ms)} / {_mib(ma)} MiB; torch threads "
                               f"{torch.get_num_threads()}"})
        table.append([n, f"{tg * 1e3:.3g} ms", f"{th * 1e3:.3g} ms", f"**{r_np:.2f}**", f"{_mib(mg)} / {_mib(mh)}",
                      f"{ts:.3g} s", f"{ta:.3g} s", f"**{r_t:.2f}**", f"{_mib(ms)} / {_mib(ma)}"])
    columns = ["n = d", "numpy RHS (generated)", "hand-written", "generated / hand-written",
               "peak MiB (gen. / hand)", f"torch backend dopri5 to t = {T_END}", "torchdiffeq dopri5",
               "softpolar / torchdiffeq", "peak MiB (softpolar / torchdiffeq)"]
    return {"lines": lines, "table": {"columns": columns, "rows": table}}
