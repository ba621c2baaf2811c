"""Bench row 17 (scaling, issue 39 item 7): its anchors agree with softpolar before timing, its memory
measurements see allocations, and the row is well formed in smoke mode (slow: fresh processes)."""
from __future__ import annotations

import numpy as np
import pytest

from softpolar.benchmarks import row_scaling as S  # row 17: scaling with the problem's size


def test_the_problem_is_the_authors_draw_and_both_torch_contenders_agree():
    prob = S.problem(8)
    assert prob["V"].shape == (8, 8) and prob["a"].shape == (8,) and np.isclose(np.linalg.norm(prob["w"]), 1.0)
    a, b = S.softpolar_torch(prob, "1"), S.torchdiffeq_torch(prob, "1")
    assert a["y"].shape == b["y"].shape == (8 * 8 + 8,)
    assert S.rel_error(a["y"], b["y"]) <= S.AGREE_TORCH
    # negative control: a different end time is seen by the same comparison
    assert S.rel_error(S.softpolar_torch(prob, "2")["y"], b["y"]) > S.AGREE_TORCH


def test_peak_numpy_sees_an_allocation_and_not_its_absence():
    big = S.peak_numpy(lambda: np.ones(1 << 20))
    assert big >= 8 << 20
    assert S.peak_numpy(lambda: None) < 1 << 16


@pytest.mark.slow
def test_row_17_smoke_is_well_formed():
    from softpolar.benchmarks import run_rows

    row = run_rows([17], mode="smoke")["rows"][0]
    assert row["status"] == "ok", row.get("reason")
    assert [line["ratio_label"] for line in row["lines"]] == ["generated/hand-written", "softpolar/torchdiffeq"] * 2
    assert len(row["table"]["rows"]) == len(S.SIZES["smoke"]) and len(row["table"]["columns"]) == 9
    assert all(line["target"] is None for line in row["lines"])  # targets at n = d = 1024 only
    assert all("MiB" in line["notes"] for line in row["lines"])
