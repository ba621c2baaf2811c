"""Mutants of the checkers (proofs_check/mutation/checker_mutants.py): the tamper and soundness suites catch
each one."""
from __future__ import annotations

import pytest

from proofs_check.mutation import checker_mutants as CM


def _only(*names):
    return tuple(m for m in CM.MUTANTS if m.name in names)


def test_every_checker_has_mutants_and_every_mutant_names_a_suite():
    assert {m.checker for m in CM.MUTANTS} == {"point checker", "atlas checker", "box engine", "generic prover"}
    assert all(m.suites and set(m.suites) <= set(CM.suites_all()) for m in CM.MUTANTS)
    assert len({m.name for m in CM.MUTANTS}) == len(CM.MUTANTS)


def test_patches_are_undone():
    from theorems import id_generic_nf as nf
    real = nf.in_range
    (m,) = _only("prover.contract_out_of_range")
    with pytest.raises(RuntimeError):
        with CM.applied(m):
            assert nf.in_range is not real
            raise RuntimeError
    assert nf.in_range is real


def test_prover_mutants_are_caught():
    res = CM.run_checker_mutants(_only("prover.contract_out_of_range", "prover.unknown_as_outside"))
    assert res["baseline_clean"], res["baseline"]
    assert res["caught"] == res["total"] == 2
    assert all(set(r["caught_by"]) == {"prover-soundness"} for r in res["mutants"])
    assert "2/2 checker mutants caught" in CM.format_report(res)


def test_a_mutant_no_suite_catches_is_reported_as_survived():
    harmless = CM.CheckerMutant("noop", "generic prover", "nothing", lambda: [], ("prover-soundness",))
    res = CM.run_checker_mutants((harmless,))
    assert res["caught"] == 0 and res["mutants"][0]["missed_by"] == ["prover-soundness"]
    assert "**survived**" in CM.format_report(res)


@pytest.mark.slow
def test_every_checker_mutant_is_caught():
    res = CM.run_checker_mutants()
    assert res["baseline_clean"], res["baseline"]
    survived = [r["name"] for r in res["mutants"] if not r["caught_by"]]
    assert not survived, CM.format_report(res)


def test_verify_mutants_all_reports_the_checker_mutants(tmp_path, capsys, monkeypatch):
    # the hook: with --mutants (all), the checker mutants run after the claim mutants and are reported
    from proofs_check.mutation import mutants
    from softpolar import main

    monkeypatch.setattr(mutants, "MUTANTS", tuple(m for m in mutants.MUTANTS if m.name == "flow.da_sign"))
    fake = CM.run_checker_mutants(_only("prover.contract_out_of_range"))
    stub = lambda log=None, jobs=1, estimates=None: fake
    monkeypatch.setattr(CM, "run_checker_mutants", stub)
    # verify takes it through the wing's door, which keeps a name once read (an earlier test may have read it)
    import proofs_check.mutation as door
    monkeypatch.setattr(door, "run_checker_mutants", stub, raising=False)
    out = tmp_path / "r"
    main(["verify", "--claims", "C10", "--mutants", "--out", str(out)])
    text = capsys.readouterr().out
    assert "checker mutants 1/1 caught (generic prover 1/1; survived: none" in text
    assert "### Checker mutants" in (out / "report.md").read_text()
    import json
    data = json.loads((out / "report.json").read_text())
    assert data["mutation"]["checker_mutants"]["caught"] == 1


def test_a_checker_that_crashes_is_missed_not_caught_by_point_tamper():
    """A checker mutant that makes the independent checker crash in its own code (a TypeError in its Taylor
    recurrence) leaves point-tamper with no evidence: the suite crashes and the mutant is recorded as missed there.
    Before, the crash came back as a refusal of the honest certificate and counted as caught."""
    from numerics.validated import certcheck
    from proofs_check.mutation.checker_mutants import CheckerMutant, run_checker_mutant, suites_all

    def boom(*args, **kwargs):
        raise TypeError("planted crash inside the checker")

    m = CheckerMutant("test.taylor_crash", "independent", "crashes in its Taylor recurrence",
                      lambda: [(certcheck, "taylor", boom)], ("point-tamper",))
    row = run_checker_mutant(m, suites_all())
    assert not row["caught_by"], row
    assert any(x.startswith("point-tamper (crashed") for x in row["missed_by"]), row
