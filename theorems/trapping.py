r"""A trapping region of the logistic tau-system, and why inside it $s\to e_i$ [D].

The system
==========
For the logistic loss, with $u=V^\top w$, $b=\|w\|^2$, $s=\operatorname{softmax}(a)$,
$J(s)=\operatorname{diag}(s)-ss^\top$ and the internal clock $d\tau=-\ell'(z)\,dt$
(paper-notes#logistic, tag [D]), the flow reduces to the closed system

.. math:: \frac{du}{d\tau}=b\,s,\qquad \frac{da}{d\tau}=J(s)\,u
          \qquad\Big(\frac{da_k}{d\tau}=s_k(u_k-z),\ z=\langle u,s\rangle\Big). \tag{$\star$}

:func:`tau_system` builds ($\star$) from the definitions (softmax from
:data:`theorems.LINKS`, $J$ by differentiating it component by component) and
:func:`check_tau_reduction` proves, exactly, that the full model's derived flow
(:class:`theorems.SymbolicModel`) satisfies $\dot u=\gamma\,b\,s$,
$\dot a=\gamma\,J(s)u$ with $\gamma=-\ell'(z)$: ($\star$) is the model's flow in
the clock $\tau$.

The regions
===========
For a token $i$ let

.. math:: R_i=\{u_i\ge u_j,\ a_i\ge a_j\ \forall j\ne i\},\qquad
          R_i^+=\{u_i\ge u_j,\ a_i> a_j\ \forall j\ne i\}.

**Lemma (trapping region) [D].** *Along* ($\star$), *with* $b>0$:

1. *(monotone gaps) On all of* $R_i$: $\frac{d}{d\tau}(u_i-u_j)=b(s_i-s_j)\ge0$ *and*
   $\frac{d}{d\tau}(a_i-a_j)\ge0$ *for every* $j\ne i$. *In particular the flow
   points into* $R_i$ *on each of its faces, so* $R_i$ *is forward invariant.*
2. *(strict region)* $R_i^+$ *is forward invariant, and for a solution starting in*
   $R_i^+$ *at* $\tau_0$: $a_i-a_j\to\infty$ *for every* $j\ne i$, *hence*
   $s(\tau)\to e_i$; *moreover* $u_i-u_j\ge\kappa_j(\tau-\tau_0)$ *with*
   $\kappa_j=\frac bn\big(1-e^{-(a_i-a_j)(\tau_0)}\big)>0$.
3. *(original time)* *For the logistic flow,* $\tau(t)\to\infty$ *as* $t\to\infty$,
   *so the same holds for* $s(t)=\sigma(a(t))$.

The worry "what if $u_i-z<0$" does not arise: on $R_i$, $u_i=\max_k u_k$ and

.. math:: u_i-z=\sum_k s_k\,(u_i-u_k)\ \ge 0 \tag{D2}

(proven: :func:`check_gap_identities`). The second derivative then splits as

.. math:: \frac{d}{d\tau}(a_i-a_j)=(s_i-s_j)(u_i-z)+s_j(u_i-u_j), \tag{D1}

a sum of products of non-negative factors on $R_i$ ($s_i\ge s_j$ because $\exp$
is increasing). No case split is needed; the classical one on the sign of
$u_j-z$ is written out and checked too (:func:`check_case_split`).

What is proven by SymPy and what is argued
==========================================
*Proven symbolically* (exact; each with a negative control that the same checker
rejects):

* ($\star$) is the model's derived logistic flow divided by $\gamma$
  (:func:`check_tau_reduction`, for given $n,d$).
* (D1), (D2) and $\frac{d}{d\tau}(u_i-u_j)=b\,s_i\,(1-e^{-(a_i-a_j)})$ as identities
  of the derived system (:func:`check_gap_identities`, for given $n$; (D1) also
  size-generically in abstract symbols).
* Sign of every face derivative and of both gap derivatives on all of $R_i$:
  in the coordinates $u_j=u_i-p_j$, $e^{a_j}=e^{a_i}/(1+r_j)$ ($p_j,r_j\ge0$ is
  exactly $R_i$) the derivative is a ratio of polynomials in the non-negative
  $p,r$ and the positive $b,e^{a_i}$ whose coefficients are all $\ge0$: an
  exact positivity certificate (:func:`check_region_sign`, for given $n$).
  Size-generic: (D1) with the sign of each factor (:func:`check_case_split`).
* $n\,s_i\ge1$ on $R_i$ (:func:`check_winner_weight`), used for $\kappa_j$.
* Negative controls: $\{a_i\ge a_j\}$ alone and $\{u_i\ge u_j\}$ alone are *not*
  invariant: the checker returns an exact boundary point with outward flow
  (:func:`trapping_region` with ``kind='a-only'`` / ``'u-only'``). And $R_i$ is not
  enough for convergence: the tie set $\{u_i=u_j, a_i=a_j\}$ is invariant
  (:func:`check_tie_invariance`), so a solution there keeps $s_i=s_j$ and never
  reaches $e_i$; this is why certificates use the strict region $R_i^+$.

* The steps of "$R_i^+$ is forward invariant" and the rates behind the divergence, case by
  case (:func:`check_strict_region`, for given $n$): on the face $u_i=u_j$ of $R_i^+$
  ($a_i>a_j$) the u-gap derivative is *strictly* positive; the face $a_i=a_j$ is never
  reached from $R_i^+$ because the a-gap derivative is $\ge0$ on all of $R_i$; the rates
  $\frac{d}{d\tau}(u_i-u_j)\ge\frac bn(1-e^{-(a_i-a_j)})$ and
  $\frac{d}{d\tau}(a_i-a_j)\ge s_j(u_i-u_j)$ on $R_i$. Controls: strictness fails on the
  closed face ($a_i=a_j$ allowed, an exact zero), and the a-gap rate with $s_i$ in place
  of $s_j$ is false (an exact negative point).

*The analytic steps*, below as they are argued on paper, are **proven in Coq** for every $n$
(``theorems/coq``, :data:`PROVEN_IN_COQ`; the FORMAL claim compiles them): forward invariance by
real induction, the divergence, $s\to e_i$ and $\tau(t)\to\infty$. Global existence alone remains
assumed, as one named Coq axiom (:data:`ARGUED_BY_HAND`, recorded in every certificate's
``lemma_steps`` and in the CERT claim):

* Global existence of ($\star$): $|du/d\tau|\le b$ and $|da/d\tau|\le 2\max_k|u_k|$,
  so solutions grow at most linearly and exist for all $\tau$.
* Invariance of $R_i^+$: let $\tau_e$ be the last time up to which the solution
  stays in $R_i$. On $[\tau_0,\tau_e]$ the gaps are non-decreasing (item 1), so
  $g_j:=a_i-a_j\ge g_j(\tau_0)>0$ and $p_j:=u_i-u_j\ge0$ at $\tau_e$; there
  $\dot p_j=b\,s_i(1-e^{-g_j})>0$, so both stay admissible a little longer:
  $\tau_e=\infty$.
* Divergence: $s_i\ge1/n$ gives $\dot p_j\ge\kappa_j$, so $p_j\ge\kappa_j(\tau-\tau_0)$.
  If some $g_j$ stayed bounded by $G$, then $s_j=s_ie^{-g_j}\ge e^{-G}/n$ and by
  (D1) $\dot g_j\ge s_jp_j\ge e^{-G}\kappa_j(\tau-\tau_0)/n$, so $g_j$ would grow
  quadratically: a contradiction. Monotone and unbounded, $g_j\to\infty$, and
  $s_j/s_i=e^{-g_j}\to0$ for all $j\ne i$, i.e. $s\to e_i$.
* Original time: the $t$-flow exists for all $t$ ($|\dot V|\le\|w\|$, $|\dot a|$ grows at
  most linearly) and $d\tau/dt=\gamma=1/(1+e^{z})\in(0,1)$ with $z\le\max_ku_k$; if $\tau$
  stayed bounded, $u$ would too, $\gamma$ would be bounded below and $\tau\to\infty$, a
  contradiction. Hence $\tau(t)\to\infty$ and $s(t)\to e_i$.

Provenance: the lemma and its proof are derived for this project [D]; the paper
proves polarization only from a uniform $a(0)$ with strictly ordered
projections (paper-notes#logistic, [A]). The regions here need neither.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from .errors import InvalidArgument, check_choice, check_int
from ._models import get_link
from ._models import get_loss
from ._model import SymbolicModel
from .proof import ProofResult, prove_zero
from . import id_generic_model, id_generic_nf
from .id_generic_model import expand_finite
from .id_generic_nf import normal_form

#: LaTeX of the tau-system, for reports.
TAU_SYSTEM_LATEX = r"\frac{du}{d\tau}=b\,s,\quad \frac{da}{d\tau}=J(s)\,u,\quad s=\operatorname{softmax}(a)"

#: Region kinds accepted by :func:`trapping_region`.
REGION_KINDS = ("R", "a-only", "u-only")


# ---------------------------------------------------------------------------------------
# the system
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TauSystem:
    r"""The tau-system ($\star$) for ``n`` tokens with explicit symbols.

    ``u``, ``a``: ``n x 1`` matrices of real symbols (``a`` named as in
    :class:`SymbolicModel`, ``u_k`` for the projections); ``b``: positive symbol;
    ``s``: softmax of ``a`` (from the link definition); ``J``: its Jacobian,
    differentiated component by component; ``du = b s``, ``da = J u``.
    """

    n: int
    u: sp.Matrix
    a: sp.Matrix
    b: sp.Symbol
    s: sp.Matrix
    J: sp.Matrix
    du: sp.Matrix
    da: sp.Matrix

    def lie(self, expr) -> sp.Expr:
        r"""$\frac{d}{d\tau}\mathrm{expr}(u,a)$ along ($\star$) (chain rule, symbol by symbol)."""
        out = sp.Add(*[sp.diff(expr, uk) * duk for uk, duk in zip(self.u, self.du)])
        return out + sp.Add(*[sp.diff(expr, ak) * dak for ak, dak in zip(self.a, self.da)])

    @property
    def z(self) -> sp.Expr:
        return sp.Add(*[sk * uk for sk, uk in zip(self.s, self.u)])


@lru_cache(maxsize=None)
def tau_system(n: int) -> TauSystem:
    """Build ($\\star$) for ``n >= 2`` tokens from the softmax link's definition."""
    check_int("n", n, minimum=2)
    link = get_link("softmax")
    u = sp.Matrix([sp.Symbol(f"u_{k + 1}", real=True) for k in range(n)])
    a = sp.Matrix([sp.Symbol(f"a_{k + 1}", real=True) for k in range(n)])
    b = sp.Symbol("b", positive=True)
    s = link.phi(a)
    J = link.jacobian(a)
    return TauSystem(n, u, a, b, s, J, b * s, J * u)


def check_tau_reduction(n: int = 3, d: int = 2, *, wrong: bool = False) -> ProofResult:
    r"""Prove $\dot u=\gamma\,b\,s$ and $\dot a=\gamma\,J(s)\,u$ along the model's derived flow.

    $u=V^\top w$, $b=\|w\|^2$, $\gamma=-\ell'(\langle w,Vs\rangle)$, with the flow of
    :class:`SymbolicModel` ``('logistic', 'softmax', n, d)`` (scalar
    differentiation of the objective). ``wrong=True`` is the negative control: it
    drops the factor $b$ and must be disproved.
    """
    model = SymbolicModel("logistic", "softmax", n, d)
    ts = tau_system(n)
    w = model.target
    u_of_V = [sp.Add(*[model.V[k, j] * w[k] for k in range(d)]) for j in range(n)]
    b_of_w = sp.Add(*[wk**2 for wk in w])
    z = sp.Add(*[w[k] * model.beta[k] for k in range(d)])
    gamma = -get_loss("logistic").dell(z)
    _, da_model = model.flow()
    subs = {ts.b: b_of_w, **{uk: uV for uk, uV in zip(ts.u, u_of_V)}}
    factor = 1 if wrong else ts.b
    diffs = []
    for j in range(n):
        du_model = model.time_derivative(u_of_V[j])
        diffs.append(du_model - gamma * (factor * ts.s[j]).xreplace(subs))
        diffs.append(da_model[j] - gamma * ts.da[j].xreplace(subs))
    return prove_zero(_name_gamma(diffs, gamma))


def _name_gamma(exprs, gamma):
    r"""Replace every occurrence of $\gamma$ (a function of the margin) by one positive symbol.

    Sound: each replaced subexpression is first proven equal to ``gamma`` exactly
    (same function, arguments whose difference cancels to 0). Then the
    remaining expressions are rational in $e^{a_k}$ and ``prove_zero`` decides
    them exactly instead of by spot checks. If some occurrence does not match,
    the expressions are returned unchanged.
    """
    g = sp.Symbol("gamma", positive=True)
    head, arg = gamma.func, gamma.args[0]
    atoms = set().union(*[e.atoms(head) for e in exprs])
    if not atoms or any(sp.cancel(sp.together(x.args[0] - arg)) != 0 for x in atoms):
        return exprs
    mapping = {x: g for x in atoms}
    out = [e.xreplace(mapping) for e in exprs]
    return exprs if any(o.has(head) for o in out) else out


# ---------------------------------------------------------------------------------------
# regions and the sign checker
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrappingRegion:
    r"""$\{u_i\ge u_j\ (j\in U),\ a_i\ge a_j\ (j\in A)\}$ for a winner ``i`` (0-based).

    ``kind`` ``R``: $U=A=$ all $j\ne i$ (the lemma's region); ``a-only`` /
    ``u-only``: negative controls with one family of constraints dropped.
    """

    n: int
    winner: int
    kind: str
    u_constrained: tuple
    a_constrained: tuple

    def faces(self) -> list[tuple[str, int]]:
        """The constraints $x_i-x_j\\ge0$ as ``(x, j)`` pairs, ``x`` in ``'u'``, ``'a'``."""
        return [("u", j) for j in self.u_constrained] + [("a", j) for j in self.a_constrained]

    def describe(self) -> str:
        i = self.winner + 1
        parts = [f"u_{i} >= u_{j + 1}" for j in self.u_constrained]
        parts += [f"a_{i} >= a_{j + 1}" for j in self.a_constrained]
        return "{" + ", ".join(parts) + "}"


def trapping_region(n: int, winner: int, kind: str = "R") -> TrappingRegion:
    """The region of ``kind`` (see :class:`TrappingRegion`) for token ``winner`` (0-based)."""
    check_int("n", n, minimum=2)
    check_choice("kind", kind, REGION_KINDS)
    if isinstance(winner, bool) or not isinstance(winner, int) or not 0 <= winner < n:
        raise InvalidArgument(f"winner={winner!r} is not allowed; expected an integer in [0, {n - 1}]")
    others = tuple(j for j in range(n) if j != winner)
    u_c = others if kind in ("R", "u-only") else ()
    a_c = others if kind in ("R", "a-only") else ()
    return TrappingRegion(n, winner, kind, u_c, a_c)


@dataclass(frozen=True, init=False)
class SignCheck(ProofResult):
    r"""Outcome of deciding ``expr >= 0`` on a face or on a whole region: a :class:`ProofResult` that
    names what it decided (``what``); built as ``SignCheck(what, status, method, detail, counterexample)``.

    ``status``: ``proved`` (exact positivity certificate: numerator and
    denominator polynomials with only non-negative coefficients in non-negative
    variables, denominator with a monomial in strictly positive variables only),
    ``disproved`` (an exact rational point of the face/region where ``expr < 0``,
    in ``counterexample``) or ``undecided`` (never ``numeric``, so ``holds`` means proved).
    """

    what: str = ""

    def __init__(self, what: str, status: str, method: str, detail: str = "", counterexample: dict | None = None):
        for name, value in (("what", what), ("status", status), ("method", method), ("detail", detail),
                            ("counterexample", {} if counterexample is None else counterexample)):
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class _Coordinates:
    """Coordinates of a region: (substitution for u and exp(a), variable classes)."""

    u_sub: dict
    exp_sub: dict
    nonneg: tuple
    positive: tuple
    free: tuple
    face_zero: dict


def region_coordinates(region: TrappingRegion, ts: TauSystem) -> _Coordinates:
    r"""$u_j=U-p_j$ / $U+w_j$ and $e^{a_j}=E/(1+r_j)$ / $E\,E_j$ (constrained / free)."""
    i = region.winner
    U = sp.Symbol("U", real=True)
    E = sp.Symbol("E", positive=True)
    u_sub, exp_sub, nonneg, positive, free, face_zero = {ts.u[i]: U}, {ts.a[i]: E}, [], [E, ts.b], [U], {}
    for j in range(region.n):
        if j == i:
            continue
        if j in region.u_constrained:
            p = sp.Symbol(f"p_{j + 1}", nonnegative=True)
            u_sub[ts.u[j]] = U - p
            nonneg.append(p)
            face_zero[("u", j)] = p
        else:
            wj = sp.Symbol(f"w_{j + 1}", real=True)
            u_sub[ts.u[j]] = U + wj
            free.append(wj)
        if j in region.a_constrained:
            r = sp.Symbol(f"r_{j + 1}", nonnegative=True)
            exp_sub[ts.a[j]] = E / (1 + r)
            nonneg.append(r)
            face_zero[("a", j)] = r
        else:
            Ej = sp.Symbol(f"E_{j + 1}", positive=True)
            exp_sub[ts.a[j]] = E * Ej
            positive.append(Ej)
    return _Coordinates(u_sub, exp_sub, tuple(nonneg), tuple(positive), tuple(free), face_zero)


def replace_exp(expr, a_symbols, exp_sub):
    r"""Replace every $e^{\sum_k c_ka_k}$ ($c_k$ rational) by $\prod_k X_k^{c_k}$."""
    a_set = set(a_symbols)

    def conv(e):
        arg = sp.expand(e.args[0])
        poly = sp.Poly(arg, *a_symbols)
        if poly.total_degree() > 1 or poly.coeff_monomial(1) != 0 or (arg.free_symbols - a_set):
            raise ValueError(f"exp argument {arg} is not a linear form in the logits")
        out = sp.Integer(1)
        for ak in a_symbols:
            c = poly.coeff_monomial(ak)
            if c != 0:
                out *= exp_sub[ak] ** c
        return out

    return expr.replace(lambda e: isinstance(e, sp.exp), conv)


def _positivity_certificate(expr, nonneg, positive) -> tuple[bool, str]:
    """Exact sufficient test for ``expr >= 0`` when ``nonneg >= 0`` and ``positive > 0``."""
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    if num == 0:
        return True, "identically zero"
    variables = tuple(nonneg) + tuple(positive)
    extra = (num.free_symbols | den.free_symbols) - set(variables)
    if extra:
        return False, f"depends on sign-free variables {sorted(map(str, extra))}"
    pn, pd = sp.Poly(num, *variables), sp.Poly(den, *variables)
    if all(c <= 0 for c in pd.coeffs()):
        pn, pd = -pn, -pd
    if any(c < 0 for c in pd.coeffs()):
        return False, "denominator has coefficients of both signs"
    pos_idx = {variables.index(v) for v in positive}
    if not any(all(e == 0 or k in pos_idx for k, e in enumerate(mon)) for mon in pd.monoms()):
        return False, "denominator may vanish (no monomial in strictly positive variables only)"
    neg = [c for c in pn.coeffs() if c < 0]
    if neg:
        return False, f"numerator has {len(neg)} negative coefficient(s)"
    return True, (f"numerator: {len(pn.terms())} monomials, denominator: {len(pd.terms())} monomials, "
                  "all coefficients >= 0")


_SAMPLE_NONNEG = [sp.Integer(0), sp.Rational(1, 3), sp.Integer(1), sp.Integer(3), sp.Integer(10)]
_SAMPLE_POS = [sp.Rational(1, 10), sp.Rational(1, 2), sp.Integer(1), sp.Integer(2), sp.Integer(10)]
_SAMPLE_FREE = [sp.Integer(-3), sp.Integer(-1), sp.Integer(0), sp.Integer(1), sp.Integer(3)]


def _search_negative(expr, nonneg, positive, free, *, tries: int, seed: int):
    """Exact rational points (grid corners first, then seeded random) where ``expr < 0``."""
    variables = list(nonneg) + list(positive) + list(free)
    pools = ([_SAMPLE_NONNEG] * len(nonneg) + [_SAMPLE_POS] * len(positive) + [_SAMPLE_FREE] * len(free))
    rng = random.Random(seed)
    candidates = []
    if len(variables) <= 4:
        candidates = list(itertools.product(*pools))
    candidates += [tuple(rng.choice(p) for p in pools) for _ in range(tries)]
    f = sp.lambdify(variables, expr, modules=[{"exp": sp.exp}, "sympy"]) if variables else None
    for point in candidates:
        val = sp.nsimplify(f(*point)) if f is not None else expr
        val = sp.Rational(val) if val.is_Rational else sp.simplify(val)
        if val.is_negative:
            return dict(zip(variables, point)), val
    return None, None


def check_region_sign(region: TrappingRegion, var: str, j: int, *, on: str = "face",
                      tries: int = 400, seed: int = 0) -> SignCheck:
    r"""Decide $\frac{d}{d\tau}(x_i-x_j)\ge0$ on the face $x_i=x_j$ of ``region`` (or on all of it).

    ``var``: ``'u'`` or ``'a'``; ``on``: ``'face'`` (the constraint active, the others
    as inequalities) or ``'region'`` (everywhere in the region). The derivative is
    derived from :func:`tau_system`, rewritten in the region's coordinates, and
    either certified non-negative or refuted by an exact counterexample point.
    """
    check_choice("var", var, {"u", "a"})
    check_choice("on", on, {"face", "region"})
    i, n = region.winner, region.n
    if not (isinstance(j, int) and 0 <= j < n and j != i):
        raise InvalidArgument(f"j={j!r} is not allowed; expected a token index in [0, {n - 1}] other than {i}")
    ts = tau_system(n)
    x = ts.u if var == "u" else ts.a
    L = ts.lie(x[i] - x[j])
    co = region_coordinates(region, ts)
    if on == "face" and (var, j) not in co.face_zero:
        raise InvalidArgument(f"face ({var!r}, {j}) is not a face of region {region.describe()}")
    expr = replace_exp(L, list(ts.a), co.exp_sub).xreplace(co.u_sub)
    nonneg = list(co.nonneg)
    if on == "face":
        zero = co.face_zero[(var, j)]
        expr = expr.xreplace({zero: 0})
        nonneg.remove(zero)
    expr = sp.cancel(sp.together(expr))
    what = f"d/dtau ({var}_{i + 1} - {var}_{j + 1}) >= 0 on the {on} of {region.describe()}"
    used = expr.free_symbols
    nonneg = [v for v in nonneg if v in used]
    positive = [v for v in co.positive if v in used]
    free = [v for v in co.free if v in used]
    if not free:
        ok, detail = _positivity_certificate(expr, nonneg, positive)
        if ok:
            return SignCheck(what, "proved", "nonnegative-coefficients", detail)
    else:
        detail = f"depends on sign-free variables {[str(v) for v in free]}"
    point, val = _search_negative(expr, nonneg, positive, free, tries=tries, seed=seed)
    if point is not None:
        return SignCheck(what, "disproved", "counterexample",
                         f"{detail}; outward flow: derivative = {val} at an exact point",
                         _describe_point(point, region, ts, co, face=(var, j) if on == "face" else None))
    return SignCheck(what, "undecided", "none", detail)


def _describe_point(point, region, ts, co, face):
    """The counterexample in the original variables: u (with U=0), the weights s, b."""
    vals = dict(point)
    for z in co.face_zero.values():
        vals.setdefault(z, sp.Integer(0))
    vals.setdefault(sp.Symbol("U", real=True), sp.Integer(0))
    vals.setdefault(sp.Symbol("E", positive=True), sp.Integer(1))
    vals.setdefault(ts.b, sp.Integer(1))
    full = {**{s: sp.Integer(0) for s in co.nonneg + co.free}, **{s: sp.Integer(1) for s in co.positive}, **vals}
    u = [co.u_sub[uk].xreplace(full) for uk in ts.u]
    w = [co.exp_sub[ak].xreplace(full) for ak in ts.a]
    total = sp.Add(*w)
    out = {"u": [str(x) for x in u], "s": [str(x / total) for x in w], "b": str(full[ts.b])}
    out["a - a_winner"] = [str(sp.log(x / w[region.winner])) for x in w]
    if face is not None:
        out["face"] = f"{face[0]}_{region.winner + 1} = {face[0]}_{face[1] + 1}"
    return out


@dataclass(frozen=True)
class InvarianceCheck:
    """Every face of a region checked: ``holds`` iff each face derivative is proven >= 0."""

    region: TrappingRegion
    faces: tuple

    @property
    def holds(self) -> bool:
        return all(f.holds for f in self.faces)

    @property
    def counterexamples(self) -> list[SignCheck]:
        return [f for f in self.faces if f.status == "disproved"]


def check_invariance(region: TrappingRegion) -> InvarianceCheck:
    r"""Nagumo's condition on every face of a (polyhedral) region: the flow points inward.

    For a closed polyhedron $\{g_k\ge0\}$ and a locally Lipschitz field, forward
    invariance holds iff at every boundary point $\dot g_k\ge0$ for each active
    $k$; checking each face with the others as inequalities covers the corners.
    """
    return InvarianceCheck(region, tuple(check_region_sign(region, var, j, on="face") for var, j in region.faces()))


# ---------------------------------------------------------------------------------------
# identities and sign facts behind the lemma
# ---------------------------------------------------------------------------------------
def check_gap_identities(n: int, i: int = 0, j: int = 1) -> dict[str, ProofResult]:
    r"""Prove (D1), (D2) and $\frac{d}{d\tau}(u_i-u_j)=b\,s_i(1-e^{a_j-a_i})$ for the derived system.

    Also returns ``'D1 (wrong)'``: the negative control $(s_i-s_j)(u_i-z)+s_i(u_i-u_j)$
    (weight $s_i$ in place of $s_j$), which must be disproved. ``i`` and ``j`` must be two
    different token indices (for ``i == j`` every gap is 0 and both sides vanish, so the
    "proof" and its control would say nothing).
    """
    n = check_int("n", n, minimum=2, maximum=64)
    i = check_int("i", i, minimum=0, maximum=n - 1)
    j = check_int("j", j, minimum=0, maximum=n - 1)
    if i == j:
        raise InvalidArgument(f"i={i}, j={j}: expected two different token indices (i != j)")
    ts = tau_system(n)
    s, u, a, z = ts.s, ts.u, ts.a, ts.z
    d_agap = ts.lie(a[i] - a[j])
    d_ugap = ts.lie(u[i] - u[j])
    return {
        "D1": prove_zero(d_agap - ((s[i] - s[j]) * (u[i] - z) + s[j] * (u[i] - u[j]))),
        "D2": prove_zero((u[i] - z) - sp.Add(*[s[k] * (u[i] - u[k]) for k in range(n)])),
        "u-gap": prove_zero(d_ugap - ts.b * s[i] * (1 - sp.exp(a[j] - a[i]))),
        "D1 (wrong)": prove_zero(d_agap - ((s[i] - s[j]) * (u[i] - z) + s[i] * (u[i] - u[j]))),
    }


def check_case_split() -> dict[str, object]:
    r"""Size-generic sign argument for $s_i(u_i-z)-s_j(u_j-z)\ge0$ on $R_i$, in abstract symbols.

    Facts on $R_i$: $\delta:=s_i-s_j\ge0$, $m:=u_i-z\ge0$ (D2), $p:=u_i-u_j\ge0$,
    $s_j>0$. Returns SymPy's verdicts (``True`` = proven by the assumption system
    after substitution and expansion):

    * ``'decomposition'``: (D1) as an abstract identity (a :class:`ProofResult`);
    * ``'D1 >= 0'``: $\delta m+s_jp$ is non-negative;
    * ``'case u_j <= z'``: with $q:=z-u_j\ge0$, $s_i(u_i-z)-s_j(u_j-z)=s_i m+s_j q$;
    * ``'case u_j > z'``: with $q:=u_j-z>0$, $u_i-z=p+q$, the expression is $s_ip+\delta q$;
    * ``'control'``: without $a_i\ge a_j$ ($\delta$ of unknown sign) the same
      expression is *not* decided non-negative (must be ``None``/``False``).
    """
    si, sj, ui, uj, z = sp.symbols("s_i s_j u_i u_j z", real=True)
    expr = si * (ui - z) - sj * (uj - z)
    delta, m, p, q = sp.symbols("delta m p q", nonnegative=True)
    sjp = sp.Symbol("s_j", positive=True)
    qpos = sp.Symbol("q", positive=True)
    decomposition = prove_zero(expr - ((si - sj) * (ui - z) + sj * (ui - uj)))
    d1 = sp.expand(delta * m + sjp * p)
    # case u_j <= z: u_j = z - q, u_i = z + m, s_i = s_j + delta
    case1 = sp.expand(expr.xreplace({uj: z - q, ui: z + m, si: sjp + delta, sj: sjp}))
    # case u_j > z: u_j = z + q, u_i = u_j + p, s_i = s_j + delta
    case2 = sp.expand(expr.xreplace({uj: z + qpos, ui: z + qpos + p, si: sjp + delta, sj: sjp}))
    dfree = sp.Symbol("delta", real=True)
    control = sp.expand(expr.xreplace({uj: z + qpos, ui: z + qpos + p, si: sjp + dfree, sj: sjp}))
    return {
        "decomposition": decomposition,
        "D1 >= 0": d1.is_nonnegative,
        "case u_j <= z": case1.is_nonnegative,
        "case u_j > z": case2.is_nonnegative,
        "control": control.is_nonnegative,
    }


def check_winner_weight(n: int, i: int = 0, *, kind: str = "R") -> SignCheck:
    r"""Decide $n\,s_i-1\ge0$ on the region of ``kind`` (true on $R_i$; ``'u-only'`` is a control)."""
    region = trapping_region(n, i, kind)
    ts = tau_system(n)
    co = region_coordinates(region, ts)
    expr = sp.cancel(sp.together(replace_exp(n * ts.s[i] - 1, list(ts.a), co.exp_sub)))
    what = f"n s_{i + 1} >= 1 on {region.describe()}"
    used = expr.free_symbols
    nonneg = [v for v in co.nonneg if v in used]
    positive = [v for v in co.positive if v in used]
    ok, detail = _positivity_certificate(expr, nonneg, positive)
    if ok:
        return SignCheck(what, "proved", "nonnegative-coefficients", detail)
    point, val = _search_negative(expr, nonneg, positive, [], tries=200, seed=0)
    if point is not None:
        return SignCheck(what, "disproved", "counterexample", f"{detail}; value {val}",
                         _describe_point(point, region, ts, co, None))
    return SignCheck(what, "undecided", "none", detail)


def check_tie_invariance(n: int, i: int = 0, j: int = 1) -> ProofResult:
    r"""On the tie set $u_i=u_j$, $a_i=a_j$: both gap derivatives vanish (so the tie persists).

    This is why $R_i$ alone does not give $s\to e_i$ and certificates need
    $a_i>a_j$ strictly. Proven by substituting the tie into the derived derivatives.
    """
    ts = tau_system(n)
    tie = {ts.u[j]: ts.u[i], ts.a[j]: ts.a[i]}
    return prove_zero([ts.lie(ts.u[i] - ts.u[j]).xreplace(tie), ts.lie(ts.a[i] - ts.a[j]).xreplace(tie)])


# ---------------------------------------------------------------------------------------
# the strict region R_i^+: each step of the invariance argument, case by case
# ---------------------------------------------------------------------------------------
#: The steps of the lemma that are NOT machine-checked (stated plainly in certificates and reports): global
#: existence, assumed in Coq as the one axiom ``reduced_flow_global_existence`` (theorems/coq/Polarization.v).
ARGUED_BY_HAND = (
    "global existence of solutions (linear growth bounds; the Coq axiom reduced_flow_global_existence)",
)
#: The analytic steps proven in Coq for every n (theorems/coq), with the theorem that proves each.
PROVEN_IN_COQ = {
    "forward invariance of R_i^+ (continuation from the sign facts, by real induction)": "Trapping.invariance",
    "divergence a_i - a_j -> infinity inside R_i^+": "Trapping.divergence",
    "s -> e_i once every gap diverges": "Trapping.softmax_limit",
    "tau(t) -> infinity along the logistic flow, so the tau-limit is the t-limit": "Trapping.logistic_clock_diverges",
    "the whole lemma / the paper's theorem": "Trapping.softpolar_trapping / Polarization.softpolar_polarization",
}


def _strict_positivity_certificate(expr, nonneg, positive) -> tuple[bool, str]:
    """Exact sufficient test for ``expr > 0`` when ``nonneg >= 0`` and ``positive > 0``.

    As :func:`_positivity_certificate`, and moreover the numerator has a monomial in strictly
    positive variables only (with a positive coefficient), so it cannot vanish.
    """
    ok, detail = _positivity_certificate(expr, nonneg, positive)
    if not ok or detail == "identically zero":
        return False, detail if not ok else "identically zero (not strictly positive)"
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    variables = tuple(nonneg) + tuple(positive)
    pn, pd = sp.Poly(num, *variables), sp.Poly(den, *variables)
    if all(c <= 0 for c in pd.coeffs()):
        pn = -pn
    pos_idx = {variables.index(v) for v in positive}
    if not any(c > 0 and all(e == 0 or k in pos_idx for k, e in enumerate(mon)) for mon, c in pn.terms()):
        return False, "numerator may vanish (no monomial in strictly positive variables only)"
    return True, detail + "; the numerator has a monomial in strictly positive variables only"


def _decide(expr, region: TrappingRegion, ts: TauSystem, *, strict_r=(), zero=(), strict=False, what=""):
    r"""Decide ``expr >= 0`` (``> 0`` if ``strict``) on ``region`` in its coordinates.

    ``strict_r``: tokens $j$ whose $a_i>a_j$ is strict ($r_j>0$, the region $R_i^+$);
    ``zero``: faces ``(var, j)`` set active (``x_i = x_j``). ``disproved`` comes with an exact point.
    """
    co = region_coordinates(region, ts)
    e = replace_exp(expr, list(ts.a), co.exp_sub).xreplace(co.u_sub)
    nonneg, positive = list(co.nonneg), list(co.positive)
    for face in zero:
        z = co.face_zero[face]
        e = e.xreplace({z: 0})
        nonneg.remove(z)
    for j in strict_r:
        r = co.face_zero[("a", j)]
        if r in nonneg:
            nonneg.remove(r)
            positive.append(r)
    e = sp.cancel(sp.together(e))
    used = e.free_symbols
    nonneg = [v for v in nonneg if v in used]
    positive = [v for v in positive if v in used]
    free = [v for v in co.free if v in used]
    if not free:
        ok, detail = (_strict_positivity_certificate if strict else _positivity_certificate)(e, nonneg, positive)
        if ok:
            return SignCheck(what, "proved", "nonnegative-coefficients" + (" (strict)" if strict else ""), detail)
    else:
        detail = f"depends on sign-free variables {[str(v) for v in free]}"
    point, val = _search_negative(e, nonneg, positive, free, tries=200, seed=0)
    if point is None and strict:  # look for a zero: a point where strict positivity fails
        for cand in itertools.product(*([_SAMPLE_NONNEG] * len(nonneg) + [_SAMPLE_POS] * len(positive))):
            if len(nonneg) + len(positive) > 4:
                break
            val0 = sp.simplify(e.xreplace(dict(zip(nonneg + positive, cand))))
            if val0 == 0:
                point, val = dict(zip(nonneg + positive, cand)), val0
                break
    if point is not None:
        return SignCheck(what, "disproved", "counterexample", f"{detail}; value {val} at an exact point",
                         _describe_point(point, region, ts, region_coordinates(region, ts), None))
    return SignCheck(what, "undecided", "none", detail)


def check_strict_region(n: int, i: int = 0) -> dict[str, SignCheck]:
    r"""The sign facts behind "$R_i^+$ is forward invariant" and "$a_i-a_j\to\infty$", case by case.

    For each $j\ne i$ (coordinates of :func:`check_region_sign`: $u_j=u_i-p_j$,
    $e^{a_j}=e^{a_i}/(1+r_j)$, $p_j,r_j\ge0$ on $R_i$, $r_j>0$ on $R_i^+$), proven with exact
    positivity certificates:

    * ``case a_i > a_j, u_i = u_j (face of R_i^+)``: $\frac{d}{d\tau}(u_i-u_j)>0$ **strictly** on
      the face $p_j=0$ with $r_j>0$: the flow enters $R_i^+$ there (it cannot leave through
      this face);
    * ``case a_i = a_j``: this face is not part of $\overline{R_i^+}$ reachable from inside:
      $\frac{d}{d\tau}(a_i-a_j)\ge0$ on all of $R_i$, so $a_i-a_j$ cannot decrease while the
      solution is in $R_i$ (the a-gap stays $\ge$ its value at entry, $>0$);
    * ``case u_i > u_j, a_i > a_j (interior)``: nothing to check (open conditions);
    * ``u-gap rate``: $\frac{d}{d\tau}(u_i-u_j)\ge\frac bn(1-e^{-(a_i-a_j)})$ on $R_i$ (with
      $ns_i\ge1$; gives $\kappa_j$ of the lemma);
    * ``a-gap rate``: $\frac{d}{d\tau}(a_i-a_j)\ge s_j(u_i-u_j)$ on $R_i$ (from (D1): the other
      term $(s_i-s_j)(u_i-z)\ge0$ by the case split of :func:`check_case_split`);
    * controls (must be ``disproved``): strictness on the *closed* region ($r_j=0$ allowed)
      and the a-gap rate with $s_i$ in place of $s_j$.

    What these facts do not give by themselves (the continuation to all $\tau$, the
    divergence by contradiction, $\tau(t)\to\infty$) is :data:`ARGUED_BY_HAND`.
    """
    check_int("n", n, minimum=2)
    R = trapping_region(n, i, "R")
    ts = tau_system(n)
    out = {}
    for j in range(n):
        if j == i:
            continue
        du = ts.lie(ts.u[i] - ts.u[j])
        da = ts.lie(ts.a[i] - ts.a[j])
        gap_exp = sp.exp(ts.a[j] - ts.a[i])
        tag = f"j={j + 1}"
        out[f"{tag}: case a_i > a_j, u_i = u_j (face of R_i^+): d/dtau (u_i - u_j) > 0"] = _decide(
            du, R, ts, strict_r=(j,), zero=(("u", j),), strict=True,
            what=f"d/dtau (u_{i + 1} - u_{j + 1}) > 0 on u_{i + 1} = u_{j + 1}, a_{i + 1} > a_{j + 1}")
        out[f"{tag}: case a_i = a_j: d/dtau (a_i - a_j) >= 0 on R_i (a-gap never decreases)"] = _decide(
            da, R, ts, what=f"d/dtau (a_{i + 1} - a_{j + 1}) >= 0 on R_{i + 1}")
        out[f"{tag}: u-gap rate d/dtau (u_i - u_j) >= (b/n)(1 - e^(a_j - a_i)) on R_i"] = _decide(
            du - ts.b / n * (1 - gap_exp), R, ts, what=f"u-gap rate for j={j + 1}")
        out[f"{tag}: a-gap rate d/dtau (a_i - a_j) >= s_j (u_i - u_j) on R_i"] = _decide(
            da - ts.s[j] * (ts.u[i] - ts.u[j]), R, ts, what=f"a-gap rate for j={j + 1}")
        out[f"{tag}: strictness on the closed face a_i >= a_j (control)"] = _decide(
            du, R, ts, zero=(("u", j),), strict=True,
            what=f"d/dtau (u_{i + 1} - u_{j + 1}) > 0 on u_{i + 1} = u_{j + 1}, a_{i + 1} >= a_{j + 1}")
        if n >= 3:
            out[f"{tag}: a-gap rate with s_i for s_j (control)"] = _decide(
                da - ts.s[i] * (ts.u[i] - ts.u[j]), R, ts, what=f"wrong a-gap rate for j={j + 1}")
    return out


# ---------------------------------------------------------------------------------------
# the whole lemma
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LemmaCheck:
    """One line of :func:`prove_trapping_lemma`: ``expected`` is what a correct lemma gives."""

    name: str
    status: str
    expected: str
    detail: str

    @property
    def ok(self) -> bool:
        return self.status == self.expected


@dataclass(frozen=True)
class TrappingLemmaReport:
    """All checks of the trapping-region lemma; ``holds`` iff every check has its expected status."""

    checks: tuple
    provenance: str = "D"

    @property
    def holds(self) -> bool:
        return all(c.ok for c in self.checks)


def _status(x) -> str:
    if isinstance(x, ProofResult):
        return x.status
    return {True: "proved", False: "disproved", None: "undecided"}[x]


def prove_trapping_lemma(ns=(2, 3, 4), *, reduction_size=(3, 2)) -> TrappingLemmaReport:
    r"""Run every symbolic check of the lemma for the token counts ``ns`` (winner $i=1$).

    Expected statuses: ``proved`` for the lemma's facts, ``disproved`` for the
    negative controls (``a-only`` / ``u-only`` regions, the wrong (D1), the wrong
    reduction), ``undecided`` for the abstract control of :func:`check_case_split`.
    Cost grows quickly with $n$ (the certificates expand rational functions in
    $2(n-1)$ variables): $n\le5$ takes seconds.
    """
    checks = []

    def add(name, res, expected):
        detail = getattr(res, "detail", "") if not isinstance(res, bool | type(None)) else ""
        cex = getattr(res, "counterexample", None)
        if cex:
            detail = f"{detail} {cex}"
        checks.append(LemmaCheck(name, _status(res), expected, detail))

    n_red, d_red = reduction_size
    add(f"reduction (n={n_red}, d={d_red})", check_tau_reduction(n_red, d_red), "proved")
    add(f"reduction without b (n={n_red}, d={d_red}, control)", check_tau_reduction(n_red, d_red, wrong=True),
        "disproved")
    for name, res in check_case_split().items():
        add(f"generic: {name}", res, "undecided" if name == "control" else "proved")
    for n in ns:
        for name, res in check_gap_identities(n).items():
            add(f"n={n}: {name}", res, "disproved" if "wrong" in name else "proved")
        R = trapping_region(n, 0, "R")
        for face in check_invariance(R).faces:
            add(f"n={n}: face {face.what}", face, "proved")
        for var in ("u", "a"):
            for j in range(1, n):
                add(f"n={n}: region", check_region_sign(R, var, j, on="region"), "proved")
        add(f"n={n}: winner weight", check_winner_weight(n), "proved")
        for name, res in check_strict_region(n).items():
            add(f"n={n}: R_1^+ {name}", res, "disproved" if "control" in name else "proved")
        add(f"n={n}: winner weight on u-only (control)", check_winner_weight(n, kind="u-only"), "disproved")
        add(f"n={n}: tie set invariant", check_tie_invariance(n), "proved")
        for kind in ("a-only", "u-only"):
            inv = check_invariance(trapping_region(n, 0, kind))
            add(f"n={n}: {kind} region invariant (control)", inv.counterexamples[0] if inv.counterexamples
                else inv.faces[0], "disproved")
    return TrappingLemmaReport(tuple(checks))


# ---------------------------------------------------------------------------------------
# the sign facts for every n at once
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GenericSignFact:
    """One sign fact of :func:`check_sign_facts_generic`: ``status`` proved / disproved / undecided."""

    name: str
    status: str
    detail: str
    counterexample: dict | None = None


#: The sign atoms on $R_i$ (token $k$ any, $i$ the winner): what the region's definition gives directly.
#: ``1 - e^{a_k - a_i}`` is > 0 exactly for the tokens with $a_i > a_k$ (those listed as strict, $R_i^+$).
SIGN_ATOMS = {
    "b": ">0: b = ||w||^2 > 0",
    "s": ">0: s_k = e^{a_k} / sum_l e^{a_l} > 0",
    "inv_n": ">0: 1/n",
    "ugap": ">=0: u_i - u_k >= 0 on R_i (0 for k = i)",
    "agap": ">=0: 1 - e^{a_k - a_i} >= 0 on R_i (a_k <= a_i, exp increasing); > 0 where a_i > a_k",
    "lead": ">=0: u_i - z >= 0 on R_i (fact D2 below: a sum of atoms s_k (u_i - u_k))",
}


def _generic_tau():
    r"""The tau-system in index notation for symbolic $n$: $u'_m=b\,s_m$, $a'_m=(J(s)u)_m$."""
    G, N = id_generic_model, id_generic_nf.N
    u = sp.IndexedBase("u", real=True)
    b = sp.Symbol("b", positive=True)
    i, j = sp.symbols("i j", integer=True, positive=True)
    k = G.fresh("k")
    z = sp.Sum(G.s(k) * u[k], (k, 1, N))

    def a_dot(m):
        kk = G.fresh("k")
        return sp.Sum(G.J_softmax(m, kk) * u[kk], (kk, 1, N))

    def u_dot(m):
        return b * G.s(m)

    return G, N, u, b, i, j, z, u_dot, a_dot


def _atom(name, arg, ctx):
    G, N, u, b, i, j, z = ctx[:7]
    return {"b": lambda: b, "s": lambda: G.s(arg), "inv_n": lambda: 1 / N, "ugap": lambda: u[i] - u[arg],
            "agap": lambda: 1 - sp.exp(G.a[arg] - G.a[i]), "lead": lambda: u[i] - z}[name]()


def _decomposition_value(terms, ctx):
    """The expression of a decomposition: ``terms`` = [(c >= 0 rational, summed over k?, [(atom, arg), ...])]."""
    N = ctx[1]
    out = []
    for c, summed, factors in terms:
        k = sp.Dummy("k", integer=True, positive=True)
        body = sp.Mul(*[_atom(name, k if arg == "k" else arg, ctx) for name, arg in factors])
        out.append(c * (sp.Sum(body, (k, 1, N)) if summed else body))
    return sp.Add(*out)


def _decomposition_sign(terms, ctx, strict_tokens) -> str:
    """'>0', '>=0', or why not: every coefficient >= 0 and every factor a sign atom of :data:`SIGN_ATOMS`."""
    signs = []
    for c, summed, factors in terms:
        if not (sp.Rational(c) >= 0):
            return f"coefficient {c} < 0"
        term = ">0" if c > 0 else ">=0"
        for name, arg in factors:
            if name not in SIGN_ATOMS:
                return f"{name} is not a sign atom"
            s = SIGN_ATOMS[name].split(":")[0]
            if name == "agap" and arg in strict_tokens and not summed:
                s = ">0"
            if s not in (">0", ">=0"):
                return f"the atom {name} has no sign ({s})"
            if s != ">0":
                term = ">=0"
        signs.append(term)
    if not signs:
        return ">=0"  # the empty sum: 0
    return ">0" if ">0" in signs else ">=0"


def check_sign_facts_generic(*, wrong: str | None = None) -> dict[str, GenericSignFact]:
    r"""The sign facts of :func:`check_strict_region`, proven for **every** $n\ge2$ at once [D].

    Each fact is ``target`` (a derivative along the tau-system, written with sums of symbolic
    length $n$ and free token indices $i$, $j$) with a *decomposition*: a sum, with non-negative
    rational coefficients, of products of the sign atoms :data:`SIGN_ATOMS` (possibly summed over a
    token $k$). Two checks, both exact: the index normal form (:mod:`theorems.id_generic_nf`)
    proves ``target - decomposition = 0`` for every $n$ and every $i,j$ in range, and the sign of the
    decomposition follows from the atoms' signs alone (a product of atoms $>0$ is $>0$, with one
    atom $\ge0$ it is $\ge0$; a sum of such terms is $\ge0$, $>0$ when one term is). The facts:

    * ``a' = s (u - z)``: the index form of $a'=J(s)u$ ($J$ the structured softmax Jacobian);
    * ``D2``: $u_i-z=\sum_ks_k(u_i-u_k)\ge0$ on $R_i$;
    * ``face``: $\frac{d}{d\tau}(u_i-u_j)=b\,s_i(1-e^{a_j-a_i})>0$ where $a_i>a_j$;
    * ``D1``: $\frac{d}{d\tau}(a_i-a_j)=s_i(1-e^{a_j-a_i})(u_i-z)+s_j(u_i-u_j)\ge0$ on $R_i$;
    * ``winner weight``: $n s_i-1=n\sum_k\frac1n s_i(1-e^{a_k-a_i})\ge0$;
    * ``u-gap rate``: $\frac{d}{d\tau}(u_i-u_j)-\frac bn(1-e^{a_j-a_i})$
      $=b(1-e^{a_j-a_i})\sum_k\frac1n s_i(1-e^{a_k-a_i})\ge0$;
    * ``a-gap rate``: $\frac{d}{d\tau}(a_i-a_j)-s_j(u_i-u_j)=s_i(1-e^{a_j-a_i})(u_i-z)\ge0$.

    ``wrong`` plants the negative controls of :func:`check_strict_region` (each must *not* be
    proved): ``"closed face"`` asks for the strict face sign without $a_i>a_j$, ``"s_i rate"`` the
    a-gap rate with $s_i$ in place of $s_j$ (then an exact point at $n=3$ with a negative value is
    searched). The atoms themselves are the definition of $R_i$ and of softmax, not checked further.
    """
    ctx = _generic_tau()
    G, N, u, b, i, j, z, u_dot, a_dot = ctx
    ranges = {i: N, j: N}
    m = sp.Symbol("m", integer=True, positive=True)
    sfac = [("s", i), ("agap", j)]  # s_i - s_j = s_i (1 - e^{a_j - a_i})
    facts = [
        # name, target, decomposition (None: an identity = 0), required sign, strict tokens, extra ranges
        ("a' = s (u - z)", a_dot(m) - G.s(m) * (u[m] - z), None, None, (), {m: N}),
        ("D2: u_i - z >= 0 on R_i", u[i] - z, [(1, True, [("s", "k"), ("ugap", "k")])], ">=0", (), {}),
        ("face: d/dtau (u_i - u_j) > 0 where a_i > a_j", u_dot(i) - u_dot(j), [(1, False, [("b", None)] + sfac)],
         ">0", (j,), {}),
        ("D1: d/dtau (a_i - a_j) >= 0 on R_i", a_dot(i) - a_dot(j),
         [(1, False, sfac + [("lead", None)]), (1, False, [("s", j), ("ugap", j)])], ">=0", (), {}),
        ("winner weight: n s_i - 1 >= 0 on R_i", N * G.s(i) - 1, [(1, True, [("s", i), ("agap", "k")])], ">=0", (),
         {}),
        ("u-gap rate: d/dtau (u_i - u_j) >= (b/n)(1 - e^(a_j - a_i)) on R_i",
         u_dot(i) - u_dot(j) - b / N * (1 - sp.exp(G.a[j] - G.a[i])),
         [(1, True, [("b", None), ("agap", j), ("inv_n", None), ("s", i), ("agap", "k")])], ">=0", (), {}),
        ("a-gap rate: d/dtau (a_i - a_j) >= s_j (u_i - u_j) on R_i", a_dot(i) - a_dot(j) - G.s(j) * (u[i] - u[j]),
         [(1, False, sfac + [("lead", None)])], ">=0", (), {}),
    ]
    if wrong == "closed face":
        facts = [(nm + " (control: a_i >= a_j only)", t, dec, sign, (), rg) for nm, t, dec, sign, st, rg in facts
                 if nm.startswith("face")]
    elif wrong == "s_i rate":
        facts = [("a-gap rate with s_i for s_j (control)", a_dot(i) - a_dot(j) - G.s(i) * (u[i] - u[j]),
                  [(1, False, sfac + [("lead", None)])], ">=0", (), {})]
    elif wrong is not None:
        raise InvalidArgument(f"wrong={wrong!r} is not allowed; expected None, 'closed face' or 's_i rate'")
    out = {}
    if wrong is None:
        out["bridge"] = _generic_bridge(ctx)
    for name, target, dec, sign, strict, extra in facts:
        value = 0 if dec is None else _decomposition_value(dec, ctx)
        residue = normal_form(target - value, {**ranges, **extra})
        if residue:
            cex = _generic_counterexample(target, ctx) if wrong else None
            out[name] = GenericSignFact(name, "disproved" if cex else "undecided",
                                        "target - decomposition does not reduce to 0 in the index normal form",
                                        cex)
            continue
        if dec is None:
            out[name] = GenericSignFact(name, "proved", "an identity for every n (index normal form)")
            continue
        got = _decomposition_sign(dec, ctx, strict)
        if got == sign or (sign == ">=0" and got == ">0"):
            out[name] = GenericSignFact(name, "proved", f"for every n: target = decomposition (index normal form), "
                                        f"a sum of products of sign atoms, hence {sign}")
        elif wrong == "closed face" and not normal_form(target.xreplace({G.a[j]: G.a[i]}), ranges):
            out[name] = GenericSignFact(name, "disproved", f"the decomposition is only {got}, and on a_i = a_j "
                                        "the target is exactly 0 for every n (index normal form): not > 0",
                                        {"witness": "any point with a_i = a_j, u_i = u_j"})
        else:
            out[name] = GenericSignFact(name, "undecided", f"the decomposition is only {got}, not {sign}")
    return out


def _generic_bridge(ctx, sizes=(2, 3, 4)) -> GenericSignFact:
    """The index forms of u' and a' equal :func:`tau_system`'s (built from the softmax link) at ``sizes``."""
    G, N, u, b, i, j, z, u_dot, a_dot = ctx

    diffs = []
    for n in sizes:
        ts = tau_system(n)
        sub = {u[k + 1]: ts.u[k] for k in range(n)} | {G.a[k + 1]: ts.a[k] for k in range(n)} | {b: ts.b}
        for m in range(1, n + 1):
            diffs.append(expand_finite(u_dot(m).xreplace({N: n})).xreplace(sub) - ts.du[m - 1])
            diffs.append(expand_finite(a_dot(m).xreplace({N: n})).xreplace(sub) - ts.da[m - 1])
    res = prove_zero(diffs)
    return GenericSignFact("bridge", res.status, f"the index forms u' = b s, a' = J(s) u equal tau_system(n) "
                           f"(the softmax link's definition) at n = {', '.join(map(str, sizes))} ({res.method})")


def _generic_counterexample(target, ctx, tries: int = 60):
    """An exact point at n = 3 (i = 1, j = 2) in R_1 where ``target`` is negative, or None."""
    G, N, u, b, i, j = ctx[:6]

    e = expand_finite(target.xreplace({N: 3, i: 1, j: 2}))
    rng = random.Random(0)
    for _ in range(tries):
        uu = [sp.Integer(rng.randint(0, 4))]
        uu += [uu[0] - rng.randint(0, 4) for _ in range(2)]
        aa = [sp.Integer(0)] + [-sp.Integer(rng.randint(0, 3)) for _ in range(2)]
        pt = {u[k + 1]: uu[k] for k in range(3)} | {G.a[k + 1]: aa[k] for k in range(3)} | {b: 1}
        val = sp.nsimplify(e.xreplace(pt))
        if sp.N(val, 30) < 0:
            return {"n": 3, "i": 1, "j": 2, "u": [str(x) for x in uu], "a": [str(x) for x in aa], "b": 1,
                    "value": str(sp.simplify(val))}
    return None
