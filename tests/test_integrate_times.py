"""Review regressions: output times that a backend cannot resolve, tiny horizons, times compared at dps."""
from __future__ import annotations

import pytest

from numerics import InvalidArgument, Problem, simulate
from numerics.integrate import taylor as T
from numerics import prepare_times

needs_heyoka = pytest.mark.skipif(not T.available(), reason="heyoka (extra [taylor]) is not installed")
TOY = Problem.preset("logistic-toy")


@pytest.mark.parametrize("backend,kw", [("numpy", {}), ("torch", {}), pytest.param("taylor", {"dps": None},
                                                                                    marks=needs_heyoka)])
@pytest.mark.parametrize("t_end", ["1e-400", 5e-324])
def test_times_that_collapse_in_float64_are_refused(backend, kw, t_end):
    # taylor raised heyoka's "non-monotonic time grid"; numpy and torch returned 40 output times all 0.0
    if backend == "torch":
        pytest.importorskip("torch")
    with pytest.raises(InvalidArgument, match=f"backend='{backend}'.*resolution"):
        simulate(TOY, t_end=t_end, backend=backend, **kw)


def test_times_are_compared_exactly_not_at_15_digits():
    times = [1, "1.00000000000000000001", 2]
    assert prepare_times(2, times)[1] == "1.00000000000000000001"  # used to be "expected strictly increasing"
    tr = simulate(TOY, t_end=2, times=times, backend="mpmath", dps=50)
    assert tr.times[1] > tr.times[0]
    with pytest.raises(InvalidArgument, match=r"times\[0\] and times\[1\].*backend='mpmath'"):
        simulate(TOY, t_end=2, times=times, backend="mpmath", dps=5)  # 17 working digits cannot tell them apart
    with pytest.raises(InvalidArgument, match="backend='numpy'"):
        simulate(TOY, t_end=2, times=times, backend="numpy")
    with pytest.raises(InvalidArgument, match="strictly increasing"):  # control: equal times stay refused
        prepare_times(2, [1, "1.0", 2])


@pytest.mark.parametrize("kw", [dict(t_end="1e-400"), dict(t_end=2, times=[1, "1.00000001", 2], dtype="float32"),
                                dict(t_end=2, times=[1, "1.00000000000000000001", 2])])
def test_torch_refuses_times_that_collapse_in_its_dtype(kw):
    pytest.importorskip("torch")
    from numerics import integrate_batch
    # t_end=1e-400 used to give 40 output times all 0.0
    with pytest.raises(InvalidArgument, match="backend='torch'"):
        integrate_batch(Problem.from_seed(1, d=3, n=3, loss="square", a0="noise", v_scale=1.0), **kw)
