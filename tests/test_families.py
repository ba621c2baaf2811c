"""Claim families that take (loss, link): applicability from the definitions, paper instances, controls and
witnesses on the same code path, `verify --models FILE --link NAME`, and write_report without private helpers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from proofs_check.claims import BUILDERS, applicability, family_claims
from proofs_check import Context, run_claim
from proofs_check.mutation import run_witness
from softpolar import main

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "examples" / "sink_links.py"


def _applies(link, loss):
    return {f: ok for f, ok, _ in applicability(link, loss)}


def test_applicability_is_read_off_the_definitions():
    assert _applies("softmax", "logistic") == {"vertex": True, "partial": False, "no_polarization": False,
                                               "top_gap": True, "no_crossing": True, "rate_law": True,
                                               "loss_law": True, "value_law": True}
    assert [f for f, ok in _applies("softmax", "square").items() if ok] == ["partial"]
    assert [f for f, ok in _applies("sigmoid", "logistic").items() if ok] == ["no_polarization"]
    assert not any(_applies("softmax", "kl").values())
    why = dict((f, w) for f, _, w in applicability("softmax", "kl"))
    assert "not a margin loss" in why["vertex"] and "not a separable loss" in why["partial"]


def test_a_renamed_softmax_is_a_user_model_with_the_same_families():
    import sympy as sp
    from theorems import Link

    x = sp.Symbol("x", real=True)
    mine = Link("my-softmax-fam", h=sp.exp(x))
    assert _applies(mine, "logistic") == _applies("softmax", "logistic")
    claims = family_claims(mine, "logistic")
    assert [c.id for c in claims] == [f"F.{f}[logistic,my-softmax-fam]" for f in
                                      ("vertex", "top_gap", "no_crossing", "rate_law", "loss_law", "value_law")]
    assert all(c.provenance == "U" and c.witness is not None and c.engines for c in claims)


def test_the_papers_claims_are_the_instances_at_the_papers_model():
    assert [c.id for c in family_claims("softmax", "logistic")] == ["C15", "C13", "C11", "C18", "C17", "C19"]
    assert [c.id for c in family_claims("softmax", "square")] == ["C21"]
    assert [c.id for c in family_claims("sigmoid", "logistic")] == ["C26"]
    generic = family_claims("softmax", "logistic", paper=False)
    assert [c.id for c in generic] == [f"F.{f}[logistic,softmax]" for f in ("vertex", "top_gap", "no_crossing",
                                                                            "rate_law", "loss_law", "value_law")]


SLOW = pytest.mark.slow


@pytest.mark.parametrize("family,link,loss", [("top_gap", "softmax", "logistic"),
                                              pytest.param("no_crossing", "softmax", "logistic", marks=SLOW),
                                              pytest.param("vertex", "softmax", "logistic", marks=SLOW),
                                              pytest.param("rate_law", "softmax", "logistic", marks=SLOW),
                                              ("partial", "softmax", "square"),
                                              pytest.param("no_polarization", "sigmoid", "logistic", marks=SLOW)])
def test_generic_family_on_the_papers_model_agrees_and_its_control_and_witness_work(family, link, loss):
    ctx = Context()
    claim = BUILDERS[family](loss, link)
    r = run_claim(claim, ctx)
    assert r.outcome.verdict == "verified" and r.control.verdict == "refuted", (r.outcome.evidence, r.control.evidence)
    w = run_witness(claim, ctx)
    assert w["passes"], w


def test_verify_models_link_runs_the_families_with_controls_and_witnesses(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["verify", "--models", str(MODELS), "--link", "softmax2", "--loss", "square", "--out", str(out)]) == 0
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (c,) = data["claims"]
    assert c["id"] == "F.partial[square,softmax2]" and c["provenance"] == "U" and "user-defined" in c["provenance_note"]
    assert c["negative_control"]["failed_as_required"] and c["witness"]["kind"] == "strong"
    assert data["environment"]["family_witnesses"][c["id"]]["passes"]
    assert "--link" in data["environment"]["command"] and "softmax2" in data["environment"]["command"]
    assert "witness F.partial" in capsys.readouterr().out


def test_verify_link_without_an_applicable_family_is_one_line_exit_2(tmp_path, capsys):
    assert main(["verify", "--link", "softmax", "--loss", "kl", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("softpolar: error:") and "no claim family applies" in err and err.count("\n") == 1
    assert main(["verify", "--loss", "square", "--out", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "r").exists()


def test_write_report_needs_no_private_helper(tmp_path):
    import proofs_check

    claim = BUILDERS["partial"]("square", "softmax")
    r = proofs_check.run_claim(claim, proofs_check.Context())
    data = proofs_check.write_report([r], tmp_path / "rep")
    assert data["claims"][0]["id"] == claim.id and "versions" in data["environment"]
    assert (tmp_path / "rep" / "report.md").exists()
