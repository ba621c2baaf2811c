r"""Fuzz the public Python API with hostile arguments.

Contract: on bad input every public function raises :class:`theorems.InvalidArgument` (or, for an
integration that cannot finish, :class:`numerics.IntegrationError`) and nothing else: no
``TypeError``, ``OverflowError``, ``MemoryError``, ``IndexError``, ``RecursionError``... A call
that succeeds must return finite, well-formed results. :func:`numerics.check_certificate` never
raises on bad content. Valid calls are kept short (``max_steps``, small ``t_end``).

Example counts follow the Hypothesis profile (see ``tests/fuzz_strategies.py``).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from numerics import IntegrationError
from theorems import InvalidArgument
from theorems.errors import show

from .fuzz_strategies import GOOD, examples

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: values of any type a caller may pass by mistake
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**400, max_value=10**400),
    st.sampled_from([10**5000, -10**5000, 2**32, 2**63, np.int64(7), np.int64(-3), np.uint8(5), np.float32(1e-3),
                     np.float64("nan"), np.bool_(True), 1 + 2j, np.complex128(1j), float("inf"), -0.0, 5e-324,
                     1e308, "", "0.5", "1e400", "nan", "x" * 300, "\x00", b"1", [], [[]], [1, 2], {}, {"a": 1},
                     (1,), set(), object(), np.array([]), np.array([[1.0]]), np.array([1 + 1j]),
                     np.array(["a"]), np.array([np.nan]), np.zeros((0, 3)), slice(1), math.pi]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
)


def allowed(fn, *args, **kw):
    """Call ``fn``; the only exceptions allowed are InvalidArgument and IntegrationError."""
    try:
        return fn(*args, **kw)
    except (InvalidArgument, IntegrationError):
        return None
    except Exception as exc:  # the contract under test
        raise AssertionError(f"{fn.__name__}({show(args, 200)}, {show(kw, 200)}) raised "
                             f"{type(exc).__name__}: {exc!s:.200}") from exc


def _finite_traj(traj):
    if traj is None:
        return
    for L in traj.loss:
        assert math.isfinite(float(L))


@settings(max_examples=examples(60), **_SETTINGS)
@given(field=st.sampled_from(["loss", "link", "V", "a", "target", "X"]), value=HOSTILE)
def test_problem_fields(field, value):
    from numerics import Problem

    kw = {**GOOD, field: value}
    p = allowed(Problem, **kw)
    if p is not None:
        assert np.isfinite(p.V).all() and np.isfinite(p.a).all()
    allowed(Problem.from_json, kw)


@settings(max_examples=examples(40), **_SETTINGS)
@given(data=st.data())
def test_from_seed(data):
    from numerics import Problem

    kw = {"d": 2, "n": 3, "loss": "logistic"}
    for name in data.draw(st.lists(st.sampled_from(["seed", "d", "n", "loss", "link", "v_scale", "a0", "a_scale",
                                                    "kappa", "m"]), min_size=1, max_size=3, unique=True)):
        kw[name] = data.draw(HOSTILE)
    allowed(Problem.from_seed, kw.pop("seed", 1), **kw)


@settings(max_examples=examples(40), **_SETTINGS)
@given(data=st.data())
def test_simulate_arguments(data):
    from numerics import Problem, simulate

    p = Problem.from_json(GOOD)
    kw = {"t_end": 0.5, "backend": data.draw(st.sampled_from(["numpy", "mpmath"])), "max_steps": 300}
    for name in data.draw(st.lists(st.sampled_from(["t_end", "times", "backend", "dps", "rtol", "atol", "device",
                                                    "clock", "max_steps", "progress", "freeze"]),
                                   min_size=1, max_size=3, unique=True)):
        kw[name] = data.draw(HOSTILE)
    if isinstance(kw.get("max_steps"), int) and not isinstance(kw["max_steps"], bool) \
            and kw["max_steps"] > 300:
        kw["max_steps"] = 300  # valid, and short
    if isinstance(kw.get("dps"), int) and not isinstance(kw["dps"], bool) and kw["dps"] > 30:
        kw["dps"] = 30
    _finite_traj(allowed(simulate, p, **kw))


@settings(max_examples=examples(30), **_SETTINGS)
@given(t_end=HOSTILE, times=HOSTILE)
def test_prepare_times(t_end, times):
    from numerics import prepare_times

    out = allowed(prepare_times, t_end, times)
    if out is not None:
        assert all(isinstance(s, str) for s in out)


@settings(max_examples=examples(40), **_SETTINGS)
@given(data=st.data())
def test_gradient_descent_arguments(data):
    import warnings

    from numerics import Problem, gradient_descent
    from numerics import DescentWarning

    p = Problem.from_json(GOOD)
    kw = {"lr": 0.1, "steps": 20}
    for name in data.draw(st.lists(st.sampled_from(["lr", "steps", "record", "backend", "dps", "max_steps"]),
                                   min_size=1, max_size=3, unique=True)):
        kw[name] = data.draw(HOSTILE)
    if isinstance(kw.get("steps"), (int, np.integer)) and not isinstance(kw["steps"], bool) and kw["steps"] > 200:
        kw["max_steps"] = 200  # a valid but huge step count must be refused, not run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DescentWarning)  # a documented warning, not a failure
        allowed(gradient_descent, p, **kw)


@settings(max_examples=examples(30), **_SETTINGS)
@given(data=st.data())
def test_integrate_batch_arguments(data):
    pytest.importorskip("torch")
    from numerics import integrate_batch

    kw = {"V0": np.array([GOOD["V"]]), "a0": np.array([GOOD["a"]]), "target": np.array([GOOD["target"]]),
          "loss": "logistic", "t_end": 0.5, "max_steps": 300}
    for name in data.draw(st.lists(st.sampled_from(["V0", "a0", "target", "loss", "link", "X", "t_end", "times",
                                                    "rtol", "atol", "dtype", "clock", "method", "max_steps"]),
                                   min_size=1, max_size=2, unique=True)):
        kw[name] = data.draw(HOSTILE)
    if isinstance(kw.get("max_steps"), int) and not isinstance(kw["max_steps"], bool) and kw["max_steps"] > 300:
        kw["max_steps"] = 300
    allowed(integrate_batch, **kw)


@settings(max_examples=examples(20), **_SETTINGS)
@given(data=st.data())
def test_reduced_logistic_arguments(data):
    from numerics import reduced_logistic

    kw = {"u0": [0.1, 0.2], "a0": [0.0, 0.1], "b": 1.0, "t_end": 1.0, "max_steps": 300,
          "backend": data.draw(st.sampled_from(["numpy", "mpmath"]))}
    for name in data.draw(st.lists(st.sampled_from(["u0", "a0", "b", "t_end", "tau_end", "times", "dps",
                                                    "link", "rtol", "atol", "max_steps"]),
                                   min_size=1, max_size=2, unique=True)):
        kw[name] = data.draw(HOSTILE)
    if isinstance(kw.get("max_steps"), int) and not isinstance(kw["max_steps"], bool) and kw["max_steps"] > 300:
        kw["max_steps"] = 300
    if isinstance(kw.get("dps"), int) and not isinstance(kw["dps"], bool) and kw["dps"] > 30:
        kw["dps"] = 30
    allowed(reduced_logistic, **kw)


@settings(max_examples=examples(40), **_SETTINGS)
@given(field=st.sampled_from(["loss", "link", "V", "a", "target", "X", "zz"]), value=HOSTILE)
def test_certify_inputs_and_never_raising_check(field, value):
    from numerics import check_certificate
    from numerics import parse_init

    allowed(parse_init, {**GOOD, field: value})
    res = check_certificate({"format": "softpolar-certificate", "version": 2, "status": "certified",
                             "init": {**GOOD, field: value}, field: value})
    assert not res.ok


@settings(max_examples=examples(20), **_SETTINGS)
@given(n=HOSTILE, i=HOSTILE, j=HOSTILE)
def test_gap_identities_arguments(n, i, j):
    from theorems import check_gap_identities

    small = all(isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10 for v in (n, i, j))
    if not small:  # valid sizes prove symbolically (seconds): only the refusals are fuzzed here
        allowed(check_gap_identities, n, i, j)
    elif i == j or not (0 <= i < n and 0 <= j < n and n >= 2):
        with pytest.raises(InvalidArgument):
            check_gap_identities(n, i, j)


@pytest.mark.parametrize("steps", [10**5000, 2**63], ids=["10**5000", "2**63"])
def test_gradient_descent_refuses_a_step_count_beyond_int64_in_one_error(steps):
    # was: ValueError "Exceeds the limit (4300 digits) for integer string conversion" (found by the fuzz above)
    import numpy as np

    import softpolar
    from numerics import Problem
    p = Problem(loss="logistic", V=np.array([[0.1, -0.2, 0.05], [0.3, 0.1, -0.1]]), a=np.array([0.3, 0.1, 0.0]),
                target=np.array([0.6, 0.8]))
    with pytest.raises(InvalidArgument, match="steps=.* is not allowed; expected an integer in 0..9223372036854775807"):
        softpolar.gradient_descent(p, steps=steps, lr=0.1)
