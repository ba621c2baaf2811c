"""Derived asymptotic laws (theorems.asymptotics) and the settled three-verdict check
(numerics.integrate.settle).

The temperature models were falsely refuted by the old fitted rate_law (two fixed windows ending at t = 1e40);
their derived law is verified once settled, and near misses (constant x 1.01, the temperature-free formula, an
exponent 1.95) are rejected by the same comparison.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import numerics
from numerics.integrate.settle import settle_rate
from theorems import Link, Loss, get_link
from theorems.asymptotics import Law, NoLaw, asymptotics, rate_law

x = sp.Symbol("x", real=True)
z = sp.Symbol("z", real=True)
n, b = sp.symbols("n b", positive=True)
EXP_MARGIN = Loss.margin("exp-margin-asym", ell=sp.exp(-z))


@pytest.mark.parametrize("T", [1, 2, 3, 5])
@pytest.mark.parametrize("loss", ["logistic", EXP_MARGIN])
def test_temperature_law_is_derived_with_constant_2_n_minus_1_b_T2_over_n(T, loss):
    law = rate_law(loss, Link(f"softmax-T{T}-asym", h=sp.exp(x / T)))
    assert isinstance(law, Law)
    assert law.exponent == 2
    assert sp.simplify(law.constant - 2 * (n - 1) * b * T**2 / n) == 0
    # a wrong constant (off by 1 %) is not what was derived
    assert sp.simplify(law.constant - sp.Rational(101, 100) * 2 * (n - 1) * b * T**2 / n) != 0


def test_shift_and_scale_do_not_change_the_law_and_json_parses_in_n_and_b():
    entry = asymptotics("logistic", Link("shifted-T2-asym", h=7 * sp.exp(x / 2 + 3)))[0]  # the rate law first
    assert entry["quantity"] == "1 - max normalized weight"
    assert sp.sympify(entry["exponent"]) == 2
    const = sp.sympify(entry["constant"], locals={"n": n, "b": b})
    assert sp.simplify(const - 8 * (n - 1) * b / n) == 0


@pytest.mark.parametrize("link,why", [(Link("poly-exp-asym", h=(1 + x**2) * sp.exp(x)), "not constant"),
                                      ("softmax1", "c = 1"), ("sigmoid", "elementwise")])
def test_no_law_is_derived_where_a_step_fails_and_the_reason_is_named(link, why):
    law = rate_law("logistic", link)
    assert isinstance(law, NoLaw) and why in law.reason
    assert law.to_json()["exponent"] is None


def _problem(link, loss="logistic", seed=1, nn=3):
    rng = np.random.default_rng(seed)
    return numerics.Problem(loss=loss, link=link, V=rng.normal(size=(3, nn)), a=np.zeros(nn),
                            target=rng.normal(size=3))


def _settle(link, loss="logistic", *, factor=1.0, exponent=2.0, max_log10_t=10000):
    K = get_link(link)
    law = rate_law(loss, K)
    P = _problem(K, loss)
    C = law.constant_at(3, float(np.dot(P.target, P.target))) * factor
    return settle_rate(P, exponent=exponent, constant=C, h_mp=sp.lambdify(x, K.h(x), "mpmath"),
                       max_log10_t=max_log10_t)


def test_temperature_3_is_verified_once_settled_and_near_misses_are_refuted():
    T3 = Link("softmax-T3-asym", h=sp.exp(x / 3))
    ok = _settle(T3)
    assert ok["verdict"] == "verified" and ok["settled"], ok["why"]
    assert abs(ok["history"][-1]["ratio_extrapolated"] - 1) < 0.005
    assert ok["horizon_log10_t"] > 40  # the old window's end: the law settles far beyond it
    assert _settle(T3, factor=1.01)["verdict"] == "refuted"           # constant off by 1 %
    assert _settle(T3, factor=1 / 9)["verdict"] == "refuted"          # the temperature-free formula
    assert _settle(T3, exponent=1.95)["verdict"] == "refuted"         # exponent near miss


def test_a_bound_too_short_is_undecided_with_the_horizon_asked_for_never_a_pass():
    r = _settle(Link("softmax-T5-asym", h=sp.exp(x / 5)), max_log10_t=300)
    assert r["verdict"] == "undecided" and not r["settled"]
    assert "not settled by t = 1e300" in r["why"] and r["horizon_asked_log10_t"] > 300


def test_settle_refuses_a_bad_bound():
    from theorems import InvalidArgument
    with pytest.raises(InvalidArgument, match="max_log10_t=5"):
        _settle("softmax", max_log10_t=5)


def test_verify_refuses_a_bad_max_log_t_with_one_line(tmp_path, capsys):
    from proofs_check.cli import main
    assert main(["verify", "--claims", "C01", "--max-log-t", "5", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "max_log_t" in err and err.count("\n") == 1


# the two false refutations run in the default suite (about 12 s and 25 s); temperature 5 is slow-marked
@pytest.mark.parametrize("T,loss", [(2, EXP_MARGIN), (3, "logistic"),
                                    pytest.param(5, "logistic", marks=pytest.mark.slow),
                                    pytest.param(5, EXP_MARGIN, marks=pytest.mark.slow)])
def test_the_rate_law_family_verifies_temperature_models_that_the_fitted_check_refuted(T, loss):
    from proofs_check import Context, run_claim
    from proofs_check.claims import family_claims
    (claim,) = [c for c in family_claims(Link(f"softmax-T{T}-fam", h=sp.exp(x / T)), loss)
                if c.id.startswith("F.rate_law")]
    r = run_claim(claim, Context())
    assert r.outcome.verdict == "verified", r.outcome.evidence
    assert r.control.verdict == "refuted", r.control.evidence
    assert f"{2 * T**2}*b*(n - 1)/n" in r.outcome.evidence


def test_derive_asymptotics_json_lists_each_law_parsable_in_n_and_b(capsys):
    import json

    from proofs_check.cli import main
    assert main(["derive", "--asymptotics", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (law,) = [e for e in data["asymptotics"] if e["quantity"] == "1 - max normalized weight"]
    assert set(law) >= {"quantity", "exponent", "constant"}
    assert sp.simplify(sp.sympify(law["constant"], locals={"n": n, "b": b}) - 2 * (n - 1) * b / n) == 0
    assert main(["derive", "--json"]) == 2   # --json alone is refused with one line


def test_verify_last_line_counts_undecided_and_never_passes_it(tmp_path, capsys):
    """A too-short --max-log-t leaves the temperature-5 rate, loss and value laws undecided: failed claims, named in
    the last line."""
    from proofs_check.cli import main
    models = tmp_path / "t5.py"
    models.write_text("import sympy as sp\nimport softpolar\nx = sp.symbols('x', real=True)\n"
                      "T5 = softpolar.Link('softmax-T5-undecided', h=sp.exp(x / 5))\n", encoding="utf-8")
    code = main(["verify", "--models", str(models), "--link", "softmax-T5-undecided", "--loss", "logistic",
                 "--max-log-t", "300", "--out", str(tmp_path / "r")])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 1 and "3 undecided: 3 not settled within --max-log-t 300" in last and "never a pass" in last, last
    data = __import__("json").loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    (rate,) = [c for c in data["claims"] if c["id"].startswith("F.rate_law")]
    assert rate["verdict"] == "inconclusive" and not rate["passed"] and "undecided" in rate["evidence"]


def test_verify_last_line_names_a_link_with_no_derivable_law_as_undecided_not_as_unsettled(tmp_path, capsys):
    """A polynomial prefactor: no law is derived; the rate, loss and value laws are undecided for that reason (not
    'not settled')."""
    from proofs_check.cli import main
    models = tmp_path / "pe.py"
    models.write_text("import sympy as sp\nimport softpolar\nx = sp.symbols('x', real=True)\n"
                      "PE = softpolar.Link('poly-exp-nolaw', h=(1 + x**2) * sp.exp(x))\n", encoding="utf-8")
    code = main(["verify", "--models", str(models), "--link", "poly-exp-nolaw", "--loss", "logistic",
                 "--out", str(tmp_path / "r")])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 1 and "3 undecided: 3 with no derivable law" in last and "not settled" not in last, last


def test_verify_last_line_names_the_horizon_each_undecided_check_reached():
    """The summary counts an unsettled check at the horizon it reached (OPT.ADAM.RATE stops at t = 1e300 whatever
    --max-log-t says), not at --max-log-t; a check that states no horizon of its own is counted at the option's."""
    from types import SimpleNamespace as NS

    from proofs_check.report import not_settled_text
    ctx = NS(max_log10_t=10000)
    at = lambda h: NS(outcome=NS(details={} if h is None else {"horizon_log10_t": h}))
    assert not_settled_text([at(300), at(300)], ctx) == "2 not settled by t = 1e300"
    assert "10000" not in not_settled_text([at(300)], ctx)
    assert not_settled_text([at(300), at(None)], ctx) == ("1 not settled by t = 1e300, "
                                                           "1 not settled within --max-log-t 10000")
    assert not_settled_text([], ctx) == ""
