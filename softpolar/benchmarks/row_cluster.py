r"""Row 12: what a second dask worker buys: an atlas and a training grid on a real cluster with 1 worker, then 2.

A ``dask scheduler`` and N ``dask worker`` processes (``--nthreads 1 --no-nanny``, BLAS/OpenMP at one
thread) on loopback, started as a user would (the ``dask`` console script next to this interpreter), a
fresh cluster for every measurement, for N = 1 and N = 2 in alternation (same background load). The ratio
is the wall time with 1 worker over the wall time with 2 (throughput gained by the second worker); with
several pairs, each side is the upper median of its samples. Two cases:

* atlas: ``softpolar atlas conflict3 --min-width W --scheduler tcp://127.0.0.1:PORT`` into a fresh folder
  (uniform3 in smoke mode). The float64 screening (64 boxes a task), the boxes
  (:data:`~softpolar.atlas.engine.CERT_CHUNK` a task) and the float64 map all run on the workers
  (:func:`softpolar.atlas.engine._pipelined`, no level barrier); what stays serial is the command's
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
from softpolar.experiments import RunConfig, run_grid

from ._timing import loadavg

TITLE = "scale-out: an atlas and a training grid on a dask cluster with 2 workers vs 1 (loopback)"
WIDTH = {"smoke": "1/4", "quick": "1/64", "full": "1/128"}
#: the slice: uniform3 certifies most of its area in the first levels (little work per level);
#: conflict3's basin boundary keeps the engine busy at every level
PRESET = {"smoke": "uniform3", "quick": "conflict3", "full": "conflict3"}
#: alternated (1 worker, 2 workers) pairs per case: the full mode is sized for about 6 minutes on 2 idle cores
#: (atlas 1/128: about 90 + 50 s; grid: 16 runs of about 3 CPU s, about 55 + 30 s a pair)
REPS = {"atlas": {"smoke": 1, "quick": 1, "full": 1}, "grid": {"smoke": 1, "quick": 3, "full": 3}}
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


#: the workers' environment beyond one BLAS/OpenMP thread (see the module docstring, "What the workers get")
WORKER_ENV = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
              "MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20),
              "MALLOC_TOP_PAD_": str(64 << 20)}
#: the workers' preload: imports and one tiny training run before the worker joins (grid case only)
PRELOAD = "softpolar.benchmarks._worker_preload"


def cluster_env(worker: bool = False):
    """The environment of the cluster's processes: this source first on ``PYTHONPATH``, one BLAS thread; a
    worker's (``worker=True``) adds :data:`WORKER_ENV`."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[key] = "1"  # one thread per worker (a training run also pins torch to one thread)
    if worker:
        env.update(WORKER_ENV)
    return env


def worker_cmd(case: str, addr: str, k: int) -> list[str]:
    """The command line of worker ``k``: one thread, no nanny, no dashboard; the grid case's workers preload
    :data:`PRELOAD`."""
    preload = ["--preload", PRELOAD] if case == "grid" else []
    return _dask("worker", addr, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", f"bench-w{k}",
                 *preload)


def proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of a live process, from ``/proc/PID/stat``; ``None`` where unreadable."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def proc_threads(pid: int) -> int | None:
    """Threads of a live process (``/proc/PID/status``); ``None`` where unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


#: the grid case: classification runs (the authors' task at reduced sizes) over these kernels x seeds
GRID_KINDS = ("softmax", "sigmoid-unnorm", "linear-unnorm", "elu-norm")
GRID_SEEDS = {"smoke": 1, "quick": 2, "full": 4}
GRID_SIZES = {"smoke": dict(d_model=16, n_heads=2, n_train=256, epochs=1, batch_size=64, n_eval=64, n_flip_pairs=20),
              "quick": dict(n_train=2000, epochs=10, batch_size=256, n_heads=1),
              "full": dict(n_train=4000, epochs=10, batch_size=256, n_heads=1)}
#: run-file fields that measure time (they differ between any two runs)
TIMING = {"seconds", "cpu_seconds"}


def grid_configs(mode: str) -> list:
    """The grid case's run configs (public :class:`softpolar.experiments.RunConfig`), the costliest kernel first.

    ``run_grid`` hands runs to dask longest first by its shape estimate (``run_cost``), which leaves the kernel
    out and keeps the given order among equal shapes; here every run has the same shape, so this order is the one
    the workers see. Measured at the quick size (one process, one thread, after a warm-up, load 0.8): softmax
    1.85-1.87 CPU s a run, the other three kernels 1.71-1.77 s; kernel-major with softmax first starts both
    softmax runs first (one per worker) instead of leaving the longer run of a seed pair to the end."""
    return [RunConfig(task="classification", positional="none", vocab_size=41, n_layers=1, attention=k, seed=s,
                      **GRID_SIZES[mode]) for k in GRID_KINDS for s in range(GRID_SEEDS[mode])]


def grid_client(scheduler: str, out: str, mode: str) -> None:
    """The grid case's client command: run the grid through ``scheduler`` into ``out``."""
    run_grid(grid_configs(mode), out, name="bench-grid", scheduler=scheduler, progress=False)


def _atlas_cmd(addr, out, mode):
    return [sys.executable, "-m", "softpolar", "atlas", PRESET[mode], "--min-width", WIDTH[mode], "--map-size", "64",
            "--no-progress", "--scheduler", addr, "--out", str(out)]


def _grid_cmd(addr, out, mode):
    return [sys.executable, "-c", "import sys; from softpolar.benchmarks.row_cluster import grid_client; "
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
    busy = {w: sum(b - a for a, b in iv) for w, iv in by_worker.items()}
    return {"start": first - t_launch, "span": last - first, "tail": last - idle, "end": t_exit - last,
            "runs": {w: len(iv) for w, iv in by_worker.items()},
            "idle": {w: (t_exit - t_launch) - b for w, b in busy.items()}}


def _timed(case: str, n_workers: int, mode: str, tmp: Path) -> tuple[float, float, Path, dict | None, dict]:
    """Start a fresh cluster of ``n_workers``, run the case's client command, return (wall, client CPU, out,
    the grid's :func:`phases` or ``None``, the CPU seconds and threads of the scheduler and of each worker
    during the command)."""
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs, closed = [], False
    logs = open(tmp / f"cluster-{case}-{n_workers}.log", "ab")
    try:
        procs.append(subprocess.Popen(_dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                                            "--no-dashboard"), stdout=logs, stderr=subprocess.STDOUT,
                                      env=cluster_env()))
        for k in range(n_workers):
            procs.append(subprocess.Popen(worker_cmd(case, addr, k), stdout=logs, stderr=subprocess.STDOUT,
                                          env=cluster_env(worker=True)))
        from distributed import Client

        with Client(addr, timeout=START_S) as client:  # idle during the command; for the grid it reads the
            client.wait_for_workers(n_workers, timeout=START_S)  # scheduler's task stream afterwards
            if case == "grid":
                client.get_task_stream()  # installs the scheduler's task-stream plugin before the command starts
            out = tmp / f"{case}-{n_workers}-{time.monotonic_ns()}"
            cmd = (_atlas_cmd if case == "atlas" else _grid_cmd)(addr, out, mode)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu0 = [proc_cpu(p.pid) for p in procs]
            threads = [proc_threads(p.pid) for p in procs]
            t_launch, t0 = time.time(), time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True, env=cluster_env(), timeout=RUN_S)
            wall = time.perf_counter() - t0
            t_exit = time.time()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command only: the cluster still runs
            cpu1 = [proc_cpu(p.pid) for p in procs]
            threads = [max(a or 0, proc_threads(p.pid) or 0) for a, p in zip(threads, procs)]
            procs_cpu = {"cpu": [None if a is None or b is None else b - a for a, b in zip(cpu0, cpu1)],
                         "threads": threads}
            client_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
            if res.returncode != 0:
                raise RuntimeError(f"{case} on {n_workers} worker(s) exited {res.returncode}: {res.stderr[-300:]}")
            parts = phases(client.get_task_stream(), t_launch, t_exit) if case == "grid" else None
            client.shutdown()  # the scheduler closes its workers: see :func:`stop`
            closed = True
        return wall, client_cpu, out, parts, procs_cpu
    finally:
        stop(procs, closed)
        logs.close()


def stop(procs, closed: bool, timeout_s: float = 20) -> None:
    """Stop a measurement's cluster processes (``procs``: the scheduler, then the workers) once it is over.

    ``closed``: the row closed the cluster through its client (``Client.shutdown``: the scheduler closes its
    workers, which then exit): wait up to ``timeout_s`` in all for them to exit. Then (and at once when not
    ``closed``, after an error) terminate what still runs, the workers first, and kill what is left after
    ``timeout_s``.

    Terminating the workers and then the scheduler at once (what the row did before issue 40's budget work) left
    a worker closing against a scheduler that was going away: at load 8 a worker took 30 s and more to exit
    (killed at the timeout), 7.9-61 s per cluster; closed by the scheduler, 0.8-4.7 s at the same load."""
    if closed:
        deadline = time.monotonic() + timeout_s
        for p in procs:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
    for p in reversed(procs):  # the workers first, then the scheduler
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def grid_results(out: Path) -> dict:
    """The run files of a grid folder, timings aside (what must not depend on the worker count)."""
    return {p.name: _strip(json.loads(p.read_text())) for p in sorted((Path(out) / "runs").glob("*.json"))}


def pair_spread(samples: dict) -> dict:
    """The ratio of each alternated pair, ``t1[i] / t2[i]``, and their median and range (lower median of an even
    count, so a single lucky pair never decides)."""
    ratios = [a / b for a, b in zip(samples[1], samples[2])]
    if not ratios:
        raise ValueError("no measured pair")
    ordered = sorted(ratios)
    return {"ratios": ratios, "median": ordered[(len(ordered) - 1) // 2], "min": ordered[0], "max": ordered[-1]}


def work_ratios(client: dict, procs: dict) -> list[float]:
    """Per pair: (client CPU + worker CPU with 1 worker) / (client CPU + the busier worker's CPU with 2), from the
    CPU seconds :func:`_timed` read; pairs with an unreadable process are left out."""
    out = []
    for c1, c2, p1, p2 in zip(client[1], client[2], procs[1], procs[2]):
        w1, w2 = p1["cpu"][1:], p2["cpu"][1:]
        if None in w1 or None in w2 or not w1 or not w2:
            continue
        out.append((c1 + sum(w1)) / (c2 + max(w2)))
    return out


def serial_bounds(samples: dict, parts: dict, run_cpu: dict) -> list[float]:
    """Per pair, the ratio t(1 worker) / t(2 workers) allows on 2 free cores given its serial part (Amdahl):
    ``t1 / (t1 - span1 + span1 * c / 2)`` with ``span1`` the 1-worker measurement's first-run-start to
    last-run-end (:func:`phases`) and ``c`` the runs' summed CPU with 2 workers over that with 1 (two runs at a
    time cost more); pairs without phases or CPU are left out."""
    out = []
    for t1, p1, c1, c2 in zip(samples[1], parts[1], run_cpu[1], run_cpu[2]):
        if not p1 or not c1 or not c2:
            continue
        span = p1["span"]
        out.append(t1 / (t1 - span + span * (c2 / c1) / 2))
    return out


def _run_cpu(out: Path) -> float:
    """The summed ``cpu_seconds`` of a grid folder's run files (each run's own CPU, measured in the worker)."""
    return sum(float(json.loads(p.read_text()).get("cpu_seconds") or 0.0) for p in (Path(out) / "runs").glob("*.json"))


def _case(case: str, mode: str, tmp: Path, log, reps: int | None = None) -> tuple[dict, list]:
    label = (f"atlas {PRESET[mode]} --min-width {WIDTH[mode]}" if case == "atlas" else
             f"grid: {len(grid_configs(mode))} classification runs ({len(GRID_KINDS)} kernels x "
             f"{GRID_SEEDS[mode]} seed(s), n_train {GRID_SIZES[mode]['n_train']})")
    reps = REPS[case][mode] if reps is None else reps
    samples, client, first, parts = {1: [], 2: []}, {1: [], 2: []}, None, {1: [], 2: []}
    procs, run_cpu, loads = {1: [], 2: []}, {1: [], 2: []}, []
    load0 = loadavg()
    for rep in range(reps):
        for n in (1, 2):
            la = loadavg()
            log(f"row 12: {label} on {n} worker(s) (pair {rep + 1} of {reps}, load {la})")
            wall, cpu, out, part, pc = _timed(case, n, mode, tmp)
            loads.append((la, loadavg()))
            samples[n].append(wall)
            parts[n].append(part)
            client[n].append(cpu)
            procs[n].append(pc)
            if case == "grid":
                run_cpu[n].append(_run_cpu(out))
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
    spread = pair_spread(samples)
    r = spread["median"]
    same = "; every run file identical (timings aside) across all runs" if case == "grid" else ""
    rng = f", pairs {spread['min']:.3f}-{spread['max']:.3f} (median {r:.3f})" if reps > 1 else ""
    line = {"case": label, "softpolar": "2 workers", "anchor": "1 worker", "softpolar_s": med[2],
            "anchor_s": med[1], "ratio_label": "t(1 worker)/t(2 workers)", "ratio": r,
            "ratios": spread["ratios"], "ratio_min": spread["min"], "ratio_max": spread["max"],
            "samples_s": {"1 worker": samples[1], "2 workers": samples[2]},
            "loads": [[a, b] for a, b in loads],
            "target": f">= {TARGET:g}", "met": r >= TARGET,
            "notes": f"{reps} pair(s), alternated{rng}{same}; load {load0} -> {loadavg()} on {os.cpu_count()} "
                     f"CPUs; load (1 min) at each measurement's start -> end: "
                     + ", ".join(f"{a[0]}->{b[0]}" for a, b in loads if a and b)}
    fact = {"label": f"{label}: CPU of the client command (1 / 2 workers)",
            "value": f"{max(client[1]):.1f} s / {max(client[2]):.1f} s", "unit": "",
            "notes": f"wall {med[1]:.1f} / {med[2]:.1f} s: on 2 cores the client shares a core with a worker, so "
                     f"its CPU bounds the ratio (Amdahl)"}
    facts = [fact]

    def _cpus(n):  # CPU seconds of the scheduler and of each worker during the command, per measurement
        return "; ".join("scheduler {} s, workers {}".format(
            "?" if pc["cpu"][0] is None else f"{pc['cpu'][0]:.1f}",
            " + ".join("?" if c is None else f"{c:.1f}" for c in pc["cpu"][1:])) for pc in procs[n])

    threads = max((t for n in (1, 2) for pc in procs[n] for t in pc["threads"][1:]), default=None)
    work = work_ratios(client, procs)
    if work:
        facts.append({"label": f"{label}: the ratio the CPU work allows on 2 free cores, per pair",
                      "value": " | ".join(f"{w:.2f}" for w in work)
                               + f" (median {sorted(work)[(len(work) - 1) // 2]:.2f})",
                      "unit": "", "notes": "(client CPU + the worker's CPU, 1 worker) / (client CPU + the busier "
                                           "worker's CPU, 2 workers): CPU seconds, so hardly moved by other jobs; "
                                           "it leaves out waiting (the client's start on a busy core, the tail) "
                                           "and so reads above a wall ratio measured on an idle machine"})
    facts.append({"label": f"{label}: CPU seconds of the scheduler and of each worker while the command ran",
                  "value": f"1 worker: {_cpus(1)} | 2 workers: {_cpus(2)}", "unit": "",
                  "notes": f"from /proc (robust to the load, unlike wall time); at most {threads} threads in a "
                           "worker process"})
    if case == "grid":  # the same measurements split up (phases): the runs' steady state beside the end-to-end line
        part = {n: min(ps, key=lambda p: abs(p["start"] + p["span"] + p["end"] - med[n])) for n, ps in parts.items()}
        ss = part[1]["span"] / part[2]["span"]
        facts.append({"label": f"{label}: steady state, t(first run starts -> last run ends), 1 / 2 workers",
                      "value": f"{part[1]['span']:.1f} s / {part[2]['span']:.1f} s = {ss:.2f}x", "unit": "",
                      "notes": "the end-to-end ratio above is the row's result; this one leaves out the command's "
                               f"start until the first run starts ({part[1]['start']:.1f} s / {part[2]['start']:.1f} "
                               "s: the client's imports, connecting, submitting) and its exit after the last "
                               f"run ({part[1]['end']:.1f} s / {part[2]['end']:.1f} s); with 2 workers the last run "
                               f"ended {part[2]['tail']:.1f} s after the first worker ran out of runs "
                               f"(runs per worker {sorted(part[2]['runs'].values())}); measurement nearest each "
                               "side's median"})
        bound = serial_bounds(samples, parts, run_cpu)
        if bound:
            facts.append({"label": f"{label}: the highest ratio the serial part allows, per pair",
                          "value": " | ".join(f"{b:.2f}" for b in bound)
                                   + f" (median {sorted(bound)[(len(bound) - 1) // 2]:.2f})", "unit": "",
                          "notes": "t(1 worker) / (its serial part + its runs' span x (runs' CPU with 2 workers / "
                                   "with 1) / 2): the command's start before the first run and its exit after the "
                                   "last are paid once whatever the worker count (Amdahl), and two runs at a "
                                   "time cost what the runs' CPU line says; a target above this needs a "
                                   "shorter serial part, not a better schedule"})
        idle = {n: [sorted(p["idle"].values()) for p in parts[n]] for n in (1, 2)}
        facts.append({"label": f"{label}: the runs' own CPU seconds (summed), 1 / 2 workers, per pair",
                      "value": " | ".join(f"{a:.1f} / {b:.1f}" for a, b in zip(run_cpu[1], run_cpu[2])), "unit": "",
                      "notes": "what two runs at a time cost beyond one at a time (shared caches, memory): this, not "
                               "the load, is what bounds the steady state below 2x; each worker's idle seconds "
                               "within the command (its wall time less its runs): 1 worker "
                               + ", ".join("/".join(f"{x:.1f}" for x in v) for v in idle[1]) + "; 2 workers "
                               + ", ".join("/".join(f"{x:.1f}" for x in v) for v in idle[2])})
    return line, facts


#: this row's grid target sits close to its threshold: ``--repeat K`` sets its number of alternated pairs
REPEATABLE = True
#: alternated grid pairs per mode when ``--repeat`` is not given (the spread, not one pair, is the result)
GRID_PAIRS = {"smoke": 1, "quick": 3, "full": 3}


def run(mode: str, log, repeat: int | None = None) -> dict:
    """Run row 12; see the module docstring. ``repeat``: alternated pairs of the grid case (default
    :data:`GRID_PAIRS`); the atlas case keeps :data:`REPS` (its target is met by a wide margin)."""
    lines, facts = [], []
    with tempfile.TemporaryDirectory(prefix="softpolar-bench-cluster-") as tmp:
        for case in ("atlas", "grid"):
            reps = (repeat or GRID_PAIRS[mode]) if case == "grid" else None
            line, fact = _case(case, mode, Path(tmp), log, reps=reps)
            lines.append(line)
            facts.extend(fact)
    return {"lines": lines, "facts": facts}
