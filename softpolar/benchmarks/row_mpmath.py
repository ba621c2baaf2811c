r"""Row 2: arbitrary precision, softpolar's mpmath backend vs ``mpmath.odefun``.

Problem: logistic loss, softmax link, $n=d=4$, the authors' seeded draw
(``Problem.from_seed(123, d=4, n=4, loss='logistic')``), $t\in[0,10]$.

* **softpolar**: ``numerics.simulate(problem, t_end=10, backend='mpmath', dps=dps)`` with its
  default tolerances and clock (the target applies to this line), and the same with
  ``clock='t'`` (reported on its own line: on $[0,10]$ the physical clock needs fewer steps);
* **anchor**: ``mpmath.odefun(F, 0, y0)`` evaluated at $t=10$ inside ``mp.workdps(dps)``
  with its default tolerance (about $2^{-\text{prec}}$), where ``F`` is the *same* generated
  mpmath right-hand side (``numerics.flow_rhs(..., backend='mpmath')``) on the flat state,
  so the ratio measures the integrators, not the right-hand sides.

Accuracy: every final state is compared with a reference, softpolar at ``2*dps`` digits in
the ``t`` clock; the reference of the dps-30 case is cross-checked against ``odefun`` at 60
digits (an independent method: Taylor series with finite-difference coefficients). The two runs are
of *equal accuracy* when both have at least ``dps - 5`` correct digits (the mpmath engine's
agreement criterion between dps and 2*dps).

Reach: how far in $t$ each tool gets in a wall-clock budget (60 s in full mode, smaller in
quick mode: the output says which). ``odefun`` extends one cached solution ($t=10, 20, 40,
\dots$) until the budget interrupts it (it never steps more than $1/2$ in $t$: its radius
estimate is capped at 1 and halved); softpolar runs fresh to $t=10^{2^k}$, $k=0,1,\dots$
and the largest $t_\text{end}$ finished inside the budget counts.

Target: odefun / softpolar $\ge 20$ at dps 30 (and dps 60 reported). A line's ratio is the median of each
interleaved round's own ratio (the two contenders of a round ran back to back, under the same load); ``ratios``
holds them all and the line shows their range. Issue 40: with one round in quick mode, three idle runs gave 24.7,
34.2 and 16.8 (softpolar's one 0.1-s sample took 0.10, 0.11 and 0.17 s), so quick mode runs 5 rounds.
"""
from __future__ import annotations

import mpmath
from numerics import IntegrationError, flow_rhs

from ._softpolar import digits, final_state, logistic_problem, rel_error, simulate
from ._timing import Budget, budget_alarm, interleaved, median, ratio, time_once

TITLE = "high precision: mpmath backend vs mpmath.odefun (logistic, n = d = 4, t in [0, 10])"
#: quick mode runs dps 30 only: at dps 60 odefun alone takes > 2 minutes on 2 loaded cores
DPS = {"smoke": (10,), "quick": (30,), "full": (30, 60)}
T_END = {"smoke": "0.1", "quick": "10", "full": "10"}
REPS = {"smoke": 1, "quick": 5, "full": 5}
#: ``--repeat K`` sets the number of interleaved rounds at dps 30 (its target sat close to its threshold)
REPEATABLE = True
#: at dps >= 60 one odefun run takes minutes: at most this many repetitions
REPS_HIGH_DPS = 2
#: wall-clock budget of the reach measurement, and the dps it runs at (quick: 5 s, which pays for quick's 5 rounds)
BUDGET_S = {"smoke": 1.0, "quick": 5.0, "full": 60.0}
REACH_DPS = {"smoke": (10,), "quick": (30,), "full": (30, 60)}
#: wall-clock guard on each reference run (reported, never silently skipped)
REF_BUDGET_S = {"smoke": 30.0, "quick": 120.0, "full": 600.0}
SIZE = 4
SEED = 123
TARGET = 20.0
#: equal accuracy: at least dps - EQUAL_SLACK correct digits for both tools
EQUAL_SLACK = 5


def odefun_system(problem):
    """``(F, y0_floats, n_state)`` for ``mpmath.odefun`` on the flat state ``[V, a]``."""
    rhs = flow_rhs(problem.loss, problem.link, backend="mpmath")
    d, n = problem.d, problem.n
    w = [float(x) for x in problem.target]

    def F(x, y):
        V = [y[k * n:(k + 1) * n] for k in range(d)]
        dV, da = rhs(V, y[d * n:], w)
        return [v for row in dV for v in row] + list(da)

    y0 = [float(v) for v in problem.V.ravel()] + [float(v) for v in problem.a]
    return F, y0


def run_odefun(problem, t_end, dps):
    """The anchor: final state of ``mpmath.odefun`` at ``t_end``, at ``dps`` digits."""
    F, y0 = odefun_system(problem)
    with mpmath.workdps(dps):
        sol = mpmath.odefun(F, 0, [mpmath.mpf(v) for v in y0])
        return sol(mpmath.mpf(t_end))


def reach_odefun(problem, dps, budget_s):
    """How far ``odefun`` gets within ``budget_s``: ``(largest t = 10 * 2^k returned, largest
    expansion point x at which it evaluated F)``; the first is ``None`` if it never returned."""
    F, y0 = odefun_system(problem)
    seen = [0.0]

    def F_seen(x, y):
        seen[0] = max(seen[0], float(x))
        return F(x, y)

    best = None
    with mpmath.workdps(dps):
        sol = mpmath.odefun(F_seen, 0, [mpmath.mpf(v) for v in y0])
        t = mpmath.mpf(10)
        try:
            with budget_alarm(budget_s):
                while True:
                    sol(t)
                    best = t
                    t = 2 * t
        except Budget:
            pass
    return (None if best is None else float(best)), seen[0]


def reach_softpolar(problem, dps, budget_s, max_exponent=2 ** 20):
    """Largest ``t_end = 10**(2**k)`` that one fresh softpolar run finished within ``budget_s``.

    Returns ``(t_end as a string, seconds, stopped_by)``.
    """
    best, best_s, why = None, None, "budget"
    k = 0
    while 2 ** k <= max_exponent:
        t_end = f"1e{2 ** k}"
        try:
            with budget_alarm(budget_s):
                sec, _ = time_once(lambda: simulate(problem, t_end, backend="mpmath", dps=dps))
        except Budget:
            why = f"t_end=1e{2 ** k} not finished within {budget_s:g} s"
            break
        except IntegrationError as exc:
            why = f"IntegrationError at t_end={t_end}: {exc}"
            break
        best, best_s = t_end, sec
        k += 1
    else:
        why = f"stopped at the benchmark's cap t = 1e{max_exponent}"
    return best, best_s, why


def _reference(problem, t_end, dps, budget_s):
    """softpolar at ``dps`` digits in the ``t`` clock (a different path than the default
    ``tau`` clock of the timed run); ``(state, seconds, None)`` or ``(None, None, why)``."""
    try:
        with budget_alarm(budget_s):
            sec, traj = time_once(lambda: simulate(problem, t_end, backend="mpmath", dps=dps, clock="t"))
    except Budget:
        return None, None, f"reference (dps {dps}) not finished within {budget_s:g} s"
    except IntegrationError as exc:
        return None, None, f"reference (dps {dps}) failed: {exc}"
    return final_state(traj), sec, None


def run(mode: str, log, repeat: int | None = None) -> dict:
    """Run row 2; see the module docstring. ``repeat``: interleaved rounds at dps < 60 (default :data:`REPS`)."""
    problem = logistic_problem(SEED, SIZE, SIZE)
    t_end = T_END[mode]
    # warm-up: lambdify and caches, outside every timing
    simulate(problem, "0.001", backend="mpmath", dps=15)
    lines, facts = [], []
    results = {}
    for dps in DPS[mode]:
        log(f"row 2: reference, softpolar at dps {2 * dps} (clock 't')")
        ref_state, ref_s, ref_why = _reference(problem, t_end, 2 * dps, REF_BUDGET_S[mode])
        out = {}

        def soft():
            out["softpolar"] = simulate(problem, t_end, backend="mpmath", dps=dps)

        def soft_t():
            out["softpolar_t"] = simulate(problem, t_end, backend="mpmath", dps=dps, clock="t")

        def ode():
            out["odefun"] = run_odefun(problem, t_end, dps)

        reps = (repeat or REPS[mode]) if dps < 60 else min(REPS[mode], REPS_HIGH_DPS)
        log(f"row 2: dps {dps}, {reps} interleaved rep(s) of softpolar (default clock, clock 't') "
            "and odefun")
        res = interleaved({"softpolar": soft, "softpolar_t": soft_t, "odefun": ode}, reps=reps,
                          warmup=0, min_sample_s=0)
        to = res["odefun"]["median_s"]
        # per-round ratios: odefun's sample over the contender's sample of the same round
        round_ratios = {key: [a / b for a, b in zip(res["odefun"]["samples_s"], res[key]["samples_s"])]
                        for key in ("softpolar", "softpolar_t")}
        dig = {}
        if ref_state is not None:
            with mpmath.workdps(2 * dps + 10):
                dig = {"softpolar": digits(rel_error(final_state(out["softpolar"]), ref_state)),
                       "softpolar_t": digits(rel_error(final_state(out["softpolar_t"]), ref_state)),
                       "odefun": digits(rel_error(out["odefun"], ref_state))}
        results[dps] = {"ref": ref_state, "odefun": out["odefun"]}
        keys = [("softpolar", f"mpmath backend (default clock {out['softpolar'].clock!r})")]
        if out["softpolar"].clock != "t":  # otherwise the second line repeats the first
            keys.append(("softpolar_t", "mpmath backend, clock='t'"))
        for key, label in keys:
            ts = res[key]["median_s"]
            rs = round_ratios[key]
            r = median(rs) if len(rs) > 1 else ratio(to, ts)
            if dig:
                equal = dig[key] >= dps - EQUAL_SLACK and dig["odefun"] >= dps - EQUAL_SLACK
                acc = (f"correct digits vs softpolar at dps {2 * dps}, clock 't' ({ref_s:.3g} s): "
                       f"softpolar {dig[key]:.1f}, odefun {dig['odefun']:.1f} -> "
                       + ("equal accuracy" if equal else
                          f"NOT equal accuracy (need >= {dps - EQUAL_SLACK} digits each)"))
            else:
                # fall back on the mutual agreement of the three independent runs
                with mpmath.workdps(dps + 10):
                    runs = {"softpolar": final_state(out["softpolar"]),
                            "softpolar_t": final_state(out["softpolar_t"]), "odefun": out["odefun"]}
                    mutual = min(digits(rel_error(runs[x], runs[y])) for x, y in
                                 (("softpolar", "odefun"), ("softpolar_t", "odefun"),
                                  ("softpolar", "softpolar_t")))
                equal = mutual >= dps - EQUAL_SLACK
                acc = (f"{ref_why}; instead: the three runs (tau, t clocks, odefun) agree pairwise to "
                       f">= {mutual:.1f} digits -> " + ("equal accuracy (by agreement)" if equal else
                                                        "NOT equal accuracy"))
            at_target = dps == 30 and key == "softpolar"
            traj = out[key]
            lines.append({
                "case": f"dps={dps}, t_end={t_end}", "softpolar": label, "anchor": "mpmath.odefun",
                "softpolar_s": ts, "anchor_s": to, "ratio_label": "odefun/softpolar", "ratio": r,
                "target": f">= {TARGET:g} at equal accuracy" if at_target else None,
                "met": (r >= TARGET and bool(equal)) if at_target else None,
                "notes": (f"{acc}; softpolar {traj.n_steps} steps, {getattr(traj, 'n_rhs', '?')} RHS calls; "
                          f"{reps} interleaved rep(s)"
                          + (f", round ratios {min(rs):.3g}-{max(rs):.3g} (median {r:.3g})" if len(rs) > 1 else "")),
                "ratios": rs,
            })
    if mode == "quick":
        facts.append({"label": "dps 60", "value": "not run in quick mode", "unit": "",
                      "notes": "odefun alone takes > 2 min at dps 60 on 2 loaded cores; run without --quick"})
    if 30 in results and 60 in results and results[30]["ref"] is not None:
        with mpmath.workdps(70):
            cross = digits(rel_error(results[60]["odefun"], results[30]["ref"]))
        facts.append({"label": "reference cross-check at t_end: softpolar (dps 60, clock 't') vs odefun (dps 60)",
                      "value": round(cross, 1), "unit": "digits", "notes": "independent methods"})
    budget = BUDGET_S[mode]
    for dps in REACH_DPS[mode]:
        log(f"row 2: reach in {budget:g} s at dps {dps} (softpolar)")
        best, best_s, why = reach_softpolar(problem, dps, budget)
        facts.append({"label": f"softpolar reach in {budget:g} s at dps {dps} (default clock)", "value": best,
                      "unit": "",
                      "notes": (f"largest t_end = 10^(2^k) of one fresh run finished in the budget "
                                f"({best_s:.3g} s); the next one: {why}") if best else why})
        log(f"row 2: reach in {budget:g} s at dps {dps} (odefun)")
        t_o, x_o = reach_odefun(problem, dps, budget)
        facts.append({"label": f"mpmath.odefun reach in {budget:g} s at dps {dps}",
                      "value": f"{t_o:g}" if t_o is not None else f"t < 10 (expansions reached t = {x_o:.3g})",
                      "unit": "",
                      "notes": "largest t = 10 * 2^k returned before the budget ran out"
                               + ("" if mode == "full" else f" (mode {mode}: budget {budget:g} s, not 60 s)")})
    return {"lines": lines, "facts": facts}
