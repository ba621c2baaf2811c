"""The certified-polarization claim reaches its verdict and its control fails."""
from proofs_check._registry import Context, registry, run_claim


def test_cert_claim_verified_and_near_tie_control_refuted():
    claim = registry()["CERT"]
    result = run_claim(claim, Context(profile="quick", seed=0))
    assert result.outcome.verdict == "verified", result.outcome
    assert result.control.verdict == "refuted", result.control
    assert result.passed
