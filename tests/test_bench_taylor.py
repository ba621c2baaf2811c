"""Benchmark rows 7-10 (Taylor backend, hand-written heyoka, GBS, numpy, torchode) run
and report well-formed lines in smoke mode (never a timing assertion); without heyoka or
torchode they report 'not available'."""
from __future__ import annotations

import pytest

from softpolar.benchmarks import ROWS, format_markdown, run_rows


def test_taylor_rows_are_registered_and_well_formed():
    assert {7, 8, 9, 10} <= set(ROWS)
    report = run_rows([7, 8, 9, 10], mode="smoke")
    for row in report["rows"]:
        assert row["status"] in ("ok", "not available"), (row["row"], row.get("reason"))
        if row["status"] != "ok":
            assert "not installed" in row["reason"]
            continue
        assert row["lines"], row["row"]
        for line in row["lines"]:
            assert line["softpolar_s"] > 0 and line["anchor_s"] > 0 and line["ratio"] > 0
            assert "/" in line["ratio_label"] and line["notes"]
    assert "| 7 |" in format_markdown(report) or report["rows"][0]["status"] != "ok"


def test_rows_report_not_available_without_heyoka(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_heyoka(name, *args, **kw):
        if name == "heyoka" or name.startswith("heyoka."):
            raise ImportError("simulated: heyoka missing")
        return real_import(name, *args, **kw)
    monkeypatch.setattr(builtins, "__import__", no_heyoka)
    report = run_rows([7, 8, 9], mode="smoke")
    assert [r["status"] for r in report["rows"]] == ["not available"] * 3
    pytest.importorskip("torch")
