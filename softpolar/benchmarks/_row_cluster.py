r"""Row 12: what a second dask worker buys: one atlas on a real cluster with 1 worker, then 2.

A ``dask scheduler`` and N ``dask worker`` processes (``--nthreads 1 --no-nanny``) on loopback,
started as a user would (the ``dask`` console script next to this interpreter); the command is
``softpolar atlas conflict3 --min-width W --scheduler tcp://127.0.0.1:PORT`` into a fresh folder
(uniform3 in smoke mode),
for N = 1 and N = 2 in alternation (same background load). The ratio is the wall time with 1
worker over the wall time with 2 (throughput gained by the second worker). The float64 screening,
the boxes and the float64 map all run on the workers (:func:`softpolar.atlas._engine._pipelined`,
no level barrier); what stays serial is the command's start (imports, connecting), writing the
certificate and drawing the PNG. On a shared machine the second worker only pays if a core is
free: the load average is reported with the ratio, and a ratio measured at a load above the core
count says little.
"""
from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._timing import loadavg

TITLE = "scale-out: softpolar atlas on a dask cluster with 2 workers vs 1 (loopback)"
WIDTH = {"smoke": "1/4", "quick": "1/64", "full": "1/128"}
#: the slice: uniform3 certifies most of its area in the first levels (little work per level);
#: conflict3's basin boundary keeps the engine busy at every level
PRESET = {"smoke": "uniform3", "quick": "conflict3", "full": "conflict3"}
REPS = {"smoke": 1, "quick": 1, "full": 2}
TARGET = 1.7
START_S, RUN_S = 120, 3600


def _dask(*args):
    script = Path(sys.executable).with_name("dask")
    if script.exists():
        return [str(script), *args]
    mod = {"scheduler": "distributed.cli.dask_scheduler", "worker": "distributed.cli.dask_worker"}[args[0]]
    return [sys.executable, "-m", mod, *args[1:]]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _timed_atlas(n_workers: int, width: str, tmp: Path, preset: str = "uniform3") -> tuple[float, float]:
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = []
    logs = open(tmp / f"cluster-{n_workers}.log", "wb")
    try:
        procs.append(subprocess.Popen(_dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                                            "--no-dashboard"), stdout=logs, stderr=subprocess.STDOUT, env=_env()))
        for k in range(n_workers):
            procs.append(subprocess.Popen(_dask("worker", addr, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                                "--name", f"bench-w{k}"), stdout=logs, stderr=subprocess.STDOUT,
                                          env=_env()))
        from distributed import Client

        with Client(addr, timeout=START_S) as client:
            client.wait_for_workers(n_workers, timeout=START_S)
            out = tmp / f"atlas-{n_workers}-{time.monotonic_ns()}"
            cmd = [sys.executable, "-m", "softpolar", "atlas", preset, "--min-width", width, "--map-size", "64",
                   "--no-progress", "--scheduler", addr, "--out", str(out)]
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=RUN_S)
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command only: the cluster still runs
            client_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        if res.returncode != 0:
            raise RuntimeError(f"atlas on {n_workers} worker(s) exited {res.returncode}: {res.stderr[-300:]}")
        return wall, client_cpu
    finally:
        for p in reversed(procs):  # the workers first, then the scheduler
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        logs.close()


def run(mode: str, log) -> dict:
    """Run row 12; see the module docstring."""
    width = WIDTH[mode]
    samples, client = {1: [], 2: []}, {1: [], 2: []}
    load0 = loadavg()
    with tempfile.TemporaryDirectory(prefix="softpolar-bench-cluster-") as tmp:
        for rep in range(REPS[mode]):
            for n in (1, 2):
                log(f"row 12: atlas {PRESET[mode]} --min-width {width} on {n} worker(s) (rep {rep + 1})")
                wall, cpu = _timed_atlas(n, width, Path(tmp), PRESET[mode])
                samples[n].append(wall)
                client[n].append(cpu)
    med = {n: sorted(s)[len(s) // 2] for n, s in samples.items()}
    r = med[1] / med[2]
    return {"lines": [{
        "case": f"atlas {PRESET[mode]} --min-width {width}", "softpolar": "2 workers", "anchor": "1 worker",
        "softpolar_s": med[2], "anchor_s": med[1], "ratio_label": "t(1 worker)/t(2 workers)", "ratio": r,
        "target": f">= {TARGET:g}", "met": r >= TARGET,
        "notes": f"{REPS[mode]} rep(s) each, alternated; load {load0} -> {loadavg()} on {os.cpu_count()} CPUs"}],
        "facts": [{"label": f"atlas {PRESET[mode]} --min-width {width}: CPU of the client command (1 / 2 workers)",
                   "value": f"{max(client[1]):.1f} s / {max(client[2]):.1f} s", "unit": "",
                   "notes": f"wall {med[1]:.1f} / {med[2]:.1f} s: the client's share of the 1-worker wall time "
                            f"is what bounds the ratio (Amdahl)"}]}
