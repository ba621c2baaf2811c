r"""Attention sinks beyond the paper: the sink slot of softmax1, and predictions of neighbouring theories.

Every statement here is derived for this project [D]; each names the outside source whose
prediction it tests. The paper's own claims are C01-C33.

* **SINK1** [D] (normalization: E. Miller, 2023): softmax1 is softmax over one extra token whose
  logit and value are frozen at 0, and the two gradient flows coincide (exact; SymPy).
* **MARGIN** [D] (tests the max-margin token-selection picture, arXiv 2306.13596): under the
  logistic loss, from a uniform $a(0)$, the direction of $a(t)-\bar a(t)\mathbf 1$ tends to that of
  $e_{i^*}-\mathbf 1/n$ ($i^*=\arg\max u(0)$); the rate is estimated, not assumed.

SINK2 and SINK2.CERT (the metastable sink of softmax1 and its certificate) live in :mod:`._sinks_sink2`, BANDIT
and NORMS (frozen values, other normalizations) in :mod:`._sinks_bandit`; ``CLAIMS`` here lists them all, in
the registry's order.


Figures are drawn by :mod:`..report._figures_curves` (kind ``curves``).
"""
from __future__ import annotations

import numpy as np
from numerics import lambdify_checked, reduced_logistic
from numerics.integrate import dop853_solve
from theorems.asymptotics import margin_law
from theorems.sinks import (gate_clock_proofs, gated_model, sink1_control as control, sink1_proofs,
                            sink1_witness as witness)

from ..claim import Claim, Control, Figure, Outcome, Witness
from ._sinks_bandit import BANDIT_CLAIMS
from ._sinks_sink2 import SINK2_CLAIMS
from ._claims_common import rng_for


# ---- SINK1 ---------------------------------------------------------------------------------------
def _sink1_sizes(ctx):
    if ctx.full:
        return tuple((n, d) for n in range(2, 7) for d in (1, 2))
    return ((2, 1), (3, 1), (3, 2), (4, 1))


def sink1_check(ctx):
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
    rng = rng_for(ctx, salt)
    ns = (3, 4, 6) if ctx.full else (3, 4)
    return [(np.round(rng.normal(size=n), 3).tolist(), [0.0] * n, 1.0) for n in ns]


def _centered_cosine(a, direction):
    x = np.asarray(a, float) - np.mean(a)
    e = np.asarray(direction, float) - np.mean(direction)
    return float(x @ e / (np.linalg.norm(x) * np.linalg.norm(e)))


def _margin_runs(ctx, instances):
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
    right-hand sides generated from :func:`theorems.sinks.gated_model`."""
    import sympy as sp

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
    return _gate_outcome(ctx, gate_clock_proofs(((2, 1), (3, 1)), with_gate_factor=False),
                         what="logistic: gated (u, a) flow = gamma x ungated field (the gate has no effect)")


def gate_witness(ctx):
    """A planted bug under which the control's statement really holds: the gate's sigmoid replaced by 1."""
    import sympy as sp

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


CLAIMS += SINK2_CLAIMS + BANDIT_CLAIMS
