"""Bench row 15 (verify claim by claim, --jobs 1 vs --jobs auto): the verdict comparison and the smoke run."""
from __future__ import annotations

import pytest

from softpolar.benchmarks._row_verify_profile import claim_fact, compare
from softpolar.benchmarks._runner import run_rows

from .test_benchmarks import _check_report


def _c(cid, verdict="verified", wall=1.0, cpu=0.5):
    return {"id": cid, "verdicts": (verdict, "refuted", verdict == "verified"), "wall": wall, "cpu": cpu}


def test_claim_fact_sums_and_says_when_cpu_is_missing():
    rows = [{"serial_wall": 2.0, "parallel_wall": 1.0, "serial_cpu": 1.5, "parallel_cpu": 1.25},
            {"serial_wall": 3.0, "parallel_wall": 2.0, "serial_cpu": 0.5, "parallel_cpu": 0.25}]
    assert claim_fact("q", "two", rows)["value"] == "5.0 s / 3.0 s; CPU 2.0 s / 1.5 s"
    rows[1]["serial_cpu"] = None  # a report without cpu_seconds (an older softpolar)
    assert "CPU - s / 1.5 s" in claim_fact("q", "two", rows)["value"]


def test_compare_sorts_by_serial_wall_and_refuses_other_verdicts():
    serial = [_c("C01", wall=1.0), _c("C31", wall=9.0, cpu=17.0)]
    table = compare(serial, [_c("C01", wall=2.0), _c("C31", wall=5.0, cpu=16.0)])
    assert [r["id"] for r in table["rows"]] == ["C31", "C01"] and table["claims"] == 2
    assert table["rows"][0] == {"id": "C31", "serial_wall": 9.0, "serial_cpu": 17.0, "parallel_wall": 5.0,
                                "parallel_cpu": 16.0}
    with pytest.raises(RuntimeError, match="verdicts differ.*C31"):
        compare(serial, [_c("C01"), _c("C31", verdict="inconclusive")])
    with pytest.raises(RuntimeError, match="verdicts differ"):
        compare(serial, serial[:1])  # a claim missing from one report
    with pytest.raises(RuntimeError, match="verdicts differ"):
        compare(serial, serial[::-1])  # report order matters


@pytest.mark.slow
def test_smoke_row_15_is_well_formed():
    report = run_rows([15], mode="smoke")
    _check_report(report, [15])
    row = report["rows"][0]
    assert row["status"] == "ok", row.get("reason")
    assert "verdicts identical (asserted)" in row["lines"][0]["notes"]
    claims = [f for f in row["facts"] if ": claim " in f["label"]]
    assert {f["label"].split("claim ")[1].split(",")[0] for f in claims} == {"C02", "C14"}
    assert all("CPU" in f["value"] and "CPU -" not in f["value"] for f in claims)  # CPU seconds were measured
