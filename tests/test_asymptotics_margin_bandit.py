"""MARGIN and BANDIT through derived laws (issue 35): the law from theorems.asymptotics, the settled check of
numerics.integrate.settle, a 1 % near-miss control that is refused and a witness where the near miss holds.

Through the public registry and the public theorems.asymptotics door only.
"""
from __future__ import annotations

import math

import sympy as sp

from proofs_check import Context, registry
from theorems import Link
from theorems.asymptotics import LAWS, asymptotics, bandit_law

x = sp.Symbol("x", real=True)
n, u1, G = sp.symbols("n u1 G")


def test_bandit_law_is_derived_and_listed():
    entries = {e["quantity"]: e for e in asymptotics("logistic", "softmax")}
    assert bandit_law in LAWS
    e = next(v for k, v in entries.items() if "bandit" in k)
    assert e["clock"] == "t" and sp.sympify(e["exponent"]) == 1
    # the paper's constant, stated independently: (1 + e^{u1}) (1/n) sum 1/Delta_j
    assert sp.simplify(sp.sympify(e["constant"]) - (1 + sp.exp(u1)) * G / n) == 0
    assert set(e["symbols"]) == {"u1", "G"}
    # a temperature T scales it by T^2 (lambda = 1/T), a margin loss e^{-z} gives e^{u1} G/n
    T3 = bandit_law("logistic", Link("bandit-T3-test", h=sp.exp(x / 3)))
    assert sp.simplify(sp.sympify(T3.to_json()["constant"]) - 9 * (1 + sp.exp(u1)) * G / n) == 0
    # where a step fails: the entry names it, no constant
    for loss, link in (("logistic", "softmax1"), ("square", "softmax"), ("logistic", "sigmoid")):
        j = bandit_law(loss, link).to_json()
        assert j["constant"] is None and j["no_law"]


def test_bandit_constant_at_an_instance():
    law = bandit_law("logistic", "softmax")
    u = [1.0, 0.3, -0.5, 0.1]
    want = (1 + math.e) * (1 / 0.7 + 1 / 1.5 + 1 / 0.9) / 4
    assert abs(law.constant_for(4, u) - want) < 1e-12


def test_bandit_settled_control_refused_witness_passes():
    claim, ctx = registry()["BANDIT"], Context()
    out = claim.check(ctx)
    assert out.verdict == "verified", out.evidence
    for row in out.details["settled"]:
        assert row["verdict"] == "verified" and row["horizon_log10_t"] >= 300
        assert abs(row["ratio_extrapolated"] - 1) < 1e-8 and abs(row["exponent_local"] - 1) < 1e-8
    ctl = claim.control.run(ctx)
    assert ctl.verdict == "refuted"
    assert "1 %" in claim.control.description
    # the near miss is refused for the right reason: the settled ratio is 1/1.01, not a drift
    assert all(abs(r["ratio_extrapolated"] * 1.01 - 1) < 1e-8 and r["verdict"] == "refuted"
               for r in ctl.details["settled"])
    wit = claim.witness.run(ctx)
    assert wit.verdict == "verified", wit.evidence
    assert wit.details["settled"][0]["link"] == "softmax-T-sqrt1.01"


def test_bandit_undecided_is_not_a_pass():
    """With the bound below the second horizon nothing settles: inconclusive (undecided), never verified."""
    claim, ctx = registry()["BANDIT"], Context(max_log10_t=100)
    out = claim.check(ctx)
    assert out.verdict == "inconclusive" and "undecided (not a pass)" in out.reason


# ---- MARGIN: exponent derived, constant not (said so, not faked) ------------------------------------------------
def test_margin_law_derives_the_exponent_and_says_why_no_constant():
    from theorems.asymptotics import margin_law

    j = margin_law("logistic", "softmax").to_json()
    assert j["exponent"] is None and j["constant"] is None  # no law of the form C (log t)^-p is claimed
    assert "constant" in j["no_law"] and "transient" in j["no_law"]
    assert sp.simplify(sp.sympify(j["exponent_derived"], locals={"n": n}) - 4 / n) == 0
    assert "softmax1" not in j["no_law"]
    # off the rate law's path the derivation stops at the same step as the rate law
    assert "c = 1" in margin_law("logistic", "softmax1").to_json()["no_law"]


def test_margin_check_reports_the_derived_exponent_next_to_the_measured_one():
    claim, ctx = registry()["MARGIN"], Context()
    out = claim.check(ctx)
    assert out.verdict == "verified"
    assert out.details["law"]["exponent_derived"] == "4/n"
    for row in out.details["rate_exponents"]:
        assert row["exponent_derived"] == 4 / row["n"]
        assert 0.5 * row["exponent_derived"] < row["exponent_measured"] < 1.5 * row["exponent_derived"]
    assert claim.control.run(ctx).verdict == "refuted"


# ---- SINK2: the escape law and its derived next order ----------------------------------------------------------
def test_escape_law_is_derived_with_its_next_order():
    from theorems.asymptotics import sink_escape_law

    b = sp.Symbol("b", positive=True)
    j = sink_escape_law("logistic", "softmax1").to_json()
    assert sp.sympify(j["constant"]) == 1 and j["clock"] == "u1(0)^2/(2 b)"
    assert sp.simplify(sp.sympify(j["next_order"], locals={"b": b}) - sp.log(sp.pi / (2 * b)) / 2) == 0
    assert "gamma" in j["not_derived"]
    # a sink at temperature 2: c = lambda^2 = 1/4, the next order shifted by log 2
    K = Link("softmax1-T2-escape-test", h=sp.exp(x / 2), c=1)
    jT = sink_escape_law("logistic", K).to_json()
    assert sp.sympify(jT["constant"]) == sp.Rational(1, 4)
    assert sp.simplify(sp.sympify(jT["next_order"], locals={"b": b}) - sp.log(sp.pi / (2 * b)) / 2 - sp.log(2)) == 0
    assert sink_escape_law("logistic", "softmax").to_json()["no_law"].startswith("sink")


def test_sink2_next_order_holds_and_its_near_miss_is_refused():
    claim, ctx = registry()["SINK2"], Context()
    out = claim.check(ctx)
    assert out.verdict == "verified"
    rows = out.details["next_order"]
    assert len(rows) >= 4
    assert all(abs(r["residual"]) <= 0.003 for r in rows)
    # the same comparison refuses the constant sqrt(pi/(2b)) off by 1 %
    assert all(abs(r["residual"] - math.log(1.01)) > 0.003 for r in rows)
    assert out.details["next_order_near_miss_refused"] is True


def test_derive_lists_the_new_laws(capsys):
    import json

    from proofs_check.cli import main
    assert main(["derive", "--asymptotics", "--json", "--link", "softmax1"]) == 0
    laws = json.loads(capsys.readouterr().out)["asymptotics"]
    esc = next(e for e in laws if e["quantity"].startswith("log tau*"))
    assert esc["constant"] == "1" and sp.sympify(esc["exponent"]) == -1
    assert any(e["quantity"].startswith("1 - cos") for e in laws)


def test_sink2_witness_holds_the_next_orders_near_miss():
    claim, ctx = registry()["SINK2"], Context()
    wit = claim.witness.run(ctx)
    assert wit.verdict == "verified", wit.evidence
    rows = wit.details["next_order_witness"]
    assert len(rows) >= 4 and all(abs(r["b"] * 1.01**2 - 0.1) < 1e-12 for r in rows)
    assert all(abs(r["residual"]) <= 0.003 for r in rows)
