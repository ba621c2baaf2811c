"""What a "complete" report means (issue 39: `verify --require-all` printed 59/59 and `complete: true` with 65
claims registered). Decided: ``complete`` is true only when every claim the selection reaches ran, was decided
(none inconclusive) and rests on nothing unchecked; a report of claims named in ``--claims`` says in its last line,
report.md's headline and ``summary.selection`` that it is a selection, k of N, so it never reads as the whole."""
from __future__ import annotations

import dataclasses
import json

from proofs_check import Context, Outcome, registry, run_claim
from proofs_check.report import environment, selection_text, write_report
from softpolar import main


def _head(out):
    return [line for line in (out / "report.md").read_text().splitlines() if line.startswith("**")][0]


def test_a_claims_selection_says_it_is_one(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C02", "--jobs", "1", "--require-all", "--out", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    s = json.loads((out / "report.json").read_text())["summary"]
    n = len(registry())
    assert s["complete"] is True and s["undecided"] == []  # complete for what it selected ...
    assert s["selection"] == {"of": "the registry", "registered": n, "selected": 1, "by": "--claims"}
    text = f"a selection: 1 of {n} claims of the registry (--claims)"  # ... and says it is a selection
    assert text in last and text in _head(out)
    # the control: a selection that is the whole registry is no "selection"
    assert selection_text({**s["selection"], "by": None}) is None


def _report(results, out):
    ctx = Context(profile="quick")
    return write_report(results, out, environment(ctx, ["verify"]), 1.0)["summary"]


def test_an_undecided_claim_makes_the_report_incomplete(tmp_path):
    ctx = Context(profile="quick")
    c02 = registry()["C02"]
    undecided = dataclasses.replace(c02, id="C02U",
                                    check=lambda ctx: Outcome("inconclusive", "undecided: not settled (stand-in)"))
    s = _report([run_claim(c02, ctx), run_claim(undecided, ctx)], tmp_path / "r")
    assert s["complete"] is False and s["undecided"] == ["C02U"]
    head = _head(tmp_path / "r")
    assert "incomplete" in head and "undecided: C02U" in head
    # the control: the same report without the undecided claim is complete, with nothing undecided
    s = _report([run_claim(c02, ctx)], tmp_path / "r2")
    assert s["complete"] is True and s["undecided"] == [] and "incomplete" not in _head(tmp_path / "r2")
