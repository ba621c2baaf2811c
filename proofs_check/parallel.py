r"""Claims in parallel: ``softpolar verify --jobs N`` runs the selected claims on N processes.

What runs where:

* **Units.** The claims are split into *units*: the claims of one ``group`` (calculus, logistic,
  ...) form one unit (except the long claims in :data:`SOLO`), because the claims of a group share expensive
  computations through
  ``ctx.memo`` (the logistic group's trajectories to $t=10^{100}$, the transformer grids of a
  claim and its control). A unit runs in one process, its claims in report order, so each shared
  computation is done once, as in the serial run. Sharing never changes a value
  (:class:`.claim.Context`: memo values are computed deterministically from the settings), so
  the split only decides how much work is repeated, never a verdict.
* **Schedule.** Units go to the processes longest first (estimated seconds: the ``seconds`` of the
  same claims in the report already in ``--out`` when there is one, else :data:`DEFAULT_SECONDS`,
  measured on 2 cores); a process that finishes a unit takes the next. A process keeps its
  :class:`Context` (and so its memo) from one unit to the next.
* **Processes.** ``fork``ed from the verify process once the claims are selected, so a worker runs exactly the
  claim objects that :func:`.catalog.select` returned (whatever their record type, registered at run time or
  patched by a test). Each worker runs on a CPU share of its own (:func:`cpu_shares`: the CPUs this process may
  use, split into ``jobs`` disjoint sets; Linux ``sched_setaffinity``, inherited by everything the worker starts)
  and pins torch and OpenMP to that many threads. So a claim that spreads its work over "the usable cores" (the
  training grids' and the atlas's dask ``LocalCluster``: one worker per core of ``sched_getaffinity``) starts one
  worker per core of its share, and two claims side by side never run more CPU-bound processes than there are
  cores (without the shares, C32's grid next to another claim's cluster, 4 single-threaded training processes on 2
  cores, took 265 CPU s against 138 s alone: time-sliced training runs cost more CPU). With fewer CPUs than jobs
  there are no shares (every worker may use every CPU, as asked). A worker that has run its last unit (every
  unit has started somewhere) hands its CPUs on: a claim still running elsewhere takes them
  (:func:`take_freed_cpus`; the training grids do between runs and start a dask worker per CPU taken), so the
  last long claim does not finish on one core while the other idles. A worker holds no lock on ``--out`` (it closes
  the inherited descriptor: :func:`numerics.io.drop_inherited_locks`) and, on Linux, dies with the verify process
  (``PR_SET_PDEATHSIG``): a killed verify leaves no stale lock and no orphan computing on, and the next run on the
  same folder starts at once. Where ``fork`` is unavailable (macOS and Windows default to ``spawn``, which would
  re-import a registry that may differ), the claims run serially.
* **A lost process** (killed, out of memory): the claims it had not returned run in the verify
  process itself, after a one-line note on stderr; the report is the same.
* **Order.** :func:`run_claims` yields the results in the order of ``claims`` (the report order)
  as soon as every earlier claim is done; the report and the verdicts are those of the serial run.

``jobs=1`` is the serial path (one process, the claims in order): the baseline of bench row 11.
"""
from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import signal
import sys
import warnings
from pathlib import Path

from numerics.io import drop_inherited_locks

#: estimated seconds per claim id and profile; only the order in which units start depends on them. Quick: a
#: serial run at load about 2 (C25: its batched GD, commit c6a240e, in both profiles);
#: full: the CPU seconds of each claim in ``verify --profile full --jobs 1`` (commit
#: 6e525d5, load 0.5-2.4 on this project's shared 2-core machine): a worker bound to a one-core share takes about
#: that long (the grids and the atlas then run one dask worker each); KSINK: the full profile's KSINK grid trains
#: both added kernels in the first KSINK claim (gated-softmax), so the second finds its run done
DEFAULT_SECONDS = {
    "quick": {"FORMAL": 11.0, "SINK2.CERT": 8.5, "C25": 6.5, "CERT": 4.5, "C11": 4.3, "C27": 2.7, "GATE": 1.7},
    "full": {"C31": 368.0, "ATLAS": 178.0, "C32": 138.0, "KSINK.gated-softmax": 110.0, "KSINK.softmax1": 2.0,
             "C25": 6.5, "SINK2.CERT": 16.0, "C29": 13.4, "C20": 12.3, "CERT": 11.7, "C27": 11.5, "FORMAL": 11.4,
             "C15": 8.8, "C11": 7.1},
}

#: torch threads of a worker forked after its parent imported torch (see :func:`worker_init`)
FORKED_TORCH_THREADS = 1

#: the state a forked worker inherits (set in the parent just before the pool starts)
_STATE: dict = {}


def cpu_count() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def affinity() -> list[int]:
    """The CPU ids this process may run on (``[]`` where the platform does not say)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return []


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


#: claims that share no ``ctx.memo`` computation with the rest of their group and take long enough
#: to matter: each is a unit of its own (C25: 3e5 GD iterations; C29: the KL flow to t=1e6; C31-C33:
#: one transformer grid or the pretrained model each). A claim missing here only waits for its group.
SOLO = ("C25", "C29", "C31", "C32", "C33")
#: claims that read what another claim computes outside ``ctx.memo``, and so run after it in its unit when both
#: are selected (id prefix -> that claim): ``KSINK.*`` read the induction smoke grid's softmax run, which C31 trains
#: into the same experiments folder; in two processes at once that run would be trained twice, side by side.
#: Each target is in :data:`SOLO`.
AFTER = {"KSINK.": "C31"}


def _unit_key(claim, ids=()) -> str:
    for prefix, first in AFTER.items():
        if claim.id.startswith(prefix) and first in ids:
            return "solo:" + first
    if claim.id in SOLO:
        return "solo:" + claim.id
    return getattr(claim, "group", "") or claim.id


def units(claims) -> list[list[int]]:
    """Indices into ``claims``, one list per unit (see the module docstring), each in report order."""
    ids = {c.id for c in claims}
    by_key: dict[str, list[int]] = {}
    for k, c in enumerate(claims):
        by_key.setdefault(_unit_key(c, ids), []).append(k)
    return list(by_key.values())


def previous_report(out_dir, profile: str) -> dict | None:
    """The report.json already in ``out_dir`` when it is one of ``profile``, else ``None`` (none, unreadable,
    not one of ours, or another profile): where the start estimates of the next run come from."""
    if out_dir is None:
        return None
    try:
        data = json.loads((Path(out_dir) / "report.json").read_text(encoding="utf-8"))
        return data if data.get("environment", {}).get("profile") == profile else None
    except (OSError, ValueError, AttributeError):
        return None


def estimates(claims, profile: str, out_dir=None) -> list[float]:
    """Estimated seconds per claim: the previous report's, else :data:`DEFAULT_SECONDS`, else 1 s."""
    known = dict(DEFAULT_SECONDS.get(profile, {}))
    data = previous_report(out_dir, profile)
    if data is not None:
        try:
            for c in data.get("claims", []):
                known[str(c["id"])] = float(c["seconds"])
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # not one of ours: the defaults
    return [known.get(c.id, 1.0) for c in claims]


def plan(claims, profile: str, out_dir=None) -> list[list[int]]:
    """The units, longest first (ties: report order)."""
    est = estimates(claims, profile, out_dir)
    us = units(claims)
    return sorted(us, key=lambda u: (-sum(est[k] for k in u), u[0]))


def _die_with_parent(parent: int) -> None:
    """Linux: this process gets SIGTERM when the verify process dies (``PR_SET_PDEATHSIG``), so that a
    killed verify leaves no claim process computing on (a no-op elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the parent died before the request: nobody will signal us
        os._exit(1)


def cpu_shares(cpus, jobs: int) -> list[list[int]] | None:
    """``cpus`` (CPU ids) split into ``jobs`` disjoint, contiguous shares as even as can be (the first ones get
    the extra CPUs); ``None`` when there are fewer CPUs than jobs (no shares: every worker may use every CPU)."""
    cpus = sorted(int(c) for c in cpus)
    if jobs < 1 or len(cpus) < jobs:
        return None
    per, extra = divmod(len(cpus), jobs)
    out, k = [], 0
    for j in range(jobs):
        n = per + (j < extra)
        out.append(cpus[k:k + n])
        k += n
    return out


def _take_share(shares, counter) -> int | None:
    """In a new worker: claim the next share (``counter``: a shared integer; a replacement worker wraps around),
    bind this process to it; the number of CPUs it may use then, or ``None`` without shares."""
    if not shares or counter is None:
        return None
    with counter.get_lock():
        index = counter.value % len(shares)
        counter.value += 1
    try:
        os.sched_setaffinity(0, shares[index])
    except (AttributeError, OSError):  # pragma: no cover - not Linux, or the CPUs went away
        return None
    _STATE["share"] = index
    return len(shares[index])


def worker_init(threads: int, parent: int | None = None, shares=None, counter=None) -> None:
    drop_inherited_locks()  # the --out lock stays the verify process's alone (numerics.io.folder_lock)
    if parent is not None:
        _die_with_parent(parent)
    threads = _take_share(shares, counter) or threads
    os.environ["OMP_NUM_THREADS"] = str(threads)
    # torch reads OMP_NUM_THREADS when it is imported: a worker whose claims never import torch does not pay
    # for importing it (0.9 CPU s per worker). A worker forked from a process that had imported torch (a notebook
    # or a test session calling run_claims; the verify command forks before anything imports it) runs torch on one
    # thread: the parent may have run torch's OpenMP pool on several, that pool does not survive fork, and a child
    # that runs torch on more than one thread then hangs (seen with the mutant processes). Processes the worker
    # starts (the grids' and the atlas's dask workers, spawned) still get ``threads`` from OMP_NUM_THREADS.
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(FORKED_TORCH_THREADS)


def _set_affinity_all_threads(cpus) -> None:
    """Bind every thread of this process to ``cpus`` (Linux affinity is per thread, and a process started later
    inherits the mask of the thread that starts it: dask starts its workers from its event-loop thread)."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:  # pragma: no cover - no /proc
        tids = [0]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:  # a thread that ended meanwhile
            pass


def _free(cpus) -> None:
    free = _STATE["free"]
    with free.get_lock():
        for c in cpus:
            if c < len(free):
                free[c] = 1


def _unit_starts() -> None:
    """In a worker, as a unit starts: count it, mark this share busy; the worker that starts the last unit hands
    on the shares of the workers already idle (they will get no unit). Under one lock with :func:`_unit_ends`,
    so that an idle share is handed on exactly once, whichever of the two comes first."""
    started, busy, share = _STATE.get("started"), _STATE.get("busy"), _STATE.get("share")
    if started is None or share is None:
        return
    with started.get_lock():
        started.value += 1
        busy[share] = 1
        if started.value == _STATE["units"]:
            _free([c for k, cpus in enumerate(_STATE["shares"]) if not busy[k] and k != share for c in cpus])


def _unit_ends() -> None:
    """In a worker, as a unit ends: this share is idle; when every unit has started (no unit is left for it),
    its CPUs (any it took included) go to the pool's free list, for a claim still running elsewhere
    (:func:`take_freed_cpus`)."""
    started, busy, share = _STATE.get("started"), _STATE.get("busy"), _STATE.get("share")
    if started is None or share is None:
        return
    with started.get_lock():
        busy[share] = 0
        if started.value >= _STATE["units"]:
            try:
                _free(os.sched_getaffinity(0))
            except (AttributeError, OSError):  # pragma: no cover - not Linux
                pass


def take_freed_cpus() -> list[int]:
    """The CPUs that ``verify --jobs`` workers which have run out of claims handed on, now this process's: added
    to the affinity of every thread of it, so that what it starts next may run on them; ``[]`` outside such a
    worker, or when none are free. A claim that spreads its work over worker processes (the training grids'
    dask cluster) asks between runs and starts one more worker per CPU it got: the CPU share of a finished
    claim process does not sit idle while the last long claim (the full profile's C31 grid) runs on one core.
    Nothing computed depends on it: only how many processes share the work."""
    free = _STATE.get("free")
    if free is None:
        return []
    with free.get_lock():
        got = [c for c in range(len(free)) if free[c]]
        for c in got:
            free[c] = 0
    if got:
        try:
            _set_affinity_all_threads(set(os.sched_getaffinity(0)) | set(got))
        except (AttributeError, OSError):  # pragma: no cover - not Linux, or the CPUs went away
            return []
    return got


def _run_unit(indices):
    """In a worker: run the claims ``indices`` of the inherited list; ``[(index, type, fields)]``."""
    claims, ctx, run_claim, finish = _STATE["claims"], _STATE["ctx"], _STATE["run"], _STATE["finish"]
    _unit_starts()
    out = []
    for k in indices:
        # ``finish`` here, next to the claim (verify's: draw the figures), not one after another in the parent
        r = finish(run_claim(claims[k], ctx))
        # the result's own type travels (by reference), so that any result record works
        out.append((k, type(r), {f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name != "claim"}))
    _unit_ends()
    return out


def run_claims(claims, ctx, *, jobs: int = 1, out_dir=None, run=None, shares: bool = True, finish=None):
    """Run ``claims`` (with their controls) on ``jobs`` processes; yield ``(index, result)`` in order.

    ``run``: the function that runs one claim and its control (default :func:`.claim.run_claim`).
    ``finish``: applied in a worker to each result before it travels back (``verify`` passes
    :func:`.report.prerender`: a worker draws its claims' figures); not applied on the serial path.
    ``shares``: bind each worker to a CPU share of its own (:func:`cpu_shares`; ``False``: every worker may use
    every CPU, the behaviour before the shares, kept for measurements).
    ``jobs=1``, a single unit, or no ``fork``: the serial path (``run`` in order, in this process).
    """
    if run is None:
        from .claim import run_claim as run  # here: a grid client imports this module (tests/test_imports_at_top)

    claims = list(claims)
    order = plan(claims, ctx.profile, out_dir)
    jobs = min(int(jobs), len(order))
    if jobs <= 1 or not can_fork():
        for k, c in enumerate(claims):
            yield k, run(c, ctx)
        return
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    _STATE.update(claims=claims, ctx=ctx, run=run, finish=finish if finish is not None else (lambda r: r))
    threads = max(1, cpu_count() // jobs)
    fork = multiprocessing.get_context("fork")
    split = cpu_shares(affinity(), jobs) if shares else None
    if split:  # the CPUs of workers that have run out of units, for the claims still running (take_freed_cpus)
        _STATE.update(free=fork.Array("b", max(c for share in split for c in share) + 1),
                      started=fork.Value("i", 0), busy=fork.Array("b", len(split)), units=len(order),
                      shares=split)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=fork, initializer=worker_init,
                               initargs=(threads, os.getpid(), split, fork.Value("i", 0) if split else None))
    done: dict[int, object] = {}
    broken = False
    try:
        with warnings.catch_warnings():
            # Python >= 3.12 warns on fork() in a process with threads; the workers fork here, before any
            # claim has run in this process (no integrator, BLAS or dask thread holds a lock yet)
            warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
            pending = {pool.submit(_run_unit, u) for u in order}
        nxt = 0
        while nxt < len(claims):
            while nxt in done:
                yield nxt, done.pop(nxt)
                nxt += 1
            if nxt >= len(claims):
                break
            if broken:  # a worker died: what no worker returned runs here, in order
                done[nxt] = run(claims[nxt], ctx)
                continue
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                try:
                    items = fut.result()
                except BrokenProcessPool as exc:
                    if not broken:
                        print(f"softpolar verify: a claim process died ({exc}); the claims it had not "
                              "returned run in this process", file=sys.stderr, flush=True)
                    broken = True
                    continue
                for k, cls, fields in items:
                    done[k] = cls(claim=claims[k], **fields)  # the parent's claim object
        pool.shutdown(wait=not broken)
    except BaseException:
        for proc in list(getattr(pool, "_processes", {}).values()):
            if proc.is_alive():
                proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        _STATE.clear()
