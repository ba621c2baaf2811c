"""Validated enclosures and polarization certificates: soundness checks, tampering, negative controls."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction

import pytest

from numerics import (
    InvalidArgument, certify, certify_family, check_apriori, check_certificate, enclose, family_init,
    near_tie_init, parse_init, simulate_winner, write_json_atomic,
)
from numerics.validated import certify as C
from numerics.validated import enclosure as V

flint = pytest.importorskip("flint")

#: Small instances (seed, n) with tau* > 0 whose winner is not argmax u(0): certified in well under a second.
FAST = [(5, 3), (0, 4)]


@pytest.fixture(scope="module")
def certificates():
    out = {}
    for seed, n in FAST:
        res = certify(family_init(seed, n))
        out[(seed, n)] = res
    return out


def _redigest(cert):
    cert["digest"] = C.certificate_digest(cert)
    return cert


# ---------------------------------------------------------------------------------------
# the validated integrator
# ---------------------------------------------------------------------------------------
def test_ball_and_dyadic_text_round_trip_exactly():
    with V.arb_context(128):
        for x in (flint.arb("0.1") * 3, flint.arb(-5) / 7, flint.arb(0), flint.arb(2) ** -300 / 3):
            text = V.ball_to_str(x)
            y = V.ball_from_str(text)
            assert y.mid() == x.mid() and y.contains(x)  # midpoint exact; radius rounded up at most one ulp
            assert float(y.rad()) <= float(x.rad()) * (1 + 2.0**-28)
            assert V.ball_to_str(V.ball_from_str(text)) == V.ball_to_str(y)  # reading is deterministic
    for q in (Fraction(3, 8), Fraction(-7, 1 << 40), Fraction(12)):
        assert V.dyadic_from_str(V.dyadic_to_str(q)) == q
    for bad in ("1.5", "3*2^x +/- 1*2^0", "1*2^-9999999 +/- 0*2^0"):
        with pytest.raises(InvalidArgument):
            V.ball_from_str(bad)
    with pytest.raises(InvalidArgument):
        V.dyadic_to_str(Fraction(1, 3))


def _sum_invariants(enc, u0, a0, b):
    r"""Exact invariants of ($\star$): $\sum_k a_k$ is constant and $\sum_k u_k=\sum_k u_k(0)+b\tau$."""
    n = len(u0)
    bad = []
    with V.arb_context(enc.prec):
        for st in enc.steps:
            tau = st.tau + st.h
            su = sum(st.end[:n][1:], st.end[0])
            sa = sum(st.end[n:][1:], st.end[n])
            if not su.contains(V.arb_from_rational(sum(u0) + b * tau)):
                bad.append(("sum u", float(tau)))
            if not sa.contains(V.arb_from_rational(sum(a0))):
                bad.append(("sum a", float(tau)))
    return bad


def _two_token_energy(enc, u0, a0, b):
    r"""$n=2$: $\tfrac12(u_1-u_2)^2-b\cosh(a_1-a_2)$ is exactly conserved (paper-notes#flow, [D])."""
    bad = []
    with V.arb_context(enc.prec):
        bb = V.arb_from_rational(b)
        e0 = (V.arb_from_rational(u0[0] - u0[1]) ** 2) / 2 - bb * V.arb_from_rational(a0[0] - a0[1]).cosh()
        for st in enc.steps:
            X = st.end
            e = (X[0] - X[1]) ** 2 / 2 - bb * (X[2] - X[3]).cosh()
            if not e.overlaps(e0):
                bad.append(float(st.tau + st.h))
    return bad


def test_enclosure_contains_exact_invariants():
    u0, a0, b = [Fraction(3, 10), Fraction(-1, 5), Fraction(1, 20)], [Fraction(1), Fraction(6, 5), Fraction(0)], \
        Fraction(9, 10)
    enc = enclose(u0, a0, b, Fraction(8))
    assert enc.status == "complete" and enc.tau == 8
    assert enc.max_radius() < 1e-15  # tol 2^-64 per step, 8 units of tau
    assert _sum_invariants(enc, u0, a0, b) == []


def test_enclosure_conserves_two_token_energy():
    u0, a0, b = [Fraction(1, 10), Fraction(-3, 10)], [Fraction(-1, 2), Fraction(1, 2)], Fraction(1)
    enc = enclose(u0, a0, b, Fraction(6))
    assert enc.status == "complete"
    assert _two_token_energy(enc, u0, a0, b) == []


def test_invariant_checks_catch_a_wrong_field(monkeypatch):
    """Negative control: with du/dtau = 1.01 b s the sum-invariant check must fail."""
    real = V.tau_field

    def wrong(u, a, b, ref, one):
        du, da = real(u, a, b, ref, one)
        return [x * flint.arb("1.01") for x in du], da

    monkeypatch.setattr(V, "tau_field", wrong)
    u0, a0, b = [Fraction(3, 10), Fraction(-1, 5), Fraction(1, 20)], [Fraction(1), Fraction(6, 5), Fraction(0)], \
        Fraction(9, 10)
    enc = enclose(u0, a0, b, Fraction(2))
    assert any(kind == "sum u" for kind, _ in _sum_invariants(enc, u0, a0, b))


def test_apriori_box_check_rejects_a_too_small_box():
    with V.arb_context(128, cap=30):
        X = [V.arb_from_rational(q) for q in (Fraction(1, 3), Fraction(-1, 4), Fraction(1, 2), Fraction(0))]
        b = V.arb_from_rational(Fraction(1))
        h = Fraction(1, 8)
        B = V.apriori_enclosure(X, b, h, V.reference_token(X))
        assert B is not None and check_apriori(X, b, h, B)
        shrunk = [flint.arb(x.mid(), x.rad() / 100) for x in B]
        assert not check_apriori(X, b, h, shrunk)
        assert not check_apriori(X, b, h * 64, B)


def test_enclosure_matches_float_simulation():
    init = family_init(0, 4)
    res = certify(init)
    sim = simulate_winner(init, 20.0)
    assert res.status == "certified"
    assert sim["winner"] == res.winner
    # the certificate proves the true state is in R_i^+ at tau*, so the float run (sampled every 0.01) is
    # there by then; and the enclosure is tested after every step, so it lags by at most about one step
    h_max = max(float(V.dyadic_from_str(st["h"])) for st in res.certificate["steps"])
    assert sim["entry_tau"] <= float(res.tau_star) + 0.01
    assert float(res.tau_star) - sim["entry_tau"] <= h_max + 0.01


# ---------------------------------------------------------------------------------------
# certificates
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", FAST)
def test_certified_and_rechecked(certificates, key):
    res = certificates[key]
    assert res.status == "certified"
    assert res.tau_star > 0 and res.steps > 0
    init = family_init(*key)
    u0, _, _ = init.exact()
    assert res.winner != max(range(init.n), key=lambda k: u0[k])  # not the paper's argmax-u winner
    chk = check_certificate(json.loads(json.dumps(res.certificate)))
    assert chk.ok, chk.reason
    assert chk.winner == res.winner and chk.steps_checked == res.steps


def _tamperings(cert):
    """(name, tampered certificate with a valid digest): each must be rejected by the mathematics."""
    n = len(cert["init"]["a"])
    i = cert["winner"]
    out = []

    c = copy.deepcopy(cert)
    c["winner"] = (i + 1) % n
    out.append(("winner", c))

    c = copy.deepcopy(cert)
    c["init"]["V"][0][0] = f"{float(c['init']['V'][0][0]) + 1e-6:.15e}"
    out.append(("init V", c))

    c = copy.deepcopy(cert)
    c["init"]["a"][i] = f"{float(c['init']['a'][i]) + 0.5:.15e}"
    out.append(("init a", c))

    c = copy.deepcopy(cert)
    k = len(c["steps"]) // 2
    h = V.dyadic_from_str(c["steps"][k]["h"])
    c["steps"][k]["h"] = V.dyadic_to_str(h * Fraction(1023, 1024))
    out.append(("step size", c))

    c = copy.deepcopy(cert)
    with V.arb_context(cert["prec"]):
        X = [V.ball_from_str(s) for s in c["steps"][-1]["end"]]
        X[n + i] = X[n + i] + flint.arb("0.01")
        c["steps"][-1]["end"] = [V.ball_to_str(x) for x in X]
    out.append(("end enclosure", c))

    c = copy.deepcopy(cert)
    with V.arb_context(cert["prec"]):
        B = [V.ball_from_str(s) for s in c["steps"][0]["box"]]
        c["steps"][0]["box"] = [V.ball_to_str(flint.arb(x.mid(), x.rad() / 1000)) for x in B]
    out.append(("a-priori box", c))

    c = copy.deepcopy(cert)
    j = (i + 1) % n
    c["bounds"]["a_gap_lower"][j] = V.dyadic_to_str(V.dyadic_from_str(c["bounds"]["a_gap_lower"][j]) + 1)
    out.append(("a bound", c))

    c = copy.deepcopy(cert)
    c["bounds"]["u_gap_lower"][j] = V.dyadic_to_str(V.dyadic_from_str(c["bounds"]["u_gap_lower"][j]) + 1)
    out.append(("u bound", c))

    c = copy.deepcopy(cert)
    c["steps"] = c["steps"][:-1]
    out.append(("dropped step", c))

    c = copy.deepcopy(cert)
    c["tau_star"] = V.dyadic_to_str(V.dyadic_from_str(c["tau_star"]) * 2)
    out.append(("tau star", c))
    return [(name, _redigest(c)) for name, c in out]


def test_tampered_certificates_are_rejected(certificates):
    cert = json.loads(json.dumps(certificates[FAST[0]].certificate))
    assert check_certificate(cert).ok
    for name, bad in _tamperings(cert):
        res = check_certificate(bad)
        assert not res.ok, name
    edited = copy.deepcopy(cert)
    edited["steps"][0]["h"] = V.dyadic_to_str(V.dyadic_from_str(edited["steps"][0]["h"]) / 2)
    res = check_certificate(edited)  # digest not updated
    assert not res.ok and "digest" in res.reason
    for junk in (None, [], {"format": "x"}, {**cert, "steps": "nope"}, {**cert, "status": "not certified"}):
        assert not check_certificate(_redigest(copy.deepcopy(junk)) if isinstance(junk, dict) else junk).ok


def test_near_tie_below_precision_is_not_certified():
    res = certify(near_tie_init(3, gap="1e-45"), tau_max=10)
    assert res.status == "not certified"
    assert "tau-max" in res.reason
    assert any("a_1 - a_2" in x or "a_2 - a_1" in x for x in res.region.undecided)
    assert not check_certificate(res.certificate).ok
    # with enough precision the same point is proven to lie in R_1^+ already at tau = 0 (a true statement)
    sharp = certify(near_tie_init(3, gap="1e-45"), tau_max=10, prec=256)
    assert sharp.status == "certified" and sharp.winner == 0 and sharp.tau_star == 0


def test_exact_tie_is_never_certified():
    res = certify(near_tie_init(3, gap="0"), tau_max=5)
    assert res.status == "not certified"


def test_too_wide_and_budget_reasons():
    res = certify(near_tie_init(3, gap="0"), tau_max=10, prec=40, max_width=1e-6)
    assert res.status == "not certified" and "too wide" in res.reason
    res = certify(near_tie_init(3, gap="0"), tau_max=10, max_steps=3)
    assert res.status == "not certified" and "max steps" in res.reason


@pytest.mark.parametrize("obj,word", [
    ({"loss": "square", "link": "softmax", "V": [["1", "2"]], "a": ["0", "0"], "target": ["1"]}, "loss"),
    ({"loss": "logistic", "link": "sigmoid", "V": [["1", "2"]], "a": ["0", "0"], "target": ["1"]}, "link"),
    ({"loss": "logistic", "link": "softmax", "V": [["1"]], "a": ["0", "0"], "target": ["1"]}, "V"),
    ({"loss": "logistic", "link": "softmax", "V": [["1", "2"]], "a": ["0", "nan"], "target": ["1"]}, "a[1]"),
    ({"loss": "logistic", "link": "softmax", "V": [["1", "2"]], "a": ["0", "0"], "target": ["0"]}, "target"),
    ({"loss": "logistic", "link": "softmax", "V": [["1", "2"]], "a": ["0"], "target": ["1"]}, "a="),
    ({"loss": "logistic", "link": "softmax", "V": [["1", "2"]], "a": ["0", True], "target": ["1"]}, "a[1]"),
    ({"loss": "logistic", "link": "softmax", "V": [["1", "2"]], "a": ["0", "1e99999"], "target": ["1"]}, "a[1]"),
])
def test_invalid_input(obj, word):
    with pytest.raises(InvalidArgument, match=word.replace("[", r"\[").replace("]", r"\]")):
        parse_init(obj)


def test_exact_conversion_of_decimals():
    init = parse_init({"loss": "logistic", "link": "softmax", "V": [["0.1", "0.2"], ["0.3", "-0.4"]],
                       "a": ["1", "0.5"], "target": ["0.6", "0.8"]})
    u, a, b = init.exact()
    assert u == [Fraction(3, 50) + Fraction(6, 25), Fraction(3, 25) - Fraction(8, 25)]
    assert b == 1 and a == [1, Fraction(1, 2)]


# ---------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------
def _cli(*args):
    """The real console entry point in a subprocess (slow: a fresh interpreter)."""
    return subprocess.run([sys.executable, "-m", "softpolar", "certify", *args], capture_output=True,
                          text=True, timeout=300)


def _main(capsys, *args):
    """The CLI in-process: (exit code, stdout, stderr)."""
    from softpolar import main
    code = main(["certify", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_certify_check_tamper(tmp_path):
    init = tmp_path / "init.json"
    init.write_text(json.dumps(family_init(*FAST[0]).to_json()))
    cert = tmp_path / "cert.json"
    r = _cli("--init", str(init), "--out", str(cert))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("certified") and "tau*" in r.stdout
    assert not list(tmp_path.glob(".*.tmp"))
    r = _cli("--check", str(cert), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["check"] == "passed"
    data = json.loads(cert.read_text())
    data["winner"] = (data["winner"] + 1) % len(data["init"]["a"])
    bad = tmp_path / "bad.json"
    write_json_atomic(bad, _redigest(data))
    r = _cli("--check", str(bad))
    assert r.returncode == 1 and r.stdout.startswith("check failed")


def test_cli_not_certified_and_invalid(tmp_path, capsys):
    tie = tmp_path / "tie.json"
    tie.write_text(json.dumps(near_tie_init(3, gap="0").to_json()))
    code, out, _ = _main(capsys, "--init", str(tie), "--tau-max", "3", "--json")
    assert code == 1
    out = json.loads(out)
    assert out["status"] == "not certified" and "tau-max" in out["reason"]
    code, out, _ = _main(capsys, "--init", str(tie), "--tau-max", "3")
    assert code == 1 and out.startswith("not certified") and "undecided" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"loss": "square", "link": "softmax", "V": [["1", "2"]], "a": ["0", "0"],
                               "target": ["1"]}))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    for args in (["--init", str(bad)], ["--init", str(tmp_path / "missing.json")], ["--init", str(garbage)],
                 ["--check", str(garbage)], ["--init", str(tie), "--tau-max", "-1"],
                 ["--init", str(tie), "--prec", "8"], ["--check", str(tie), "--out", str(tmp_path / "x.json")],
                 ["--init", str(tie), "--out", str(tmp_path / "nowhere" / "x.json")], []):
        code, _, err = _main(capsys, *args)
        assert code == 2, (args, err)
        assert len(err.strip().splitlines()) == 1 and err.startswith("softpolar: error:"), err
    code, out, _ = _main(capsys, "--check", str(tie))  # an initial condition is not a certificate
    assert code == 1 and out.startswith("check failed")


# ---------------------------------------------------------------------------------------
# the family (slow)
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_family_of_twenty_four_certificates():
    records = certify_family(range(6), (3, 4, 6, 8))
    assert len(records) == 24
    for rec in records:
        assert rec["status"] == "certified", rec
        assert rec["check"] == "passed", rec
        assert rec["agrees"] is True, rec
        assert rec["seconds"] < 60 and rec["check_seconds"] < 60, rec
        assert rec["uniform_a0"] is False
    assert sum(r["tau_star"] > 0 for r in records) >= 12


def test_python_floats_in_an_init_dict_are_read_at_their_exact_value():
    """A Python float in an init dict (the API, not JSON text) is taken at its exact binary value, with a note;
    the finiteness check once referred to an unimported ``math`` and raised NameError."""
    from numerics import parse_init

    init = parse_init({"loss": "logistic", "link": "softmax", "V": [[0.5, 0.1]], "a": [0.0, 0.3], "target": [1.0]})
    assert any("exact binary value" in note for note in init.notes)
    with pytest.raises(InvalidArgument, match="finite"):
        parse_init({"loss": "logistic", "link": "softmax", "V": [[float("inf"), 0.1]], "a": [0.0, 0.3],
                    "target": [1.0]})
