r"""Claims 11-14 and 16 (paper-notes#claims): the property searches of the logistic group.

Each search integrates the full $(V,a)$ flow of a batch of random instances with :func:`numerics.integrate_batch`
(torch float64, log clock) and tests orderings and monotonicity with the exact time derivatives
$\dot u=\gamma b s$, $\dot a=\gamma J(s)u$ ($u=V^\top\beta^*$, claim 7) evaluated at every grid point (a sign
test, not finite differences); the grid has 12 points per decade from $t=10^{-3}$. Counterexamples are re-checked
on an independent single-flow integration (:func:`numerics.simulate`). The instances and the shared wording of the
records live here too (:mod:`._logistic_laws` and :mod:`._claims_logistic` use them).
"""
from __future__ import annotations

import numpy as np

from ._claims_common import entropy, flow, fmt, log10_times, rng_for, softmax
from ..claim import Claim, Control, Outcome, Witness

#: wording shared by several claim records below
_UNI = "logistic loss; a(0) = 0 (uniform attention); distinct u_i(0) = <v_i(0), beta*>"
_UNI_SEARCH = (_UNI.replace("a(0) = 0", "a(0) = c 1") + "; c = 0, and c = 750 in one batch of 4")
_PS = "property search"
_AF = "asymptotic fit"

# ---------------------------------------------------------------------------------------
# random instances and derivatives


def _instances(ctx, salt, *, ns, per_n, uniform=True, d=3, a_scale=1.0, a_offset=0.0, aligned=False):
    """Random (V(0), beta*, a(0)) with u(0)=V(0)^T beta*; a(0) = a_offset 1 (uniform) or a_scale * N(0,1);
    ``aligned``: a(0) = a_scale u(0)/|u(0)| (non-uniform, ordered like u(0))."""
    rng = rng_for(ctx, salt)
    out = []
    for n in ns:
        v_scale = rng.uniform(0.05, 1.0, size=(per_n, 1, 1))
        V0 = v_scale * rng.normal(size=(per_n, d, n))
        w = rng.normal(size=(per_n, d)) * rng.uniform(0.5, 1.5, size=(per_n, 1))
        a0 = np.full((per_n, n), float(a_offset)) if uniform else a_scale * rng.normal(size=(per_n, n))
        u0 = np.einsum("bkn,bk->bn", V0, w)
        if aligned:
            a0 = a_scale * u0 / np.linalg.norm(u0, axis=-1, keepdims=True)
        out.append({"n": n, "V0": V0, "w": w, "a0": a0, "u0": u0, "b": np.einsum("bk,bk->b", w, w)})
    return out


def _search_times(ctx):
    return np.concatenate([[0.0], log10_times(40 if ctx.full else 20, 12, -3)])


def _run(inst, times, device="cpu"):
    r = flow("logistic", "softmax", inst["V0"], inst["a0"], inst["w"], times, device=device)
    u = np.einsum("bkdn,bd->bkn", r["V"], inst["w"])
    a, b = r["a"], inst["b"][:, None, None]
    s = softmax(a)
    z = np.sum(u * s, -1, keepdims=True)
    gamma = 1.0 / (1.0 + np.exp(z))
    du = gamma * b * s
    da = gamma * s * (u - z)  # J(s)u = s * (u - <u,s>)
    return {**inst, "times": times, "u": u, "a": a, "s": s, "du": du, "da": da, "z": z[..., 0]}


def _search_runs(ctx, salt, **kw):
    key = ("search", salt, tuple(sorted(kw.items())))

    def compute():
        return [_run(inst, _search_times(ctx), ctx.device) for inst in _instances(ctx, salt, **kw)]
    return ctx.memo(key, compute)


#: a(0) = c 1 is uniform attention for every c; one batch starts at c = 750, beyond float64's exp overflow
#: (709.78), so a softmax without its max shift cannot pass the searches (mutant ``softmax.no_max_shift``)
LARGE_UNIFORM_LOGIT = 750.0


def _uniform_runs(ctx):
    per_n = 40 if ctx.full else 12
    runs = _search_runs(ctx, 11, ns=(3, 4, 5, 6, 8), per_n=per_n)
    big = _search_runs(ctx, 111, ns=(4,), per_n=4, a_offset=LARGE_UNIFORM_LOGIT)
    return runs + big


def _nonuniform_runs(ctx):
    per_n = 40 if ctx.full else 12
    return _search_runs(ctx, 12, ns=(3, 4, 5, 6, 8), per_n=per_n, uniform=False)


def _order(run):
    """Token order by decreasing u(0), per instance: (B, n)."""
    return np.argsort(-run["u0"], axis=-1, kind="stable")


def _take(x, order):
    """x (B, K, n) re-indexed by the per-instance order (B, n)."""
    return np.take_along_axis(x, order[:, None, :], axis=-1)


def _instance_record(run, i):
    return {"n": int(run["n"]), "V0": run["V0"][i].tolist(), "beta_star": run["w"][i].tolist(),
            "a0": run["a0"][i].tolist(), "u0": run["u0"][i].tolist(), "b": float(run["b"][i])}


def _count(runs):
    return sum(len(r["u0"]) for r in runs)


# ---------------------------------------------------------------------------------------
# C11 no crossing


def _crossings(runs):
    """Smallest margin of the u- and a-orderings (t > 0) w.r.t. the order of u(0), with the worst case."""
    worst = (np.inf, None)
    for run in runs:
        order = _order(run)
        for name in ("u", "a"):
            x = _take(run[name][:, 1:], order)
            gaps = x[..., :-1] - x[..., 1:]  # consecutive in the u(0) ranking: must stay > 0
            m = gaps.min(axis=(1, 2))
            i = int(np.argmin(m))
            if m[i] < worst[0]:
                k, j = np.unravel_index(np.argmin(gaps[i]), gaps[i].shape)
                worst = (float(m[i]), {"instance": _instance_record(run, i), "quantity": name,
                                       "t": float(run["times"][1 + k]),
                                       "ranks": [int(j) + 1, int(j) + 2],
                                       "tokens": [int(order[i, j]), int(order[i, j + 1])],
                                       "values": [float(run[name][i, 1 + k, order[i, j]]),
                                                  float(run[name][i, 1 + k, order[i, j + 1]])]})
    return worst


def _ordering_outcome(runs, what, setting):
    margin, witness = _crossings(runs)
    n = _count(runs)
    if margin > 0:
        return Outcome("verified", f"{n} random instances ({setting}), n=3..8, t in [1e-3, "
                                   f"{fmt(runs[0]['times'][-1])}]: "
                       f"u and a keep the order of u(0) at every grid time; smallest gap {fmt(margin)}",
                       details={"instances": n, "smallest_gap": margin})
    return Outcome("refuted", f"{what}: order of u(0) broken ({setting}) at t={fmt(witness['t'])}",
                   details={"instances": n, "smallest_gap": margin}, counterexample=witness)


def c11_check(ctx):
    return _ordering_outcome(_uniform_runs(ctx), "no crossing", "a(0)=0")


def c11_control(ctx):
    return _ordering_outcome(_nonuniform_runs(ctx), "no crossing", "a(0) ~ N(0,1), assumption dropped")


def _two_token_aligned_runs(ctx):
    """n = 2 from a(0) = u(0)/|u(0)| (ordered like u(0)): d(u1-u2)/dt = gamma b (s1-s2) has the sign of a1-a2 and
    d(a1-a2)/dt = 2 gamma s1 s2 (u1-u2) that of u1-u2, so both gaps stay positive and grow: on these inputs the
    controls' statements (no crossing / growing gaps without the uniform start) really hold."""
    return _search_runs(ctx, 112, ns=(2,), per_n=8, uniform=False, a_scale=1.0, aligned=True)


def c11_witness(ctx):
    return _ordering_outcome(_two_token_aligned_runs(ctx), "no crossing", "n = 2, a(0) aligned with u(0)")


C11 = Claim(
    id="C11",
    family="no_crossing[logistic,softmax]",
    title="No crossing: the order of u(0) is kept by u(t) and a(t)",
    statement=r"u_{(1)}(t)>\dots>u_{(n)}(t),\ a_{(1)}(t)>\dots>a_{(n)}(t)\ (t>0)\ \text{in the order of }u(0)",
    provenance="A/D",
    assumptions=_UNI_SEARCH,
    evidence_kind=_PS,
    check_description="random instances n=3..8, reduced flow on a 12-per-decade grid from t=1e-3",
    expected="verified",
    check=c11_check,
    control=Control("the same test without the uniform-a(0) assumption (a(0) ~ N(0,1)) must find a crossing",
                c11_control),
    digest_number=11,
    group="logistic",
    witness=Witness(description="n = 2 from a(0) aligned with u(0), where the two gaps feed each other (no crossing "
                                "is proven there)", run=c11_witness),
    engines=('flow', 'softmax.shift'),
)


# ---------------------------------------------------------------------------------------
# C12 projection gaps grow

#: tolerance on a gap increment between two grid times: the batch integrator runs at rtol 1e-12 and the
#: global error of a state over the grid stays below ~1e-10 |u|; 1e-9 max(1, |u|) leaves a factor 10
GAP_TOL = 1e-9


def _gap_growth_outcome(runs, setting):
    """Projection gaps along the *integrated* trajectories: for consecutive ranks of u(0), the gap
    u_(i)(t) - u_(i+1)(t) must grow from each grid time to the next.

    An increment below ``-GAP_TOL max(1, |u|)`` is a shrinking gap (refuted, with the instance, the two
    times and the two gaps); increments within the tolerance are not resolved by the grid and are
    counted. Verified needs no shrinking increment and every gap larger at the last time than at the
    first grid time t > 0.
    """
    worst, witness = np.inf, None
    total = resolved = 0
    grew = True
    for run in runs:
        order = _order(run)
        u = _take(run["u"], order)
        gaps = u[..., :-1] - u[..., 1:]  # (B, K, n-1)
        inc = np.diff(gaps, axis=1)  # gap(t_{k+1}) - gap(t_k)
        tol = GAP_TOL * np.maximum(1.0, np.abs(u).max(axis=(1, 2)))[:, None, None]
        total += inc.size
        resolved += int((inc > tol).sum())
        grew = grew and bool(np.all(gaps[:, -1] - gaps[:, 1] > tol[:, 0]))
        rel = inc / tol
        i, k, j = np.unravel_index(np.argmin(rel), rel.shape)
        if rel[i, k, j] < worst:
            worst = float(rel[i, k, j])
            witness = {"instance": _instance_record(run, i), "ranks": [int(j) + 1, int(j) + 2],
                       "tokens": [int(order[i, j]), int(order[i, j + 1])],
                       "t1": float(run["times"][k]), "t2": float(run["times"][k + 1]),
                       "gap_t1": float(gaps[i, k, j]), "gap_t2": float(gaps[i, k + 1, j]),
                       "tolerance": float(tol[i, 0, 0])}
    n = _count(runs)
    details = {"instances": n, "increments": total, "resolved_increments": resolved,
               "smallest_increment_over_tolerance": worst, "tolerance": f"{GAP_TOL:g} max(1, |u|)"}
    if worst >= -1.0 and grew:
        return Outcome("verified", f"{n} instances ({setting}): every consecutive projection gap "
                                   f"u_(i) - u_(i+1) of the "
                       f"integrated trajectories grows from grid time to grid time ({resolved}/{total} increments "
                       f"above the tolerance {GAP_TOL:g} max(1,|u|), none below minus it) and is larger at "
                       f"t={fmt(runs[0]['times'][-1])} than at t=1e-3", details=details)
    if worst >= -1.0:
        return Outcome("inconclusive", f"no shrinking gap ({setting}), but not every gap grew by more than the "
                       "tolerance", details=details, reason="growth not resolved by the grid for some gap")
    return Outcome("refuted", f"a projection gap shrinks ({setting}): ranks {witness['ranks']} from "
                   f"{fmt(witness['gap_t1'], 8)} at t={fmt(witness['t1'])} to {fmt(witness['gap_t2'], 8)} at "
                   f"t={fmt(witness['t2'])}", details=details, counterexample=witness)


def c12_check(ctx):
    return _gap_growth_outcome(_uniform_runs(ctx), "a(0) uniform")


def c12_control(ctx):
    return _gap_growth_outcome(_nonuniform_runs(ctx), "a(0) ~ N(0,1), assumption dropped")


C12 = Claim(
    id="C12",
    title="Projection gaps grow",
    statement=r"i<j\Rightarrow \frac{d}{dt}(u_i-u_j)=\gamma b(s_i-s_j)>0",
    provenance="A/D",
    assumptions=_UNI_SEARCH,
    evidence_kind=_PS,
    check_description="the gaps u_(i) - u_(i+1) of the integrated trajectories increase between consecutive "
        "grid times (tolerance 1e-9 max(1,|u|)) and over the whole horizon",
    expected="verified",
    check=c12_check,
    control=Control("the same test from non-uniform a(0) must find a shrinking gap", c12_control),
    digest_number=12,
    group="logistic",
    witness=Witness(description="n = 2 from a(0) aligned with u(0), where the gap u1 - u2 provably grows",
                    run=lambda ctx: _gap_growth_outcome(_two_token_aligned_runs(ctx), "n = 2, a(0) aligned")),
    engines=('flow', 'softmax.shift'),
)


# ---------------------------------------------------------------------------------------
# C13 / C14 logit gaps


def _pair_rates(run, pairs):
    """min over grid (t>0) of d/dt(a_(i) - a_(j)) for rank pairs; returns (B, len(pairs)) minima and argmins."""
    order = _order(run)
    da = _take(run["da"][:, 1:], order)
    rates = np.stack([da[..., i] - da[..., j] for i, j in pairs], axis=-1)  # (B, K, P)
    return rates


def _logit_gap_search(runs, *, top_only: bool = False, pairs_of=None):
    """Most negative d/dt(a_i - a_j) over rank pairs i<j: top-vs-others (top_only), pairs of non-top
    tokens, or ``pairs_of(n)`` (0-based ranks)."""
    worst, witness = np.inf, None
    for run in runs:
        n = run["n"]
        if pairs_of is not None:
            pairs = pairs_of(n)
        else:
            pairs = [(0, j) for j in range(1, n)] if top_only else \
                [(i, j) for i in range(1, n) for j in range(i + 1, n)]
        if not pairs:
            continue
        rates = _pair_rates(run, pairs)
        m = rates.min(axis=(1, 2))
        i = int(np.argmin(m))
        if m[i] < worst:
            k, p = np.unravel_index(np.argmin(rates[i]), rates[i].shape)
            worst = float(m[i])
            witness = (run, i, int(k) + 1, pairs[p])
    return worst, witness


def _monotone_extremes(runs):
    """min d a_top/dt and max d a_bottom/dt over all instances and grid times."""
    top_min, bot_max = np.inf, -np.inf
    for run in runs:
        order = _order(run)
        da = _take(run["da"], order)
        top_min = min(top_min, float(da[..., 0].min()))
        bot_max = max(bot_max, float(da[..., -1].max()))
    return top_min, bot_max


def _confirm_gap_decrease(run, i, k, pair):
    """Re-check a decreasing gap on an independent single-flow integration (numerics.simulate, numpy)."""
    order = _order(run)[i]
    ti, tj = int(order[pair[0]]), int(order[pair[1]])
    t_mid = float(run["times"][k])
    t1, t2 = t_mid / 1.5, t_mid * 1.5
    times = np.array([0.0, t1, t_mid, t2])
    sol = flow("logistic", "softmax", run["V0"][i][None], run["a0"][i][None], run["w"][i][None], times)
    a = sol["a"][0]
    gaps = a[:, ti] - a[:, tj]
    return {"instance": _instance_record(run, i), "ranks": [pair[0] + 1, pair[1] + 1], "tokens": [ti, tj],
            "t1": t1, "t2": t2, "gap_t1": float(gaps[1]), "gap_t2": float(gaps[3]),
            "d_dt_gap_at_t": float(run["da"][i, k, ti] - run["da"][i, k, tj]), "t": t_mid,
            "decreased": bool(gaps[3] < gaps[1])}


def _trajectory_monotone(runs):
    """The integrated logits themselves: smallest increment (over the tolerance, as in claim 12) of a_top - a_j
    and of a_top, and largest of a_bottom, between consecutive grid times; with the worst case."""
    worst, witness = np.inf, None
    for run in runs:
        order = _order(run)
        a = _take(run["a"], order)
        tol = GAP_TOL * np.maximum(1.0, np.abs(a).max(axis=(1, 2)))[:, None, None]
        series = {"a_top - a_j": a[..., :1] - a[..., 1:], "a_top": a[..., :1], "-a_bottom": -a[..., -1:]}
        for name, x in series.items():
            rel = np.diff(x, axis=1) / tol
            i, k, j = np.unravel_index(np.argmin(rel), rel.shape)
            if rel[i, k, j] < worst:
                worst = float(rel[i, k, j])
                witness = {"instance": _instance_record(run, i), "quantity": name, "rank_j": int(j) + 2,
                           "t1": float(run["times"][k]), "t2": float(run["times"][k + 1]),
                           "values": [float(x[i, k, j]), float(x[i, k + 1, j])]}
    return worst, witness


def c13_check(ctx):
    runs = _uniform_runs(ctx)
    worst, witness = _logit_gap_search(runs, top_only=True)
    top_min, bot_max = _monotone_extremes(runs)
    traj_worst, traj_witness = _trajectory_monotone(runs)
    n = _count(runs)
    # at t=0 every rate is exactly 0 (s uniform): 1e-15 absorbs the rounding of the derivative formula
    ok_rates = worst > -1e-15 and top_min > -1e-15 and bot_max < 1e-15
    # the integrated trajectories: no increment below -GAP_TOL max(1, |a|) (the tolerance of claim 12)
    ok_traj = traj_worst >= -1.0
    details = {"instances": n, "min_rate_top_minus_j": worst, "min_da_top": top_min, "max_da_bottom": bot_max,
               "trajectory_smallest_increment_over_tolerance": traj_worst}
    if ok_rates and ok_traj:
        return Outcome("verified", f"{n} instances (a(0) uniform, n=3..8): min d/dt(a_top - a_j) = {fmt(worst)}, "
                       f"min d a_top/dt = {fmt(top_min)}, max d a_bottom/dt = {fmt(bot_max)} over all grid times; "
                       f"along the integrated trajectories a_top - a_j and a_top never drop, a_bottom never rises "
                       f"(tolerance {GAP_TOL:g} max(1,|a|))", details=details)
    if not ok_traj:
        return Outcome("refuted", f"along an integrated trajectory {traj_witness['quantity']} drops from "
                       f"{fmt(traj_witness['values'][0], 8)} to {fmt(traj_witness['values'][1], 8)} between "
                       f"t={fmt(traj_witness['t1'])} and {fmt(traj_witness['t2'])}", details=details,
                       counterexample=traj_witness)
    run, i, k, pair = witness
    return Outcome("refuted", f"top-vs-others gap decreases: rate {fmt(worst)}", details=details,
                   counterexample={"instance": _instance_record(run, i), "t": float(run["times"][k]),
                                   "ranks": [pair[0] + 1, pair[1] + 1], "rate": worst})


def _runner_up_outcome(runs, setting):
    """Wrong variant of claim 13: 'the runner-up's gaps a_(2) - a_j grow too (every j > 2)'; same rate test."""
    worst, witness = _logit_gap_search(runs, pairs_of=lambda n: [(1, j) for j in range(2, n)])
    n = _count(runs)
    if worst > -1e-15:
        return Outcome("verified", f"{n} instances ({setting}): the runner-up's gaps a_(2) - a_j never decreased "
                       f"(min rate {fmt(worst)})", details={"instances": n, "min_rate": worst})
    run, i, k, pair = witness
    return Outcome("refuted", f"wrong variant 'a_(2) - a_j grows for every j > 2' fails ({setting}): rate {fmt(worst)} "
                   f"for ranks {pair[0] + 1},{pair[1] + 1} at t={fmt(run['times'][k])} (n={run['n']})",
                   details={"instances": n, "min_rate": worst},
                   counterexample={"instance": _instance_record(run, i), "t": float(run["times"][k]),
                                   "ranks": [pair[0] + 1, pair[1] + 1], "rate": worst})


def c13_control(ctx):
    """Wrong variant 'the runner-up's logit gaps grow as the top's do' -- same derivative sign test, same runs."""
    return _runner_up_outcome(_uniform_runs(ctx), "a(0) uniform, n=3..8")


def c13_witness(ctx):
    """Inputs under which the runner-up variant holds: every token but the top one has the same value vector
    (v_j(0) = v_2(0), j >= 2), so by symmetry a_2(t) = ... = a_n(t) and the runner-up's gaps stay 0."""
    def compute():
        inst = _instances(ctx, 113, ns=(4,), per_n=6)[0]
        V0, top = inst["V0"].copy(), np.argmax(inst["u0"], axis=-1)
        for b in range(len(V0)):
            others = [j for j in range(V0.shape[-1]) if j != top[b]]
            V0[b][:, others] = V0[b][:, others[:1]]
        u0 = np.einsum("bkn,bk->bn", V0, inst["w"])
        return [_run({**inst, "V0": V0, "u0": u0}, _search_times(ctx), ctx.device)]
    return _runner_up_outcome(ctx.memo("c13-tied", compute), "a(0) uniform, n = 4, tokens 2..4 with equal v_j(0)")


C13 = Claim(
    id="C13",
    family="top_gap[logistic,softmax]",
    title="Top-versus-others logit gaps grow; a_top non-decreasing, a_bottom non-increasing",
    statement=r"\frac{d}{dt}(a_{\rm top}-a_j)\ge0\ \forall j,\quad \dot a_{\rm top}\ge0,\quad \dot a_{\rm bottom}\le0",
    provenance="D",
    assumptions=_UNI_SEARCH,
    evidence_kind=_PS,
    check_description="sign of the exact rates at every grid point, and the increments of the integrated "
        "logits between grid times (tolerance 1e-9 max(1,|a|))",
    expected="verified",
    check=c13_check,
    control=Control("the wrong variant 'the runner-up's gaps a_(2) - a_j grow too' must be violated", c13_control),
    digest_number=13,
    group="logistic",
    witness=Witness(description="tokens 2..n with equal value vectors: by symmetry the runner-up's gaps stay 0",
                    run=c13_witness),
    engines=('flow', 'softmax.shift'),
)


def _c14_runs(ctx):
    per_n = 30 if ctx.full else 8
    return _search_runs(ctx, 14, ns=(4, 5, 6), per_n=per_n)


def c14_check(ctx):
    """The all-pairs variant 'every pair's logit gap grows' (all i<j) [D]: searched for a decreasing non-top gap,
    n>=4."""
    runs = _c14_runs(ctx)
    worst, witness = _logit_gap_search(runs, top_only=False)
    n = _count(runs)
    if worst >= -1e-12:
        return Outcome("verified", f"no decreasing non-top logit gap in {n} instances (min rate {fmt(worst)})",
                       details={"instances": n, "min_rate": worst})
    run, i, k, pair = witness
    cex = _confirm_gap_decrease(run, i, k, pair)
    if not cex["decreased"]:
        return Outcome("inconclusive", "the search found a negative rate that the full-flow re-check did not confirm",
                       details={"instances": n, "min_rate": worst}, reason=f"re-check: {cex}")
    frac = sum(int((_pair_rates(r, [(i2, j2) for i2 in range(1, r['n']) for j2 in range(i2 + 1, r['n'])])
                    .min(axis=(1, 2)) < -1e-12).sum()) for r in runs)
    return Outcome(
        "refuted",
        f"counterexample (n={cex['instance']['n']}, a(0)=0): the gap a_(rank {cex['ranks'][0]}) - "
        f"a_(rank {cex['ranks'][1]}) "
        f"drops from {fmt(cex['gap_t1'], 8)} at t={fmt(cex['t1'])} to {fmt(cex['gap_t2'], 8)} at t={fmt(cex['t2'])} "
        f"(single full (V,a) flow, numpy DOP853, rtol 1e-12); {frac}/{n} searched instances have such a pair",
        details={"instances": n, "instances_with_decreasing_nontop_gap": frac, "min_rate": worst},
        counterexample=cex)


def _top_gap_outcome(runs, setting):
    worst, witness = _logit_gap_search(runs, top_only=True)
    n = _count(runs)
    if worst >= -1e-15:
        return Outcome("verified", f"the same search on top-vs-others pairs finds no decrease in {n} instances "
                       f"({setting}; min rate {fmt(worst)})", details={"instances": n, "min_rate": worst})
    run, i, k, pair = witness
    return Outcome("refuted", f"top-vs-others gap decreased at rate {fmt(worst)} ({setting})",
                   counterexample={"instance": _instance_record(run, i), "t": float(run["times"][k])})


def c14_control(ctx):
    """The same search on the true statement (top versus every other token) must find nothing."""
    return _top_gap_outcome(_c14_runs(ctx), "a(0)=0")


def c14_witness(ctx):
    """The same top-vs-others search finds a decrease once a(0) is not uniform (claim 13's assumption dropped)."""
    return _top_gap_outcome(_nonuniform_runs(ctx), "a(0) ~ N(0,1)")


C14 = Claim(
    id="C14",
    title="The all-pairs variant 'every pair's logit gap grows' (all i<j) is false",
    statement=r"\text{claimed: } i<j\Rightarrow a_i-a_j\ \text{increasing (a stronger variant of claim 13, stated and "
        r"refuted for this project [D], not the paper's statement)}",
    provenance="D",
    assumptions=_UNI + "; n >= 4",
    evidence_kind=_PS,
    check_description="search for a decreasing gap between two non-top tokens; confirm on the full (V,a) flow",
    expected="refuted",
    check=c14_check,
    control=Control("the same search on the true top-vs-others statement must find no decrease", c14_control),
    digest_number=14,
    group="logistic",
    witness=Witness(description="the top-vs-others search on non-uniform a(0) ~ N(0,1) runs",
                    run=c14_witness, kind='strong'),
    engines=('flow',),
)



# ---- C16 ---------------------------------------------------------------------------------
def _entropy_rates(run):
    """dH/dt = -<log s, J(s) da/dt> at every grid point, with a scale for the rounding test."""
    s, da = run["s"], run["da"]
    ds = s * (da - np.sum(s * da, -1, keepdims=True))
    logs = np.log(s)
    terms = -logs * ds
    return terms.sum(-1), np.abs(terms).sum(-1)


def _entropy_search(runs):
    """Instances whose entropy increases somewhere (rate above rounding), with the worst one."""
    count, worst, witness = 0, -np.inf, None
    for run in runs:
        rate, scale = _entropy_rates(run)
        # 1e-12 relative to sum |log s_i ds_i|: far above rounding, far below real increases
        viol = rate > 1e-12 * np.maximum(scale, 1e-300)
        count += int(viol.any(axis=1).sum())
        rel = np.where(scale > 0, rate / np.maximum(scale, 1e-300), 0.0)
        i, k = np.unravel_index(np.argmax(rel), rel.shape)
        if rel[i, k] > worst:
            worst = float(rel[i, k])
            witness = {"instance": _instance_record(run, i), "t": float(run["times"][k]),
                       "dH_dt": float(rate[i, k]), "H": float(entropy(run["s"][i, k])),
                       "s": run["s"][i, k].tolist()}
    return count, worst, witness


def c16_check(ctx):
    uni, non = _uniform_runs(ctx), _nonuniform_runs(ctx)
    cu, wu, _ = _entropy_search(uni)
    cn, wn, witness = _entropy_search(non)
    details = {"uniform_instances": _count(uni), "uniform_with_increase": cu,
               "nonuniform_instances": _count(non), "nonuniform_with_increase": cn}
    if cu == 0 and cn > 0:
        return Outcome("verified", f"dH/dt <= 0 at every grid time in {_count(uni)}/{_count(uni)} "
                                   f"instances from a(0)=0; "
                       f"from a(0)~N(0,1) the entropy increases somewhere in {cn}/{_count(non)} instances "
                       f"(e.g. dH/dt={fmt(witness['dH_dt'])} at t={fmt(witness['t'])})",
                       details={**details, "nonuniform_example": witness})
    if cu > 0:
        _, _, w = _entropy_search(uni)
        return Outcome("refuted", f"entropy increased from uniform a(0) in {cu} instances", details=details,
                       counterexample=w)
    return Outcome("inconclusive", "no non-monotone example found from non-uniform a(0)", details=details,
                   reason="the second half of the claim (non-monotone in general) was not exhibited")


#: scale of the near-uniform starts of the claim-16 control: a(0) = 0.01 N(0,1) is 1% away from uniform
NEAR_UNIFORM = 0.01


def _near_uniform_runs(ctx, *, aligned=False):
    per_n = 40 if ctx.full else 8
    return _search_runs(ctx, 161, ns=(3, 4, 5, 6, 8), per_n=per_n, uniform=False, a_scale=NEAR_UNIFORM,
                        aligned=aligned)


def _monotone_entropy_outcome(runs, setting):
    """'dH/dt <= 0 at every grid time' by the same sign test as the check (claim 16, first half)."""
    cn, _, witness = _entropy_search(runs)
    n = _count(runs)
    if cn == 0:
        return Outcome("verified", f"dH/dt <= 0 at every grid time in {n}/{n} instances ({setting})",
                       details={"instances": n})
    return Outcome("refuted", f"'H non-increasing' fails ({setting}) in {cn}/{n} instances: dH/dt = "
                   f"{fmt(witness['dH_dt'])} > 0 at t={fmt(witness['t'])}", details={"instances": n,
                   "with_increase": cn}, counterexample=witness)


def c16_control(ctx):
    """Wrong variant 'the uniform start can be relaxed to a near-uniform one': from a(0) = 0.01 N(0,1) the
    same sign test must find an entropy increase (a near miss, 100x closer to uniform than the check's
    second half)."""
    return _monotone_entropy_outcome(_near_uniform_runs(ctx), f"a(0) = {NEAR_UNIFORM:g} N(0,1)")


def c16_witness(ctx):
    """The same statement holds from near-uniform starts aligned with u(0): a(0) = 0.01 u(0)/|u(0)|."""
    return _monotone_entropy_outcome(_near_uniform_runs(ctx, aligned=True),
                                     f"a(0) = {NEAR_UNIFORM:g} u(0)/|u(0)|, aligned")


C16 = Claim(
    id="C16",
    title="Entropy is non-increasing from uniform a(0), not in general",
    statement=r"a(0)=0\Rightarrow\frac{d}{dt}H(\sigma(a))\le0;\ \text{not monotone for general }a(0)",
    provenance="D, empirical",
    assumptions="logistic loss",
    evidence_kind=_PS,
    check_description="sign of dH/dt = -<log s, J(s) da/dt> at every grid point",
    expected="verified",
    check=c16_check,
    control=Control("near miss 'H non-increasing also from a near-uniform a(0) = 0.01 N(0,1)' must be violated",
                c16_control),
    digest_number=16,
    group="logistic",
    witness=Witness(description="the sign test from near-uniform starts aligned with u(0)",
                    run=c16_witness, kind='strong'),
    engines=('flow', 'softmax.shift'),
)
