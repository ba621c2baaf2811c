r"""Row 12: what a second dask worker buys: an atlas and a training grid on a real cluster with 1 worker, then 2.

A ``dask scheduler`` and N ``dask worker`` processes (``--nthreads 1 --no-nanny``, BLAS/OpenMP at one
thread) on loopback, started as a user would (the ``dask`` console script next to this interpreter), a
fresh cluster for every measurement, for N = 1 and N = 2 in alternation (same background load). The ratio
is the wall time with 1 worker over the wall time with 2 (throughput gained by the second worker); with
several pairs, each side is the upper median of its samples. Two cases:

* atlas: ``softpolar atlas conflict3 --min-width W --scheduler tcp://127.0.0.1:PORT`` into a fresh folder
  (uniform3 in smoke mode). The float64 screening (64 boxes a task), the boxes
  (:data:`~softpolar.atlas._engine.CERT_CHUNK` a task) and the float64 map all run on the workers
  (:func:`softpolar.atlas._engine._pipelined`, no level barrier); what stays serial is the command's
  start (imports, connecting), routing results, writing the certificate and drawing the PNG.
* grid: a purpose-sized classification grid (:func:`grid_configs`: 4 attention kernels x seeds, each run
  a few CPU seconds at one torch thread) through :func:`softpolar.experiments.run_grid` with
  ``scheduler="tcp://..."`` in a client process of its own; every run file of every measurement must equal
  the first one's bit for bit, timings aside (else the row fails). The bench's own (idle) client reads the
  scheduler's task stream afterwards, and a fact line splits the grid's wall time (:func:`phases`): the steady
  state from the first run's start to the last run's end (1 / 2 workers, its ratio beside the end-to-end one),
  the start-up before the first run (imports, connecting, the workers loading softpolar), the exit, the tail.

The CPU of the client command is reported beside each ratio: on 2 cores it shares a core with a worker,
so it (with the scheduler's) is what bounds the ratio. On a shared machine the second worker only pays if
a core is free: the load average is reported with the ratio, and a ratio measured at a load above the
core count says little.
"""
from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._timing import loadavg

TITLE = "scale-out: an atlas and a training grid on a dask cluster with 2 workers vs 1 (loopback)"
WIDTH = {"smoke": "1/4", "quick": "1/64", "full": "1/128"}
#: the slice: uniform3 certifies most of its area in the first levels (little work per level);
#: conflict3's basin boundary keeps the engine busy at every level
PRESET = {"smoke": "uniform3", "quick": "conflict3", "full": "conflict3"}
#: alternated (1 worker, 2 workers) pairs per case: the full mode is sized for about 6 minutes on 2 idle cores
#: (atlas 1/128: about 90 + 50 s; grid: 16 runs of about 3 CPU s, about 55 + 30 s a pair)
REPS = {"atlas": {"smoke": 1, "quick": 1, "full": 1}, "grid": {"smoke": 1, "quick": 1, "full": 2}}
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
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[key] = "1"  # one thread per worker (a training run also pins torch to one thread)
    return env



#: the grid case: classification runs (the authors' task at reduced sizes) over these kernels x seeds
GRID_KINDS = ("softmax", "sigmoid-unnorm", "linear-unnorm", "elu-norm")
GRID_SEEDS = {"smoke": 1, "quick": 2, "full": 4}
GRID_SIZES = {"smoke": dict(d_model=16, n_heads=2, n_train=256, epochs=1, batch_size=64, n_eval=64, n_flip_pairs=20),
              "quick": dict(n_train=2000, epochs=10, batch_size=256, n_heads=1),
              "full": dict(n_train=4000, epochs=10, batch_size=256, n_heads=1)}
#: run-file fields that measure time (they differ between any two runs)
TIMING = {"seconds", "cpu_seconds"}


def grid_configs(mode: str) -> list:
    """The grid case's run configs (public :class:`softpolar.experiments.RunConfig`)."""
    from softpolar.experiments import RunConfig

    return [RunConfig(task="classification", positional="none", vocab_size=41, n_layers=1, attention=k, seed=s,
                      **GRID_SIZES[mode]) for s in range(GRID_SEEDS[mode]) for k in GRID_KINDS]


def grid_client(scheduler: str, out: str, mode: str) -> None:
    """The grid case's client command: run the grid through ``scheduler`` into ``out``."""
    from softpolar.experiments import run_grid

    run_grid(grid_configs(mode), out, name="bench-grid", scheduler=scheduler, progress=False)


def _atlas_cmd(addr, out, mode):
    return [sys.executable, "-m", "softpolar", "atlas", PRESET[mode], "--min-width", WIDTH[mode], "--map-size", "64",
            "--no-progress", "--scheduler", addr, "--out", str(out)]


def _grid_cmd(addr, out, mode):
    return [sys.executable, "-c", "import sys; from softpolar.benchmarks._row_cluster import grid_client; "
            "grid_client(*sys.argv[1:])", addr, str(out), mode]


def phases(stream, t_launch: float, t_exit: float) -> dict:
    """Where a grid measurement's wall time went, from the scheduler's task stream (``compute`` intervals, worker
    clocks: the same machine's on loopback): ``start`` (command start to the first run's start: imports,
    connecting, the workers importing what a run needs), ``span`` (first run's start to last run's end: the runs,
    each worker's first one with its torch import and warm-up), ``tail`` (the first worker to run out of runs until
    the last run ends) and ``end`` (last run's end to the command's exit)."""
    by_worker: dict = {}
    for task in stream:
        for ss in task["startstops"]:
            if ss["action"] == "compute":
                by_worker.setdefault(task["worker"], []).append((ss["start"], ss["stop"]))
    if not by_worker:
        raise RuntimeError("the scheduler's task stream recorded no run")
    first = min(a for iv in by_worker.values() for a, _ in iv)
    last = max(b for iv in by_worker.values() for _, b in iv)
    idle = min(max(b for _, b in iv) for iv in by_worker.values())
    return {"start": first - t_launch, "span": last - first, "tail": last - idle, "end": t_exit - last,
            "runs": {w: len(iv) for w, iv in by_worker.items()}}


def _timed(case: str, n_workers: int, mode: str, tmp: Path) -> tuple[float, float, Path, dict | None]:
    """Start a fresh cluster of ``n_workers``, run the case's client command, return (wall, client CPU, out,
    the grid's :func:`phases` or ``None``)."""
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = []
    logs = open(tmp / f"cluster-{case}-{n_workers}.log", "ab")
    try:
        procs.append(subprocess.Popen(_dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                                            "--no-dashboard"), stdout=logs, stderr=subprocess.STDOUT, env=_env()))
        for k in range(n_workers):
            procs.append(subprocess.Popen(_dask("worker", addr, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                                "--name", f"bench-w{k}"), stdout=logs, stderr=subprocess.STDOUT,
                                          env=_env()))
        from distributed import Client

        with Client(addr, timeout=START_S) as client:  # idle during the command; for the grid it reads the
            client.wait_for_workers(n_workers, timeout=START_S)  # scheduler's task stream afterwards
            if case == "grid":
                client.get_task_stream()  # installs the scheduler's task-stream plugin before the command starts
            out = tmp / f"{case}-{n_workers}-{time.monotonic_ns()}"
            cmd = (_atlas_cmd if case == "atlas" else _grid_cmd)(addr, out, mode)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t_launch, t0 = time.time(), time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=RUN_S)
            wall = time.perf_counter() - t0
            t_exit = time.time()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command only: the cluster still runs
            client_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
            if res.returncode != 0:
                raise RuntimeError(f"{case} on {n_workers} worker(s) exited {res.returncode}: {res.stderr[-300:]}")
            parts = phases(client.get_task_stream(), t_launch, t_exit) if case == "grid" else None
        return wall, client_cpu, out, parts
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


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def grid_results(out: Path) -> dict:
    """The run files of a grid folder, timings aside (what must not depend on the worker count)."""
    return {p.name: _strip(json.loads(p.read_text())) for p in sorted((Path(out) / "runs").glob("*.json"))}


def _case(case: str, mode: str, tmp: Path, log) -> tuple[dict, list]:
    label = (f"atlas {PRESET[mode]} --min-width {WIDTH[mode]}" if case == "atlas" else
             f"grid: {len(grid_configs(mode))} classification runs ({len(GRID_KINDS)} kernels x "
             f"{GRID_SEEDS[mode]} seed(s), n_train {GRID_SIZES[mode]['n_train']})")
    reps = REPS[case][mode]
    samples, client, first, parts = {1: [], 2: []}, {1: [], 2: []}, None, {1: [], 2: []}
    load0 = loadavg()
    for rep in range(reps):
        for n in (1, 2):
            log(f"row 12: {label} on {n} worker(s) (rep {rep + 1})")
            wall, cpu, out, part = _timed(case, n, mode, tmp)
            samples[n].append(wall)
            parts[n].append(part)
            client[n].append(cpu)
            if case == "grid":
                got = grid_results(out)
                if len(got) != len(grid_configs(mode)):
                    raise RuntimeError(f"grid on {n} worker(s) wrote {len(got)} run files, expected "
                                       f"{len(grid_configs(mode))}")
                if first is None:
                    first = got
                elif got != first:
                    bad = sorted(k for k in got if got[k] != first.get(k))
                    raise RuntimeError(f"grid on {n} worker(s): run files differ from the first measurement's "
                                       f"({', '.join(bad[:3])})")
    med = {n: sorted(s)[len(s) // 2] for n, s in samples.items()}
    r = med[1] / med[2]
    same = "; every run file identical (timings aside) across all runs" if case == "grid" else ""
    line = {"case": label, "softpolar": "2 workers", "anchor": "1 worker", "softpolar_s": med[2],
            "anchor_s": med[1], "ratio_label": "t(1 worker)/t(2 workers)", "ratio": r,
            "target": f">= {TARGET:g}", "met": r >= TARGET,
            "notes": f"{reps} pair(s), alternated{same}; load {load0} -> {loadavg()} on {os.cpu_count()} CPUs"}
    fact = {"label": f"{label}: CPU of the client command (1 / 2 workers)",
            "value": f"{max(client[1]):.1f} s / {max(client[2]):.1f} s", "unit": "",
            "notes": f"wall {med[1]:.1f} / {med[2]:.1f} s: on 2 cores the client shares a core with a worker, so "
                     f"its CPU bounds the ratio (Amdahl)"}
    facts = [fact]
    if case == "grid":  # the same measurements split up (phases): the runs' steady state beside the end-to-end line
        part = {n: min(ps, key=lambda p: abs(p["start"] + p["span"] + p["end"] - med[n])) for n, ps in parts.items()}
        ss = part[1]["span"] / part[2]["span"]
        facts.append({"label": f"{label}: steady state, t(first run starts -> last run ends), 1 / 2 workers",
                      "value": f"{part[1]['span']:.1f} s / {part[2]['span']:.1f} s = {ss:.2f}x", "unit": "",
                      "notes": "the end-to-end ratio above is the row's result; this one leaves out the command's "
                               f"start until the first run starts ({part[1]['start']:.1f} s / {part[2]['start']:.1f} "
                               "s: imports, connecting, the workers loading softpolar) and its exit after the last "
                               f"run ({part[1]['end']:.1f} s / {part[2]['end']:.1f} s); with 2 workers the last run "
                               f"ended {part[2]['tail']:.1f} s after the first worker ran out of runs "
                               f"(runs per worker {sorted(part[2]['runs'].values())}); measurement nearest each "
                               "side's median"})
    return line, facts


def run(mode: str, log) -> dict:
    """Run row 12; see the module docstring."""
    lines, facts = [], []
    with tempfile.TemporaryDirectory(prefix="softpolar-bench-cluster-") as tmp:
        for case in ("atlas", "grid"):
            line, fact = _case(case, mode, Path(tmp), log)
            lines.append(line)
            facts.extend(fact)
    return {"lines": lines, "facts": facts}
