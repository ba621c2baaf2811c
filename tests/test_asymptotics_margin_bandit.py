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
