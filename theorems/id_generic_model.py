r"""The value-softmax model in index notation, for *every* $n$ and $d$.

The same definitions as :class:`theorems.SymbolicModel`, written with ``Indexed``
entries and sums of symbolic length (:data:`N` tokens, :data:`D` outputs, :data:`M`
rows of a design matrix):

* link $\varphi_i=h(a_i)/Z$, $Z=\sum_{l=1}^nh(a_l)$ (normalized; an *undefined*
  differentiable generator $h$ covers softmax, l2-, sum-, and, on $a_i>0$, relu- and
  l1-norm), $\varphi_i=h(a_i)$ (elementwise, e.g. sigmoid), and softmax with $h=\exp$;
* output $\beta_k=\sum_{j=1}^nV_{kj}\varphi_j$;
* losses: logistic $\ell(\sum_kw_k\beta_k)$ with the package's own $\ell$
  (:attr:`theorems.Loss.ell`), square $\tfrac12\sum_k(\beta_k-y_k)^2$ ($X=I$) or
  $\tfrac12\sum_r(\sum_kX_{rk}\beta_k-y_r)^2$, kl $-\sum_kp_k(\beta_k-\log\sum_le^{\beta_l})$;
* structured forms: $g_k$ (closed gradient), $J_{jm}$ (structured Jacobian),
  $\dot V_{pq}=-g_p\varphi_q$, $\dot a_m=-\sum_jJ_{jm}\sum_kV_{kj}g_k$.

The *derived* flow is SymPy's ``diff`` of the objective by ``V[p, q]`` and ``a[m]`` with
free indices $p,q,m$. :func:`bridge` instantiates these index forms at concrete sizes
and proves them equal to :class:`theorems.SymbolicModel`'s objective and structured
flow, so the generic statements are about the very definitions the rest of the package
(and the generated numerics) use.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from .id_generic_nf import D, M, N
from ._models import get_link, get_loss
from ._model import SymbolicModel
from .proof import decide

IDX = dict(zip("ijklopqrtu", sp.symbols("i j k l o p q r t u", integer=True, positive=True)))
i_, j_, k_, l_, o_, p_, q_, r_, t_, u_ = IDX.values()
a = sp.IndexedBase("a", real=True)
V = sp.IndexedBase("V", real=True)
w = sp.IndexedBase("w", real=True)
y = sp.IndexedBase("y", real=True)
p = sp.IndexedBase("p", positive=True)
X = sp.IndexedBase("X", real=True)
c = sp.IndexedBase("c", real=True)
g = sp.IndexedBase("g", real=True)   # an arbitrary vector in place of the loss gradient
bb = sp.IndexedBase("b", real=True)  # a free point beta of the loss (loss.gradient)
h = sp.Function("h")
_z = sp.Symbol("z", real=True)


def S(body, idx, hi):
    """``Sum(body, (idx, 1, hi))``."""
    return sp.Sum(body, (idx, 1, hi))


def fresh(name: str = "t") -> sp.Dummy:
    """A fresh summation index: a sum over it can never capture an index the caller passes in."""
    return sp.Dummy(name, integer=True, positive=True)


def delta(x, y_):
    return sp.KroneckerDelta(x, y_)


def pdiff(expr, var):
    """``diff(expr, var)`` for an ``Indexed`` ``var`` whose index symbols are bound by no sum of ``expr``.

    Differentiating by ``a[k]`` inside ``Sum(..., (k, 1, n))`` would silently mix a free and a bound $k$.
    """
    bound = {lim[0] for sm in sp.sympify(expr).atoms(sp.Sum) for lim in sm.limits}
    clash = set(var.indices) & bound
    if clash:
        raise ValueError(f"d/d{var}: the index {sorted(map(str, clash))} is also a summation variable")
    return sp.diff(expr, var)


# ---- links ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GLink:
    """A link in index notation: ``kind`` is ``normalized`` or ``elementwise``; ``gen`` the generator."""

    name: str
    kind: str
    gen: object  # callable x -> expression

    def H(self, i):
        return self.gen(a[i])

    def Z(self):
        return S(self.gen(a[l_]), l_, N)

    def phi(self, i):
        return self.H(i) / self.Z() if self.kind == "normalized" else self.H(i)

    def dh(self, i):
        """$h'(a_i)$ as SymPy's ``diff`` writes it (``Derivative(h(a[i]), a[i])`` for an undefined $h$)."""
        return pdiff(self.H(i), a[i])

    def J(self, j, m, *, with_norm_term: bool = True):
        r"""Structured $J_{jm}=\partial\varphi_j/\partial a_m$ (``with_norm_term=False``: the term toggled)."""
        if self.kind == "normalized":
            out = delta(j, m) * self.dh(j)
            if with_norm_term:
                out -= self.phi(j) * self.dh(m)
            return out / self.Z()
        out = delta(j, m) * self.dh(j)
        if not with_norm_term:
            out -= self.phi(j) * self.dh(m)
        return out


LINK_NORMALIZED = GLink("normalized (any h)", "normalized", h)
LINK_ELEMENTWISE = GLink("elementwise (any h)", "elementwise", h)
SOFTMAX = GLink("softmax", "normalized", sp.exp)
GENERIC_LINKS = (SOFTMAX, LINK_NORMALIZED, LINK_ELEMENTWISE)


def s(i):
    """$s_i=e^{a_i}/\\sum_le^{a_l}$."""
    return SOFTMAX.phi(i)


def J_softmax(j, m, power: int = 1):
    r"""$(J^{power})_{jm}$, $J=\operatorname{diag}(s)-ss^\top$ (the structured softmax Jacobian)."""
    if power == 1:
        return SOFTMAX.J(j, m)
    t = fresh()
    return S(J_softmax(j, t) * J_softmax(t, m), t, N)


def beta(link: GLink, k, Vf=None):
    """$\\beta_k=\\sum_jV_{kj}\\varphi_j$ (``Vf(k, j)`` replaces $V_{kj}$, e.g. on the rank-one set)."""
    Vf = Vf or (lambda kk, jj: V[kk, jj])
    jj = fresh("j")
    return S(Vf(k, jj) * link.phi(jj), jj, N)


# ---- losses --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GLoss:
    """A loss in index notation: ``value(b)`` and closed gradient ``grad(b, k)``; ``b(k)`` gives $\\beta_k$."""

    name: str      # logistic | square | kl
    design: str    # identity | symbolic (square only)

    def value(self, b):
        if self.name == "logistic":
            return get_loss("logistic").ell(S(w[k_] * b(k_), k_, D))
        if self.name == "square":
            if self.design == "identity":
                return S((b(k_) - y[k_]) ** 2, k_, D) / 2
            return S((S(X[r_, k_] * b(k_), k_, D) - y[r_]) ** 2, r_, M) / 2
        return -S(p[k_] * (b(k_) - sp.log(S(sp.exp(b(l_)), l_, D))), k_, D)

    def grad(self, b, k):
        if self.name == "logistic":
            return get_loss("logistic").dell(S(w[o_] * b(o_), o_, D)) * w[k]
        if self.name == "square":
            if self.design == "identity":
                return b(k) - y[k]
            return S(X[r_, k] * (S(X[r_, o_] * b(o_), o_, D) - y[r_]), r_, M)
        return S(p[o_], o_, D) * sp.exp(b(k)) / S(sp.exp(b(o_)), o_, D) - p[k]

    @property
    def label(self) -> str:
        return self.name + (" (X = I)" if self.name == "square" and self.design == "identity" else
                            " (any design X)" if self.name == "square" else "")


LOSSES = (GLoss("logistic", "identity"), GLoss("square", "identity"), GLoss("square", "symbolic"),
          GLoss("kl", "identity"))


# ---- flows -------------------------------------------------------------------------------------
def objective(loss: GLoss, link: GLink, Vf=None):
    """$F(V,a)=\\mathcal L(V\\varphi(a))$."""
    return loss.value(lambda k: beta(link, k, Vf))


def derived_flow(loss: GLoss, link: GLink):
    r"""$(\dot V_{pq},\dot a_m)=(-\partial F/\partial V_{pq},-\partial F/\partial a_m)$ with free $p,q,m$."""
    F = objective(loss, link)
    return -pdiff(F, V[p_, q_]), -pdiff(F, a[u_])


def grad_at_beta(loss: GLoss, link: GLink, k, Vf=None):
    """$g_k=\\nabla\\mathcal L(\\beta)_k$ in closed form at $\\beta=V\\varphi(a)$."""
    return loss.grad(lambda kk: beta(link, kk, Vf), k)


def structured_flow(link: GLink, gk, *, with_norm_term: bool = True, sign: int = 1, Vf=None):
    r"""Functions ``(Vdot(p, q), adot(m))`` of the structured flow with gradient ``gk(k)``.

    $\dot V_{pq}=-g_p\varphi_q$, $\dot a_m=-\sum_jJ_{jm}\sum_kV_{kj}g_k$; ``sign=-1`` flips $\dot V$
    (a negative control), ``with_norm_term=False`` toggles the normalization term of $J$.
    """
    Vf = Vf or (lambda kk, jj: V[kk, jj])

    def Vdot(pp, qq):
        return -sign * gk(pp) * link.phi(qq)

    def adot(mm):
        jj, kk = sp.Dummy("j", integer=True, positive=True), sp.Dummy("k", integer=True, positive=True)
        return -S(link.J(jj, mm, with_norm_term=with_norm_term) * S(Vf(kk, jj) * gk(kk), kk, D), jj, N)

    return Vdot, adot


def time_derivative(expr, flow, Vf=None):
    r"""The chain rule along ``flow``.

    $\frac{d}{dt}e=\sum_{p,q}\partial_{V_{pq}}e\,\dot V_{pq}+\sum_m\partial_{a_m}e\,\dot a_m$.

    ``flow`` is ``(Vdot(p, q), adot(m))``. ``Vf`` (rank-one set): evaluate the result at $V=$ ``Vf``.
    """
    Vdot, adot = flow
    pp, qq, mm = (sp.Dummy(x, integer=True, positive=True) for x in "pqm")
    out = S(S(pdiff(expr, V[pp, qq]) * Vdot(pp, qq), pp, D), qq, N) + S(pdiff(expr, a[mm]) * adot(mm), mm, N)
    return on_rank_one(out, Vf) if Vf else out


def on_rank_one(expr, Vf):
    """``expr`` with every $V_{kj}$ replaced by ``Vf(k, j)``."""
    return expr.replace(lambda e: isinstance(e, sp.Indexed) and e.base == V, lambda e: Vf(*e.indices))


def rank_one(k, j):
    """$V=yc^\\top$."""
    return y[k] * c[j]


# ---- bridge to the concrete definitions ---------------------------------------------------------
def expand_finite(e):
    """Every ``Sum`` with integer limits written out term by term (``Sum.doit`` is far slower)."""
    e = sp.sympify(e)
    if e.is_Atom:
        return e
    if isinstance(e, sp.Sum):
        body = expand_finite(e.function)  # inner sums first: they may rebind the same symbol
        for v, lo, hi in reversed(e.limits):
            body = sp.Add(*[body.xreplace({v: sp.Integer(x)}) for x in range(int(lo), int(hi) + 1)])
        return body
    return e.func(*[expand_finite(x) for x in e.args])


def concretize(expr, model, link_h):
    """``expr`` at the sizes of ``model`` with its symbols (``h`` replaced by the model's generator)."""
    sizes = {N: model.n, D: model.d, M: (model.X.shape[0] if model.X is not None else model.d)}
    e = expand_finite(expr.xreplace(sizes))
    if link_h is not None:
        e = e.replace(h, link_h)
        e = e.replace(lambda x: isinstance(x, sp.Derivative), lambda x: x.doit())
    tname = model.loss_def.target_name
    table = {"a": lambda i: model.a[i - 1], "V": lambda k, j: model.V[k - 1, j - 1],
             tname: lambda k: model.target[k - 1]}
    if model.X is not None:
        table["X"] = lambda r, k: model.X[r - 1, k - 1]
    return e.replace(lambda x: isinstance(x, sp.Indexed),
                     lambda x: table[x.base.label.name](*[int(v) for v in x.indices]))


@lru_cache(maxsize=None)
def bridge(loss_name: str, design: str, link_name: str, sizes=((2, 1), (3, 2))) -> tuple[bool, str]:
    r"""Whether the index forms equal :class:`SymbolicModel`'s objective and structured flow at ``sizes``.

    ``link_name`` is a concrete link of :data:`theorems.LINKS` (its generator replaces $h$).
    """
    K = get_link(link_name)
    glink = GLink(link_name, "normalized" if K.normalized else "elementwise", h)
    gloss = GLoss(loss_name, design)
    for n, d in sizes:
        d = max(d, get_loss(loss_name).min_d)
        m = SymbolicModel(loss_name, link_name, n, d, design=design, positive_logits=not K.smooth)
        Vdot, adot = structured_flow(glink, lambda k: grad_at_beta(gloss, glink, k))
        sV, sa = m.flow_structured()
        diffs = [concretize(objective(gloss, glink), m, K.h) - m.objective]
        diffs += [concretize(Vdot(kk, jj), m, K.h) - sV[kk - 1, jj - 1]
                  for kk in range(1, m.d + 1) for jj in range(1, n + 1)]
        diffs += [concretize(adot(ii), m, K.h) - sa[ii - 1] for ii in range(1, n + 1)]
        res = decide(diffs)
        if res.status != "proved":
            return False, f"{loss_name}/{link_name} n={n} d={d}: {res.status} ({res.detail})"
    return True, "index forms = SymbolicModel objective and structured flow at (n, d) = " + \
        ", ".join(f"({n}, {d})" for n, d in sizes)
