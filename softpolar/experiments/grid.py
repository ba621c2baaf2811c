r"""Grids of runs: configs, one atomic result file per run, resumable dispatch through dask.

A grid is a list of :class:`~softpolar.experiments._train.RunConfig`. :func:`run_grid` writes
``OUT/runs/<run_id>.json`` for every finished run (temporary file in the same
folder, then ``os.replace``), skips every run whose file already exists, and
dispatches the rest through ``dask.distributed``: a ``LocalCluster`` by default (one
single-threaded worker per usable core, or ``$SOFTPOLAR_GRID_WORKERS``; with ``keep_cluster=True``
kept a few seconds for the next grid of the same process, so consecutive grids share one cluster start), a
running scheduler with
``scheduler="tcp://host:port"``, or no dask at all with ``scheduler="inline"``
(serial, in-process; used by tests). Results travel back to the client, which writes
the files, so a remote cluster needs no shared filesystem. An interrupted grid loses
only the runs in flight.

Grid sizes (why these numbers), measured on this project's 2-core CPU machine with one
torch thread per run:

* ``tiny`` -- softmax and unnormalized sigmoid at toy sizes, seconds: checks the wiring
  (install, dask, files, figures), not the claims; the induction one also runs the two
  kernels added here (``softmax1``, ``gated-softmax``).
* ``smoke`` -- one seed per attention type. Induction: $d=64$, 4 heads, 2 layers,
  ``add`` positions, $w_{\rm aux}=0.2$, shifted query, lr $10^{-3}$, batch 128, 25,600
  training sequences x 7 epochs = 1,400 steps, 25--40 CPU s per run; the whole grid took
  4 min 21 s of wall time on the 2 cores. Softmax reaches >99% induction accuracy after
  about 750 steps at these sizes, the unnormalized sigmoid / linear / elu kernels by
  about 1,000, so 1,400 steps leaves margin; the authors' 100k x 10 epochs at batch 256
  and $d=128$ (3,900 steps) took 7.8 CPU min for one softmax run here.
  Classification: $d=64$, 1 layer, 1 head, vocab 41, the authors' 10k x 10 epochs at batch
  256 (5--12 CPU s per run), all 12 kernels, plus softmax with (1 layer, 4 heads), (2, 1),
  (2, 4) for the "weakens with more heads or layers" comparison; 1 min 21 s in all.
* The induction ``smoke`` and ``small`` grids also run ``softmax1`` and ``gated-softmax``
  (:data:`~softpolar.experiments._attention.EXTRA_KINDS`, not in the authors' table) at the
  same sizes; classification and the ``paper`` grids keep the authors' 12 kernels. Adding
  them changed no existing run: a run's file name hashes its config, and the configs of the
  other kernels are the same, so an earlier result folder is reused and only the new runs
  train.
* ``small`` -- as smoke with 4 seeds per attention type (induction: 10 epochs =
  2,000 steps), classification over the 4 shapes x 3 seeds.
* ``paper`` -- the authors' full sweeps [C] (``sweeps/induction.yaml``: 8,640 runs;
  ``sweeps/classification.yaml``: 12,960 runs) at their sizes; meant for a cluster.

A script that calls :func:`run_grid` with the default local cluster must guard its entry
point with ``if __name__ == "__main__":`` (dask starts worker processes by spawning).
"""
from __future__ import annotations

import atexit
import functools
import itertools
import json
import os
import threading
from pathlib import Path
import logging
import signal

from numerics import io as _io
from numerics.progress import Progress  # the one progress reporter (terminal, notebook, logs)
from theorems import InvalidArgument, check_choice
from proofs_check import parallel
from softpolar.cluster import check_scheduler, grow as grow_cluster, local_cluster, probe_scheduler

from ._attention import AUTHORS_KINDS, EXTRA_KINDS
from ._train import RunConfig, train_run

GRIDS = ("tiny", "smoke", "small", "paper")
#: the ``tiny`` grid: a seconds-long wiring check (not evidence: the models do not learn).
_TINY = dict(d_model=16, n_heads=2, n_train=256, epochs=1, batch_size=64, n_eval=64,
             n_flip_pairs=20)
#: the authors' kernels (every grid) and the induction smoke/small/tiny grids' kernels
_KINDS = AUTHORS_KINDS
_INDUCTION_KINDS = AUTHORS_KINDS + EXTRA_KINDS


def grid_configs(task: str, grid: str) -> list[RunConfig]:
    """The run configs of ``grid`` for ``task`` (see the module docstring)."""
    check_choice("task", task, ("induction", "classification"))
    check_choice("grid", grid, GRIDS)
    if grid == "tiny":
        extra = {} if task == "induction" else dict(positional="none", vocab_size=41, n_layers=1)
        kinds = ("softmax", "sigmoid-unnorm") + (EXTRA_KINDS if task == "induction" else ())
        return [RunConfig(task=task, attention=k, **_TINY, **extra) for k in kinds]
    if task == "induction":
        if grid == "smoke":
            return [RunConfig(task="induction", attention=k) for k in _INDUCTION_KINDS]
        if grid == "small":
            return [RunConfig(task="induction", attention=k, epochs=10, seed=s)
                    for k in _INDUCTION_KINDS for s in range(4)]
        return [RunConfig(task="induction", attention=k, positional=pos, n_heads=h, lr=lr,
                          aux_weight=aux, shift_query=shift, seed=s, d_model=128, batch_size=256,
                          n_train=100_000, epochs=10)
                for s, shift, h, k, pos, lr, aux in itertools.product(
                    range(5), (True, False), (1, 2, 4, 8), _KINDS, ("concat", "add", "none"),
                    (1e-2, 1e-3, 1e-4), (0.0, 0.2))]
    base = dict(task="classification", positional="none", vocab_size=41, n_train=10_000,
                epochs=10, batch_size=256, d_model=64)
    if grid == "smoke":
        return ([RunConfig(**base, attention=k, n_layers=1, n_heads=1) for k in _KINDS]
                + [RunConfig(**base, attention="softmax", n_layers=L, n_heads=H)
                   for L, H in ((1, 4), (2, 1), (2, 4))])
    if grid == "small":
        return [RunConfig(**base, attention=k, n_layers=L, n_heads=H, seed=s)
                for k in _KINDS for L, H in ((1, 1), (1, 4), (2, 1), (2, 4)) for s in range(3)]
    base["d_model"] = 128
    return [RunConfig(**{**base, "vocab_size": v}, attention=k, n_layers=L, n_heads=H,
                      use_mlp=mlp, use_layernorm=ln, lr=lr, seed=s)
            for s, v, L, H, mlp, ln, k, lr in itertools.product(
                range(5), (41, 81, 161), (1, 2), (1, 2, 4), (True, False), (True, False), _KINDS,
                (1e-2, 1e-3, 1e-4))]


# ---------------------------------------------------------------------------------------
# result files
#: how run files and summaries are written: :func:`numerics.io.write_json_atomic` with ``indent=1``, sorted
#: keys, NaN allowed, no trailing newline, flushed to disk (``fsync``) before the rename, so a finished run
#: survives a crash; folders are created
write_json_atomic = functools.partial(_io.write_json_atomic, end="", fsync=True, indent=1, sort_keys=True,
                                      allow_nan=True)


def result_path(out_dir, config: RunConfig) -> Path:
    """``OUT/runs/<run_id>.json``."""
    return Path(out_dir) / "runs" / f"{config.run_id}.json"


def load_result(out_dir, config: RunConfig, *, require=()) -> dict | None:
    """The finished result of ``config`` in ``out_dir``, or ``None`` (missing or unreadable).

    A file whose stored config differs from ``config`` is ignored (it is rerun and
    overwritten); so is a finished run (status ``ok``) that lacks one of the result fields
    named in ``require`` (a file written before that field existed).
    """
    path = result_path(out_dir, config)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if data.get("config") != config.to_dict() or data.get("status") not in ("ok", "diverged"):
        return None
    if data["status"] == "ok" and any(key not in data for key in require):
        return None
    return data


def execute(config_dict: dict, device: str = "cpu", threads: int | None = 1) -> dict:
    """Run one config (the task shipped to dask workers); divergence is a result, not an error."""
    cfg = RunConfig.from_dict(config_dict)
    try:
        res = train_run(cfg, device=device, threads=threads)
    except FloatingPointError as exc:
        return {"config": cfg.to_dict(), "run_id": cfg.run_id, "status": "diverged",
                "error": str(exc), "accuracy": 0.0}
    res["status"] = "ok"
    return res


#: tokens per training sequence (the tasks' default ``seq_length``; induction drops the last token into the targets)
_SEQ_TOKENS = {"induction": 12, "classification": 11}


def run_cost(config: RunConfig) -> float:
    r"""A relative estimate of one run's CPU time (arbitrary units), only for the order in which
    :func:`run_grid` hands runs to dask (longest first).

    Sequences seen (training, and the evaluation set once an epoch at about a third of a training step's cost) x
    tokens x layers x $(d^2 + 110\,d)$ x $(1 + 0.05\,(H - 1))$. Fitted on this project's 2-core machine at one
    torch thread (20 optimizer steps each, CPU time): one step costs in proportion to batch x tokens (15.9 ms at
    batch 256, 4.0 ms at 64), 2.74x from $d$ = 64 to 128 (the $d^2 + 110\,d$), 1.8x from one layer to two,
    1.15x from one head to four; the estimate is within about 15 % of the measured step costs of the
    classification and induction shapes of the smoke to paper grids (not of the ``tiny`` wiring grid, whose steps
    are per-call overhead, 2.4x the estimate). The attention kernel is not in it (the mlp kernels cost about 1.6x
    softmax's at the classification smoke size). A wrong estimate only makes the last runs finish less evenly across the
    workers; it never changes a result.
    """
    tokens = _SEQ_TOKENS[config.task]
    samples = config.epochs * (config.n_train + config.n_eval / 3)
    d = config.d_model
    return samples * tokens * config.n_layers * (d * d + 110 * d) * (1 + 0.05 * (config.n_heads - 1))


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask; at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def run_grid(configs, out_dir, *, name: str = "grid", scheduler: str = "local", device: str = "cpu",
             n_workers: int | None = None, processes: bool = True, progress: bool = True,
             require=(), keep_cluster: bool = False) -> list[dict]:
    """Run every config not already finished in ``out_dir``; return all results (config order).

    Args:
        configs: list of :class:`RunConfig`.
        out_dir: result folder (``runs/`` is created inside).
        scheduler: ``"local"`` (a ``LocalCluster`` started here, or the one an earlier grid of this process
            kept), ``"inline"`` (serial, no dask) or the address of a running dask scheduler.
        n_workers: local workers (default :func:`default_workers`: ``$SOFTPOLAR_GRID_WORKERS``, else usable cores
            for CPU, 1 for CUDA).
        processes: local workers as processes (default) or threads.
        require: result fields a stored run must have to be reused (see :func:`load_result`).
        keep_cluster: keep the local cluster :data:`KEEP_CLUSTER_S` seconds for the next grid of this
            process instead of closing it (closed at exit at the latest; :func:`close_kept_cluster`).
    """
    configs = list(configs)
    if scheduler not in ("local", "inline"):
        check_scheduler(scheduler)
    if len({c.run_id for c in configs}) != len(configs):
        raise InvalidArgument("configs contain duplicate runs")
    results = {c.run_id: load_result(out_dir, c, require=require) for c in configs}
    todo = [c for c in configs if results[c.run_id] is None]
    bar = Progress(name, len(configs), done=len(configs) - len(todo), enabled=progress)
    try:
        if todo and scheduler == "inline":
            for cfg in todo:
                res = execute(cfg.to_dict(), device, 1)  # one torch thread per run, as on the workers
                write_json_atomic(result_path(out_dir, cfg), res)
                results[cfg.run_id] = res
                bar.update(note=cfg.attention)
        elif todo:
            _run_dask(todo, out_dir, results, bar, scheduler=scheduler, device=device,
                      n_workers=n_workers, processes=processes, keep_cluster=keep_cluster)
    finally:
        bar.close()
    return [results[c.run_id] for c in configs]


def _quiet_dask() -> None:
    """After an interrupt: no log lines or tracebacks from dask's shutdown."""
    for name in ("distributed", "tornado", "asyncio", "bokeh"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


#: seconds a kept local cluster (``run_grid(keep_cluster=True)``) stays up after its grid, for the next grid of
#: the same process; then it is closed, and at the latest at exit. Measured on the 2-core machine: a start (2
#: workers importing torch, SymPy, SciPy and the models) and close cost about 6.5 CPU s, an idle 30 s about 3 CPU
#: s. ``getrusage`` counts the workers' CPU only once they are reaped (when the cluster closes); verify's
#: ``proofs_check.claim.cpu_time`` adds live descendants, so a claim is charged what the kept workers did for it
KEEP_CLUSTER_S = 10.0
#: the environment variable that sets the default number of local training workers (a positive integer), e.g.
#: for a process that shares the cores with other claim processes (``verify --jobs``)
WORKERS_ENV = "SOFTPOLAR_GRID_WORKERS"
_SHARED: dict = {}  # the kept local cluster: key, cluster, client, pid, timer
_SHARED_LOCK = threading.Lock()
_FINALIZED: dict = {}  # the process whose multiprocessing finalizer closes the kept cluster


def default_workers(device: str = "cpu") -> int:
    """Local training workers when ``n_workers`` is not given: ``$SOFTPOLAR_GRID_WORKERS``, else 1 for CUDA and
    the usable cores for CPU."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise InvalidArgument(f"{WORKERS_ENV}={raw!r} is not allowed; expected a positive integer "
                                  "(local training workers)")
        return int(raw)
    return 1 if str(device).startswith("cuda") else usable_cores()


def _start_local(workers: int, processes: bool):
    from distributed import Client

    # worker processes start with SIGINT ignored (Python keeps an inherited SIG_IGN): Ctrl-C
    # reaches the client only, which stops the grid; no worker prints a traceback. (A Ctrl-C
    # during these seconds of start-up is lost; the next one stops the grid.)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if processes and in_main else None
    try:
        # softpolar.cluster: no MALLOC_TRIM_THRESHOLD_ in the workers (1.8x a run's CPU), no stack sampler, this
        # process's environment as it was; silence_logs: a worker that loses the scheduler on Ctrl-C logs no
        # traceback (task errors still reach the client)
        cluster = local_cluster(workers, processes=processes, silence_logs=50)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return cluster, Client(cluster)


def _close(cluster, client) -> None:
    try:
        client.close()
    finally:
        cluster.close()


def _take_local(workers: int, processes: bool, grow: bool = False):
    """The kept local cluster if it has this shape and belongs to this process, else a new one (closing the kept
    one). A cluster inherited through ``fork`` is left alone: its threads are the parent's. ``grow``: a kept
    cluster with fewer workers is grown to ``workers`` instead (an elastic grid, see :func:`_grow`)."""
    key = (workers, processes)
    with _SHARED_LOCK:
        kept = dict(_SHARED)
        _SHARED.clear()
        if kept.get("timer") is not None:
            kept["timer"].cancel()
    if kept.get("pid") == os.getpid():
        if kept["key"] == key and kept["cluster"].status.name == "running":
            return kept["cluster"], kept["client"]
        if grow and kept["key"][1] == processes and kept["key"][0] < workers \
                and kept["cluster"].status.name == "running":
            grow_cluster(kept["cluster"], kept["client"], workers)  # more CPUs since (handed on): grow it
            return kept["cluster"], kept["client"]
        _close(kept["cluster"], kept["client"])
    return _start_local(workers, processes)


#: seconds between two looks for CPUs handed on while a local grid runs (:func:`_grow`)
GROW_POLL_S = 2.0


def _grow(cluster, client, workers: int) -> int:
    """Inside ``verify --jobs``: the CPUs a finished claim process handed on
    (:func:`proofs_check.parallel.take_freed_cpus`) become this process's, and the local cluster gets one more
    worker per CPU (dask gives the queued runs to the new workers; every run file is the same whichever worker
    trains it). Returns the number of workers now; outside ``verify --jobs`` nothing changes."""
    got = parallel.take_freed_cpus()
    if got:
        workers += len(got)
        grow_cluster(cluster, client, workers)  # new workers, same settings (no MALLOC_TRIM: softpolar.cluster)
    return workers


def _keep_local(cluster, client, workers: int, processes: bool) -> None:
    """Keep ``cluster`` for :data:`KEEP_CLUSTER_S` seconds (closed by a timer, or at exit)."""
    if KEEP_CLUSTER_S <= 0:
        _close(cluster, client)
        return
    timer = threading.Timer(KEEP_CLUSTER_S, close_kept_cluster)
    timer.daemon = True
    with _SHARED_LOCK:
        _SHARED.update(key=(workers, processes), cluster=cluster, client=client, pid=os.getpid(), timer=timer)
        if _FINALIZED.get("pid") != os.getpid():
            # a multiprocessing child (verify --jobs's claim processes) ends with os._exit, which runs no atexit
            # hook but multiprocessing's finalizers: so its kept cluster is closed (its workers reaped) there too
            import multiprocessing.util

            multiprocessing.util.Finalize(None, close_kept_cluster, exitpriority=10)
            _FINALIZED["pid"] = os.getpid()
    timer.start()


def kept_cluster() -> dict:
    """The local cluster :func:`run_grid` keeps for the next grid (``keep_cluster=True``), as a copy: ``key``
    (workers, processes), ``cluster``, ``client``, ``pid``, ``timer``; empty when none is kept."""
    with _SHARED_LOCK:
        return dict(_SHARED)


def close_kept_cluster() -> None:
    """Close the local cluster kept by :func:`run_grid` (a no-op when none is kept by this process)."""
    with _SHARED_LOCK:
        kept = dict(_SHARED)
        _SHARED.clear()
    if kept.get("timer") is not None and kept["timer"] is not threading.current_thread():
        kept["timer"].cancel()
    if kept.get("pid") == os.getpid():
        _close(kept["cluster"], kept["client"])


atexit.register(close_kept_cluster)


def _run_dask(todo, out_dir, results, bar, *, scheduler, device, n_workers, processes, keep_cluster=False):
    from distributed import Client, as_completed, wait

    cluster = None
    # a local grid whose size the caller left to us grows when CPUs are handed on (verify --jobs; :func:`_grow`)
    elastic = (scheduler == "local" and n_workers is None and not os.environ.get(WORKERS_ENV, "").strip()
               and not str(device).startswith("cuda"))
    if scheduler == "local":
        if elastic:
            parallel.take_freed_cpus()  # handed on before this grid started: counted by default_workers below
        workers = n_workers or default_workers(device)
        cluster, client = _take_local(workers, processes, grow=elastic)
    else:
        probe_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, ValueError, TypeError) as exc:
            raise InvalidArgument(f"scheduler={scheduler!r} could not be reached ({exc}); expected "
                                  "the address of a running dask scheduler") from None
    keep = False
    try:
        bar.message(f"[{bar.label}] dask dashboard: {client.dashboard_link}")
        # longest first (run_cost): the last runs to start are the short ones, so the workers finish close
        # together instead of one worker running a long run alone at the end (the grids list their larger shapes
        # last). Submitted in that order with decreasing dask priority (dask runs queued tasks by priority,
        # then in submission order); results are written as they arrive, whatever the order
        order = sorted(todo, key=run_cost, reverse=True)  # stable: equal estimates keep the grid's order
        futures = [client.submit(execute, c.to_dict(), device, 1, key=f"softpolar-{c.run_id}", pure=False,
                                 priority=len(order) - rank) for rank, c in enumerate(order)]
        bar.watch_futures(futures)  # in a notebook: dask's progress widget instead of the bar
        by_key = {f.key: c for f, c in zip(futures, order)}

        def finished(fut):
            cfg = by_key[fut.key]
            res = fut.result()
            write_json_atomic(result_path(out_dir, cfg), res)
            results[cfg.run_id] = res
            bar.update(note=cfg.attention)

        if elastic:
            pending = set(futures)
            while pending:
                workers = _grow(cluster, client, workers)
                try:  # at most GROW_POLL_S without a look for CPUs handed on
                    done = wait(pending, timeout=GROW_POLL_S, return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    continue
                for fut in done:
                    pending.discard(fut)
                    finished(fut)
        else:
            for fut in as_completed(futures):
                finished(fut)
        keep = cluster is not None and keep_cluster
    except KeyboardInterrupt:
        _quiet_dask()
        raise
    finally:
        if keep:  # a finished grid: the cluster waits for the next one
            _keep_local(cluster, client, workers, processes)
        elif cluster is not None:
            _close(cluster, client)
        else:
            client.close()
