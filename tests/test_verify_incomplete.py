"""A verify that could not run every claim never reads as complete (FORMAL without coqc; CERT/ATLAS rest on it)."""
from __future__ import annotations

import json

import pytest

from proofs_check import catalog as _registry
from proofs_check import Claim, Control, Outcome, registry
from proofs_check.catalog import rests_on
from softpolar import main

COQ_LEMMA = "interval arithmetic + lemma (machine-checked in Coq, existence assumed)"


def _fake_cert():
    """A cheap stand-in for CERT: same evidence kind, evidence text leaning on FORMAL."""
    return Claim(id="CERT", title="stand-in", statement="x", provenance="D", assumptions="none",
                 evidence_kind=COQ_LEMMA, check_description="none", expected="verified",
                 check=lambda ctx: Outcome("verified", "lemma steps proven in Coq (FORMAL)"),
                 control=Control("wrong", lambda ctx: Outcome("refuted", "refused", counterexample={"x": 1})))


@pytest.fixture
def small_registry_without_coqc(monkeypatch, tmp_path):
    real = registry()
    small = {"C02": real["C02"], "CERT": _fake_cert(), "FORMAL": real["FORMAL"]}
    monkeypatch.setattr(_registry, "registry", lambda: dict(small))
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no coqc
    return tmp_path


def test_plain_verify_without_coqc_says_what_did_not_run(small_registry_without_coqc, capsys):
    out = small_registry_without_coqc / "r"
    assert main(["verify", "--jobs", "1", "--out", str(out)]) == 0  # a fresh machine without Coq: still exit 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "2/2 claims run passed" in last and "not run here: FORMAL (coqc not installed" in last, last
    assert "CERT ran; it rests on FORMAL" in last and "incomplete" in last
    data = json.loads((out / "report.json").read_text())
    s = data["summary"]
    assert s["complete"] is False and [d["id"] for d in s["not_run"]] == ["FORMAL"]
    assert "coqc not installed" in s["not_run"][0]["reason"]
    assert s["rests_on_unchecked"] == {"CERT": ["FORMAL"]}
    (cert,) = [c for c in data["claims"] if c["id"] == "CERT"]
    assert cert["rests_on"][0]["id"] == "FORMAL" and cert["rests_on"][0]["status"] == "not run"
    md = (out / "report.md").read_text()
    head = [line for line in md.splitlines() if line.startswith("**")][0]
    assert "2/2 claims run" in head and "incomplete" in head and "FORMAL (coqc not installed" in head
    assert "all passed" not in head
    assert "Part of this argument is not checked in this report**: it rests on FORMAL" in md


def test_require_all_exits_1_when_a_claim_could_not_run(small_registry_without_coqc, capsys):
    out = small_registry_without_coqc / "r"
    assert main(["verify", "--jobs", "1", "--require-all", "--out", str(out)]) == 1
    assert "not run here: FORMAL" in capsys.readouterr().out
    assert json.loads((out / "report.json").read_text())["summary"]["complete"] is False


def test_named_claim_resting_on_formal_says_formal_was_not_selected(small_registry_without_coqc, capsys):
    out = small_registry_without_coqc / "r"
    assert main(["verify", "--claims", "C02,CERT", "--jobs", "1", "--out", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "CERT ran; it rests on FORMAL, which was not run here" in last
    data = json.loads((out / "report.json").read_text())
    (cert,) = [c for c in data["claims"] if c["id"] == "CERT"]
    assert cert["rests_on"][0]["reason"].startswith("not selected") and "coqc not installed" in \
        cert["rests_on"][0]["reason"]
    s = data["summary"]
    assert s["complete"] is False and s["not_run"] == [] and s["rests_on_unchecked"] == {"CERT": ["FORMAL"]}
    assert main(["verify", "--claims", "C02", "--jobs", "1", "--require-all", "--out", str(out)]) == 0
    s = json.loads((out / "report.json").read_text())["summary"]
    assert s["complete"] is True and "claims passed" in capsys.readouterr().out


def test_every_claim_leaning_on_coq_rests_on_formal():
    reg = registry()
    leaning = {c.id for c in reg.values() if c.id != "FORMAL"
               and "coq" in (c.assumptions + c.check_description + c.evidence_kind).lower()}
    assert {"CERT", "ATLAS"} <= leaning
    assert all(rests_on(reg[i]) == ("FORMAL",) for i in leaning)
