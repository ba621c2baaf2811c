r"""Claims 26-30 of the paper notes (paper-notes#claims): unnormalized sigmoid, other normalizations, KL,
the tied model.

Claims 27, 28 and 30 re-run the authors' toy notebook settings with their
random streams (legacy NumPy ``RandomState(42)``, same draw order); the gradient
steps use the generated field of :mod:`numerics` (claims 27-28) or torch
autograd of the model definition (claim 30, a model outside
:class:`theorems.SymbolicModel`). Claims 26 and 29 follow the exact flow to
long horizons on the log clock.
"""
from __future__ import annotations

import numpy as np
import numerics
from numerics import flow_rhs

from ._claims_common import (authors_comparison, authors_kl, authors_logistic_toy, authors_tied, entropy,
                             flow, fmt, gradient_descent, log10_times, logistic_reduced, softmax, stiff_flow)
from ..claim import Claim, Control, Figure, Outcome, Witness

#: wording shared by several claim records below
_REPRO = "reproduction of the authors' settings"

LINKS6 = ("l1-norm", "sum-norm", "l2-norm", "softmax", "relu-norm", "sigmoid")


def _phi(loss, link, a):
    return flow_rhs(loss, link, backend="numpy").phi(a)


# ---- C26 sigmoid gates ------------------------------------------------------------------------
def _gate_runs(ctx):
    def compute():
        V, a, w = authors_comparison()
        times = np.concatenate([[0.0], log10_times(100, 1, 0)])
        out = {}
        for link in ("sigmoid", "softmax"):
            sol = flow("logistic", link, V[None], a[None], w[None], times)
            g = _phi("logistic", link, sol["a"][0])
            out[link] = {"times": times, "gates": g, "H_norm": entropy(g)}
        return out
    return ctx.memo("gates", compute)


def _uniform_limit_test(run, n):
    """Normalized weights -> uniform: log n - H decreases every decade from 1e10 on and is < 1e-6 at 1e100."""
    t, dev = run["times"], np.log(n) - run["H_norm"]
    late = t >= 1e10
    mono = bool(np.all(np.diff(dev[late]) < 0))
    one_minus_min = 1.0 - run["gates"].min(-1)
    return mono and dev[-1] < 1e-6, {"log_n_minus_H_1e100": float(dev[-1]), "monotone_from_1e10": mono,
                                     "one_minus_min_gate_1e100": float(one_minus_min[-1]),
                                     "max_gate_1e100": float(run["gates"][-1].max())}


def c26_check(ctx):
    run = _gate_runs(ctx)["sigmoid"]
    n = run["gates"].shape[-1]
    ok, info = _uniform_limit_test(run, n)
    g = 1.0 - run["gates"].min(-1)
    gates_up = bool(np.all(np.diff(g[run["times"] >= 1e10]) < 0)) and g[-1] < 0.01
    ev = (f"authors' comparison init (d=n=10, seed 42), exact flow to t=1e100: every gate rises (1 - min gate "
          f"{fmt(g[1])} at t=1 -> {fmt(info['one_minus_min_gate_1e100'])} at 1e100), normalized entropy -> log 10 "
          f"(log n - H = {fmt(info['log_n_minus_H_1e100'])}, decreasing every decade): no polarization")
    if ok and gates_up:
        return Outcome("verified", ev, details=info)
    return Outcome("refuted", ev, details=info, counterexample={**info, "gates_rising": gates_up})


def c26_control(ctx, link="softmax", run=None):
    """``run``: the weights to test (default: the softmax run of :func:`_gate_runs`)."""
    run = _gate_runs(ctx)[link] if run is None else run
    ok, info = _uniform_limit_test(run, run["gates"].shape[-1])
    if ok:
        return Outcome("verified", "softmax weights were accepted as tending to uniform", details=info)
    return Outcome("refuted", f"the same uniform-limit test on softmax weights fails: log n - H = "
                   f"{fmt(info['log_n_minus_H_1e100'])} at 1e100 (max weight {fmt(info['max_gate_1e100'], 5)})",
                   counterexample=info)


def _c26_planted_run(ctx):
    """Softmax weights on the softmax run's time grid that tend to uniform by construction, s(t) = softmax(a(0) /
    (1 + log(1+t))^2) from the run's own a(0): log n - H falls every decade, to ~1e-12 at t = 1e100."""
    run = _gate_runs(ctx)["softmax"]
    a0 = np.log(run["gates"][0])  # softmax weights at t = 0 give a(0) up to a shift
    g = softmax(a0[None, :] / (1.0 + np.log1p(run["times"]))[:, None] ** 2)
    return {"times": run["times"], "gates": g, "H_norm": entropy(g)}


C26 = Claim(
    id="C26",
    family="no_polarization[logistic,sigmoid]",
    title="Unnormalized sigmoid gates do not polarize",
    statement=r"\varphi=\mathrm{sigmoid}\ (\text{elementwise}):\ \varphi_i(a_i(t))\to1\ \forall "
              r"i,\ H(\varphi/\textstyle\sum\varphi)\to\log n",
    provenance="D/R",
    assumptions="logistic loss; authors' comparison init (d=n=10, V scale 0.1, a(0)=1+0.1N, seed 42)",
    evidence_kind="high-precision numerics",
    check_description="exact flow to t=1e100: gates rise, log n - H(normalized) decreases to < 1e-6",
    expected="verified",
    check=c26_check,
    control=Control("the same uniform-limit test on softmax weights must fail", c26_control),
    digest_number=26,
    group="alternatives",
    witness=Witness(description="the uniform-limit test on a planted softmax trajectory that tends to uniform "
                                "(softmax(a(0) / (1 + log(1+t))^2))",
                    run=lambda ctx: c26_control(ctx, run=_c26_planted_run(ctx))),
    engines=('flow',),
)


# ---- C27 / C28 normalization comparison ----------------------------------------------------------
def _comparison_runs(ctx, loss):
    def compute():
        V, a, w = authors_comparison()
        if loss == "logistic":
            lr, steps = 0.5, (100_000 if ctx.full else 20_000)
        else:
            lr, steps = 0.1, 5_000
        record = sorted(set(int(x) for x in np.unique(np.logspace(0, np.log10(steps), 40).astype(int))))
        out = {}
        for link in LINKS6:
            r = gradient_descent(loss, link, V.copy(), a.copy(), w, lr=lr, steps=steps, record=record)
            out[link] = {"steps": r["steps"], "weights": _phi(loss, link, r["a"]), "logits": r["a"]}
        return {"lr": lr, "steps": steps, "runs": out}
    return ctx.memo(("comparison", loss), compute)


def _one_hot(w, tol=1e-3):
    """One-hot within the reference's 3-decimal display: max weight >= 1 - tol and all weights in [0, 1]."""
    return bool(w.max() >= 1 - tol and w.min() >= -1e-12 and w.max() <= 1 + 1e-12)


def _figure_normalizations(ctx):
    runs = {loss: _comparison_runs(ctx, loss) for loss in ("logistic", "square")}
    return Figure("normalizations.png", "normalizations",
                  "The six weightings of the authors' comparison toy (d=n=10, seed 42) side by side: weights against "
                  f"GD iteration (log axis); left logistic loss (lr 0.5, {runs['logistic']['steps']:,} iterations), "
                  "right square loss (lr 0.1, 5,000 iterations)", {"runs": runs, "links": LINKS6})


def c27_check(ctx):
    res = _comparison_runs(ctx, "logistic")
    finals = {k: v["weights"][-1] for k, v in res["runs"].items()}
    gaps = {k: float(1 - finals[k].max()) for k in ("l1-norm", "l2-norm", "relu-norm")}
    hot = all(_one_hot(finals[k]) for k in gaps)
    s = finals["sum-norm"]
    leaves = bool(s.min() < 0 or s.max() > 1)
    horizon = (f"{res['steps']:,} GD iterations" + ("" if ctx.full else
               " (quick profile; the authors run 100,000 and the reference re-run reports the final state)"))
    ev = (f"authors' comparison toy (logistic, lr 0.5, seed 42), {horizon}: 1 - max weight = "
          + ", ".join(f"{k} {fmt(v, 2)}" for k, v in gaps.items())
          + f"; sum-norm weights range [{s.min():.2f}, {s.max():.2f}] (off the simplex)")
    details = {"one_minus_max": gaps, "sum_norm_range": [float(s.min()), float(s.max())],
               "final_weights": {k: v.tolist() for k, v in finals.items()}, "steps": res["steps"]}
    fig = _figure_normalizations(ctx)
    if hot and leaves:
        return Outcome("verified", ev, details=details, figures=(fig,))
    return Outcome("refuted", ev, details=details, figures=(fig,),
                   counterexample={"one_hot": hot, "sum_leaves_simplex": leaves, **gaps})


def c27_control(ctx, link="softmax", w=None):
    """``w``: the final weights to test (default: the softmax GD run of the comparison toy)."""
    w = _comparison_runs(ctx, "logistic")["runs"][link]["weights"][-1] if w is None else w
    if _one_hot(w):
        return Outcome("verified", f"{link} was accepted as exactly one-hot")
    return Outcome("refuted", f"the same one-hot test on softmax fails: max weight {w.max():.4f} (1 - max = "
                   f"{fmt(1 - w.max(), 3)} > 1e-3)", counterexample={"softmax_final_weights": w.tolist()})


def _c27_softmax_at_1e100():
    """Softmax weights of the same toy's exact (reduced) flow at t = 1e100: 1 - max s ~ 2(n-1)b/(n log^2 t) =
    3e-5 (claim 15's law), one-hot to within the test's 1e-3."""
    V, a, w = authors_comparison()
    r = logistic_reduced((V.T @ w)[None], a[None], np.array([w @ w]), np.array([0.0, 1e100]))
    return softmax(r["a"][0, -1])


C27 = Claim(
    id="C27",
    title="L1, L2, ReLU normalizations reach one-hot; Sum leaves the simplex (logistic toy)",
    statement=r"\varphi\in\{\ell_1,\ell_2,\mathrm{ReLU}\}:\ \max_i\varphi_i\to1;\quad "
              r"\varphi=a/\textstyle\sum a\ \notin\Delta",
    provenance="R",
    assumptions="authors' comparison toy: logistic loss, GD lr 0.5, d=n=10, V scale 0.1, seed 42",
    evidence_kind=_REPRO,
    check_description="GD with the authors' stream; one-hot within 1e-3 (the reference's 3 decimals); sum-norm "
                      "weights outside [0,1]",
    expected="verified",
    check=c27_check,
    control=Control("the same one-hot test on softmax must fail", c27_control),
    digest_number=27,
    group="alternatives",
    witness=Witness(description="the one-hot test on the softmax weights of the same toy's exact flow at t = 1e100 "
                                "(1 - max s ~ 3e-5 by the 1/log^2 t law)",
                    run=lambda ctx: c27_control(ctx, w=_c27_softmax_at_1e100())),
    engines=('gd', 'logistic.dell'),
)


def _max_norm_weight(w):
    """Largest weight after normalizing to sum 1 (sigmoid gates are not normalized)."""
    return float(np.max(w / np.sum(w)))


def _no_polarization(runs, bound=0.29):
    maxes = {k: _max_norm_weight(v["weights"][-1]) for k, v in runs.items()}
    return all(m <= bound for m in maxes.values()), maxes


def c28_check(ctx):
    res = _comparison_runs(ctx, "square")
    ok, maxes = _no_polarization(res["runs"])
    ev = ("authors' comparison toy (square loss, lr 0.1, 5,000 iterations, seed 42): largest normalized weight "
          + ", ".join(f"{k} {v:.3f}" for k, v in maxes.items()) + " (all <= 0.29)")
    if ok:
        return Outcome("verified", ev, details={"max_weight": maxes})
    return Outcome("refuted", ev, details={"max_weight": maxes}, counterexample={"max_weight": maxes})


def c28_control(ctx, loss="logistic", iterate=-1):
    """``iterate``: the recorded GD iterate whose weights are tested (default the last)."""
    runs = {k: {"weights": v["weights"][[iterate]]} for k, v in _comparison_runs(ctx, loss)["runs"].items()}
    ok, maxes = _no_polarization(runs)
    if ok:
        return Outcome("verified", f"the {loss} runs were accepted as non-polarized", details={"max_weight": maxes})
    k = max(maxes, key=maxes.get)
    return Outcome("refuted", f"the same test on the logistic-loss runs fails: {k} reaches max weight {maxes[k]:.3f}",
                   counterexample={"max_weight": maxes})


C28 = Claim(
    id="C28",
    title="Square-loss toy: no normalization polarizes substantially",
    statement=r"\text{square loss, 5000 GD steps: } \max_i\varphi_i/\textstyle\sum\varphi\le0.29\ \text{for all six}",
    provenance="R",
    assumptions="authors' comparison toy: square loss, GD lr 0.1, 5,000 iterations, seed 42",
    evidence_kind=_REPRO,
    check_description="GD with the authors' stream; largest normalized weight of each weighting <= 0.29",
    expected="verified",
    check=c28_check,
    control=Control("the same test on the logistic-loss runs must fail", c28_control),
    digest_number=28,
    group="alternatives",
    witness=Witness(description="the no-polarization test on the logistic runs' initial weights (iteration 0, "
                                "a(0) = 1 + 0.1 N: nothing has polarized yet)",
                    run=lambda ctx: c28_control(ctx, iterate=0)),
    engines=('gd',),
)


# ---- C29 KL toy -------------------------------------------------------------------------------------
#: reference re-run [R] of the authors' KL notebook (GD lr 0.1): iteration -> (KL, H, max sigma)
KL_REFERENCE = {1_000: (0.13, 1.96, 0.39), 10_000: (1.2e-3, 0.369, 0.937), 1_000_000: (4.8e-12, 0.2173, 0.9667)}


def _kl_run(ctx):
    def compute():
        V_auth, a0, p = authors_kl()
        V0 = V_auth.T  # the notebook's logits are V^T softmax(a): our V (classes x tokens) is its transpose
        t_end = 1e6
        times = np.concatenate([[0.0], log10_times(np.log10(t_end), 8, -2)])
        # stiff tail (exponential convergence): SciPy LSODA on the log clock, see stiff_flow
        sol = stiff_flow("kl", "softmax", V0, a0, p, times)
        V, a = sol["V"], sol["a"]
        s = softmax(a)
        q = softmax(np.einsum("tkn,tn->tk", V, s))
        kl = np.sum(p * (np.log(p) - np.log(q)), -1)
        theta = np.concatenate([V.reshape(len(times), -1), a], axis=1)
        return {"times": times, "s": s, "H": entropy(s), "kl": kl, "p": p, "t_end": t_end, "theta": theta}
    return ctx.memo("kl", compute)


#: the claim's headline numbers, "H freezes at about 0.217 (max sigma about 0.967)": "about" read as "rounds to
#: the printed digits", i.e. within half a unit of the last printed digit
C29_H, C29_MAX_S, C29_HALF_UNIT = 0.217, 0.967, 5e-4
#: finite parameters: |theta(t_end) - theta(t_end/10)| <= 1e-4 |theta(t_end)| (the same relative change as the
#: entropy test); a diverging theta (logistic loss: |V| ~ log t) moves by O(1/log t) per decade
C29_THETA_REL = 1e-4


def _finite_limit(times, theta):
    """Relative change of the parameters over the last decade, and whether they are finite and settled."""
    k = int(np.argmin(np.abs(times - times[-1] / 10)))
    theta = np.asarray(theta, float)
    change = float(np.linalg.norm(theta[-1] - theta[k]) / max(np.linalg.norm(theta[-1]), 1e-300))
    return bool(np.all(np.isfinite(theta)) and change <= C29_THETA_REL), change


def _frozen_partial(times, H, kl=None):
    """KL ~ 0, entropy frozen over the last decade (relative change <= 1e-4), strictly inside (0, log n)."""
    k = int(np.argmin(np.abs(times - times[-1] / 10)))
    change = abs(float(H[-1] - H[k]))
    ok = change <= 1e-4 * abs(float(H[-1])) and 0.05 < H[-1] < 0.9 * np.log(10)
    if kl is not None:
        ok = ok and abs(kl[-1]) <= 1e-9
    return ok, change


def _kl_cross_check(r):
    """Max |H_LSODA - H_numerics.simulate| at t = 1e3, 1e5, 1e6 (the explicit integrator takes ~1 min)."""
    V_auth, a0, p = authors_kl()
    marks = [0.0, 1e3, 1e5, 1e6]
    tr = numerics.simulate(numerics.Problem("kl", V_auth.T, a0, p), t_end=1e6, times=marks, backend="numpy",
                           freeze=False)
    H_ref = np.array([float(h) for h in tr.entropy])
    idx = [int(np.argmin(np.abs(r["times"] - m))) for m in marks]
    return float(np.max(np.abs(H_ref - r["H"][idx])))


def c29_check(ctx):
    r = _kl_run(ctx)
    ok_frozen, change = _frozen_partial(r["times"], r["H"], r["kl"])
    finite, theta_change = _finite_limit(r["times"], r["theta"])
    H_end, max_end = float(r["H"][-1]), float(r["s"][-1].max())
    headline = abs(H_end - C29_H) < C29_HALF_UNIT and abs(max_end - C29_MAX_S) < C29_HALF_UNIT
    ok = ok_frozen and finite and headline
    idx = {it: int(np.argmin(np.abs(r["times"] - 0.1 * it))) for it in KL_REFERENCE if 0.1 * it <= r["t_end"]}
    compare = {f"t={0.1 * it:g} (GD iteration {it:,})": {"KL": float(r["kl"][k]), "H": float(r["H"][k]),
                                                         "max_s": float(r["s"][k].max()),
                                                         "reference_GD": KL_REFERENCE[it]}
               for it, k in idx.items()}
    fig = Figure("flow_kl.png", "flow", "KL toy (authors' settings, seed 123), exact flow: weights and entropy against "
                 "t; the entropy freezes at a non-zero value once KL reaches 0",
                 {"times": r["times"], "weights": r["s"], "entropy": r["H"], "title": "KL / soft-target loss"})
    ev = (f"authors' KL toy (d=k=10, seed 123), exact flow (t = lr x iterations) to t={fmt(r['t_end'])}: |KL| = "
          f"{fmt(abs(r['kl'][-1]), 2)}, H frozen at {r['H'][-1]:.4f} (change over the last decade {fmt(change, 2)}), "
          f"max s = {r['s'][-1].max():.4f} (claim: about {C29_H} and {C29_MAX_S}, i.e. within {C29_HALF_UNIT:g}: "
          f"{'yes' if headline else 'NO'}); parameters finite and settled: |theta(1e6) - theta(1e5)|/|theta| = "
          f"{fmt(theta_change, 2)} (<= {C29_THETA_REL:g}: {'yes' if finite else 'NO'}); reference GD re-run at 1e6 "
          "iterations: H 0.2173, max 0.9667")
    details = {"compare": compare, "H_final": H_end, "max_s_final": max_end, "KL_final": float(r["kl"][-1]),
               "theta_rel_change_last_decade": theta_change, "theta_norm_final": float(np.linalg.norm(r["theta"][-1])),
               "headline_H_within_half_unit": headline, "parameters_settled": finite, "entropy_frozen": ok_frozen,
               "note": "our values follow the gradient flow; the reference re-run is GD with lr 0.1"}
    if ctx.full:
        diff = _kl_cross_check(r)
        details["numerics_simulate_max_abs_diff_H"] = diff
        ev += f"; numerics.simulate (DOP853) agrees on H to {fmt(diff, 2)}"
        if diff > 1e-8:
            return Outcome("inconclusive", ev, details=details, figures=(fig,),
                           reason=f"LSODA and numerics.simulate disagree on H by {diff:.2e} > 1e-8")
    if ok:
        return Outcome("verified", ev, details=details, figures=(fig,))
    return Outcome("refuted", ev, details=details, figures=(fig,),
                   counterexample={"H_final": H_end, "max_s_final": max_end, "KL_final": float(r["kl"][-1]),
                                   "entropy_change": change, "theta_rel_change": theta_change})


def c29_control(ctx):
    """The same frozen-partial and finite-parameter tests on the logistic toy (which keeps polarizing, its
    parameters diverging) must fail."""
    W, a0, w = authors_logistic_toy()
    t_end = 1e6
    times = np.array([0.0, t_end / 10, t_end])
    red = logistic_reduced((W.T @ w)[None], a0[None], np.array([w @ w]), times)
    H = entropy(softmax(red["a"][0]))
    ok, change = _frozen_partial(times, H)
    finite, theta_change = _finite_limit(times, np.concatenate([red["u"][0], red["a"][0]], axis=1))
    if ok and finite:
        return Outcome("verified", "the logistic run was accepted as frozen at finite parameters")
    return Outcome("refuted", f"the same tests on the authors' logistic toy fail: H moves by {fmt(change, 3)} over "
                   f"the last decade (H={H[-1]:.4f} at t={fmt(t_end)}); (u, a) moves by a relative "
                   f"{fmt(theta_change, 3)}", counterexample={"H": H.tolist(), "times": times.tolist(),
                                                            "theta_rel_change": theta_change})


C29 = Claim(
    id="C29",
    title="KL toy: KL -> 0 at finite parameters, entropy freezes (strong but partial)",
    statement=r"\mathrm{KL}\to0,\quad H(\sigma(a(t)))\to H_\infty\approx0.217>0",
    provenance="R",
    assumptions="authors' KL toy: d=k=10, V(0)=0.1N, a(0)=0, p=softmax(10 U[0,1]), seed 123",
    evidence_kind=_REPRO,
    check_description="exact flow (t = lr x iterations) to t=1e6; KL < 1e-9, relative entropy change over the "
                      "last decade <= 1e-4, "
        "0.05 < H < 0.9 log n; H and max s round to the claim's 0.217 and 0.967; parameters finite and settled "
        "(relative change over the last decade <= 1e-4)",
    expected="verified",
    check=c29_check,
    control=Control("the same frozen-partial and finite-parameter tests on the logistic toy must fail", c29_control),
    digest_number=29,
    group="alternatives",
    witness=Witness(description="the frozen-partial and finite-parameter tests on the KL run",
                    run=lambda ctx: c29_check(ctx), kind='weak',
                    weak_because="it re-runs the claim's own check: no input makes the control's statement hold "
                                 "(with the logistic loss du/dtau = b s never vanishes and tau grows like z / b "
                                 "without bound as the loss falls, so (u, a) moves by O(1/log t) per decade, and "
                                 "the limit is a vertex unless the maximum is tied), and no planted bug of the "
                                 "reduced system does: u stops only if the clock tau stops (which the integrator "
                                 "refuses), and stopping a instead (da/dtau = 0, or gamma J u) leaves u diverging "
                                 "or a(0) = 0 uniform"),
    engines=('stiff', 'reduced.gamma'),
)


# ---- C30 tied model --------------------------------------------------------------------------------
def _tied_gd(U0, a0, w, D):
    """The tied model's GD (lr 0.05, 10,000 steps, torch autograd in float64) from ``(U0, a0)`` with target ``w``."""
    import torch

    U = torch.tensor(U0, dtype=torch.float64, requires_grad=True)
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float64)
    lr = 0.05
    for _ in range(10_000):
        alpha = torch.softmax(U @ a, 0)
        loss = torch.nn.functional.softplus(-(wt @ (U @ alpha)))
        gU, ga = torch.autograd.grad(loss, (U, a))
        with torch.no_grad():
            U -= lr * gU
            a -= lr * ga
    with torch.no_grad():
        alpha = torch.softmax(U @ a, 0).numpy()
        norms = torch.linalg.norm(U, dim=0).numpy()
        final_loss = float(torch.nn.functional.softplus(-(wt @ (U @ torch.softmax(U @ a, 0)))))
    return {"D": D, "alpha": alpha, "norms": norms, "loss": final_loss, "a0": np.asarray(a0)}


def _tied_Ds(ctx):
    return (10, 20, 50, 100) if ctx.full else (10, 20)


def _tied_runs(ctx):
    return ctx.memo("tied", lambda: [_tied_gd(*authors_tied(D), D) for D in _tied_Ds(ctx)])


def _aligned_logits(a0, w):
    """The authors' initial logits re-ranked like the target: the largest a_i(0) on the largest w_i, the second
    on the second, ... (the same values, so the same spread)."""
    out = np.empty_like(a0)
    out[np.argsort(w)] = np.sort(a0)
    return out


def tied_aligned_runs(ctx):
    """C30's witness input: the authors' settings for each D with a(0) re-ranked like w (:func:`_aligned_logits`).
    At U(0) = I the logits' initial gradient is J(s) w, so the largest initial logit is then also the column the
    target pulls hardest: both favour the same column, under which the initial-logit rule names the winner."""
    def compute():
        rows = []
        for D in _tied_Ds(ctx):
            U0, a0, w = authors_tied(D)
            rows.append(_tied_gd(U0, _aligned_logits(a0, w), w, D))
        return rows
    return ctx.memo("tied_aligned", compute)


#: "grows about 6x" and "the other columns stay about 1": "about x" read as "rounds to x at one significant
#: digit", i.e. [5.5, 6.5) and [0.95, 1.5). The reference re-run [R] reports 1.0-1.08 for the other
#: columns; our re-run of the same stream finds up to 1.30 (second-largest column), reported as a finding.
C30_GROWTH = (5.5, 6.5)
C30_OTHERS = (0.95, 1.5)
C30_DIGEST_OTHERS = (1.0, 1.08)
#: which column a rule predicts to win: the check's (largest final attention) and the control's wrong rule
#: (largest initial logit a_i(0), i.e. largest initial attention since U(0) = I)
TIED_RULES = {"attention": lambda r: int(np.argmax(r["alpha"])), "initial_logit": lambda r: int(np.argmax(r["a0"]))}


def _tied_test(rows, *, rule="attention"):
    out = []
    for r in rows:
        m = TIED_RULES[rule](r)
        others = np.delete(r["norms"], m)
        o = {"D": r["D"], "max_alpha": float(r["alpha"].max()), "column": m,
             "attention_on_column": float(r["alpha"][m]),
             "column_norm_growth": float(r["norms"][m]),  # U(0) = I: every column starts at norm 1
             "others_norm_range": [float(others.min()), float(others.max())], "loss": r["loss"],
             "others_within_digest_range": bool(C30_DIGEST_OTHERS[0] - 0.005 <= others.min()
                                                and others.max() < C30_DIGEST_OTHERS[1] + 0.005)}
        o["ok"] = bool(o["attention_on_column"] > 0.99 and C30_GROWTH[0] <= o["column_norm_growth"] < C30_GROWTH[1]
                       and C30_OTHERS[0] <= others.min() and others.max() < C30_OTHERS[1])
        out.append(o)
    return all(o["ok"] for o in out), out


def c30_check(ctx):
    ok, out = _tied_test(_tied_runs(ctx))
    ev = ("tied model U s(Ua), logistic loss, authors' settings (lr 0.05, 10,000 GD steps, U(0)=I, seed 42): "
          + "; ".join(f"D={o['D']}: max s {o['max_alpha']:.4f}, winning column norm x{o['column_norm_growth']:.2f}, "
                      f"others {o['others_norm_range'][0]:.3f}-{o['others_norm_range'][1]:.3f}" for o in out)
          + f" (claim: about 6x, i.e. in [{C30_GROWTH[0]:g}, {C30_GROWTH[1]:g}), others about 1, i.e. in "
          f"[{C30_OTHERS[0]:g}, {C30_OTHERS[1]:g})). Finding: the reference re-run [R] reports others "
          f"{C30_DIGEST_OTHERS[0]:g}-{C30_DIGEST_OTHERS[1]:g}; this re-run of the same stream "
          + ("agrees" if all(o["others_within_digest_range"] for o in out) else
             "DISAGREES (largest other column up to " + f"{max(o['others_norm_range'][1] for o in out):.2f})"))
    details = {"rows": out, "finding_digest_others_range": list(C30_DIGEST_OTHERS),
               "finding_others_within_digest_range": all(o["others_within_digest_range"] for o in out)}
    if ok:
        return Outcome("verified", ev, details=details)
    return Outcome("refuted", ev, details=details, counterexample={"rows": [o for o in out if not o["ok"]]})


def c30_control(ctx, rows=None):
    """Wrong variant 'the winner is the column with the largest initial logit a_i(0)' (largest initial attention):
    the same test on the same runs, with the rule's column. ``rows``: the runs to test (default the authors')."""
    rows = _tied_runs(ctx) if rows is None else rows
    ok, out = _tied_test(rows, rule="initial_logit")
    held = [o["D"] for o in out if o["ok"]]
    if ok:
        return Outcome("verified", f"the initial-logit winner rule passes the growth test for D = "
                       f"{', '.join(str(o['D']) for o in out)}", details={"rows": out})
    o = next(o for o in out if not o["ok"])
    return Outcome("refuted", f"wrong winner rule argmax a(0) rejected: for D={o['D']} it names column {o['column']}, "
                   f"whose norm grows only x{o['column_norm_growth']:.3f} (attention {o['attention_on_column']:.3g}); "
                   f"the rule holds for D in {held or 'none'}", counterexample={"rows": out})


C30 = Claim(
    id="C30",
    title="Tied model: one column of U grows, attention polarizes",
    statement=(r"\beta=U\sigma(Ua):\ \max\sigma(Ua)>0.99,\ \|U^{(m)}\|\ \text{grows}\approx6\times,"
               r"\ \text{others}\approx1"),
    provenance="R",
    assumptions="authors' tied toy: logistic loss, lr 0.05, 10,000 GD steps, U(0)=I, a(0)=1+0.1N, seed 42",
    evidence_kind=_REPRO,
    check_description="torch autograd GD (float64); max s > 0.99, winning column norm in [5.5, 6.5) "
                      "(about 6x), others in "
        "[0.95, 1.5) (about 1); the reference re-run's 1.0-1.08 compared as a finding",
    expected="verified",
    check=c30_check,
    control=Control("wrong winner rule 'largest initial logit a_i(0)' must fail the same test on the same runs",
                c30_control),
    digest_number=30,
    group="alternatives",
    witness=Witness(description="the initial-logit rule on the authors' runs with a(0) re-ranked like w (the "
                                "largest a_i(0) on the largest w_i), built so that the head start and the target's "
                                "pull favour the same column",
                    run=lambda ctx: c30_control(ctx, rows=tied_aligned_runs(ctx))),
    engines=('tied.torch',),
)


CLAIMS = [C26, C27, C28, C29, C30]
