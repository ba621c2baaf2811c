r"""Forked processes, one per unit of a mutation run (:func:`run_forked`): whatever a unit patches, and every
cache it fills, dies with its process; used by :mod:`.mutants` and :mod:`.checker_mutants`.
"""
from __future__ import annotations

import os
import sys
import warnings
import pickle
import traceback
from ..parallel import affinity as _affinity, cpu_shares, worker_init as _worker_init


# ---- forked processes, one per unit ---------------------------------------------------------------------
#: torch (and OpenMP) threads of a mutant process. One: unlike the claims' workers, these are forked after the
#: verify process may have run torch on several threads (claims run there when they form one unit, or a lost
#: worker's claims), and a child of such a process hangs in its first multi-threaded OpenMP region (GNU libgomp's
#: thread pool does not survive fork; seen here with torch 2: a child set to 2 threads never returned, one with
#: 1 thread did). The mutants' integrations are small; the CPU shares still keep the processes apart.
CHILD_THREADS = 1
#: how long a mutant process that has sent its answer may take to exit before it is terminated
EXIT_GRACE_SECONDS = 60.0


def _child(conn, task, run_task, parent: int, cpus) -> None:
    """In a forked process: bind to ``cpus`` (a share of :func:`..parallel.cpu_shares`), run one unit, send
    ``("ok", value, log lines)`` or ``("error", exception, traceback text)`` and exit."""
    if cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except (AttributeError, OSError):  # pragma: no cover - not Linux, or the CPUs went away
            pass
    # no inherited --out lock; dies with the verify process; OMP_NUM_THREADS and torch at CHILD_THREADS
    _worker_init(CHILD_THREADS, parent)
    lines: list = []
    try:
        try:
            msg = ("ok", run_task(task, lines.append), lines)
        except BaseException as exc:  # sent to the parent, which raises it
            text = traceback.format_exc()
            try:
                pickle.dumps(exc)
            except Exception:  # an exception that does not pickle travels as its text
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            msg = ("error", exc, text)
        try:
            conn.send(msg)
        except Exception as exc:  # a result that does not pickle: an error, not a lost process
            conn.send(("error", RuntimeError(f"the result of unit {task!r} could not be sent back: "
                                             f"{type(exc).__name__}: {exc}"), traceback.format_exc()))
    finally:
        conn.close()


def run_forked(tasks, run_task, *, jobs: int, on_done, log=None, what: str = "mutant") -> None:
    """Run ``run_task(task, log) -> value`` for every task on at most ``jobs`` processes at once, each task in a
    process of its own, ``fork``ed from this one just for it (so whatever a task patches, and every cache it
    fills, dies with its process: nothing reaches this process or another task), started in the order of
    ``tasks``; ``on_done(task, value)`` here as each one finishes, after its log lines (collected in its
    process) went to ``log``. Each process runs on a CPU share of its own (:func:`..parallel.cpu_shares`) with
    :data:`CHILD_THREADS` torch threads, holds no lock of this one and dies with it
    (:func:`..parallel.worker_init`).

    A process that dies without answering (killed, out of memory): a one-line note on stderr, and its task runs
    in this process once the others are done, so no result is lost or made up. An exception of a task is raised
    here (the others are stopped), as in a serial run.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    log = log or (lambda s: None)
    fork = multiprocessing.get_context("fork")
    shares = cpu_shares(_affinity(), jobs)
    queue, free, running, lost = list(tasks), list(range(jobs)), {}, []
    parent = os.getpid()
    try:
        while queue or running:
            while queue and free:
                task, slot = queue.pop(0), free.pop(0)
                r, w = fork.Pipe(duplex=False)
                proc = fork.Process(target=_child, args=(w, task, run_task, parent,
                                                         shares[slot] if shares else None))
                with warnings.catch_warnings():
                    # Python >= 3.12 warns on fork() in a process with threads; as in proofs_check.parallel.run_claims
                    warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks",
                                            category=DeprecationWarning)
                    proc.start()
                w.close()  # this process keeps the reading end only: the child's exit is then an EOF
                running[r] = (task, proc, slot)
            for r in wait(list(running)):
                task, proc, slot = running.pop(r)
                try:
                    msg = r.recv()
                except Exception:  # EOF, or a message cut short: the process died
                    msg = None
                r.close()
                proc.join(EXIT_GRACE_SECONDS)  # its answer is in: a process that does not end (a thread it left
                if proc.is_alive():  # running, say) is ended, never waited for without bound
                    proc.terminate()
                    proc.join()
                free.append(slot)
                free.sort()
                if msg is None:
                    print(f"softpolar verify --mutants: a {what} process died (exit code {proc.exitcode}) before "
                          f"returning; its unit runs in this process", file=sys.stderr, flush=True)
                    lost.append(task)
                    continue
                if msg[0] == "error":
                    exc = msg[1]
                    exc.add_note(f"raised in the {what} process of unit {task!r}:\n{msg[2]}")
                    raise exc
                for line in msg[2]:
                    log(line)
                on_done(task, msg[1])
    finally:
        for _task, proc, _slot in running.values():
            if proc.is_alive():
                proc.terminate()
            proc.join()
    for task in lost:  # in the order they were started; their log lines as they come
        on_done(task, run_task(task, log))
