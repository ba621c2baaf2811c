"""Claim-level mutation testing (`softpolar verify --mutants`) and the repaired controls, on cheap claims."""
from __future__ import annotations

import json

import numpy as np
import pytest

from proofs_check.mutation import mutants
from proofs_check import Context, Outcome
from softpolar import main


def _read(out):
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_mutants_smoke_kill_matrix_in_report(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C10", "--mutants", "flow.da_sign", "--out", str(out)]) == 0
    data = _read(out)
    mut = data["mutation"]
    cell = mut["matrix"]["C10"]["flow.da_sign"]
    assert cell["killed"] and cell["check"] != "verified"
    assert mut["witnesses"]["C10"]["passes"]
    assert mut["summary"]["ok"] and mut["summary"]["numeric_claims_not_killed"] == []
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Mutation testing" in md and "flow.da_sign" in md
    assert "--mutants" in data["environment"]["command"]
    assert cell["outcome"] == "killed" and mut["summary"]["counts"]["killed"] >= 1
    assert "K" in md and "detected" in md and "equivalent" in md
    assert "killed" in capsys.readouterr().out  # the mutation summary is a result: stdout


def test_numeric_claim_without_a_killing_mutant_fails(tmp_path):
    # test.non_strict is not aimed at C10: C10 is then not killed by any mutant, so verify exits 1
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C10", "--mutants", "test.non_strict", "--out", str(out)]) == 1
    assert _read(out)["mutation"]["summary"]["numeric_claims_not_killed"] == ["C10"]


def test_unknown_mutant_exit_2(tmp_path, capsys):
    assert main(["verify", "--claims", "C10", "--mutants", "no.such", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("softpolar: error:") and "no.such" in err and "flow.da_sign" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", ["flow.da_sign", "jacobian.diag_only", "softmax.no_max_shift",
                                  "loss.dell_argument", "reduced.gamma_sign"])
def test_mutant_changes_the_engine_and_restores_it(name):
    import numerics

    rhs = numerics.flow_rhs("logistic", "softmax")
    V, a, w = np.array([[0.3, -0.2, 0.1]]), np.array([0.5, 0.0, -0.4]), np.array([1.0])
    before = [x.copy() for x in rhs(V, a, w)]
    red = lambda: numerics.reduced_logistic([0.3, -0.2, 0.1], [0.0, 0.0, 0.0], 1.0, tau_end=1.0,
                                            times=[1.0], backend="numpy").a[-1]
    red_before = red()
    with mutants.mutant(name).patch():
        during = rhs(V, a, w)
        red_during = red()
    changed = any(not np.allclose(x, y) for x, y in zip(before, during)) or not np.allclose(red_before, red_during)
    if name == "softmax.no_max_shift":  # equivalent for small logits: visible only beyond exp overflow
        assert not changed
        with mutants.mutant(name).patch(), np.errstate(over="ignore", invalid="ignore"):
            assert not np.all(np.isfinite(rhs(V, a + 800.0, w)[1]))
    else:
        assert changed
    after = rhs(V, a, w)
    assert all(np.array_equal(x, y) for x, y in zip(before, after)) and np.array_equal(red(), red_before)


def test_every_numeric_claim_has_an_aimed_mutant_and_every_control_a_witness():
    from proofs_check import registry

    reg = registry()
    for cid, c in reg.items():
        if not mutants.in_scope(c):
            continue  # no engines and no witness on the record: listed as outside the scope
        if mutants.is_numeric(c) and c.engines:
            assert any(m.aims_at(c) for m in mutants.MUTANTS), cid
        assert c.witness is not None, cid
        assert set(c.engines) <= set(mutants.ENGINES), cid
        if c.witness.mutant:
            mutants.mutant(c.witness.mutant)  # a witness mutant must exist
    for m in mutants.MUTANTS:
        assert set(m.engines) <= set(mutants.ENGINES), m.name


def test_du_scale2_is_b_doubled_proven_and_bit_identical_in_the_engine():
    import numerics

    ok, why = mutants.prove_du_scale2_is_b_doubled()
    assert ok and "proven" in why
    run = lambda b: numerics.reduced_logistic([0.3, -0.2, 0.1], [0.0, 0.1, 0.0], b, tau_end=5.0,
                                              times=[1.0, 5.0], backend="numpy")
    true_2b = run(2.0)
    with mutants.mutant("reduced.du_scale2").patch():
        mutated_b = run(1.0)
    assert np.array_equal(np.array(mutated_b.a), np.array(true_2b.a))  # multiplying by 2 is exact in binary
    assert np.array_equal(np.array(mutated_b.u), np.array(true_2b.u))
    from proofs_check import registry
    reg = registry()
    m = mutants.mutant("reduced.du_scale2")
    assert mutants.equivalence(m, reg["C15"]) and mutants.equivalence(m, reg["C20"])
    assert mutants.equivalence(m, reg["C17"]) is None  # t L -> 1/b states the value of b


def test_c15_under_du_scale2_reaches_a_verdict_not_a_crash():
    from proofs_check import registry
    from proofs_check import run_claim

    c15 = registry()["C15"]
    with mutants.mutant("reduced.du_scale2").patch():
        r = run_claim(c15, Context())
    assert not r.outcome.raised, r.outcome.reason
    assert mutants.classify(c15, r.outcome) in ("killed", "survived")


def test_outcome_classes():
    from proofs_check import Claim, Control, run_claim

    def claim(check):
        return Claim(id="X1", title="t", statement="s", provenance="D", assumptions="a",
                     evidence_kind="property search", check_description="c", expected="verified",
                     check=check, control=Control("c", lambda ctx: Outcome("refuted", "x", counterexample={"x": 1})))

    from numerics import IntegrationError

    def engine_refused(ctx):
        raise IntegrationError(1.0, "step size underflow")

    def check_bug(ctx):
        return next(iter(()))
    cases = {"detected": engine_refused, "crashed": check_bug,
             "killed": lambda ctx: Outcome("refuted", "x", counterexample={"x": 1}),
             "survived": lambda ctx: Outcome("verified", "x")}
    for want, fn in cases.items():
        c = claim(fn)
        assert mutants.classify(c, run_claim(c, Context()).outcome) == want
    summary = mutants.summarize([claim(check_bug)], {"X1": {"m": {"outcome": "crashed", "killed": False,
                                                                    "control_passes": False}}}, {}, ())
    assert summary["crashes"] == ["X1 under m"] and not summary["ok"]


def test_mutant_groups_hook(monkeypatch):
    import contextlib

    monkeypatch.setattr(mutants, "_GROUPS", dict(mutants._GROUPS))
    weak = mutants.Mutant("checker.test_drop_bound", "a checker without its bound", ("checker.test",),
                           contextlib.nullcontext)
    g = mutants.register_mutant_group(mutants.MutantGroup(
        "checkers.test", "test group", (weak,),
        evaluate=lambda m, ctx: {"outcome": "killed", "caught_by": "tamper suite", "evidence": "refused"}))
    assert mutants.mutant("checker.test_drop_bound") is weak
    assert mutants.select_mutants("checkers.test") == (weak,)
    out = mutants.run_mutants([], Context(), (weak,))
    assert out["groups"][0]["caught_by"] == "tamper suite" and out["summary"]["ok"]
    assert "tamper suite" in mutants.mutation_markdown(out)
    with pytest.raises(Exception, match="taken"):
        mutants.register_mutant_group(mutants.MutantGroup("other", "x", (weak,)))
    assert g.name in mutants.mutant_groups()


def test_c24_new_control_fails_and_its_witness_passes():
    from proofs_check import registry

    c24 = registry()["C24"]
    ctx = Context()
    assert c24.check(ctx).verdict == "verified"
    ctl = c24.control.run(ctx)
    assert ctl.verdict == "refuted" and "a(0) = 0 xi" in ctl.evidence
    assert c24.witness.mutant == "test.non_strict" and c24.witness.kind == "strong"
    with mutants.mutant("test.non_strict").patch():  # a test that accepts ties passes the control
        assert c24.control.run(Context()).verdict == "verified"


def test_identity_control_counts_as_rejected_only_when_every_size_rejects(monkeypatch):
    from proofs_check import registry
    from theorems import IDENTITIES, ProofResult

    ident = IDENTITIES["sum_a.conserved"]
    claim = registry()["ID.sum_a.conserved"]
    assert claim.control.run(Context()).verdict == "refuted"
    real = type(ident).negative_control

    def one_size_holds(self, n, d=None, **kw):
        res = real(self, n, d, **kw)
        return ProofResult("proved", "planted", "wrong variant holds at n=3") if n == 3 else res
    monkeypatch.setattr(type(ident), "negative_control", one_size_holds)
    assert claim.control.run(Context()).verdict == "verified"


def test_identity_quick_profile_keeps_the_kl_loss():
    from proofs_check import registry
    from theorems import IDENTITIES

    ident = IDENTITIES["flow.structured"]
    out = registry()["ID.flow.structured"].check(Context())
    assert out.verdict == "verified" and "kl" in json.dumps(out.details)
    cases = out.details["cases_by_n"][2]  # the quick profile's cases at n = 2: "loss/link d=..."
    assert {c.split("/")[0] for c in cases} == set(ident.losses) and "kl/softmax d=2" in cases


def test_outcome_of_a_witness_is_an_outcome():
    from proofs_check import registry

    c26 = registry()["C26"]
    out = c26.witness.run(Context())
    assert isinstance(out, Outcome) and out.verdict == c26.expected
    assert c26.witness.kind == "strong" and not c26.witness.weak_because


def test_claims_without_engine_tags_are_witness_only_in_the_summary():
    """C31-C33, KSINK.* and ATLAS run their own code (no engine tag): their witnesses count for passability, and
    the summary lists them apart instead of demanding a kill no engine mutant could make."""
    from proofs_check import registry

    reg = registry()
    claims = [reg[c] for c in ("C31", "KSINK.softmax1", "ATLAS", "C01")]
    wit = {c.id: mutants.run_witness(c, Context()) for c in claims if c.id != "ATLAS"}
    out = mutants.summarize(claims, {c.id: {} for c in claims}, wit, ())
    assert out["witness_only"] == ["C31", "KSINK.softmax1", "ATLAS"] and out["outside_scope"] == []
    assert "ATLAS" not in out["numeric_claims_not_killed"] and out["controls_not_shown_passable"] == ["ATLAS"]
    assert "witness but no engine tags" in mutants.mutation_markdown(
        {"summary": {**out, "total_seconds": 0.0}, "mutants": [], "matrix": {}, "witnesses": wit,
         "claims": [c.id for c in claims]})
