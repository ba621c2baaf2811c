"""The certificate checkers have a work bound: a doctored certificate that makes them halve a step again and
again is refused after a number of substep tries derived from its own step count, and ``certify --check``
takes a time budget the user controls (``--time-budget``, default stated once)."""
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
#: substep tries after which the planted counter gives up: far above the bound (64 for one recorded step), far
#: below what the unbounded checker tried on the doctored step (2^25 - 1 tries, days)
GIVE_UP = 400


class _TooMuchWork(BaseException):
    """Raised by the counting wrapper (a BaseException: no checker turns it into a verdict)."""


@pytest.fixture(scope="module")
def cert():
    return json.loads(json.dumps(certify(family_init(*KEY)).certificate))


def _one_huge_step(cert, h=16):
    """The reviewer's doctored certificate: one recorded step of h = 16 (the last step's balls), claim fields
    rewritten consistently, digest recomputed."""
    c = copy.deepcopy(cert)
    st = dict(c["steps"][-1])
    st["h"] = f"{h}/2^0"
    c["steps"] = [st]
    n = len(c["init"]["a"])
    c.update(C.claim_fields(0, Fraction(h), [None] + [Fraction(1, 2**64)] * (n - 1), [None] + [Fraction(0)] * (n - 1)))
    c["digest"] = C.certificate_digest(c)
    return c


def _count(monkeypatch, module, name):
    calls = [0]
    orig = getattr(module, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        if calls[0] > GIVE_UP:
            raise _TooMuchWork(f"{name} called more than {GIVE_UP} times")
        return orig(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_step_that_would_halve_for_days_is_refused_by_the_work_bound(cert, monkeypatch):
    calls = _count(monkeypatch, K, "_step")
    bad = _one_huge_step(cert)
    ind = K.independent_check(bad)
    assert not ind.ok and "work bound" in ind.reason, ind.reason
    assert calls[0] <= K.SUBSTEPS_PER_STEP
    res = check_certificate(bad)
    assert not res.ok and "work bound" in res.reason, res.reason
    # the genuine certificate stays well inside the bound
    calls[0] = 0
    assert check_certificate(copy.deepcopy(cert)).ok
    assert calls[0] <= 3 * len(cert["steps"])


def test_check_certificate_takes_a_time_budget(cert):
    res = check_certificate(copy.deepcopy(cert), time_budget=1e-9)
    assert not res.ok and "time budget of 1e-09 s used up" in res.reason, res.reason
    assert check_certificate(copy.deepcopy(cert), time_budget=600).ok
    for bad in (0, -1, float("inf"), float("nan"), True, "10"):
        with pytest.raises(C.InvalidArgument, match="time_budget"):
            check_certificate(cert, time_budget=bad)


def test_cli_check_takes_a_time_budget(cert, tmp_path, capsys):
    from softpolar import main

    path = tmp_path / "cert.json"
    write_json_atomic(path, cert)
    assert main(["certify", "--check", str(path), "--time-budget", "1e-9"]) == 1
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1 and out.startswith("check failed") and "time budget" in out, out
    assert main(["certify", "--check", str(path), "--time-budget", "600"]) == 0
    capsys.readouterr()
    for value in ("0", "-3", "inf"):
        assert main(["certify", "--check", str(path), "--time-budget", value]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "--time-budget" in err, err
    doctored = tmp_path / "dos.json"
    write_json_atomic(doctored, _one_huge_step(cert))
    assert main(["certify", "--check", str(doctored)]) == 1
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1 and "work bound" in out, out


@pytest.fixture(scope="module")
def sink_cert():
    from numerics.validated.sink_cert import certify_sink

    c = certify_sink([Fraction(-2), Fraction(-5, 2)], Fraction(1, 4), eps=Fraction(1, 100), prec=192, order=20)
    assert c.status == "certified", c.status
    return c.data


def _dyadic(text):
    m, e = text.split("/2^")
    return Fraction(int(m), 2 ** int(e))


def _one_huge_sink_step(data, merged=60):
    """The first ``merged`` recorded steps as one (measured: the unbounded checker tries 1034 substeps on it),
    claimed as the escape step, no sink phase: the checker halves it until its pieces validate."""
    c = copy.deepcopy(data)
    last = c["steps"][merged - 1]
    tau_end = _dyadic(last["tau"]) + _dyadic(last["h"])
    k = tau_end.denominator.bit_length() - 1
    c["steps"] = [{"tau": "0/2^0", "h": f"{tau_end.numerator}/2^{k}", "box": last["box"], "end": last["end"]}]
    c["sink_phase"] = None
    c["escape"] = {**c["escape"], "step": 0}
    return c


def test_the_sink_checker_has_the_same_work_bound(sink_cert, monkeypatch):
    from numerics.validated import sink_certcheck as S

    assert S.check_sink_independent(sink_cert).ok
    res = S.check_sink_independent(sink_cert, time_budget=1e-9)
    assert not res.ok and "time budget of 1e-09 s used up" in res.reason, res.reason
    calls = _count(monkeypatch, S, "_substep")
    res = S.check_sink_independent(_one_huge_sink_step(sink_cert))
    assert not res.ok and "work bound" in res.reason, res.reason
    assert calls[0] <= S.SUBSTEPS_PER_STEP
