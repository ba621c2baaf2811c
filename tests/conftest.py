"""Shared fixtures: global-state reset, seeds, Hypothesis profiles, report header."""
from __future__ import annotations

import os

import mpmath
import numpy as np
import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    settings = None

if settings is not None:
    settings.register_profile("dev", max_examples=20, deadline=None)
    settings.register_profile(
        "ci", parent=settings.get_profile("ci"), max_examples=40, deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("thorough", max_examples=500, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    _profile = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(_profile)

#: default seed for tests; SOFTPOLAR_TEST_SEEDS="0-9" sweeps a range.
DEFAULT_SEED = 20260306


def _seeds():
    spec = os.environ.get("SOFTPOLAR_TEST_SEEDS")
    if not spec:
        return [DEFAULT_SEED]
    if "-" in spec:
        lo, hi = spec.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in spec.split(",")]


@pytest.fixture(params=_seeds())
def seed(request) -> int:
    return request.param


@pytest.fixture
def rng(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _reset_global_state():
    """Restore mpmath precision, numpy error state and torch defaults after each test."""
    dps = mpmath.mp.dps
    err = np.geterr()
    try:
        import torch
        dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
    except ImportError:  # pragma: no cover
        torch = None
    yield
    mpmath.mp.dps = dps
    np.seterr(**err)
    if torch is not None:
        torch.set_default_dtype(dtype)
        torch.set_num_threads(threads)


def pytest_report_header(config):
    import sympy
    lines = [
        f"softpolar versions: sympy {sympy.__version__}, mpmath {mpmath.__version__} "
        f"(backend {mpmath.libmp.BACKEND}), numpy {np.__version__}",
    ]
    try:
        import torch
        lines.append(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
                     f"cuda available: {torch.cuda.is_available()}")
    except ImportError:  # pragma: no cover
        lines.append("torch: not installed")
    if settings is not None:
        lines.append(f"hypothesis profile: {settings._current_profile}")
    lines.append(f"seeds: {_seeds()} (set SOFTPOLAR_TEST_SEEDS='0-9' to sweep)")
    return lines


def pytest_collection_modifyitems(config, items):
    try:
        import torch
        has_cuda = torch.cuda.is_available()
    except ImportError:  # pragma: no cover
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs CUDA (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
