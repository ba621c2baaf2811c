r"""Mutation testing: planted bugs in the engine, what each one did to each claim, and the kill matrix.

A *mutant* is a plausible mistake planted into the engine for the duration of a ``with`` block, by
monkeypatching; no source file is edited. A mutant names the engine parts it plants its bug in
(``engines``: ``"flow"``, ``"reduced"``, ``"symbolic.flow"``, ...); every claim whose record lists one of those
parts (:attr:`Claim.engines <proofs_check.claim.Claim>`) is re-run under it (check and negative control)
in a fresh :class:`Context`, so no trajectory computed without the bug is reused. Each run has one outcome:

* **killed**: the check no longer reaches the claim's expected verdict (its verdict sees the bug);
* **detected**: the check raised :class:`numerics.IntegrationError`, an engine that refused to produce a wrong
  answer (loud failure), counted apart from kills;
* **crashed**: any other exception escaped the check's own code, or a certificate checker it ran crashed in its
  own code on a certificate it had read (``Outcome.raised``; a bug of the check, not evidence);
* **equivalent**: the mutant is *proven* equal to a reparametrization that the claim's statement is blind to
  (``Mutant.equivalent_under`` matches ``Claim.invariant_under``; e.g. ``reduced.du_scale2`` is exactly
  $b\to2b$, proven by :func:`prove_du_scale2_is_b_doubled`); the claim is not re-run;
* **survived**: the check still reached its expected verdict.

Only killed and detected count. Besides, a run records whether the negative control's *statement* held under
the mutant (**control passes**): with the claim's witness (:class:`proofs_check.claim.Witness`, on the claim
record: a planted bug, or an input under which the control's wrong statement holds) this shows every control
*can* pass, so "control refuted" is evidence. Witnesses are ``strong`` or ``weak`` (they re-run the claim's own
check, or keep inputs where the wrong statement happens to hold); the report lists the weak ones.

Requirements checked by :func:`summarize`: every numeric claim (evidence other than a proof, :data:`PROOF_KINDS`)
that ran is killed or detected by at least one mutant aimed at it, no run crashed, and every control that ran
is shown passable. ``softpolar verify --mutants`` exits 1 otherwise.

Mutant groups: :data:`MUTANTS` is the engine group; other modules add groups (e.g. mutants of the independent
checkers) with :func:`register_mutant_group`, or by listing a module that defines ``MUTANT_GROUP`` in
:data:`MUTANT_GROUP_MODULES`. A group may bring its own ``evaluate(mutant, ctx) -> dict`` (for mutants caught
by a tamper suite rather than by a claim's verdict); its rows are kept in the report next to the matrix.

Side by side (``verify --mutants --jobs N``, default ``auto`` as for the claims): each *unit*, one mutant with
every claim it aims at, or the witnesses of one group of claims, runs in a process ``fork``ed for it alone
(:func:`run_forked`), so a patch, and whatever a cache kept under it, ends with that process: it never reaches the
verify process or another mutant's run. The units start longest first (the seconds of the report already in
``--out``, else :data:`DEFAULT_MUTANT_SECONDS`, else 1 s); the processes run on CPU shares of their own, hold no
lock of the verify process and die with it (the machinery of :mod:`.parallel`). The report is the serial run's,
the ``seconds`` fields aside: each mutant's cells come from one context as before, and the rows, cells and
witnesses are put together in the serial order. A process that dies without answering costs time, not cells: its
unit runs again in the verify process, after a note on stderr. Progress lines come as each unit finishes.

Known limits: a mutant that leaves every aimed claim intact is reported as surviving; it is then either
equivalent on the tested inputs (e.g. no max shift while every logit stays far below 709) or a gap in the
checks; the report lists it either way.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

from theorems import InvalidArgument

from ..claim import Context, opposite, run_claim

SYMBOLIC = "exact symbolic proof"
#: evidence that is a proof (no numbers to kill): claims with it need a witness, not a killing mutant
PROOF_KINDS = (SYMBOLIC, "machine-checked proof (Coq)")


def is_numeric(claim) -> bool:
    """Evidence other than a proof: such a claim must be killed (or detected) by a mutant aimed at it."""
    return claim.evidence_kind not in PROOF_KINDS

#: the engine parts a mutant can plant its bug in (the tags of ``Claim.engines``), with what each one is
ENGINES = {
    "flow": "the generated full (V, a) flow (FlowRHS: numpy, torch, mpmath) and its batch/single integrators",
    "taylor.flow": "the Taylor engine's system (the SymPy-derived flow that heyoka compiles: "
                   "numerics.integrate._taylor_sympy.flow_system), which the settling runs of the derived laws "
                   "(numerics.integrate.settle: C15, C17-C19, the rate/loss/value law families) integrate",
    "gd": "gradient descent on the generated gradient (short runs)",
    "gd.long": "gradient descent over 3e5 iterations (C25; only the cheap-to-see flow mutants run it)",
    "stiff": "the stiff integrator of the full flow (KL toy)",
    "reduced": "the reduced logistic (u, a) system in the internal clock tau",
    "reduced.gamma": "claims that also integrate the clock's gamma (square-loss and KL runs through the clock)",
    "logistic.dell": "the logistic loss derivative l' used by the flow, the clock and the reduced system",
    "softmax.shift": "the max shift of softmax in the array backends",
    "rate.law": "the asymptotic rate laws fitted by claims 17 and 18",
    "test.strict": "the strict monotonicity tests of claims 24 and 25",
    "symbolic.flow": "the SymPy-derived flow (theorems.SymbolicModel.flow)",
    "certify.field": "the certifier's interval field (numerics tau_field)",
    "tied.torch": "the torch loss of the tied model (claim 30)",
    "coq.development": "the Coq development (theorems/coq) that FORMAL builds",
    "sinks.softmax1": "the SymPy systems of the softmax1 sink claims (theorems._sinks: SOFTMAX1 and its log clock)",
    "symbolic.optimizers": "the SymPy forms of the optimizers (theorems.optimizers: time change, closed forms)",
    "optim.flow": "the continuous optimizer flows (numerics.optim._flow) on the generated flow's gradient (FlowRHS)",
    "optim.discrete": "the discrete optimizer steps (numerics.optim._discrete) on the generated flow's gradient",
    "optim.filippov": "the sign flow's Filippov engine (numerics.optim._filippov) on the generated flow's gradient",
}
#: the outcomes of one claim run under a mutant; only the first two count
OUTCOMES = ("killed", "detected", "crashed", "equivalent", "survived")
COUNTING = ("killed", "detected")


@dataclass(frozen=True)
class Mutant:
    """A planted bug: ``patch()`` is a context manager that applies it; ``engines`` the parts it changes.

    ``equivalent_under``: a reparametrization (e.g. ``"b"``) that the mutant is proven to be, by
    ``equivalence_proof() -> (bool, str)``; for a claim whose record lists it in ``invariant_under`` the
    outcome is *equivalent* when the proof succeeds.
    """

    name: str
    description: str
    engines: tuple
    patch: Callable[[], contextlib.AbstractContextManager] = field(repr=False, compare=False)
    equivalent_under: str = ""
    equivalence_proof: Callable[[], tuple] | None = field(default=None, repr=False, compare=False)

    def aims_at(self, claim) -> bool:
        """Does this mutant change an engine part that ``claim`` runs through?"""
        return bool(set(self.engines) & set(getattr(claim, "engines", ())))


@dataclass(frozen=True)
class MutantGroup:
    """Mutants of one part of the package; ``evaluate(mutant, ctx) -> dict`` (optional) runs a mutant that a
    claim's verdict does not see (e.g. a weakened checker caught by a tamper suite): the dict has ``outcome``
    (one of :data:`OUTCOMES`), ``caught_by`` (what caught it, or ``""``) and ``evidence``."""

    name: str
    description: str
    mutants: tuple
    evaluate: Callable | None = field(default=None, repr=False, compare=False)


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
    from numerics import FlowRHS
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

    import numerics.rhs as rhs_mod
    kernels = {}

    def loss_kernels_prop(self):  # the loss kernels hold l' from their construction: rebuild them on the mutated one
        if id(self) not in kernels:
            kernels[id(self)] = (self, rhs_mod._LOSS_KERNELS[self._loss_def.form](self))
        return kernels[id(self)][1]

    np_orig, mp_orig = inp.dell_numpy, imp.dell_mpmath
    return _patched((cls, "_dell", property(dell_prop)), (cls, "_loss_kernels", property(loss_kernels_prop)),
                    (inp, "dell_numpy", lambda loss: wrap(np_orig(loss))),
                    (clock, "dell_numpy", lambda loss: wrap(np_orig(loss))),
                    (imp, "dell_mpmath", lambda loss: wrap(mp_orig(loss))),
                    (clock, "dell_mpmath", lambda loss: wrap(mp_orig(loss))))


def _taylor_system(edit, what):
    r"""The Taylor engine's system edited by ``edit(S, rhs)`` (``rhs``: a list of SymPy expressions, changed in
    place): the system that :func:`numerics.integrate._taylor_sympy.flow_system` derives, as the Taylor backend reads
    it before heyoka compiles it (the settling runs of :mod:`numerics.integrate.settle`, the reduced and the event
    integrators). The compiled integrators are cached per shape: the block gets an empty cache of its own, so no
    integrator compiled without the bug is reused and none compiled with it outlives the block."""
    import numerics.integrate._taylor as taylor
    real = taylor.flow_system

    def flow_system(*args, **kw):
        S = real(*args, **kw)
        rhs = list(S.rhs)
        edit(S, rhs)
        return dataclasses.replace(S, rhs=rhs)
    flow_system.__doc__ = f"flow_system with a planted bug: {what}"
    return _patched((taylor, "flow_system", flow_system), (taylor, "_CACHE", {}))


def _taylor_da(ca):
    r"""$\dot a$ scaled by ``ca`` (exact) in the Taylor engine's system, full and reduced."""
    import sympy as sp
    c = sp.nsimplify(ca)

    def edit(S, rhs):
        lo, hi = S.layout["a"]
        rhs[lo:hi] = [c * q for q in rhs[lo:hi]]
    return _taylor_system(edit, f"da/dt x {ca}")


def _taylor_first_row_dropped():
    r"""$\dot V$ without its first row ($\dot V_{0j}=0$: a row loop that starts at 1) in the Taylor engine's full
    system: the values move along $w'=(0,w_1,\dots)$ instead of $w$ (the reduced system has no rows)."""
    import sympy as sp

    def edit(S, rhs):
        if "V" in S.layout:
            lo, hi = S.layout["V"]
            n = S.layout["a"][1] - S.layout["a"][0]
            rhs[lo:lo + n] = [sp.Integer(0)] * n
    return _taylor_system(edit, "dV_0j/dt = 0")


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
    from ..claims import _logistic_laws as L
    tL, polar = L._tL, L._polar
    return _patched((L, "_tL", lambda power=1.0, const=1.0: tL(power * power_tL, const * const_tL)),
                    (L, "_polar", lambda power=2.0, const_factor=2.0: polar(power * power_polar / 2.0,
                                                                           const_factor * const_polar / 2.0)))


def _non_strict():
    """Monotonicity tests that accept ties (``<=`` instead of a strict, tolerance-stated ``<``)."""
    from ..claims import _claims_regression as R
    return _patched((R, "STRICT_MARGIN", -R.STRICT_MARGIN))


def _symbolic_flow(kind: str):
    r"""The SymPy-derived flow with a planted bug: ``no_J``: $\dot a=-V^\top g$ (the Jacobian dropped,
    which turns the *unsquared* output dynamics into the true one); ``dV_sign``: $\dot V$ flipped; ``da_sign``:
    $\dot a$ flipped; ``da_zero``: $\dot a=0$ (logits detached); ``ascent``: both flipped (gradient ascent)."""
    import sympy as sp

    from theorems import SymbolicModel
    import theorems._id_base as base
    orig = SymbolicModel.flow

    def flow(self):
        dV, da = orig(self)
        if kind == "dV_sign":
            return -dV, da
        if kind == "da_sign":
            return dV, -da
        if kind == "da_zero":
            return dV, sp.zeros(*da.shape)
        if kind == "ascent":
            return -dV, -da
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
    r"""The certifier's enclosure field (:func:`numerics.validated._enclosure.tau_field`) with $da/d\tau$ scaled
    by ``ca``: a bug in the certifier's own Taylor code, which the independent checker must catch."""
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


def _coq_patched(patch: dict):
    """Every build of the Coq development applies ``patch`` (text replacements in the copied sources)."""
    from theorems import coq
    orig = coq.build

    def build(folder=None, *, patch=None, upto=None):
        return orig(folder, patch={**_patch, **(patch or {})}, upto=upto)
    _patch = patch
    return _patched((coq, "build", build))


def _coq_lemma_as_axiom():
    return _coq_patched({"Calculus.v": ("Lemma exp_le : forall x y, x <= y -> exp x <= exp y.\nProof.",
                                        "Axiom exp_le : forall x y, x <= y -> exp x <= exp y.\n"
                                        "Lemma exp_le_proved : forall x y, x <= y -> exp x <= exp y.\nProof.")})


def _coq_ties_region():
    from theorems import coq
    return _coq_patched(coq.TIES_BUG)


def prove_du_scale2_is_b_doubled(ns=(2, 3, 4)) -> tuple:
    r"""``reduced.du_scale2`` is exactly $b\to2b$: proven with SymPy on the reduced field, for ``ns``.

    The reduced system integrated by :func:`numerics.reduced_logistic` is, in the internal clock $\tau$,
    $F(u,a,T;b)=(b\,s(a),\ J(s(a))u,\ e^{-T}/\gamma(\langle u,s\rangle))$, with $b$ only in the first block and
    initial values that do not contain $b$. The mutant multiplies the first block by 2. The proof checks
    $M(y;b)-F(y;2b)\equiv0$ exactly (:func:`theorems.prove_zero`), so the mutated trajectory at $b$ *is* the
    true trajectory at $2b$, and a statement that holds for every $b>0$ cannot tell them apart.
    """
    import sympy as sp

    from theorems import prove_zero

    def field(u, a, T, b, cu=1):
        e = [sp.exp(x) for x in a]
        Z = sum(e)
        s = sp.Matrix([x / Z for x in e])
        J = sp.diag(*s) - s * s.T
        z = (sp.Matrix(u).T * s)[0]
        gamma = 1 / (1 + sp.exp(z))
        return list(cu * b * s) + list(J * sp.Matrix(u)) + [sp.exp(-T) / gamma]

    b, T = sp.symbols("b T", positive=True)
    rows = []
    for n in ns:
        u = sp.symbols(f"u1:{n + 1}", real=True)
        a = sp.symbols(f"a1:{n + 1}", real=True)
        diff = [m - f for m, f in zip(field(u, a, T, b, cu=2), field(u, a, T, 2 * b))]
        rows.append((n, prove_zero(diff).status == "proved"))
    ok = all(r for _, r in rows)
    return ok, (f"mutated field at b minus true field at 2b proven identically zero for n = "
                f"{', '.join(str(n) for n, _ in rows)}" if ok else f"not proven: {rows}")


MUTANTS: tuple[Mutant, ...] = (
    Mutant("flow.da_sign", "da/dt of the wrong sign in the generated flow (numpy, torch, mpmath)",
           ("flow", "gd", "gd.long", "stiff", "optim.flow", "optim.discrete", "optim.filippov"),
           lambda: _flow_terms(1.0, -1.0)),
    Mutant("flow.da_zero", "da/dt = 0 in the generated flow (logits never updated, e.g. a detached gradient)",
           ("flow", "gd", "gd.long", "optim.flow", "optim.discrete", "optim.filippov"),
           lambda: _flow_terms(1.0, 0.0)),
    Mutant("flow.da_scale3", "da/dt scaled by 3 in the generated flow", ("flow", "gd", "stiff"),
           lambda: _flow_terms(1.0, 3.0)),
    Mutant("flow.time_scale2", "the whole generated flow scaled by 2 (time runs twice as fast)",
           ("flow", "gd", "stiff"), lambda: _flow_terms(2.0, 2.0)),
    Mutant("taylor.da_scale3", "da/dt scaled by 3 in the Taylor engine's derived system (the flow.* mutants patch "
           "FlowRHS, which that engine does not call)", ("taylor.flow",), lambda: _taylor_da(3)),
    Mutant("taylor.dV_row0", "dV/dt without its first row in the Taylor engine's derived system (a row loop that "
           "starts at 1: the values move along (0, w_1, ...) instead of w)", ("taylor.flow",),
           _taylor_first_row_dropped),
    Mutant("jacobian.diag_only", "softmax Jacobian without its -s s^T term (J = diag(s)) in the generated "
           "J^T x, full and reduced systems", ("flow", "gd", "stiff", "reduced"), _jacobian_diag_only),
    Mutant("loss.dell_sign", "l'(z) of the wrong sign (gradient ascent on the logistic loss)", ("logistic.dell",),
           lambda: _wrong_dell("sign")),
    Mutant("loss.dell_argument", "l'(z) = -sigma(z) instead of -sigma(-z) (logistic derivative at -z)",
           ("logistic.dell",), lambda: _wrong_dell("argument")),
    Mutant("reduced.gamma_sign", "gamma of the wrong sign in the reduced logistic (u, a) system",
           ("reduced", "reduced.gamma"), lambda: _reduced_terms(-1.0, -1.0)),
    Mutant("reduced.du_scale2", "du/dtau = 2 b s in the reduced logistic system (exactly b -> 2b)", ("reduced",),
           lambda: _reduced_terms(2.0, 1.0), equivalent_under="b", equivalence_proof=prove_du_scale2_is_b_doubled),
    Mutant("reduced.da_scale2", "da/dtau = 2 J(s) u in the reduced logistic system", ("reduced",),
           lambda: _reduced_terms(1.0, 2.0)),
    Mutant("softmax.no_max_shift", "softmax without subtracting max_i a_i (overflow above a = 709)",
           ("softmax.shift",), _no_max_shift),
    Mutant("law.rate_exponent", "wrong exponents in the rate laws: t^0.99 L (claim 17), log^1.9 (claim 18)",
           ("rate.law",), lambda: _law(power_tL=0.99, power_polar=1.9)),
    Mutant("law.rate_constant", "wrong constants in the rate laws: 1.01/b (claim 17), 2.1(n-1)b/n (claim 18)",
           ("rate.law",), lambda: _law(const_tL=1.01, const_polar=2.1)),
    Mutant("test.non_strict", "monotonicity tests accept ties (claims 24, 25)", ("test.strict",), _non_strict),
    Mutant("symbolic.no_J", "SymPy flow with da/dt = -V^T g (Jacobian dropped): makes the unsquared output "
           "dynamics true", ("symbolic.flow",), lambda: _symbolic_flow("no_J")),
    Mutant("symbolic.dV_sign", "SymPy flow with dV/dt of the wrong sign", ("symbolic.flow",),
           lambda: _symbolic_flow("dV_sign")),
    Mutant("certify.field_da_scale", "the certifier's interval field with da/dtau scaled by 1.5 (its Taylor "
           "enclosure code only)", ("certify.field",), lambda: _certifier_field(1.5)),
    Mutant("tied.loss_sign", "tied model trained on softplus(+margin) (loss of the wrong sign)", ("tied.torch",),
           lambda: _tied_loss("sign")),
    Mutant("tied.loss_scale2", "tied model trained on 2 softplus(-margin) (the loss doubled)", ("tied.torch",),
           lambda: _tied_loss("scale")),
    Mutant("coq.lemma_as_axiom", "a lemma of the Coq development (exp_le) turned into an Axiom: it compiles, but "
           "the trapping theorem then rests on an axiom outside the allowed list", ("coq.development",),
           _coq_lemma_as_axiom),
    Mutant("coq.ties_region", "the Coq region R_i defined with strict a-gaps (R_i = R_i^+)", ("coq.development",),
           _coq_ties_region),
    Mutant("sinks.no_sink", "softmax1's normalizer without its 1 (c = 0: plain softmax, no sink slot) in the sink "
           "claims' systems", ("sinks.softmax1",), lambda: _softmax1_link(c=0)),
    Mutant("sinks.sink_weight2", "softmax1's normalizer with 2 instead of 1 (a sink of double weight)",
           ("sinks.softmax1",), lambda: _softmax1_link(c=2)),
)

def _atlas_ignore_winner():
    """:func:`numerics.validated._atlas_check._inside` testing every token instead of the claimed winner."""
    from numerics.validated import _atlas_check as ac
    real = ac._inside
    return _patched((ac, "_inside", lambda m, A, E, n, i, *claims: any(real(m, A, E, n, k) for k in range(n))))


def _gd_record_alias():
    """:func:`numerics.gradient_descent` (numpy) whose record holds the last iterate at every recorded step, as a
    record that keeps a reference to a buffer updated in place would."""
    import numerics.integrate._gd as gd
    real = gd.assemble_numpy

    def assemble(problem, times, states, *args, **kw):
        return real(problem, times, [states[-1]] * len(states), *args, **kw)
    return _patched((gd, "assemble_numpy", assemble))


def _loss_linearized():
    r"""The engine's loss replaced by its linearization at $\beta=0$ (numpy and torch backends): gradient
    $\nabla\mathcal L(0)$ and value $\mathcal L(0)+\langle\nabla\mathcal L(0),\beta\rangle$, consistent, so the
    integrators' descent test holds. For the square loss: the residual $\beta-y$ without its $\beta$."""
    cls = _rhs_class()
    grad, value = cls.grad_loss, cls.loss_value

    def grad_loss(self, beta, target, X=None):
        return grad(self, 0 * beta, target, X)

    def loss_value(self, V, a, target, X=None):
        beta = self.output(V, a)
        return value(self, 0 * V, a, target, X) + (grad(self, 0 * beta, target, X) * beta).sum(-1)
    return _patched((cls, "grad_loss", grad_loss), (cls, "loss_value", loss_value))


def _softmax1_link(c):
    """Replace theorems._sinks.SOFTMAX1 (read by its systems at call time) with a wrong normalizer constant."""
    import sympy as sp

    from theorems import Link
    from theorems import sinks as _sinks

    x = sp.Symbol("x", real=True)
    return _patched((_sinks, "SOFTMAX1", Link(f"softmax1-mutant-c{c}", h=sp.exp(x), c=c)))


#: mutants that witness a *control* passing without being aimed at any claim (looked up by name): under them
#: the near-miss laws of the controls of claims 17 and 18 are the true ones
WITNESS_MUTANTS: tuple[Mutant, ...] = (
    Mutant("witness.reduced_du_scale_1.005", "du/dtau = b s / 1.005 in the reduced logistic system", (),
           lambda: _reduced_terms(1 / 1.005, 1.0)),
    Mutant("witness.reduced_da_scale_1.05", "da/dtau = J(s) u / 1.05 in the reduced logistic system", (),
           lambda: _reduced_terms(1.0, 1 / 1.05)),
    # under these the wrong statements of the controls of claims 4, 7 and 8 hold for the SymPy flow
    Mutant("witness.symbolic_da_zero", "SymPy flow with da/dt = 0 (logits detached)", (),
           lambda: _symbolic_flow("da_zero")),
    Mutant("witness.symbolic_ascent", "SymPy flow of the wrong sign (gradient ascent: dV/dt and da/dt flipped)", (),
           lambda: _symbolic_flow("ascent")),
    Mutant("witness.symbolic_da_sign", "SymPy flow with da/dt of the wrong sign", (),
           lambda: _symbolic_flow("da_sign")),
    # under it C25's control (the ordering at iteration 1e3) reads the final iterates: its statement holds
    Mutant("witness.gd_record_alias", "gradient descent's record holds the last iterate at every recorded "
           "iteration (a reference to a buffer updated in place)", (), _gd_record_alias),
    # under it the square loss from V(0) = y c0^T is (star) at tau = t: C10's control (no reparametrization) holds
    Mutant("witness.loss_linearized", "the loss linearized at beta = 0 (the square loss's residual beta - y without "
           "its beta): gradient grad L(0), value L(0) + <grad L(0), beta>", (), _loss_linearized),
    # under it the ATLAS control's tampered box (a wrong winner) passes the checker's re-proof
    Mutant("witness.atlas_ignore_winner", "the atlas checker's region test accepts any token's R_i^+ (the claimed "
           "winner and its bounds ignored)", (), _atlas_ignore_winner),
)

# ---- groups of mutants ------------------------------------------------------------------------
#: modules that define ``MUTANT_GROUP`` (a :class:`MutantGroup`), imported on first use
MUTANT_GROUP_MODULES: list[str] = []
_GROUPS: dict[str, MutantGroup] = {"engine": MutantGroup("engine", "planted bugs in the engine, seen by claims",
                                                         MUTANTS)}


def register_mutant_group(group: MutantGroup) -> MutantGroup:
    """Add ``group`` (its mutants join ``--mutants all`` and name lookup); names must be new."""
    if not isinstance(group, MutantGroup):
        raise InvalidArgument(f"group={group!r} is not allowed; expected a MutantGroup")
    taken = {m.name for g in _GROUPS.values() if g.name != group.name for m in g.mutants}
    clash = [m.name for m in group.mutants if m.name in taken]
    if clash:
        raise InvalidArgument(f"mutant names {clash} of group {group.name!r} are taken; expected new names")
    _GROUPS[group.name] = group
    return group


def mutant_groups() -> dict[str, MutantGroup]:
    """Every group, the engine group first (modules of :data:`MUTANT_GROUP_MODULES` imported now)."""
    for name in MUTANT_GROUP_MODULES:
        g = getattr(importlib.import_module(name), "MUTANT_GROUP", None)
        if g is not None and g.name not in _GROUPS:
            register_mutant_group(g)
    return dict(_GROUPS)


def all_mutants() -> tuple[Mutant, ...]:
    return tuple(m for g in mutant_groups().values() for m in g.mutants)


def group_of(m: Mutant) -> MutantGroup:
    for g in mutant_groups().values():
        if any(x.name == m.name for x in g.mutants):
            return g
    return _GROUPS["engine"]


def mutant(name: str) -> Mutant:
    """The mutant called ``name`` (from any group or the witness-only mutants)."""
    for m in all_mutants() + WITNESS_MUTANTS:
        if m.name == name:
            return m
    raise InvalidArgument(f"mutants={name!r} is not a known mutant; expected names from: "
                          f"{', '.join(m.name for m in all_mutants())}")


def select_mutants(text: str | None) -> tuple[Mutant, ...]:
    """``None``/``'all'``: every mutant of every group; a group name: its mutants; else comma-separated names."""
    if text is None or text == "all":
        return all_mutants()
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InvalidArgument(f"mutants={text!r} is empty; expected 'all' or comma-separated mutant names")
    groups = mutant_groups()
    out = []
    for n in dict.fromkeys(names):
        out.extend(groups[n].mutants if n in groups else (mutant(n),))
    return tuple(dict.fromkeys(out))


# ---- running ---------------------------------------------------------------------------------
#: under a mutant, a batch integration that needs more than this many steps raises IntegrationError (a
#: detection, reported as such); the unmutated searches need far fewer (12 points per decade, log clock)
MUTANT_MAX_STEPS = 20_000


def _step_budget():
    import numerics
    orig = numerics.integrate_batch

    def integrate_batch(*args, **kw):
        kw["max_steps"] = min(int(kw.get("max_steps", MUTANT_MAX_STEPS)), MUTANT_MAX_STEPS)
        return orig(*args, **kw)
    return _patched((numerics, "integrate_batch", integrate_batch))


def _ctx_like(ctx: Context) -> Context:
    """A fresh :class:`Context` with every setting of ``ctx`` (profile, seed, device, dps, ``engines``, and any
    setting a later Context adds: every field is copied) and an empty memo, so that nothing computed without the
    bug is reused while what the user asked to compute with (``verify --engines``) stays the user's choice."""
    return dataclasses.replace(ctx, cache={})


def classify(claim, outcome) -> str:
    """The outcome class of a check's result under a mutant (``equivalent`` is decided before running).

    ``outcome.raised`` is set when the check raised (:func:`proofs_check.claim.run_claim`) and when a certificate
    checker it ran crashed in its own code (the checkers' results say so; the claims then set
    :data:`proofs_check.claims._claims_certify.CHECKER_CRASH`): both are crashes, never kills."""
    if outcome.raised == "IntegrationError":
        return "detected"
    if outcome.raised:
        return "crashed"
    return "survived" if outcome.verdict == claim.expected else "killed"


def _cell(claim, result) -> dict:
    ctl = result.control
    outcome = classify(claim, result.outcome)
    return {"outcome": outcome, "check": result.outcome.verdict, "control": ctl.verdict,
            "killed": outcome in COUNTING,
            **({"raised": result.outcome.reason[:240]} if result.outcome.raised else {}),
            "control_passes": ctl.verdict == claim.expected,
            "evidence": result.outcome.evidence[:240], "seconds": round(result.seconds, 2)}


_PROOFS: dict = {}


def _equivalence(m: Mutant, claim):
    """``(True, why)`` when ``m`` is proven equal to a reparametrization ``claim`` is invariant under."""
    if not m.equivalent_under or m.equivalent_under not in getattr(claim, "invariant_under", ()):
        return None
    if m.name not in _PROOFS:
        _PROOFS[m.name] = m.equivalence_proof() if m.equivalence_proof else (False, "no proof given")
    ok, why = _PROOFS[m.name]
    return (f"the mutant is {m.equivalent_under} -> reparametrized ({why}); the claim holds for every "
            f"{m.equivalent_under} > 0 and states nothing about its value") if ok else None


def run_witness(claim, ctx) -> dict:
    """Run ``claim``'s witness: the control under its mutant, or the witness's own run; never raises."""
    w = claim.witness
    base = {"witness": w.description, "kind": w.kind, **({"mutant": w.mutant} if w.mutant else {}),
            **({"weak_because": w.weak_because} if w.weak_because else {})}
    try:
        if w.mutant:
            with mutant(w.mutant).patch():
                out = claim.control.run(_ctx_like(ctx))
        else:
            out = w.run(ctx)
    except Exception as exc:  # recorded, never swallowed silently
        return {**base, "control": "inconclusive", "passes": False, "evidence": f"{type(exc).__name__}: {exc}"}
    return {**base, "control": out.verdict, "passes": out.verdict == claim.expected, "evidence": out.evidence[:300]}


# ---- one unit of a mutation run: a mutant (its patch and every aimed claim), or witnesses ----------------
def _run_mutant(m: Mutant, claims, ctx: Context, log) -> dict:
    """Run ``m``: under its patch, every claim of ``claims`` it aims at (check and control) in one fresh context;
    ``{"row": per-mutant row, "cells": {claim id: cell}}``, or ``{"group_row": row}`` for a group's own
    ``evaluate``. ``log`` gets one line per claim as it finishes."""
    group = group_of(m)
    t0 = time.perf_counter()
    if group.evaluate is not None:
        row = dict(group.evaluate(m, _ctx_like(ctx)))
        log(f"mutant {m.name:<22} {row.get('outcome', '?')} by {row.get('caught_by') or '-'}")
        return {"group_row": {"group": group.name, "name": m.name, "description": m.description, **row,
                              "seconds": round(time.perf_counter() - t0, 2)}}
    aimed = [c for c in claims if m.aims_at(c)]
    cells: dict = {}
    for c in aimed:
        why = _equivalence(m, c)
        if why:
            cells[c.id] = {"outcome": "equivalent", "killed": False, "control_passes": False, "evidence": why,
                           "seconds": 0.0}
            log(f"mutant {m.name:<22} {c.id:<28} equivalent (not run): {why[:80]}")
    todo = [c for c in aimed if c.id not in cells]
    if todo:
        mctx = _ctx_like(ctx)
        with m.patch(), _step_budget():
            for c in todo:
                r = run_claim(c, mctx)
                cells[c.id] = cell = _cell(c, r)
                log(f"mutant {m.name:<22} {c.id:<28} check {r.outcome.verdict:<12} {cell['outcome'].upper()}; "
                    f"control {r.control.verdict}{' (passes)' if cell['control_passes'] else ''} "
                    f"{r.seconds:6.1f} s")
    row = {"name": m.name, "description": m.description, "engines": list(m.engines),
           "aimed_at": [c.id for c in aimed],
           **{k: [c.id for c in aimed if cells[c.id]["outcome"] == k] for k in OUTCOMES},
           "seconds": round(time.perf_counter() - t0, 2)}
    return {"row": row, "cells": cells}


def _witness_row(claim, ctx: Context, log) -> dict:
    """:func:`run_witness` with its wall time (``seconds``: the start order of a later ``jobs=N`` run)."""
    t0 = time.perf_counter()
    w = run_witness(claim, ctx)
    w["seconds"] = round(time.perf_counter() - t0, 2)
    log(f"witness {claim.id:<28} control {w['control']:<12} {'passes' if w['passes'] else 'NOT PASSED'} "
        f"({w['kind']}) under {w['witness']}")
    return w


#: estimated seconds of each unit of ``verify --mutants --jobs N`` (a mutant by name, ``witness <claim id>``),
#: when the report already in ``--out`` has none (there the previous run's seconds are used): only the order in
#: which the units start depends on them (longest first); 1 s for a unit missing here. Quick profile: the units
#: of 2 s or more in the serial mutation run of every quick claim (``verify --mutants --jobs 1``, commit 29248fd,
#: this project's shared 2-core machine at load 1-2); full profile: not measured yet (1 s each)
DEFAULT_MUTANT_SECONDS: dict = {
    "quick": {"reduced.gamma_sign": 80.5, "loss.dell_argument": 75.0, "flow.da_sign": 35.6, "flow.da_zero": 27.0,
              "flow.da_scale3": 21.6, "flow.time_scale2": 19.7, "jacobian.diag_only": 18.6,
              "coq.lemma_as_axiom": 13.3, "witness SINK2.CERT": 8.9, "witness C25": 7.7, "test.non_strict": 6.4,
              "softmax.no_max_shift": 6.0, "sinks.sink_weight2": 6.0, "sinks.no_sink": 4.8, "loss.dell_sign": 4.4,
              "certify.field_da_scale": 3.9, "witness FORMAL": 3.0, "coq.ties_region": 2.9, "symbolic.no_J": 2.4,
              "witness C28": 2.4, "witness C14": 2.2, "symbolic.dV_sign": 2.1, "witness C16": 2.1,
              "reduced.da_scale2": 2.1},
    "full": {},
}


def previous_seconds(profile: str, out_dir=None) -> dict:
    """The seconds per unit in the report already in ``out_dir`` when it is of ``profile``: each mutant's and
    checker mutant's by name, each witness's as ``witness <claim id>``, on top of
    :data:`DEFAULT_MUTANT_SECONDS`; a unit neither knows is missing (the callers take 1 s)."""
    from ..parallel import previous_report

    known = dict(DEFAULT_MUTANT_SECONDS.get(profile, {}))
    data = previous_report(out_dir, profile)
    if data is not None:
        try:
            mut = data.get("mutation") or {}
            checker = (mut.get("checker_mutants") or {}).get("mutants", [])
            for r in [*mut.get("mutants", []), *mut.get("groups", []), *checker]:
                known[str(r["name"])] = float(r["seconds"])
            for cid, w in (mut.get("witnesses") or {}).items():
                if "seconds" in w:
                    known[f"witness {cid}"] = float(w["seconds"])
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # not one of ours: the defaults
    return known


def _unit_estimates(tasks, mutants, wclaims, wunits, profile: str, out_dir) -> dict:
    """Estimated seconds per task (:func:`previous_seconds`, else 1 s per mutant or witness)."""
    known = previous_seconds(profile, out_dir)
    est = {}
    for kind, i in tasks:
        if kind == "m":
            est[(kind, i)] = known.get(mutants[i].name, 1.0)
        else:
            est[(kind, i)] = sum(known.get(f"witness {wclaims[k].id}", 1.0) for k in wunits[i])
    return est


def _start_order(tasks, est) -> list:
    """``tasks`` longest first by ``est`` (ties: their order in ``tasks``)."""
    return sorted(tasks, key=lambda t: (-est[t], tasks.index(t)))


# ---- forked processes, one per unit ---------------------------------------------------------------------
#: torch (and OpenMP) threads of a mutant process. One: unlike the claims' workers, these are forked after the
#: verify process may have run torch on several threads (claims run there when they form one unit, or a lost
#: worker's claims), and a child of such a process hangs in its first multi-threaded OpenMP region (GNU libgomp's
#: thread pool does not survive fork; seen here with torch 2: a child set to 2 threads never returned, one with
#: 1 thread did). The mutants' integrations are small; the CPU shares still keep the processes apart.
CHILD_THREADS = 1
#: how long a mutant process that has sent its answer may take to exit before it is terminated
EXIT_GRACE_SECONDS = 60.0


def _child(conn, task, run_task, parent: int, cpus) -> None:
    """In a forked process: bind to ``cpus`` (a share of :func:`.parallel.cpu_shares`), run one unit, send
    ``("ok", value, log lines)`` or ``("error", exception, traceback text)`` and exit."""
    import pickle
    import traceback

    from ..parallel import _worker_init

    if cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except (AttributeError, OSError):  # pragma: no cover - not Linux, or the CPUs went away
            pass
    # no inherited --out lock; dies with the verify process; OMP_NUM_THREADS and torch at CHILD_THREADS
    _worker_init(CHILD_THREADS, parent)
    lines: list = []
    try:
        try:
            msg = ("ok", run_task(task, lines.append), lines)
        except BaseException as exc:  # sent to the parent, which raises it
            text = traceback.format_exc()
            try:
                pickle.dumps(exc)
            except Exception:  # an exception that does not pickle travels as its text
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            msg = ("error", exc, text)
        try:
            conn.send(msg)
        except Exception as exc:  # a result that does not pickle: an error, not a lost process
            conn.send(("error", RuntimeError(f"the result of unit {task!r} could not be sent back: "
                                             f"{type(exc).__name__}: {exc}"), traceback.format_exc()))
    finally:
        conn.close()


def run_forked(tasks, run_task, *, jobs: int, on_done, log=None, what: str = "mutant") -> None:
    """Run ``run_task(task, log) -> value`` for every task on at most ``jobs`` processes at once, each task in a
    process of its own, ``fork``ed from this one just for it (so whatever a task patches, and every cache it
    fills, dies with its process: nothing reaches this process or another task), started in the order of
    ``tasks``; ``on_done(task, value)`` here as each one finishes, after its log lines (collected in its
    process) went to ``log``. Each process runs on a CPU share of its own (:func:`.parallel.cpu_shares`) with
    :data:`CHILD_THREADS` torch threads, holds no lock of this one and dies with it
    (:func:`.parallel._worker_init`).

    A process that dies without answering (killed, out of memory): a one-line note on stderr, and its task runs
    in this process once the others are done, so no result is lost or made up. An exception of a task is raised
    here (the others are stopped), as in a serial run.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    from ..parallel import _affinity, cpu_shares

    log = log or (lambda s: None)
    fork = multiprocessing.get_context("fork")
    shares = cpu_shares(_affinity(), jobs)
    queue, free, running, lost = list(tasks), list(range(jobs)), {}, []
    parent = os.getpid()
    try:
        while queue or running:
            while queue and free:
                task, slot = queue.pop(0), free.pop(0)
                r, w = fork.Pipe(duplex=False)
                proc = fork.Process(target=_child, args=(w, task, run_task, parent,
                                                         shares[slot] if shares else None))
                with warnings.catch_warnings():
                    # Python >= 3.12 warns on fork() in a process with threads; as in _parallel.run_claims
                    warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks",
                                            category=DeprecationWarning)
                    proc.start()
                w.close()  # this process keeps the reading end only: the child's exit is then an EOF
                running[r] = (task, proc, slot)
            for r in wait(list(running)):
                task, proc, slot = running.pop(r)
                try:
                    msg = r.recv()
                except Exception:  # EOF, or a message cut short: the process died
                    msg = None
                r.close()
                proc.join(EXIT_GRACE_SECONDS)  # its answer is in: a process that does not end (a thread it left
                if proc.is_alive():  # running, say) is ended, never waited for without bound
                    proc.terminate()
                    proc.join()
                free.append(slot)
                free.sort()
                if msg is None:
                    print(f"softpolar verify --mutants: a {what} process died (exit code {proc.exitcode}) before "
                          f"returning; its unit runs in this process", file=sys.stderr, flush=True)
                    lost.append(task)
                    continue
                if msg[0] == "error":
                    exc = msg[1]
                    exc.add_note(f"raised in the {what} process of unit {task!r}:\n{msg[2]}")
                    raise exc
                for line in msg[2]:
                    log(line)
                on_done(task, msg[1])
    finally:
        for _task, proc, _slot in running.values():
            if proc.is_alive():
                proc.terminate()
            proc.join()
    for task in lost:  # in the order they were started; their log lines as they come
        on_done(task, run_task(task, log))


def _preload() -> None:
    """Import here, once, what most units would import on their own in their fresh process: torch (the batch
    integrators' backend; 1.8 s per process on this project's machine), when installed. Importing starts no
    thread (the workers set their thread count, :func:`.parallel._worker_init`); nothing computed changes."""
    import importlib.util

    if "torch" not in sys.modules and importlib.util.find_spec("torch") is not None:
        import torch  # noqa: F401


def run_mutants(claims, ctx: Context, mutants=None, *, log=None, jobs: int = 1, out_dir=None) -> dict:
    """Run the aimed claims under each mutant and every claim's witness; return the kill matrix.

    ``jobs``: processes side by side (``verify --mutants --jobs N``). With ``jobs > 1`` (and ``fork``) each unit,
    a mutant (its patch and every claim it aims at) or the witnesses of one group of claims
    (:func:`.parallel.units`), runs in a process of its own (:func:`run_forked`), longest first
    (:func:`_unit_estimates`: the seconds of the report in ``out_dir``); a patch is applied only there. The
    report is that of the serial run (``jobs=1``: every mutant in order in this process, then the witnesses),
    ``seconds`` aside. ``log`` gets the progress lines: each claim's as it finishes (serial), each unit's as
    the unit finishes (in processes).
    """
    from ..parallel import can_fork, units

    log = log or (lambda s: None)
    mutants = all_mutants() if mutants is None else tuple(mutants)
    claims = list(claims)
    start = time.perf_counter()
    wclaims = [c for c in claims if c.witness is not None]
    wunits = units(wclaims)
    tasks = [("m", i) for i in range(len(mutants))] + [("w", j) for j in range(len(wunits))]
    jobs = min(int(jobs), len(tasks))
    results: dict = {}
    if jobs <= 1 or not can_fork():
        for i, m in enumerate(mutants):
            results[("m", i)] = _run_mutant(m, claims, ctx, log)
        wctx = _ctx_like(ctx)
        witnesses = {c.id: _witness_row(c, wctx, log) for c in wclaims}
    else:
        def run_task(task, log):
            kind, i = task
            if kind == "m":
                return _run_mutant(mutants[i], claims, ctx, log)
            wctx = _ctx_like(ctx)
            return [(k, _witness_row(wclaims[k], wctx, log)) for k in wunits[i]]

        _preload()
        order = _start_order(tasks, _unit_estimates(tasks, mutants, wclaims, wunits, ctx.profile, out_dir))
        run_forked(order, run_task, jobs=jobs, on_done=results.__setitem__, log=log)
        rows = dict(item for j in range(len(wunits)) for item in results[("w", j)])
        witnesses = {c.id: rows[k] for k, c in enumerate(wclaims)}
    matrix: dict = {c.id: {} for c in claims}
    per_mutant, group_rows = [], []
    for i, m in enumerate(mutants):
        got = results[("m", i)]
        if "group_row" in got:
            group_rows.append(got["group_row"])
            continue
        for cid, cell in got["cells"].items():
            matrix[cid][m.name] = cell
        per_mutant.append(got["row"])
    summary = summarize(claims, matrix, witnesses, mutants, group_rows)
    summary["total_seconds"] = round(time.perf_counter() - start, 2)
    return {"mutants": per_mutant, "matrix": matrix, "witnesses": witnesses, "groups": group_rows,
            "summary": summary, "claims": [c.id for c in claims]}


def in_scope(claim) -> bool:
    """A claim whose record names the engine parts it runs through or a witness; other claims (plugins without
    either) are listed as outside the scope, never counted as covered. A claim with a witness but no engine
    tags (C31-C33 and KSINK.* of the transformer experiments, ATLAS) is in the scope for its control's
    passability only: no engine mutant is aimed at it, so it is listed as *witness only*, not as killed."""
    return bool(claim.engines) or claim.witness is not None


def summarize(claims, matrix, witnesses, mutants, group_rows=()) -> dict:
    """Counts per outcome class; numeric claims not killed; crashes; controls not shown passable."""
    outside = [c.id for c in claims if not in_scope(c)]
    claims = [c for c in claims if in_scope(c)]
    witness_only = [c.id for c in claims if not c.engines]
    numeric = [c.id for c in claims if is_numeric(c) and c.engines]
    aimed = {cid: list(cells) for cid, cells in matrix.items()}
    by = {k: {cid: [m for m, cell in matrix.get(cid, {}).items() if cell["outcome"] == k] for cid in matrix}
          for k in OUTCOMES}
    killed = {cid: by["killed"][cid] + by["detected"][cid] for cid in matrix}
    not_killed = [cid for cid in numeric if not killed.get(cid)]
    passable = {}
    for c in claims:
        how = [m for m, cell in matrix.get(c.id, {}).items() if cell["control_passes"]]
        if witnesses.get(c.id, {}).get("passes"):
            how.append(f"witness ({witnesses[c.id]['kind']}): " + witnesses[c.id]["witness"])
        passable[c.id] = how
    unpassable = [cid for cid, how in passable.items() if not how]
    crashes = sorted(f"{cid} under {m}" for cid, ms in by["crashed"].items() for m in ms)
    counts = {k: sum(len(v) for v in by[k].values()) for k in OUTCOMES}
    weak = [cid for cid, w in witnesses.items() if w["kind"] == "weak"]
    strong_control = [cid for cid in passable if any(m for m in passable[cid] if not m.startswith("witness"))
                      or witnesses.get(cid, {}).get("kind") == "strong" and witnesses[cid]["passes"]]
    n_runs = sum(len(cells) for cells in matrix.values())
    return {"mutants": len(mutants), "claim_runs": n_runs, "outside_scope": outside, "witness_only": witness_only,
            "counts": counts, "kills": counts["killed"] + counts["detected"],
            "numeric_claims": numeric, "numeric_claims_not_killed": not_killed,
            "claims_without_aimed_mutant": [cid for cid in numeric if not aimed.get(cid)],
            "killed_by": {cid: by["killed"][cid] for cid in matrix},
            "detected_by": {cid: by["detected"][cid] for cid in matrix},
            "equivalent_under": {cid: by["equivalent"][cid] for cid in matrix if by["equivalent"][cid]},
            "crashes": crashes, "control_passable_by": passable, "controls_not_shown_passable": unpassable,
            "controls_with_only_weak_evidence": [cid for cid in weak if cid not in strong_control],
            "checker_mutants_not_caught": [r["name"] for r in group_rows if r.get("outcome") not in COUNTING],
            "ok": not not_killed and not unpassable and not crashes
            and not [r for r in group_rows if r.get("outcome") not in COUNTING]}


def expected_control(claim) -> str:
    """The verdict a control must reach in a normal run (for the report)."""
    return opposite(claim.expected)


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_LETTER = {"killed": "K", "detected": "D", "crashed": "X", "equivalent": "=", "survived": "s"}


def mutation_markdown(mutation: dict) -> str:
    """The ``--mutants`` section of report.md: counts per outcome, the claim x mutant matrix, the witnesses."""
    m = mutation["summary"]
    names = [x["name"] for x in mutation["mutants"]]
    short = {n: f"M{k + 1}" for k, n in enumerate(names)}
    c = m["counts"]
    lines = ["", "## Mutation testing (`--mutants`)", "",
             "Planted bugs (monkeypatched for the run, no source edited); each claim whose engines a mutant changes "
             "is re-run under it in a fresh context. **K** killed (the verdict saw the bug); **D** detected (an "
             "IntegrationError refused to give an answer); **X** crashed (another exception escaped the check: a "
             "bug of the check, not evidence); **=** equivalent (the mutant is proven to be a reparametrization "
             "the claim's statement is blind to; not run); **s** survived; **+c**: the negative control's "
             "statement held under this mutant; blank: not aimed. Only K and D count.", "",
             f"- {m['mutants']} mutants, {m['claim_runs']} claim runs: {c['killed']} killed, {c['detected']} "
             f"detected, {c['crashed']} crashed, {c['equivalent']} equivalent, {c['survived']} survived; "
             f"{m['total_seconds']:.1f} s",
             f"- numeric claims not killed by any aimed mutant: "
             f"**{', '.join(m['numeric_claims_not_killed']) or 'none'}**",
             f"- crashes of a check: **{', '.join(m['crashes']) or 'none'}**",
             f"- controls not shown passable: **{', '.join(m['controls_not_shown_passable']) or 'none'}**",
             f"- controls shown passable only by a weak witness (the claim's own check, or inputs kept where the "
             f"wrong statement happens to hold): {', '.join(m['controls_with_only_weak_evidence']) or 'none'}",
             f"- requirements met: **{'yes' if m['ok'] else 'NO'}**",
             f"- claims outside the mutation scope (no engines, no witness on the record): "
             f"{', '.join(m.get('outside_scope', [])) or 'none'}",
             f"- claims with a witness but no engine tags (no mutant aimed at them; their controls shown passable "
             f"by the witness only): {', '.join(m.get('witness_only', [])) or 'none'}", "",
             "| mutant | planted bug | aimed at | killed | detected | crashed | equivalent | time |",
             "|---|---|---|---|---|---|---|---|"]
    for x in mutation["mutants"]:
        lines.append(f"| {short[x['name']]} `{x['name']}` | {_md(x['description'])} | {len(x['aimed_at'])} | "
                     + " | ".join(f"{len(x[k])}: {', '.join(x[k]) or '-'}" if x[k] else "0"
                                  for k in ("killed", "detected", "crashed", "equivalent"))
                     + f" | {x['seconds']:.1f} s |")
    lines += ["", "| claim | " + " | ".join(short[n] for n in names) + " | control passable by |",
              "|---|" + "---|" * len(names) + "---|"]
    for cid in mutation["claims"]:
        cells = mutation["matrix"].get(cid, {})
        row = []
        for n in names:
            cell = cells.get(n)
            row.append("" if cell is None else _LETTER[cell["outcome"]] + ("+c" if cell["control_passes"] else ""))
        how = m["control_passable_by"].get(cid, [])
        lines.append(f"| {cid} | " + " | ".join(row) + f" | {_md('; '.join(how) or '**not shown**')} |")
    if mutation.get("groups"):
        lines += ["", "Mutants of the checkers (each must be caught by its tamper or soundness suite):", "",
                  "| group | mutant | weakening | outcome | caught by | time |", "|---|---|---|---|---|---|"]
        for r in mutation["groups"]:
            lines.append(f"| {r['group']} | `{r['name']}` | {_md(r['description'])} | {r.get('outcome', '?')} | "
                         f"{_md(r.get('caught_by') or '-')} | {r['seconds']:.1f} s |")
    if mutation["witnesses"]:
        lines += ["", "Control witnesses (an input or planted bug under which the control's statement holds):", "",
                  "| claim | witness | kind | control verdict | passes |", "|---|---|---|---|---|"]
        for cid, w in mutation["witnesses"].items():
            kind = w["kind"] + (f" ({w['weak_because']})" if w.get("weak_because") else "")
            lines.append(f"| {cid} | {_md(w['witness'])} | {_md(kind)} | {w['control']} | "
                         f"{'yes' if w['passes'] else '**no**'} |")
    return "\n".join(lines) + "\n"
