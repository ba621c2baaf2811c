"""Symmetries of the tau-system (theorems._symmetry): proofs and their negative controls."""
from __future__ import annotations

import pytest

from theorems import (
    InvalidArgument, check_a_shift, check_b_scaling, check_u_shift, prove_symmetries, slice_coverage,
)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_symmetries_proved_and_controls_disproved(n):
    rep = prove_symmetries(n)
    assert rep.holds, rep.summary()
    assert [c["status"] for c in rep.summary()] == ["proved"] * 3 + ["disproved"] * 3


@pytest.mark.parametrize("check", [check_u_shift, check_a_shift, check_b_scaling])
def test_controls_carry_a_counterexample(check):
    res = check(3, wrong=True)
    assert res.status == "disproved"
    assert res.counterexample


def test_slice_coverage_counts_dimensions():
    text = slice_coverage(3)
    assert "4 differences" in text and "7-dimensional" in text
    with pytest.raises(InvalidArgument):
        slice_coverage(1)
