"""``softpolar derive``: general statements with their size-generic status, and ``--check``'s generic rows."""
from __future__ import annotations

import json

from proofs_check.cli import _cmd_derive
from softpolar import main
from theorems import IdentityResult

from .test_cli_derive import check_latex_structure


def run_cli(capsys, *argv):
    rc = main(["derive", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_markdown_marks_general_statements_and_expansions(capsys):
    rc, out, _ = run_cli(capsys, "--loss", "logistic", "--n", "2", "--d", "1")
    assert rc == 0
    assert out.count("**General statement**: proved for all n, d") == 15  # every section but two_token
    assert "**General statement**: proved for n = 2 only (reduced+exact" in out
    assert "**Expansion** (n = 2, d = 1): proved (exact-rational); derive --check re-proves it for n = 2..6" in out
    assert "undecided" not in out


def test_latex_marks_general_statements(capsys):
    rc, out, _ = run_cli(capsys, "--loss", "square", "--n", "2", "--d", "2", "--format", "latex")
    assert rc == 0
    check_latex_structure(out)
    assert r"\emph{General statement:} proved for all $n$, $d$ (index-nf; uses flow.structured" in out
    assert r"\emph{Expansion at $n=2$, $d=2$:} proved" in out


def test_check_json_records_generic_scope_uses_and_assumptions(capsys):
    rc, out, _ = run_cli(capsys, "--check", "--only", "jacobian.properties", "--only", "two_token.first_integral",
                         "--jobs", "1", "--format", "json")
    assert rc == 0
    data = json.loads(out)
    summary = data["summary"]
    assert summary["generic_proved_all_sizes"] == ["jacobian.properties"]
    assert summary["generic_proved_restricted"] == {"two_token.first_integral": "n = 2 only"}
    assert summary["generic_controls"]["proved"] == 0 and summary["generic_controls"]["disproved"] == 2
    rows = {(r["id"], r["n"]): r for r in data["rows"]}
    two = rows[("two_token.first_integral", None)]
    assert two["uses"] == ["reduced.logistic", "clock.square_rank_one"] and two["scope"] == "n = 2 only"
    props = rows[("jacobian.properties", None)]
    assert props["negative_status"] == "disproved" and "for every size" in props["negative_detail"]
    assert any("in range" in x for x in props["assumptions"])


def test_check_exits_1_when_a_generic_control_holds(capsys, monkeypatch):
    # the planted bug: a generic wrong variant that comes out "proved"
    bad = IdentityResult("jacobian.softmax", None, (), "proved", "index-nf", 0.0, "proved", "index-nf",
                         "", "[missing s s^T] proved: planted", "A/D", 1, scope="all n, d")
    monkeypatch.setattr(_cmd_derive, "run_identities", lambda *a, **k: [bad])
    rc, out, _ = run_cli(capsys, "--check")
    assert rc == 1 and "generic negative controls: 0 disproved, 0 undecided, 1 holding" in out
