"""``simulate`` with the built-in softmax1 through the sink phase and the escape, against claim SINK2's own run.

Instance: SINK2's sweep point u1(0) = -2, b = 0.1, u(0) = (u1, u1 - 1/2, u1 - 1), a(0) = 0, as a full (V, a)
problem with d = 2: w = (3/10, 1/10) (so b = |w|^2 = 1/10 exactly) and V = w u(0)^T / b (so V^T w = u(0)). The
reference is SINK2's ``sink2_run`` (its generated reduced system in the log clock: LSODA for the sink mass on a
grid, 20-digit GBS for tau*). simulate integrates the full flow of (V, a) in the logistic tau clock (mpmath,
taylor) or in log(1 + t) (numpy), from the generated right-hand sides of the built-in definition.
"""
import math

import mpmath
import numpy as np
import pytest

import numerics
import theorems as T
from numerics import IntegrationError
from proofs_check.claims import SINK2_CROSSCHECK_TOL, SINK2_DPS, SINK_EPS, sink2_run
from theorems.sinks import escape_law

U1, B = -2.0, 0.1
U0 = [U1, U1 - 0.5, U1 - 1.0]
W = np.array([0.3, 0.1])
#: relative agreement of the real tokens' mass sum(phi) with the reference: the reference's LSODA (rtol 1e-11) is
#: interpolated linearly in log tau on its grid of 0.01, an error below h^2/8 max|(log sum phi)''| ~ 1e-5 here;
#: near the sink phase 1e-4 relative is 1e-4 (1 - sink mass), finer than the claim's SINK_EPS test needs
MASS_RTOL = 1e-4
#: output times: 4 per decade to 1e9 (past the escape at t* ~ 2 tau* ~ 7e7 and the take-over), and 0.02 per
#: decade around the escape (then log tau* interpolated linearly between outputs is good to ~3e-4,
#: far below SINK2_CROSSCHECK_TOL)
TIMES = sorted({repr(10 ** (k / 4)) for k in range(0, 37)} | {repr(10 ** (7.5 + k / 50)) for k in range(36)},
               key=float)


def _problem(link="softmax1", u0=U0):
    V = [[repr(3 * x) for x in u0], [repr(x) for x in u0]]
    return numerics.Problem(loss="logistic", V=V, a=["0"] * len(u0), target=["0.3", "0.1"], link=link)


def _reference(u1):
    u0 = [u1, u1 - 0.5, u1 - 1.0]
    sig_max = 1.5 * escape_law(u1, B) + 20
    return (sink2_run(u0, B, sigma_max=sig_max, step=0.01),
            sink2_run(u0, B, sigma_max=sig_max, backend="mpmath", dps=SINK2_DPS))


@pytest.fixture(scope="module")
def reference():
    return _reference(U1)


@pytest.fixture(scope="module")
def runs():
    p = _problem()
    out = {be: numerics.simulate(p, t_end=TIMES[-1], times=TIMES, backend=be, dps=SINK2_DPS)
           for be in ("mpmath", "taylor", "numpy") if be != "taylor" or numerics.integrate.taylor.available()}
    return out


def _series(tr):
    """log tau (tau clock only), u_1 = (V^T w)_1, the real tokens' mass sum(phi) and phi_top, per output."""
    sig = [float(mpmath.log(x)) if x > 0 else -math.inf for x in tr.tau] if tr.tau else None
    u1 = [float(np.asarray(V, float)[:, 0] @ W) for V in tr.V]
    mass = [float(mpmath.fsum(w)) for w in tr.weights]
    top = [float(w[0]) for w in tr.weights]
    return sig, u1, mass, top


def _escape(sig, u1):
    """log tau at the first zero of u_1 (linear between the outputs around it); None without a crossing."""
    k = next((i for i in range(1, len(u1)) if u1[i - 1] < 0 <= u1[i]), None)
    if k is None:
        return None
    return sig[k - 1] - u1[k - 1] * (sig[k] - sig[k - 1]) / (u1[k] - u1[k - 1])


def agreement(tr, reference):
    """How far a tau-clock trajectory is from SINK2's run: the largest relative error of sum(phi) against the
    reference on its range, the escape log tau* against the 20-digit GBS value, and the sink phase."""
    run, gbs = reference
    rows = run["rows"]
    sig, u1, mass, _top = _series(tr)
    rs = np.array([r["sigma"] for r in rows])
    rm = np.log([sum(r["s"]) for r in rows])
    inside = [k for k, s in enumerate(sig) if rs[0] <= s <= rs[-1]]
    err = max(abs(mass[k] / math.exp(np.interp(sig[k], rs, rm)) - 1) for k in inside)
    est = _escape(sig, u1)
    phase = [sig[k] for k in range(len(sig)) if 1 - mass[k] > 1 - SINK_EPS]
    return {"mass_rel_err": err, "n_compared": len(inside), "log_tau_star": est,
            "tau_star_err": math.inf if est is None else abs(est - gbs["sigma_star"]),
            "sink_phase": (phase[0], phase[-1]) if phase else None}


@pytest.mark.parametrize("backend", ["mpmath", "taylor"])
def test_simulate_softmax1_follows_the_sink_phase_and_the_escape_of_sink2(backend, runs, reference):
    if backend not in runs:
        pytest.skip("heyoka is not installed")
    tr = runs[backend]
    assert tr.backend == backend and tr.clock == "tau" and tr.problem.link == "softmax1"
    assert len(tr.times) == len(TIMES) and float(tr.times[-1]) == float(TIMES[-1])  # never a short trajectory
    g = agreement(tr, reference)
    assert g["n_compared"] > 40 and g["mass_rel_err"] < MASS_RTOL, g
    assert g["tau_star_err"] < SINK2_CROSSCHECK_TOL, g
    # the sink phase (mass > 1 - SINK_EPS) is an interval before the escape, as in SINK2's run
    first, last = g["sink_phase"]
    _rows, gbs = reference
    assert 10 < first < last < gbs["sigma_star"] + 1
    # t ~ 2 tau in the sink phase (z ~ 0, so dt/dtau = 1 + e^z ~ 2); after the escape the top token takes over
    sig, u1, mass, top = _series(tr)
    in_phase = [k for k, s in enumerate(sig) if first <= s <= last]
    assert all(abs(float(tr.times[k]) / float(tr.tau[k]) - 2) < 1e-3 for k in in_phase)
    assert u1[-1] > 1 and top[-1] > 0.99 and 1 - mass[-1] < 1e-3


def test_negative_controls_a_wrong_tau_star_and_a_planted_link_are_rejected(runs, reference):
    g = agreement(runs["mpmath"], reference)
    # the escape law's value itself (log tau* = u1^2 / 2b = 20) is not the escape time of this run
    assert abs(g["log_tau_star"] - escape_law(U1, B)) > 100 * SINK2_CROSSCHECK_TOL
    # a planted bug on the same code path: softmax1's normalizer constant 1 -> 2 (two sink slots)
    bad = T.register(T.Link("softmax1-planted-c2", h=T.get_link("softmax1").expr_h, c=2))
    tr = numerics.simulate(_problem(bad), t_end=TIMES[-1], times=TIMES, backend="mpmath", dps=SINK2_DPS)
    gb = agreement(tr, reference)
    assert gb["mass_rel_err"] > 100 * MASS_RTOL and gb["tau_star_err"] > SINK2_CROSSCHECK_TOL, gb


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_float64_log_clock_follows_the_same_path(backend, runs):
    """numpy and torch step in log(1 + t) and record no tau: their states at the same times must match the
    20-digit run (float64 DOP853 at rtol 1e-12; measured 3e-11 apart)."""
    if backend == "torch":
        pytest.importorskip("torch")
        tr = numerics.simulate(_problem(), t_end=TIMES[-1], times=TIMES, backend="torch")
    else:
        tr = runs["numpy"]
    _, u1n, mn, _ = _series(tr)
    _, u1m, mm, _ = _series(runs["mpmath"])
    assert tr.clock == "log" and len(mn) == len(TIMES)
    assert max(abs(a / b - 1) for a, b in zip(mn, mm)) < 1e-6
    assert max(abs(a - b) for a, b in zip(u1n, u1m)) < 1e-6


def _log_grid(t_end_log10):
    return sorted({repr(10 ** (k / 4)) for k in range(0, 4 * t_end_log10 + 1)}, key=float)


@pytest.mark.slow
def test_simulate_softmax1_at_sink2s_next_sweep_point_and_where_float64_gives_up():
    """u1(0) = -3 (log tau* = 42.7, t* ~ 7e18): GBS at 20 digits goes through the escape and the take-over and
    matches SINK2; numpy (float64, log clock) stalls at the take-over and says so (IntegrationError, past t*)."""
    u1 = -3.0
    u0 = [u1, u1 - 0.5, u1 - 1.0]
    ref = _reference(u1)
    times = sorted(set(_log_grid(21)) | {repr(10 ** (18.6 + k / 50)) for k in range(30)}, key=float)
    tr = numerics.simulate(_problem(u0=u0), t_end=times[-1], times=times, backend="mpmath", dps=SINK2_DPS)
    g = agreement(tr, ref)
    assert len(tr.times) == len(times) and g["mass_rel_err"] < MASS_RTOL and g["tau_star_err"] < SINK2_CROSSCHECK_TOL, g
    _sig, u1s, mass, top = _series(tr)
    assert u1s[-1] > 1 and top[-1] > 0.99
    with pytest.raises(IntegrationError) as e:
        numerics.simulate(_problem(u0=u0), t_end=times[-1], times=times, backend="numpy")
    assert float(e.value.t_reached) > 2 * math.exp(ref[1]["sigma_star"])  # it stalls after the escape


@pytest.mark.parametrize("backend", ["taylor", pytest.param("mpmath", marks=pytest.mark.slow)])
def test_no_backend_returns_a_wrong_trajectory_when_tau_outgrows_its_precision(backend):
    """u1(0) = -4: tau* ~ e^77.6 ~ 5e33, the take-over needs steps of tau below the resolution of tau at 20 digits
    (+ guard digits). GBS says so; the Taylor backend used to return one and the same wrong state for every output
    after the take-over (its outputs are located in tau on the continuous output) and now raises."""
    if backend == "taylor" and not numerics.integrate.taylor.available():
        pytest.skip("heyoka is not installed")
    u1 = -4.0
    p = _problem(u0=[u1, u1 - 0.5, u1 - 1.0])
    times = _log_grid(40)
    with pytest.raises(IntegrationError, match="resolution|step size"):
        numerics.simulate(p, t_end=times[-1], times=times, backend=backend, dps=SINK2_DPS)
    # the control: the same backend on the same problem up to just before the take-over returns every output
    short = [t for t in times if float(t) <= 1e34]
    tr = numerics.simulate(p, t_end=short[-1], times=short, backend=backend, dps=SINK2_DPS)
    assert len(tr.times) == len(short) and _series(tr)[1][-1] < 0  # still in the sink phase, u_1 < 0


@pytest.mark.slow
def test_cli_simulate_softmax1_through_the_escape_at_20_digits(tmp_path):
    """The same instance on the command line: `softpolar simulate --link softmax1 --backend mpmath --dps 20`."""
    import json
    import subprocess
    import sys

    init = tmp_path / "sink.json"
    init.write_text(json.dumps({"loss": "logistic", "link": "softmax1", "V": [[3 * x for x in U0], U0], "a": [0, 0, 0],
                                "target": ["0.3", "0.1"]}))
    out = tmp_path / "out.json"
    times = [repr(10 ** (k / 4)) for k in range(37)]
    r = subprocess.run([sys.executable, "-m", "softpolar", "simulate", "--init", str(init), "--link", "softmax1",
                        "--backend", "mpmath", "--dps", str(SINK2_DPS), "--t-end", "1e9", "--times", ",".join(times),
                        "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["problem"]["link"] == "softmax1" and len(data["times"]) == len(times)
    u1 = [float(np.asarray(V, float)[:, 0] @ W) for V in data["V"]]
    sink = [1 - sum(float(w) for w in ws) for ws in data["weights"]]
    k = next(i for i in range(1, len(u1)) if u1[i - 1] < 0 <= u1[i])  # the escape, between two outputs
    t_star = 2 * math.exp(_reference(U1)[1]["sigma_star"])  # t ~ 2 tau in the sink phase
    assert float(data["times"][k - 1]) < t_star < float(data["times"][k])
    assert max(sink[:k]) > 1 - SINK_EPS and sink[-1] < 1e-3  # the sink phase, then the take-over
