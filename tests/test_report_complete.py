"""A quick verify names the claims it leaves out (the full-profile ones) and is never `complete` (issue 39).

The quick profile said 59/59 and `complete: true` with 65 claims registered: C31-C33, NORMS and the KSINK
claims run in the full profile only, and neither report named them.
"""
from __future__ import annotations

import dataclasses
import json

import pytest

from proofs_check import catalog as _registry
from proofs_check import registry
from proofs_check.catalog import not_run
from softpolar import main


@pytest.fixture
def registry_with_a_full_only_claim(monkeypatch):
    real = registry()
    full_only = dataclasses.replace(real["C02"], id="C02F", profiles=("full",))
    small = {"C02": real["C02"], "C02F": full_only}
    monkeypatch.setattr(_registry, "registry", lambda: dict(small))
    return small


def test_quick_verify_names_the_full_profile_claims(registry_with_a_full_only_claim, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["verify", "--jobs", "1", "--out", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "1/1 claims run passed" in last and "C02F (full profile only)" in last, last
    s = json.loads((out / "report.json").read_text())["summary"]
    assert s["complete"] is False and s["not_run"] == [{"id": "C02F", "reason": "full profile only"}]
    head = [line for line in (out / "report.md").read_text().splitlines() if line.startswith("**")][0]
    assert "incomplete" in head and "C02F (full profile only)" in head
    assert main(["verify", "--jobs", "1", "--require-all", "--out", str(out)]) == 1


def test_full_profile_leaves_nothing_out(registry_with_a_full_only_claim):
    """The control: the same registry under the full profile leaves no claim out (nothing is missing)."""
    assert not_run(None, "full") == []
    assert [(c.id, why) for c, why in not_run(None, "quick")] == [("C02F", "full profile only")]
