"""Notebook interface of integration results: repr, to_numpy / to_dict / to_dataframe, plot,
one interface for :class:`Trajectory` and :class:`BatchTrajectory`, and ``numerics.__all__``."""
import json

import mpmath
import numpy as np
import pytest

import numerics
from numerics import InvalidArgument, Problem, Trajectory, simulate


@pytest.fixture(scope="module")
def mp_traj():
    return simulate(Problem.preset("logistic-toy"), t_end=1e100, backend="mpmath", dps=20)


@pytest.fixture(scope="module")
def np_traj():
    return simulate(Problem.from_seed(0, d=2, n=3, loss="square"), t_end=100, backend="numpy")


def test_repr_is_short_and_says_what_it_is(mp_traj, np_traj):
    for tr in (mp_traj, np_traj):
        r = repr(tr)
        assert len(r) < 300, r  # a repr once printed every array: 11,444 characters at n = d = 2
        assert r.startswith("Trajectory(") and f"({len(tr.times)} times)" in r
        assert f"steps={tr.n_steps}" in r and f"argmax={tr.argmax[-1]}" in r
    assert "mpmath dps=20" in repr(mp_traj) and "clock=tau" in repr(mp_traj)
    assert "frozen at t=" in repr(np_traj)


def test_to_numpy_shapes_dtypes_and_values(mp_traj):
    arr = mp_traj.to_numpy()
    K, n, d = len(mp_traj.times), mp_traj.problem.n, mp_traj.problem.d
    assert arr["times"].shape == (K,) and arr["a"].shape == (K, n) and arr["V"].shape == (K, d, n)
    assert arr["loss"].dtype == np.float64 and arr["argmax"].dtype == np.int64
    assert arr["tau"].shape == (K,)
    assert arr["entropy"][-1] == float(mp_traj.entropy[-1])
    exact = mp_traj.to_numpy(dtype=object)
    assert isinstance(exact["loss"][-1], mpmath.mpf) and exact["loss"][-1] == mp_traj.loss[-1]
    # arrays are copies: editing them leaves the trajectory alone
    arr["a"][0, 0] = 123.0
    assert float(mp_traj.a[0][0]) != 123.0


def test_to_dict_is_the_json_layout(mp_traj):
    d = mp_traj.to_dict()
    assert d == mp_traj.to_json_dict(full_precision=True)
    assert isinstance(d["loss"][-1], str) and len(d["loss"][-1].replace("-", "").split("e")[0]) >= 15
    assert isinstance(mp_traj.to_dict(full_precision=False)["loss"][-1], float)
    json.dumps(d)


def test_to_dataframe_long_table(np_traj):
    pd = pytest.importorskip("pandas")
    df = np_traj.to_dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == len(np_traj.times)
    assert list(df.columns[:6]) == ["t", "loss", "entropy", "max_weight", "one_minus_max", "argmax"]
    assert {"phi0", "phi2", "a0", "a2"} <= set(df.columns) and "w1" not in df.columns
    assert df["entropy"].iloc[-1] == np_traj.entropy[-1]


def test_to_dataframe_without_pandas_says_how_to_get_it(np_traj, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ModuleNotFoundError
    with pytest.raises(ModuleNotFoundError, match="pip install pandas"):
        np_traj.to_dataframe()


def test_plot_returns_a_figure_and_writes_a_png(np_traj, tmp_path):
    from matplotlib.figure import Figure
    png = tmp_path / "traj.png"
    fig = np_traj.plot(png)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(fig.axes[0].lines) == 3  # one line per weight
    with pytest.raises(InvalidArgument, match="element"):
        np_traj.plot(element=0)


def test_plot_needs_a_positive_time():
    tr = simulate(Problem.preset("logistic-toy"), t_end=1, times=[0], backend="numpy")
    with pytest.raises(InvalidArgument, match="t > 0"):
        tr.plot()


def test_numerics_all_holds_the_public_api_only():
    public = set(numerics.__all__)
    for name in ("simulate", "integrate_batch", "Problem", "Trajectory", "BatchTrajectory", "certify",
                 "IntegrationError", "InvalidArgument", "flow_rhs", "plot_trajectory", "sink_atlas"):
        assert name in public and hasattr(numerics, name)
    for internal in ("write_json_atomic", "prepare_times", "check_apriori", "parse_init", "BACKENDS",
                     "family_init", "near_tie_init"):
        assert internal not in public, internal
        assert hasattr(numerics, internal)  # still importable by the layers above


# -- the batch result ---------------------------------------------------------------------

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(0)
    V, a, w = rng.normal(size=(3, 2, 4)) * 0.1, np.zeros((3, 4)), rng.normal(size=(3, 2))
    return numerics.integrate_batch(V, a, w, loss="logistic", t_end=1e3)


def test_batch_shares_the_trajectory_interface(batch, tmp_path):
    r = repr(batch)
    assert r.startswith("BatchTrajectory(B=3, n=4, d=2") and len(r) < 300
    arr = batch.to_numpy()
    K = len(batch.times)
    assert arr["V"].shape == (K, 3, 2, 4) and arr["loss"].shape == (K, 3)
    assert arr["argmax"].dtype == np.int64
    json.dumps(batch.to_dict())
    fig = batch.plot(tmp_path / "b.png", element=2)
    assert len(fig.axes[1].lines) == 3 and "element 2 of 3" in fig.axes[0].get_title()
    with pytest.raises(InvalidArgument, match="element=3"):
        batch.plot(element=3)


def test_batch_keeps_dict_access(batch):
    assert batch["V"] is batch.V and "loss" in batch and set(batch) >= {"times", "n_steps", "clock"}
    assert dict(batch)["clock"] == batch.clock
    with pytest.raises(KeyError):
        batch["nope"]


def test_batch_element_is_a_trajectory_matching_the_arrays(batch):
    e = batch.element(1)
    assert isinstance(e, Trajectory)
    np.testing.assert_array_equal(e.to_numpy()["weights"], batch.to_numpy()["weights"][:, 1])
    assert e.n_steps == int(batch.n_steps[1])
    with pytest.raises(InvalidArgument, match="element=5"):
        batch.element(5)


def test_batch_dataframe(batch):
    pytest.importorskip("pandas")
    df = batch.to_dataframe()
    assert len(df) == 3 * len(batch.times) and list(df.columns[:2]) == ["t", "batch"]
    assert df["loss"].iloc[-1] == float(batch.loss[-1, 2])


def test_batch_repr_with_undefined_entropy(batch):
    """NaN entropies (weights off the simplex) print as 'undefined', without a warning."""
    import copy
    b = copy.copy(batch)
    b.entropy = batch.entropy * float("nan")
    assert "final entropy undefined" in repr(b)
