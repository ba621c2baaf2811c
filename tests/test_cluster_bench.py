"""Bench row 12 (what a second dask worker buys): the grid case's configs and its bit-for-bit check, and the
whole row in smoke mode on a real loopback cluster (slow)."""
from __future__ import annotations

import json

import pytest

from softpolar.benchmarks import row_cluster as R  # row 12: the training grid and the atlas on a cluster


def test_grid_case_is_a_grid_of_distinct_runs_of_a_few_cpu_seconds():
    for mode, n in (("smoke", 4), ("quick", 8), ("full", 16)):
        configs = R.grid_configs(mode)
        assert len(configs) == n and len({c.run_id for c in configs}) == n
        assert {c.task for c in configs} == {"classification"}
    full = R.grid_configs("full")
    assert {c.attention for c in full} == set(R.GRID_KINDS) and {c.seed for c in full} == {0, 1, 2, 3}
    assert {c.n_train for c in full} == {4000}  # a few CPU seconds each at one torch thread (module doc)


def test_grid_results_ignore_timings_and_see_a_changed_metric(tmp_path):
    """What the row compares between the 1-worker and 2-worker runs: equal up to timings, and a metric
    that differs in its last digit is seen."""
    run = {"config": {"seed": 0}, "accuracy": 0.9375, "seconds": 3.1, "cpu_seconds": 2.9,
           "flip_rate": [0.25, 0.5]}
    for name, rec in (("a", run), ("b", {**run, "seconds": 7.0, "cpu_seconds": 6.5})):
        (tmp_path / name / "runs").mkdir(parents=True)
        (tmp_path / name / "runs" / "r1.json").write_text(json.dumps(rec))
    a, b = R.grid_results(tmp_path / "a"), R.grid_results(tmp_path / "b")
    assert a == b and a["r1.json"]["accuracy"] == 0.9375 and "seconds" not in a["r1.json"]
    (tmp_path / "b" / "runs" / "r1.json").write_text(json.dumps({**run, "accuracy": 0.9375000000000001}))
    assert R.grid_results(tmp_path / "b") != a
    (tmp_path / "b" / "runs" / "r1.json").write_text(json.dumps({**run, "flip_rate": [0.25, 0.5, 0.0]}))
    assert R.grid_results(tmp_path / "b") != a


def test_phases_split_a_grid_measurement_from_the_task_stream():
    """start / span / tail / end from the compute intervals of two workers (other actions ignored)."""
    def task(worker, start, stop):
        return {"worker": worker, "startstops": [{"action": "transfer", "start": start - 0.5, "stop": start},
                                                 {"action": "compute", "start": start, "stop": stop}]}

    stream = [task("w1", 103.0, 106.0), task("w2", 103.5, 107.0), task("w1", 106.0, 110.0), task("w2", 107.0, 108.0)]
    p = R.phases(stream, t_launch=100.0, t_exit=110.5)
    assert p == {"start": 3.0, "span": 7.0, "tail": 2.0, "end": 0.5, "runs": {"w1": 2, "w2": 2},
                 "idle": {"w1": 10.5 - 7.0, "w2": 10.5 - 4.5}}  # the command's 10.5 s less each worker's runs
    with pytest.raises(RuntimeError, match="no run"):
        R.phases([{"worker": "w1", "startstops": [{"action": "transfer", "start": 1.0, "stop": 2.0}]}], 0.0, 3.0)


@pytest.mark.slow
def test_row_12_smoke_runs_both_cases_on_a_real_cluster():
    """Both cases through ``dask scheduler`` + ``dask worker`` on loopback, 1 and 2 workers; the grid's run
    files are identical between the two (else the row would have failed)."""
    from softpolar.benchmarks import run_rows

    row = run_rows([12], mode="smoke")["rows"][0]
    assert row["status"] == "ok", row.get("reason")
    atlas, grid = row["lines"]
    assert atlas["case"].startswith("atlas uniform3") and grid["case"].startswith("grid: 4 classification runs")
    for line in (atlas, grid):
        assert line["ratio_label"] == "t(1 worker)/t(2 workers)" and line["anchor_s"] > 0 and line["softpolar_s"] > 0
        assert line["ratio"] == pytest.approx(line["anchor_s"] / line["softpolar_s"])
    assert "every run file identical" in grid["notes"]
    cpu = [f["label"].endswith("CPU of the client command (1 / 2 workers)") for f in row["facts"]]
    assert cpu == [True, False, False, True, False, False, False, False, False]
    procs = [f for f in row["facts"] if "CPU seconds of the scheduler and of each worker" in f["label"]]
    work = [f for f in row["facts"] if "the ratio the CPU work allows" in f["label"]]
    assert len(procs) == len(work) == 2 and all("scheduler" in f["value"] and "workers" in f["value"] for f in procs)
    assert all(float(f["value"].split(" ")[0]) > 0 for f in work)
    steady = row["facts"][6]
    assert "steady state" in steady["label"] and steady["value"].endswith("x")
    assert "runs per worker [2, 2]" in steady["notes"]
    bound = row["facts"][7]  # issue 40: what the serial part allows, per pair
    assert "serial part allows" in bound["label"] and "Amdahl" in bound["notes"]
    assert float(bound["value"].split(" ")[0]) > 0
    assert len(grid["samples_s"]["1 worker"]) == len(grid["samples_s"]["2 workers"]) == len(grid["ratios"])
    assert len(grid["loads"]) == 2 * len(grid["ratios"])


def test_pair_spread_is_the_median_and_range_of_the_pairs():
    """Each pair's ratio, their lower median (a single lucky pair never decides) and range."""
    sp = R.pair_spread({1: [20.0, 18.0, 22.0], 2: [10.0, 12.0, 11.0]})
    assert sp["ratios"] == [2.0, 1.5, 2.0] and sp["median"] == 2.0 and (sp["min"], sp["max"]) == (1.5, 2.0)
    sp = R.pair_spread({1: [20.0, 18.0], 2: [10.0, 12.0]})
    assert sp["median"] == 1.5  # the lower of the two
    with pytest.raises(ValueError, match="no measured pair"):
        R.pair_spread({1: [], 2: []})


def test_grid_workers_start_ready_and_without_the_profiler_or_page_faulting_malloc():
    """The fix of issue 40: the grid case's workers preload softpolar and warm torch up before they join (the
    first run no longer carries the imports inside the timed window), run without dask's statistical profiler,
    and keep freed memory (no page faults per training step); the atlas case's workers are as before."""
    grid, atlas = R.worker_cmd("grid", "tcp://127.0.0.1:1", 0), R.worker_cmd("atlas", "tcp://127.0.0.1:1", 0)
    assert grid[grid.index("--preload") + 1] == R.PRELOAD and "--preload" not in atlas
    assert {"--nthreads", "--no-nanny"} <= set(grid) and grid[grid.index("--nthreads") + 1] == "1"
    import importlib

    assert callable(importlib.import_module(R.PRELOAD).dask_setup)
    env, plain = R.cluster_env(worker=True), R.cluster_env()
    assert env["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] == "False" and int(env["MALLOC_MMAP_THRESHOLD_"]) > 0
    assert "MALLOC_MMAP_THRESHOLD_" not in plain or plain["MALLOC_MMAP_THRESHOLD_"] == __import__("os").environ.get(
        "MALLOC_MMAP_THRESHOLD_")
    assert env["OMP_NUM_THREADS"] == plain["OMP_NUM_THREADS"] == "1"


def test_proc_cpu_and_threads_read_a_live_process():
    import os
    import time

    t0 = R.proc_cpu(os.getpid())
    x = 0
    end = time.process_time() + 0.05
    while time.process_time() < end:
        x += 1
    assert R.proc_cpu(os.getpid()) > t0 >= 0
    assert R.proc_threads(os.getpid()) >= 1
    assert R.proc_cpu(2**22 + 12345) is None and R.proc_threads(2**22 + 12345) is None


def test_work_ratios_use_the_busier_worker_and_skip_unreadable_pairs():
    client = {1: [2.0, 2.0], 2: [2.0, 2.0]}
    procs = {1: [{"cpu": [1.0, 18.0]}, {"cpu": [1.0, None]}], 2: [{"cpu": [1.0, 8.0, 10.0]}, {"cpu": [1.0, 9.0, 9.0]}]}
    assert R.work_ratios(client, procs) == [(2.0 + 18.0) / (2.0 + 10.0)]


def test_grid_hands_out_the_costliest_kernel_first():
    """Issue 40, uneven scheduling: ``run_grid`` keeps the given order among runs of equal shape, so the grid case
    lists both softmax runs (the costliest kernel, measured) first, one per worker, then kernel by kernel."""
    for mode in ("smoke", "quick", "full"):
        configs = R.grid_configs(mode)
        seeds = R.GRID_SEEDS[mode]
        assert [c.attention for c in configs] == [k for k in R.GRID_KINDS for _ in range(seeds)]
        assert R.GRID_KINDS[0] == "softmax"


def test_serial_bounds_are_amdahl_with_the_runs_cpu_growth():
    """The highest t1/t2 a pair allows: the serial part (t1 - span) paid once, the span halved and scaled by the
    runs' CPU growth with two at a time; a pair without phases or CPU is left out."""
    samples = {1: [20.0, 18.0, 19.0], 2: [11.0, 10.0, 10.5]}
    parts = {1: [{"span": 16.0}, {"span": 14.0}, None], 2: [{}, {}, {}]}
    run_cpu = {1: [16.0, 14.0, 15.0], 2: [16.0, 15.4, 15.0]}
    b = R.serial_bounds(samples, parts, run_cpu)
    assert len(b) == 2
    assert b[0] == pytest.approx(20.0 / (4.0 + 8.0))  # no CPU growth: serial 4 s + 16 / 2
    assert b[1] == pytest.approx(18.0 / (4.0 + 14.0 * 1.1 / 2))  # 10 % more CPU with two at a time
    assert b[1] < 18.0 / (4.0 + 7.0)  # the growth lowers the bound (control)
