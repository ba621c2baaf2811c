r"""Size-generic proofs of every identity, for all $n\ge2$ and $d\ge1$, with their negative controls.

Each identity of the registry gets a :class:`GenericProof`: a proof function, the
wrong variants that the same generic path must *not* prove, the identities whose
generic proofs it uses, and the assumptions that remain. The chain is

1. ``jacobian.softmax`` / ``jacobian.structured``: SymPy's ``diff`` of
   $\varphi_k=h(a_k)/\sum_lh(a_l)$ by $a_m$ (symbolic $n$) equals the structured $J_{km}$;
2. ``loss.gradient``: ``diff`` of each loss definition by $\beta_k$ (symbolic $d$, design
   rows $m$) equals its closed gradient;
3. ``flow.structured``: ``diff`` of $F(V,a)=\mathcal L(\sum_jV_{kj}\varphi_j)$ by $V_{pq}$ and
   $a_m$ equals $-g_p\varphi_q$ and $-\sum_jJ_{jm}\sum_kV_{kj}g_k$, for every loss and the
   three link shapes (softmax, normalized with any $h$, elementwise with any $h$); the
   index forms are bridged to :class:`theorems.SymbolicModel` (:func:`~theorems.id_generic_model.bridge`);
4. every other identity from the structured flow of step 3 (``uses``), by the chain rule
   (``time_derivative``) and the index normal form of :mod:`theorems.id_generic_nf`.

Decision: a normal form with no terms is ``proved`` (method ``index-nf``). A negative
control is evaluated exactly on a family of points indexed by $(n,d)$
(:data:`FAMILY`): a value non-zero for every $n\ge2$, $d\ge1$ is ``disproved`` for every
size at once; a value non-zero at some sizes only is ``disproved`` at those; otherwise
``undecided``. A positive residue is never read as a disproof unless the family gives a
genuinely non-zero value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from . import id_generic_model as G
from .id_generic_model import IDX, S, SOFTMAX, D, M, N, a, bb, delta, g, h, pdiff, s, w, y
from .id_generic_nf import Ambiguous, BoundIndex, Family, NotNormalizable, family_value, nonzero_for_all_sizes, \
    normal_form, rebuild
from ._functions import sigmoid, softplus
from ._models import LINKS, get_loss
from .proof import ProofResult, decide

i_, j_, k_, l_, o_, p_, q_, r_, t_, u_ = IDX.values()

#: Point families of the generic negative controls (tried in order): explicit positions 1, 2 (tokens),
#: 1 or 1, 2 (outputs), every further position in one open class; $h=\exp$ for statements about any
#: generator. The second family needs $d\ge2$ (a rank-one or one-dimensional output hides some controls).
INDEX_TYPES = {"a": (N,), "V": (D, N), "w": (D,), "y": (D,), "c": (N,), "p": (D,), "X": (M, D), "g": (D,),
               "b": (D,)}
FAMILIES = (
    (Family(values={"a": {(1,): sp.log(2)}, "V": {(1, 1): 1, (1, 2): -1}, "w": {(1,): 2}, "y": {(1,): 2},
                    "c": {(1,): 1, (2,): -1}, "p": {(1,): 2}, "X": {(1, 1): 2}, "g": {(1,): 1}, "b": {(1,): 1}},
            default={"a": 0, "V": 0, "w": 0, "y": 0, "c": 0, "p": 1, "X": 0, "g": 0, "b": 0},
            explicit={N: 2, D: 1, M: 1}, functions={h: sp.exp}, index_types=INDEX_TYPES),
     "a = (log 2, 0, 0, ...), V = e_1 (1, -1, 0, ...), w = 2 e_1, y = 2 e_1, c = (1, -1, 0, ...), "
     "p = (2, 1, 1, ...), X = 2 e_1 e_1^T, g = e_1, b = e_1, h = exp"),
    (Family(values={"a": {(1,): sp.log(2)}, "V": {(1, 1): 1, (1, 2): -1, (2, 1): 1, (2, 2): 1},
                    "w": {(1,): 1, (2,): 1}, "y": {(1,): 2, (2,): 1}, "c": {(1,): 1, (2,): -1},
                    "p": {(1,): 2}, "X": {(1, 1): 1}, "g": {(1,): 1, (2,): -1}, "b": {(1,): 1}},
            default={"a": 0, "V": 0, "w": 0, "y": 0, "c": 0, "p": 1, "X": 0, "g": 0, "b": 0},
            explicit={N: 2, D: 2, M: 2}, functions={h: sp.exp}, index_types=INDEX_TYPES),
     "a = (log 2, 0, 0, ...), V rows (1, -1, 0, ...), (1, 1, 0, ...), 0, ..., w = (1, 1, 0, ...), "
     "y = (2, 1, 0, ...), c = (1, -1, 0, ...), p = (2, 1, 1, ...), X = e_1 e_1^T, g = (1, -1, 0, ...), "
     "h = exp"),
)

#: Free-index positions used by the family (token indices 1 or 2, output indices 1).
_FREE = {i_: 1, j_: 1, k_: 1, l_: 2, o_: 1, p_: 1, q_: 1, r_: 1, t_: 2, u_: 2}

INDEX_PREMISE = "free indices in range (tokens 1..n, outputs 1..d; each from the slot it fills, or declared)"
ANY_H = "h differentiable at every a_i with Z = sum_l h(a_l) != 0 (non-smooth links: on the region a_i > 0)"


@dataclass(frozen=True)
class GenericProof:
    """The size-generic proof of one identity (see the module docstring)."""

    prove: Callable[[], ProofResult]
    negatives: tuple = ()          # ((description, fn), ...); each fn() must not be "proved"
    scope: str = "all n, d"
    uses: tuple = ()               # identity ids whose generic proofs this one relies on
    assumptions: tuple = ()
    method: str = "index-nf"


# ---- deciding ------------------------------------------------------------------------------------
def free_ranges(expr, declared: dict | None = None) -> dict:
    """The range of every free index of ``expr``: ``declared`` first, else the slot it fills (:data:`INDEX_TYPES`).

    A free index that fills slots of two ranges ($a_q$ and $g_q$) must be declared; one that fills no
    slot (it occurs in deltas only) gets no range, so the normal form contracts nothing into it.
    """
    declared = dict(declared or {})
    seen: dict = {}

    def walk(e, bound):
        if isinstance(e, sp.Sum):
            inner = bound | {lim[0] for lim in e.limits}
            walk(e.function, inner)
            for lim in e.limits:
                for x in lim[1:]:
                    walk(x, bound)
            return
        if isinstance(e, sp.Indexed):
            types = INDEX_TYPES.get(e.base.label.name, ())
            for ix, hi in zip(e.indices, types):
                if ix.is_Symbol and ix not in bound and not isinstance(ix, BoundIndex):
                    seen.setdefault(ix, set()).add(hi)
            for ix in e.indices:
                walk(ix, bound)
            return
        for x in e.args:
            walk(x, bound)

    walk(sp.sympify(expr), frozenset())
    out = {}
    for x, his in seen.items():
        if x in declared:
            continue
        if len(his) > 1:
            raise NotNormalizable(f"the free index {x} fills slots of ranges {sorted(map(str, his))}: "
                                  "declare its range")
        out[x] = next(iter(his))
    out.update(declared)
    return out


def _ranges_text(ranges: dict) -> str:
    by = {}
    for x, hi in sorted(ranges.items(), key=lambda kv: str(kv[0])):
        by.setdefault(hi, []).append(str(x))
    return "; ".join(f"{', '.join(v)} in 1..{hi}" for hi, v in by.items()) or "no free indices"


def _residues(parts, ranges=None):
    out = []
    for label, expr in parts:
        try:
            R = free_ranges(expr, ranges)
            nf = normal_form(expr, R)
        except (NotNormalizable, ZeroDivisionError) as exc:
            return None, f"{label}: {exc}"
        if nf:
            out.append((label, expr, nf, R))
    return out, ""


def _family(expr, free=None, ranges=None):
    """(status, text) of ``expr`` on :data:`FAMILIES`: ``"all"`` sizes, ``"some"`` sizes, or ``None``."""
    free = dict(_FREE, **(free or {}))
    fixed = {x: v for x, v in free.items() if x in sp.sympify(expr).free_symbols}
    found, text = None, "its value on the point families is 0"
    for fam, desc in FAMILIES:
        mins = {N: max(2, fam.explicit[N]), D: max(1, fam.explicit[D]), M: max(1, fam.explicit[M])}
        sizes = f"n >= {mins[N]}, d >= {mins[D]}" + (f", m >= {mins[M]}" if sp.sympify(expr).has(M) else "")
        try:
            val = family_value(expr, fam, fixed, ranges)
        except (Ambiguous, KeyError, NotNormalizable, ZeroDivisionError, ValueError) as exc:
            text = f"a point family cannot evaluate it ({exc})"
            continue
        if val == 0:
            continue
        if nonzero_for_all_sizes(val, mins):
            return "all", f"on the point family ({desc}) its value is {sp.sstr(val)[:160]}, non-zero for every {sizes}"
        for n in range(mins[N], mins[N] + 3):
            for d in (mins[D], mins[D] + 1):
                v = sp.N(val.xreplace({N: n, D: d, M: d}), 30)
                if found is None and v.is_number and abs(v) > sp.Float(10) ** -20:
                    found = f"on the point family ({desc}) its value at n={n}, d={d} is {sp.N(v, 8)}"
    return ("some", found) if found else (None, text)


def prove_parts(parts, what: str, ranges: dict | None = None) -> ProofResult:
    """``proved`` if every ``(label, expr)`` has an empty normal form; else a disproof or ``undecided``.

    ``ranges`` declares free indices' ranges; the others get theirs from :func:`free_ranges`.
    """
    res, err = _residues(parts, ranges)
    if res is None:
        return ProofResult("undecided", "index-nf", f"{what}: {err}")
    if not res:
        idx = {}
        for _, expr in parts:
            idx.update(free_ranges(expr, ranges))
        return ProofResult("proved", "index-nf",
                           f"{what}: {len(parts)} index expression(s) with sums of symbolic length reduce to 0 "
                           f"(free indices: {_ranges_text(idx)})")
    label, expr, nf, R = res[0]
    kind, text = _family(expr, None, R)
    if kind is not None:
        return ProofResult("disproved", "index-nf+family", f"{what} [{label}]: {text}")
    return ProofResult("undecided", "index-nf",
                       f"{what} [{label}]: the normal form leaves {sp.sstr(rebuild(nf))[:200]}; {text}")


def refute_parts(parts, what: str, free=None, ranges: dict | None = None) -> ProofResult:
    """A generic negative control: ``disproved`` (every size, or some), ``undecided``, or ``proved`` (a failure)."""
    res, err = _residues(parts, ranges)
    if res is None:
        return ProofResult("undecided", "index-nf", f"{what}: {err}")
    if not res:
        return ProofResult("proved", "index-nf", f"{what}: the wrong variant reduces to 0 (the control fails)")
    notes = []
    for label, expr, _, R in res:
        kind, text = _family(expr, free, R)
        if kind == "all":
            return ProofResult("disproved", "index-nf+family", f"{what} [{label}], for every size: {text}")
        notes.append((kind, label, text))
    some = [(lb, tx) for kd, lb, tx in notes if kd == "some"]
    if some:
        return ProofResult("disproved", "index-nf+family", f"{what} [{some[0][0]}]: {some[0][1]}")
    return ProofResult("undecided", "index-nf", f"{what}: the normal form is not 0 and {notes[0][2]}")


# ---- shared pieces -------------------------------------------------------------------------------
def _abstract_flow(link=SOFTMAX, **kw):
    """The structured flow with an arbitrary gradient vector $g$ (flow.structured for every loss)."""
    return G.structured_flow(link, lambda k: g[k], **kw)


def _loss_flow(loss: G.GLoss, link=SOFTMAX, **kw):
    return G.structured_flow(link, lambda k: G.grad_at_beta(loss, link, k), **kw)


def _Vtg(j):
    """$(V^\\top g)_j$."""
    kk = sp.Dummy("k", integer=True, positive=True)
    return S(G.V[kk, j] * g[kk], kk, D)


def _JpowVtr(i, power):
    r"""$(J^{power}V^\top r)_i$ with $r=-g$."""
    jj = sp.Dummy("j", integer=True, positive=True)
    return S(G.J_softmax(i, jj, power) * (-_Vtg(jj)), jj, N)


# ---- functions.derivatives (a scalar identity, shared with the small-size proofs) -------------
_x = sp.Symbol("x", real=True)


def fn_check(case=None) -> ProofResult:
    """softplus' and sigmoid' agree with the derivatives of their exp forms (``case`` is unused)."""
    return decide([sp.diff(f(_x), _x).rewrite(sp.exp) - sp.diff(f(_x).rewrite(sp.exp), _x)
                   for f in (softplus, sigmoid)])


def fn_neg(case=None, f=sigmoid) -> ProofResult:
    """The control: the wrong rule sigmoid' = sigmoid (the factor 1 - sigmoid dropped); ``f``: the function the
    rule f' = f is stated for (sigmoid; the witness passes exp, for which it holds)."""
    return decide(f(_x).rewrite(sp.exp) - sp.diff(f(_x).rewrite(sp.exp), _x), negative=True)


# ---- ingredients ----------------------------------------------------------------------------------
def _fn(negative: bool) -> ProofResult:
    res = fn_neg() if negative else fn_check()
    return ProofResult(res.status, "size-free", "a scalar identity: the exact proof does not involve n or d; "
                       + res.detail)


def _shift(link_gen, negative=False):
    cc = sp.Symbol("c", real=True)
    shifted = link_gen(G.a[i_] + cc) / S(link_gen(G.a[l_] + cc), l_, N)
    plain = link_gen(G.a[i_]) / S(link_gen(G.a[l_]), l_, N)
    parts = [("phi_i(a + c 1) - phi_i(a)", shifted - plain)]
    if negative:
        return refute_parts([(lb, e.xreplace({cc: 1})) for lb, e in parts], "sum-norm shift invariance")
    return prove_parts(parts, "softmax shift invariance")


def _jac_softmax(with_outer=True, negative=False):
    rhs = delta(k_, u_) * s(k_) - (s(k_) * s(u_) if with_outer else 0)
    parts = [("ds_k/da_m - (delta_km s_k - s_k s_m)", pdiff(s(k_), a[u_]) - rhs)]
    # u is the token index of a_u we differentiate by: after diff it may survive in deltas only
    return (refute_parts if negative else prove_parts)(parts, "softmax Jacobian", ranges={k_: N, u_: N})


def _jac_structured(with_term=True, negative=False):
    parts = [(f"{lk.name}: dphi_k/da_m - J_km", pdiff(lk.phi(k_), a[u_]) - lk.J(k_, u_, with_norm_term=with_term))
             for lk in (G.LINK_NORMALIZED, G.LINK_ELEMENTWISE)]
    return (refute_parts if negative else prove_parts)(parts, "structured Jacobian (any generator h)")


def _jac_props(sign=1, negative=False):
    Jd = lambda x, z: pdiff(s(x), a[z])  # the derived Jacobian
    parts = [("J_km - J_mk", Jd(k_, u_) - Jd(u_, k_)),
             ("sum_m J_km", S(Jd(k_, t_), t_, N)),
             ("tr J - (1 - ||s||^2)", S(pdiff(s(t_), a[t_]), t_, N) - sign * (1 - S(s(l_) ** 2, l_, N)))]
    if negative:
        return refute_parts(parts[2:], "trace of J with the sign flipped")
    return prove_parts(parts, "J symmetric, J 1 = 0, tr J = 1 - ||s||^2 (derived J)")


def _loss_grad(sign=1, negative=False):
    parts = []
    for loss in (G.GLoss("logistic", "identity"), G.GLoss("square", "identity"), G.GLoss("square", "symbolic"),
                 G.GLoss("kl", "identity")):
        b = lambda k: bb[k]
        parts.append((loss.label, pdiff(loss.value(b), bb[q_]) - sign * loss.grad(b, q_)))
    return (refute_parts if negative else prove_parts)(parts, "closed loss gradients (symbolic d, design rows m)")


# ---- the flow ------------------------------------------------------------------------------------
def _flow(negative=None) -> ProofResult:
    parts = []
    for link in G.GENERIC_LINKS:
        for loss in G.LOSSES:
            dV, da = G.derived_flow(loss, link)
            kw = {"sign": -1} if negative == "sign" else {"with_norm_term": False} if negative == "term" else {}
            Vdot, adot = _loss_flow(loss, link, **kw)
            tag = f"{loss.label} / {link.name}"
            if negative != "term":
                parts.append((f"{tag}: dV", dV - Vdot(p_, q_)))
            if negative != "sign":
                parts.append((f"{tag}: da", da - adot(u_)))
    if negative:
        return refute_parts(parts, "structured flow, " + ("dV with flipped sign" if negative == "sign" else
                                                          "J with its normalization term toggled"))
    res = prove_parts(parts, "derived flow = structured flow (3 link shapes x 4 losses)")
    if res.status != "proved":
        return res
    grid = bridge_grid(BRIDGE_SIZES) + bridge_grid(BRIDGE_SIZES_2, BRIDGE_LINKS_2)
    for (loss_name, design), link_name, (n, d) in grid:
        ok, text = G.bridge(loss_name, design, link_name, sizes=((n, d),))
        if not ok:
            return ProofResult("undecided", "index-nf", "the index forms do not match the package's "
                               f"definitions: {text}")
    links = ", ".join(_builtin_links())
    return ProofResult("proved", "index-nf", res.detail + "; bridge: the index forms equal SymbolicModel's "
                       f"objective and structured flow at (n, d) = {', '.join(map(str, BRIDGE_SIZES))} for every "
                       f"built-in link ({links}), and at {', '.join(map(str, BRIDGE_SIZES_2))} for "
                       f"{' and '.join(BRIDGE_LINKS_2)} (both code paths of Link), 4 losses each")


#: where ``flow.structured`` bridges the index forms to the matrix code: every built-in link at BRIDGE_SIZES, the two
#: code paths of Link (normalized, elementwise) also at BRIDGE_SIZES_2; the grid n = 2..6, d = 1..3
#: (:data:`BRIDGE_GRID`) for every built-in link runs in the slow tests (minutes)
BRIDGE_SIZES = ((2, 1),)
BRIDGE_SIZES_2 = ((3, 2),)
BRIDGE_LINKS_2 = ("softmax", "sigmoid")
BRIDGE_GRID = tuple((n, d) for n in range(2, 7) for d in range(1, 4))
BRIDGE_LOSSES = (("logistic", "identity"), ("square", "identity"), ("square", "symbolic"), ("kl", "identity"))


def _builtin_links() -> tuple:
    return tuple(LINKS)


def bridge_grid(sizes, links=None):
    """Every (loss, design), link (default: every built-in one) and size at which the bridge is checked."""
    return [(ld, link, nd) for ld in BRIDGE_LOSSES for link in (links or _builtin_links()) for nd in sizes]


# ---- consequences of the flow ----------------------------------------------------------------------
def _replicator(negative=False):
    _, adot = _abstract_flow()
    f = lambda x: -_Vtg(x)
    mean = S(s(j_) * f(j_), j_, N)
    rhs = s(i_) * (f(i_) - (0 if negative else mean))
    return (refute_parts if negative else prove_parts)([("da_i - s_i (f_i - sum_j s_j f_j)", adot(i_) - rhs)],
                                                       "replicator form, f = -V^T g")


def _attention(power=2, negative=False):
    sdot = G.time_derivative(s(i_), _abstract_flow())
    parts = [("ds_i/dt - (J^2 V^T r)_i", sdot - _JpowVtr(i_, power))]
    return (refute_parts if negative else prove_parts)(parts, "attention dynamics, r = -g")


def _sum_a(negative=False):
    flow = _abstract_flow(with_norm_term=not negative)
    parts = [("d/dt sum_i a_i", G.time_derivative(S(a[l_], l_, N), flow))]
    return (refute_parts if negative else prove_parts)(parts, "sum of the logits" + (" with J = diag(s)" if negative
                                                                                      else ""))


def _balance(sign=1, negative=False):
    q = S(G.V[k_, i_] ** 2, k_, D) / 2 - a[i_]
    power = S(G.beta(SOFTMAX, o_) * (-g[o_]), o_, D)
    parts = [("d/dt (|v_i|^2/2 - a_i) - s_i <beta, -g>", G.time_derivative(q, _abstract_flow()) - sign * s(i_) * power)]
    return (refute_parts if negative else prove_parts)(parts, "per-token balance")


def _projector(vec, k, l_idx, normalized=True):
    b = S(vec[o_] ** 2, o_, D)
    return delta(k, l_idx) - vec[k] * vec[l_idx] / (b if normalized else 1)


def _orth(normalized=True, negative=False):
    parts = []
    for link in G.GENERIC_LINKS:
        Vdot, _ = _loss_flow(G.GLoss("logistic", "identity"), link)
        parts.append((link.name, S(_projector(w, k_, l_, normalized) * Vdot(l_, q_), l_, D)))
    return (refute_parts if negative else prove_parts)(parts, "logistic: (I - w w^T / b) dV = 0")


def _rank_one(variant=None):
    design = "symbolic" if variant == "design" else "identity"
    Vdot, _ = _loss_flow(G.GLoss("square", design))
    expr = S(_projector(y, k_, l_) * Vdot(l_, q_), l_, D)
    if variant != "generic_V":
        expr = G.on_rank_one(expr, G.rank_one)
    if variant == "design":
        expr = expr.xreplace({M: D})  # a square d x d design, as in the concrete control
    parts = [("(I - y y^T / b) dV at " + ("a generic V" if variant == "generic_V" else "V = y c^T"), expr)]
    what = {"generic_V": "rank-one invariance at a generic V", "design": "rank-one invariance with a design X"}
    return refute_parts(parts, what[variant]) if variant else prove_parts(parts, "square loss: rank-one invariance")


def _output(power=2, negative=False):
    bdot = G.time_derivative(G.beta(SOFTMAX, k_), _abstract_flow())
    ii, jj = (sp.Dummy(x, integer=True, positive=True) for x in "ij")
    M_g = S(s(l_) ** 2, l_, N) * g[k_] + S(S(G.V[k_, ii] * G.J_softmax(ii, jj, power) * _Vtg(jj), ii, N), jj, N)
    parts = [("d beta_k/dt + ((||s||^2 I + V J^2 V^T) g)_k", bdot + M_g)]
    return (refute_parts if negative else prove_parts)(parts, "output dynamics")


def _entropy(power=2, negative=False):
    H = -S(s(l_) * sp.expand_log(sp.log(s(l_)), force=True), l_, N)
    Hdot = G.time_derivative(H, _abstract_flow())
    rhs = -S(a[i_] * _JpowVtr(i_, power), i_, N)
    parts = [("dH/dt + a^T J^2 V^T r", Hdot - rhs)]
    return (refute_parts if negative else prove_parts)(parts, "entropy rate")


def _logistic_reduced():
    loss = G.GLoss("logistic", "identity")
    flow = _loss_flow(loss)
    u = lambda i: S(G.V[o_, i] * w[o_], o_, D)
    z = S(w[o_] * G.beta(SOFTMAX, o_), o_, D)
    gamma = -get_loss("logistic").dell(z)
    b = S(w[o_] ** 2, o_, D)
    udot = G.time_derivative(u(i_), flow)
    Ju = S(G.J_softmax(i_, j_) * u(j_), j_, N)
    return udot, flow[1](i_), gamma, b, Ju


def _reduced(sign=1, negative=False):
    udot, adot, gamma, b, Ju = _logistic_reduced()
    parts = [("du_i/dt - gamma b s_i", udot - sign * gamma * b * s(i_)), ("da_i/dt - gamma (J u)_i",
                                                                          adot - sign * gamma * Ju)]
    return (refute_parts if negative else prove_parts)(parts, "reduced logistic system")


def _clock_logistic(wrong=False):
    udot, adot, gamma, b, Ju = _logistic_reduced()
    rate = 1 - gamma if wrong else gamma
    parts = [("(du_i/dt)/rate - b s_i", udot / rate - b * s(i_)), ("(da_i/dt)/rate - (J u)_i", adot / rate - Ju)]
    return (refute_parts if wrong else prove_parts)(parts, "logistic clock")


def _clock_square(wrong=False):
    flow = _loss_flow(G.GLoss("square", "identity"))
    b = S(y[o_] ** 2, o_, D)
    u = lambda i: S(G.rank_one(o_, i) * y[o_], o_, D)
    z = S(u(l_) * s(l_), l_, N)
    rho = (b - z) if wrong else (b - z) / b
    udot = G.time_derivative(S(G.V[o_, i_] * y[o_], o_, D), flow, G.rank_one)
    adot = G.on_rank_one(flow[1](i_), G.rank_one)
    Ju = S(G.J_softmax(i_, j_) * u(j_), j_, N)
    parts = [("du_i/dt - rho b s_i", udot - rho * b * s(i_)), ("da_i/dt - rho (J u)_i", adot - rho * Ju)]
    return (refute_parts if wrong else prove_parts)(parts, "square-loss clock on V = y c^T")


def _two_token(sign=1):
    r"""$n=2$: $\frac{d}{dt}(\tfrac12(u_1-u_2)^2-b\cosh(a_1-a_2))=0$ from the reduced system, for every $d$.

    ``reduced.logistic`` and ``clock.square_rank_one`` (proven for all $n,d$) give
    $\dot u=\kappa\,b\,s$, $\dot a=\kappa\,J(s)u$ with $\kappa=\gamma$ (logistic) or $\rho$ (square,
    rank-one set); $\mathcal E$ depends on $(V,a)$ only through $u=V^\top w$ and $a$, so
    $\dot{\mathcal E}=\nabla_u\mathcal E\cdot\dot u+\nabla_a\mathcal E\cdot\dot a$, a statement in
    $u_1,u_2,a_1,a_2,b,\kappa$ that no longer involves $d$, decided exactly.
    """
    u1, u2, a1, a2, kap = sp.symbols("u_1 u_2 a_1 a_2 kappa", real=True)
    b = sp.Symbol("b", positive=True)
    Z = sp.exp(a1) + sp.exp(a2)
    sv = sp.Matrix([sp.exp(a1) / Z, sp.exp(a2) / Z])
    J = sp.diag(*sv) - sv * sv.T
    u = sp.Matrix([u1, u2])
    udot, adot = kap * b * sv, kap * J * u
    E = (u1 - u2) ** 2 / 2 - sign * b * sp.cosh(a1 - a2).rewrite(sp.exp)
    rate = sum(sp.diff(E, x) * v for x, v in zip((u1, u2, a1, a2), (*udot, *adot)))
    res = decide(rate, negative=sign < 0)
    return ProofResult(res.status, "reduced+exact",
                       "n = 2, every d: through the reduced system u' = kappa b s, a' = kappa J u "
                       f"(kappa = gamma or rho); the d-free rate of E is decided exactly ({res.method})",
                       res.counterexample)


# ---- the table ----------------------------------------------------------------------------------
_FLOW = ("flow.structured",)
_BRIDGE = ("the index forms are the entry formulas of theorems' matrix definitions (checked equal for every "
           "built-in link and loss at (n, d) = (2, 1), softmax and sigmoid also at (3, 2); every built-in link at "
           "n = 2..6, d = 1..3 in the slow tests)")

PROOFS: dict[str, GenericProof] = {
    "functions.derivatives": GenericProof(lambda: _fn(False), (("sigmoid' = sigmoid", lambda: _fn(True)),),
                                          method="size-free"),
    "shift_invariance.softmax": GenericProof(
        lambda: _shift(sp.exp), (("sum-norm is not shift invariant", lambda: _shift(lambda x: x, True)),),
        assumptions=(INDEX_PREMISE,)),
    "jacobian.softmax": GenericProof(lambda: _jac_softmax(), (("missing s s^T", lambda: _jac_softmax(False, True)),),
                                     assumptions=(INDEX_PREMISE,)),
    "jacobian.structured": GenericProof(
        lambda: _jac_structured(), (("normalization term toggled", lambda: _jac_structured(False, True)),),
        assumptions=(INDEX_PREMISE, ANY_H)),
    "jacobian.properties": GenericProof(lambda: _jac_props(),
                                        (("tr J = ||s||^2 - 1", lambda: _jac_props(-1, True)),),
                                        assumptions=(INDEX_PREMISE,)),
    "loss.gradient": GenericProof(lambda: _loss_grad(), (("flipped sign", lambda: _loss_grad(-1, True)),),
                                  assumptions=(INDEX_PREMISE,)),
    "flow.structured": GenericProof(
        lambda: _flow(), (("dV with flipped sign", lambda: _flow("sign")),
                          ("J without its normalization term", lambda: _flow("term"))),
        assumptions=(INDEX_PREMISE, ANY_H, _BRIDGE)),
    "replicator": GenericProof(lambda: _replicator(), (("mean fitness dropped", lambda: _replicator(True)),),
                               uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "attention.dynamics": GenericProof(lambda: _attention(), (("unsquared J", lambda: _attention(1, True)),),
                                       uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "sum_a.conserved": GenericProof(lambda: _sum_a(), (("flow with J = diag(s)", lambda: _sum_a(True)),),
                                    uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "balance.per_token": GenericProof(lambda: _balance(), (("flipped sign", lambda: _balance(-1, True)),),
                                      uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "logistic.orthogonal_fixed": GenericProof(lambda: _orth(), (("P without /b", lambda: _orth(False, True)),),
                                              uses=_FLOW, assumptions=(INDEX_PREMISE, ANY_H)),
    "square.rank_one": GenericProof(lambda: _rank_one(), (("generic V (not rank-one)", lambda: _rank_one("generic_V")),
                                                          ("design X != I", lambda: _rank_one("design"))),
                                    uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "two_token.first_integral": GenericProof(
        lambda: _two_token(), (("+b cosh instead of -b cosh", lambda: _two_token(-1)),), scope="n = 2 only",
        uses=("reduced.logistic", "clock.square_rank_one"), method="reduced+exact"),
    "output.dynamics": GenericProof(lambda: _output(), (("unsquared J", lambda: _output(1, True)),),
                                    uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "entropy.rate": GenericProof(lambda: _entropy(), (("unsquared J", lambda: _entropy(1, True)),),
                                 uses=_FLOW, assumptions=(INDEX_PREMISE,
                                                          "log s_i = a_i - log sum_l e^{a_l} (s_i > 0)")),
    "reduced.logistic": GenericProof(lambda: _reduced(), (("-gamma as printed", lambda: _reduced(-1, True)),),
                                     uses=_FLOW, assumptions=(INDEX_PREMISE,)),
    "clock.logistic": GenericProof(lambda: _clock_logistic(), (("clock factor sigmoid(z)",
                                                               lambda: _clock_logistic(True)),),
                                   uses=_FLOW, assumptions=(INDEX_PREMISE, "gamma = 1/(1+e^z) > 0")),
    "clock.square_rank_one": GenericProof(lambda: _clock_square(), (("rho = b - z", lambda: _clock_square(True)),),
                                          uses=_FLOW, assumptions=(INDEX_PREMISE, "multiplied-out form (rho may "
                                                                   "vanish)")),
}

_NOTES = {
    "index-nf": "index notation with sums of symbolic length (n tokens, d outputs), decided by the index normal form",
    "size-free": "a scalar identity: its exact proof involves neither n nor d",
    "reduced+exact": "the n = 2 statement through the reduced (u, a) system (proven for all n, d), decided exactly "
                     "for every d",
}


def generic_fields(identity_id: str) -> dict:
    """The ``generic*`` keyword arguments of :class:`theorems._id_base.Identity` for ``identity_id``."""
    gp = PROOFS[identity_id]
    return {"generic": gp.prove, "generic_negative": gp.negatives, "generic_scope": gp.scope,
            "generic_uses": gp.uses, "generic_assumptions": gp.assumptions, "generic_method": gp.method,
            "generic_note": _NOTES[gp.method]}
