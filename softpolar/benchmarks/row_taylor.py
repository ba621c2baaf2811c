r"""Row 7: softpolar's Taylor backend vs heyoka written by hand (multiprecision, $n=d=8$).

Problem: the authors' logistic toy (seed 123, $n=d=8$), $\tau$ clock, final state at
$t_{\rm end}$ (quick/full: $10^{4}$), ``dps`` 30 and 50.

* **softpolar**: ``numerics.simulate(problem, t_end, times=[t_end], backend='taylor', dps=P)``
  (the system comes from the SymPy derivation through ``heyoka.from_sympy``);
* **anchor**: the same flow typed directly as heyoka expressions, the way a user who knows
  heyoka would write it ($s=e^{a}/\sum e^{a}$, $u=V^\top w$, $\dot V=ws^\top$,
  $\dot a=s\odot(u-\langle s,u\rangle)$, $\dot T=e^{-T}(1+e^{z})$), ``heyoka.real`` at the same
  precision (``dps`` + 12 guard digits) and tolerance ``10**-(dps+2)``, the same terminal event
  $T/c-1=0$, ``compact_mode=True``.

Two lines per ``dps``: *compilation included* (softpolar's cache and heyoka's in-memory
LLVM cache cleared before every sample, heyoka's disk cache off, the anchor's integrator
built anew) and *excluded* (softpolar's cache warm; the anchor reuses one integrator, resetting
its state, time and parameters, as a user who compiles once would).
The ratio is softpolar / hand-written (lower is better). Target (the Taylor backend must cost no
more than hand-written heyoka): at most 1.25,
compilation included (softpolar's overhead should be conversion and bookkeeping only).
The digits of agreement of the two final states are reported.
"""
from __future__ import annotations
import math

import mpmath
import numpy as np
from numerics.integrate import clear_taylor_cache

from ._runner import NotAvailable
from ._softpolar import digits, final_state, logistic_problem, rel_error, simulate
from ._timing import interleaved, ratio

TITLE = "Taylor backend vs hand-written heyoka (logistic toy n = d = 8, tau clock, dps 30 / 50)"
CASES = {"smoke": (("10", 15),), "quick": (("1e4", 30), ("1e4", 50)), "full": (("1e4", 30), ("1e4", 50))}
REPS = {"smoke": 1, "quick": 3, "full": 5}
SIZE = {"smoke": 3, "quick": 8, "full": 8}
TARGET = 1.25
GUARD = 12


def heyoka_or_skip():
    try:
        import heyoka
    except ImportError:
        raise NotAvailable("heyoka is not installed (pip install softpolar[taylor])") from None
    return heyoka


#: hand-written integrators kept by a user between runs (the "compilation excluded" lines), per (n, d, dps)
_KEPT: dict = {}


def handwritten(problem, t_end: str, dps: int, *, keep: bool = False):
    """The anchor: build (compile) and run the hand-written heyoka integrator; the final state (mpf list).

    ``keep``: reuse the integrator built by an earlier call (new state, time and parameters only),
    as a user who compiles once would."""
    hy = heyoka_or_skip()
    n, d = problem.n, problem.d
    prec = int(math.ceil((dps + GUARD) * math.log2(10)))
    names = [f"V_{k}_{j}" for k in range(d) for j in range(n)] + [f"a_{j}" for j in range(n)] + ["T"]
    vs = hy.make_vars(*names)
    V = [[vs[k * n + j] for j in range(n)] for k in range(d)]
    a, T = vs[d * n:d * n + n], vs[-1]
    w = [hy.par[k] for k in range(d)]
    e = [hy.exp(aj) for aj in a]
    Z = hy.sum(e)
    s = [ej / Z for ej in e]
    u = [hy.sum([V[k][j] * w[k] for k in range(d)]) for j in range(n)]
    z = hy.sum([uj * sj for uj, sj in zip(u, s)])
    sys = [(V[k][j], w[k] * s[j]) for k in range(d) for j in range(n)]
    sys += [(a[j], s[j] * (u[j] - z)) for j in range(n)]
    sys.append((T, hy.exp(-T) * (1.0 + hy.exp(z))))
    R = lambda v: hy.real(v, prec)
    with mpmath.workprec(prec):
        c = mpmath.log1p(mpmath.mpf(t_end))
        inv_c = hy.real(1, prec) / hy.real(mpmath.nstr(c, prec // 3 + 5), prec)
    ev = hy.t_event(T * hy.par[d] - 1.0, fp_type=hy.real)
    y0 = [R(float(v)) for v in problem.V.ravel()] + [R(float(v)) for v in problem.a] + [R(0)]
    pars = [R(float(v)) for v in problem.target] + [inv_c]
    tol = hy.real(f"1e-{dps + 2}", prec)
    ta = _KEPT.get((n, d, dps)) if keep else None
    if ta is None:
        ta = hy.taylor_adaptive(sys, y0, pars=pars, fp_type=hy.real, compact_mode=True, tol=tol, t_events=[ev])
        _KEPT[(n, d, dps)] = ta
    else:
        ta.state[:] = np.array(y0)
        ta.pars[:] = np.array(pars)
        ta.time = R(0)
        ta.reset_cooldowns()
    res = ta.propagate_until(R("1e300"), max_steps=100_000)
    if res[0] in tuple(hy.taylor_outcome.__members__.values()):
        raise RuntimeError(f"hand-written heyoka stopped with {res[0]!r}")
    with mpmath.workprec(prec):
        return [mpmath.mpf(str(v)) for v in ta.state[:-1]], int(res[3])


def _cold():
    """Forget every compiled integrator: softpolar's cache and heyoka's in-memory LLVM cache."""
    hy = heyoka_or_skip()

    clear_taylor_cache()
    hy.llvm_state.clear_memcache()


def run(mode: str, log) -> dict:
    """Run row 7; see the module docstring."""
    hy = heyoka_or_skip()
    disk = hy.llvm_state.get_diskcache_enabled()
    hy.llvm_state.set_diskcache_enabled(False)
    lines = []
    try:
        problem = logistic_problem(123, SIZE[mode], SIZE[mode])
        for t_end, dps in CASES[mode]:
            out = {}

            def ours():
                out["ours"] = simulate(problem, t_end, backend="taylor", dps=dps, clock="tau")

            def hand():
                out["hand"] = handwritten(problem, t_end, dps, keep=True)

            def ours_cold():
                _cold()
                ours()

            def hand_cold():
                _cold()
                out["hand"] = handwritten(problem, t_end, dps)

            log(f"row 7: dps {dps}, t_end {t_end}: compilation included, {REPS[mode]} interleaved reps")
            cold = interleaved({"ours": ours_cold, "hand": hand_cold}, reps=REPS[mode], warmup=0, min_sample_s=0)
            log(f"row 7: dps {dps}, t_end {t_end}: compilation excluded")
            warm = interleaved({"ours": ours, "hand": hand}, reps=REPS[mode], warmup=1, min_sample_s=0)
            with mpmath.workdps(dps + 5):
                agree = digits(rel_error(final_state(out["ours"]), out["hand"][0]))
            for label, res in (("compilation included", cold), ("compilation excluded", warm)):
                r = ratio(res["ours"]["median_s"], res["hand"]["median_s"])
                incl = label.endswith("included")
                lines.append({
                    "case": f"dps {dps}, t_end {t_end}, n=d={problem.n}, {label}",
                    "softpolar": "taylor backend", "anchor": "hand-written heyoka",
                    "softpolar_s": res["ours"]["median_s"], "anchor_s": res["hand"]["median_s"],
                    "ratio_label": "softpolar/hand-written", "ratio": r,
                    "target": f"<= {TARGET:g}" if incl and mode != "smoke" else None,
                    "met": (r <= TARGET) if incl and mode != "smoke" and r is not None else None,
                    "notes": (f"final states agree to {agree:.1f} digits; steps: softpolar "
                              f"{out['ours'].n_steps}, hand-written {out['hand'][1]}; {out['ours'].method}")})
    finally:
        hy.llvm_state.set_diskcache_enabled(disk)
    return {"lines": lines, "facts": []}
