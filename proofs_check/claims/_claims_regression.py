r"""Claims 21-25 of the paper notes (paper-notes#claims): square loss / regression, partial polarization.

Flows are integrated with :func:`numerics.simulate` / :func:`numerics.integrate_batch`
(float64, rtol 1e-12); the conditioning sweep (claim 25) is plain gradient descent
(:func:`numerics.gradient_descent_batch`: the five runs in one batch) with the authors' settings, including
their random stream (legacy NumPy ``RandomState(123)``, same draw order), so the reference re-run
numbers [R] can be compared directly.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from numerics.progress import report
from theorems import SymbolicModel
import numerics

from ._claims_common import (_floats, authors_conditioning, entropy, flow, fmt, log10_times, logistic_reduced,
                             rng_for, sizes, softmax, symbolic_outcome)
from ..claim import Claim, Control, Figure, Outcome, Witness

#: wording shared by several claim records below
_SQ = "square loss 1/2|V s - y|^2 (X = I)"

# ---------------------------------------------------------------------------------------
# C21 partial polarization


def square_partial_runs(ctx):
    """Square loss 1/2|V s - y|^2 from V(0)=0 and non-uniform a(0) (d=6, n=5), to t=200.

    Returns one row per instance with the limit weights, entropies and loss, and
    the trajectory for the figure. Shared by claims 21 and 20 (control).
    """
    cases = [(4.0, 0.1), (16.0, 0.1)] + ([(16.0, 0.3), (4.0, 0.3)] if ctx.full else [(16.0, 0.3)])
    return ctx.memo("square_partial", lambda: _square_rows(ctx, 21, cases))


#: the target norm of C20's witness rows: from V(0)=0 the square-loss flow stops with 1 - max s ~ 1.6/b
#: (measured: 1.7e-4 at b = 1e4, 1.6e-6 at 1e6), 40 times inside the bound 8/(5 log^2 1e100) = 3.0e-5 that the
#: vertex test applies to square-loss rows (n = 5, law constant b = 1, as for the control's rows)
VERTEX_B = 1e6


def square_vertex_runs(ctx):
    """Square-loss rows of :func:`square_partial_runs`'s shape at b = :data:`VERTEX_B`: limits that are vertices
    to within the vertex test's bound (C20's witness)."""
    return ctx.memo("square_vertex", lambda: _square_rows(ctx, 2020, [(VERTEX_B, 0.1), (VERTEX_B, 0.3)]))


def _square_rows(ctx, salt, cases):
    rng = rng_for(ctx, salt)
    d, n = 6, 5
    rows = []
    times = np.concatenate([[0.0], log10_times(np.log10(200.0), 8, -2)])
    for b, scale in cases:
        y = rng.normal(size=d)
        y *= np.sqrt(b) / np.linalg.norm(y)
        a0 = scale * rng.normal(size=n)
        sol = flow("square", "softmax", np.zeros((1, d, n)), a0[None], y[None], times)
        V, a = sol["V"][0], sol["a"][0]
        s = softmax(a)
        beta = np.einsum("tkn,tn->tk", V, s)
        L = 0.5 * np.sum((beta - y) ** 2, -1)
        k_mid = int(np.argmin(np.abs(times - 100.0)))
        rows.append({"name": f"d={d} n={n} b={b:g} a(0)={scale:g}*N(0,1)", "n": n, "b": b, "y": y.tolist(),
                     "a0": a0.tolist(), "H0": float(entropy(s[0])), "H_end": float(entropy(s[-1])),
                     "H_mid": float(entropy(s[k_mid])), "L0": float(L[0]), "L_end": float(L[-1]),
                     "s_end": s[-1], "s_mid": s[k_mid], "times": times, "weights": s, "entropy": entropy(s)})
    return rows


def partial_polarization_test(row):
    """Partial polarization: loss ~0, entropy frozen, strictly between 0 and H(0), not a vertex."""
    frozen = abs(row["H_end"] - row["H_mid"]) <= 1e-10
    # L(0) ~ b/2; 1e-20 relative is far below anything the flow would leave if it had not converged
    converged = row["L_end"] <= 1e-20 * max(row["L0"], 1.0)
    partial = 0.05 < row["H_end"] < row["H0"] - 1e-3 and float(np.max(row["s_end"])) < 0.99
    return frozen and converged and partial, {"frozen": frozen, "converged": converged, "partial": partial}


def c21_check(ctx):
    rows = square_partial_runs(ctx)
    results = [(r, *partial_polarization_test(r)) for r in rows]
    table = [{"instance": r["name"], "H0": r["H0"], "H_inf": r["H_end"], "max_s": float(np.max(r["s_end"])),
              "L_end": r["L_end"], **flags} for r, _, flags in results]
    fig_row = rows[-1]
    figure = Figure("flow_square.png", "flow",
                    f"Square loss from V(0)=0 ({fig_row['name']}): weights and entropy against t; the weights "
                    "freeze at a non-vertex point once the loss reaches 0 (partial polarization)",
                    {"times": fig_row["times"], "weights": fig_row["weights"], "entropy": fig_row["entropy"],
                     "title": "square loss"})
    ev = "; ".join(f"{t['instance']}: H {fmt(t['H0'])} -> {fmt(t['H_inf'])}, max s {fmt(t['max_s'], 3)}, "
                   f"L(200)={fmt(t['L_end'], 2)}" for t in table)
    if all(ok for _, ok, _ in results):
        return Outcome("verified", "loss -> 0 and the weights freeze strictly inside the simplex: " + ev,
                       details={"rows": table}, figures=(figure,))
    bad = next(t for (r, ok, _), t in zip(results, table) if not ok)
    return Outcome("refuted", "partial-polarization test failed: " + ev, details={"rows": table},
                   counterexample=bad, figures=(figure,))


def c21_witness(ctx):
    """The partial-polarization test that rejects the logistic runs accepts the square-loss rows (claim 21's own)."""
    rows = square_partial_runs(ctx)
    results = [(r, *partial_polarization_test(r)) for r in rows]
    if all(ok for _, ok, _ in results):
        return Outcome("verified", f"the partial-polarization test accepts all {len(rows)} square-loss rows")
    return Outcome("refuted", "a square-loss row failed the partial-polarization test",
                   counterexample={"rows": [r["name"] for r, ok, _ in results if not ok]})


def logistic_row(r, *, a0=None, b=None):
    """The logistic loss from u(0) = 0 on square row ``r``'s n, a(0) and b (or the given ``a0``, ``b``), in the
    row shape of :func:`partial_polarization_test`: weights at t = 0, 1e50, 1e100 (the reduced system, internal
    clock)."""
    n = r["n"]
    a0 = np.array(r["a0"] if a0 is None else a0, float)
    b = r["b"] if b is None else b
    red = logistic_reduced(np.zeros((1, n)), a0[None], np.array([b]), np.array([0.0, 1e50, 1e100]))
    s = softmax(red["a"][0])
    z = float(red["u"][0, -1] @ s[-1])
    return {"name": r["name"] + " (logistic)", "n": n, "H0": float(entropy(s[0])), "H_end": float(entropy(s[-1])),
            "H_mid": float(entropy(s[1])), "L0": float(np.log(2.0)), "L_end": float(np.log1p(np.exp(-z))),
            "s_end": s[-1]}


def tied_maximum(a0):
    """``a0`` with its second-largest entry raised to the largest (a tie that the flow keeps, by symmetry)."""
    a = np.array(a0, float)
    top = np.argsort(a)[::-1]
    a[top[1]] = a[top[0]]
    return a


def c21_control(ctx):
    """The same partial-polarization test on the logistic loss from the same start (u(0)=0) must fail."""
    out = []
    for r in square_partial_runs(ctx):
        row = logistic_row(r)
        ok, flags = partial_polarization_test(row)
        out.append((row, ok, flags))
    if not any(ok for _, ok, _ in out):
        row, _, flags = out[0]
        return Outcome("refuted", f"logistic loss from the same start is not frozen: H(1e50)={fmt(row['H_mid'])}, "
                       f"H(1e100)={fmt(row['H_end'])} (keeps polarizing)",
                       counterexample={"instance": row["name"], "H_1e50": row["H_mid"], "H_1e100": row["H_end"],
                                       **flags})
    return Outcome("verified", "the logistic run passed the partial-polarization test")


C21 = Claim(
    id="C21",
    family="partial[square,softmax]",
    title="Square loss from V(0)=0: loss -> 0, limit weights not a vertex",
    statement=r"\mathcal L\to0,\quad 0<H(\sigma(a_\infty))<H(\sigma(a(0))),\ \sigma(a_\infty)\ \text{not a vertex}",
    provenance="A/D",
    assumptions=_SQ + "; V(0) = 0, non-uniform a(0)",
    evidence_kind="high-precision numerics",
    check_description="flow to t=200: loss below 1e-20 L(0), entropy frozen, strictly inside (0, H(0)), max s < 0.99",
    expected="verified",
    check=c21_check,
    control=Control("the same test on the logistic loss from the same start (keeps polarizing) must fail", c21_control),
    digest_number=21,
    group="regression",
    witness=Witness(description="the partial-polarization test on the square-loss rows", run=c21_witness, kind='weak',
                    weak_because="it re-runs the claim's own check: no input makes the control's statement hold "
                                 "(for every b > 0 the logistic flow from V(0)=0 keeps moving like b / log^2 t, "
                                 "C18's law; a tied maximum keeps its limit off the vertices, but H still moves "
                                 "by 2.6e-3 at b = 4 and 2.2e-9 at b = 1e-6 over [1e50, 1e100], against the frozen "
                                 "test's 1e-10, which would need b < 5e-8 and millions of integrator steps), and "
                                 "the one planted bug found that freezes it (the clock's factor gamma left out of "
                                 "da/dtau) moves H by 3e-4 to 1.1e-3 before it freezes, a pass by 10 % on one row "
                                 "against the test's 1e-3"),
    engines=('flow', 'reduced.gamma'),
)


# ---------------------------------------------------------------------------------------
# C22 no symmetry breaking


def _c22_items(ctx, perturbed: bool, *, losses=("square", "logistic", "kl"), at_target=False):
    """``at_target``: the common column fixed to the target, v = y (square loss: the loss's zero, where the field
    vanishes and the identities hold for any a, perturbed or not)."""
    items = []
    c = sp.Symbol("c", real=True)
    delta = sp.Rational(1, 3)
    for loss in losses:
        for n, d in sizes(ctx, min_d=2 if loss == "kl" else 1):
            m = SymbolicModel(loss, "softmax", n, d)
            v = list(m.target) if at_target else [sp.Symbol(f"v_{k + 1}", real=True) for k in range(d)]
            point = {m.V[k, j]: v[k] for k in range(d) for j in range(n)}
            for i, ai in enumerate(m.a):
                point[ai] = c + (delta if perturbed and i == 1 else 0)
            dV, da = m.flow()
            dV, da = dV.xreplace(point), da.xreplace(point)
            items.append((f"{loss} n={n} d={d}", [da] + [dV[:, j] - dV[:, 0] for j in range(1, n)]))
    return items


def c22_check(ctx):
    return symbolic_outcome(_c22_items(ctx, False),
                            what="at equal columns V = v 1^T and uniform a: da/dt = 0 and all columns move equally "
                                 "(the symmetric set is invariant, by uniqueness of solutions)")


def c22_control(ctx):
    return symbolic_outcome(_c22_items(ctx, True), what="same identities with a(0) perturbed by 1/3 in one entry")


C22 = Claim(
    id="C22",
    title="No symmetry breaking from V(0)=0 and exactly uniform a(0)",
    statement=r"V(0)=0,\ a(0)=c\mathbf 1\Rightarrow a(t)\equiv a(0),\ v_1(t)=\dots=v_n(t)",
    provenance="D",
    assumptions="any loss (square, logistic, kl)",
    evidence_kind="exact symbolic proof",
    check_description="on the set {V = v 1^T, a = c 1} the field has da/dt = 0 and equal column derivatives (exact)",
    expected="verified",
    check=c22_check,
    control=Control("the same identities at a perturbed a must be disproved", c22_control),
    digest_number=22,
    group="regression",
    witness=Witness(description="the control's identities (a perturbed) at V = y 1^T under the square loss, the "
                                "loss's zero where the field vanishes",
                    run=lambda ctx: symbolic_outcome(_c22_items(ctx, True, losses=("square",), at_target=True),
                                                     what="perturbed a at V = y 1^T (square loss)")),
    engines=('symbolic.flow',),
)


# ---------------------------------------------------------------------------------------
# C23 linear rate


def _c23_runs(ctx):
    def compute():
        rng = rng_for(ctx, 23)
        runs = []
        shapes = [(1, 2), (3, 3), (2, 5), (6, 5), (4, 8)] + ([(8, 8), (5, 12)] if ctx.full else [])
        per = 12 if ctx.full else 6
        for d, n in shapes:
            V0 = rng.normal(size=(per, d, n)) * rng.uniform(0.0, 2.0, size=(per, 1, 1))
            a0 = rng.normal(size=(per, n)) * rng.uniform(0.0, 3.0, size=(per, 1))
            y = rng.normal(size=(per, d)) * rng.uniform(0.2, 4.0, size=(per, 1))
            times = np.linspace(0.0, 5.0 * n, 101)  # the bound falls to e^{-10}: well above float64 rounding of L
            sol = flow("square", "softmax", V0, a0, y, times)
            beta = np.einsum("btkn,btn->btk", sol["V"], softmax(sol["a"]))
            L = 0.5 * np.sum((beta - y[:, None, :]) ** 2, -1)
            runs.append({"d": d, "n": n, "times": times, "L": L, "V0": V0, "a0": a0, "y": y})
        return runs
    return ctx.memo("c23", compute)


def _rate_test(ctx, rate_factor):
    worst, witness, count = -np.inf, None, 0
    for run in _c23_runs(ctx):
        n, t, L = run["n"], run["times"], run["L"]
        # <= 0 iff L(t) <= L(0) e^{-c t/n}; a loss that reached exactly 0 satisfies the bound, and flooring
        # it at 1e-300 can only over-state the excess (conservative)
        excess = np.log(np.maximum(L, 1e-300)) - np.log(L[:, :1]) + rate_factor * t / n
        count += len(L)
        i, k = np.unravel_index(np.argmax(excess), excess.shape)
        if excess[i, k] > worst:
            worst = float(excess[i, k])
            witness = {"d": run["d"], "n": n, "V0": run["V0"][i].tolist(), "a0": run["a0"][i].tolist(),
                       "y": run["y"][i].tolist(), "t": float(t[k]), "L0": float(L[i, 0]), "L_t": float(L[i, k]),
                       "bound": float(L[i, 0] * np.exp(-rate_factor * t[k] / n))}
    # 1e-8 in log L: integration error at rtol 1e-11 is far smaller, a real violation is O(1)
    if worst <= 1e-8:
        return Outcome("verified", f"{count} random instances (any V(0), a(0); d=1..6, n=2..8) on t in [0, 5n]: "
                       f"max of log L(t) - log L(0) + {rate_factor:g}t/n = {fmt(worst)} <= 0",
                       details={"instances": count, "max_excess": worst})
    return Outcome("refuted", f"L(t) <= L(0) exp(-{rate_factor:g}t/n) violated by a factor e^{fmt(worst, 3)} at "
                   f"t={fmt(witness['t'])}", details={"instances": count, "max_excess": worst},
                   counterexample=witness)


def c23_check(ctx):
    return _rate_test(ctx, 2.0)


def c23_control(ctx):
    return _rate_test(ctx, 4.0)


C23 = Claim(
    id="C23",
    title="Linear rate of the square loss",
    statement=r"\mathcal L(t)\le\mathcal L(0)\,e^{-2t/n}\quad(\mathcal L=\tfrac12\|\beta-\beta^*\|^2)",
    provenance="D",
    assumptions=_SQ + "; any V(0), a(0)",
    evidence_kind="property search",
    check_description="random instances, log L(t) - log L(0) + 2t/n <= 0 on a grid over [0, 5n]",
    expected="verified",
    check=c23_check,
    control=Control("the doubled rate exp(-4t/n) must be violated", c23_control),
    digest_number=23,
    group="regression",
    witness=Witness(description="the whole flow scaled by 2 (time runs twice as fast): the rate 4/n holds",
                    mutant="flow.time_scale2", kind='strong'),
    engines=('flow',),
)


# ---------------------------------------------------------------------------------------
# C24 table: target norm and initial asymmetry

#: a monotone step counts only when H changes by more than this (strict decrease): the flows run at rtol 1e-12,
#: so H_inf is accurate to ~1e-11; ties (no effect) must not pass. The mutant ``test.non_strict`` flips its sign.
STRICT_MARGIN = 1e-10
#: asymmetry scales of the table: 0 (exactly uniform a(0), the control's row) and the check's two rows
C24_SCALES = (0.0, 1e-3, 1e-1)


def _c24_table(ctx):
    def compute():
        rng = rng_for(ctx, 24)
        d, n = 6, 5
        y_dir = rng.normal(size=d)
        y_dir /= np.linalg.norm(y_dir)
        xi = rng.normal(size=n)
        bs = (0.25, 1.0, 4.0, 16.0)
        scales = C24_SCALES
        V0 = np.zeros((len(bs) * len(scales), d, n))
        a0 = np.array([sc * xi for sc in scales for _ in bs])
        y = np.array([np.sqrt(b) * y_dir for _ in scales for b in bs])
        sol = flow("square", "softmax", V0, a0, y, np.array([0.0, 100.0, 200.0]))
        s = softmax(sol["a"][:, -1])
        H = entropy(s).reshape(len(scales), len(bs))
        L = 0.5 * np.sum((np.einsum("bkn,bn->bk", sol["V"][:, -1], s) - y) ** 2, -1)
        return {"b": list(bs), "scales": list(scales), "H": H, "max_s": s.max(-1).reshape(len(scales), len(bs)),
                "L_end": float(L.max()), "xi": xi.tolist()}
    return ctx.memo("c24", compute)


def _strictly_decreasing_steps(H):
    """Violations of 'H strictly decreasing along the last axis' (each step must drop by > STRICT_MARGIN):
    ``(row index, step j, H[j], H[j+1])``."""
    H = np.asarray(H, float)
    return [(idx, j, float(H[idx][j]), float(H[idx][j + 1])) for idx in np.ndindex(H.shape[:-1])
            for j in range(H.shape[-1] - 1) if not H[idx][j + 1] < H[idx][j] - STRICT_MARGIN]


def _monotone_test(H, rows):
    """H_inf strictly decreasing in b along each listed row, and in the asymmetry (the rows in order)."""
    sub = H[list(rows)]
    viol = [{"scale": C24_SCALES[rows[i[0]]], "b_step": j, "H": [h0, h1]}
            for i, j, h0, h1 in _strictly_decreasing_steps(sub)]
    if len(rows) > 1:
        viol += [{"b_index": int(i[0]), "scale_step": j, "H": [h0, h1]}
                 for i, j, h0, h1 in _strictly_decreasing_steps(sub.T)]
    return viol


def _c24_rows(tab, rows):
    return {f"a(0)={tab['scales'][i]:g} xi": {f"b={b:g}": float(tab["H"][i, j]) for j, b in enumerate(tab["b"])}
            for i in rows}


def c24_check(ctx):
    tab = _c24_table(ctx)
    H = tab["H"]
    viol = _monotone_test(H, (1, 2))
    rows = _c24_rows(tab, (1, 2))
    ev = ("H_inf (d=6, n=5, V(0)=0; log 5 = 1.609): " + "; ".join(
        f"{k}: " + ", ".join(f"{kk} {v:.6f}" for kk, v in r.items()) for k, r in rows.items())
        + f"; every step strictly decreasing by more than {STRICT_MARGIN:g}; max final loss {fmt(tab['L_end'], 2)}")
    if not viol:
        return Outcome("verified", "H_inf decreases strictly with |beta*|^2 and with the initial asymmetry: " + ev,
                       details={"table": rows, "max_s": tab["max_s"].tolist()})
    return Outcome("refuted", "monotonicity in b or asymmetry fails: " + ev, details={"table": rows},
                   counterexample={"violations": viol})


def _c24_b_effect(ctx, row):
    """'Larger b gives a smaller H_inf' on one row of the table, by the same strict test."""
    tab = _c24_table(ctx)
    viol = _monotone_test(tab["H"], (row,))
    H = tab["H"][row]
    label = f"a(0) = {tab['scales'][row]:g} xi"
    if viol:
        return Outcome("refuted", f"'larger b gives smaller H_inf' fails from {label}: H_inf = "
                       + ", ".join(f"{h:.12f}" for h in H) + f" for b = {', '.join(f'{b:g}' for b in tab['b'])}"
                       f" (no strict decrease by more than {STRICT_MARGIN:g})",
                       details={"H": H.tolist()}, counterexample={"violations": viol})
    return Outcome("verified", f"H_inf decreases strictly with b from {label}", details={"H": H.tolist()})


def c24_control(ctx):
    """Wrong variant: 'larger b gives a smaller H_inf even from exactly uniform a(0)' (claim 22: no symmetry
    breaking, so H_inf = log n for every b); same flows, same strict test."""
    return _c24_b_effect(ctx, 0)


C24 = Claim(
    id="C24",
    title="Larger |beta*|^2 or larger initial asymmetry gives smaller H_inf",
    statement=r"H_\infty\ \text{decreases in}\ \|\beta^*\|^2\ \text{and in the scale of}\ a(0)",
    provenance="D/R",
    assumptions=_SQ + "; d=6, n=5, V(0)=0, a(0) = scale * xi",
    evidence_kind="high-precision numerics",
    check_description="table b in {0.25,1,4,16} x scale in {1e-3,1e-1}; strictly decreasing (steps > "
                      "1e-10) in both directions",
    expected="verified",
    check=c24_check,
    control=Control("wrong variant 'larger b gives smaller H_inf even from exactly uniform a(0)' (false by claim 22) "
                "must be rejected by the same strict test on the same table", c24_control),
    digest_number=24,
    group="regression",
    witness=Witness(description="the b-test accepting ties (test.non_strict): on the uniform row H_inf = log n for "
                                "every b, so 'smaller or equal' holds", mutant="test.non_strict"),
    engines=('flow', 'test.strict'),
)


# ---------------------------------------------------------------------------------------
# C25 conditioning sweep

#: the reference re-run [R] (paper-notes#authors-settings) of the authors' notebook: H(sigma(a)) at 1e5 and 3e5
#: iterations. Shown next to our values as a finding; no verdict depends on it.
REFERENCE_H = {100_000: (2.995, 2.968, 2.239, 1.169, 0.963), 300_000: (2.995, 2.951, 1.723, 0.773, 0.404)}
KAPPAS = (1, 2, 3, 4, 5)
#: the claim's horizon (the authors' notebook), in both profiles
C25_STEPS = 300_000
#: the control's iteration: the same ordering test after 1e3 of the 3e5 iterations
C25_EARLY = 1_000


def _c25_run(ctx):
    def compute():
        steps = C25_STEPS
        record = sorted(set(int(x) for x in np.unique(np.logspace(2, np.log10(steps), 25).astype(int)))
                        | {0, C25_EARLY, 100_000, steps})
        report(0.0, f"GD {steps:.0e} iterations, kappa = 1..{len(KAPPAS)} in one batch")
        problems = []
        for kappa in KAPPAS:
            W, a, X, y = authors_conditioning(kappa)
            problems.append(numerics.Problem("square", W, a, y, link="softmax", X=X))
        # the notebook minimizes |y - X W s|^2 (no 1/2) with lr 1e-3: the same iterates as lr 2e-3 on our
        # 1/2 |X beta - y|^2. One batched run: each member equals its own gradient_descent run bit for bit
        runs = numerics.gradient_descent_batch(problems, lr=2e-3, steps=steps, record=record)
        H, max_s, loss, H_hist = [], [], [], []
        for p, tr in zip(problems, runs):
            A = _floats(tr.a)
            s = softmax(A[-1])
            beta = np.asarray(tr.V[-1], float) @ s
            H.append(float(entropy(s)))
            max_s.append(float(s.max()))
            loss.append(float(np.sum((p.target - p.X @ beta) ** 2)))
            H_hist.append(entropy(softmax(A)))
        return {"steps": steps, "H": np.array(H), "max_s": np.array(max_s), "loss": np.array(loss),
                "record": record, "H_hist": np.stack(H_hist, axis=-1)}
    return ctx.memo("c25", compute)


def _c25_at(r, iteration):
    return r["H_hist"][r["record"].index(iteration)]


def _c25_ordering(H, label):
    viol = _strictly_decreasing_steps(np.asarray(H)[None])
    text = ", ".join(f"{h:.6f}" for h in H)
    if viol:
        _, k, h0, h1 = viol[0]
        return Outcome("refuted", f"{label}: H = {text} for kappa=1..5 is not strictly decreasing (kappa={KAPPAS[k]}"
                       f" -> {KAPPAS[k + 1]}: {h0:.6f} -> {h1:.6f})",
                       counterexample={"kappa": [KAPPAS[k], KAPPAS[k + 1]], "H": [h0, h1]}, details={"H": list(H)})
    return Outcome("verified", f"{label}: H = {text} strictly decreasing in kappa", details={"H": list(H)})


def c25_check(ctx):
    r = _c25_run(ctx)
    H = r["H"]
    ref = REFERENCE_H[r["steps"]]
    order = _c25_ordering(H, f"after {r['steps']:,} iterations")
    dev = float(np.max(np.abs(H - np.array(ref))))
    H5 = _c25_at(r, 100_000)
    figure = Figure("entropy_vs_kappa.png", "kappa",
                    f"Conditioning toy (authors' settings, GD lr 1e-3, {r['steps']:,} iterations, seed 123): final "
                    "entropy of sigma(a) against the condition number kappa of X; crosses: the reference re-run [R]",
                    {"kappa": list(KAPPAS), "H": H, "reference": list(ref), "log_n": float(np.log(20)),
                     "record": r["record"], "H_hist": r["H_hist"]})
    ev = (f"GD (numerics.gradient_descent_batch) with the authors' settings and random stream, {r['steps']:,} "
          f"iterations (the authors' horizon, both profiles): H = " + ", ".join(f"{h:.3f}" for h in H)
          + " for kappa=1..5, strictly decreasing; final losses " + ", ".join(fmt(x, 2) for x in r["loss"])
          + ". Finding (not part of the verdict): the reference re-run [R] reports " + ", ".join(
              f"{h:.3f}" for h in ref) + f" (max deviation {fmt(dev, 2)}); at 1e5 iterations we find "
          + ", ".join(f"{h:.3f}" for h in H5) + " (reference " + ", ".join(f"{h:.3f}" for h in REFERENCE_H[100_000])
          + ")")
    details = {"steps": r["steps"], "H": H.tolist(), "max_s": r["max_s"].tolist(), "loss": r["loss"].tolist(),
               "H_at_1e5": H5.tolist(), "finding_reference_H": {str(k): list(v) for k, v in REFERENCE_H.items()},
               "finding_max_deviation_from_reference": dev,
               "note": "exact values depend on the random stream; this run uses the authors' (legacy NumPy "
                       "RandomState(123), same draw order); the verdict is the strict ordering only"}
    if order.verdict == "verified":
        return Outcome("verified", ev, details=details, figures=(figure,))
    return Outcome("refuted", ev + "; " + order.evidence, details=details, figures=(figure,),
                   counterexample=order.counterexample)


def c25_control(ctx, iteration=C25_EARLY):
    """Wrong variant 'the ordering in kappa is already there after 1e3 iterations' -- the same strict ordering
    test on the same GD runs at iteration 1e3 (the early iterates are nearly uniform, the effect of kappa has
    not built up)."""
    return _c25_ordering(_c25_at(_c25_run(ctx), iteration), f"after {iteration:,} iterations")


C25 = Claim(
    id="C25",
    title="Conditioning sweep: final entropy decreases with kappa",
    statement=r"H(\sigma(a_{\rm final}))\ \text{decreases in}\ \kappa=1..5:\ \approx2.995,2.951,1.72,0.77,0.40",
    provenance="C/R",
    assumptions="loss |y - X W s|^2 (no 1/2), X 20x20 with singular values linspace(1, 1/kappa), GD lr 1e-3, "
        "W(0)=1e-5 N, a(0)=1e-3 N, seed 123",
    evidence_kind="reproduction of the authors' settings",
    check_description="GD with the authors' random stream to 3e5 iterations (both profiles); strict "
                      "decrease in kappa; the "
        "reference re-run's numbers are reported as a finding, not used for the verdict",
    expected="verified",
    check=c25_check,
    control=Control("wrong variant 'the ordering is already there after 1e3 iterations' must be rejected by the same "
                "strict ordering test on the same runs", c25_control),
    digest_number=25,
    group="regression",
    witness=Witness(description="the same strict ordering test at iteration 1e3 when gradient descent's record "
                                "holds the last iterate everywhere (planted bug: a record aliasing a buffer updated "
                                "in place), so the history at 1e3 is the ordered one of 3e5",
                    mutant="witness.gd_record_alias"),
    engines=('gd.long', 'test.strict'),
)


# ---------------------------------------------------------------------------------------


CLAIMS = [C21, C22, C23, C24, C25]
