"""The loss and value-norm laws derived (theorems.asymptotics), the settled check generalized to a measured
quantity (numerics.integrate.settle.settle_law), its integration cache, and the paper's instances through them."""
from __future__ import annotations

import numpy as np
import sympy as sp

import numerics
from numerics.integrate import settle
from theorems import Link
from theorems.asymptotics import rate_law

x = sp.Symbol("x", real=True)
z = sp.Symbol("z", real=True)
n, b = sp.symbols("n b", positive=True)


def _problem(link, loss="logistic", seed=1, nn=3):
    rng = np.random.default_rng(seed)
    return numerics.Problem(loss=loss, link=link, V=rng.normal(size=(3, nn)), a=np.zeros(nn),
                            target=rng.normal(size=3))


def test_a_check_and_its_near_miss_share_one_integration_per_horizon_with_the_same_verdicts(monkeypatch):
    """The comparison's constant never enters the integration: the control (x 1.01) reads the check's runs."""
    K = Link("softmax-T2-cache", h=sp.exp(x / 2))
    P = _problem(K)
    C = rate_law("logistic", K).constant_at(3, float(P.target @ P.target))
    h = sp.lambdify(x, K.h(x), "mpmath")
    fresh = [settle.settle_rate(P, exponent=2.0, constant=C * f, h_mp=h, max_log10_t=1000) for f in (1.0, 1.01)]
    calls = []
    real = numerics.simulate

    def counting(*args, **kw):
        calls.append(kw["t_end"])
        return real(*args, **kw)
    monkeypatch.setattr(settle, "simulate", counting)
    runs = {}
    cached = [settle.settle_rate(P, exponent=2.0, constant=C * f, h_mp=h, max_log10_t=1000, runs=runs)
              for f in (1.0, 1.01)]
    assert [r["verdict"] for r in cached] == [r["verdict"] for r in fresh] == ["verified", "refuted"]
    assert [r["history"] for r in cached] == [r["history"] for r in fresh]
    assert len(calls) == len(set(calls)) == len(runs) == len(cached[0]["history"])  # each horizon integrated once
