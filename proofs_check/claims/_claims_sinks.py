r"""Attention sinks beyond the paper: the sink slot of softmax1, and predictions of neighbouring theories.

Every statement here is derived for this project [D]; each names the outside source whose
prediction it tests. The paper's own claims are C01-C33.

* **SINK1** [D] (normalization: E. Miller, 2023): softmax1 is softmax over one extra token whose
  logit and value are frozen at 0, and the two gradient flows coincide (exact; SymPy).
* **MARGIN** [D] (tests the max-margin token-selection picture, arXiv 2306.13596): under the
  logistic loss, from a uniform $a(0)$, the direction of $a(t)-\bar a(t)\mathbf 1$ tends to that of
  $e_{i^*}-\mathbf 1/n$ ($i^*=\arg\max u(0)$); the rate is estimated, not assumed.

Figures are drawn by :mod:`._figures_curves` (kind ``curves``).
"""
from __future__ import annotations

import math

import numpy as np

from ..claim import Claim, Control, Figure, Outcome, Witness


# ---- SINK1 ---------------------------------------------------------------------------------------
def _sink1_sizes(ctx):
    if ctx.full:
        return tuple((n, d) for n in range(2, 7) for d in (1, 2))
    return ((2, 1), (3, 1), (3, 2), (4, 1))


def sink1_check(ctx):
    from theorems.sinks import sink1_proofs

    results = ctx.memo(("sink1", _sink1_sizes(ctx)), lambda: sink1_proofs(_sink1_sizes(ctx)))
    bad = [(label, r) for label, r in results if r.status != "proved"]
    details = {"proved": [label for label, r in results if r.status == "proved"]}
    if bad:
        label, r = bad[0]
        if r.status == "disproved":
            return Outcome("refuted", f"SINK1: {label} is disproved", details,
                           counterexample={"case": label, "point": r.counterexample, "detail": r.detail})
        return Outcome("inconclusive", f"SINK1: {label} is {r.status}", details, reason=r.detail or r.status)
    sizes = ", ".join(f"(n={n}, d={d})" for n, d in _sink1_sizes(ctx))
    return Outcome("verified", f"softmax1(a) = softmax((0, a))[1:], the outputs and the gradients in (V, a) "
                   f"of both models agree (square and logistic losses): {len(results)} exact proofs at {sizes}",
                   details)


def sink1_control(ctx):
    from theorems.sinks import sink1_control as control, sink1_witness as witness

    res = control()
    wit = witness()
    details = {"control": res.status, "witness_V_zero": wit.status}
    if res.status == "disproved":
        return Outcome("refuted", "with the sink's logit trained, da_0/dt = -dL/da_0 is not identically 0 "
                       "(the (n+1)-token flow moves the sink, so it is not the softmax1 flow)", details,
                       counterexample={"point": res.counterexample, "detail": res.detail})
    if res.status == "proved":
        return Outcome("verified", "dL/da_0 = 0 identically", details)
    return Outcome("inconclusive", "dL/da_0 undecided", details, reason=res.detail or res.status)


def sink1_witness(ctx):
    """The control's statement really holds when every value column is 0 (V = 0): same prover."""
    from theorems.sinks import sink1_witness as witness

    res = witness()
    if res.status == "proved":
        return Outcome("verified", "with V = 0, dL/da_0 = 0 identically: the control's statement holds", {})
    return Outcome("refuted", f"with V = 0 the prover says {res.status}", {},
                   counterexample={"detail": res.detail})


# ---- MARGIN --------------------------------------------------------------------------------------
#: 1 - cos below this is float64 round-off of a cosine of unit vectors (about 100 eps), i.e. the limit itself
ROUNDOFF_GAP = 1e-12


#: output times of MARGIN (physical time t; the reduced system runs in its internal clock)
def _margin_times(ctx):
    k = np.arange(2, 101, 2 if ctx.full else 7)
    return [f"1e{int(x)}" for x in k]


def _margin_instances(ctx, salt=2306):
    """Seeded u(0) (distinct entries), uniform a(0) = 0, b = 1; n = 3, 4 (and 6 in the full profile)."""
    from ._claims_common import rng_for

    rng = rng_for(ctx, salt)
    ns = (3, 4, 6) if ctx.full else (3, 4)
    return [(np.round(rng.normal(size=n), 3).tolist(), [0.0] * n, 1.0) for n in ns]


def _centered_cosine(a, direction):
    x = np.asarray(a, float) - np.mean(a)
    e = np.asarray(direction, float) - np.mean(direction)
    return float(x @ e / (np.linalg.norm(x) * np.linalg.norm(e)))


def _margin_runs(ctx, instances):
    from numerics import reduced_logistic

    times = _margin_times(ctx)

    def run():
        out = []
        for u0, a0, b in instances:
            tr = reduced_logistic(u0, a0, b, t_end=times[-1], times=times, backend="numpy")
            out.append({"u0": u0, "t": [float(t) for t in tr.times], "a": [[float(x) for x in row] for row in tr.a]})
        return out

    return ctx.memo(("margin", tuple(map(tuple, (i[0] for i in instances))), tuple(times)), run)


def _margin_verdict(runs, direction_of, *, what):
    """Limit of the centered direction: 1 - cos decreases along the grid, and its log-log slope
    against log t (the rate exponent p in 1 - cos ~ C (log t)^-p, fitted on the last half) is
    negative with |p| > 0.25, i.e. it tends to 0 (a direction that is not the limit stalls at
    1 - cos > 0, slope -> 0). A run whose 1 - cos stays below :data:`ROUNDOFF_GAP` is at its limit
    from the start (e.g. by symmetry)."""
    rows, bad = [], None
    for r in runs:
        target = direction_of(r["u0"])
        gap = np.array([1.0 - _centered_cosine(a, target) for a in r["a"]])
        logt = np.log(np.array(r["t"]))
        half = len(gap) // 2
        p = -float(np.polyfit(np.log(logt[half:]), np.log(np.maximum(gap[half:], 1e-300)), 1)[0])
        decreasing = bool(np.all(np.diff(gap) < 0))
        at_limit = bool(np.all(gap < ROUNDOFF_GAP))
        rows.append({"u0": r["u0"], "n": len(r["u0"]), "gap_first": float(gap[0]), "gap_last": float(gap[-1]),
                     "rate_exponent_p": p, "decreasing": decreasing,
                     "log10_t": np.log10(r["t"]).tolist(), "gap": gap.tolist()})
        rows[-1]["at_limit"] = at_limit
        if not at_limit and (not decreasing or p < 0.25) and bad is None:
            bad = rows[-1]
    details = {"instances": [{k: v for k, v in row.items() if k not in ("log10_t", "gap")} for row in rows],
               "rule": "1 - cos decreasing on the grid and rate exponent p > 0.25 on its last half, "
                        "or 1 - cos < 1e-12 throughout (already the limit)"}
    fig = Figure("margin_direction.png", "curves",
                 f"{what}: 1 - cos between a(t) - mean(a) and the predicted direction",
                 data={"panels": [{"xlabel": "t", "ylabel": "1 - cos", "xscale": "log", "yscale": "log",
                                   "series": [{"x": (10.0 ** np.asarray(row["log10_t"])).tolist(), "y": row["gap"],
                                               "label": f"n={row['n']}, p={row['rate_exponent_p']:.2f}"}
                                              for row in rows]}]})
    if bad is not None:
        return Outcome("refuted", f"{what}: for u(0) = {bad['u0']} 1 - cos goes {bad['gap_first']:.3g} -> "
                       f"{bad['gap_last']:.3g} (rate exponent {bad['rate_exponent_p']:.3f}, "
                       f"decreasing: {bad['decreasing']})", details,
                       counterexample={"u0": bad["u0"], "a0": "uniform 0", "b": 1, "t": "1e2..1e100",
                                       "gap_last": bad["gap_last"], "p": bad["rate_exponent_p"]},
                       figures=(fig,))
    ps = ", ".join(f"{row['rate_exponent_p']:.2f}" for row in rows)
    return Outcome("verified", f"{what}: 1 - cos tends to 0 on t = 1e2..1e100 for all {len(rows)} instances "
                   f"({sum(r['at_limit'] for r in rows)} at the round-off limit throughout, the others decreasing), "
                   f"to {max(row['gap_last'] for row in rows):.2e} at t = 1e100; rate 1 - cos ~ (log t)^-p with "
                   f"p = {ps} (fitted, not assumed; meaningless for runs at the limit)", details, figures=(fig,))


def _vertex_direction(u0):
    n = len(u0)
    return [1.0 - 1.0 / n if i == int(np.argmax(u0)) else -1.0 / n for i in range(n)]


def _margin_exponents(runs):
    """The measured exponent of (1 - cos) ybar^2 against log t on the last half of the grid (ybar: the losers' mean
    gap a_top - a_j, which removes the derived (log log t)^-2 factor), next to the derived 4/n."""
    out = []
    for r in runs:
        u0, n = r["u0"], len(r["u0"])
        top = int(np.argmax(u0))
        e = _vertex_direction(u0)
        gap = np.array([1.0 - _centered_cosine(a, e) for a in r["a"]])
        ybar = np.array([np.mean([a[top] - a[j] for j in range(n) if j != top]) for a in r["a"]])
        logt = np.log(np.array(r["t"]))
        half = len(gap) // 2
        q = np.log(np.maximum(gap[half:], 1e-300) * ybar[half:] ** 2)
        p = -float(np.polyfit(np.log(logt[half:]), q, 1)[0])
        out.append({"u0": u0, "n": n, "exponent_measured": p, "exponent_derived": 4.0 / n})
    return out


def margin_check(ctx):
    """The derived limit direction (theorems.asymptotics.margin_law), with the derived exponent 4/n of the rate
    next to the measured one (a finding: the constant is not derived, see the law's no_law)."""
    from theorems.asymptotics import margin_law

    runs = _margin_runs(ctx, _margin_instances(ctx))
    out = _margin_verdict(runs, _vertex_direction, what="direction e_top - 1/n")
    if out.verdict != "verified":
        return out
    law = margin_law("logistic", "softmax").to_json()
    exps = _margin_exponents(runs)
    details = {**out.details, "law": law, "rate_exponents": exps,
               "rate_note": "a finding, not a pass condition: 1 - cos ~ D (log t)^(-4/n) (log log t)^-2 is derived "
                            "up to D, which is not (the law's no_law); the corrections are powers of 1/log t slower "
                            "than a series, so the exponent is not settled at t = 1e100"}
    return Outcome("verified", out.evidence + "; derived rate 1 - cos ~ D (log t)^(-4/n) (log log t)^-2 (D not "
                   "derived): with the (log log t)^-2 factor removed the fitted exponents are "
                   + ", ".join(f"{x['exponent_measured']:.2f} (4/n = {x['exponent_derived']:.2f})" for x in exps),
                   details, figures=out.figures)


def margin_control(ctx):
    """Wrong statement: the direction tends to that of u(0) - mean(u(0)) (the projections' direction)."""
    return _margin_verdict(_margin_runs(ctx, _margin_instances(ctx)), lambda u0: u0,
                           what="direction u(0) - mean(u(0))")


def margin_witness(ctx):
    """An input on which the control's statement really holds: u(0) = (1, 0, ..., 0), where
    u(0) - mean(u(0)) is parallel to e_top - 1/n; same code path, same rule."""
    inst = [([1.0, 0.0, 0.0], [0.0] * 3, 1.0), ([1.0, 0.0, 0.0, 0.0], [0.0] * 4, 1.0)]
    return _margin_verdict(_margin_runs(ctx, inst), lambda u0: u0, what="direction u(0) - mean(u(0)), u(0) = e_1")


CLAIMS = [
    Claim(id="SINK1", title="softmax1 is softmax with a frozen sink token (exact)",
          statement=r"\mathrm{softmax1}(a)=\mathrm{softmax}((0,a))_{2:},\ "
                    r"\nabla_{(V,a)}\mathcal L\big([0\,|\,V]\,\mathrm{softmax}((0,a))\big)="
                    r"\nabla_{(V,a)}\mathcal L\big(V\,\mathrm{softmax1}(a)\big)",
          provenance="D", assumptions="softmax1 as defined by E. Miller (2023); square and logistic losses; "
                                      "explicit sizes (n, d) listed in the evidence",
          evidence_kind="exact symbolic proof",
          check_description="theorems.prove_zero on the link identity, the output identity and every gradient "
                            "component of both models",
          expected="verified", check=sink1_check,
          control=Control("the sink's logit trained as well: dL/da_0 = 0 identically (false)", sink1_control),
          witness=Witness(description="V = 0: the sink's logit gets no gradient, so the control's statement holds",
                          run=sink1_witness),
          engines=("sinks.softmax1",), group="sinks"),
    Claim(id="MARGIN", title="The logit direction tends to e_top - 1/n (max-margin token selection)",
          statement=r"\frac{a(t)-\bar a\mathbf 1}{\|a(t)-\bar a\mathbf 1\|}\to\frac{e_{i^*}-\mathbf 1/n}"
                    r"{\|e_{i^*}-\mathbf 1/n\|},\ 1-\cos\sim C(\log t)^{-p}",
          provenance="D", assumptions="logistic loss, softmax, uniform a(0) = 0, b = 1, seeded u(0); reduced system "
                                      "in its internal clock (float64), t = 1e2..1e100; tests the prediction of "
                                      "arXiv 2306.13596",
          evidence_kind="asymptotic fit",
          check_description="1 - cos along a log grid of t must decrease, with fitted exponent p > 0.25",
          expected="verified", check=margin_check,
          control=Control("the direction tends to that of u(0) - mean(u(0)) instead", margin_control),
          witness=Witness(description="u(0) = e_1: u(0) - mean(u(0)) is parallel to e_top - 1/n", run=margin_witness),
          engines=("reduced", "logistic.dell"), invariant_under=("b",),
          group="sinks"),
]


# ---- GATE ----------------------------------------------------------------------------------------
def _gate_square_runs(ctx):
    """Square loss, n = 4, d = 3, seeded: the gated flow from g(0) = 0 and the ungated one from the same
    output beta(0) (V scaled by 1/sigma(0) = 2), integrated to t = 1e4 (float64, DOP853) with the
    right-hand sides generated from :func:`theorems._sinks.gated_model`."""
    import sympy as sp

    from numerics import lambdify_checked
    from numerics.integrate._numpy import dop853_solve
    from theorems.sinks import gated_model

    from ._claims_common import rng_for

    n, d = 4, 3
    seeds = 3 if not ctx.full else 6
    times = np.concatenate([[0.0], np.logspace(-1, 4, 26)])

    def run():
        fns = {}
        for gated in (True, False):
            params, rhs, ex = gated_model(n, d, "square", gate=None if gated else (lambda g: sp.Integer(1)))
            fns[gated] = lambdify_checked([*params, *ex["y"]], sp.Matrix(rhs), backend="numpy")
        rng = rng_for(ctx, 2505)
        out = []
        for _ in range(seeds):
            V0, a0, y = 0.5 * rng.normal(size=(d, n)), 0.3 * rng.normal(size=n), rng.normal(size=d)
            row = {"y": y.tolist()}
            for gated in (True, False):
                f = fns[gated]
                x0 = np.concatenate([(2.0 * V0 if gated else V0).ravel(), a0, [0.0]])
                outs, stats, _ = dop853_solve(lambda t, x, f=f, y=y: np.asarray(f(*x, *y), float).ravel(), 0.0, x0,
                                              times.tolist(), rtol=1e-10, atol=1e-12, max_steps=200_000,
                                              t_of=lambda t, x: t)
                H = []
                for _, x in outs:
                    a = x[d * n: d * n + n]
                    e = np.exp(a - a.max())
                    s = e / e.sum()
                    H.append(float(-(s * np.log(s)).sum()))
                row["gated" if gated else "ungated"] = {"H": H, "g_end": float(outs[-1][1][-1]),
                                                        "n_steps": stats["n_steps"]}
            out.append(row)
        return {"times": times.tolist(), "runs": out}

    return ctx.memo(("gate-square", seeds), run)


def _gate_outcome(ctx, results, *, what):
    bad = [(label, r) for label, r in results if r.status != "proved"]
    if bad:
        label, r = bad[0]
        if r.status == "disproved":
            return Outcome("refuted", f"{what}: {label} disproved", {"proved": [k for k, v in results
                                                                             if v.status == "proved"]},
                           counterexample={"case": label, "point": r.counterexample, "detail": r.detail})
        return Outcome("inconclusive", f"{what}: {label} {r.status}", {}, reason=r.detail or r.status)
    return Outcome("verified", f"{what}: {len(results)} exact proofs", {"proved": [k for k, _ in results]})


def gate_check(ctx):
    from theorems.sinks import gate_clock_proofs

    sizes = ((2, 1), (3, 1), (3, 2), (4, 2)) if ctx.full else ((2, 1), (3, 1), (3, 2))
    out = _gate_outcome(ctx, ctx.memo(("gate-proofs", sizes), lambda: gate_clock_proofs(sizes)),
                        what="logistic: gated (u, a) flow = sigma(g) gamma x ungated reduced field")
    if out.verdict != "verified":
        return out
    sq = _gate_square_runs(ctx)
    floors = [{"H_gated": r["gated"]["H"][-1], "H_ungated": r["ungated"]["H"][-1], "g_end": r["gated"]["g_end"]}
              for r in sq["runs"]]
    lower = sum(f["H_gated"] < f["H_ungated"] for f in floors)
    fig = Figure("gate_square_entropy.png", "curves",
                 "Square loss: entropy of s(t), gated (sigma(g) V s, g(0) = 0) and ungated, same beta(0)",
                 data={"panels": [{"xlabel": "t", "ylabel": "H(s)", "xscale": "log",
                                   "series": [s for i, r in enumerate(sq["runs"]) for s in (
                                       {"x": sq["times"], "y": r["gated"]["H"], "label": f"seed {i}: gated"},
                                       {"x": sq["times"], "y": r["ungated"]["H"], "label": f"seed {i}: ungated",
                                        "ls": "--"})]}]})
    details = {**out.details, "square_loss_floors_t1e4": floors}
    return Outcome("verified", out.evidence + "; so under the logistic loss the gate changes only the speed "
                   "(same path, vertex and entropy as functions of tau). Square loss (finding, not a pass "
                   f"condition): the entropy at t = 1e4 is lower with the gate in {lower}/{len(floors)} seeded "
                   "runs (" + ", ".join(f"{f['H_gated']:.3f} vs {f['H_ungated']:.3f}" for f in floors) + ")",
                   details, figures=(fig,))


def gate_control(ctx):
    from theorems.sinks import gate_clock_proofs

    return _gate_outcome(ctx, gate_clock_proofs(((2, 1), (3, 1)), with_gate_factor=False),
                         what="logistic: gated (u, a) flow = gamma x ungated field (the gate has no effect)")


def gate_witness(ctx):
    """A planted bug under which the control's statement really holds: the gate's sigmoid replaced by 1."""
    import sympy as sp

    from theorems.sinks import gate_clock_proofs

    return _gate_outcome(ctx, gate_clock_proofs(((2, 1), (3, 1)), gate=lambda g: sp.Integer(1),
                                                with_gate_factor=False),
                         what="planted bug sigma(g) := 1: gated flow = gamma x ungated field")


CLAIMS.append(Claim(
    id="GATE", title="A trainable scalar gate changes only the clock under the logistic loss",
    statement=r"\beta=\sigma(g)V\,\mathrm{softmax}(a):\ \frac{d(u,a)}{dt}=\sigma(g)\,\gamma\,(b\,s,\ J(s)u),\ "
              r"\gamma=-\ell'(\sigma(g)\langle u,s\rangle)",
    provenance="D", assumptions="gated attention in the sense of arXiv 2505.06708 reduced to one scalar gate after "
                                "the value-softmax output; logistic loss for the exact part (sizes listed); the "
                                "square-loss comparison is a seeded float64 finding reported, not tested",
    evidence_kind="exact symbolic proof",
    check_description="theorems.prove_zero on the (u, a) components of the gated flow minus the clock factor times "
                      "the ungated reduced field",
    expected="verified", check=gate_check,
    control=Control("the gate has no effect at all: the factor sigma(g) dropped from the clock", gate_control),
    witness=Witness(description="planted bug: the gate's sigmoid replaced by 1", run=gate_witness),
    group="sinks"))


# ---- SINK2 ---------------------------------------------------------------------------------------
#: sink mass threshold of the sink phase (the issue's probe: more than 1 - 1e-6 of the weight)
SINK_EPS = 1e-6
#: the escape law is asymptotic: log tau* = c X + beta + gamma / X + o(1/X), X = u1(0)^2/(2b), with c = 1
#: derived (the O(1) and 1/X terms are fitted, not derived). The leading constant c is read off a least-squares
#: fit in this form over the sweep points with X >= FIT_X_MIN; it must match the law's constant to ESCAPE_C_TOL
#: (relative). Measured (LSODA, b = 0.1, u1 = -3..-6): c = 1.0005; fits on the first three and the last three
#: points differ by 3e-4. A law off by 1 % (c = 1.01) is then rejected (|1.0005/1.01 - 1| = 0.0094).
ESCAPE_C_TOL = 0.005
#: the fit is settled when the fits on the first and the last three points agree to this (half the tolerance)
ESCAPE_SETTLE_TOL = ESCAPE_C_TOL / 2
#: points below this X (the first sweep point, X = 20) serve the sink-phase rule and the GBS cross-check only
FIT_X_MIN = 40.0
SINK2_DPS = 20


def _sink2_run(u0, b, sigma_max, *, backend="numpy", dps=SINK2_DPS, step=0.05):
    """softmax1, logistic, a(0) = 0, right-hand sides generated from the SymPy systems of
    :mod:`theorems._sinks`: tau in [0, 1], then the log clock sigma = log tau.

    ``numpy``: SciPy's LSODA in float64 (tau up to e^130 is far inside its range) on a grid of
    spacing ``step`` (tau*: the zero of u_1, interpolated linearly on it; the mpmath path gives it to
    ``dps`` digits), in chunks of 0.5, stopping after the chunk in which u_1 turns positive (the top real
    token then has the largest projection of all n + 1 slots, the sink's being 0). Not integrated
    further: within about half a unit of log tau the top token takes over, the other weights collapse
    at a rate ~ tau u_1 and the system turns so stiff that LSODA, BDF and Radau stall (measured).
    ``mpmath``: GBS at ``dps`` digits
    up to the escape only (u_1 is an increasing component: its zero is an output coordinate), the
    cross-check of tau*. Raises IntegrationError on any failure or when there is no escape before
    ``sigma_max``.
    """
    import mpmath

    from numerics import IntegrationError, lambdify_checked
    from numerics.integrate._gbs import gbs_solve
    from theorems.sinks import softmax1_log_clock, softmax1_tau_system

    n = len(u0)
    top = int(np.argmax(u0))
    args_t, rhs_t = softmax1_tau_system(n)
    args_s, rhs_s, _sink = softmax1_log_clock(n)
    if backend == "mpmath":
        with mpmath.workdps(dps + 10):
            ft = lambdify_checked(args_t, tuple(rhs_t), backend="mpmath")
            fs = lambdify_checked(args_s, tuple(rhs_s), backend="mpmath")
            bb, tol = mpmath.mpf(b), mpmath.mpf(10) ** (-dps)
            kw = dict(rtol=tol, atol=tol, t_of=lambda x, y: x, max_steps=50_000)
            y0 = [mpmath.mpf(x) for x in u0] + [mpmath.mpf(0)] * n
            out, st1, _ = gbs_solve(lambda x, y: list(ft(x, *y, bb)), mpmath.mpf(0), y0, [mpmath.mpf(1)], **kw)
            out2, st2, _ = gbs_solve(lambda x, y: list(fs(x, *y, bb)), mpmath.mpf(0), out[-1][1], [mpmath.mpf(0)],
                                     component=top, **kw)
            sigma_star = out2[-1][0]
            return {"u0": list(u0), "b": b, "sigma_star": float(sigma_star),
                    "sigma_star_digits": mpmath.nstr(sigma_star, dps),
                    "n_steps": st1["n_steps"] + st2["n_steps"], "backend": backend}
    from scipy.integrate import solve_ivp

    ft = lambdify_checked(args_t, sp_matrix(rhs_t), backend="numpy")
    fs = lambdify_checked(args_s, sp_matrix(rhs_s), backend="numpy")

    def checked(sol, what):
        if sol.status == -1 or not np.all(np.isfinite(sol.y)):
            raise IntegrationError(float(sol.t[-1]) if len(sol.t) else 0.0, f"LSODA failed ({what}): {sol.message}")
        return sol

    y0 = np.array([*map(float, u0), *([0.0] * n)])
    s1 = checked(solve_ivp(lambda x, y: np.asarray(ft(x, *y, b), float).ravel(), (0.0, 1.0), y0, method="LSODA",
                           rtol=1e-11, atol=1e-14), "tau in [0, 1]")

    def weights(y):
        e = np.exp(np.asarray(y[n:2 * n], float))
        Z = 1.0 + e.sum()
        return 1.0 / Z, e / Z

    rows, x, y, nfev, chunk = [], 0.0, s1.y[:, -1], 0, 0.5
    sink, s = weights(y)
    rows.append({"sigma": 0.0, "u1": float(y[top]), "sink": float(sink), "s": s.tolist()})
    while rows[-1]["u1"] < 0:
        if x >= sigma_max:
            raise IntegrationError(sigma_max, "no escape (u_1 stays negative) before log tau = "
                                   f"{sigma_max:g} (u_1 = {y[top]:.3g})")
        grid = x + step * np.arange(1, int(round(chunk / step)) + 1)
        sol = checked(solve_ivp(lambda xx, yy: np.asarray(fs(xx, *yy, b), float).ravel(), (x, grid[-1]), y,
                                method="LSODA", t_eval=grid, rtol=1e-11, atol=1e-14), "log clock")
        nfev += int(sol.nfev)
        for k, xk in enumerate(sol.t):
            sink, s = weights(sol.y[:, k])
            rows.append({"sigma": float(xk), "u1": float(sol.y[top, k]), "sink": float(sink), "s": s.tolist()})
        x, y = float(grid[-1]), sol.y[:, -1]
    u1 = np.array([r["u1"] for r in rows])
    k = int(np.argmax(u1 >= 0))  # first grid point past the escape; u_1 is increasing
    x0, x1, v0, v1 = rows[k - 1]["sigma"], rows[k]["sigma"], u1[k - 1], u1[k]
    return {"u0": list(u0), "b": b, "rows": rows, "sigma_star": float(x0 - v0 * (x1 - x0) / (v1 - v0)),
            "n_rhs": nfev, "backend": backend}


def sp_matrix(items):
    import sympy as sp

    return sp.Matrix(items)


#: the take-over run stops when the top real token holds all but this much of the weight
TAKEOVER_EPS = 1e-9
#: the issue's second control: a positive top projection, where no sink phase occurs
SINK2_POSITIVE_U0 = (0.5, 0.0, -0.5)
#: log tau at the escape and at the take-over (top weight 1/2) must agree between LSODA and DOP853 to this
#: (both at rtol 1e-10 in the theta clock; measured differences about 1e-7)
TAKEOVER_TOL = 1e-5


def _sink2_takeover(u0, b, *, method="LSODA", theta_max=1e8):
    r"""The whole run, through the escape and the take-over, in the clock $\theta$ of
    :mod:`theorems._sinks_lemma` ($d\tau/d\theta=1/(1/(1+\tau)+m)$: not stiff in the sink phase nor after
    it), from $\tau=0$, $a(0)=0$, right-hand side generated from :func:`softmax1_theta_system`. Stops when
    $1-\varphi_{\rm top}<$ :data:`TAKEOVER_EPS`; events: $u_{\rm top}=0$ (escape), $\varphi_{\rm top}=\varphi_0$
    ($a_{\rm top}=0$, the top token outweighs the sink), $\varphi_{\rm top}=1/2$ (take-over).
    Raises IntegrationError on failure or when the end is not reached before ``theta_max``.
    """
    from scipy.integrate import solve_ivp

    from numerics import IntegrationError, lambdify_checked
    from theorems.sinks_lemma import softmax1_theta_system

    n = len(u0)
    top = int(np.argmax(u0))
    args, rhs, _ex = softmax1_theta_system(n)
    f = lambdify_checked(args, sp_matrix(rhs), backend="numpy")

    def weights(y):
        a = np.asarray(y[1 + n:], float)
        m = a.max()
        e = np.exp(a - m)
        Z = np.exp(-m) + e.sum()
        return np.exp(-m) / Z, e / Z

    def ev_escape(t, y):
        return y[1 + top]

    def ev_sink(t, y):
        return y[1 + n + top]

    def ev_half(t, y):
        return weights(y)[1][top] - 0.5

    def ev_end(t, y):
        return 1.0 - weights(y)[1][top] - TAKEOVER_EPS

    for ev in (ev_escape, ev_sink, ev_half):
        ev.direction = 1.0  # upward crossings only (a_top starts at 0 and first falls)
    ev_end.terminal = True
    y0 = np.array([0.0, *map(float, u0), *([0.0] * n)])
    sol = solve_ivp(lambda t, y: np.asarray(f(*y, b), float).ravel(), (0.0, theta_max), y0, method=method,
                    rtol=1e-10, atol=1e-12, events=[ev_escape, ev_sink, ev_half, ev_end])
    if sol.status != 1 or not np.all(np.isfinite(sol.y[:, -1])):
        raise IntegrationError(float(sol.t[-1]), f"{method} in the theta clock: {sol.message} "
                               f"(status {sol.status}, top weight end not reached)")
    firsts = [(float(e[0, 0]) if len(e) else None) for e in sol.y_events]
    if firsts[2] is None:
        raise IntegrationError(float(sol.t[-1]), f"{method}: the take-over event (top weight 1/2) is missing")
    sink, phi = weights(sol.y[:, -1])
    sinks = np.array([weights(y)[0] for y in sol.y.T])  # at every accepted step
    tops = np.array([weights(y)[1][top] for y in sol.y.T])
    real = np.array([weights(y)[1].sum() for y in sol.y.T])  # not 1 - sink: that is round-off once sink ~ 1
    keep = np.nonzero(sol.y[0] >= 0.1)[0]
    keep = keep[np.unique(np.linspace(0, len(keep) - 1, min(400, len(keep))).astype(int))]
    curve = {"log_tau": np.log(sol.y[0, keep]).tolist(), "real_mass": real[keep].tolist(),
             "one_minus_top": np.maximum(1 - tops[keep], 1e-300).tolist()}
    inside = np.nonzero(sinks > 1 - SINK_EPS)[0]
    logt = lambda x: None if x is None or x <= 0 else math.log(x)  # noqa: E731 - no event, or at tau = 0
    return {"u0": list(u0), "b": b, "method": method, "log_tau_escape": logt(firsts[0]),
            "log_tau_outweighs_sink": logt(firsts[1]), "log_tau_takeover": logt(firsts[2]),
            "theta_takeover": float(sol.t_events[2][0]), "theta_end": float(sol.t[-1]),
            "s_top_end": float(phi[top]), "sink_end": float(sink), "sink_max": float(sinks.max()),
            "sink_phase_log_tau": ([math.log(sol.y[0, inside[0]]), math.log(sol.y[0, inside[-1]])]
                                   if len(inside) else None), "nfev": int(sol.nfev), "curve": curve}


def _sink2_takeovers(ctx, points):
    def run():
        out = []
        for u1, b in points:
            u0 = [u1, u1 - 0.5, u1 - 1.0]
            out.append({m: _sink2_takeover(u0, b, method=m) for m in ("LSODA", "DOP853")})
        return out

    return ctx.memo(("sink2-takeover", tuple(points)), run)


def _escape(run):
    """log tau* (the event u_1 = 0 of the run)."""
    return run["sigma_star"]


def _sink_phase(run, eps=SINK_EPS):
    """[log tau1, log tau2] where the sink mass exceeds 1 - eps, and the top real token's weight at the end."""
    inside = [r for r in run["rows"] if r["sink"] > 1 - eps]
    last = run["rows"][-1]
    top = int(np.argmax(run["u0"]))
    return ((inside[0]["sigma"], inside[-1]["sigma"]) if inside else None), last["s"][top], last["sink"]


def _sink2_sweep(ctx, sweep):
    def run():
        out = []
        for u1, b in sweep:
            u0 = [u1, u1 - 0.5, u1 - 1.0]
            X = u1 * u1 / (2 * b)
            out.append(_sink2_run(u0, b, sigma_max=1.5 * X + 20))
        return out

    return ctx.memo(("sink2", tuple(sweep)), run)


def _sink2_verdict(runs, law, *, what, need_phase=True):
    rows, bad = [], None
    for r in runs:
        u1, b = r["u0"][0], r["b"]
        est = _escape(r)
        phase, s_top, sink_end = _sink_phase(r)
        X = law(u1, b)
        ratio = None if est is None else est / X
        rows.append({"u1": u1, "b": b, "law": X, "log_tau_star": est, "ratio": ratio,
                     "sink_phase_log_tau": phase, "s_top_end": s_top, "sink_end": sink_end,
                     "n_rhs": r["n_rhs"]})
    for row in rows:
        if row["log_tau_star"] is None or (need_phase and row["sink_phase_log_tau"] is None):
            bad = row
            break
    fit = _escape_fit(rows) if bad is None else None
    details = {"instances": rows, "fit": fit,
               "rule": f"sink mass > 1 - {SINK_EPS:g} over an interval; u_1 turns positive (escape); "
                       f"log tau* = c X + beta + gamma/X fitted on the points with X >= {FIT_X_MIN:g} (X = the "
                       f"law); settled when the fits on the first and last three points agree to "
                       f"{ESCAPE_SETTLE_TOL:g}; verified when |c - 1| < {ESCAPE_C_TOL:g}"}
    fig = Figure("sink2_escape.png", "curves", f"{what}: sink mass and top token weight vs log tau (t ~ 2 "
                                               f"tau in the sink phase)",
                 data={"panels": [{"xlabel": "log tau", "ylabel": "weight", "yscale": "log",
                                   "series": [s for r in runs for s in (
                                       {"x": [q["sigma"] for q in r["rows"]], "y": [1 - q["sink"] for q in r["rows"]],
                                        "label": f"u1(0)={r['u0'][0]}, b={r['b']}: 1 - sink mass"},
                                       {"x": [q["sigma"] for q in r["rows"]],
                                        "y": [q["s"][int(np.argmax(r["u0"]))] for q in r["rows"]],
                                        "label": f"u1(0)={r['u0'][0]}, b={r['b']}: s_top", "ls": "--"})]}]})
    if bad is not None:
        return Outcome("refuted", f"{what}: at u1(0) = {bad['u1']}, b = {bad['b']}: no escape or no sink phase "
                       f"(log tau* = {bad['log_tau_star']})", details,
                       counterexample={k: bad[k] for k in ("u1", "b", "log_tau_star", "law", "ratio",
                                                           "sink_phase_log_tau", "s_top_end")}, figures=(fig,))
    if fit["settle_diff"] > ESCAPE_SETTLE_TOL:
        return Outcome("inconclusive", f"{what}: the fitted constant has not settled", details, figures=(fig,),
                       reason=f"c = {fit['c_first']:.5f} on the first three points, {fit['c_last']:.5f} on the last "
                              f"three: differ by {fit['settle_diff']:.2g} > {ESCAPE_SETTLE_TOL:g}; extend the sweep")
    if abs(fit["c"] - 1) >= ESCAPE_C_TOL:
        return Outcome("refuted", f"{what}: log tau* / law -> c = {fit['c']:.5f} (fit log tau* = c X + beta + gamma/X "
                       f"on X = {', '.join(f'{x:.4g}' for x in fit['X'])}), |c - 1| = {abs(fit['c'] - 1):.2g} >= "
                       f"{ESCAPE_C_TOL:g}", details,
                       counterexample={"instances": [{k: r[k] for k in ("u1", "b", "log_tau_star", "law")}
                                                     for r in rows], "c": fit["c"]}, figures=(fig,))
    table = "; ".join(f"u1={row['u1']}, b={row['b']}: log tau* = {row['log_tau_star']:.2f} vs {row['law']:.2f}"
                      for row in rows) + (f"; fitted log tau* = c X + beta + gamma/X: c = {fit['c']:.5f} (|c - 1| < "
                                          f"{ESCAPE_C_TOL:g}; first/last three points differ by "
                                          f"{fit['settle_diff']:.1g}), beta = {fit['beta']:.3f}")
    return Outcome("verified", f"{what}: sink phase (mass > 1 - {SINK_EPS:g}) then escape (u_1 > 0, the top real "
                   f"token's projection above the sink's) in every run; escape times {table}", details, figures=(fig,))


def _escape_fit(rows):
    """Least squares ``log tau* = c X + beta + gamma / X`` over the rows with X = law >= FIT_X_MIN, and the same
    fit on the first and on the last three of them (the settling test). Needs at least four such rows."""
    use = [r for r in rows if r["law"] >= FIT_X_MIN]
    if len(use) < 4:
        raise ValueError(f"the escape fit needs at least four sweep points with law >= {FIT_X_MIN}, got {len(use)}")
    X = np.array([r["law"] for r in use], float)
    L = np.array([r["log_tau_star"] for r in use], float)

    def fit(sl):
        A = np.c_[X[sl], np.ones(len(X[sl])), 1 / X[sl]]
        return np.linalg.lstsq(A, L[sl], rcond=None)[0]

    c, beta, gamma = fit(slice(None))
    c1, c2 = fit(slice(0, 3))[0], fit(slice(len(X) - 3, None))[0]
    return {"X": X.tolist(), "c": float(c), "beta": float(beta), "gamma": float(gamma), "c_first": float(c1),
            "c_last": float(c2), "settle_diff": float(abs(c1 - c2))}


def _sink2_sweep_points(ctx):
    # the first point (X = 20) is for the sink-phase rule and the GBS cross-check; the fit uses X >= FIT_X_MIN
    return ((-2.0, 0.1), (-3.0, 0.1), (-4.0, 0.1), (-5.0, 0.1), (-6.0, 0.1), *(((-7.0, 0.1),) if ctx.full else ()))


#: the float64 tau* is a linear interpolation of u_1 on a grid of 0.05 in log tau (error about 1e-3 at the
#: measured curvature); the 20-digit GBS value must agree to this
CROSSCHECK_TOL = 0.01


def _escape_derived():
    """The derived escape law of softmax1 under the logistic loss (:func:`theorems.asymptotics.sink_escape_law`)."""
    from theorems.asymptotics import sink_escape_law

    law = sink_escape_law("logistic", "softmax1")
    if law.exponent is None:  # pragma: no cover - the derivation would have changed
        raise ValueError(f"no escape law derived for softmax1: {law.to_json()['no_law']}")
    return law


def escape_law(u1, b):
    """The derived escape law c u1^2/(2b), c from :func:`theorems.asymptotics.sink_escape_law` (c = lambda^2 = 1
    for softmax1; one function for the check, control, witness)."""
    return float(_escape_derived().constant) * u1 * u1 / (2 * b)


#: the derived next order: log tau* + log phi_top(tau*) -> (1/2) log(pi/(2b)) - log lambda. tau* and phi_top(tau*)
#: are read off the 0.05 grid in log tau by linear interpolation (error about 1e-3, CROSSCHECK_TOL's note); measured
#: residuals 4e-5..2e-4 on u1 = -3..-6. The near miss (the constant sqrt(pi/(2b)) off by 1 %, log 1.01 = 0.00995) is
#: three tolerances away
ESCAPE_NEXT_TOL = 0.003


def _escape_next_order(runs, *, factor=1.0, b_law=None):
    """Per run with X >= FIT_X_MIN: log tau* + log phi_top(tau*) against the derived next order (times ``factor``
    inside the log: the near miss is factor 1.01), evaluated at the run's b or at ``b_law``."""
    law = _escape_derived()
    rows = []
    for r in runs:
        u1, b = r["u0"][0], r["b"]
        if u1 * u1 / (2 * b) < FIT_X_MIN:
            continue
        top = int(np.argmax(r["u0"]))
        grid = r["rows"]
        k = int(np.argmax(np.array([q["u1"] for q in grid]) >= 0))
        x0, x1, ss = grid[k - 1]["sigma"], grid[k]["sigma"], r["sigma_star"]
        w = (ss - x0) / (x1 - x0)
        log_phi = (1 - w) * math.log(grid[k - 1]["s"][top]) + w * math.log(grid[k]["s"][top])
        pred = law.next_order_at(b if b_law is None else b_law) + math.log(factor)
        rows.append({"u1": u1, "b": b, "log_tau_plus_log_phi_top": ss + log_phi, "derived": pred,
                     "residual": ss + log_phi - pred})
    return rows


def sink2_check(ctx):
    points = _sink2_sweep_points(ctx)
    out = _sink2_verdict(_sink2_sweep(ctx, points), escape_law, what="log tau* ~ u1(0)^2 / (2b)")
    if out.verdict != "verified":
        return out
    # the derived next order (no transient in it): log tau* + log phi_top(tau*) -> (1/2) log(pi/(2b))
    nxt = _escape_next_order(_sink2_sweep(ctx, points))
    nxt_miss = _escape_next_order(_sink2_sweep(ctx, points), factor=NEAR_MISS)
    worst_nxt = max(abs(r["residual"]) for r in nxt)
    details_nxt = {"next_order": nxt, "next_order_rule": f"|log tau* + log phi_top(tau*) - (1/2) log(pi/(2b))| <= "
                                                         f"{ESCAPE_NEXT_TOL:g} on the points with X >= {FIT_X_MIN:g}",
                   "next_order_near_miss_refused": all(abs(r["residual"]) > ESCAPE_NEXT_TOL for r in nxt_miss)}
    if worst_nxt > ESCAPE_NEXT_TOL:
        bad = max(nxt, key=lambda r: abs(r["residual"]))
        return Outcome("refuted", f"{out.evidence}; but the derived next order fails at u1 = {bad['u1']}: "
                       f"log tau* + log phi_top(tau*) = {bad['log_tau_plus_log_phi_top']:.5f}, derived "
                       f"{bad['derived']:.5f}", {**out.details, **details_nxt},
                       counterexample={k: bad[k] for k in ("u1", "b", "log_tau_plus_log_phi_top", "derived")})
    if not details_nxt["next_order_near_miss_refused"]:
        return Outcome("inconclusive", out.evidence, {**out.details, **details_nxt},
                       reason=f"the next-order comparison (tolerance {ESCAPE_NEXT_TOL:g}) does not refuse its 1 % near "
                              "miss on every point")
    cross = []
    for (u1, b), run in zip(points if ctx.full else points[:1], _sink2_sweep(ctx, points)):
        mp = _sink2_run([u1, u1 - 0.5, u1 - 1.0], b, sigma_max=1.5 * u1 * u1 / (2 * b) + 20, backend="mpmath")
        cross.append({"u1": u1, "b": b, "log_tau_star_float64": run["sigma_star"],
                      "log_tau_star_gbs": mp["sigma_star_digits"],
                      "difference": abs(run["sigma_star"] - mp["sigma_star"])})
    details = {**out.details, **details_nxt, "gbs_crosscheck": cross}
    worst = max(c["difference"] for c in cross)
    if worst > CROSSCHECK_TOL:
        return Outcome("inconclusive", out.evidence, details,
                       reason=f"float64 and 20-digit GBS escape times differ by {worst:.3g} > {CROSSCHECK_TOL}")
    # the take-over runs (theta clock) keep to the first points, as before the fit needed the longer sweep
    take = _sink2_takeovers(ctx, points[:4] if ctx.full else points[:3])
    rows = []
    for (u1, b), run, pair in zip(points, _sink2_sweep(ctx, points), take):
        lo, dp = pair["LSODA"], pair["DOP853"]
        rows.append({"u1": u1, "b": b, **{k: lo[k] for k in ("log_tau_escape", "log_tau_outweighs_sink",
                                                              "log_tau_takeover", "theta_end", "s_top_end",
                                                              "sink_end", "nfev")},
                     "nfev_dop853": dp["nfev"],
                     "engines_differ": max(abs(lo[k] - dp[k]) for k in ("log_tau_escape", "log_tau_takeover")),
                     "escape_vs_log_clock": abs(lo["log_tau_escape"] - run["sigma_star"])})
    details["takeover"] = rows
    bad = next((r for r in rows if r["engines_differ"] > TAKEOVER_TOL or r["escape_vs_log_clock"] > CROSSCHECK_TOL),
               None)
    if bad is not None:
        return Outcome("inconclusive", out.evidence, details,
                       reason=f"take-over at u1 = {bad['u1']}: LSODA and DOP853 differ by {bad['engines_differ']:.3g} "
                              f"in log tau, or the theta-clock escape differs from the log-clock one by "
                              f"{bad['escape_vs_log_clock']:.3g}")
    table = "; ".join(f"u1={r['u1']}: log tau = {r['log_tau_escape']:.3f} (escape), {r['log_tau_takeover']:.3f} "
                      f"(top weight 1/2)" for r in rows)
    # the positive control of the sink-phase rule: with u1(0) > 0 the same run and rule must find no sink phase
    pos = ctx.memo(("sink2-positive",), lambda: _sink2_takeover(list(SINK2_POSITIVE_U0), 0.1))
    details["positive_u1"] = {k: v for k, v in pos.items() if k != "curve"}
    if pos["sink_phase_log_tau"] is not None:
        return Outcome("refuted", f"u(0) = {SINK2_POSITIVE_U0}: a sink phase (mass > 1 - {SINK_EPS:g}) although "
                       "u1(0) > 0", details, counterexample={"u0": list(SINK2_POSITIVE_U0), "b": 0.1,
                                                              "sink_phase_log_tau": pos["sink_phase_log_tau"]})
    return Outcome("verified", out.evidence + f"; the derived next order log tau* + log phi_top(tau*) -> "
                   f"(1/2) log(pi/(2b)) = {nxt[0]['derived']:.5f}: measured "
                   + ", ".join(f"{r['log_tau_plus_log_phi_top']:.5f}" for r in nxt)
                   + f" (|residual| <= {worst_nxt:.1e}, tolerance {ESCAPE_NEXT_TOL:g}; its 1 % near miss refused on "
                   f"every point: {details_nxt['next_order_near_miss_refused']})"
                   + f"; tau* cross-checked with GBS at {SINK2_DPS} digits on "
                   f"{len(cross)} run(s) (largest difference {worst:.1e} in log tau); then the take-over, integrated "
                   f"in the theta clock (LSODA, DOP853 agree to {max(r['engines_differ'] for r in rows):.1e}): "
                   f"the top real token's weight reaches 1 - {TAKEOVER_EPS:g} and the sink's falls below "
                   f"{max(r['sink_end'] for r in rows):.1e} in every run; {table}; and with u1(0) > 0 "
                   f"(u(0) = {SINK2_POSITIVE_U0}) the same rule finds no sink phase (largest sink mass "
                   f"{pos['sink_max']:.3f}, the top token takes over at log tau = {pos['log_tau_takeover']:.2f})",
                   details, figures=(*out.figures, _takeover_figure(take, pos)))


def _takeover_figure(take, pos):
    series = []
    for pair in take:
        r = pair["LSODA"]
        c, u1 = r["curve"], r["u0"][0]
        series += [{"x": c["log_tau"], "y": c["real_mass"], "label": f"u1(0)={u1}: real tokens' mass 1 - phi_0"},
                   {"x": c["log_tau"], "y": c["one_minus_top"], "label": f"u1(0)={u1}: 1 - phi_top", "ls": "--"}]
    c = pos["curve"]
    series.append({"x": c["log_tau"], "y": c["one_minus_top"], "label": "u1(0)=+0.5 (no sink phase): 1 - phi_top",
                   "ls": ":"})
    return Figure("sink2_takeover.png", "curves", "softmax1 through the escape and the take-over (theta clock, "
                  "LSODA): the real tokens' mass and 1 - phi_top against log tau",
                  data={"panels": [{"xlabel": "log tau", "ylabel": "weight", "yscale": "log", "series": series}]})


#: the near miss of the control: the escape constant off by 1 %
NEAR_MISS = 1.01


def sink2_control(ctx):
    """Near miss: log tau* ~ 1.01 u1(0)^2 / (2b), the constant off by 1 %; same runs, same fit and comparison."""
    return _sink2_verdict(_sink2_sweep(ctx, _sink2_sweep_points(ctx)), lambda u1, b: NEAR_MISS * escape_law(u1, b),
                          what=f"log tau* ~ {NEAR_MISS} u1(0)^2 / (2b) (constant off by 1 %)")


def sink2_witness(ctx):
    """Inputs under which the near-miss law really holds: the runs use b / 1.01 while the law is evaluated at
    the nominal b (then 1.01 u1^2/(2b) = u1^2/(2 b_run)); same runs, same fit, same comparison."""
    nominal = 0.1
    sweep = tuple((u1, nominal / NEAR_MISS) for u1, _b in _sink2_sweep_points(ctx))
    out = _sink2_verdict(_sink2_sweep(ctx, sweep), lambda u1, b: NEAR_MISS * escape_law(u1, nominal),
                         what=f"the near-miss law {NEAR_MISS} u1(0)^2/(2b) at b = {nominal}, runs at b / {NEAR_MISS}")
    if out.verdict != "verified":
        return out
    # the next order's near miss (sqrt(pi/(2b)) times 1.01) really holds at b / 1.01^2: same comparison
    sweep2 = tuple((u1, nominal / NEAR_MISS**2) for u1, _b in _sink2_sweep_points(ctx) if u1 * u1 / 2 / nominal
                   >= FIT_X_MIN)
    rows = _escape_next_order(_sink2_sweep(ctx, sweep2), factor=NEAR_MISS, b_law=nominal)
    details = {**out.details, "next_order_witness": rows}
    bad = next((r for r in rows if abs(r["residual"]) > ESCAPE_NEXT_TOL), None)
    if bad is not None:
        return Outcome("refuted", f"runs at b / {NEAR_MISS}^2: log tau* + log phi_top(tau*) = "
                       f"{bad['log_tau_plus_log_phi_top']:.5f}, not the near miss {bad['derived']:.5f}", details,
                       counterexample={k: bad[k] for k in ("u1", "b", "log_tau_plus_log_phi_top", "derived")})
    return Outcome("verified", out.evidence + f"; runs at b / {NEAR_MISS}^2: log tau* + log phi_top(tau*) = "
                   + ", ".join(f"{r['log_tau_plus_log_phi_top']:.5f}" for r in rows)
                   + f", the next order's near miss {rows[0]['derived']:.5f} (within {ESCAPE_NEXT_TOL:g})", details,
                   figures=out.figures)


CLAIMS.append(Claim(
    id="SINK2", title="softmax1 under the logistic loss: a metastable sink, then escape at log tau* ~ u1(0)^2/(2b)",
    statement=r"u(0)<0,\ a(0)=0:\ 1-\varphi_{\rm sink}<\varepsilon\ \text{on}\ [t_1,t_2],\ "
              r"u_1(\tau^*)=0,\ \log\tau^*/\frac{u_1(0)^2}{2b}\to1,\ \varphi_{\rm top}\to1",
    provenance="D", assumptions="softmax1 (E. Miller, 2023), logistic loss, reduced system, u(0) = (u1, u1 - 1/2, "
                                "u1 - 1), a(0) = 0, b = 0.1; GBS at 20 digits in the log clock of the internal "
                                "time (LSODA, float64; tau* cross-checked with GBS at 20 digits); tau* = "
                                "first zero of u_1; the take-over after tau* integrated in the clock "
                                "dtau/dtheta = 1/(1/(1+tau) + m) (LSODA and DOP853, float64)",
    evidence_kind="asymptotic fit",
    check_description="sink phase and escape on each run of a sweep in u1(0); log tau* fitted as c X + beta + "
                      f"gamma/X (X = u1^2/2b >= {FIT_X_MIN:g}, settled: first and last three points agree to "
                      f"{ESCAPE_SETTLE_TOL:g}) must have |c - 1| < {ESCAPE_C_TOL} (c derived: "
                      "theorems.asymptotics.sink_escape_law); the derived next order log tau* + log phi_top(tau*) -> "
                      f"(1/2) log(pi/(2b)) within {ESCAPE_NEXT_TOL:g} on those points; then the take-over: "
                      f"the top real token's weight must reach 1 - {TAKEOVER_EPS:g} (two engines agreeing)",
    expected="verified", check=sink2_check,
    control=Control("near miss, the constant off by 1 %: log tau* ~ 1.01 u1(0)^2/(2b)", sink2_control),
    witness=Witness(description="runs at b/1.01, law at b: the near miss holds (and at b/1.01^2 the next "
                                "order's 1 % near miss)", run=sink2_witness),
    engines=("sinks.softmax1",), group="sinks"))


# ---- SINK2.CERT -------------------------------------------------------------------------------------
#: the certified instance: SINK2's first sweep point, exact
SINK_CERT_U0, SINK_CERT_B, SINK_CERT_EPS = ("-2", "-5/2", "-3"), "1/10", "1/1000000"
#: the witness instance: a longer sink phase, where the control's eps = 1e-9 really holds
SINK_WITNESS_U0, SINK_WITNESS_EPS = ("-5/2", "-3", "-7/2"), "1/1000000000"


def _lemma_sizes(ctx):
    return (1, 2, 3, 4) if ctx.full else (1, 2, 3)


def _sink_cert(ctx, u0, eps):
    from fractions import Fraction

    from numerics.validated._sink_cert import certify_sink

    return ctx.memo(("sink-cert", u0, eps), lambda: certify_sink([Fraction(x) for x in u0], Fraction(SINK_CERT_B),
                                                                  eps=Fraction(eps)))


def _sink_cert_verdict(ctx, data, status, *, what):
    """Both checkers on one certificate: the replay (the certifier's arithmetic) and the independent one."""
    from numerics.validated._sink_cert import check_sink_certificate
    from numerics.validated._sink_certcheck import check_sink_independent

    from ._claims_certify import CHECKER_CRASH

    if status != "certified":
        return Outcome("inconclusive", f"{what}: not certified", {}, reason=status)
    replay = check_sink_certificate(data)
    replay_ok, replay_why = replay
    ind = check_sink_independent(data)
    details = {"replay": replay_why, "independent": ind.reason, "independent_seconds": ind.seconds,
               "independent_substeps": ind.substeps}
    crashed = [(who, crash) for who, crash in (("replay", replay.crashed), ("independent", ind.crashed)) if crash]
    if crashed:
        # an exception in a checker's own code on a certificate it had read (each checker says so in its result):
        # a crash is no evidence either way (a refused control must be refused for its content), so the outcome
        # carries it in ``raised``, which the mutation matrix counts as crashed, never as a kill
        return Outcome("inconclusive", f"{what}: the {' and the '.join(w for w, _ in crashed)} checker crashed",
                       details, reason="checker crashed: " + "; ".join(f"{w}: {c}" for w, c in crashed),
                       raised=CHECKER_CRASH)
    if not (replay_ok and ind.ok):
        return Outcome("refuted", f"{what}: refused ({'replay: ' + replay_why if not replay_ok else ''}"
                       f"{'; ' if not replay_ok and not ind.ok else ''}"
                       f"{'independent: ' + ind.reason if not ind.ok else ''})", details,
                       counterexample={"u0": data["init"]["u0"], "b": data["init"]["b"],
                                       "eps": data.get("sink_phase", {}).get("eps"),
                                       "replay": replay_why, "independent": ind.reason})
    return Outcome("verified", f"{what}: accepted by the replay and by the independent checker", details)


def _log(text):
    from fractions import Fraction

    q = Fraction(text)
    return math.log(q.numerator) - math.log(q.denominator)


def sink_cert_check(ctx):
    import sympy as sp

    from numerics.validated._sink_cert import field
    from numerics.validated._sink_certcheck import poly_field
    from theorems import prove_zero
    from theorems.sinks_lemma import (inverse_weight_field, region_controls, region_sign_facts, rewrite_proofs,
                                       softmax1_system)

    ns = _lemma_sizes(ctx)

    def lemma():
        facts = {k: v for n in ns for k, v in region_sign_facts(n).items()}
        controls = {k: v for n in ns for k, v in region_controls(n).items()}
        rewrites = dict(rewrite_proofs(ns))
        for n in ns:
            S = softmax1_system(n)
            v, (du, dv) = inverse_weight_field(n)
            cu, cv = poly_field(list(S.u), v, S.b, sp.Integer(1))
            rewrites[f"independent checker's field n={n}"] = prove_zero([x - y for x, y in zip(cu + cv, du + dv)])
            rewrites[f"certifier's field n={n}"] = prove_zero([x - y for x, y in zip(field(list(S.u) + v, S.b,
                                                                                          sp.Integer(1)), du + dv)])
        return facts, controls, rewrites

    facts, controls, rewrites = ctx.memo(("sink-lemma", ns), lemma)
    details = {"lemma_facts": {k: v.status for k, v in facts.items()},
               "lemma_controls": {k: [v.status, v.counterexample] for k, v in controls.items()},
               "rewrites": {k: v.status for k, v in rewrites.items()}}
    proofs = {**rewrites, **facts}
    bad = next(((k, v) for k, v in proofs.items() if v.status == "disproved"), None)  # a disproof decides first
    bad = bad or next(((k, v) for k, v in proofs.items() if v.status != "proved"), None)
    if bad is None:
        bad = next(((k, v) for k, v in controls.items() if v.status != "disproved"), None)
    if bad is not None:
        k, v = bad
        if v.status == "disproved":
            return Outcome("refuted", f"{k}: disproved", details, counterexample={"case": k, "point": v.counterexample})
        return Outcome("inconclusive", f"{k}: {v.status}", details, reason=f"{k}: {v.status} {v.detail}")
    cert = _sink_cert(ctx, SINK_CERT_U0, SINK_CERT_EPS)
    out = _sink_cert_verdict(ctx, cert.data, cert.status, what="certificate u(0) = (-2, -5/2, -3), b = 1/10")
    details.update(out.details)
    if out.verdict != "verified":
        return Outcome(out.verdict, out.evidence, details, counterexample=out.counterexample, reason=out.reason,
                       raised=out.raised)
    d = cert.data
    sp_, es, en = d["sink_phase"], d["escape"], d["entry"]
    if sp_ is None or es is None or d["winner"] != 1:
        return Outcome("refuted", "the certificate shows no sink phase, no escape, or another winner than token 1",
                       details, counterexample={"sink_phase": sp_, "escape": es, "winner": d["winner"]})
    nums = {"log_tau_sink_from": _log(sp_["tau_lower"]), "log_tau_sink_to": _log(sp_["tau_upper"]),
            "log_tau_star_lower": _log(es["tau_star_lower"]), "log_tau_star_upper": _log(es["tau_star_upper"]),
            "log_tau_entry": _log(en["tau"]), "steps": cert.steps, "certify_seconds": cert.seconds,
            "u_gap_lower": [float(Fraction_(x)) for x in en["u_gap_lower"]],
            "v_gap_lower": [float(Fraction_(x)) for x in en["v_gap_lower"]]}
    # a finding, not a pass condition: the float64 theta-clock escape (SINK2's take-over run) in the bracket
    flo = ctx.memo(("sink2-takeover-cert",), lambda: _sink2_takeover([-2.0, -2.5, -3.0], 0.1))["log_tau_escape"]
    nums["float64_log_tau_star"] = flo
    nums["float64_in_bracket"] = bool(nums["log_tau_star_lower"] <= flo <= nums["log_tau_star_upper"])
    details["certificate"] = nums
    return Outcome("verified", f"softmax1 trapping region R1_1^+ = {{u_1 >= u_j, u_1 >= 0, a_1 > a_j, a_1 > 0}}: "
                   f"{len(facts)} sign facts proven exactly (n = {', '.join(map(str, ns))} real tokens), its "
                   f"{len(controls)} controls disproved at exact points; {len(rewrites)} rewrites proven; validated "
                   f"enclosure ({cert.steps} steps, {cert.seconds:.1f} s): sink weight > 1 - 1e-6 for every log tau in "
                   f"[{nums['log_tau_sink_from']:.3f}, {nums['log_tau_sink_to']:.3f}], escape u_1 = 0 at log tau* in "
                   f"[{nums['log_tau_star_lower']:.5f}, {nums['log_tau_star_upper']:.5f}] (float64 theta clock: "
                   f"{flo:.5f}, "
                   f"{'inside' if nums['float64_in_bracket'] else 'OUTSIDE'}), inside R1_1^+ at log tau = "
                   f"{nums['log_tau_entry']:.3f} (u_1 >= {nums['u_gap_lower'][0]:.4f}, a_1 >= "
                   f"{-math.log(1 - nums['v_gap_lower'][0]):.4f}); replayed and re-proven by the independent checker "
                   f"({out.details['independent_substeps']} substeps, {out.details['independent_seconds']:.1f} s), so "
                   "softmax1(a) -> e_1 by the lemma", details)


def Fraction_(x):
    from fractions import Fraction

    return Fraction(x)


def sink_cert_control(ctx):
    """The certificate re-stated for eps = 1e-9 (same steps, same sink-phase stretch): both checkers must refuse."""
    from numerics.validated._sink_cert import doctored

    cert = _sink_cert(ctx, SINK_CERT_U0, SINK_CERT_EPS)
    return _sink_cert_verdict(ctx, doctored(cert.data, what="eps"), cert.status,
                              what="certificate u(0) = (-2, -5/2, -3) claiming sink weight > 1 - 1e-9")


def sink_cert_witness(ctx):
    """An instance fixed in advance where the control's statement (sink weight > 1 - 1e-9 on a certified stretch)
    really holds: u(0) = (-5/2, -3, -7/2), b = 1/10 (log tau* about 28.8); same certifier, same two checkers."""
    cert = _sink_cert(ctx, SINK_WITNESS_U0, SINK_WITNESS_EPS)
    return _sink_cert_verdict(ctx, cert.data, cert.status,
                              what="certificate u(0) = (-5/2, -3, -7/2) claiming sink weight > 1 - 1e-9")


CLAIMS.append(Claim(
    id="SINK2.CERT", title="softmax1's metastable sink, certified: the sink phase, the escape, and the trapping region",
    statement=r"u(0)=(-2,-\tfrac52,-3),\ b=\tfrac1{10}:\ \varphi_0>1-10^{-6}\ \text{on}\ [\tau_1,\tau_2],\ "
              r"u_1(\tau^*)=0,\ (u,a)(\tau_e)\in R^{(1)+}_1\Rightarrow\mathrm{softmax1}(a)\to e_1",
    provenance="D", assumptions="softmax1, logistic loss, reduced system, a(0) = 0, exact rationals; trapping-region "
                                "lemma of theorems._sinks_lemma (sign facts proven with SymPy for the sizes listed; "
                                "the continuation and divergence steps argued by hand, as for softmax)",
    evidence_kind="interval arithmetic + lemma (partly argued by hand)",
    check_description="the lemma's sign facts (positivity certificates) and its controls (exact negative points); "
                      "the rewrites of the engines (prove_zero); an arb-ball enclosure in the inverse weights "
                      "v = e^-a, replayed and re-proven by an independent checker that shares no code with it",
    expected="verified", check=sink_cert_check,
    control=Control("the same certificate claiming the sink phase for eps = 1e-9", sink_cert_control),
    witness=Witness(description="u(0) = (-5/2, -3, -7/2): a sink phase with weight > 1 - 1e-9, certified",
                    run=sink_cert_witness),
    engines=("sinks.softmax1",), group="sinks"))


# ---- BANDIT --------------------------------------------------------------------------------------
#: the settled check's tolerance on the constant (relative), and the short-horizon rule's |ratio - 1| at t = 1e8:
#: the approach is O(log t / t) (about 1e-6 at t = 1e8, 1e-13 at 1e100 in our runs), so 1e-4 separates the law
#: from any constant off by more than 0.01 % (the 1 % near miss is 100 tolerances away)
BANDIT_TOL = 1e-4
#: ... and on the exponent of t (the measured local exponent is 1 to 1e-12 by t = 1e100)
BANDIT_TOL_EXPONENT = 2e-4
BANDIT_TIMES = [1e4, 1e5, 1e6, 1e7, 1e8]
#: the near miss of the control: the derived constant off by 1 %
BANDIT_NEAR_MISS = 1.01
#: the settled runs stop at t = 1e300 (two horizons of numerics.integrate.settle: 1e100, 1e300); the ratio is
#: flat to 1e-13 from t = 1e100 on, so a longer bound only costs time
BANDIT_MAX_LOG10_T = 300


def _bandit_law(link="softmax"):
    """The derived bandit law of ``link`` under the logistic loss (:func:`theorems.asymptotics.bandit_law`)."""
    from theorems.asymptotics import bandit_law

    law = bandit_law("logistic", link)
    if law.exponent is None or not hasattr(law, "constant_for"):  # pragma: no cover - a NoLaw for the softmax
        raise ValueError(f"no bandit law derived for {link!r}: {law}")
    return law


def _bandit_constant(u, link="softmax"):
    """The derived constant of (1 - max s) t at the projections ``u``: (1 + e^{u_1}) (1/n) sum_j 1/Delta_j for the
    softmax (Mei et al.'s constant in the bandit's clock tau, times the logistic clock's 1 + e^{u_1})."""
    return _bandit_law(link).constant_for(len(u), u)


def _bandit_runs(ctx, instances, *, frozen=("V",)):
    """The short-horizon runs: float64 DOP853 to t = 1e8 (the projections as given, u_1 != 0)."""
    import numerics

    def run():
        out = []
        for u in instances:
            p = numerics.Problem(loss="logistic", V=np.array([u], float), a=np.zeros(len(u)), target=np.array([1.0]),
                                 frozen=frozen)
            tr = numerics.simulate(p, t_end=BANDIT_TIMES[-1], times=BANDIT_TIMES, backend="numpy")
            out.append({"u": list(u), "t": [float(t) for t in tr.times],
                        "one_minus_max": [float(x) for x in tr.one_minus_max]})
        return out

    return ctx.memo(("bandit", tuple(map(tuple, instances)), frozen), run)


def _bandit_instances(ctx):
    from ._claims_common import rng_for

    rng = rng_for(ctx, 2005)
    extra = [np.round(rng.normal(size=n), 3).tolist() for n in ((3, 5) if ctx.full else (3,))]
    return [[1.0, 0.3, -0.5, 0.1], *extra]


def _bandit_settled_instances(ctx):
    """The same instances shifted so that the winner's projection is 0 (the gaps Delta_j unchanged). The
    high-precision engine forms z = <u, s> and u_top - z by subtraction, which cancels once 1 - s_top is below
    10^-dps: with u_top != 0 its a(t) goes wrong past t = 1e40 at 30 digits (measured: sum(a), a constant of the
    flow, drifts). With u_top = 0 the product s_top u_top is exactly 0 and nothing cancels."""
    return [[round(x - max(u), 12) for x in u] for u in _bandit_instances(ctx)]


def _log_losers_mass(h_mp):
    r"""The measure of the bandit law: $\log(1-\max\hat\varphi)$ at the grid times after 0, as the losers' mass
    in mpmath (it is about $10^{-300}$ at $t=10^{300}$, below float64)."""
    import mpmath as mp

    def measure(tr, E):
        out = []
        for row in tr.a[1:]:
            hs = [h_mp(mp.mpf(v)) for v in row]
            top = max(range(len(hs)), key=lambda i: hs[i])
            out.append(float(mp.log(mp.fsum(h for i, h in enumerate(hs) if i != top) / mp.fsum(hs))))
        return np.array(out)
    return measure


def _bandit_settle(ctx, u, link, constant):
    """One instance (values frozen, a(0) = 0, logistic, b = 1) settled against ``constant`` (numerics.integrate.
    settle.settle_law, clock t, exponent 1); the runs are shared by the check, the control and the witness."""
    import sympy as sp

    import numerics
    from numerics.integrate.settle import settle_law
    from theorems import get_link

    K = get_link(link)
    x = sp.Symbol("x", real=True)
    runs = ctx.memo(("bandit-settle-runs", K.name, sp.sstr(K.h(x)), tuple(u)), dict)
    prob = numerics.Problem(loss="logistic", link=K, V=np.array([u], float), a=np.zeros(len(u)),
                            target=np.array([1.0]), frozen=("V",))
    res = settle_law(prob, measure=_log_losers_mass(sp.lambdify(x, K.h(x), "mpmath")), exponent=1.0,
                     constant=float(constant), clock="t", max_log10_t=min(ctx.max_log10_t, BANDIT_MAX_LOG10_T),
                     tol=BANDIT_TOL, tol_exponent=BANDIT_TOL_EXPONENT, runs=runs)
    return {"u": list(u), "link": K.name, "constant": float(constant), **res}


def _bandit_settled_verdict(rows, *, what):
    """The three verdicts of the settled instances: one refuted refutes, one undecided is inconclusive (never a
    pass), else verified."""
    slim = [{k: r[k] for k in ("u", "link", "constant", "verdict", "why", "horizon_log10_t")} |
            {"ratio_extrapolated": r["history"][-1]["ratio_extrapolated"],
             "exponent_local": r["history"][-1]["exponent_local"]} for r in rows]
    details = {"settled": slim, "rule": f"numerics.integrate.settle.settle_law on (1 - max s) ~ C t^-1: settled "
                                        f"(successive horizons agree, the extrapolation in 1/log t agrees with the "
                                        f"last ratio), then |p - 1| <= {BANDIT_TOL_EXPONENT:g} and |ratio - 1| <= "
                                        f"{BANDIT_TOL:g}"}
    bad = next((r for r in rows if r["verdict"] == "refuted"), None)
    if bad is not None:
        last = bad["history"][-1]
        return Outcome("refuted", f"{what}: for u = {bad['u']} ({bad['link']}) {bad['why']}", details,
                       counterexample={"u": bad["u"], "link": bad["link"], "constant": bad["constant"],
                                       "horizon_log10_t": bad["horizon_log10_t"],
                                       "ratio_extrapolated": last["ratio_extrapolated"],
                                       "exponent_local": last["exponent_local"]})
    und = next((r for r in rows if r["verdict"] != "verified"), None)
    if und is not None:
        return Outcome("inconclusive", f"{what}: u = {und['u']} not settled", details,
                       reason=f"undecided (not a pass): {und['why']}")
    return Outcome("verified", f"{what}: settled on {len(rows)} instance(s) by t = 1e"
                   f"{max(r['horizon_log10_t'] for r in rows)}, (1 - max s) t / C -> "
                   + ", ".join(f"{r['history'][-1]['ratio_extrapolated']:.8f}" for r in rows)
                   + f" (tolerance {BANDIT_TOL:g}), exponent of t "
                   + ", ".join(f"{r['history'][-1]['exponent_local']:.6f}" for r in rows), details)


def _bandit_short_verdict(runs, *, what):
    """The short-horizon rule at u_1 != 0 (float64 to t = 1e8): |ratio - 1| decreasing and < BANDIT_TOL."""
    rows, bad = [], None
    for r in runs:
        C = _bandit_constant(r["u"])
        ratio = [om * t / C for om, t in zip(r["one_minus_max"], r["t"])]
        err = [abs(x - 1) for x in ratio]
        ok = all(e1 < e0 for e0, e1 in zip(err, err[1:])) and err[-1] < BANDIT_TOL
        rows.append({"u": r["u"], "constant": C, "ratio": ratio, "ok": ok})
        if not ok and bad is None:
            bad = rows[-1]
    fig = Figure("bandit_rate.png", "curves", f"{what}: (1 - s_top) t divided by the derived constant",
                 data={"panels": [{"xlabel": "t", "ylabel": "(1 - s_top) t / C", "xscale": "log",
                                   "series": [{"x": r["t"], "y": row["ratio"], "label": f"u = {row['u']}"}
                                              for r, row in zip(runs, rows)]}]})
    details = {"instances": rows, "times": BANDIT_TIMES,
               "rule": f"|ratio - 1| decreasing in t and < {BANDIT_TOL:g} at t = {BANDIT_TIMES[-1]:g}"}
    if bad is not None:
        return Outcome("refuted", f"{what}: for u = {bad['u']} the ratio ends at {bad['ratio'][-1]:.6g}", details,
                       counterexample={"u": bad["u"], "t": BANDIT_TIMES[-1], "ratio": bad["ratio"][-1],
                                       "constant": bad["constant"]}, figures=(fig,))
    return Outcome("verified", f"{what}: |ratio - 1| at t = 1e8: "
                   + ", ".join(f"{abs(row['ratio'][-1] - 1):.1e}" for row in rows), details, figures=(fig,))


def bandit_check(ctx):
    law = _bandit_law()
    settled = _bandit_settled_verdict([_bandit_settle(ctx, u, "softmax", law.constant_for(len(u), u))
                                       for u in _bandit_settled_instances(ctx)],
                                      what=f"(1 - s_1) t -> C = {sp_str(law.constant)} (derived), u_1 = 0")
    if settled.verdict != "verified":
        return settled
    inst = _bandit_instances(ctx)
    out = _bandit_short_verdict(_bandit_runs(ctx, inst), what="u_1 != 0, float64 to t = 1e8")
    if out.verdict != "verified":
        return out
    # contrasts (findings, not pass conditions): the constant without 1/n, and trainable values (claim C18's regime)
    no_n = [row["ratio"][-1] / len(row["u"]) for row in out.details["instances"]]
    trained = _bandit_runs(ctx, inst[:1], frozen=())[0]
    growth = [om * t for om, t in zip(trained["one_minus_max"], trained["t"])]
    details = {**out.details, "settled": settled.details["settled"], "settled_rule": settled.details["rule"],
               "law": law.to_json(), "without_1_over_n_ratio_at_1e8": no_n,
               "trainable_values_(1-s)t": dict(zip([f"{t:g}" for t in trained["t"]], growth))}
    return Outcome("verified", settled.evidence + "; " + out.evidence + f"; the constant without 1/n is off by the "
                   f"factor n (ratio {no_n[0]:.4f}); with trainable values (1 - s_1) t grows ({growth[0]:.3g} -> "
                   f"{growth[-1]:.3g}), as the 1/log^2 t law of C18 says", details, figures=out.figures)


def sp_str(expr):
    import sympy as sp

    return sp.sstr(expr)


def bandit_control(ctx):
    """Near miss: the derived constant off by 1 %; the same settled runs and comparison."""
    law = _bandit_law()
    return _bandit_settled_verdict([_bandit_settle(ctx, u, "softmax", BANDIT_NEAR_MISS * law.constant_for(len(u), u))
                                    for u in _bandit_settled_instances(ctx)],
                                   what=f"(1 - s_1) t -> {BANDIT_NEAR_MISS} C (constant off by 1 %)")


def bandit_witness(ctx):
    """An input under which the near miss really holds: the softmax at temperature sqrt(1.01), whose derived
    constant is 1.01 C (C the softmax's, the control's comparison); same settled code path."""
    import sympy as sp

    from theorems import Link

    x = sp.Symbol("x", real=True)
    K = Link("softmax-T-sqrt1.01", h=sp.exp(x / sp.sqrt(sp.Rational(101, 100))))
    law, law_T = _bandit_law(), _bandit_law(K)
    ratio = sp.simplify(law_T.constant / law.constant)
    if ratio != sp.Rational(101, 100):  # pragma: no cover - the derivation would have changed
        return Outcome("refuted", f"the temperature-sqrt(1.01) law's constant is {sp.sstr(ratio)} times the "
                       "softmax's, not 1.01", {}, counterexample={"ratio": sp.sstr(ratio)})
    u = _bandit_settled_instances(ctx)[0]
    return _bandit_settled_verdict([_bandit_settle(ctx, u, K, BANDIT_NEAR_MISS * law.constant_for(len(u), u))],
                                   what=f"softmax at temperature sqrt(1.01) against {BANDIT_NEAR_MISS} C (its derived "
                                        "constant)")


CLAIMS.append(Claim(
    id="BANDIT", title="Frozen values: the softmax policy-gradient bandit rate (1 - s_1) t -> const",
    statement=r"V\ \text{frozen}:\ (1-s_{1}(t))\,t\to(1+e^{u_1})\,\frac1n\sum_{j\ne1}\frac1{\Delta_j},\ "
              r"\Delta_j=u_1-u_j",
    provenance="D", assumptions="logistic loss, softmax, d = 1, V frozen (u = V^T w fixed), a(0) = 0; the law is "
                                "derived with SymPy (theorems.asymptotics.bandit_law: the balanced manifold "
                                "eps_j Delta_j = K, dK/dtau = -n K^2); in the bandit's own clock tau the constant is "
                                "Mei et al.'s (arXiv 2005.06392), times the logistic clock's 1 + e^{u_1}; settled "
                                "runs on the log clock (high precision, u_1 shifted to 0) to t = 1e300, and float64 "
                                "DOP853 to t = 1e8 at u_1 != 0",
    evidence_kind="asymptotic fit",
    check_description="the derived law settled (numerics.integrate.settle: successive horizons agree, the "
                      f"extrapolation in 1/log t agrees), |ratio - 1| <= {BANDIT_TOL:g}, |p - 1| <= "
                      f"{BANDIT_TOL_EXPONENT:g}; at u_1 != 0 (float64 to 1e8) |ratio - 1| must decrease and end "
                      f"below {BANDIT_TOL:g}",
    expected="verified", check=bandit_check,
    control=Control(f"the derived constant off by 1 % ({BANDIT_NEAR_MISS} C)", bandit_control),
    witness=Witness(description="the softmax at temperature sqrt(1.01): its derived constant is 1.01 C, so the "
                                "near miss holds", run=bandit_witness),
    engines=("flow", "logistic.dell"), group="sinks"))


# ---- NORMS ---------------------------------------------------------------------------------------
#: softpick is left out of the family runs: the families start from a(0) = 0, which is softpick's kink
#: (e^0 - 1 = 0: every weight is 0 and the normalizer is its epsilon), so the flow starts on the
#: non-smooth set and the run is not a test of the normalization (measured: minutes without an answer)
NORMS_LEFT_OUT = {"softpick": "the families' a(0) = 0 is softpick's kink (all weights 0, normalizer = epsilon)"}
#: links whose vertex verdict is tabulated as a finding, not a pass condition, with the reason: stablemax's
#: weights grow like a polynomial of the logits (s(x) = x + 1), so 1 - max weight decays like a power of
#: 1/log t (the rate-law exponent is about 1); at t = 1e40 the vertex family's test is not reached on every
#: instance (full profile: 1/16 instances with the right argmax and 1 - max = 0.056)
NORMS_VERTEX_FINDINGS = {"stablemax": "polarizes like 1/log t: the vertex family's test is not reached by "
                                      "t = 1e40 on every instance (a finding, not a pass condition)"}


def _norm_links():
    from theorems.sinks import SOFTMAX1, STABLEMAX, ssmax

    return (SOFTMAX1, STABLEMAX, ssmax(4))


def _norms_table(ctx):
    """Run the vertex and rate-law families (logistic) and the partial family (square) on each link: check,
    control and witness of every family record, through the families' own code."""
    from ._families import family_claims

    def run():
        rows = []
        for K in _norm_links():
            for loss, wanted in (("logistic", ("vertex", "rate_law")), ("square", ("partial",))):
                for c in family_claims(K, loss, provenance="D", paper=False):
                    fam = c.id.split("[")[0].removeprefix("F.")
                    if fam not in wanted:
                        continue
                    res, ctl = c.check(ctx), c.control.run(ctx)
                    rows.append({"link": K.name, "loss": loss, "family": fam, "expected": c.expected,
                                 "verdict": res.verdict, "control": ctl.verdict, "evidence": res.evidence,
                                 "record": c})
        return rows

    return ctx.memo(("norms",), run)


def _norms_outcome(ctx, rows, *, field, what):
    table = [{k: r[k] for k in ("link", "loss", "family", "expected", "verdict", "control", "evidence")} for r in rows]
    vertex = [r for r in rows if r["family"] == "vertex" and r["link"] not in NORMS_VERTEX_FINDINGS]
    bad = next((r for r in vertex if r[field] != ("verified" if field == "verdict" else "refuted")), None)
    summary = "; ".join(f"{r['link']}/{r['loss']} {r['family']}: {r['verdict']}" for r in rows)
    if bad is not None:
        return Outcome("refuted", f"{what}: {bad['link']} gives {bad[field]} ({bad['evidence'][:160]})",
                       {"table": table, "left_out": NORMS_LEFT_OUT},
                       counterexample={"link": bad["link"], "loss": bad["loss"], "family": "vertex", field: bad[field]})
    left = "; ".join(f"{k} ({v})" for k, v in NORMS_LEFT_OUT.items())

    def vertex_verdict(link):
        return next((r["verdict"] for r in rows if r["link"] == link and r["family"] == "vertex"), "not run")

    found = "; ".join(f"{k} vertex: {vertex_verdict(k)} ({v})" for k, v in NORMS_VERTEX_FINDINGS.items())
    summary = f"{summary}; findings: {found}"
    return Outcome("verified", f"{what}: {summary}; left out: {left}",
                   {"table": table, "left_out": NORMS_LEFT_OUT})


def norms_check(ctx):
    return _norms_outcome(ctx, _norms_table(ctx), field="verdict",
                          what="logistic loss, vertex family verified for softmax1 and ssmax(4)")


def norms_control(ctx):
    """The vertex family's own control on each link (the winner is the argmin of u(0), same runs): refused for
    every link means the check could tell."""
    rows = _norms_table(ctx)
    bad = next((r for r in rows if r["family"] == "vertex" and r["control"] != "refuted"), None)
    if bad is not None:
        return Outcome("verified", f"the vertex family's control holds for {bad['link']}", {})
    return Outcome("refuted", "the vertex family's control (wrong winner rule) is refused for every link",
                   {}, counterexample={"links": [r["link"] for r in rows if r["family"] == "vertex"]})


def norms_witness(ctx):
    """The vertex family's witness on softmax1 (an input fixed in advance under which its wrong rule holds)."""
    rec = next(r["record"] for r in _norms_table(ctx) if r["family"] == "vertex")
    return rec.witness.run(ctx)


CLAIMS.append(Claim(
    id="NORMS", title="The proposed fixes under the claim families: polarization verdicts for three normalizations",
    statement=r"\ell\ \text{logistic}:\ \varphi\to e_{\arg\max u(0)}\ \text{for softmax1, ssmax; stablemax, "
              r"the square loss and rate exponents tabulated}",
    provenance="D", assumptions="the claim families of proofs_check.claims._families on the definitions of "
                                "theorems._sinks "
                                "(ssmax at the scale of n = 4, run on n = 3 and 4; softpick left out: the "
                                "families' a(0) = 0 is its kink); stablemax's vertex verdict (it polarizes like "
                                "1/log t), the square-loss partial verdicts and the estimated rate exponents are "
                                "findings, not pass conditions",
    evidence_kind="high-precision numerics",
    check_description="the vertex family's check on each link (logistic loss); the table of every family run",
    expected="verified", check=norms_check,
    control=Control("the vertex family's control on each link (the wrong winner rule argmin u(0))", norms_control),
    witness=Witness(description="the vertex family's own witness, on softmax1", run=norms_witness),
    engines=("flow", "logistic.dell"), profiles=("full",), group="sinks"))
