r"""Timing primitives of the benchmarks: interleaved repetitions, medians, ratios.

Why interleaved: the benchmark machine is shared (load 3-4 on 2 cores while this was written),
so absolute times drift by tens of percent within a minute. Running the contenders in the
order A B C A B C ... and comparing the *medians* of their samples makes every contender see
the same background load, so the *ratio* of medians is stable even when the absolute times
are not. Nothing here asserts on a time: the benchmarks report, they never fail on speed.

Short calls (microseconds) are repeated ``inner`` times per sample, with ``inner`` chosen
once per contender so that one sample lasts about ``min_sample_s`` (timer resolution and
call overhead then stay below a percent).
"""
from __future__ import annotations

import gc
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Callable

__all__ = ["interleaved", "median", "ratio", "calibrate_inner", "time_once", "Budget",
           "budget_alarm", "loadavg"]


def median(samples) -> float:
    """The median of a non-empty list of seconds."""
    return float(statistics.median(samples))


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or ``None`` when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return float(numerator) / float(denominator)


def calibrate_inner(fn: Callable[[], object], min_sample_s: float = 0.02, cap: int = 100_000) -> int:
    """How many calls of ``fn`` make one sample of at least ``min_sample_s`` seconds."""
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_sample_s or inner >= cap:
            return inner
        # aim a little above the threshold; at least double to converge fast
        inner = min(cap, max(2 * inner, int(inner * 1.2 * min_sample_s / max(dt, 1e-9))))


def interleaved(contenders: dict[str, Callable[[], object]], *, reps: int = 5, warmup: int = 1,
                min_sample_s: float = 0.02) -> dict[str, dict]:
    """Time ``contenders`` (name -> zero-argument callable) in interleaved rounds.

    Each contender is first called ``warmup`` times (caches, lazy imports, lambdify) and
    calibrated (see :func:`calibrate_inner`); then ``reps`` rounds call every contender once
    per round, in the dict's order, each sample being ``inner`` back-to-back calls. With
    ``min_sample_s=0`` (long runs) there is no calibration call and ``inner`` is 1.

    Returns name -> ``{"median_s": seconds per call, "samples_s": [...], "inner": k}``.
    The garbage collector is disabled while a sample runs (and collected between samples)
    so that a collection triggered by one contender is not billed to the next.
    """
    if reps < 1:
        raise ValueError(f"reps={reps!r}; expected >= 1")
    inner = {}
    for name, fn in contenders.items():
        for _ in range(warmup):
            fn()
        inner[name] = calibrate_inner(fn, min_sample_s) if min_sample_s > 0 else 1
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    enabled = gc.isenabled()
    try:
        for _ in range(reps):
            for name, fn in contenders.items():
                k = inner[name]
                gc.collect()
                gc.disable()
                t0 = time.perf_counter()
                for _ in range(k):
                    fn()
                samples[name].append((time.perf_counter() - t0) / k)
                if enabled:
                    gc.enable()
    finally:
        if enabled:
            gc.enable()
    return {name: {"median_s": median(s), "samples_s": s, "inner": inner[name]}
            for name, s in samples.items()}


def time_once(fn: Callable[[], object]):
    """``(seconds, result)`` of one call of ``fn`` (for runs too long to repeat many times)."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class Budget(Exception):
    """Raised inside a run when its wall-clock budget is spent (see :func:`budget_alarm`)."""


@contextmanager
def budget_alarm(seconds: float):
    """Raise :class:`Budget` in the main thread after ``seconds`` of wall time (SIGALRM).

    Used for "how far in t does each tool get in B seconds": pure-Python integrators are
    interrupted between bytecodes. Unix main thread only; the previous handler is restored.
    """
    def _handler(signum, frame):
        raise Budget(f"wall-clock budget of {seconds:g} s spent")

    previous = signal.signal(signal.SIGALRM, _handler)
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def loadavg() -> list[float] | None:
    """``os.getloadavg()`` (1, 5, 15 minutes), or ``None`` where unavailable."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def run_child(cmd: list[str], timeout_s: float, env=None, cwd=None) -> dict:
    """Run ``cmd`` (killed after ``timeout_s``); return ``{"rc", "wall_s", "cpu_s", "maxrss_kb", "timed_out",
    "stderr_tail"}`` (CPU and peak memory from ``wait4``: the child and what it waited for). Rows 5, 11 and 15."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen
        err.seek(0)
        tail = err.read()[-2000:].decode("utf-8", "replace")
    return {"rc": proc.returncode, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "maxrss_kb": usage.ru_maxrss, "timed_out": wall >= timeout_s and proc.returncode < 0,
            "stderr_tail": tail}
