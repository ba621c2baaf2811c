"""Bench rows 11 (verify --jobs) and 12 (a dask cluster with 1 and 2 workers) in smoke mode."""
from __future__ import annotations

import pytest

from softpolar.benchmarks import run_rows

from .test_benchmarks import _check_report


@pytest.mark.slow
def test_smoke_scale_rows_are_well_formed():
    report = run_rows([11, 12], mode="smoke")
    _check_report(report, [11, 12])
    jobs, cluster = report["rows"]
    assert jobs["status"] == "ok" and cluster["status"] == "ok", (jobs.get("reason"), cluster.get("reason"))
    assert jobs["facts"][0]["value"] == "yes"  # --jobs 1 and --jobs auto reach the same verdicts
    assert "identical" in jobs["lines"][0]["notes"]
    assert cluster["lines"][0]["ratio_label"] == "t(1 worker)/t(2 workers)"
