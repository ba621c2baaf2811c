"""Shared fixtures: global-state reset, seeds, devices and dtypes, Hypothesis profiles, report header.

Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE`` (default ``ci`` when ``CI`` is
set, else ``dev``):

* ``dev``: 20 examples, random, with the local example database (fast iteration);
* ``ci``: derived from Hypothesis's built-in ``ci`` profile (derandomized, no
  database, no deadline, failure blobs printed) with 40 examples, so a CI run is
  reproducible bit for bit;
* ``thorough``: 500 examples, random, for ``-m "slow or not slow"`` runs on demand.

``deadline=None`` everywhere: examples touch SymPy and torch, whose first calls
(lambdify, kernel caches) are slow and would trip a deadline.

Torch properties take the ``device`` fixture (``cpu``, and ``cuda`` marked ``gpu``,
auto-skipped without CUDA) and the ``dtype`` fixture (``float64``; ``float32`` added
by ``SOFTPOLAR_TEST_FLOAT32=1``, with the tolerances derived in ``tests/helpers.py``).
"""
from __future__ import annotations

import os

import mpmath
import numpy as np
import pytest

from .helpers import DTYPES

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    settings = None

if settings is not None:
    settings.register_profile("dev", max_examples=20, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
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


#: torch devices for the torch properties; ``cuda`` is marked ``gpu`` (auto-skipped below).
DEVICES = ("cpu", pytest.param("cuda", marks=pytest.mark.gpu))


@pytest.fixture(scope="session", params=DEVICES)
def device(request) -> str:
    """Torch device name: ``cpu`` or ``cuda``."""
    return request.param


@pytest.fixture(scope="session", params=DTYPES)
def dtype(request) -> str:
    """Torch dtype name: ``float64`` (default) or ``float32`` (opt-in, see ``helpers.DTYPES``)."""
    return request.param


@pytest.fixture(autouse=True)
def _reset_global_state():
    """Restore mpmath precision, numpy error state and torch defaults (dtype, threads, TF32) after each test."""
    dps = mpmath.mp.dps
    err = np.geterr()
    try:
        import torch
        dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
        tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    except ImportError:  # pragma: no cover
        torch = None
    yield
    mpmath.mp.dps = dps
    np.seterr(**err)
    if torch is not None:
        torch.set_default_dtype(dtype)
        torch.set_num_threads(threads)
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32


@pytest.fixture(scope="module")
def dev():
    """The project's Coq development, compiled (``theorems.coq.build()``); skips where coqc is not installed."""
    from theorems import coq

    if coq.coqc_path() is None:
        pytest.skip(f"coqc not installed ({coq.APT_COMMAND})")
    res = coq.build()
    assert res.ok
    return res


def pytest_report_header(config):
    import platform

    import sympy
    lines = [
        f"softpolar versions: python {platform.python_version()}, sympy {sympy.__version__}, "
        f"mpmath {mpmath.__version__} (backend {mpmath.libmp.BACKEND}), numpy {np.__version__}",
    ]
    try:
        import torch
        cuda = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "not available"
        lines.append(f"torch {torch.__version__}, threads {torch.get_num_threads()}, cuda: {cuda}")
    except ImportError:  # pragma: no cover
        lines.append("torch: not installed")
    if settings is not None:
        import hypothesis
        lines.append(f"hypothesis {hypothesis.__version__}, profile {settings._current_profile!r} "
                     f"(max_examples={settings().max_examples}; set HYPOTHESIS_PROFILE=dev|ci|thorough)")
    lines.append(f"torch property dtypes: {', '.join(DTYPES)} (SOFTPOLAR_TEST_FLOAT32=1 adds float32)")
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
