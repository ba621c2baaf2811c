"""The vertex family on a slow model (issue 35's class of bug): a temperature-5 softmax is still ~0.06 away from
its vertex at t = 1e40, where the fixed-horizon check refuted it; integrated on, it reaches the vertex."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from numerics import Problem
from numerics.integrate.settle_vertex import settle_vertex
from proofs_check import Context, run_claim
from proofs_check.claims import family_claims
from theorems import Link

x = sp.Symbol("x")
T5 = Link("softmax-T5-vertex", h=sp.exp(x / 5))


def _h_mp(link):
    return sp.lambdify(sp.Symbol("x", real=True), link.h(sp.Symbol("x", real=True)), "mpmath")


@pytest.fixture(scope="module")
def vertex_result():
    (claim,) = [c for c in family_claims(T5, "logistic") if c.id.startswith("F.vertex")]
    return run_claim(claim, Context())


def test_a_temperature_5_softmax_reaches_its_vertex_once_integrated_on(vertex_result):
    r = vertex_result
    assert r.outcome.verdict == "verified", r.outcome.evidence
    assert "integrated on to reach the vertex" in r.outcome.evidence       # the 1e40 horizon was not enough
    assert r.outcome.details["extended"] >= 1


def test_the_wrong_winner_is_still_refuted_on_the_same_path(vertex_result):
    assert vertex_result.control.verdict == "refuted", vertex_result.control.evidence


def _problem():
    return Problem(loss="logistic", link=T5, V=np.array([[1.0, 0.2, -0.3], [0.1, 0.4, 0.2]]), a=np.zeros(3),
                   target=np.array([1.0, 0.5]))


def test_settle_vertex_is_undecided_when_the_bound_is_too_short_never_a_pass():
    u0 = np.array([1.0, 0.5]) @ np.array([[1.0, 0.2, -0.3], [0.1, 0.4, 0.2]])
    r = settle_vertex(_problem(), winner=int(np.argmax(u0)), h_mp=_h_mp(T5), gap=1e-9, max_log10_t=100)
    assert r["verdict"] == "undecided" and "max_log10_t = 100" in r["why"], r


def test_settle_vertex_refutes_a_wrong_winner_with_the_time():
    u0 = np.array([1.0, 0.5]) @ np.array([[1.0, 0.2, -0.3], [0.1, 0.4, 0.2]])
    r = settle_vertex(_problem(), winner=int(np.argmin(u0)), h_mp=_h_mp(T5), gap=0.05, max_log10_t=100)
    assert r["verdict"] == "refuted" and r["failed"] == "winner" and r["why"].startswith("argmax"), r


def test_settle_vertex_verifies_the_right_winner():
    u0 = np.array([1.0, 0.5]) @ np.array([[1.0, 0.2, -0.3], [0.1, 0.4, 0.2]])
    r = settle_vertex(_problem(), winner=int(np.argmax(u0)), h_mp=_h_mp(T5), gap=0.05, max_log10_t=1000)
    assert r["verdict"] == "verified" and r["one_minus_max"] < 0.05, r
