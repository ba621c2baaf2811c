"""`softpolar verify` end to end on cheap claims: exit codes, report contents, determinism."""
from __future__ import annotations

import dataclasses
import json

import pytest

from proofs_check import catalog as _registry
from softpolar import main
from proofs_check import Control, Outcome

CHEAP = "C02,C08,C14"  # an exact proof + eigen search, a proof + short flow, a refutation by search


def _read(out):
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def _strip_timings(data):
    for c in data["claims"]:
        c.pop("seconds")
        c.pop("cpu_seconds")
    data["summary"].pop("total_seconds")
    return data


def test_cheap_claims_end_to_end(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["verify", "--claims", CHEAP, "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert stdout.count("\n") >= 4 and "C14" in stdout  # one result line per claim + summary, on stdout
    data = _read(out)
    claims = {c["id"]: c for c in data["claims"]}
    assert list(claims) == ["C02", "C08", "C14"]
    for c in claims.values():
        assert set(c) >= {"id", "title", "provenance", "verdict", "expected", "negative_control", "evidence",
                          "seconds"}
        assert c["verdict"] == c["expected"] and c["negative_control"]["failed_as_required"]
    c14 = claims["C14"]
    assert c14["verdict"] == "refuted" and c14["negative_control"]["verdict"] == "verified"
    cex = c14["outcome"]["counterexample"]
    assert cex["instance"]["n"] >= 4 and cex["gap_t2"] < cex["gap_t1"] and cex["t2"] > cex["t1"]
    env = data["environment"]
    assert env["command"][:2] == ["softpolar", "verify"] and env["seeds"]["search_seed"] == 0
    assert set(env["versions"]) >= {"numpy", "sympy", "mpmath"}
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| id | title | provenance | verdict (expected) |" in md
    assert "## C14" in md and "not the paper's statement" in md


def test_same_command_and_seed_same_report_json(tmp_path):
    out = tmp_path / "r"
    args = ["verify", "--claims", "C02,C14", "--seed", "3", "--out", str(out)]
    assert main(args) == 0
    first = _strip_timings(_read(out))
    assert main(args) == 0  # replaces the previous report in place
    assert _strip_timings(_read(out)) == first


def test_negative_control_that_does_not_fail_makes_verify_fail(tmp_path, monkeypatch, capsys):
    reg = _registry.registry()
    weak = dataclasses.replace(
        reg["C02"], control=Control("a control without power", lambda ctx: Outcome("verified", "accepted")))
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, "C02": weak})
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C02", "--out", str(out)]) == 1
    data = _read(out)
    c = data["claims"][0]
    assert c["verdict"] == "verified" and not c["passed"]
    assert c["negative_control"]["failed_as_required"] is False
    assert "DID NOT FAIL" in (out / "report.md").read_text(encoding="utf-8")
    assert "FAIL" in capsys.readouterr().out


def test_unexpected_verdict_makes_verify_fail(tmp_path, monkeypatch):
    reg = _registry.registry()

    def boom(ctx):
        raise RuntimeError("integrator blew up")
    broken = dataclasses.replace(reg["C08"], check=boom)
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, "C08": broken})
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C08", "--out", str(out)]) == 1
    c = _read(out)["claims"][0]
    assert c["verdict"] == "inconclusive" and "integrator blew up" in c["outcome"]["reason"]


def test_json_flag_prints_the_report(tmp_path, capsys):
    assert main(["verify", "--claims", "C02", "--json", "--out", str(tmp_path / "r")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["claims"][0]["id"] == "C02"


def test_bad_options_exit_2(tmp_path, capsys):
    assert main(["verify", "--claims", "C02", "--profile", "huge", "--out", str(tmp_path / "r")]) == 2
    assert main(["verify", "--claims", "C02", "--device", "tpu", "--out", str(tmp_path / "r")]) == 2
    assert main(["verify", "--claims", ",", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert all(line.startswith("softpolar: error:") for line in err.strip().splitlines())


@pytest.mark.slow
def test_full_profile_extras(tmp_path):
    """Full profile: mpmath confirmation of the asymptotic runs, numerics cross-check of the KL tail."""
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C15,C29", "--profile", "full", "--out", str(out)]) == 0
    claims = {c["id"]: c for c in _read(out)["claims"]}
    mp = claims["C15"]["outcome"]["details"]["mpmath_confirmation"]
    assert mp["dps"] == 30 and mp["worst"] < 1e-6
    assert claims["C29"]["outcome"]["details"]["numerics_simulate_max_abs_diff_H"] < 1e-8
