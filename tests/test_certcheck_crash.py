"""A crash inside a certificate checker is a crash, not a refusal: the checkers say so in a field of their result
(``crashed``), the claims carry it into ``Outcome.raised``, and the mutation matrix records "crashed", never a
kill. A malformed certificate (the checker's own reading refuses it) stays a refusal; either way nothing passes."""
from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

from numerics import certify, check_certificate, family_init, write_json_atomic
from numerics.validated import certcheck as K
from numerics.validated import certify as C

pytest.importorskip("flint")

KEY = (1, 3)


def boom(*args, **kwargs):
    raise TypeError("planted crash inside the checker")


@pytest.fixture(scope="module")
def cert():
    return json.loads(json.dumps(certify(family_init(*KEY)).certificate))


@pytest.fixture(scope="module")
def sink_cert():
    from numerics.validated.sink_cert import certify_sink

    c = certify_sink([Fraction(-2), Fraction(-5, 2)], Fraction(1, 4), eps=Fraction(1, 100), prec=192, order=20)
    assert c.status == "certified", c.status
    return c.data


@pytest.mark.parametrize("where", [(K, "taylor"), (K, "prove_gap_bounds"), (C, "replay_certificate"),
                                   (C.V, "step_enclosure")])
def test_a_crash_in_the_point_checkers_is_reported_as_a_crash(cert, monkeypatch, where):
    monkeypatch.setattr(*where, boom)
    res = check_certificate(copy.deepcopy(cert))
    assert not res.ok
    assert "TypeError" in res.crashed and "crashed" in res.reason, res
    if where[0] is K:
        ind = K.independent_check(copy.deepcopy(cert))
        assert not ind.ok and "TypeError" in ind.crashed, ind


def test_a_malformed_point_certificate_is_a_refusal_not_a_crash(cert):
    def edits():
        yield lambda c: c["steps"][0].__setitem__("h", 5)
        yield lambda c: c["steps"][0]["end"].__setitem__(0, "nonsense")
        yield lambda c: c["steps"][0]["box"].__setitem__(0, ["not", "a", "ball"])
        yield lambda c: c.__setitem__("initial", "x")
        yield lambda c: c["bounds"]["a_gap_lower"].__setitem__(1, 7)
        yield lambda c: c["init"].__setitem__("V", 3)
    for edit in edits():
        bad = copy.deepcopy(cert)
        edit(bad)
        bad["digest"] = C.certificate_digest(bad)
        res = check_certificate(bad)
        assert not res.ok and not res.crashed, res
        ind = K.independent_check(bad)
        assert not ind.ok and not ind.crashed, ind


def test_cli_refuses_on_a_crash_in_one_line(cert, tmp_path, capsys, monkeypatch):
    from softpolar import main

    path = tmp_path / "cert.json"
    write_json_atomic(path, cert)
    monkeypatch.setattr(K, "taylor", boom)
    assert main(["certify", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1 and out.startswith("check failed") and "crashed" in out, out


def test_a_crash_in_the_sink_checkers_is_reported_as_a_crash(sink_cert, monkeypatch):
    from numerics.validated import sink_cert as SC
    from numerics.validated import sink_certcheck as S

    bad = copy.deepcopy(sink_cert)
    bad["steps"][2]["end"][0] = "nonsense"
    replay = SC.check_sink_certificate(bad)
    assert not replay[0] and not replay.crashed, replay
    ind = S.check_sink_independent(bad)
    assert not ind.ok and not ind.crashed, ind
    with monkeypatch.context() as m:
        m.setattr(S, "_substep", boom)
        ind = S.check_sink_independent(sink_cert)
        assert not ind.ok and "TypeError" in ind.crashed, ind
    with monkeypatch.context() as m:
        m.setattr(SC, "check_apriori", boom)
        replay = SC.check_sink_certificate(sink_cert)
        assert not replay[0] and "TypeError" in replay.crashed, replay


def test_the_sink_claim_counts_a_checker_crash_as_crashed(sink_cert, monkeypatch):
    from numerics.validated import sink_certcheck as S
    from numerics.validated.sink_cert import doctored
    from proofs_check.claims import sink_cert_verdict
    from proofs_check.mutation.mutants import classify
    from proofs_check import registry

    claim = registry()["SINK2.CERT"]
    bad = doctored(sink_cert, what="eps")
    assert sink_cert_verdict(None, bad, "certified", what="doctored").verdict == "refuted"
    monkeypatch.setattr(S, "_substep", boom)
    for data in (sink_cert, bad):
        out = sink_cert_verdict(None, data, "certified", what="x")
        assert out.verdict == "inconclusive" and out.raised, out
        assert classify(claim, out) == "crashed"


@pytest.mark.parametrize("claim_id, target", [("CERT", "taylor"), ("SINK2.CERT", "_substep")])
def test_the_mutation_matrix_records_a_checker_crash_as_crashed(claim_id, target):
    """The reviewer's repro: a mutant whose patch raises only inside an independent checker, run on the claim."""
    from numerics.validated import sink_certcheck as S
    from proofs_check import Context
    from proofs_check.mutation.mutants import Mutant, patched, run_mutant
    from proofs_check import registry

    claim = registry()[claim_id]
    module = K if claim_id == "CERT" else S
    m = Mutant("test.checker_crashes", "an independent checker raises in its own code", tuple(claim.engines),
               lambda: patched((module, target, boom)))
    out = run_mutant(m, [claim], Context(), lambda line: None)
    cell = out["cells"][claim_id]
    assert cell["outcome"] == "crashed" and not cell["killed"], cell
