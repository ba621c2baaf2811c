"""Bench row 12 (what a second dask worker buys): the grid case's configs and its bit-for-bit check, and the
whole row in smoke mode on a real loopback cluster (slow)."""
from __future__ import annotations

import json

import pytest

from softpolar.benchmarks import _row_cluster as R


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
    assert p == {"start": 3.0, "span": 7.0, "tail": 2.0, "end": 0.5, "runs": {"w1": 2, "w2": 2}}
    with pytest.raises(RuntimeError, match="no run"):
        R.phases([{"worker": "w1", "startstops": [{"action": "transfer", "start": 1.0, "stop": 2.0}]}], 0.0, 3.0)


@pytest.mark.slow
def test_row_12_smoke_runs_both_cases_on_a_real_cluster():
    """Both cases through ``dask scheduler`` + ``dask worker`` on loopback, 1 and 2 workers; the grid's run
    files are identical between the two (else the row would have failed)."""
    from softpolar.benchmarks._runner import run_rows

    row = run_rows([12], mode="smoke")["rows"][0]
    assert row["status"] == "ok", row.get("reason")
    atlas, grid = row["lines"]
    assert atlas["case"].startswith("atlas uniform3") and grid["case"].startswith("grid: 4 classification runs")
    for line in (atlas, grid):
        assert line["ratio_label"] == "t(1 worker)/t(2 workers)" and line["anchor_s"] > 0 and line["softpolar_s"] > 0
        assert line["ratio"] == pytest.approx(line["anchor_s"] / line["softpolar_s"])
    assert "every run file identical" in grid["notes"]
    cpu = [f["label"].endswith("CPU of the client command (1 / 2 workers)") for f in row["facts"]]
    assert cpu == [True, True, False]
    steady = row["facts"][2]
    assert "steady state" in steady["label"] and steady["value"].endswith("x")
    assert "runs per worker [2, 2]" in steady["notes"]
