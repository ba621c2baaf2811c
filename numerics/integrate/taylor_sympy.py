r"""The SymPy side of the Taylor backend: the derived flow, rewritten for ``heyoka.from_sympy``.

``heyoka.from_sympy`` accepts ``Add``, ``Mul``, ``Pow``, ``exp``, ``log`` (and other elementary
functions), symbols and numbers whose value is exact in binary: integers, floats and rationals
whose denominator is a power of two. The generated pieces of the flow contain two things it
rejects, and :func:`translate` rewrites them:

* the named functions of :mod:`theorems`: $\operatorname{softplus}(x)\mapsto\log(1+e^{x})$,
  $\operatorname{sigmoid}(x)\mapsto(1+e^{-x})^{-1}$;
* non-dyadic rationals $p/q$ (a denominator that is not a power of two, not representable in
  binary): each becomes a placeholder symbol that the integrator binds to a runtime parameter
  holding $p/q$ rounded once at the working precision (never a double rounded twice).

Every rewrite is **proven** equal to the original with the exact-zero machinery of
:func:`theorems.prove_zero` (placeholders substituted back by their exact values first); a
translation whose proof is not ``proved`` is refused (:class:`TranslationError`).
:func:`mistranslated` gives the negative control: a rewrite with a sign error
($\operatorname{sigmoid}(x)\mapsto(1+e^{x})^{-1}$), which the same proof rejects.

Links and losses that are not smooth (read off the expression: ``relu-norm``'s $\max(x,0)$,
``l1-norm``'s $|x|$, a ``Piecewise`` such as stablemax) have no Taylor expansion at the kink and
are refused (:attr:`theorems.Link.smooth`, :attr:`theorems.Loss.smooth`).

:func:`flow_system` assembles the right-hand side of the flow from these translated scalar
pieces ($h$, $h'$, $\ell'$ from :mod:`theorems`) in the structured forms
$\dot V=-g\varphi^\top$, $\dot a=w\odot(f-\langle\varphi,f\rangle\mathbf 1)$, $f=-V^\top g$
(identities ``flow.structured`` and ``jacobian.structured``), exactly the template that
:class:`numerics.FlowRHS` evaluates, in SymPy symbols. The tests prove the assembled system
equal to :meth:`theorems.SymbolicModel.flow` (the component-wise derivative) at small sizes.
Clocks (see :mod:`numerics.integrate._common`): ``t``; ``log`` ($\frac{dy}{d\sigma}=e^{\sigma}f$,
$\sigma$ the independent variable); ``tau`` (logistic: $(w\varphi^\top, J_\varphi^\top V^\top w)$
plus $T$ with $\frac{dT}{d\tau}=-e^{-T}/\ell'(z)$, :mod:`numerics.integrate._clock`). ``reduced=True`` gives
the reduced logistic system $(u, a, T)$ in $\tau$.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp

from theorems import InvalidArgument, get_link, get_loss, has_internal_clock, prove_zero, same_loss, sigmoid, softplus
from theorems import ProofResult
from ..problem import frozen_masks

_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)

#: SymPy node types ``heyoka.from_sympy`` converts (besides numbers and symbols).
_ALLOWED_FUNCS = (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log)


class TranslationError(InvalidArgument):
    """An expression that cannot be handed to ``heyoka.from_sympy`` (or whose rewrite is unproven)."""


@dataclass(frozen=True)
class Translation:
    """``original`` rewritten as ``rewritten`` (placeholders ``rationals``: symbol -> exact value), with its proof."""

    original: sp.Expr
    rewritten: sp.Expr
    rationals: tuple = ()
    proof: ProofResult | None = None


def _is_dyadic(r: sp.Rational) -> bool:
    q = int(r.q)
    return q & (q - 1) == 0


_HYPERBOLIC = (sp.sinh, sp.cosh, sp.tanh, sp.coth, sp.sech, sp.csch)


def rewrite_named(expr):
    """softplus / sigmoid (and the hyperbolic functions of a user definition) replaced by their exp-log forms
    (nothing else touched; the rewrite is proven by :func:`translate`)."""
    expr = sp.sympify(expr)
    if expr.has(*_HYPERBOLIC):
        expr = expr.replace(lambda e: isinstance(e, _HYPERBOLIC), lambda e: e.rewrite(sp.exp))
    if not expr.has(softplus, sigmoid):
        return expr
    return expr.replace(softplus, lambda u: sp.log(1 + sp.exp(u))).replace(
        sigmoid, lambda u: 1 / (1 + sp.exp(-u)))


def _placeholder(r: sp.Rational) -> sp.Symbol:
    sign = "m" if r < 0 else ""
    return sp.Symbol(f"rational_{sign}{abs(int(r.p))}_{int(r.q)}", real=True)


def check_translation(original, rewritten, rationals=()) -> ProofResult:
    """Decide ``rewritten`` (placeholders replaced by their exact values) minus ``original`` = 0."""
    back = rewritten.xreplace(dict(rationals)) if rationals else rewritten
    return prove_zero(back - sp.sympify(original))


def _check_nodes(expr, what):
    for node in sp.preorder_traversal(expr):
        if node.is_Symbol:
            continue
        if node.is_Number:
            if node.is_Rational and not node.is_Integer and not _is_dyadic(node):
                raise TranslationError(f"{what} keeps the non-dyadic rational {node}; expected placeholders")
            if not (node.is_Rational or node.is_Float):
                raise TranslationError(f"{what} contains the number {node}; expected rational or float")
            continue
        if not isinstance(node, _ALLOWED_FUNCS):
            raise TranslationError(
                f"{what} contains {type(node).__name__} ({node}), which heyoka.from_sympy does not accept or "
                "which is not smooth; expected only +, *, **, exp, log")


@lru_cache(maxsize=None)
def translate(expr, what: str = "expression") -> Translation:
    """Rewrite ``expr`` for ``heyoka.from_sympy`` and prove the rewrite (see module docstring).

    Raises :class:`TranslationError` for a node that has no accepted form (``Max``, ``Abs``, ...)
    or when the exact-zero proof of the rewrite is not ``proved``.
    """
    expr = sp.sympify(expr)
    out = rewrite_named(expr)
    rationals = {}
    for r in out.atoms(sp.Rational):
        if not r.is_Integer and not _is_dyadic(r):
            rationals[_placeholder(r)] = r
    if rationals:
        out = out.xreplace({v: k for k, v in rationals.items()})
    _check_nodes(out, what)
    items = tuple(sorted(rationals.items(), key=lambda kv: kv[0].name))
    proof = check_translation(expr, out, items)
    if proof.status != "proved":
        raise TranslationError(f"the rewrite of {what} ({expr} -> {out}) is not proven equal to the original "
                               f"({proof.status}, {proof.method}); refusing to compile it")
    return Translation(expr, out, items, proof)


def mistranslated() -> tuple[sp.Expr, sp.Expr]:
    """Negative control: ``(sigmoid(x), 1/(1 + exp(x)))``, a rewrite with a sign error."""
    return sigmoid(_x), 1 / (1 + sp.exp(_x))


# ---------------------------------------------------------------------------------------------------
@dataclass
class SymSystem:
    """An ODE system in SymPy symbols: ``rhs[i]`` is the derivative of ``state[i]``.

    ``params``: data symbols bound to runtime parameters, in order (target, design rows, ``b``);
    ``rationals``: placeholder -> exact value (also runtime parameters, after ``params``);
    ``time``: the independent-variable symbol when the right-hand side uses it (``log`` clock);
    ``translations``: the proven rewrites of the scalar pieces, by name.
    """

    state: list
    rhs: list
    params: list
    rationals: list = field(default_factory=list)
    time: sp.Symbol | None = None
    translations: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)
    defs: list = field(default_factory=list)

    def expanded(self) -> list:
        """The right-hand side with every intermediate of :attr:`defs` substituted (placeholders kept)."""
        out = list(self.rhs)
        for sym, expr in reversed(self.defs):
            out = [e.xreplace({sym: expr}) for e in out]
        return out

    def to_heyoka(self, hy, *, time_expr=None):
        """``(vars, [(var, expr)], n_params)``: the system as heyoka expressions via ``from_sympy``."""
        names = [s.name for s in self.state]
        hvars = list(hy.make_vars(*names)) if len(names) > 1 else [hy.make_vars(*names)]
        s_dict = dict(zip(self.state, hvars))
        s_dict.update({p: hy.par[i] for i, p in enumerate(self.params)})
        s_dict.update({r: hy.par[len(self.params) + i] for i, (r, _) in enumerate(self.rationals)})
        if self.time is not None:
            s_dict[self.time] = hy.time
        for sym, expr in self.defs:
            s_dict[sym] = hy.from_sympy(expr, s_dict)
        sys = [(v, hy.from_sympy(e, s_dict)) for v, e in zip(hvars, self.rhs)]
        return hvars, sys, len(self.params) + len(self.rationals)


_u = sp.Symbol("u", real=True)
_yv = sp.Symbol("y", real=True)


def smooth_reason(loss, link, d: int | None = None) -> str:
    """Why (``loss``, ``link``) has no Taylor expansion everywhere ('' when both are smooth), at output dimension
    ``d``: a general-form loss is judged at that ``d`` (:meth:`theorems.Loss.smooth_at`); without ``d`` it counts
    as not smooth (its expression depends on the size)."""
    L, K = get_loss(loss), get_link(link)
    if not K.smooth:
        return f"link {K.name!r} is not smooth (its generator has a kink or a branch: {K.expr_h})"
    if L.form == "general":
        if d is None:
            return f"loss {L.name!r} is a general form, not known to be smooth without an output dimension d"
        if not L.smooth_at(d):
            return f"loss {L.name!r} is not smooth at d = {d}"
        return ""
    if not L.smooth:
        return f"loss {L.name!r} is not smooth"
    return ""


def _pieces(loss: str, link: str, d: int | None = None):
    """Translated scalar pieces of the link (``h``, ``h'``, ``k``, ``k'`` in ``x``) and the loss
    (margin: ``ell'`` in ``z``; separable: ``f_u`` in ``u, y``; cross-entropy: ``(log h)'``, ``k``, ``k'``);
    ``d``: the output dimension the smoothness of a general-form loss is judged at."""
    why = smooth_reason(loss, link, d)
    if why:
        raise TranslationError(f"link={link!r}, loss={loss!r} is not allowed with backend='taylor'; {why} "
                               "(no Taylor expansion there); expected smooth definitions (use backend='mpmath')")
    K = get_link(link)
    out = {"h": translate(K.h(_x), f"h for link {link}"), "dh": translate(K.dh(_x), f"h' for link {link}")}
    if K.normalized and not K.k_is_h:
        out["k"] = translate(K.k(_x), f"k for link {link}")
        out["dk"] = translate(K.dk(_x), f"k' for link {link}")
    if K.normalized and K.c != 0:
        out["c"] = translate(K.c, f"c for link {link}")
    L = get_loss(loss)
    if L.form == "margin":
        out["dell"] = translate(L.dell(_z), f"ell' for loss {loss}")
    elif L.form == "separable":
        out["fu"] = translate(L.fu(_u, _yv), f"f_u for loss {loss}")
    elif L.form == "cross_entropy":
        P = L.link
        out["ce_dlogh"] = translate(sp.simplify(P.dh(_x) / P.h(_x)), f"(log h)' for loss {loss}")
        out["ce_k"] = translate(P.k(_x), f"k for loss {loss}")
        out["ce_dk"] = translate(P.dk(_x), f"k' for loss {loss}")
        if P.c != 0:
            out["ce_c"] = translate(P.c, f"c for loss {loss}")
    return out


def state_symbols(n: int, d: int, *, clock: str, reduced: bool = False):
    """``(V (d x n nested lists) or u (n), a (n), T or None)``."""
    if reduced:
        first = [sp.Symbol(f"u_{j}", real=True) for j in range(n)]
    else:
        first = [[sp.Symbol(f"V_{k}_{j}", real=True) for j in range(n)] for k in range(d)]
    a = [sp.Symbol(f"a_{j}", real=True) for j in range(n)]
    T = sp.Symbol("T", real=True) if clock == "tau" else None
    return first, a, T


def _minus_gradient(loss_def, P, target, beta, X, define, dell, rats) -> list:
    """$r = -g$, minus the loss gradient at $\\beta$, entry by entry as named intermediates (``define``), for the
    ``t`` and ``log`` clocks of :func:`flow_system`; ``X``: the design's symbols or ``None``; ``rats``: the
    rationals of translated entries, updated in place."""
    d = len(beta)
    if loss_def.form == "margin":
        z = define("z", sp.Add(*[wk * bk for wk, bk in zip(target, beta)]))
        c = define("minus_dell", -dell(z))
        return [define(f"r_{k}", c * wk) for k, wk in enumerate(target)]
    if loss_def.form == "separable":
        fu = P["fu"].rewritten
        if X is None:
            return [define(f"r_{k}", -fu.xreplace({_u: bk, _yv: yk})) for k, (bk, yk) in enumerate(zip(beta, target))]
        m = len(X)
        rows = [define(f"xb_{i}", sp.Add(*[X[i][k] * beta[k] for k in range(d)])) for i in range(m)]
        res = [define(f"res_{i}", -fu.xreplace({_u: rows[i], _yv: target[i]})) for i in range(m)]
        return [define(f"r_{k}", sp.Add(*[X[i][k] * res[i] for i in range(m)])) for k in range(d)]
    if loss_def.form == "cross_entropy":
        # -g_k = p_k (log h)'(beta_k) - (sum p) k'(beta_k) / (c + sum_l k(beta_l))
        E = [define(f"E_{k}", P["ce_k"].rewritten.xreplace({_x: bk})) for k, bk in enumerate(beta)]
        Einv = define("Einv", 1 / (sp.Add(*E) + (P["ce_c"].rewritten if "ce_c" in P else 0)))
        same_ce = sp.simplify(loss_def.link.dk(_x) - loss_def.link.k(_x)) == 0
        dE = E if same_ce else [define(f"dE_{k}", P["ce_dk"].rewritten.xreplace({_x: bk}))
                                for k, bk in enumerate(beta)]
        total = sp.Add(*target)
        return [define(f"r_{k}", pk * P["ce_dlogh"].rewritten.xreplace({_x: bk}) - total * dEk * Einv)
                for k, (bk, dEk, pk) in enumerate(zip(beta, dE, target))]
    # general: -grad L from SymPy, translated entry by entry
    bsyms = sp.Matrix([sp.Symbol(f"bb_{k}", real=True) for k in range(d)])
    grad = loss_def.gradient(bsyms, sp.Matrix(target))
    r = []
    for k in range(d):
        tr = translate(-grad[k], f"gradient entry {k} of loss {loss_def.name}")
        rats.update(dict(tr.rationals))
        r.append(define(f"r_{k}", tr.rewritten.xreplace(dict(zip(bsyms, beta)))))
    return r


def flow_system(loss: str, link: str, n: int, d: int, *, clock: str = "t", m: int | None = None,
                reduced: bool = False, frozen: tuple = ()) -> SymSystem:
    """The flow of (``loss``, ``link``) at sizes ``n``, ``d`` in ``clock`` as a :class:`SymSystem`.

    ``m``: rows of a square-loss design $X$ (``None``: no design, $X=I$). ``reduced``: the
    reduced logistic system $(u,a,T)$ in $\\tau$ (``d`` unused; parameter ``b``).

    The right-hand side refers to named intermediates (``defs``, in order: $h(a_j)$, $1/Z$,
    $\\varphi_j$, the Jacobian weights, $\\beta_k$, $-g_k$, $f_j$, $\\langle\\varphi,f\\rangle$), the
    structure of the template, which heyoka then evaluates once each (SymPy would otherwise
    flatten $V_{kj}\\,e^{a_j}/Z$ into one division per product). :meth:`SymSystem.expanded`
    substitutes them back (for the proofs).
    """
    loss, link = get_loss(loss).name, get_link(link).name
    logistic = same_loss(loss, "logistic")
    if clock == "tau" and not has_internal_clock(loss):
        raise InvalidArgument(f"clock='tau' is not allowed with loss={loss!r}; expected a margin loss with "
                              "-ell'(z) > 0 for every z (theorems.has_internal_clock)")
    if reduced and (not logistic or clock != "tau"):
        raise InvalidArgument("reduced=True needs the logistic loss and clock='tau'")
    if frozen and clock == "tau":
        raise InvalidArgument(f"clock='tau' is not allowed with frozen={tuple(frozen)}; expected clock='t' or 'log'")
    P = _pieces(loss, link, d)
    link_def = get_link(link)
    first, a, T = state_symbols(n, d, clock=clock, reduced=reduced)
    rats = {}
    for tr in P.values():
        rats.update(dict(tr.rationals))
    defs = []

    def define(name, expr):
        if expr.is_Symbol or expr.is_Number:
            return expr
        sym = sp.Symbol(name, real=True)
        defs.append((sym, expr))
        return sym

    H = [define(f"h_{j}", P["h"].rewritten.xreplace({_x: aj})) for j, aj in enumerate(a)]
    same = sp.simplify(link_def.dh(_x) - link_def.h(_x)) == 0
    W = H if same else [define(f"dh_{j}", P["dh"].rewritten.xreplace({_x: aj})) for j, aj in enumerate(a)]
    wts_k = None
    if link_def.normalized:
        Kk = H if "k" not in P else [define(f"k_{j}", P["k"].rewritten.xreplace({_x: aj})) for j, aj in enumerate(a)]
        Zinv = define("Zinv", 1 / (sp.Add(*Kk) + (P["c"].rewritten if "c" in P else 0)))
        phi = [define(f"phi_{j}", Hj * Zinv) for j, Hj in enumerate(H)]
        wts = phi if same else [define(f"wj_{j}", Wj * Zinv) for j, Wj in enumerate(W)]
        if "dk" in P:
            wts_k = [define(f"wk_{j}", P["dk"].rewritten.xreplace({_x: aj}) * Zinv) for j, aj in enumerate(a)]
    else:
        phi, wts = H, W

    # sum_j phi_j = 1 identically (Z = sum_j h(a_j): no constant c, no separate k): then
    # f_j - <phi, f> = sum_k phi_k (f_j - f_k), which has no cancellation where one weight is 1 - tiny (the
    # mean form subtracts two numbers equal to the last digit once 1 - max phi < 10^-digits: a run with
    # frozen values, whose 1 - max phi ~ C/t, went wrong past t = 1e40 at 30 digits). Proven equal to the
    # derived flow by tests/test_integrate_taylor.py (exact zero), as every form here. It costs n(n-1)/2
    # differences (4x the compile time at n = 32), so it is used where a run reaches that regime: with frozen
    # parameters (values frozen: 1 - max phi ~ C/t). A trained flow approaches its vertex like (log t)^-2, which
    # reaches 10^-30 only past log t ~ 10^15, beyond every horizon of the engines.
    simplex = link_def.normalized and "k" not in P and "c" not in P and bool(frozen)

    def apply_jT(f):
        if not link_def.normalized:
            return [wj * fj for wj, fj in zip(wts, f)]
        if simplex:
            diff = {(j, k): define(f"df_{j}_{k}", f[j] - f[k]) for j in range(n) for k in range(j + 1, n)}
            return [wj * sp.Add(*[phi[k] * (diff[j, k] if j < k else -diff[k, j]) for k in range(n) if k != j])
                    for j, wj in enumerate(wts)]
        mean = define("mean_phi_f", sp.Add(*[pj * fj for pj, fj in zip(phi, f)]))
        if wts_k is not None:
            return [wj * fj - wk * mean for wj, wk, fj in zip(wts, wts_k, f)]
        return [wj * (fj - mean) for wj, fj in zip(wts, f)]

    def dell(v):
        return P["dell"].rewritten.xreplace({_z: v})

    layout = {}
    if reduced:
        b = sp.Symbol("b", positive=True)
        u = first
        z = define("z", sp.Add(*[uj * pj for uj, pj in zip(u, phi)]))
        rhs = [b * pj for pj in phi] + apply_jT(u) + [-sp.exp(-T) / dell(z)]
        state = list(u) + list(a) + [T]
        layout = {"u": (0, n), "a": (n, 2 * n), "T": 2 * n}
        return SymSystem(state, rhs, [b], sorted(rats.items(), key=lambda kv: kv[0].name), None, P, layout, defs)

    V = first
    loss_def = get_loss(loss)
    tname = loss_def.target_name
    msize = d if m is None else m
    target = [sp.Symbol(f"{tname}_{k}", real=True) for k in range(msize)]
    params = list(target)
    X = None
    if m is not None:
        if not loss_def.design:
            raise InvalidArgument(f"m={m!r} (a design) is only allowed with a separable loss (e.g. 'square')")
        X = [[sp.Symbol(f"X_{i}_{k}", real=True) for k in range(d)] for i in range(m)]
        params += [x for row in X for x in row]
    if clock != "tau":  # the tau clock needs no beta: z = <w, V phi> = <V^T w, phi> = <f, phi> there
        beta = [define(f"beta_{k}", sp.Add(*[V[k][j] * phi[j] for j in range(n)])) for k in range(d)]
    # r = -g (minus the loss gradient), so that dV = r phi^T and f = V^T r carry no sign flips
    if clock == "tau":
        r = list(target)  # -g / gamma = -ell'(z) w / (-ell'(z)) = w (numerics.integrate._clock)
    else:
        r = _minus_gradient(loss_def, P, target, beta, X, define, dell, rats)
    f = [define(f"f_{j}", sp.Add(*[V[k][j] * r[k] for k in range(d)])) for j in range(n)]
    rhs = [r[k] * phi[j] for k in range(d) for j in range(n)] + apply_jT(f)
    if frozen:  # frozen parameters (numerics.Problem.frozen): their equations are 0
        mV, ma = frozen_masks(tuple(frozen), n)
        rhs = [q if mV[i % n] else sp.Integer(0) for i, q in enumerate(rhs[:d * n])] + \
              [q if ma[j] else sp.Integer(0) for j, q in enumerate(rhs[d * n:])]
    state = [V[k][j] for k in range(d) for j in range(n)] + list(a)
    time = None
    if clock == "tau":
        # z = <w, V phi> = sum_j (V^T w)_j phi_j = <f, phi>, the mean term of J^T f (f = V^T w here)
        z = define("z", sp.Add(*[fj * pj for fj, pj in zip(f, phi)])) if not link_def.normalized or simplex else \
            sp.Symbol("mean_phi_f", real=True)
        rhs.append(-sp.exp(-T) / dell(z))
        state.append(T)
    elif clock == "log":
        time = sp.Symbol("sigma", real=True)
        e = define("exp_sigma", sp.exp(time))
        rhs = [e * q for q in rhs]
    layout = {"V": (0, d * n), "a": (d * n, d * n + n)}
    if clock == "tau":
        layout["T"] = d * n + n
    return SymSystem(state, rhs, params, sorted(rats.items(), key=lambda kv: kv[0].name), time, P, layout, defs)
