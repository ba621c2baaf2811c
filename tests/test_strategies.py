"""The domain strategies deliver what their docstrings promise, and validate their arguments."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

from numerics import InvalidArgument
from numerics.strategies import (
    DEFAULT_LOGIT_MAX_ABS,
    flow_problems,
    logits,
    probability_targets,
    regression_designs,
    simplex_points,
    sizes,
    target_directions,
    value_matrices,
)

EPS = np.finfo(np.float64).eps


def test_numerics_does_not_import_hypothesis():
    code = "import sys, numerics; print('hypothesis' in sys.modules, 'numerics.strategies' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@given(sizes())
def test_sizes_start_at_two(nd):
    n, d = nd
    assert 2 <= n <= 6 and 2 <= d <= 6


@given(st.data(), st.integers(2, 8))
def test_simplex_points_are_in_the_open_simplex(data, n):
    s = data.draw(simplex_points(n))
    assert s.shape == (n,) and s.dtype == np.float64
    assert np.all(s > 0)
    assert abs(np.sum(s) - 1.0) <= n * EPS


@given(st.data(), st.integers(2, 8), st.floats(0.0, 0.1))
def test_simplex_points_respect_min_entry(data, n, min_entry):
    s = data.draw(simplex_points(n, min_entry=min_entry))
    assert np.all(s >= min_entry * (1 - 4 * EPS))


@given(st.data(), st.integers(2, 8))
def test_logits_default_box_reaches_saturation_scale(data, n):
    a = data.draw(logits(n))
    assert a.shape == (n,) and np.all(np.isfinite(a)) and np.max(np.abs(a)) <= DEFAULT_LOGIT_MAX_ABS


@given(st.data(), st.integers(2, 8), st.floats(0.0, 50.0), st.floats(0.0, 100.0))
def test_logits_have_controlled_gaps(data, n, min_gap, extra):
    max_gap = min_gap + extra
    a = data.draw(logits(n, min_gap=min_gap, max_gap=max_gap))
    gaps = np.diff(np.sort(a))
    slack = 8 * EPS * DEFAULT_LOGIT_MAX_ABS  # rounding of the cumulative sum (docstring: a few ulps of M)
    assert np.all(np.abs(a) <= DEFAULT_LOGIT_MAX_ABS)
    assert np.all(gaps >= min_gap - slack) and np.all(gaps <= max_gap + slack)


def test_logits_find_extreme_values():
    """The default strategy does generate saturating logits (|a| near 1e3), not only moderate ones."""
    seen = []

    @given(logits(4))
    def record(a):
        seen.append(float(np.max(np.abs(a))))

    record()
    assert max(seen) >= 745  # beyond float64 exp underflow of a gap


@given(st.data(), st.integers(1, 5), st.floats(0.5, 4.0))
def test_target_directions_have_the_requested_norm(data, d, norm):
    w = data.draw(target_directions(d, min_norm=norm, max_norm=norm))
    assert abs(np.linalg.norm(w) - norm) <= 4 * EPS * norm


@given(st.data(), st.integers(1, 5), st.integers(2, 6), st.floats(0.0, 1.0))
def test_value_matrices_with_margin_and_winner(data, d, n, min_gap):
    w = data.draw(target_directions(d, max_norm=3.0))
    winner = data.draw(st.integers(0, n - 1))
    V = data.draw(value_matrices(d, n, direction=w, min_gap=min_gap, winner=winner))
    u = V.T @ w
    slack = 64 * EPS * 10.0 * np.linalg.norm(w) * (1 + d)  # rounding of w u^T/b + P R, then V^T w
    assert np.max(u) - u[winner] <= slack
    assert np.all(np.diff(np.sort(u)) >= min_gap - slack)
    assert np.all(np.abs(u) <= 10.0 * np.linalg.norm(w) + slack)


@given(st.data(), st.integers(2, 5), st.integers(0, 3), st.floats(1.0, 100.0))
def test_regression_designs_have_the_condition_number(data, d, extra_rows, kappa):
    X = data.draw(regression_designs(d + extra_rows, d, condition_number=kappa, max_singular_value=2.0))
    sv = np.linalg.svd(X, compute_uv=False)
    assert X.shape == (d + extra_rows, d)
    assert abs(sv[0] - 2.0) <= 1e-13 * 2.0 * d
    assert abs(sv[0] / sv[-1] - kappa) <= 1e-12 * kappa * kappa * d


@given(st.data(), st.integers(2, 6), st.floats(0.1, 10.0))
def test_probability_targets(data, k, total):
    p = data.draw(probability_targets(k, total=total))
    assert np.all(p > 0) and abs(np.sum(p) - total) <= 4 * k * EPS * total


@given(flow_problems())
def test_flow_problems_have_consistent_shapes(problem):
    V, a, target, X = problem.arrays()
    assert V.shape == (problem.d, problem.n) and a.shape == (problem.n,)
    assert target.shape == (problem.d,) and X is None
    if problem.loss == "kl":
        assert np.all(target > 0)


@given(flow_problems("square", condition_number=3.0))
def test_flow_problems_with_design(problem):
    assert problem.X is not None and problem.X.shape == (problem.d, problem.d)


@pytest.mark.parametrize("build, argument", [
    (lambda: sizes(min_n=1), "min_n"),
    (lambda: sizes(min_n=3, max_n=2), "max_n"),
    (lambda: simplex_points(1), "n"),
    (lambda: simplex_points(4, min_entry=0.25), "min_entry"),
    (lambda: logits(3, max_abs=float("inf")), "max_abs"),
    (lambda: logits(3, min_gap=-1.0), "min_gap"),
    (lambda: logits(3, min_gap=2.0, max_gap=1.0), "max_gap"),
    (lambda: logits(5, max_abs=1.0, min_gap=1.0), "min_gap"),
    (lambda: target_directions(2, min_norm=0.0), "min_norm"),
    (lambda: target_directions(2, min_norm=2.0, max_norm=1.0), "max_norm"),
    (lambda: value_matrices(2, 3, min_gap=0.5), "min_gap"),
    (lambda: value_matrices(2, 3, direction=[0.0, 0.0]), "direction"),
    (lambda: value_matrices(2, 3, direction=[1.0, 0.0, 0.0]), "direction"),
    (lambda: value_matrices(2, 3, direction=[1.0, 0.0], winner=3), "winner"),
    (lambda: regression_designs(2, 3), "m"),
    (lambda: regression_designs(3, 3, condition_number=0.5), "condition_number"),
    (lambda: regression_designs(1, 1, condition_number=2.0), "condition_number"),
    (lambda: probability_targets(3, total=-1.0), "total"),
    (lambda: flow_problems("hinge"), "loss"),
    (lambda: flow_problems(()), "losses"),
])
def test_bad_arguments_raise_invalid_argument_when_built(build, argument):
    with pytest.raises(InvalidArgument, match=argument):
        build()
