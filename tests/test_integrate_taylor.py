r"""The Taylor backend: proven translation, agreement with the other engines, events,
ensembles, the compilation cache, failures, and the fallback without heyoka.

Translation tests need SymPy only; the rest skip cleanly without heyoka, except the fallback
tests, which simulate a missing heyoka by monkeypatching the import. Compilation costs
0.1-2 s per (loss, link, n, d, precision, clock), paid once per process (the cache): the
problems here are small (n, d <= 3) and share shapes.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings

from numerics import IntegrationError, InvalidArgument, Problem, reduced_logistic, simulate
from numerics.integrate import taylor as T
from numerics.integrate import TranslationError, flow_system
from numerics.integrate.taylor_sympy import check_translation, mistranslated, translate
from numerics.strategies import flow_problems
from theorems import LINKS, SymbolicModel, get_link, get_loss, prove_zero, sigmoid, softplus

#: the built-in links that are smooth, read off their expressions (the Taylor backend's domain)
SMOOTH_LINKS = tuple(name for name, link in LINKS.items() if link.smooth)

needs_heyoka = pytest.mark.skipif(not T.available(), reason="heyoka (extra [taylor]) is not installed")
x = sp.Symbol("x", real=True)


# ---- translation (SymPy only) -----------------------------------------------------------------
@pytest.mark.parametrize("link", SMOOTH_LINKS)
def test_generated_pieces_translate_with_an_exact_proof(link):
    L = get_link(link)
    for expr in (L.h(x), L.dh(x), get_loss("logistic").dell(x)):
        tr = translate(expr)
        assert tr.proof.status == "proved" and tr.proof.method == "exact-rational"
        assert not tr.rewritten.has(sigmoid, softplus)


def test_named_functions_and_non_dyadic_rationals_are_rewritten_and_proven():
    expr = softplus(x / 3) + sigmoid(-x) * sp.Rational(5, 7) + sp.Rational(3, 8) * x
    tr = translate(expr)
    assert tr.proof.status == "proved"
    names = {s.name: v for s, v in tr.rationals}
    assert names == {"rational_1_3": sp.Rational(1, 3), "rational_5_7": sp.Rational(5, 7)}
    # a dyadic rational stays a number (exact in binary)
    assert sp.Rational(3, 8) in tr.rewritten.atoms(sp.Rational)


def test_negative_control_a_mistranslation_is_disproved():
    original, wrong = mistranslated()
    res = check_translation(original, wrong)
    assert res.status == "disproved" and res.counterexample
    # the correct rewrite of the same expression passes the same check
    assert check_translation(original, 1 / (1 + sp.exp(-x))).status == "proved"
    # a wrong placeholder value is caught too: x/3 rewritten with the placeholder bound to 1/4
    r = sp.Symbol("rational_1_3", real=True)
    assert check_translation(x / 3, r * x, ((r, sp.Rational(1, 4)),)).status == "disproved"


@pytest.mark.parametrize("link", ["relu-norm", "l1-norm"])
def test_kinked_links_are_refused(link):
    with pytest.raises(TranslationError, match="kink"):
        flow_system("logistic", link, 2, 2)
    with pytest.raises(TranslationError, match="Max|Abs"):
        translate(get_link(link).h(x))


@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
@pytest.mark.parametrize("link", SMOOTH_LINKS)
def test_assembled_system_is_the_derived_flow(loss, link):
    """The compiled system, intermediates substituted, minus SymPy's component-wise flow = 0 (exact)."""
    n, d = 2, 2
    S = flow_system(loss, link, n, d, clock="t")
    m = SymbolicModel(loss, link, n, d)
    dV, da = m.flow()
    ren = {sp.Symbol(f"V_{k}_{j}", real=True): m.V[k, j] for k in range(d) for j in range(n)}
    ren.update({sp.Symbol(f"a_{j}", real=True): m.a[j] for j in range(n)})
    tname = get_loss(loss).target_name
    ren.update({sp.Symbol(f"{tname}_{k}", real=True): m.target[k] for k in range(d)})
    back = dict(S.rationals)
    got = [e.xreplace(back).xreplace(ren) for e in S.expanded()]
    want = [dV[k, j] for k in range(d) for j in range(n)] + list(da)
    res = prove_zero([g - w for g, w in zip(got, want)])
    assert res.status == "proved", res
    if loss == "logistic" and link == "softmax":
        # negative control: the same check on a system without the mean term of J^T is disproved
        wrong = [g if i < d * n else g.xreplace({sp.Symbol("mean_phi_f", real=True): 0})
                 for i, g in enumerate(S.rhs)]
        S.rhs, keep = wrong, S.rhs
        bad = [e.xreplace(back).xreplace(ren) for e in S.expanded()]
        S.rhs = keep
        assert prove_zero([g - w for g, w in zip(bad, want)]).status == "disproved"


def test_tau_and_log_clocks_are_the_t_flow_rescaled():
    n, d = 2, 2
    t = flow_system("logistic", "softmax", n, d, clock="t").expanded()
    tau = flow_system("logistic", "softmax", n, d, clock="tau").expanded()
    lg = flow_system("logistic", "softmax", n, d, clock="log")
    sigma = lg.time
    gamma = 1 / (1 + sp.exp(sp.Symbol("z", real=True)))
    w = [sp.Symbol(f"w_{k}", real=True) for k in range(d)]
    V = [[sp.Symbol(f"V_{k}_{j}", real=True) for j in range(n)] for k in range(d)]
    a = [sp.Symbol(f"a_{j}", real=True) for j in range(n)]
    Z = sum(sp.exp(aj) for aj in a)
    z = sum(w[k] * V[k][j] * sp.exp(a[j]) / Z for k in range(d) for j in range(n))
    g = gamma.xreplace({sp.Symbol("z", real=True): z})
    assert prove_zero([tt - g * ta for tt, ta in zip(t, tau[:-1])]).status == "proved"
    assert prove_zero([sp.exp(sigma) * tt - tl for tt, tl in zip(t, lg.expanded())]).status == "proved"


# ---- agreement with the other engines ---------------------------------------------------------------
def _flat(traj, k):
    return [float(v) for row in traj.V[k] for v in row] + [float(v) for v in traj.a[k]]


@needs_heyoka
@settings(max_examples=12)
@given(flow_problems(max_n=3, max_d=3, logit_max_abs=5.0, value_max_abs=3.0))
def test_taylor_float64_matches_torch(problem):
    from numerics import integrate_batch
    p = Problem(problem.loss, problem.V, problem.a, problem.target, X=problem.X)
    times = [0.0, 0.25, 1.0]
    ty = simulate(p, t_end=1.0, times=times, backend="taylor", dps=None, clock="t")
    assert ty.backend == "taylor" and ty.clock == "t"
    out = integrate_batch(p.V[None], p.a[None], p.target[None], loss=p.loss, X=p.X, t_end=1.0, times=times,
                          rtol=1e-13, atol=1e-15, freeze=False)
    for k in range(len(times)):
        ref = np.concatenate([out["V"][k, 0].numpy().ravel(), out["a"][k, 0].numpy()])
        scale = 1.0 + np.abs(ref).max()
        assert np.abs(np.array(_flat(ty, k)) - ref).max() <= 1e-9 * scale, k


@needs_heyoka
@settings(max_examples=4)
@given(flow_problems(("logistic", "square"), max_n=3, max_d=2, logit_max_abs=3.0, value_max_abs=2.0))
def test_taylor_multiprecision_matches_gbs(problem):
    """dps 20 on both engines: at least dps - 5 digits agree (the GBS backend's own standard)."""
    p = Problem(problem.loss, problem.V, problem.a, problem.target, X=problem.X)
    times = ["0", "0.5", "2"]
    ty = simulate(p, t_end=2, times=times, backend="taylor", dps=20, clock="t")
    gb = simulate(p, t_end=2, times=times, backend="mpmath", dps=20, clock="t", freeze=False)
    for k in range(len(times)):
        a, b = _flat(ty, k), _flat(gb, k)
        with mpmath.workdps(30):
            ya = [mpmath.mpf(v) for row in ty.V[k] for v in row] + list(ty.a[k])
            yb = [mpmath.mpf(v) for row in gb.V[k] for v in row] + list(gb.a[k])
            err = max(abs(u - v) for u, v in zip(ya, yb)) / (1 + max(abs(v) for v in yb))
        assert err < mpmath.mpf(10) ** -15, (k, a, b)


@needs_heyoka
@pytest.mark.parametrize("clock", ["t", "log", "tau"])
def test_each_clock_agrees_with_gbs_at_high_precision(clock):
    p = Problem.from_seed(3, d=3, n=3, loss="logistic", a0="noise", a_scale=0.5)
    times = ["0", "0.5", "3", "1e3"]
    ty = simulate(p, t_end="1e3", times=times, backend="taylor", dps=25, clock=clock)
    gb = simulate(p, t_end="1e3", times=times, backend="mpmath", dps=25, clock=clock)
    assert ty.clock == gb.clock == clock and isinstance(ty.a[-1][0], mpmath.mpf) and ty.dps == 25
    with mpmath.workdps(25):
        for k in range(len(times)):
            err = max(abs(u - v) for u, v in zip(ty.a[k], gb.a[k]))
            assert err < mpmath.mpf(10) ** -20, (k, err)
        # negative control: the same comparison between different output times fails
        assert max(abs(u - v) for u, v in zip(ty.a[2], gb.a[3])) > mpmath.mpf(10) ** -20
    if clock == "tau":
        assert ty.tau[0] == 0 and all(x < y for x, y in zip(ty.tau, ty.tau[1:]))


@needs_heyoka
def test_reduced_system_matches_gbs_to_1e50():
    u0, a0, b = [0.3, -0.1, 0.2], [0.0, 0.0, 0.0], 1.0
    times = [0, 1e10, 1e50]
    ty = T.reduced_taylor(u0, a0, b, t_end=1e50, times=times, dps=25)
    gb = reduced_logistic(u0, a0, b, t_end=1e50, times=times, dps=25)
    with mpmath.workdps(25):
        for k in range(3):
            assert max(abs(x - y) for x, y in zip(ty["a"][k], gb.a[k])) < mpmath.mpf(10) ** -20


@needs_heyoka
def test_reduced_system_keeps_exact_inputs():
    # "0.1" is 1/10, not the double 0.1000000000000000055...: the 30-digit results must differ from those
    # of the double by about its rounding error (5.6e-18 relative), and equal those of Fraction(1, 10)
    from fractions import Fraction

    times = [0, "0.5", 2]
    kw = dict(t_end=2, times=times, dps=30)
    exact = T.reduced_taylor(["0.1", "-0.2", "0"], ["0", "0.1", "0"], "1.1", **kw)
    frac = T.reduced_taylor([Fraction(1, 10), Fraction(-1, 5), 0], [0, Fraction(1, 10), 0], Fraction(11, 10), **kw)
    dbl = T.reduced_taylor([0.1, -0.2, 0.0], [0.0, 0.1, 0.0], 1.1, **kw)
    gb = reduced_logistic(["0.1", "-0.2", "0"], ["0", "0.1", "0"], "1.1", **kw)
    with mpmath.workdps(30):
        assert exact["u"][0][0] == frac["u"][0][0] == mpmath.mpf("0.1")
        assert exact["u"][0][0] != dbl["u"][0][0]
        for k in range(3):
            assert max(abs(x - y) for x, y in zip(exact["a"][k], frac["a"][k])) < mpmath.mpf(10) ** -28
            assert max(abs(x - y) for x, y in zip(exact["a"][k], gb.a[k])) < mpmath.mpf(10) ** -25
        assert max(abs(x - y) for x, y in zip(exact["u"][2], dbl["u"][2])) > mpmath.mpf(10) ** -19
    with pytest.raises(InvalidArgument, match="a0 has 3 entries and u0 2"):
        T.reduced_taylor(["0.1", "0"], ["0", "0", "0"], 1, **kw)


# ---- cache, failures, bad input -------------------------------------------------------------------
@needs_heyoka
def test_compiled_integrators_are_cached():
    p = Problem.from_seed(0, d=2, n=2, loss="logistic")
    simulate(p, t_end=1, times=[0, 1], backend="taylor", dps=None, clock="t")
    before = T.cache_info()
    q = Problem.from_seed(1, d=2, n=2, loss="logistic")  # other data, same shape: no recompilation
    simulate(q, t_end=2, times=[0, 2], backend="taylor", dps=None, clock="t")
    after = T.cache_info()
    assert after["entries"] == before["entries"] and after["hits"] == before["hits"] + 1


@needs_heyoka
def test_failures_raise_integration_error():
    p = Problem.from_seed(1, d=2, n=2, loss="logistic")
    with pytest.raises(IntegrationError, match="max_steps") as info:
        simulate(p, t_end=1e9, backend="taylor", dps=None, clock="t", max_steps=3)
    assert info.value.t_reached > 0
    # sum-norm has a pole where sum(a) = 0: a flow that reaches it stops with an error, never short
    q = Problem(loss="square", link="sum-norm", V=[[4.0, -4.0]], a=[1.0, -0.9], target=[-50.0])
    with pytest.raises(IntegrationError):
        simulate(q, t_end=100, backend="taylor", dps=None, clock="t", max_steps=2000)
    with pytest.raises(InvalidArgument, match="atol"):
        simulate(p, t_end=1, backend="taylor", atol=1e-20)
    with pytest.raises(InvalidArgument, match="link"):
        simulate(Problem.from_seed(1, d=2, n=2, loss="logistic", link="relu-norm"), t_end=1, backend="taylor")
    with pytest.raises(InvalidArgument, match="dps"):
        simulate(p, t_end=1, backend="mpmath", dps=None)


# ---- events and ensembles ------------------------------------------------------------------------
@needs_heyoka
def test_events_locate_a_rank_swap_and_the_entry_into_r_plus():
    p = Problem.from_seed(1, d=2, n=3, loss="logistic", a0="noise", a_scale=1.0, v_scale=1.0)
    ev = T.taylor_events(p, t_end=1e3, clock="t")
    (ts, i, j, sgn), = ev["swaps"]
    te, win = ev["entry_R_plus"], ev["winner"]
    assert 0 < te < 1e3
    eps = 1e-6
    tr = simulate(p, t_end=ts * (1 + eps), times=[te * (1 - eps), te * (1 + eps), ts * (1 - eps), ts * (1 + eps)],
                  backend="numpy", clock="t", rtol=1e-13)
    A, V = np.array(tr.a), np.array(tr.V)
    u = np.einsum("kdn,d->kn", V, p.target)
    # the swap: a_i - a_j changes sign across ts, in the reported direction
    assert np.sign(A[2, i] - A[2, j]) == -sgn and np.sign(A[3, i] - A[3, j]) == sgn
    inside = [bool(all(u[k, win] >= u[k, m] and A[k, win] > A[k, m] for m in range(3) if m != win))
              for k in (0, 1)]
    assert inside == [False, True]
    # the tau clock reports the same physical times
    ev2 = T.taylor_events(p, t_end=1e3, clock="tau")
    assert ev2["swaps"][0][0] == pytest.approx(ts, rel=1e-9)
    assert ev2["entry_R_plus"] == pytest.approx(te, rel=1e-9)


@needs_heyoka
def test_ensemble_matches_single_runs():
    rs = np.random.RandomState(0)
    B, d, n = 10, 3, 3
    V, a = 0.5 * rs.randn(B, d, n), rs.randn(B, n)
    w = rs.randn(B, d)
    out = T.integrate_ensemble(V, a, w, loss="logistic", t_end=5.0, times=[0.0, 1.0, 5.0])
    for i in (0, 7, 9):
        tr = simulate(Problem("logistic", V[i], a[i], w[i]), t_end=5, times=[0, 1, 5], backend="numpy",
                      clock="t", rtol=1e-13)
        np.testing.assert_allclose(out["a"][i], np.array(tr.a), rtol=0, atol=1e-10)


# ---- auto selection and the fallback without heyoka --------------------------------------------------
@needs_heyoka
def test_auto_picks_taylor_and_says_so():
    p = Problem.from_seed(2, d=2, n=2, loss="logistic")
    tr = simulate(p, t_end=1, times=[0, 1], dps=20)
    assert tr.backend == "taylor" and any("auto -> taylor" in s for s in tr.notes)
    # GBS-only features keep auto on GBS: the tail-bound freezing of square / kl, a kinked link
    sq = simulate(Problem.from_seed(2, d=2, n=2, loss="square"), t_end=1, times=[0, 1], dps=20)
    assert sq.backend == "mpmath" and any("auto -> mpmath" in s for s in sq.notes)
    kink = simulate(Problem.from_seed(2, d=2, n=2, loss="logistic", link="relu-norm", a0="ones_noise"),
                    t_end=1, times=[0, 1], dps=20)
    assert kink.backend == "mpmath"


def test_without_heyoka_auto_falls_back_to_gbs(monkeypatch):
    monkeypatch.setattr(T, "_import_heyoka", lambda: None)
    assert not T.available()
    p = Problem.from_seed(2, d=2, n=2, loss="logistic")
    tr = simulate(p, t_end=1, times=[0, 1], dps=20)
    assert tr.backend == "mpmath" and tr.method == "GBS"
    assert any("heyoka is not installed" in s for s in tr.notes)
    with pytest.raises(InvalidArgument, match="heyoka is not installed"):
        simulate(p, t_end=1, backend="taylor")


def test_without_heyoka_the_cli_exits_2_for_taylor_and_auto_runs(monkeypatch, capsys):
    from softpolar import main
    monkeypatch.setattr(T, "_import_heyoka", lambda: None)
    base = ["simulate", "--seed", "0", "--d", "2", "--n", "2", "--loss", "logistic", "--t-end", "1",
            "--times", "0,1", "--quiet", "--dps", "15"]
    rc = main(base + ["--backend", "taylor"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "heyoka" in err[0]
    rc = main(base + ["--json"])
    out = capsys.readouterr().out
    import json
    assert rc == 0 and json.loads(out)["meta"]["backend"] == "mpmath"


@needs_heyoka
def test_cli_taylor_records_the_backend(capsys):
    import json

    from softpolar import main
    rc = main(["simulate", "--seed", "0", "--d", "2", "--n", "2", "--loss", "logistic", "--t-end", "1e6",
               "--times", "0,1,1e6", "--quiet", "--dps", "20", "--json"])
    meta = json.loads(capsys.readouterr().out)["meta"]
    assert rc == 0 and meta["backend"] == "taylor" and meta["clock"] == "tau" and "heyoka" in meta["method"]


def test_prec_bits_has_guard_digits():
    assert T.prec_bits(30) == math.ceil(42 * math.log2(10))


@needs_heyoka
@pytest.mark.parametrize("loss, link", [("logistic", "sigmoid"), ("square", "l2-norm"), ("kl", "sum-norm"),
                                        ("square", "sigmoid")])
def test_smooth_links_and_losses_match_numpy(loss, link):
    """Every link and loss numerically (the exact check of all 12 pairs is test_assembled_system_...)."""
    p = Problem.from_seed(4, d=2, n=2, loss=loss, link=link, a0="ones_noise", a_scale=0.2)
    ty = simulate(p, t_end=0.5, times=[0, 0.5], backend="taylor", dps=None, clock="t")
    ref = simulate(p, t_end=0.5, times=[0, 0.5], backend="numpy", clock="t", rtol=1e-13, atol=1e-15, freeze=False)
    np.testing.assert_allclose(_flat(ty, 1), _flat(ref, 1), rtol=1e-10, atol=1e-12)


@needs_heyoka
def test_exact_inputs_stay_exact_in_multiprecision():
    """Decimal-string inputs enter rounded once to the working precision (like GBS), not via float64."""
    p = Problem(loss="logistic", V=[["0.1", "0.2"], ["0.3", "-0.1"]], a=["0", "0.1"], target=["0.6", "0.8"])
    ty = simulate(p, t_end=10, times=["0", "10"], backend="taylor", dps=40, clock="t")
    gb = simulate(p, t_end=10, times=["0", "10"], backend="mpmath", dps=40, clock="t")
    with mpmath.workdps(40):
        assert ty.V[0][0][0] == mpmath.mpf("0.1") and ty.V[0][1][1] == mpmath.mpf("-0.1")
        assert max(abs(x - y) for x, y in zip(ty.a[-1], gb.a[-1])) < mpmath.mpf(10) ** -35
    assert any("working precision (heyoka.real)" in s for s in ty.notes)
    # control: the float64 path rounds the same inputs (0.1 is not a binary number)
    f64 = simulate(p, t_end=10, times=["0", "10"], backend="taylor", dps=None, clock="t")
    with mpmath.workdps(40):
        assert f64.V[0][0][0] == 0.1 and mpmath.mpf(f64.V[0][0][0]) != mpmath.mpf("0.1")


def test_frozen_values_keep_their_digits_where_one_weight_is_one_minus_tiny():
    """Values frozen (the softmax bandit): 1 - max phi ~ C/t falls below 10^-dps past t = 1e30, where
    f_top - <phi, f> formed by subtraction cancels to its last digit. The engine forms it as
    sum_k phi_k (f_top - f_k): sum(a), a constant of the flow, stays 0, and (1 - max phi) t stays at its limit.
    On the mean form sum(a) was -175 at t = 1e60 and (1 - max phi) t was 16.9 instead of 2.98 (no error raised)."""
    import numerics
    p = numerics.Problem(loss="logistic", V=np.array([[1.0, 0.3, -0.5, 0.1]]), a=np.zeros(4),
                         target=np.array([1.0]), frozen=("V",))
    tr = numerics.simulate(p, t_end="1e100", times=["1e20", "1e60", "1e100"], backend="taylor", dps=30)
    assert all(abs(sum(a)) < 1e-10 for a in tr.a), [sum(a) for a in tr.a]
    ct = [om * t for om, t in zip(tr.one_minus_max, tr.times)]
    assert all(abs(c / ct[0] - 1) < 1e-9 for c in ct), ct


@pytest.mark.parametrize("link", SMOOTH_LINKS)
def test_frozen_values_system_is_the_derived_flow(link):
    """The pairwise form of J^T f used with frozen parameters, intermediates substituted, minus SymPy's flow with
    dV = 0 is an exact zero; a planted bug (one pair's difference f_0 - f_1 dropped) is disproved."""
    n, d = 3, 2
    S = flow_system("logistic", link, n, d, clock="t", frozen=("V",))
    m = SymbolicModel("logistic", link, n, d)
    _, da = m.flow()
    ren = {sp.Symbol(f"V_{k}_{j}", real=True): m.V[k, j] for k in range(d) for j in range(n)}
    ren.update({sp.Symbol(f"a_{j}", real=True): m.a[j] for j in range(n)})
    ren.update({sp.Symbol(f"{get_loss('logistic').target_name}_{k}", real=True): m.target[k] for k in range(d)})
    back = dict(S.rationals)
    got = [e.xreplace(back).xreplace(ren) for e in S.expanded()]
    assert all(g == 0 for g in got[:d * n])
    assert prove_zero([g - w for g, w in zip(got[d * n:], da)]).status == "proved"
    pairwise = any(s.name == "df_0_1" for s, _ in S.defs)
    assert pairwise or link != "softmax"
    if pairwise:
        S.rhs = [g.xreplace({sp.Symbol("df_0_1", real=True): 0}) for g in S.rhs]
        bad = [e.xreplace(back).xreplace(ren) for e in S.expanded()]
        assert prove_zero([g - w for g, w in zip(bad[d * n:], da)]).status == "disproved"
