"""The certified-polarization claim reaches its verdict and its wrong-winner control is refused."""
from proofs_check import Context, registry, run_claim


def test_cert_claim_verified_and_wrong_winner_control_refuted():
    claim = registry()["CERT"]
    assert claim.evidence_kind == "interval arithmetic + lemma (machine-checked in Coq, existence assumed)"
    assert "proven in Coq" in claim.assumptions and "global existence argued by hand" in claim.assumptions
    result = run_claim(claim, Context(profile="quick", seed=0))
    assert result.outcome.verdict == "verified", result.outcome
    assert "independent checker" in result.outcome.evidence and "proven in Coq" in result.outcome.evidence
    lemma = result.outcome.details["lemma"]
    assert lemma["sizes_with_sign_facts"] == [3, 4] and len(lemma["argued_by_hand"]) == 1
    assert "Trapping.divergence" in lemma["proven_in_coq"].values()
    assert all(r["status"] == r["expected"] for r in lemma["sign_facts"])
    assert {r["expected"] for r in lemma["sign_facts"]} == {"proved", "disproved", "undecided"}
    # issue 37: which instances certify --coq re-proves from the initial condition in Coq, and which it only closes
    rows = result.outcome.details["coq_replay"]
    assert {(r["seed"], r["n"]) for r in rows} == {(s, n) for s in (0, 1) for n in (3, 4)}
    assert any(r["coq_steps"] for r in rows) and all(r["coq_steps"] or r["reason"] for r in rows)
    assert "certify --coq replays from the initial condition" in result.outcome.evidence
    assert result.control.verdict == "refuted", result.control
    # the control claims a token other than the certified one, and is refused by the mathematics
    for inst in result.control.details["instances"]:
        assert inst["claimed_winner"] != inst["sim_winner"] and inst["check"].startswith("failed"), inst
    # the control is passable: the same rewrite naming the true winner passes --check
    assert result.control.details["passable"] and all(p["check"] == "passed"
                                                       for p in result.control.details["passable"])
    assert result.passed
