"""Claim-level mutation testing (`softpolar verify --mutants`) and the repaired controls, on cheap claims."""
from __future__ import annotations

import json

import numpy as np
import pytest

from proofs_check import _mutants
from proofs_check._claim import Context, Outcome
from softpolar._cli import main


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
    assert "kills in" in capsys.readouterr().out  # the mutation summary is a result: stdout


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
    red = lambda: numerics.reduced_logistic([0.3, -0.2, 0.1], [0.0, 0.0, 0.0], 1.0, tau_end=1.0,  # noqa: E731
                                            times=[1.0], backend="numpy").a[-1]
    red_before = red()
    with _mutants.mutant(name).patch():
        during = rhs(V, a, w)
        red_during = red()
    changed = any(not np.allclose(x, y) for x, y in zip(before, during)) or not np.allclose(red_before, red_during)
    if name == "softmax.no_max_shift":  # equivalent for small logits: visible only beyond exp overflow
        assert not changed
        with _mutants.mutant(name).patch(), np.errstate(over="ignore", invalid="ignore"):
            assert not np.all(np.isfinite(rhs(V, a + 800.0, w)[1]))
    else:
        assert changed
    after = rhs(V, a, w)
    assert all(np.array_equal(x, y) for x, y in zip(before, after)) and np.array_equal(red(), red_before)


def test_every_numeric_claim_has_an_aimed_mutant_and_every_control_a_witness():
    from proofs_check._registry import registry

    reg = registry()
    aimed = {cid for m in _mutants.MUTANTS for cid in m.concerns}
    witnesses = _mutants.control_witnesses()
    for cid, c in reg.items():
        if not _mutants.in_scope(cid):
            continue  # C31-C33 and plugins: registered by other packages, outside this layer
        if c.evidence_kind != _mutants.SYMBOLIC:
            assert cid in aimed, cid
        assert cid in witnesses or any(cid in m.concerns for m in _mutants.MUTANTS), cid
    for desc, how in witnesses.values():
        if isinstance(how, str):
            _mutants.mutant(how)  # a witness mutant must exist


def test_c24_new_control_fails_and_its_witness_passes():
    from proofs_check import _claims_regression as R

    ctx = Context()
    assert R.c24_check(ctx).verdict == "verified"
    ctl = R.c24_control(ctx)
    assert ctl.verdict == "refuted" and "a(0) = 0 xi" in ctl.evidence
    assert R.CONTROL_WITNESSES["C24"][1](ctx).verdict == "verified"
    with _mutants.mutant("test.non_strict").patch():  # a test that accepts ties passes the control
        assert R.c24_control(Context()).verdict == "verified"


def test_identity_control_counts_as_rejected_only_when_every_size_rejects(monkeypatch):
    from proofs_check import _claims_identities as I
    from theorems._proof import ProofResult

    ident = I._identities()["sum_a.conserved"]
    claim = I._claim(ident)
    assert claim.control.run(Context()).verdict == "refuted"
    real = type(ident).negative_control

    def one_size_holds(self, n, d=None, **kw):
        res = real(self, n, d, **kw)
        return ProofResult("proved", "planted", "wrong variant holds at n=3") if n == 3 else res
    monkeypatch.setattr(type(ident), "negative_control", one_size_holds)
    assert claim.control.run(Context()).verdict == "verified"


def test_identity_quick_profile_keeps_the_kl_loss():
    from proofs_check import _claims_identities as I

    ident = I._identities()["flow.structured"]
    cases = I._quick_cases(ident, 2)
    assert {lo for lo, _, _ in cases} == set(ident.losses) and ("kl", "softmax", 2) in cases
    out = I._claim(ident).check(Context())
    assert out.verdict == "verified" and "kl" in json.dumps(out.details)


def test_outcome_of_a_witness_is_an_outcome():
    w = _mutants.control_witnesses()
    assert isinstance(w["C10"][1](Context()), Outcome)
