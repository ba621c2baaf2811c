r"""Claim-level mutation testing: planted bugs in the engine, and the kill matrix of ``verify --mutants``.

A *mutant* is a plausible mistake planted into the engine for the duration of a ``with``
block, by monkeypatching; no source file is edited. Each mutant names the claims it is
aimed at (``concerns``). :func:`run_mutants` re-runs every aimed claim (its check and its
negative control) under each mutant, in a fresh :class:`Context` (so no trajectory computed
without the bug is reused), and records

* **killed**: the check no longer reaches the claim's expected verdict (the bug is seen);
* **control passes**: the negative control reaches the *non-required* verdict, i.e. the
  wrong statement that the control tests does hold under this mutant. Together with the
  registered *witnesses* (:data:`CONTROL_WITNESSES` of the claim modules: an input on
  which the control's own code path accepts its statement), this shows that every
  control can pass, so "control refuted" is evidence and not a tautology.

Requirements checked by :func:`summarize`: every numeric claim (evidence other than an
exact symbolic proof) that ran is killed by at least one mutant aimed at it, and every
control that ran is shown passable. ``softpolar verify --mutants`` exits 1 otherwise.

The planted bugs (see :data:`MUTANTS`): a flipped or scaled term of the flow ($\\dot a$ of the wrong sign;
$\\dot V$ of the wrong sign is not used: gradient ascent on $V$ blows up slowly and costs minutes per claim), the whole
flow scaled (time runs twice as fast), the softmax Jacobian without its $-ss^\top$ term,
$\ell'$ of the wrong sign or of the wrong argument, $\gamma$ of the wrong sign in the
reduced logistic system, scaled terms of the reduced system, softmax without the max
shift, wrong rate exponent / constant in the asymptotic laws, a non-strict monotonicity
test, the symbolic flow without $J$ (which makes the *unsquared* output dynamics true) or
with $\dot V$ of the wrong sign, and the tied model's loss of the wrong sign.

Known limits: a mutant that leaves every aimed claim intact is reported as surviving; it
is then either equivalent on the tested inputs (e.g. no max shift while every logit stays
far below 709) or a gap in the checks; the report lists it either way.
"""
from __future__ import annotations

import contextlib
import importlib
import time
from dataclasses import dataclass, field
from typing import Callable

from theorems import InvalidArgument

from ._claim import Context, opposite, run_claim

SYMBOLIC = "exact symbolic proof"

# claims grouped by the part of the engine they run through (used by ``concerns`` below)
FULL_FLOW = ("C07", "C08", "C09", "C10", "C11", "C12", "C13", "C14", "C16", "C21", "C23", "C24", "C26")
GD = ("C25", "C27", "C28")
STIFF = ("C29",)
REDUCED = ("C07", "C10", "C15", "C17", "C18", "C19", "C20")
#: logistic claims for the l' mutants: the reduced-system and GD ones (the batch property searches C11-C16 under
#: gradient *ascent* grind through the integrator's 100,000 steps per batch, ~10 min each, and are killed by the
#: flow mutants already)
LOGISTIC = ("C07", "C08", "C15", "C17", "C18", "C19", "C20", "C27")
#: GD claims re-run under the cheaper flow mutants (C25 runs 3e5 iterations, ~100 s, so only under some)
GD_CHEAP = ("C27", "C28")
SYMBOLIC_FLOW = ("C01", "C03", "C03P", "C04", "C05", "C06", "C07", "C08", "C09", "C22")
SYMBOLIC_IDS = ("ID.attention.dynamics", "ID.balance.per_token", "ID.output.dynamics", "ID.flow.structured",
                "ID.replicator", "ID.sum_a.conserved", "ID.two_token.first_integral", "ID.square.rank_one",
                "ID.logistic.orthogonal_fixed", "ID.reduced.logistic", "ID.clock.logistic",
                "ID.clock.square_rank_one", "ID.entropy.rate")


@dataclass(frozen=True)
class Mutant:
    """A planted bug: ``patch()`` is a context manager that applies it; ``concerns`` the claims aimed at."""

    name: str
    description: str
    concerns: tuple
    patch: Callable[[], contextlib.AbstractContextManager] = field(repr=False, compare=False)


# ---- patching helpers ------------------------------------------------------------------------
@contextlib.contextmanager
def _patched(*triples):
    """Set ``(obj, attribute, value)`` for the block; restore the previous values afterwards."""
    saved = []
    try:
        for obj, name, value in triples:
            saved.append((obj, name, obj.__dict__.get(name, _MISSING) if isinstance(obj, type)
                          else getattr(obj, name, _MISSING)))
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, old in reversed(saved):
            if old is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, old)


_MISSING = object()


def _scale(x, c):
    """``c * x`` for arrays / tensors and for the mpmath backend's (nested) lists."""
    if isinstance(x, list):
        return [_scale(v, c) for v in x]
    return c * x


def _rhs_class():
    from numerics._rhs import FlowRHS
    return FlowRHS


def _flow_terms(cV: float, ca: float):
    """The generated flow with $\\dot V$ scaled by ``cV`` and $\\dot a$ by ``ca``."""
    cls = _rhs_class()
    orig = cls.__call__

    def call(self, V, a, target, X=None):
        dV, da = orig(self, V, a, target, X)
        return _scale(dV, cV), _scale(da, ca)
    return _patched((cls, "__call__", call))


def _jacobian_diag_only():
    """$J_\\varphi^\\top x=w\\odot x$: the centering $-\\langle\\varphi,x\\rangle$ ($-ss^\\top$ term) dropped."""
    cls = _rhs_class()

    def apply_jT(self, phi, w, x):
        if isinstance(x, list):
            return [wi * xi for wi, xi in zip(w, x)]
        return w * x
    return _patched((cls, "apply_jT", apply_jT))


def _no_max_shift():
    """``link_parts`` without subtracting $\\max_i a_i$ before the exponential (array backends)."""
    cls = _rhs_class()
    orig = cls.link_parts

    def link_parts(self, a):
        link = self._link_def
        if self.backend == "mpmath" or not link.shift_invariant:
            return orig(self, a)
        H = self._h(a)
        W = H if self._dh_is_h else self._dh(a)
        Z = self._ops.sum(H)
        return H / Z, W / Z
    return _patched((cls, "link_parts", link_parts))


def _wrong_dell(kind: str):
    r"""$\ell'$ replaced: ``sign``: $-\ell'$ (gradient ascent); ``argument``: $\ell'(-z)$, i.e. $-\sigma(z)$."""
    import numerics.integrate._clock as clock
    import numerics.integrate._mpmath as imp
    import numerics.integrate._numpy as inp

    cls = _rhs_class()
    orig_prop = cls.__dict__["_dell"]

    def wrap(f):
        if f is None:
            return None
        if kind == "sign":
            return lambda z: -f(z)
        return lambda z: f(-z)

    cache = {}

    def dell_prop(self):  # one wrapped kernel per FlowRHS (lambdify is slow; the field calls it per step)
        if id(self) not in cache:
            cache[id(self)] = (self, wrap(orig_prop.func(self)))
        return cache[id(self)][1]

    np_orig, mp_orig = inp.dell_numpy, imp.dell_mpmath
    return _patched((cls, "_dell", property(dell_prop)),
                    (inp, "dell_numpy", lambda loss: wrap(np_orig(loss))),
                    (clock, "dell_numpy", lambda loss: wrap(np_orig(loss))),
                    (imp, "dell_mpmath", lambda loss: wrap(mp_orig(loss))),
                    (clock, "dell_mpmath", lambda loss: wrap(mp_orig(loss))))


def _reduced_terms(cu: float, ca: float):
    r"""The reduced logistic system with $du/d\tau$ scaled by ``cu`` and $da/d\tau$ by ``ca``.

    ``cu = ca = -1`` is $\gamma$ of the wrong sign ($d\tau=\gamma\,dt$ with $\gamma<0$ while the
    clock $T$ still runs forward). Wraps the solvers that :func:`numerics.reduced_logistic` calls.
    """
    import numerics.integrate._clock as clock

    def wrap_solver(solver):
        def solve(f, x0, y0, *args, **kw):
            n = (len(y0) - 1) // 2

            def g(x, y):
                out = f(x, y)
                if isinstance(out, list):
                    return [cu * v for v in out[:n]] + [ca * v for v in out[n:2 * n]] + out[2 * n:]
                out = out.copy()
                out[:n] *= cu
                out[n:2 * n] *= ca
                return out
            return solver(g, x0, y0, *args, **kw)
        return solve
    return _patched((clock, "dop853_solve", wrap_solver(clock.dop853_solve)),
                    (clock, "gbs_solve", wrap_solver(clock.gbs_solve)))


def _law(power_tL=1.0, const_tL=1.0, power_polar=2.0, const_polar=2.0):
    """The asymptotic laws of claims 17 / 18 with a wrong exponent or constant."""
    from . import _claims_logistic as L
    tL, polar = L._tL, L._polar
    return _patched((L, "_tL", lambda power=1.0, const=1.0: tL(power * power_tL, const * const_tL)),
                    (L, "_polar", lambda power=2.0, const_factor=2.0: polar(power * power_polar / 2.0,
                                                                           const_factor * const_polar / 2.0)))


def _non_strict():
    """Monotonicity tests that accept ties (``<=`` instead of a strict, tolerance-stated ``<``)."""
    from . import _claims_regression as R
    return _patched((R, "STRICT_MARGIN", -R.STRICT_MARGIN))


def _symbolic_flow(kind: str):
    r"""The SymPy-derived flow with a planted bug: ``no_J``: $\dot a=-V^\top g$ (the Jacobian dropped,
    which turns the *unsquared* output dynamics into the true one); ``dV_sign``: $\dot V$ flipped."""
    from theorems import SymbolicModel
    import theorems._id_base as base
    orig = SymbolicModel.flow

    def flow(self):
        dV, da = orig(self)
        if kind == "dV_sign":
            return -dV, da
        return dV, -(self.V.T * self.grad_loss)

    @contextlib.contextmanager
    def cm():
        base.model.cache_clear()
        try:
            with _patched((SymbolicModel, "flow", flow)):
                yield
        finally:
            base.model.cache_clear()
    return cm()


def _certifier_field(ca: float):
    r"""The certifier's enclosure field (:func:`numerics.validated._enclosure.tau_field`) with $da/d\tau$ scaled by ``ca``:
    a bug in the certifier's own Taylor code, which the independent checker must catch."""
    import numerics.validated._enclosure as V
    orig = V.tau_field

    def tau_field(u, a, b, ref, one):
        du, da = orig(u, a, b, ref, one)
        return du, [d * ca for d in da]
    return _patched((V, "tau_field", tau_field))


def _tied_loss(kind: str):
    """The tied model (claim 30) trained on softplus(+margin) (``sign``: the loss of the wrong sign) or on
    2 softplus(-margin) (``scale``: the loss doubled, as a doubled learning rate)."""
    import torch
    sp = torch.nn.functional.softplus
    if kind == "sign":
        return _patched((torch.nn.functional, "softplus", lambda x, *a, **k: sp(-x, *a, **k)))
    return _patched((torch.nn.functional, "softplus", lambda x, *a, **k: 2.0 * sp(x, *a, **k)))


MUTANTS: tuple[Mutant, ...] = (
    Mutant("flow.da_sign", "da/dt of the wrong sign in the generated flow (numpy, torch, mpmath)",
           FULL_FLOW + GD + STIFF, lambda: _flow_terms(1.0, -1.0)),
    Mutant("flow.da_zero", "da/dt = 0 in the generated flow (logits never updated, e.g. a detached gradient)",
           FULL_FLOW + GD, lambda: _flow_terms(1.0, 0.0)),
    Mutant("flow.da_scale3", "da/dt scaled by 3 in the generated flow", FULL_FLOW + GD_CHEAP + STIFF,
           lambda: _flow_terms(1.0, 3.0)),
    Mutant("flow.time_scale2", "the whole generated flow scaled by 2 (time runs twice as fast)",
           FULL_FLOW + GD_CHEAP + STIFF, lambda: _flow_terms(2.0, 2.0)),
    Mutant("jacobian.diag_only", "softmax Jacobian without its -s s^T term (J = diag(s)) in the generated "
           "J^T x, full and reduced systems", FULL_FLOW + GD_CHEAP + STIFF + REDUCED, _jacobian_diag_only),
    Mutant("loss.dell_sign", "l'(z) of the wrong sign (gradient ascent on the logistic loss)", LOGISTIC,
           lambda: _wrong_dell("sign")),
    Mutant("loss.dell_argument", "l'(z) = -sigma(z) instead of -sigma(-z) (logistic derivative at -z)",
           LOGISTIC, lambda: _wrong_dell("argument")),
    Mutant("reduced.gamma_sign", "gamma of the wrong sign in the reduced logistic (u, a) system",
           REDUCED + ("C21", "C29"), lambda: _reduced_terms(-1.0, -1.0)),
    Mutant("reduced.du_scale2", "du/dtau = 2 b s in the reduced logistic system", REDUCED,
           lambda: _reduced_terms(2.0, 1.0)),
    Mutant("reduced.da_scale2", "da/dtau = 2 J(s) u in the reduced logistic system", REDUCED,
           lambda: _reduced_terms(1.0, 2.0)),
    Mutant("softmax.no_max_shift", "softmax without subtracting max_i a_i (overflow above a = 709)",
           ("C11", "C12", "C13", "C16", "C15", "C20"), _no_max_shift),
    Mutant("law.rate_exponent", "wrong exponents in the rate laws: t^0.99 L (claim 17), log^1.9 (claim 18)",
           ("C17", "C18"), lambda: _law(power_tL=0.99, power_polar=1.9)),
    Mutant("law.rate_constant", "wrong constants in the rate laws: 1.01/b (claim 17), 2.1(n-1)b/n (claim 18)",
           ("C17", "C18"), lambda: _law(const_tL=1.01, const_polar=2.1)),
    Mutant("test.non_strict", "monotonicity tests accept ties (claims 24, 25)", ("C24", "C25"), _non_strict),
    Mutant("symbolic.no_J", "SymPy flow with da/dt = -V^T g (Jacobian dropped): makes the unsquared output "
           "dynamics true", SYMBOLIC_FLOW + SYMBOLIC_IDS, lambda: _symbolic_flow("no_J")),
    Mutant("symbolic.dV_sign", "SymPy flow with dV/dt of the wrong sign", SYMBOLIC_FLOW + SYMBOLIC_IDS,
           lambda: _symbolic_flow("dV_sign")),
    Mutant("certify.field_da_scale", "the certifier's interval field with da/dtau scaled by 1.5 (its Taylor "
           "enclosure code only)", ("CERT",), lambda: _certifier_field(1.5)),
    Mutant("tied.loss_sign", "tied model trained on softplus(+margin) (loss of the wrong sign)", ("C30",),
           lambda: _tied_loss("sign")),
    Mutant("tied.loss_scale2", "tied model trained on 2 softplus(-margin) (the loss doubled)", ("C30",),
           lambda: _tied_loss("scale")),
)

#: mutants that witness a *control* passing without being aimed at its claim's check (looked up by name):
#: under them the near-miss laws of the controls of claims 17 and 18 are the true ones
_EXTRA_WITNESS_MUTANTS: dict = {m.name: m for m in (
    Mutant("witness.reduced_du_scale_1.005", "du/dtau = b s / 1.005 in the reduced logistic system", (),
           lambda: _reduced_terms(1 / 1.005, 1.0)),
    Mutant("witness.reduced_da_scale_1.05", "da/dtau = J(s) u / 1.05 in the reduced logistic system", (),
           lambda: _reduced_terms(1.0, 1 / 1.05)),
)}


def mutant(name: str) -> Mutant:
    """The mutant called ``name`` (from :data:`MUTANTS` or the witness-only mutants)."""
    for m in MUTANTS + tuple(_EXTRA_WITNESS_MUTANTS.values()):
        if m.name == name:
            return m
    raise InvalidArgument(f"mutants={name!r} is not a known mutant; expected names from: "
                          f"{', '.join(m.name for m in MUTANTS)}")


def select_mutants(text: str | None) -> tuple[Mutant, ...]:
    """``None``/``'all'``: every mutant; else the comma-separated names."""
    if text is None or text == "all":
        return MUTANTS
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InvalidArgument(f"mutants={text!r} is empty; expected 'all' or comma-separated mutant names")
    return tuple(mutant(n) for n in dict.fromkeys(names))


# ---- witnesses of the controls ----------------------------------------------------------------
_CLAIM_MODULES = ("_claims_calculus", "_claims_logistic", "_claims_regression", "_claims_alternatives",
                  "_claims_identities", "_claims_sinks")


def _cert_witness(ctx):
    """CERT's control records (``details['passable']``) the same rewrite naming the true winner: it must pass."""
    from ._claim import Outcome
    from ._claims_certify import cert_control
    rows = cert_control(ctx).details.get("passable", [])
    if rows and all(r["check"] == "passed" for r in rows):
        return Outcome("verified", f"the rewrite naming the true winner passes --check "
                       f"({len(rows)} certificate(s))")
    return Outcome("refuted", "the true-winner rewrite did not pass --check", counterexample={"rows": rows})


#: witnesses of controls in modules outside this mutation layer's claim modules
_OTHER_WITNESSES = {"CERT": ("the same certificate rewrite naming the true winner", _cert_witness)}


def control_witnesses() -> dict:
    """``{claim id: (description, fn or mutant name)}`` from the claim modules' ``CONTROL_WITNESSES``."""
    out = dict(_OTHER_WITNESSES)
    for name in _CLAIM_MODULES:
        mod = importlib.import_module(f"proofs_check.{name}")
        w = getattr(mod, "CONTROL_WITNESSES", {})
        out.update(w() if callable(w) else w)
    return out


#: under a mutant, a batch integration that needs more than this many steps raises IntegrationError (a kill by
#: error, reported as such); the unmutated searches need far fewer (12 points per decade, log clock)
MUTANT_MAX_STEPS = 20_000


def _step_budget():
    import numerics
    orig = numerics.integrate_batch

    def integrate_batch(*args, **kw):
        kw["max_steps"] = min(int(kw.get("max_steps", MUTANT_MAX_STEPS)), MUTANT_MAX_STEPS)
        return orig(*args, **kw)
    return _patched((numerics, "integrate_batch", integrate_batch))


def _ctx_like(ctx: Context) -> Context:
    return Context(profile=ctx.profile, seed=ctx.seed, device=ctx.device, dps=ctx.dps)


def _cell(claim, result) -> dict:
    ctl = result.control
    return {"check": result.outcome.verdict, "control": ctl.verdict,
            "killed": result.outcome.verdict != claim.expected,
            "by_error": result.outcome.verdict == "inconclusive" and ":" in result.outcome.reason
            and result.outcome.evidence.startswith("the check raised"),
            "control_passes": ctl.verdict == claim.expected,
            "evidence": result.outcome.evidence[:240], "seconds": round(result.seconds, 2)}


def run_mutants(claims, ctx: Context, mutants=MUTANTS, *, log=None) -> dict:
    """Run the aimed claims under each mutant and the registered control witnesses; return the kill matrix."""
    log = log or (lambda s: None)
    ids = {c.id for c in claims}
    matrix: dict = {c.id: {} for c in claims}
    per_mutant = []
    start = time.perf_counter()
    for m in mutants:
        aimed = [c for c in claims if c.id in m.concerns]
        t0 = time.perf_counter()
        if aimed:
            mctx = _ctx_like(ctx)
            with m.patch(), _step_budget():
                for c in aimed:
                    r = run_claim(c, mctx)
                    matrix[c.id][m.name] = _cell(c, r)
                    log(f"mutant {m.name:<22} {c.id:<28} check {r.outcome.verdict:<12} "
                        f"{'KILLED' if r.outcome.verdict != c.expected else 'survived'}; control "
                        f"{r.control.verdict}{' (passes)' if r.control.verdict == c.expected else ''} "
                        f"{r.seconds:6.1f} s")
        per_mutant.append({"name": m.name, "description": m.description, "aimed_at": [c.id for c in aimed],
                           "killed": [c.id for c in aimed if matrix[c.id][m.name]["killed"]],
                           "seconds": round(time.perf_counter() - t0, 2)})
    witnesses = {}
    wctx = _ctx_like(ctx)
    registered = control_witnesses()
    for c in claims:
        if c.id not in registered:
            continue
        desc, how = registered[c.id]
        if isinstance(how, str):  # a mutant: run the control under it
            with mutant(how).patch():
                try:
                    out = c.control.run(_ctx_like(ctx))
                except Exception as exc:  # noqa: BLE001 - recorded, never swallowed silently
                    witnesses[c.id] = {"witness": desc, "mutant": how, "control": "inconclusive",
                                       "passes": False, "evidence": f"{type(exc).__name__}: {exc}"}
                    continue
        else:
            try:
                out = how(wctx)
            except Exception as exc:  # noqa: BLE001
                witnesses[c.id] = {"witness": desc, "control": "inconclusive", "passes": False,
                                   "evidence": f"{type(exc).__name__}: {exc}"}
                continue
        witnesses[c.id] = {"witness": desc, **({"mutant": how} if isinstance(how, str) else {}),
                           "control": out.verdict, "passes": out.verdict == c.expected,
                           "evidence": out.evidence[:300]}
        log(f"witness {c.id:<28} control {out.verdict:<12} {'passes' if out.verdict == c.expected else 'NOT PASSED'}"
            f" under {desc}")
    summary = summarize(claims, matrix, witnesses, mutants)
    summary["total_seconds"] = round(time.perf_counter() - start, 2)
    return {"mutants": per_mutant, "matrix": matrix, "witnesses": witnesses, "summary": summary,
            "claims": sorted(ids, key=[c.id for c in claims].index)}


def in_scope(cid: str) -> bool:
    """Claims of this layer's claim modules (C01-C30, C03P, ID.*, CERT); claims that other packages register
    (C31-C33, plugins) bring no mutants or witnesses and are listed as outside the scope, never counted as covered."""
    return cid in ("C03P", "CERT") or cid.startswith("ID.") or (
        len(cid) == 3 and cid[0] == "C" and cid[1:].isdigit() and 1 <= int(cid[1:]) <= 30)


def summarize(claims, matrix, witnesses, mutants) -> dict:
    """Which numeric claims survive every aimed mutant, and which controls are not shown passable."""
    outside = [c.id for c in claims if not in_scope(c.id)]
    claims = [c for c in claims if in_scope(c.id)]
    numeric = [c.id for c in claims if c.evidence_kind != SYMBOLIC]
    aimed = {cid: list(cells) for cid, cells in matrix.items()}
    killed = {cid: [m for m, cell in cells.items() if cell["killed"]] for cid, cells in matrix.items()}
    not_killed = [cid for cid in numeric if not killed.get(cid)]
    passable = {}
    for c in claims:
        how = [m for m, cell in matrix[c.id].items() if cell["control_passes"]]
        if witnesses.get(c.id, {}).get("passes"):
            how.append("witness: " + witnesses[c.id]["witness"])
        passable[c.id] = how
    unpassable = [cid for cid, how in passable.items() if not how]
    n_runs = sum(len(cells) for cells in matrix.values())
    return {"mutants": len(mutants), "claim_runs": n_runs, "outside_scope": outside,
            "kills": sum(len(k) for k in killed.values()),
            "numeric_claims": numeric, "numeric_claims_not_killed": not_killed,
            "claims_without_aimed_mutant": [cid for cid in numeric if not aimed.get(cid)],
            "killed_by": killed, "control_passable_by": passable, "controls_not_shown_passable": unpassable,
            "ok": not not_killed and not unpassable}


def expected_control(claim) -> str:
    """The verdict a control must reach in a normal run (for the report)."""
    return opposite(claim.expected)
