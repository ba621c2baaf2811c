"""The benchmark runner works and reports well-formed rows (never a timing assertion).

Every row runs in ``smoke`` mode (trivial sizes, numbers meaningless); a row whose softpolar
part does not exist yet may report ``not available``, never ``error``.
"""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from softpolar.benchmarks import (ROWS, Budget, budget_alarm, default_rows, format_markdown, format_table,
                                  interleaved, median, parse_rows, pinned_env, ratio, run_rows)
from softpolar.benchmarks import row_cluster as ROW12  # the cluster
from softpolar.benchmarks import row_verify_jobs as ROW11  # verify --jobs
from softpolar.benchmarks import row_verify_profile as ROW15  # verify against the day
from theorems import InvalidArgument

ROOT = Path(__file__).resolve().parent.parent
LINE_KEYS = {"case", "softpolar", "anchor", "softpolar_s", "anchor_s", "ratio_label", "ratio",
             "target", "met"}


def _check_report(report, rows):
    assert [r["row"] for r in report["rows"]] == rows
    m = report["machine"]
    assert m["cpu_count"] >= 1 and "torch" in m["versions"] and "loadavg_start" in m
    for row in report["rows"]:
        assert row["status"] in ("ok", "not available"), (row["row"], row.get("reason"))
        if row["status"] != "ok":
            continue
        for line in row["lines"]:
            assert LINE_KEYS <= set(line)
            assert line["softpolar_s"] > 0 and line["anchor_s"] > 0
            assert "/" in line["ratio_label"]
            assert isinstance(line["ratio"], float) and math.isfinite(line["ratio"]) and line["ratio"] > 0
            assert (line["met"] is None) == (line["target"] is None)
        for fact in row["facts"]:
            assert {"label", "value", "unit"} <= set(fact)
    json.dumps(report)  # JSON-able as is


def test_interleaved_reports_medians_and_order():
    calls = []
    res = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                      reps=3, warmup=0, min_sample_s=0)
    assert calls == ["a", "b"] * 3  # interleaved rounds, no calibration call when min_sample_s=0
    assert set(res) == {"a", "b"} and len(res["a"]["samples_s"]) == 3
    assert res["a"]["median_s"] == median(res["a"]["samples_s"])
    assert ratio(2.0, 4.0) == 0.5 and ratio(1.0, 0.0) is None


def test_budget_alarm_interrupts():
    with pytest.raises(Budget):
        with budget_alarm(0.05):
            while True:
                pass


def test_rows_option_is_validated():
    assert parse_rows("3,1") == [3, 1]
    for bad in ("", "0", "1,x", "99"):
        with pytest.raises(InvalidArgument, match="--rows"):
            parse_rows(bad)


def test_smoke_rhs_and_verify_rows_are_well_formed():
    report = run_rows([1, 5], mode="smoke")
    _check_report(report, [1, 5])
    (rhs,) = [r for r in report["rows"] if r["row"] == 1]
    assert {line["ratio_label"] for line in rhs["lines"]} == {"generated/hand-written", "autograd/generated"}
    for line in rhs["lines"]:  # issue 40: the median of the rounds' own ratios, all of them in the report
        assert len(line["ratios"]) == 2 and line["ratio"] == median(line["ratios"])
    table, md = format_table(report), format_markdown(report)
    assert "generated/hand-written" in table and "machine:" in table
    assert md.startswith("| row |") and "Measured with" in md


def test_smoke_integrator_rows_are_well_formed():
    rows = [2, 3, 4, 6]
    _check_report(run_rows(rows, mode="smoke"), rows)


def test_cli_json_in_a_pinned_subprocess(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "softpolar.benchmarks", "--smoke", "--rows", "1", "--json",
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                          env=pinned_env(1), timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    _check_report(report, [1])
    assert report["machine"]["blas_threads_env"]["OPENBLAS_NUM_THREADS"] == "1"
    assert json.loads(out.read_text())["rows"][0]["row"] == 1


def test_cli_bad_rows_is_one_line_exit_2():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "softpolar.benchmarks", "--rows", "1,x"], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--rows" in proc.stderr
    assert proc.stderr.startswith("softpolar: error:")


def test_every_row_module_exists():
    import importlib

    for k, mod in ROWS.items():
        assert hasattr(importlib.import_module(mod, "softpolar.benchmarks"), "TITLE"), k


def test_rows_record_load_and_cpu_and_repeat_reaches_only_repeatable_rows(monkeypatch):
    """Issue 40: every row records the load at its start and end and its CPU seconds; ``--repeat K`` reaches
    the rows that declare ``REPEATABLE`` and no other; a bad ``repeat`` is refused by name."""
    import types

    import softpolar.benchmarks._runner as runner  # the stub below replaces its row table
    from softpolar.benchmarks import run_rows

    seen = {}

    def make(name, repeatable):
        mod = types.ModuleType(name)
        mod.TITLE = name

        def run(mode, log, **kw):
            seen[name] = kw
            return {"lines": [], "facts": []}

        mod.run = run
        if repeatable:
            mod.REPEATABLE = True
        return mod

    mods = {1: make("plain", False), 2: make("rep", True)}
    monkeypatch.setattr(runner, "row_module", lambda k: mods[k])
    msgs = []
    report = run_rows([1, 2], mode="smoke", log=msgs.append, repeat=4)
    assert seen == {"plain": {}, "rep": {"repeat": 4}} and report["repeat"] == 4
    for row in report["rows"]:
        assert row["cpu_s"] >= 0 and "loadavg_start" in row and "loadavg_end" in row
    assert msgs[0].startswith("start:") and msgs[-1].startswith("done:") and "load" in msgs[-1]
    run_rows([2], mode="smoke")
    assert seen["rep"] == {}  # no --repeat: the row's own default
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="repeat"):
            run_rows([1], mode="smoke", repeat=bad)


def test_markdown_shows_the_spread_and_a_rows_own_table():
    report = {"mode": "quick", "wall_s": 1.0, "targets": [],
              "machine": {"cpu_count": 2, "cpu_model": "x", "torch_threads": 1, "loadavg_start": [1, 1, 1],
                          "loadavg_end": [2, 2, 2], "python": "3", "versions": {
                              k: "0" for k in ("numpy", "scipy", "torch", "torchdiffeq", "mpmath")}},
              "rows": [{"row": 12, "title": "t", "status": "ok", "wall_s": 1.0, "facts": [],
                        "table": {"columns": ["n = d", "ratio"], "rows": [[64, "1.1"], [256, "1.2"]]},
                        "lines": [{"case": "grid", "softpolar": "2 workers", "anchor": "1 worker",
                                   "softpolar_s": 1.0, "anchor_s": 1.8, "ratio_label": "t1/t2", "ratio": 1.8,
                                   "ratios": [1.8, 1.75, 1.9], "target": ">= 1.7", "met": True}]}]}
    md = format_markdown(report)
    assert "**1.8** (median of 3: 1.75-1.9)" in md
    assert "| n = d | ratio |" in md and "| 256 | 1.2 |" in md
    assert "(median of 3: 1.75-1.9)" in format_table(report) and "| 64 | 1.1 |" in format_table(report)


def test_cli_repeat_is_validated():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "softpolar.benchmarks", "--rows", "1", "--repeat", "0"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 2 and "--repeat" in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_default_rows_skip_row_11_whose_measurement_row_15_carries():
    """The quick mode's budget (issue 40): row 11's two children are row 15's serial and parallel children, and
    row 15's serial/parallel line carries row 11's target; ``--rows 11`` still runs it."""
    rows = default_rows()
    assert 11 not in rows and {12, 15, 17} <= set(rows) and rows == sorted(rows)
    assert parse_rows("11") == [11]
    assert ROW11.TARGETS == ROW15.TARGETS


def _fake_verify(calls, rc=0):
    """A stand-in for ``verify_child``: records the call, writes a one-claim report.json, returns a measurement."""
    def fake(profile, jobs, claims, tmp, timeout_s, engines="current"):
        calls.append((profile, jobs, claims))
        out = Path(tmp) / "report"
        out.mkdir(parents=True)
        claim = {"id": "C01", "verdict": "verified", "negative_control": {"verdict": "refuted"}, "passed": True,
                 "seconds": 1.5, "cpu_seconds": 1.25}
        (out / "report.json").write_text(json.dumps({"claims": [claim]}), encoding="utf-8")
        return {"rc": rc, "wall_s": 42.0 + len(calls), "cpu_s": 80.0, "maxrss_mib": 800.0, "tail": ""}, out
    return fake


def test_rows_5_and_15_share_one_verify_jobs_auto_child_per_run(monkeypatch):
    """Issue 40's quick budget: row 5 and row 15's parallel child are the same command; one run of a bench run
    serves both (the second caller is told who ran it), a new run measures afresh, a failed child is not kept."""
    calls = []
    monkeypatch.setattr(ROW11, "verify_child", _fake_verify(calls))
    ROW11.reset_shared()
    report = run_rows([5], mode="quick")
    row = report["rows"][0]
    assert row["status"] == "ok", row.get("reason")
    assert calls == [("quick", "auto", None)]
    wall, rss = row["facts"][0], row["facts"][1]
    assert wall["value"] == 43.0 and rss["value"] == 800.0
    assert "row 15 reads this same run as its parallel child" in wall["notes"]
    # row 15's parallel child within the same run: no second child, the same measurement and report
    again = ROW11.shared_parallel("quick", 60, 15)
    assert calls == [("quick", "auto", None)] and again["reused"] and again["row"] == 5
    assert again["res"]["wall_s"] == 43.0
    assert ROW15.claims_of(again["report"]) == [
        {"id": "C01", "verdicts": ("verified", "refuted", True), "wall": 1.5, "cpu": 1.25}]
    # another profile is another command
    ROW11.shared_parallel("full", 60, 15)
    assert calls[-1] == ("full", "auto", None)
    # a new bench run measures afresh
    run_rows([5], mode="quick")
    assert calls[-1] == ("quick", "auto", None) and len(calls) == 3
    # a failing child raises and is not kept: the next caller runs its own
    ROW11.reset_shared()

    def boom(*args, **kwargs):
        calls.append("boom")
        raise RuntimeError("verify --jobs auto --engines current exited -9: killed")
    monkeypatch.setattr(ROW11, "verify_child", boom)
    with pytest.raises(RuntimeError, match="exited -9"):
        ROW11.shared_parallel("quick", 60, 5)
    with pytest.raises(RuntimeError, match="exited -9"):
        ROW11.shared_parallel("quick", 60, 15)
    assert calls[-2:] == ["boom", "boom"]
    ROW11.reset_shared()


def test_row_5_reports_an_unknown_profile_as_not_available(monkeypatch):
    def refused(*args, **kwargs):
        raise RuntimeError("verify --jobs auto --engines current exited 2: error: argument --profile: invalid choice")
    monkeypatch.setattr(ROW11, "verify_child", refused)
    ROW11.reset_shared()
    row = run_rows([5], mode="quick")["rows"][0]
    assert row["status"] == "not available" and "invalid choice" in row["reason"]


def _sleeper(ignore_term: bool, seconds: float):
    code = ("import signal, time\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
            + f"print('up', flush=True)\ntime.sleep({seconds})")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "up"  # its signal handler is in place
    p.stdout.close()
    return p


def test_row_12_stops_its_cluster_without_waiting_on_a_stuck_process():
    """Issue 40's budget: row 12 closes each cluster through its client and then waits for the processes; one
    that does not exit is terminated, one that ignores that is killed: bounded, never a hang."""
    stop = ROW12.stop
    # closed: processes that exit by themselves are waited for, not signalled
    quick = [_sleeper(True, 0.3) for _ in range(2)]
    t0 = time.perf_counter()
    stop(quick, closed=True, timeout_s=10)
    assert [p.returncode for p in quick] == [0, 0] and time.perf_counter() - t0 < 5
    # not closed (an error in the measurement): terminated at once, killed after the timeout if it ignores that
    stuck, polite = _sleeper(True, 60), _sleeper(False, 60)
    t0 = time.perf_counter()
    stop([stuck, polite], closed=False, timeout_s=1)
    took = time.perf_counter() - t0
    assert polite.returncode == -signal.SIGTERM and stuck.returncode == -signal.SIGKILL
    assert 0.9 < took < 10
    # closed but one never exits: waited for up to the timeout, then terminated
    slow = _sleeper(False, 60)
    t0 = time.perf_counter()
    stop([slow], closed=True, timeout_s=1)
    assert slow.returncode == -signal.SIGTERM and 0.9 < time.perf_counter() - t0 < 10
