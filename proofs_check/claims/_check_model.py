r"""``check_model(link=..., loss=...)``: what softpolar can say about a (user) link and loss, and why.

For a :class:`theorems.Link` and a :class:`theorems.Loss` (names or definitions; definitions are
registered), :func:`check_model`

1. **proves** ``flow.structured`` and ``jacobian.structured`` for them: for every $n$, $d$ where the
   size-generic prover covers the definition (an elementwise link, or a normalized one with $k=h$,
   $c=0$, whose generator is an instance of the prover's undefined $h$; a built-in loss), else at
   the concrete sizes ``ns`` (default $n=2..6$) with that scope stated; each with its negative
   control, which must come out ``disproved``;
2. **compares** every generated right-hand side (numpy, torch, mpmath, and the taylor system when the
   definitions are smooth) with **torch autograd** of the objective $F(V,a)=\mathcal L(V\varphi(a))$ at
   random points: the objective is SymPy's definition lambdified by plain ``sympy.lambdify`` (not
   softpolar's code generator) and differentiated by autograd, so the reference shares no code with
   the structured forms under test;
3. **lists** every identity of :data:`theorems.IDENTITIES` with whether it applies and why not
   (:meth:`theorems.Identity.applicability`), and the claim families of ``softpolar verify`` when the
   installed version has them.

``softpolar derive`` prints the same scope list (never a silent subset).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp
import mpmath

from theorems import (IDENTITIES, InvalidArgument, SymbolicModel, check_int, combine, generic_rows, get_link, get_loss,
                      sigmoid, softplus)
from theorems import generic_coverage  # one definition (derive imports it from here)
from numerics import flow_rhs
from numerics.integrate import TranslationError, flow_system, smooth_reason

from . import _families

#: |generated - autograd| / (1 + |autograd|) above this at any point fails the comparison: float64
#: evaluation of the same quantity by two routes of a few dozen operations each (the mpmath route is
#: rounded to float64 at the end).
AUTOGRAD_TOL = 1e-9


@dataclass
class ModelCheck:
    """The result of :func:`check_model` (``ok``: every proof holds, every control is disproved, and
    every generated right-hand side agrees with autograd)."""

    link: str
    loss: str
    proofs: list = field(default_factory=list)      # dicts: identity, status, scope, negative, detail
    autograd: list = field(default_factory=list)    # dicts: engine, n, d, points, max_rel_err, ok
    identities: list = field(default_factory=list)  # dicts: identity, applies, reason
    families: list = field(default_factory=list)    # dicts: family, applies, reason
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p["status"] == "proved" and p["negative"] == "disproved" for p in self.proofs) and \
            all(r["ok"] for r in self.autograd)

    def to_dict(self) -> dict:
        return {"link": self.link, "loss": self.loss, "ok": self.ok, "proofs": self.proofs,
                "autograd": self.autograd, "identities": self.identities, "families": self.families,
                "notes": self.notes}

    def to_markdown(self) -> str:
        out = [f"### check_model: link `{self.link}`, loss `{self.loss}`: {'ok' if self.ok else 'FAILED'}", "",
               "| proof | status | scope | negative control |", "|---|---|---|---|"]
        out += [f"| {p['identity']} | {p['status']} | {p['scope']} | {p['negative']} |" for p in self.proofs]
        out += ["", "| engine vs torch autograd | sizes (n, d) | points | max rel. error | ok |",
                "|---|---|---|---|---|"]
        out += [f"| {r['engine']} | {r['n']}, {r['d']} | {r['points']} | {r['max_rel_err']:.2e} | {r['ok']} |"
                for r in self.autograd]
        out += ["", "| identity | applies | why |", "|---|---|---|"]
        out += [f"| {r['identity']} | {'yes' if r['applies'] else 'no'} | {r['reason']} |" for r in self.identities]
        if self.families:
            out += ["", "| claim family | applies | why |", "|---|---|---|"]
            out += [f"| {r['family']} | {'yes' if r['applies'] else 'no'} | {r['reason']} |" for r in self.families]
        out += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(out)

    _repr_markdown_ = to_markdown

    def __repr__(self):
        bad = [p["identity"] for p in self.proofs if p["status"] != "proved"]
        worst = max((r["max_rel_err"] for r in self.autograd), default=0.0)
        return (f"ModelCheck(link={self.link!r}, loss={self.loss!r}, ok={self.ok}, proofs="
                f"{[(p['identity'], p['status'], p['scope']) for p in self.proofs]}, autograd max rel. error "
                f"{worst:.1e}" + (f", unproved {bad}" if bad else "") + ")")


def _prove(ident_id: str, loss: str, link: str, ns) -> dict:
    ident = IDENTITIES[ident_id]
    pos, neg, sizes = [], [], []
    for n in ns:
        cases = ident.cases(n, loss=loss, link=link)
        if not cases:
            continue
        sizes.append(n)
        pos.append((f"n={n}", ident.check(n, loss=loss, link=link)))
        neg.append((f"n={n}", ident.negative_control(n, loss=loss, link=link)))
    if not pos:
        return {"identity": ident_id, "status": "undecided", "scope": "no case at the requested sizes",
                "negative": "not run", "detail": ""}
    p, q = combine(pos), combine(neg, negative=True)
    scope = f"n = {sizes[0]}..{sizes[-1]} (concrete sizes)"
    gen_ok, why = generic_coverage(link, loss)
    detail = p.detail
    if gen_ok and p.status == "proved":
        rows = generic_rows([ident_id])
        if rows and rows[0].status == "proved":
            scope = f"all n, d (generic: {why}); re-proved at n = {sizes[0]}..{sizes[-1]}"
    elif not gen_ok:
        scope += f"; not for all n: {why}"
    return {"identity": ident_id, "status": p.status, "scope": scope, "negative": q.status, "detail": detail}


def _point(loss_def, n: int, d: int, rs):
    V = rs.randn(d, n) * 0.7
    a = rs.randn(n) * 0.8
    if loss_def.target_positive:
        t = rs.rand(d) + 0.2
        t = t / t.sum()
    else:
        t = rs.randn(d)
        t = t / np.linalg.norm(t)
    return V, a, t


def _autograd_reference(m: SymbolicModel):
    """``f(V, a, t) -> (dV, da)`` = minus torch autograd of the objective (plain sympy.lambdify, torch)."""
    import torch
    args = list(m.V) + list(m.a) + list(m.target)
    F = m.objective
    F = F.replace(lambda e: isinstance(e, (softplus, sigmoid)), lambda e: e.rewrite(sp.exp))
    # sympy's torch printer maps Max to torch.max (a reduction, TypeError on (int, Tensor)): the exact identity
    # max(x, y) = (x + y + |x - y|) / 2 (softpick's h = max(e^x - 1, 0))
    F = F.replace(lambda e: isinstance(e, (sp.Max, sp.Min)) and len(e.args) == 2,
                  lambda e: (e.args[0] + e.args[1] + (1 if isinstance(e, sp.Max) else -1)
                             * sp.Abs(e.args[0] - e.args[1])) / 2)
    fn = sp.lambdify(args, F, modules="torch")

    def ref(V, a, t):
        Vt = torch.tensor(V, dtype=torch.float64, requires_grad=True)
        at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        tt = torch.tensor(t, dtype=torch.float64)
        val = fn(*list(Vt.reshape(-1)), *list(at), *list(tt))
        gV, ga = torch.autograd.grad(val, (Vt, at))
        return -gV.numpy(), -ga.numpy()

    return ref


def _engines(loss: str, link: str, n: int, d: int):
    """``name -> f(V, a, t) -> (dV, da)`` for every generated right-hand side."""
    import torch

    out = {}
    r_np = flow_rhs(loss, link, backend="numpy")
    out["numpy"] = lambda V, a, t: r_np(V, a, t)
    r_t = flow_rhs(loss, link, backend="torch")

    def f_torch(V, a, t):
        dV, da = r_t(torch.tensor(V), torch.tensor(a), torch.tensor(t))
        return dV.numpy(), da.numpy()
    out["torch"] = f_torch
    r_mp = flow_rhs(loss, link, backend="mpmath")

    def f_mp(V, a, t):
        with mpmath.workdps(30):
            dV, da = r_mp([list(map(float, row)) for row in V], list(map(float, a)), list(map(float, t)))
            return np.array([[float(v) for v in row] for row in dV]), np.array([float(v) for v in da])
    out["mpmath"] = f_mp
    S = None
    if not smooth_reason(loss, link, d):
        try:
            S = flow_system(loss, link, n, d, clock="t")
        except TranslationError:
            S = None  # no heyoka form: the taylor engine refuses this model (suits() says why)
    if S is not None:
        rhs = S.expanded()
        rats = dict(S.rationals)

        def f_taylor(V, a, t):
            sub = {**{k: v for k, v in rats.items()}}
            sub.update(dict(zip(S.state, [sp.Float(x, 30) for x in list(V.ravel()) + list(a)])))
            sub.update(dict(zip(S.params, [sp.Float(x, 30) for x in t])))
            vals = np.array([float(e.xreplace(sub).evalf(30)) for e in rhs])
            return vals[:d * n].reshape(d, n), vals[d * n:]
        out["taylor (heyoka system)"] = f_taylor
    return out


def check_model(link="softmax", loss="logistic", *, ns=range(2, 7), sizes=((3, 2), (4, 1)), points: int = 4,
                seed: int = 0) -> ModelCheck:
    """Prove, compare and list for (``link``, ``loss``) (see the module docstring).

    Args:
        link, loss: names or :class:`theorems.Link` / :class:`theorems.Loss` definitions (registered).
        ns: token counts of the concrete proofs (default 2..6).
        sizes: ``(n, d)`` of the autograd comparison; ``points``: random points per size; ``seed``.

    Raises:
        InvalidArgument: an unknown name, a bad definition, bad sizes.
    """
    K, L = get_link(link), get_loss(loss)
    ns = [check_int("n", n, minimum=2) for n in ns]
    check_int("points", points, minimum=1)
    res = ModelCheck(K.name, L.name)
    for ident_id in ("jacobian.structured", "flow.structured"):
        res.proofs.append(_prove(ident_id, L.name, K.name, ns))
    rs = np.random.RandomState(seed)
    for n, d in sizes:
        n, d = check_int("n", n, minimum=2), check_int("d", d, minimum=1)
        d = max(d, L.min_d)
        ref = _autograd_reference(SymbolicModel(L.name, K.name, n, d))
        pts = [_point(L, n, d, rs) for _ in range(points)]
        refs = [ref(*p) for p in pts]
        for name, f in _engines(L.name, K.name, n, d).items():
            err = 0.0
            for p, (rV, ra) in zip(pts, refs):
                gV, ga = f(*p)
                got, want = np.concatenate([np.ravel(gV), np.ravel(ga)]), np.concatenate([rV.ravel(), ra])
                err = max(err, float(np.max(np.abs(got - want) / (1 + np.abs(want)))))
            res.autograd.append({"engine": name, "n": n, "d": d, "points": points, "max_rel_err": err,
                                 "ok": bool(err <= AUTOGRAD_TOL)})
    for ident_id, ident in IDENTITIES.items():
        ok, why = ident.applicability(L.name, K.name)
        res.identities.append({"identity": ident_id, "applies": ok, "reason": why})
    res.families = claim_families(K.name, L.name)
    if not K.smooth:
        res.notes.append(f"link {K.name!r} is not smooth: identities are proven on the region a_i > 0, and the "
                         "taylor engine does not apply")
    if K.shift_factor is not None:
        res.notes.append("shift law h(x + t) = g(t) h(x) proven: the engines evaluate after subtracting max a"
                         + ("" if K.shift_invariant else " (with c / g(max a) in the normalizer)"))
    return res


def claim_families(link: str, loss: str) -> list:
    """The claim families of ``softpolar verify`` for (link, loss), when this version has them."""
    return [{"family": f, "applies": ok, "reason": why} for f, ok, why in _families.applicability(link, loss)]


def _check_inputs(link, loss):  # pragma: no cover - kept for the CLI
    if link is None or loss is None:
        raise InvalidArgument("check_model needs link= and loss=")
