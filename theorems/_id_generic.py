r"""Size-generic proofs: statements for *every* $n$ (and $d$), where SymPy can decide them.

Two techniques:

* **Indexed sums** (``IndexedBase`` with a symbolic length $n$): the softmax
  $s_k=e^{a_k}/\sum_{l=1}^n e^{a_l}$ is differentiated with respect to $a_m$;
  SymPy produces ``KroneckerDelta`` sums which ``doit()`` collapses into a
  ``Piecewise`` whose first branch holds for $1\le m\le n$ (always true for an
  index in range, so we keep that branch: :func:`in_range`). Bound variables of
  sums are renamed canonically (:func:`canon_sums`) so that equal sums written
  with different dummies cancel, and factors free of the summation index are
  pulled out (``factor_sum``).
* **Matrix symbols** of symbolic shape ($V\in\mathbb R^{d\times n}$, ...) for purely
  algebraic consequences of the structured flow (e.g. the output dynamics from
  $\dot V=-gs^\top$, $\dot a=-JV^\top g$, $\dot s=J\dot a$, $J=J^\top$).

Each function returns a :class:`ProofResult`; a generic form SymPy does not
reduce to zero is reported ``undecided`` (never ``disproved``: a non-zero
symbolic residue of a sum expression is not a counterexample).
"""
from __future__ import annotations

import hashlib

import sympy as sp
from sympy.simplify.simplify import factor_sum

from ._proof import ProofResult

_n = sp.Symbol("n", integer=True, positive=True)
_d = sp.Symbol("d", integer=True, positive=True)
_i, _j, _k, _l, _m = sp.symbols("i j k l m", integer=True, positive=True)
_a = sp.IndexedBase("a", real=True)
_f = sp.IndexedBase("f", real=True)
_h = sp.Function("h")


def in_range(expr):
    """Keep the first branch of every ``Piecewise`` from collapsing a ``KroneckerDelta`` sum.

    ``Sum(KroneckerDelta(j, m) x_j, (j, 1, n)).doit()`` gives
    ``Piecewise((x_m, m <= n), (0, True))``; the condition only says that the
    free index lies in ``1..n``, which is the premise of every generic statement.
    """
    def pick(pw):
        cond = pw.args[0][1]
        if cond is sp.false or not all(t.is_integer for t in cond.free_symbols):
            raise AssertionError(f"unexpected Piecewise condition {cond}")
        return pw.args[0][0]
    return expr.replace(lambda x: isinstance(x, sp.Piecewise), pick)


def canon_sums(expr):
    """Rename each sum's bound variable by a hash of its body, so that equal sums are equal."""
    if expr.is_Atom:
        return expr
    args = [canon_sums(x) for x in expr.args]
    expr = expr.func(*args)
    if isinstance(expr, sp.Sum) and len(expr.limits) == 1:
        (var, lo, hi), = expr.limits
        ph = sp.Symbol("_placeholder", integer=True, positive=True)
        key = hashlib.sha1(sp.srepr(expr.function.xreplace({var: ph})).encode()).hexdigest()[:10]
        new = sp.Symbol(f"_q{key}", integer=True, positive=True)
        expr = sp.Sum(expr.function.xreplace({var: new}), (new, lo, hi))
    return expr


def collapse_deltas(expr):
    r"""In each term $\delta_{km}\,t(k,m)$ replace $m$ by $k$ in $t$ (exact: the term vanishes unless $k=m$)."""
    out = []
    for term in sp.Add.make_args(sp.expand(expr)):
        deltas = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.KroneckerDelta)]
        for dl in deltas:
            x, y = dl.args
            if y.is_Symbol:
                term = dl * (term / dl).xreplace({y: x})
            elif x.is_Symbol:
                term = dl * (term / dl).xreplace({x: y})
        out.append(term)
    return sp.Add(*out)


def _pull_factors(expr):
    return expr.replace(lambda x: isinstance(x, sp.Sum), lambda x: factor_sum(x))


def generic_zero(expr, what: str) -> ProofResult:
    """Decide a generic Indexed-sum expression: ``proved`` if it reduces to 0, else ``undecided``."""
    e = sp.sympify(expr)
    for _ in range(2):  # a collapsed delta sum can expose another one
        e = in_range(sp.expand(in_range(e.doit())))
    for _ in range(2):
        e = canon_sums(_pull_factors(collapse_deltas(e)))
    if sp.simplify(e) == 0:
        return ProofResult("proved", "generic-indexed",
                           f"{what}: Indexed sums of symbolic length reduce to 0 (indices in 1..n)")
    return ProofResult("undecided", "generic-indexed", f"{what}: SymPy leaves the residue {sp.sstr(e)[:200]}")


def generic_matrix_zero(expr, what: str) -> ProofResult:
    """Decide a MatrixSymbol expression of symbolic shape: ``proved`` if it is the zero matrix."""
    e = sp.expand(expr.doit()) if hasattr(expr, "doit") else expr
    e = sp.simplify(e)
    if isinstance(e, sp.ZeroMatrix) or e == 0:
        return ProofResult("proved", "generic-matrix",
                           f"{what}: the matrix-symbol expression (symbolic shapes) simplifies to the zero matrix")
    return ProofResult("undecided", "generic-matrix", f"{what}: SymPy leaves {sp.sstr(e)[:200]}")


def not_attempted(reason: str) -> ProofResult:
    """A generic proof that is not attempted, recorded honestly as ``undecided``."""
    return ProofResult("undecided", "not-attempted", reason)


# ---- softmax, Indexed ----------------------------------------------------------------
def softmax_indexed(idx, shift=0):
    r"""$s_{idx}=e^{a_{idx}+c}/\sum_{l=1}^n e^{a_l+c}$ with symbolic $n$."""
    return sp.exp(_a[idx] + shift) / sp.Sum(sp.exp(_a[_l] + shift), (_l, 1, _n))


def normalized_indexed(idx):
    r"""$\varphi_{idx}=h(a_{idx})/\sum_l h(a_l)$ for an undefined generator $h$."""
    return _h(_a[idx]) / sp.Sum(_h(_a[_l]), (_l, 1, _n))


def softmax_jacobian_indexed(k, m):
    r"""$\partial s_k/\partial a_m$ differentiated by SymPy, indices in range."""
    return in_range(sp.diff(softmax_indexed(k), _a[m]).doit())


def generic_jacobian_softmax(wrong: bool = False) -> ProofResult:
    r"""$\partial s_k/\partial a_m=\delta_{km}s_k-s_ks_m$ for every $n$ (``wrong``: drop $s_ks_m$)."""
    rhs = sp.KroneckerDelta(_k, _m) * softmax_indexed(_k)
    if not wrong:
        rhs -= softmax_indexed(_k) * softmax_indexed(_m)
    return generic_zero(softmax_jacobian_indexed(_k, _m) - rhs, "softmax Jacobian")


def generic_jacobian_normalized() -> ProofResult:
    r"""$\partial\varphi_k/\partial a_m=(\delta_{km}h'(a_k)-\varphi_kh'(a_m))/Z$.

    For every $n$ and every differentiable generator $h$.
    """
    lhs = in_range(sp.diff(normalized_indexed(_k), _a[_m]).doit())
    Z = sp.Sum(_h(_a[_l]), (_l, 1, _n))
    dh = lambda x: sp.diff(_h(x), x)  # noqa: E731
    rhs = (sp.KroneckerDelta(_k, _m) * dh(_a[_k]) - normalized_indexed(_k) * dh(_a[_m])) / Z
    return generic_zero(lhs - rhs, "normalized-link Jacobian (generic h)")


def generic_shift_invariance() -> ProofResult:
    r"""$\operatorname{softmax}(a+c\mathbf 1)=\operatorname{softmax}(a)$ for every $n$."""
    c = sp.Symbol("c", real=True)
    return generic_zero(sp.expand(softmax_indexed(_k, c)) - softmax_indexed(_k), "softmax shift invariance")


def generic_sum_conserved() -> ProofResult:
    r"""$\sum_k J_{km}=0$ and $J_{km}=J_{mk}$ for the derived softmax Jacobian, every $n$."""
    col = sp.Sum(softmax_jacobian_indexed(_k, _m), (_k, 1, _n))
    r1 = generic_zero(col, "column sums of the softmax Jacobian")
    r2 = generic_zero(softmax_jacobian_indexed(_k, _m) - softmax_jacobian_indexed(_m, _k), "symmetry of J")
    if r1.status != "proved":
        return r1
    if r2.status != "proved":
        return r2
    return ProofResult("proved", "generic-indexed",
                       "column sums of J vanish and J is symmetric: Indexed sums of symbolic length reduce to 0")


def generic_replicator() -> ProofResult:
    r"""$(J f)_i=s_i(f_i-\sum_j s_jf_j)$ with $J$ the derived softmax Jacobian, every $n$."""
    lhs = sp.Sum(softmax_jacobian_indexed(_i, _k) * _f[_k], (_k, 1, _n))
    rhs = softmax_indexed(_i) * (_f[_i] - sp.Sum(softmax_indexed(_j) * _f[_j], (_j, 1, _n)))
    return generic_zero(lhs - rhs, "replicator form of J f")


# ---- matrix symbols ------------------------------------------------------------------
def _mats():
    V = sp.MatrixSymbol("V", _d, _n)
    s = sp.MatrixSymbol("s", _n, 1)
    g = sp.MatrixSymbol("g", _d, 1)
    J = sp.MatrixSymbol("J", _n, _n)
    return V, s, g, J


def generic_output_dynamics(squared: bool = True) -> ProofResult:
    r"""$\dot\beta=\dot Vs+V\dot s=-(s^\top s\,I+VJ^2V^\top)g$.

    Given $\dot V=-gs^\top$, $\dot s=J\dot a$, $\dot a=-JV^\top g$ (``squared=False``: the unsquared $J$).
    """
    V, s, g, J = _mats()
    dV, da = -g * s.T, -J.T * V.T * g
    lhs = (dV * s + V * (J * da)).subs(J.T, J)
    Jp = J * J if squared else J
    rhs = -(g * (s.T * s) + V * Jp * V.T * g)
    return generic_matrix_zero(lhs - rhs, "output dynamics (J symmetric, structured flow)")


def generic_attention_dynamics() -> ProofResult:
    r"""$\dot s=J\dot a=J^2V^\top r$, $r=-g$, given $\dot a=JV^\top r$ ($J=J^\top$)."""
    V, s, g, J = _mats()
    lhs = (J * (-J.T * V.T * g)).subs(J.T, J)
    return generic_matrix_zero(lhs - J**2 * V.T * (-g), "attention dynamics (J symmetric, structured flow)")


def generic_orthogonal_fixed() -> ProofResult:
    r"""$(I-w(w^\top w)^{-1}w^\top)\,w s^\top=0$ for every $d,n$ (the logistic $\dot V$ is $-\ell' ws^\top$)."""
    w = sp.MatrixSymbol("w", _d, 1)
    s = sp.MatrixSymbol("s", _n, 1)
    P = sp.Identity(_d) - w * (w.T * w).I * w.T
    return generic_matrix_zero(P * w * s.T, "orthogonal part of the logistic flow")


def generic_rank_one() -> ProofResult:
    r"""With $V=yc^\top$: $(I-y(y^\top y)^{-1}y^\top)(y-Vs)s^\top=0$ for every $d,n$."""
    y = sp.MatrixSymbol("y", _d, 1)
    c = sp.MatrixSymbol("c", _n, 1)
    s = sp.MatrixSymbol("s", _n, 1)
    P = sp.Identity(_d) - y * (y.T * y).I * y.T
    V = y * c.T
    return generic_matrix_zero(P * (y - V * s) * s.T, "rank-one square-loss flow")
