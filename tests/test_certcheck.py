"""The independent certificate checker (numerics.validated.certcheck) and the display-field checks of --check."""
from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

from numerics import certify, certify_family, check_certificate, family_init, write_json_atomic
from numerics.validated import certcheck as K
from numerics.validated import certify as C
from numerics.validated import enclosure as V

flint = pytest.importorskip("flint")

KEY = (5, 3)  # tau* ~ 2.07, 23 steps, the winner is not argmax u(0)


@pytest.fixture(scope="module")
def cert():
    return json.loads(json.dumps(certify(family_init(*KEY)).certificate))


def _redigest(c):
    c["digest"] = C.certificate_digest(c)
    return c


def test_checker_imports_no_enclosure_code_of_the_certifier():
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(K))
    names = {a.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
             for a in node.names} | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any("_validated" in x or "_certify" in x or x in ("_rhs", "rhs") for x in names), names


def test_augmented_polynomial_field_is_the_tau_system():
    """(u', a') equal theorems' tau-system and s' = d/dtau softmax(a), at an exact point (SymPy, no certifier)."""
    import sympy as sp

    from theorems import tau_system
    n = 3
    ts = tau_system(n)
    pt = {**dict(zip(ts.u, [sp.Rational(3, 10), sp.Rational(-1, 7), sp.Rational(1, 2)])),
          **dict(zip(ts.a, [sp.Rational(1, 3), sp.Integer(0), sp.Rational(-2, 5)])), ts.b: sp.Rational(7, 5)}
    s_dot = [ts.lie(sk) for sk in ts.s]
    want = [sp.N(e.xreplace(pt), 40) for e in list(ts.du) + list(ts.da) + s_dot]
    with K.arithmetic("arb", 200) as ar:
        U = [ar.const(Fraction(str(pt[x]))) for x in ts.u]
        A = [ar.const(Fraction(str(pt[x]))) for x in ts.a]
        S = [flint.arb(str(sp.N(sk.xreplace(pt), 60))) for sk in ts.s]
        got = [x for part in K.poly_field(U, A, S, ar.const(Fraction(7, 5))) for x in part]
    for g, w in zip(got, want):
        assert abs(float(g.mid()) - float(w)) < 1e-30 + 1e-30 * abs(float(w))
    # a wrong augmentation (s' without the mean term) differs: the comparison can fail
    assert abs(float((S[0] * got[n]).mid()) - float(want[2 * n])) > 1e-6


def test_independent_checker_accepts_and_agrees_with_the_certifier(cert):
    res = K.independent_check(cert)
    assert res.ok, res.reason
    assert res.winner == cert["winner"] and res.tau_star == V.dyadic_from_str(cert["tau_star"])
    assert res.substeps >= len(cert["steps"])
    for j, (la, own) in enumerate(zip(res.a_gap_lower, res.own_a_gap_lower)):
        assert (la is None) == (j == cert["winner"])
        assert la is None or own >= float(la) > 0


def test_mpmath_iv_arithmetic_gives_the_same_verdict():
    short = json.loads(json.dumps(certify(family_init(1, 3)).certificate))  # tau* ~ 0.99, 16 steps
    res = K.independent_check(short, arith="iv")  # shares no code with flint
    assert res.ok, res.reason
    other = K.independent_check(short).own_a_gap_lower
    for x, y in zip(res.own_a_gap_lower, other):
        assert (x is None and y is None) or x == pytest.approx(y, rel=1e-12)


def test_tamperings_rejected_by_the_independent_checker_alone(cert):
    from tests.test_certify import _tamperings
    for name, bad in _tamperings(cert):
        if name == "a-priori box":  # not a claim the independent checker relies on (the replay rejects it)
            assert not check_certificate(bad).ok
            continue
        res = K.independent_check(bad)
        assert not res.ok, name


def test_a_bug_in_the_certifiers_taylor_code_passes_the_replay_but_not_the_independent_checker(monkeypatch):
    real = V.tau_field

    def buggy(u, a, b, ref, one):  # the planted bug: du/dtau = 1.001 b s
        du, da = real(u, a, b, ref, one)
        return [x * flint.arb("1.001") if not hasattr(x, "coeffs") else x * 1.001 for x in du], da

    monkeypatch.setattr(V, "tau_field", buggy)
    res = certify(family_init(*KEY))
    assert res.status == "certified"
    cert = json.loads(json.dumps(res.certificate))
    init = C.parse_init(cert["init"])
    a_low = [None if x is None else V.dyadic_from_str(x) for x in cert["bounds"]["a_gap_lower"]]
    u_low = [None if x is None else V.dyadic_from_str(x) for x in cert["bounds"]["u_gap_lower"]]
    steps = C.replay_certificate(cert, init, cert["prec"], cert["order"], cert["winner"], a_low, u_low)
    assert steps == len(cert["steps"])
    ind = K.independent_check(cert)
    assert not ind.ok and "disjoint" in ind.reason, ind.reason
    chk = check_certificate(cert)
    assert not chk.ok and chk.reason.startswith("independent checker")


def _display_edits(cert):
    n = len(cert["init"]["a"])
    i = cert["winner"]
    j = (i + 1) % n
    edits = {
        "token": lambda c: c.update(token=j),
        "conclusion": lambda c: c.update(conclusion=f"softmax(a(t)) -> e_{j} as t -> infinity"),
        "tau_star_decimal": lambda c: c.update(tau_star_decimal="1.5"),
        "a_gap_lower_decimal": lambda c: c["bounds"]["a_gap_lower_decimal"].__setitem__(j, "0.9"),
        "u_gap_lower_decimal": lambda c: c["bounds"]["u_gap_lower_decimal"].__setitem__(j, "0.9"),
        "evidence": lambda c: c.update(evidence="exact symbolic proof"),
        "lemma_steps": lambda c: c["lemma_steps"].update({k: "proved" for k in c["lemma_steps"]}),
        "lemma": lambda c: c.update(lemma=c["lemma"] + " (machine-checked)"),
        "system": lambda c: c.update(system="du/dtau = s"),
        "extra field": lambda c: c.update(note="token 1 wins"),
        "bounds extra": lambda c: c["bounds"].update(note="x"),
    }
    out = []
    for name, edit in edits.items():
        c = copy.deepcopy(cert)
        edit(c)
        out.append((name, _redigest(c)))
    return out


def test_edited_display_fields_are_rejected_with_digest_recomputed(cert):
    assert check_certificate(cert, replay=False).ok
    for name, bad in _display_edits(cert):
        res = check_certificate(bad, replay=False)
        assert not res.ok, name
        key = name.split()[0]
        assert key in res.reason or "unknown fields" in res.reason or "bounds" in res.reason, (name, res.reason)


def test_printed_values_come_from_the_verified_numbers(cert):
    res = check_certificate(cert)
    assert res.ok and res.replay is True and res.independent["ok"]
    tau = V.dyadic_from_str(cert["tau_star"])
    s = res.summary()
    assert s["tau_star_decimal"] == f"{float(tau):.10g}" and s["token"] == cert["winner"]  # from 0
    assert s["conclusion"] == cert["conclusion"] and s["bounds"] == cert["bounds"]


def test_wrong_winner_certificate_is_refused_and_true_winner_passes(cert):
    n, i = len(cert["init"]["a"]), cert["winner"]
    assert check_certificate(C.wrong_winner_certificate(cert, i), replay=False).ok  # the control is passable
    for j in range(n):
        if j != i:
            res = check_certificate(C.wrong_winner_certificate(cert, j), replay=False)
            assert not res.ok and "not proven" in res.reason, res.reason


def test_cli_check_rejects_an_edited_display_field(tmp_path, cert, capsys):
    from softpolar import main
    good = tmp_path / "good.json"
    write_json_atomic(good, cert)
    assert main(["certify", "--check", str(good)]) == 0
    out = capsys.readouterr().out
    assert "independent checker" in out and "argued by hand" in out
    assert f"tau* = {cert['tau_star_decimal']}" in out
    for name, bad in _display_edits(cert):
        path = tmp_path / "bad.json"
        write_json_atomic(path, bad)
        assert main(["certify", "--check", str(path)]) == 1, name
        assert capsys.readouterr().out.startswith("check failed"), name


def _agree(records):
    for rec in records:
        assert rec["status"] == "certified", rec
        assert rec["check"] == "passed", rec
        assert rec["independent"]["ok"] is True, rec


def test_independent_checker_agrees_on_the_small_family():
    _agree(certify_family(range(3), (3, 4), simulate=False))


@pytest.mark.slow
def test_independent_checker_agrees_on_the_full_profile_family():
    _agree(certify_family(range(5), (3, 4, 6, 8), simulate=False))


def test_hostile_numbers_never_raise(cert):
    """Huge dyadic bounds / steps (beyond the float range in the display fields) are refused, not raised."""
    for edit in (lambda c: c["bounds"]["a_gap_lower"].__setitem__((c["winner"] + 1) % 3, "9" * 400 + "/2^0"),
                 lambda c: c["steps"][0].__setitem__("h", "9" * 400 + "/2^1"),
                 lambda c: c.update(tau_star="1/2^99999"),
                 lambda c: c["steps"].__setitem__(0, {"h": "1/2^3", "end": ["x"] * 6})):
        c = copy.deepcopy(cert)
        edit(c)
        for replay in (False, True):
            assert not check_certificate(_redigest(c), replay=replay).ok
        assert not K.independent_check(c).ok


def test_box_initial_data_enclose_every_point_in_the_box(cert):
    """enclose_tau_system with (lo, hi) boxes: the end box contains the point enclosures of its corners."""
    u0, a0, b = K.exact_initial(cert["init"])
    eps = Fraction(1, 10**6)
    grid = [Fraction(0), Fraction(1, 2)]
    box = K.enclose_tau_system([(x - eps, x + eps) for x in u0], [(x - eps, x + eps) for x in a0], b, grid)
    for sign in (-1, 1):
        pt = K.enclose_tau_system([x + sign * eps for x in u0], [x + sign * eps for x in a0], b, grid)
        with K.arithmetic("arb", K.CHECK_PREC) as ar:
            for X, Y in zip(box.states[-1][0] + box.states[-1][1], pt.states[-1][0] + pt.states[-1][1]):
                (blo, bhi), (plo, phi) = ar.bounds(X), ar.bounds(Y)
                assert blo <= plo and phi <= bhi
    with pytest.raises(K.Reject):
        K.enclose_tau_system([(Fraction(1), Fraction(0))] + u0[1:], a0, b, grid)


# ---- the model and the display fields, in the checker's own code --------------------------------------
@pytest.mark.parametrize("edit, needle", [
    (lambda c: c["init"].update(loss="square"), "init.loss='square'"),
    (lambda c: c["init"].update(link="sigmoid"), "init.link='sigmoid'"),
    (lambda c: c["init"].pop("link"), "missing ['link']"),
    (lambda c: c["init"].update(X=[[1]]), "unexpected ['X']"),
    (lambda c: c.update(token=c["token"] + 1), "token="),
    (lambda c: c.update(tau_star_decimal="1.0"), "tau_star_decimal="),
    (lambda c: c.update(conclusion="softmax(a(t)) -> e_9 as t -> infinity"), "conclusion="),
    (lambda c: c["bounds"]["a_gap_lower_decimal"].__setitem__(
        next(j for j, x in enumerate(c["bounds"]["a_gap_lower_decimal"]) if x is not None), "9"),
     "bounds.a_gap_lower_decimal="),
    (lambda c: c["bounds"].pop("u_gap_lower_decimal"), "bounds do not have exactly"),
])
def test_model_and_display_fields_checked_by_the_independent_checker(cert, edit, needle):
    bad = copy.deepcopy(cert)
    edit(bad)
    res = K.independent_check(_redigest(bad))
    assert not res.ok and needle in res.reason, res.reason
    assert not check_certificate(bad, replay=False).ok


def test_display_fields_come_from_the_checker_not_the_certifier(cert, monkeypatch):
    # planted bug in the certifier's display code: its decimals are off; the certificate it writes
    # carries the bug, and a check that re-derived display fields with the certifier's code would pass it
    res = K.independent_check(cert)
    assert res.ok and res.display["token"] == cert["token"] and res.display["bounds"] == cert["bounds"]
    real = C.claim_fields

    def buggy(i, tau, a_lower, u_lower):
        out = real(i, tau, a_lower, u_lower)
        out["tau_star_decimal"] = f"{float(tau) * 1.001:.10g}"
        return out

    monkeypatch.setattr(C, "claim_fields", buggy)
    bad = certify(family_init(*KEY)).certificate
    assert bad["tau_star_decimal"] != cert["tau_star_decimal"]
    chk = check_certificate(json.loads(json.dumps(bad)), replay=False)
    assert not chk.ok and "tau_star_decimal" in chk.reason
