"""Bench row 15 (verify claim by claim, --jobs 1 vs --jobs auto): the verdict comparison and the smoke run."""
from __future__ import annotations

import pytest

from softpolar.benchmarks._row_verify_profile import CHILDREN, TARGETS, claim_fact, compare
from softpolar.benchmarks._runner import run_rows

from .test_benchmarks import _check_report


def _c(cid, verdict="verified", wall=1.0, cpu=0.5):
    return {"id": cid, "verdicts": (verdict, "refuted", verdict == "verified"), "wall": wall, "cpu": cpu}


def test_claim_fact_sums_and_says_when_cpu_is_missing():
    rows = [{"baseline_wall": 4.0, "serial_wall": 2.0, "parallel_wall": 1.0, "baseline_cpu": 3.0,
             "serial_cpu": 1.5, "parallel_cpu": 1.25},
            {"baseline_wall": 5.0, "serial_wall": 3.0, "parallel_wall": 2.0, "baseline_cpu": 1.0,
             "serial_cpu": 0.5, "parallel_cpu": 0.25}]
    fact = claim_fact("q", "two", rows)
    assert fact["value"] == "9.0 s / 5.0 s / 3.0 s; CPU 4.0 s / 2.0 s / 1.5 s"
    assert "wall baseline / serial / parallel" in fact["label"]
    rows[1]["serial_cpu"] = None  # a report without cpu_seconds (an older softpolar)
    assert "CPU 4.0 s / - s / 1.5 s" in claim_fact("q", "two", rows)["value"]


def test_compare_sorts_by_baseline_wall_and_refuses_other_verdicts_in_any_run():
    base = [_c("C01", wall=1.0), _c("C31", wall=9.0, cpu=17.0)]
    serial = [_c("C01", wall=0.5), _c("C31", wall=8.0, cpu=15.0)]
    table = compare({"baseline": base, "serial": serial, "parallel": [_c("C01", wall=2.0),
                                                                      _c("C31", wall=5.0, cpu=16.0)]})
    assert [r["id"] for r in table["rows"]] == ["C31", "C01"] and table["claims"] == 2
    assert table["rows"][0] == {"id": "C31", "baseline_wall": 9.0, "baseline_cpu": 17.0, "serial_wall": 8.0,
                                "serial_cpu": 15.0, "parallel_wall": 5.0, "parallel_cpu": 16.0}
    with pytest.raises(RuntimeError, match="between baseline and parallel.*C31"):
        compare({"baseline": base, "serial": serial, "parallel": [_c("C01"), _c("C31", verdict="inconclusive")]})
    with pytest.raises(RuntimeError, match="between baseline and serial.*C01"):
        compare({"baseline": base, "serial": [_c("C01", verdict="refuted"), _c("C31")], "parallel": base})
    with pytest.raises(RuntimeError, match="verdicts differ"):
        compare({"baseline": base, "serial": base, "parallel": base[:1]})  # a claim missing from one report
    with pytest.raises(RuntimeError, match="verdicts differ"):
        compare({"baseline": base, "serial": base, "parallel": base[::-1]})  # report order matters


def test_three_children_in_order_with_the_targets_on_the_right_anchor():
    assert [(n, j, e) for n, j, e in CHILDREN] == [("baseline", "1", "baseline"), ("serial", "1", "current"),
                                                  ("parallel", "auto", "current")]
    assert TARGETS == {"quick": ("serial", 1.5), "full": ("baseline", 1.8)}


@pytest.mark.slow
def test_smoke_row_15_is_well_formed():
    report = run_rows([15], mode="smoke")
    _check_report(report, [15])
    row = report["rows"][0]
    assert row["status"] == "ok", row.get("reason")
    assert [ln["ratio_label"] for ln in row["lines"]] == ["baseline/parallel", "serial/parallel"]
    assert all("verdicts identical in all three runs (asserted)" in ln["notes"] for ln in row["lines"])
    claims = [f for f in row["facts"] if ": claim " in f["label"]]
    assert {f["label"].split("claim ")[1].split(",")[0] for f in claims} == {"C02", "C14"}
    assert all(f["value"].count(" s") == 6 and "- s" not in f["value"] for f in claims)  # 3 walls, 3 CPUs measured
