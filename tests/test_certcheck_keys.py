"""Point certificates: unknown keys are refused at every level, and what --check cannot verify is said to be
unchecked (the recorded software versions), never printed as checked."""
from __future__ import annotations

import copy
import json

import pytest

from numerics import certify, check_certificate, family_init, write_json_atomic
from numerics.validated import certcheck as K
from numerics.validated import certify as C

pytest.importorskip("flint")

KEY = (1, 3)  # 16 steps, certify + check well under a second


@pytest.fixture(scope="module")
def cert():
    return json.loads(json.dumps(certify(family_init(*KEY)).certificate))


def _redigest(c):
    c["digest"] = C.certificate_digest(c)
    return c


@pytest.mark.parametrize("where", ["first", "last"])
def test_an_unknown_key_inside_a_step_is_refused_by_both_checkers(cert, where):
    bad = copy.deepcopy(cert)
    bad["steps"][0 if where == "first" else -1]["note"] = "anything"
    _redigest(bad)
    for replay in (True, False):
        res = check_certificate(copy.deepcopy(bad), replay=replay)
        assert not res.ok and "note" in res.reason, res.reason
    ind = K.independent_check(bad)
    assert not ind.ok and "note" in ind.reason, ind.reason
    missing = copy.deepcopy(cert)
    del missing["steps"][1]["box"]
    assert not check_certificate(_redigest(missing)).ok


def test_software_is_reported_as_not_checked_and_must_be_well_formed(cert):
    res = check_certificate(copy.deepcopy(cert))
    assert res.ok, res.reason
    summary = res.summary()
    assert "software" in summary["not_checked"]
    assert "software" not in json.dumps({k: v for k, v in summary.items() if k != "not_checked"})
    changed = copy.deepcopy(cert)
    changed["software"]["softpolar"] = "99.0"
    res = check_certificate(_redigest(changed))
    assert res.ok and "99.0" in res.summary()["not_checked"]["software"]
    for junk in ("1.0", {"softpolar": 1}, {"softpolar": "1\nforged line"}, {"x" * 200: "1"}, {}):
        bad = copy.deepcopy(cert)
        bad["software"] = junk
        res = check_certificate(_redigest(bad))
        assert not res.ok and "software" in res.reason, (junk, res.reason)
    gone = copy.deepcopy(cert)
    del gone["software"]
    assert not check_certificate(_redigest(gone)).ok


def test_cli_check_prints_the_software_as_not_checked(cert, tmp_path, capsys):
    from softpolar import main

    changed = copy.deepcopy(cert)
    changed["software"]["softpolar"] = "99.0"
    path = tmp_path / "cert.json"
    write_json_atomic(path, _redigest(changed))
    assert main(["certify", "--check", str(path)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "99.0" in x)
    assert "not checked" in line
    assert main(["certify", "--check", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "99.0" in summary["not_checked"]["software"]


@pytest.fixture(scope="module")
def sink_cert():
    from fractions import Fraction

    from numerics.validated.sink_cert import certify_sink

    c = certify_sink([Fraction(-2), Fraction(-5, 2)], Fraction(1, 4), eps=Fraction(1, 100), prec=192, order=20)
    assert c.status == "certified", c.status
    return c.data


@pytest.mark.parametrize("where", ["top", "init", "step", "sink_phase", "escape", "entry"])
def test_an_unknown_key_anywhere_in_a_sink_certificate_is_refused_by_both_checkers(sink_cert, where):
    from numerics.validated.sink_cert import check_sink_certificate
    from numerics.validated.sink_certcheck import check_sink_independent

    assert check_sink_certificate(sink_cert)[0] and check_sink_independent(sink_cert).ok
    bad = copy.deepcopy(sink_cert)
    obj = {"top": bad, "init": bad["init"], "step": bad["steps"][3]}.get(where) or bad[where]
    obj["note"] = "anything"
    ok, why = check_sink_certificate(bad)
    assert not ok, why
    ind = check_sink_independent(bad)
    assert not ind.ok and "note" in ind.reason and not ind.crashed, ind
