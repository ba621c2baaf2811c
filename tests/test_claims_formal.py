"""FORMAL: the Coq claim runs when coqc is there, is left out of a plain verify (with the apt command) when not."""
import pytest

from proofs_check.claim import missing_requirements
from proofs_check import Context, registry, run_claim, select
from proofs_check.catalog import not_run
from theorems import coq


@pytest.fixture
def no_coqc(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))   # an empty folder: no coqc (nor anything else) on PATH
    assert coq.coqc_path() is None


def test_formal_is_registered_with_its_requirement():
    c = registry()["FORMAL"]
    assert c.requires == (("coqc", "apt"),) and c.expected == "verified"
    assert c.evidence_kind == "machine-checked proof (Coq)"


def test_without_coqc_a_plain_verify_leaves_formal_out_and_says_how_to_install(no_coqc):
    assert "FORMAL" not in [c.id for c in select(None, "quick")]
    (skipped,) = [(c, why) for c, why in not_run(None, "quick") if c.id == "FORMAL"]
    assert "apt-get install" in skipped[1] and "coq" in skipped[1]
    assert missing_requirements(registry()["FORMAL"]) == [skipped[1]]
    # named explicitly it runs, and is inconclusive with the install command as the reason
    assert [c.id for c in select(["FORMAL"])] == ["FORMAL"]
    claim = registry()["FORMAL"]
    out = claim.check(Context())
    assert out.verdict == "inconclusive" and coq.APT_COMMAND in out.reason
    assert claim.control.run(Context()).verdict == "inconclusive"
    assert registry()["FORMAL"].witness.run(Context()).verdict == "inconclusive"
    assert not_run(["FORMAL"]) == []


def test_with_a_requirement_present_nothing_is_left_out(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda exe: "/usr/bin/" + exe)
    assert missing_requirements(registry()["FORMAL"]) == []
    assert "FORMAL" in [c.id for c in select(None, "quick")]
    assert not [c for c, _ in not_run(None, "quick") if c.id == "FORMAL"]


@pytest.mark.slow
@pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")
def test_formal_passes_and_its_control_is_refused_by_coq():
    r = run_claim(registry()["FORMAL"], Context())
    assert r.outcome.verdict == "verified", r.outcome.to_json()
    assert r.control.verdict == "refuted" and r.passed
    d = r.control.details
    assert d["witness_compiles"] and not d["control_compiles"] and d["negation_of_the_control_statement_proven"]
    w = registry()["FORMAL"].witness
    assert w.kind == "strong" and w.run(Context()).verdict == "verified"   # the control can pass
    closed = r.outcome.details["certificates_closed_in_coq"]
    assert [c["n"] for c in closed] == [3, 4] and all(c["compiles"] for c in closed)
    # issue 37: seed 0, n = 3 is re-proved from its initial condition (the replay); each record says which path
    assert closed[0]["replayed"] and closed[0]["steps"] >= 1 and all("replayed" in c for c in closed)
    # the quick profile compiles n = 4's long replay (136 steps) only in full: the closure, labelled, stands in
    assert closed[1]["replayed"] or closed[1]["replay_steps"] > 24
    assert "re-proved from its initial condition" in r.outcome.evidence
    # issue 37, item 2: the reduction's statement compiles, its planted wrong versions do not
    for what, n_wrong in (("reduction", 2), ("no_crossing", 1), ("rate", 1)):
        ctl = r.outcome.details[f"{what}_control"]
        assert ctl["true_compiles"] and not any(ctl["wrong_compiles"].values())
        assert len(ctl["wrong_compiles"]) == n_wrong
    assert all(set(r.outcome.details["assumptions"][t]) <= set(coq.STDLIB_REAL_AXIOMS)
               for t in coq.REDUCTION_THEOREMS + coq.NO_CROSSING_THEOREMS + coq.RATE_THEOREMS)
    assert set(r.outcome.details["assumptions"]["softpolar_polarization"]) - set(
        r.outcome.details["assumptions"]["softpolar_trapping"]) == {coq.EXISTENCE_AXIOM}


@pytest.mark.slow
@pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")
def test_the_coq_mutants_are_killed():
    from proofs_check.mutation import mutant
    claim = registry()["FORMAL"]
    for name, why in (("coq.lemma_as_axiom", "outside the allowed list"), ("coq.ties_region", "does not compile")):
        m = mutant(name)
        assert m.aims_at(claim)
        with m.patch():
            r = run_claim(claim, Context())
        assert r.outcome.verdict == "refuted" and why in r.outcome.evidence, (name, r.outcome.evidence)
