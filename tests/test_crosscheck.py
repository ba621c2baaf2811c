r"""The two-engine cross-check of the long-horizon logistic claims (proofs_check.claims.engine_crosscheck)."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.integrate import taylor as T
from proofs_check import Context, Outcome
from proofs_check.claims import engine_crosscheck, reduced_instances, with_engine_crosscheck

needs_heyoka = pytest.mark.skipif(not T.available(), reason="heyoka (extra [taylor]) is not installed")
# b = sqrt(0.7) is not a short decimal: both engines must take the same binary value (regression: GBS used
# to read the float through its shortest repr, which limited the agreement to ~17 digits)
INST = [{"name": "n=3", "u0": np.array([0.3, -0.1, 0.2]), "a0": np.zeros(3), "b": float(np.sqrt(0.7))}]
MARKS = ("1e10", "1e30")
VERIFIED = Outcome("verified", "claim holds")


def test_quick_profile_and_other_verdicts_are_untouched():
    assert with_engine_crosscheck(Context(profile="quick"), VERIFIED, INST, key="k") is VERIFIED
    refuted = Outcome("refuted", "no", counterexample={"x": 1})
    assert with_engine_crosscheck(Context(profile="full"), refuted, INST, key="k") is refuted


@needs_heyoka
def test_engines_agree_and_a_planted_disagreement_fails_the_claim(monkeypatch):
    ctx = Context(profile="full", dps=20)
    check = engine_crosscheck(ctx, INST, key="t", marks=MARKS)
    assert check["agree"] and check["min_digits"] >= ctx.dps - 5 and check["threshold"] == 15
    out = with_engine_crosscheck(ctx, VERIFIED, lambda: INST, key="t", marks=MARKS)
    assert out.verdict == "verified" and "agree to" in out.evidence
    # planted bug: the Taylor engine's logits shifted by 1e-12 (same data, same code path)
    real = T.reduced_taylor

    def shifted(*args, **kw):
        r = real(*args, **kw)
        r["a"] = [[v + 1e-12 * (j == 0) for j, v in enumerate(row)] for row in r["a"]]
        return r
    import numerics
    monkeypatch.setattr(numerics, "reduced_taylor", shifted)
    bad = with_engine_crosscheck(Context(profile="full", dps=20), VERIFIED, INST, key="t", marks=MARKS)
    assert bad.verdict == "inconclusive" and "disagree" in bad.reason


def test_without_heyoka_the_cross_check_is_skipped_and_says_so(monkeypatch):
    monkeypatch.setattr(T, "_import_heyoka", lambda: None)
    out = with_engine_crosscheck(Context(profile="full", dps=20), VERIFIED, INST, key="s")
    assert out.verdict == "verified" and "skipped" in out.evidence
    assert "heyoka" in out.details["engine_crosscheck"]["skipped"]


def test_reduced_instances_from_claim_runs():
    runs = [{"u0": np.ones((4, 3)), "a0": np.zeros((4, 3)), "b": np.ones(4)}]
    assert len(reduced_instances(runs)) == 4 and len(reduced_instances(runs, first_only=True)) == 1
    assert reduced_instances(INST)[0]["name"] == "n=3"
