"""torch backend: batched DOP853 / DOPRI5 against numpy, per-element adaptivity, failures."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from numerics import IntegrationError, InvalidArgument, Problem, integrate_batch, simulate

#: torch (CPU, float64) vs numpy: both are DOP853 at rtol=1e-12, so they agree to ~1e-12;
#: the issue asks for 1e-10 (relative to the largest state entry).
TORCH_VS_NP = 1e-10
TIMES = ["0", "1", "10", "100", "1000"]


def _batch(loss, B, seed):
    ps = [Problem.from_seed(seed + i, d=3, n=4, loss=loss, a0="noise", a_scale=0.3) for i in range(B)]
    return ps, (np.stack([p.V for p in ps]), np.stack([p.a for p in ps]),
                np.stack([p.target for p in ps]))


@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
def test_torch_batch_matches_numpy(loss):
    torch.set_num_threads(1)
    ps, (V, a, w) = _batch(loss, 3, 40)
    out = integrate_batch(V, a, w, loss=loss, t_end=1000, times=TIMES)
    assert out["V"].shape == (len(TIMES), 3, 3, 4) and out["loss"].shape == (len(TIMES), 3)
    for i, p in enumerate(ps):
        ref = simulate(p, t_end=1000, times=TIMES, backend="numpy")
        got = torch.cat([out["a"][:, i], out["V"][:, i].flatten(1)], dim=1).numpy()
        exp = np.array([np.concatenate([r_a, np.ravel(r_V)]) for r_a, r_V in zip(ref.a, ref.V)])
        err = np.max(np.abs(got - exp)) / np.max(np.abs(exp))
        assert err < TORCH_VS_NP
        # the loss of converged states is ~1e-22: compare relative to the initial loss
        np.testing.assert_allclose(out["loss"][:, i].numpy(), ref.loss, rtol=1e-9,
                                   atol=1e-10 * ref.loss[0])
    # negative control: element 0 against element 1's reference fails
    ref1 = simulate(ps[1], t_end=1000, times=TIMES, backend="numpy")
    assert np.max(np.abs(out["a"][:, 0].numpy() - np.array(ref1.a))) > TORCH_VS_NP


def test_per_element_steps_do_not_depend_on_the_batch():
    ps, (V, a, w) = _batch("logistic", 4, 7)
    full = integrate_batch(V, a, w, loss="logistic", t_end=100, times=["1", "100"])
    one = integrate_batch(V[2:3], a[2:3], w[2:3], loss="logistic", t_end=100, times=["1", "100"])
    assert int(full["n_steps"][2]) == int(one["n_steps"][0])
    torch.testing.assert_close(full["a"][:, 2], one["a"][:, 0], rtol=1e-13, atol=1e-15)


def test_dopri5_and_dop853_agree_and_simulate_uses_torch():
    p = Problem.preset("logistic-toy")
    t1 = simulate(p, t_end=100, times=["1", "100"], backend="torch")
    out = integrate_batch(p.V[None], p.a[None], p.target[None], loss="logistic", t_end=100,
                          times=["1", "100"], method="dopri5")
    np.testing.assert_allclose(out["a"][:, 0].numpy(), np.array(t1.a), atol=1e-10)
    assert t1.backend == "torch" and t1.clock == "t" and t1.method == "DOP853"


#: float32 against the float64 reference: rtol 1e-5 per step, ~1e3 steps, values O(1).
F32_VS_F64 = 1e-3


@pytest.mark.parametrize("loss", ["logistic", "square"])
def test_float32_runs_from_t0_and_tracks_float64(loss):
    # regression: float32 used to raise "step size underflow" at t = 0 (the first step, 1e-6,
    # was compared with 10 eps max(|t|, 1) = 1.2e-6)
    _, (V, a, w) = _batch(loss, 3, 11)
    f64 = integrate_batch(V, a, w, loss=loss, t_end=100, times=["1", "100"])
    f32 = integrate_batch(V, a, w, loss=loss, t_end=100, times=["1", "100"], dtype="float32",
                          rtol=1e-5, atol=1e-6)
    assert f32["a"].dtype == torch.float32
    err = (f32["a"].double() - f64["a"]).abs().max() / f64["a"].abs().max()
    assert err < F32_VS_F64
    assert err > 1e-12  # it really ran in float32 (control: not a silent float64 path)


def test_failures_and_bad_input():
    p = Problem.preset("logistic-toy")
    args = (p.V[None], p.a[None], p.target[None])
    with pytest.raises(IntegrationError, match="max_steps"):
        integrate_batch(*args, loss="logistic", t_end=1e4, max_steps=2)
    with pytest.raises(InvalidArgument, match="non-finite"):
        integrate_batch(p.V[None] * np.nan, p.a[None], p.target[None], loss="logistic", t_end=1)
    with pytest.raises(InvalidArgument, match="a0"):
        integrate_batch(p.V[None], p.a[None, :3], p.target[None], loss="logistic", t_end=1)
    with pytest.raises(InvalidArgument, match="method"):
        integrate_batch(*args, loss="logistic", t_end=1, method="euler")
    if not torch.cuda.is_available():
        with pytest.raises(InvalidArgument, match="cuda"):
            integrate_batch(*args, loss="logistic", t_end=1, device="cuda")


def test_square_batch_freezes_per_element():
    ps, (V, a, w) = _batch("square", 3, 3)
    out = integrate_batch(V, a, w, loss="square", t_end=1e10, times=["1", "1e10"])
    assert bool(torch.isfinite(out["frozen_at"]).all()) and float(out["frozen_at"].max()) < 1e5


@pytest.mark.gpu
def test_cuda_matches_cpu():
    ps, (V, a, w) = _batch("logistic", 8, 1)
    cpu = integrate_batch(V, a, w, loss="logistic", t_end=1e3, times=["1", "1e3"])
    gpu = integrate_batch(V, a, w, loss="logistic", t_end=1e3, times=["1", "1e3"], device="cuda")
    torch.testing.assert_close(gpu["a"].cpu(), cpu["a"], rtol=1e-10, atol=1e-12)


# ---- the batched stepper against today's (kept as ``_legacy=True``) ------------------------------
#: both steppers integrate the same ODE at rtol = 1e-12 with different step sequences (the new one starts
#: with Hairer's step estimate), so they agree to the global error, ~1e-11 relative to the largest entry
NEW_VS_LEGACY = 1e-9


def _flat(out):
    return torch.cat([out["V"].flatten(2), out["a"]], dim=2)


@pytest.mark.parametrize("loss,clock,method", [("logistic", "t", "dop853"), ("logistic", "log", "dop853"),
                                               ("logistic", "log", "dopri5"), ("square", "auto", "dop853"),
                                               ("kl", "auto", "dopri5")])
def test_new_stepper_matches_todays(loss, clock, method):
    torch.set_num_threads(1)
    _, (V, a, w) = _batch(loss, 5, 21)
    kw = dict(loss=loss, t_end=1000, times=TIMES, clock=clock, method=method)
    new = integrate_batch(V, a, w, **kw)
    old = integrate_batch(V, a, w, _legacy=True, **kw)
    x, y = _flat(new), _flat(old)
    assert float((x - y).abs().max() / y.abs().max()) < NEW_VS_LEGACY
    assert new["clock"] == old["clock"] and new["method"] == method
    assert bool((new["n_steps"] > 0).all())
    # freezing (square / kl) happens per element in both, from the same rule
    assert torch.equal(torch.isnan(new["frozen_at"]), torch.isnan(old["frozen_at"]))
    # negative control: a shifted batch (element i against element i + 1) is far apart
    assert float((x[:, 1:] - y[:, :-1]).abs().max() / y.abs().max()) > 1e-3


def test_retired_elements_keep_their_own_results():
    # elements finish (and leave the work arrays) at different steps; each result must be the one of
    # the element integrated alone: a bookkeeping slip in the compaction would swap or stale rows
    _, (V, a, w) = _batch("logistic", 6, 5)
    V[3] *= 30.0  # a hard element: many more steps than the others
    full = integrate_batch(V, a, w, loss="logistic", t_end=100, times=["1", "10", "100"])
    steps = full["n_steps"].tolist()
    assert steps[3] > 1.5 * min(steps)
    for i in (0, 3, 5):
        one = integrate_batch(V[i:i + 1], a[i:i + 1], w[i:i + 1], loss="logistic", t_end=100,
                              times=["1", "10", "100"])
        assert int(one["n_steps"][0]) == steps[i]
        torch.testing.assert_close(_flat(full)[:, i], _flat(one)[:, 0], rtol=1e-12, atol=1e-14)


def test_pi_controller_agrees_and_is_validated():
    _, (V, a, w) = _batch("logistic", 3, 2)
    kw = dict(loss="logistic", t_end=100, times=["1", "100"])
    i_ctl = integrate_batch(V, a, w, **kw)
    pi = integrate_batch(V, a, w, controller="pi", **kw)
    assert float((_flat(pi) - _flat(i_ctl)).abs().max()) < 1e-9
    assert not torch.equal(pi["n_steps"], i_ctl["n_steps"])  # control: really another step sequence
    with pytest.raises(InvalidArgument, match="controller"):
        integrate_batch(V, a, w, controller="p", **kw)


def test_new_stepper_failures_name_the_element():
    _, (V, a, w) = _batch("logistic", 4, 3)
    with pytest.raises(IntegrationError, match=r"max_steps=3 reached \(batch element \d\)"):
        integrate_batch(V, a, w, loss="logistic", t_end=1e4, max_steps=3)
    V[2, 0, 0] = 1e150  # float64 cannot resolve a flow at this scale (the slope is a product of entries)
    with pytest.raises(IntegrationError, match=r"1e\+150 in magnitude \(batch element 2\)"):
        integrate_batch(V, a, w, loss="square", t_end=1)
    V[2, 0, 0] = 1e149  # control: below the limit the batch runs
    out = integrate_batch(V[:2], a[:2], w[:2], loss="square", t_end=1)
    assert bool(torch.isfinite(out["V"]).all())


def test_bench_row_10_measures_new_and_todays_stepper_side_by_side():
    pytest.importorskip("torchode")
    from softpolar.benchmarks import run_rows

    (row,) = run_rows([10], mode="smoke")["rows"]
    assert row["status"] == "ok", row.get("reason")
    lines = row["lines"]
    assert [ln["ratio_label"] for ln in lines] == ["torchode/softpolar"] * 2 + ["today's/new"] * 2 + \
        ["torchode/softpolar"] * 2
    assert [ln["softpolar"] for ln in lines[2:4]] == ["torch backend (dop853)", "torch backend, method='dopri5'"]
    assert [ln["anchor"] for ln in lines[2:4]] == ["today's torch stepper (dop853)",
                                                   "today's torch stepper, method='dopri5'"]
    for ln in lines:
        assert ln["ratio"] > 0 and "load average" in ln["notes"]
    # the targets apply at B = 4096 only (smoke runs B = 8): no verdict here
    assert all(ln["met"] is None for ln in lines)
