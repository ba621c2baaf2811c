"""``softpolar bench --render-page`` (issue 40): the performance page's runs section from several bench reports.

The reports are made by the bench itself (``run_rows`` on a row in smoke mode, a few seconds each), so every
number the tests compare comes from those runs, not from stored expectations. Where a test needs a target or
a documented time, it sets one from the reports' own numbers (so both outcomes occur)."""
from __future__ import annotations

import copy
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from softpolar.benchmarks import (BEGIN, DOCUMENTED_S, END, ROWS, documented_time, format_table, load_report,
                                  render, render_page, run_rows, summarize)
from theorems import InvalidArgument

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def reports():
    """Three consecutive runs of bench row 3 (float64 vs SciPy) in smoke mode, each a whole report."""
    return [run_rows([3], mode="smoke") for _ in range(3)]


def _with_target(reports):
    """The reports with a target on row 3's first line, set between the runs' ratios (so some runs meet it and
    some do not), and the first run's line carrying its repetitions as ``ratios``."""
    out = copy.deepcopy(reports)
    ratios = [r["rows"][0]["lines"][0]["ratio"] for r in out]
    thr = statistics.median(ratios)
    for r in out:
        line = r["rows"][0]["lines"][0]
        line["target"], line["met"] = f">= {thr!r}", line["ratio"] >= thr
    out[0]["rows"][0]["lines"][0]["ratios"] = list(ratios)
    return out, ratios, thr


def _write(tmp_path, reports):
    paths = []
    for k, r in enumerate(reports, 1):
        p = tmp_path / f"run-{k}.json"
        p.write_text(json.dumps(r, default=str))
        paths.append(p)
    return paths


def _page(tmp_path, body="old section"):
    page = tmp_path / "performance.md"
    page.write_text(f"# Performance\n\nbefore\n\n{BEGIN}\n{body}\n{END}\n\nafter\n")
    return page


def test_the_reports_are_what_the_bench_writes(reports):
    for r in reports:
        assert r["mode"] == "smoke" and r["rows"][0]["status"] == "ok" and r["wall_s"] > 0
        assert "loadavg_start" in r["machine"] and "loadavg_end" in r["machine"]
        assert r["rows"][0]["cpu_s"] >= 0 and r["rows"][0]["lines"]


def test_summary_is_computed_from_the_runs(reports):
    rep, ratios, thr = _with_target(reports)
    s = summarize(rep)
    assert [r["wall_s"] for r in s["runs"]] == [r["wall_s"] for r in rep]
    assert [r["load_start"] for r in s["runs"]] == [r["machine"]["loadavg_start"] for r in rep]
    assert s["wall_median"] == statistics.median(r["wall_s"] for r in rep)
    (t,) = s["targets"]
    assert t["median"] == statistics.median(ratios) and (t["min"], t["max"]) == (min(ratios), max(ratios))
    assert t["met"] == sum(r >= thr for r in ratios) and t["of"] == 3
    assert t["reps"] == 3 + 2  # run 1's three repetitions, one ratio each for runs 2 and 3
    (cost,) = s["costs"]
    assert cost["row"] == 3 and cost["wall"] == [r["rows"][0]["wall_s"] for r in rep]
    assert cost["cpu_median"] == statistics.median(r["rows"][0]["cpu_s"] for r in rep)
    # control: all ratios meet a threshold at their minimum, and the verdict flips
    assert s["all_met"] is (t["met"] == 3)
    low = copy.deepcopy(rep)
    for r in low:
        r["rows"][0]["lines"][0]["met"] = True
    assert summarize(low)["all_met"] is True


def test_a_target_a_run_did_not_measure_is_not_run_not_missed(reports):
    rep, ratios, thr = _with_target(reports)
    for r in rep:
        r["rows"][0]["lines"][0]["met"] = True
    del rep[1]["rows"][0]["lines"][0]  # run 2 did not measure it
    (t,) = summarize(rep)["targets"]
    assert (t["met"], t["of"], t["runs"]) == (2, 2, 3) and t["cells"][1] == "not run"
    assert t["median"] == statistics.median([ratios[0], ratios[2]])
    text = render(rep, ["a", "b", "c"])
    assert "2 of 2, not run in 1" in text and "**missed**" not in text
    assert "every target met in every run that measured it" in text


def test_rendered_section_shows_each_run_the_spread_and_the_misses(reports):
    rep, ratios, thr = _with_target(reports)
    text = render(rep, ["a.json", "b.json", "c.json"])
    assert "`a.json`, `b.json`, `c.json`" in text
    for r in rep:
        assert f"{r['wall_s']:.0f} s" in text
        assert f"{r['machine']['loadavg_start'][0]:.2f} -> {r['machine']['loadavg_end'][0]:.2f}" in text
    assert f"{statistics.median(ratios):.3g} ({min(ratios):.3g}-{max(ratios):.3g})" in text
    assert f"({min(ratios):.3g}-{max(ratios):.3g}, 3 reps)" in text  # run 1's repetitions
    missed = sum(r < thr for r in ratios)
    assert text.count("**missed**") >= missed
    assert ("**not every target met in every run**" in text) == (missed > 0)


def test_documented_time_is_checked_per_run(reports):
    rep = copy.deepcopy(reports)
    walls = sorted(r["wall_s"] for r in rep)
    for r in rep:
        r["documented_s"] = (walls[0] + walls[1]) / 2  # between the fastest run and the others
    runs = summarize(rep)["runs"]
    assert [r["within"] for r in runs] == [r["wall_s"] <= (walls[0] + walls[1]) / 2 for r in rep]
    assert sum(r["within"] for r in runs) == 1 and "**over**" in render(rep, ["x"] * 3)


def test_render_page_replaces_only_its_section_and_is_repeatable(tmp_path, reports):
    paths = _write(tmp_path, reports)
    page = _page(tmp_path)
    section = render_page(page, paths)
    text = page.read_text()
    assert text.startswith("# Performance\n\nbefore\n\n" + BEGIN + "\n") and text.endswith(END + "\n\nafter\n")
    assert "old section" not in text and section in text
    render_page(page, paths)
    assert page.read_text() == text  # the same reports give the same page


def test_render_page_refuses_bad_input_and_leaves_the_page(tmp_path, reports):
    paths = _write(tmp_path, reports)
    bare = tmp_path / "bare.md"
    bare.write_text("# no markers\n")
    with pytest.raises(InvalidArgument, match="--render-page.*bench-runs"):
        render_page(bare, paths)
    assert bare.read_text() == "# no markers\n"
    page = _page(tmp_path)
    before = page.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mode": "quick"}))
    with pytest.raises(InvalidArgument, match="bad.json.*wall_s"):
        render_page(page, [paths[0], bad])
    with pytest.raises(InvalidArgument, match="report"):
        load_report(tmp_path / "missing.json")
    with pytest.raises(InvalidArgument, match="at least one report"):
        render_page(page, [])
    assert page.read_text() == before


def test_cli_render_page_and_its_refusals(tmp_path, reports):
    paths = [str(p) for p in _write(tmp_path, reports)]
    page = _page(tmp_path)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "softpolar", "bench"]
    ok = subprocess.run([*cmd, "--render-page", str(page), *paths], capture_output=True, text=True, cwd=ROOT,
                        env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "3 report(s)" in ok.stdout and "run 3" in page.read_text()
    stray = subprocess.run([*cmd, "--rows", "3", paths[0]], capture_output=True, text=True, cwd=ROOT, env=env,
                           timeout=120)
    assert stray.returncode == 2 and "--render-page" in stray.stderr and stray.stderr.strip().count("\n") == 0
    nomark = tmp_path / "x.md"
    nomark.write_text("x\n")
    bad = subprocess.run([*cmd, "--render-page", str(nomark), *paths], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=120)
    assert bad.returncode == 2 and "--render-page" in bad.stderr and nomark.read_text() == "x\n"


def test_a_run_of_the_default_set_carries_the_documented_time(reports):
    """The documented time belongs to the whole default set of a mode: a report of it carries the figure (and the
    text output quotes it), a subset's report does not."""
    default = [k for k in sorted(ROWS) if k != 11]
    assert documented_time("quick", default, default) == DOCUMENTED_S["quick"] is not None
    assert documented_time("quick", default[:-1], default) is None  # control: a subset
    assert documented_time("smoke", default, default) is None and reports[0]["documented_s"] is None
    whole = dict(reports[0], documented_s=DOCUMENTED_S["quick"])
    assert f"documented: under {DOCUMENTED_S['quick'] / 60:.0f} min" in format_table(whole)
    assert "documented" not in format_table(reports[0])
