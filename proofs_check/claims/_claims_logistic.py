r"""Claims 11-20 of the paper notes (paper-notes#claims): logistic loss, full polarization.

Property searches (claims 11-14, 16, 20) integrate the full $(V,a)$ flow of a batch of
random instances with :func:`numerics.integrate_batch` (torch float64, log clock) and
test orderings and monotonicity with the exact time derivatives
$\dot u=\gamma b s$, $\dot a=\gamma J(s)u$ ($u=V^\top\beta^*$, claim 7) evaluated at every grid
point (a sign test, not finite differences); the grid has 12 points per decade from
$t=10^{-3}$. Counterexamples are re-checked on an independent single-flow
integration (:func:`numerics.simulate`). The asymptotic claims (15, 17-19) follow the
reduced system with :func:`numerics.reduced_logistic` to $t=10^{100}$ (winner, monotonicity, the gap slope, the
losers' convergence); the full profile confirms those trajectories at ``ctx.dps`` (30) digits with the Taylor
backend and cross-checks them on GBS (:mod:`._crosscheck`). Their laws (rate, $t\mathcal L\to1/b$, value-norm
growth) are the derived laws of :mod:`theorems.asymptotics`, checked on the full flow once settled
(:func:`numerics.integrate.settle.settle_law`, the code path of the ``rate_law`` family), and the reduced system
must reproduce those runs at $t=10^{100}$.

The searches live in :mod:`._logistic_search` (C11-C14, C16), the asymptotic laws in :mod:`._logistic_laws`
(C15, C17-C19); this module holds C20 and the group's ``CLAIMS`` list, in the registry's order.
"""
from __future__ import annotations

import numpy as np

from ._claims_common import fmt, log10_times, logistic_reduced, softmax
from ..claim import Claim, Control, Outcome, Witness
from ._crosscheck import reduced_instances, with_engine_crosscheck
from ._logistic_laws import C15, C17, C18, C19
from ._logistic_search import _PS, C11, C12, C13, C14, C16, _instance_record, _instances
from ._claims_regression import square_partial_runs, square_vertex_runs


# ---- C20 -----------------------------------------------------------------------------------
def _c20_runs(ctx):
    def compute():
        per_n = 16 if ctx.full else 6
        times = np.concatenate([[0.0], log10_times(100, 1, 0)])
        runs = []
        for inst in _instances(ctx, 20, ns=(3, 5, 8), per_n=per_n, uniform=False):
            # the reduced system holds for any a(0) (claim 7); it reaches t=1e100 cheaply
            r = logistic_reduced(inst["u0"], inst["a0"], inst["b"], times)
            runs.append({**inst, "times": times, "s": softmax(r["a"])})
        return runs
    return ctx.memo("c20", compute)


def vertex_test(s_end, s_mid, n, b, t_end):
    """Vertex criterion: the winner is stable from t_mid on and (1-max s) log^2(b t_end) <= 2 * 2(n-1)b/n."""
    ratio = (1 - s_end.max(-1)) * np.log(b * t_end) ** 2 / (2 * (n - 1) * b / n)
    return (s_end.argmax(-1) == s_mid.argmax(-1)) & (ratio <= 2.0), ratio


def c20_check(ctx):
    """The vertex test, then the GBS-versus-Taylor cross-check of one instance per n (full profile)."""
    return with_engine_crosscheck(ctx, _c20_vertex(ctx),
                                  lambda: reduced_instances(_c20_runs(ctx), first_only=True), key="c20")


def _c20_vertex(ctx):
    runs = _c20_runs(ctx)
    total, at_vertex, other_winner, worst = 0, 0, 0, 0.0
    example = None
    for run in runs:
        s = run["s"]
        k_mid = int(np.argmin(np.abs(run["times"] - 1e50)))
        ok, ratio = vertex_test(s[:, -1], s[:, k_mid], run["n"], run["b"], run["times"][-1])
        total += len(ok)
        at_vertex += int(ok.sum())
        worst = max(worst, float(ratio.max()))
        diff = s[:, -1].argmax(-1) != run["u0"].argmax(-1)
        other_winner += int(diff.sum())
        if example is None and diff.any():
            i = int(np.nonzero(diff)[0][0])
            example = {"instance": _instance_record(run, i), "winner": int(s[i, -1].argmax()),
                       "argmax_u0": int(run["u0"][i].argmax()), "max_s_at_1e100": float(s[i, -1].max())}
    details = {"instances": total, "at_vertex": at_vertex, "winner_not_argmax_u0": other_winner,
               "max_law_ratio": worst, "example": example}
    if at_vertex == total and other_winner > 0:
        return Outcome("verified", f"{total} random (a(0), V(0)) (a(0)~N(0,1), n=3,5,8): all converge to a vertex by "
                       f"t=1e100 at the 1/log^2 t rate (max ratio to 2(n-1)b/n: {fmt(worst, 3)}, stable winner since "
                       f"1e50); in {other_winner}/{total} the winner is not argmax u(0)", details=details)
    if at_vertex < total:
        return Outcome("inconclusive", f"{total - at_vertex} instances not yet at a vertex by t=1e100", details=details,
                       reason="vertex criterion not met within the horizon")
    return Outcome("inconclusive", "every winner was argmax u(0)", details=details,
                   reason="the 'not necessarily argmax u(0)' part was not exhibited")


def c20_control(ctx, rows=None):
    """The same vertex test on square-loss flows (partial polarization, claim 21) must fail."""
    rows = square_partial_runs(ctx) if rows is None else rows
    fails = []
    for r in rows:
        ok, ratio = vertex_test(r["s_end"][None], r["s_mid"][None], r["n"], r.get("b_law", 1.0), 1e100)
        if not ok[0]:
            fails.append({"instance": r["name"], "max_s": float(r["s_end"].max()), "law_ratio": float(ratio[0])})
    if len(fails) == len(rows):
        f = fails[0]
        return Outcome("refuted", f"square-loss limits are rejected by the vertex test ({len(fails)}/{len(rows)}; "
                       f"e.g. max s = {fmt(f['max_s'])})", counterexample=f, details={"rows": fails})
    return Outcome("verified", f"the vertex test accepted {len(rows) - len(fails)}/{len(rows)} rows "
                   f"({', '.join(r['name'] for r in rows[:3])})", details={"rows": fails})


def _c20_witness(ctx):
    """The control's vertex test on square-loss rows at b = 1e6, whose limits are vertices to within its bound."""
    return c20_control(ctx, rows=square_vertex_runs(ctx))


C20 = Claim(
    id="C20",
    title="Generic initializations still reach a vertex, not necessarily argmax u(0)",
    statement=r"a(0),V(0)\ \text{generic}\Rightarrow\sigma(a(t))\to e_k\ \text{for some }k\ (\text{not "
              r"always }\arg\max u(0))",
    provenance="D, empirical",
    assumptions="logistic loss; random a(0) ~ N(0,1), V(0) random",
    evidence_kind=_PS,
    check_description="vertex test at t=1e100 (stable winner since 1e50, 1/log^2 law within a factor "
                      "2); count other winners",
    expected="verified",
    check=c20_check,
    control=Control("the same vertex test on square-loss limits (partial polarization) must fail", c20_control),
    digest_number=20,
    group="logistic",
    witness=Witness(description="the vertex test on square-loss limits at |beta*|^2 = 1e6 (V(0) = 0), where the "
                                "flow stops with 1 - max s ~ 1.6e-6, inside the test's bound", run=_c20_witness),
    engines=('reduced', 'flow', 'logistic.dell', 'softmax.shift'),
    invariant_under=("b",),
)


CLAIMS = [C11, C12, C13, C14, C15, C16, C17, C18, C19, C20]
