"""Review regressions for the torch backend: float32's range and tolerance floor, collapsed times."""
from __future__ import annotations

import numpy as np
import pytest

from numerics import InvalidArgument, Problem

torch = pytest.importorskip("torch")
from numerics import integrate_batch
from numerics.integrate import default_rtol, rtol_floor


def _p():
    return Problem.from_seed(1, d=3, n=3, loss="square", a0="noise", v_scale=1.0)


def test_float32_refuses_a_time_beyond_its_range_naming_it():
    # it used to return the output time inf with no error
    with pytest.raises(InvalidArgument, match=r"times\[2\].*float32"):
        integrate_batch(_p(), dtype="float32", t_end=1e39, times=[1, 1e38, 1e39], rtol=1e-5)
    with pytest.raises(InvalidArgument, match=r"t_end.*float32"):
        integrate_batch(_p(), dtype="float32", t_end=1e39, rtol=1e-5)
    r = integrate_batch(_p(), dtype="float32", t_end=1e38, times=[1, 1e38], rtol=1e-5)  # control: in range
    assert bool(torch.isfinite(r["times"]).all())


def test_float32_refuses_a_state_beyond_its_range():
    V, a, w = np.ones((1, 2, 2)), np.array([[1e39, 0.0]]), np.ones((1, 2))
    with pytest.raises(InvalidArgument, match="a0 has entries beyond the range of float32"):
        integrate_batch(V, a, w, loss="square", t_end=1, dtype="float32")


def test_float32_default_rtol_is_reachable_and_a_smaller_one_is_refused():
    # the float64 default (1e-12) used to apply to float32 too: every run burned max_steps
    r = integrate_batch(_p(), dtype="float32", t_end=10, max_steps=2000)
    assert r.rtol == default_rtol(torch.float32) > rtol_floor(torch.float32) > float(torch.finfo(torch.float32).eps)
    assert int(r["n_steps"].max()) < 2000
    with pytest.raises(InvalidArgument, match=r"rtol=1e-12 is not allowed with backend='torch' and dtype=float32"):
        integrate_batch(_p(), dtype="float32", t_end=10, rtol=1e-12)
    assert integrate_batch(_p(), t_end=1, rtol=1e-12).rtol == 1e-12  # float64 keeps its default range
