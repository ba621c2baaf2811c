"""The claim registry: completeness, provenance tags as in the digest, validation, `softpolar list`."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from proofs_check import catalog as _registry
from softpolar import main
from proofs_check import Claim, Control, Outcome, registry, select
from proofs_check.catalog import provenance_note
from theorems import InvalidArgument

#: provenance tags of claims 1-30 exactly as printed in section 8 of the digest
DIGEST_TAGS = {
    1: "A/D", 2: "D", 3: "A/D", 4: "D", 5: "D", 6: "D", 7: "D", 8: "D", 9: "D", 10: "D",
    11: "A/D", 12: "A/D", 13: "D", 14: "D", 15: "A/D", 16: "D, empirical", 17: "D", 18: "D", 19: "D",
    20: "D, empirical", 21: "A/D", 22: "D", 23: "D", 24: "D/R", 25: "C/R", 26: "D/R", 27: "R", 28: "R",
    29: "R", 30: "R",
}
DIGEST = Path(__file__).resolve().parents[1].parent / "shared" / "paper" / "digest.md"


def test_claims_1_to_30_registered_with_digest_provenance():
    reg = registry()
    for k, tag in DIGEST_TAGS.items():
        cid = f"C{k:02d}"
        assert cid in reg, f"claim {k} missing"
        assert reg[cid].provenance == tag, cid
        assert reg[cid].digest_number == k


@pytest.mark.skipif(not DIGEST.exists(), reason="the digest lives outside the repository")
def test_provenance_table_matches_the_digest_text():
    text = DIGEST.read_text(encoding="utf-8")
    section = text.split("## 8. Claims to verify", 1)[1].split("## 9.", 1)[0]
    found = {int(m.group(1)): m.group(2) for m in re.finditer(r"^\s*(\d+)\. \[([^\]]+)\]", section, re.M)}
    for k, tag in DIGEST_TAGS.items():
        assert found[k] == tag, k


def test_expected_verdicts_of_the_known_traps():
    reg = registry()
    assert reg["C14"].expected == "refuted"  # printed 'every pair's gap grows'
    assert reg["C13"].expected == "verified"  # top-versus-others version
    assert reg["C03"].expected == "verified"  # squared M
    assert reg["C03P"].expected == "refuted"  # printed unsquared M
    for c in reg.values():
        assert isinstance(c.control, Control) and c.control.description


def test_unknown_claim_id_lists_valid_ids():
    with pytest.raises(InvalidArgument, match="C01.*C30"):
        select(["C01", "C99"])


def test_cli_unknown_claim_exit_2(capsys, tmp_path):
    assert main(["verify", "--claims", "C99", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    # the line names the unknown id and its closest known ids (not the whole registry)
    assert err.startswith("softpolar: error:") and "C99" in err and "did you mean" in err and "C19" in err
    assert not (tmp_path / "r").exists()


def test_outcome_validation():
    with pytest.raises(InvalidArgument, match="counterexample"):
        Outcome("refuted", "no witness")
    with pytest.raises(InvalidArgument, match="reason"):
        Outcome("inconclusive", "why?")
    with pytest.raises(InvalidArgument, match="verdict"):
        Outcome("true", "x")


def test_claim_validation():
    ok = dict(id="X1", title="t", statement="s", provenance="D", assumptions="a",
              evidence_kind="property search", check_description="c", expected="verified",
              check=lambda ctx: None, control=Control("c", lambda ctx: None))
    Claim(**ok)
    with pytest.raises(InvalidArgument, match="provenance"):
        Claim(**{**ok, "provenance": "paper"})
    with pytest.raises(InvalidArgument, match="expected"):
        Claim(**{**ok, "expected": "inconclusive"})
    with pytest.raises(InvalidArgument, match="evidence_kind"):
        Claim(**{**ok, "evidence_kind": "vibes"})


def test_provenance_notes_never_present_derived_facts_as_the_papers():
    assert "not the paper's statement" in provenance_note("D")
    assert "not the paper's statement" in provenance_note("D/R")
    assert "not the paper's statement" in provenance_note("C/R")
    assert "reading notes" in provenance_note("A/D")


def test_register_adds_an_entry(monkeypatch):
    monkeypatch.setattr(_registry, "_EXTRA", {})
    c = Claim(id="C31", title="extra", statement="s", provenance="C/I", assumptions="a",
              evidence_kind="property search", check_description="c", expected="verified",
              check=lambda ctx: None, control=Control("c", lambda ctx: None), digest_number=31)
    _registry.register(c)
    assert registry()["C31"] is c


def test_list_prints_the_registry(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for k in DIGEST_TAGS:
        assert f"C{k:02d}" in out
    assert "provenance" in out.splitlines()[0]


def test_profiles_select_claims_for_a_plain_run(monkeypatch):
    monkeypatch.setattr(_registry, "_EXTRA", {})
    base = dict(statement="s", provenance="D", assumptions="a", evidence_kind="property search",
                check_description="c", expected="verified", check=lambda ctx: None,
                control=Control("c", lambda ctx: None))
    c = Claim(id="C98", title="slow", profiles=("full",), **base)
    _registry.register(c)
    assert c not in select(None, "quick") and c in select(None, "full")
    assert select(["C98"], "quick") == [c]  # naming it runs it in any profile
    with pytest.raises(InvalidArgument, match="profiles"):
        Claim(id="C97", title="x", profiles=("weekly",), **base)


def test_c14_is_labelled_derived_not_the_papers_wording():
    c14 = registry()["C14"]
    assert c14.provenance == "D"
    text = (c14.title + " " + c14.statement).lower()
    assert "printed" not in text and "paper's main-text wording" not in text
    assert "not the paper's statement" in text


def test_upper_layers_join_through_entry_points_so_proofs_check_is_the_same_program():
    import subprocess
    import sys

    mods = _registry.plugin_claim_modules()
    assert "softpolar.experiments.claims" in mods and any(m.endswith("claims") and "atlas" in m for m in mods)
    reg = registry()
    assert {"C31", "C32", "C33", "ATLAS"} <= set(reg)
    helps = [subprocess.run([sys.executable, "-m", mod, "--help"], capture_output=True, text=True, check=True).stdout
             for mod in ("proofs_check", "softpolar")]
    assert helps[0] == helps[1]
    for command in ("derive", "verify", "certify", "experiment", "bench", "atlas"):
        assert command in helps[0]


def test_a_claim_module_must_hold_claim_records(monkeypatch):
    import types

    bad = types.ModuleType("bad_claims_mod")
    bad.CLAIMS = ["not a claim"]
    monkeypatch.setitem(__import__("sys").modules, "bad_claims_mod", bad)
    with pytest.raises(InvalidArgument, match="bad_claims_mod"):
        _registry.module_claims("bad_claims_mod")
    with pytest.raises(InvalidArgument, match="failed to import"):
        _registry.module_claims("no_such_claims_module_xyz")


def test_claim_records_are_keyword_only_and_carry_witness_and_engines():
    from proofs_check import Witness

    with pytest.raises(TypeError):
        Claim("X1", "t", "s", "D", "a", "property search", "c", "verified", lambda ctx: None,
              Control("c", lambda ctx: None))
    with pytest.raises(InvalidArgument, match="exactly one"):
        Witness(description="w")
    with pytest.raises(InvalidArgument, match="weak_because"):
        Witness(description="w", run=lambda ctx: None, kind="weak")
    c15 = registry()["C15"]
    assert c15.witness.run is not None and "reduced" in c15.engines and c15.invariant_under == ("b",)
    assert registry()["C17"].witness.run is not None and registry()["C17"].witness.kind == "strong"  # an input
