r"""The planted bugs: the engine group of mutants (:data:`MUTANTS`), the witnesses' planted bugs
(:data:`WITNESS_MUTANTS`), the engine parts they aim at (:data:`ENGINES`) and the patching helpers. A mutant
monkeypatches the engine for the duration of a ``with`` block; no source file is edited (:mod:`.mutants` runs
them and holds the groups).
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Callable
from numerics import FlowRHS
import numerics.integrate._clock as clock
import numerics.integrate._gd as gd
import numerics.integrate._mpmath as imp
import numerics.integrate._numpy as inp
import numerics.integrate.taylor as taylor
from numerics.validated import atlas_check as ac, enclosure
from theorems import Link, SymbolicModel, coq, prove_zero, sinks as _sinks
import theorems._id_base as base
from ..claims import _claims_regression as R, _logistic_laws as L


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
                   "numerics.integrate.taylor_sympy.flow_system), which the settling runs of the derived laws "
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
    "sinks.softmax1": "the SymPy systems of the softmax1 sink claims (theorems.sinks: SOFTMAX1 and its log clock)",
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
def patched(*triples):
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
    return FlowRHS


def _flow_terms(cV: float, ca: float):
    """The generated flow with $\\dot V$ scaled by ``cV`` and $\\dot a$ by ``ca``."""
    cls = _rhs_class()
    orig = cls.__call__

    def call(self, V, a, target, X=None):
        dV, da = orig(self, V, a, target, X)
        return _scale(dV, cV), _scale(da, ca)
    return patched((cls, "__call__", call))


def _jacobian_diag_only():
    """$J_\\varphi^\\top x=w\\odot x$: the centering $-\\langle\\varphi,x\\rangle$ ($-ss^\\top$ term) dropped."""
    cls = _rhs_class()

    def apply_jT(self, phi, w, x):
        if isinstance(x, list):
            return [wi * xi for wi, xi in zip(w, x)]
        return w * x
    return patched((cls, "apply_jT", apply_jT))


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
    return patched((cls, "link_parts", link_parts))


def _wrong_dell(kind: str):
    r"""$\ell'$ replaced: ``sign``: $-\ell'$ (gradient ascent); ``argument``: $\ell'(-z)$, i.e. $-\sigma(z)$."""
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

    orig_kernels = cls.__dict__["_loss_kernels"]
    kernels = {}

    def loss_kernels_prop(self):  # the loss kernels hold l' from their construction: rebuild them on the mutated one
        if id(self) not in kernels:
            kernels[id(self)] = (self, orig_kernels.func(self))
        return kernels[id(self)][1]

    np_orig, mp_orig = inp.dell_numpy, imp.dell_mpmath
    return patched((cls, "_dell", property(dell_prop)), (cls, "_loss_kernels", property(loss_kernels_prop)),
                    (inp, "dell_numpy", lambda loss: wrap(np_orig(loss))),
                    (clock, "dell_numpy", lambda loss: wrap(np_orig(loss))),
                    (imp, "dell_mpmath", lambda loss: wrap(mp_orig(loss))),
                    (clock, "dell_mpmath", lambda loss: wrap(mp_orig(loss))))


def _taylor_system(edit, what):
    r"""The Taylor engine's system edited by ``edit(S, rhs)`` (``rhs``: a list of SymPy expressions, changed in
    place): the system that :func:`numerics.integrate.taylor_sympy.flow_system` derives, as the Taylor backend reads
    it before heyoka compiles it (the settling runs of :mod:`numerics.integrate.settle`, the reduced and the event
    integrators). The compiled integrators are cached per shape: the block gets an empty cache of its own, so no
    integrator compiled without the bug is reused and none compiled with it outlives the block."""
    real = taylor.flow_system

    def flow_system(*args, **kw):
        S = real(*args, **kw)
        rhs = list(S.rhs)
        edit(S, rhs)
        return dataclasses.replace(S, rhs=rhs)
    flow_system.__doc__ = f"flow_system with a planted bug: {what}"
    return patched((taylor, "flow_system", flow_system), (taylor, "_CACHE", {}))


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
    return patched((clock, "dop853_solve", wrap_solver(clock.dop853_solve)),
                    (clock, "gbs_solve", wrap_solver(clock.gbs_solve)))


def _law(power_tL=1.0, const_tL=1.0, power_polar=2.0, const_polar=2.0):
    """The asymptotic laws of claims 17 / 18 with a wrong exponent or constant."""
    tL, polar = L._tL, L._polar
    return patched((L, "_tL", lambda power=1.0, const=1.0: tL(power * power_tL, const * const_tL)),
                    (L, "_polar", lambda power=2.0, const_factor=2.0: polar(power * power_polar / 2.0,
                                                                           const_factor * const_polar / 2.0)))


def _non_strict():
    """Monotonicity tests that accept ties (``<=`` instead of a strict, tolerance-stated ``<``)."""
    return patched((R, "STRICT_MARGIN", -R.STRICT_MARGIN))


def _symbolic_flow(kind: str):
    r"""The SymPy-derived flow with a planted bug: ``no_J``: $\dot a=-V^\top g$ (the Jacobian dropped,
    which turns the *unsquared* output dynamics into the true one); ``dV_sign``: $\dot V$ flipped; ``da_sign``:
    $\dot a$ flipped; ``da_zero``: $\dot a=0$ (logits detached); ``ascent``: both flipped (gradient ascent)."""
    import sympy as sp

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
            with patched((SymbolicModel, "flow", flow)):
                yield
        finally:
            base.model.cache_clear()
    return cm()


def _certifier_field(ca: float):
    r"""The certifier's enclosure field (:func:`numerics.validated.enclosure.tau_field`) with $da/d\tau$ scaled
    by ``ca``: a bug in the certifier's own Taylor code, which the independent checker must catch."""
    orig = enclosure.tau_field

    def tau_field(u, a, b, ref, one):
        du, da = orig(u, a, b, ref, one)
        return du, [d * ca for d in da]
    return patched((enclosure, "tau_field", tau_field))


def _tied_loss(kind: str):
    """The tied model (claim 30) trained on softplus(+margin) (``sign``: the loss of the wrong sign) or on
    2 softplus(-margin) (``scale``: the loss doubled, as a doubled learning rate)."""
    import torch
    sp = torch.nn.functional.softplus
    if kind == "sign":
        return patched((torch.nn.functional, "softplus", lambda x, *a, **k: sp(-x, *a, **k)))
    return patched((torch.nn.functional, "softplus", lambda x, *a, **k: 2.0 * sp(x, *a, **k)))


def _coq_patched(patch: dict):
    """Every build of the Coq development applies ``patch`` (text replacements in the copied sources)."""
    orig = coq.build

    def build(folder=None, *, patch=None, upto=None):
        return orig(folder, patch={**_patch, **(patch or {})}, upto=upto)
    _patch = patch
    return patched((coq, "build", build))


def _coq_lemma_as_axiom():
    return _coq_patched({"Calculus.v": ("Lemma exp_le : forall x y, x <= y -> exp x <= exp y.\nProof.",
                                        "Axiom exp_le : forall x y, x <= y -> exp x <= exp y.\n"
                                        "Lemma exp_le_proved : forall x y, x <= y -> exp x <= exp y.\nProof.")})


def _coq_ties_region():
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
    """:func:`numerics.validated.atlas_check.in_region` testing every token instead of the claimed winner."""
    real = ac.in_region
    return patched((ac, "in_region", lambda m, A, E, n, i, *claims: any(real(m, A, E, n, k) for k in range(n))))


def _gd_record_alias():
    """:func:`numerics.gradient_descent` (numpy) whose record holds the last iterate at every recorded step, as a
    record that keeps a reference to a buffer updated in place would."""
    real = gd.assemble_numpy

    def assemble(problem, times, states, *args, **kw):
        return real(problem, times, [states[-1]] * len(states), *args, **kw)
    return patched((gd, "assemble_numpy", assemble))


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
    return patched((cls, "grad_loss", grad_loss), (cls, "loss_value", loss_value))


def _softmax1_link(c):
    """Replace theorems.sinks.SOFTMAX1 (read by its systems at call time) with a wrong normalizer constant."""
    import sympy as sp

    x = sp.Symbol("x", real=True)
    return patched((_sinks, "SOFTMAX1", Link(f"softmax1-mutant-c{c}", h=sp.exp(x), c=c)))


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
