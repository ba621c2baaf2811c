r"""Validated enclosures of the tau-system from a *box* of initial conditions (C1 Lohner method).

The system and the coordinates
==============================
($\star$) of :mod:`theorems.trapping` [D]: $u'=b\,s$, $a'=J(s)u$, $s=\operatorname{softmax}(a)$.
By the shift symmetries (:mod:`theorems._symmetry`: $u\mapsto u+c\mathbf 1$,
$a\mapsto a+c\mathbf 1$ map solutions to solutions) the orbit depends only on the
differences to the last token, so the engine integrates the reduced state

.. math:: y=(p_1..p_{n-1},\,g_1..g_{n-1}),\qquad p_k=u_k-u_n,\ g_k=a_k-a_n,

with $F_k(y)=f_k(u,a)-f_n(u,a)$ evaluated at $u=(p,0)$, $a=(g,0)$ (dimension
$d=2(n-1)$). $R_i^+$ is a set of differences, so it is read off $y$ directly.

The set and one step
====================
The set of states reached from the box is kept as

.. math:: S_k=\{m_k+A_kr+\epsilon:\ r\in[-1,1]^2,\ \epsilon\in E_k\},

$m_k$ an exact point, $A_k$ an exact $d\times2$ matrix (the box's two directions,
transported), $E_k$ a vector of arb balls (all the errors). The initial box
$[x_0\pm\rho_x]\times[y_0\pm\rho_y]$ of an affine slice is exactly $S_0$ with
$E_0=0$. A step of exact dyadic size $h$ (Lohner's mean-value form):

1. $X=\operatorname{hull}(S_k)$ (a ball vector); an *a-priori box* $B$ with
   $X+[0,h]F(B)\subset\operatorname{int}B$, checked in ball arithmetic, so every
   solution from $X$ exists on $[0,h]$ and stays in $B$.
2. Taylor's theorem: $\varphi_h(y)=T(y)+c_{p+1}(\xi)h^{p+1}$ with
   $T(y)=\sum_{k\le p}c_k(y)h^k$, $\xi$-term $\in R:=c_{p+1}(B)h^{p+1}$.
3. Mean value theorem for the polynomial map $T$ on the convex box $X\cup\{m_k\}$ (the hull
   of both, since $E_k$ need not contain 0):
   $T(y)\in T(m_k)+[DT(X)](y-m_k)$, where $DT(X)=\sum_{k\le p}\Phi_k(X)h^k$ and
   $\Phi_k$ are the Taylor coefficients of the variational equation
   $\Phi'=DF(y)\Phi$, $\Phi(0)=I$ (they are the derivatives of $c_k$).
4. With $P=T(m_k)$ (a thin ball), $M=[DT(X)]$:
   $m_{k+1}=\operatorname{mid}P$, $A_{k+1}=\operatorname{mid}(MA_k)$ and

   .. math:: E_{k+1}=(P-m_{k+1})+(MA_k-A_{k+1})[-1,1]^2+M\,E_k+R.

The linear part $A_kr$ is carried exactly, so the wrapping effect acts only on
the (second-order) error $E_k$: $|E|\sim\tau\,\|D^2F\|\,w^2$ for a box of width $w$,
where plain interval Taylor (:func:`enclose_box` with ``method="naive"``, the
:mod:`numerics.validated.enclosure` scheme on a box) grows like $e^{L\tau}w$.

Every quantity is an arb ball at ``prec`` bits (every rounding inside the
radius); $m_k$, $A_k$ are exact midpoints of balls; steps are exact dyadics;
only step sizes and the reference token of the softmax (which changes the
evaluation, not the value) are chosen in floating point.

Stopping: after each step the set is tested against $R_i^+$ for the token $i$
with the largest logit: lower bounds of the linear forms $a_i-a_j$, $u_i-u_j$
over $S_k$ are $\ell(m_k)-\|\ell A_k\|_1+\ell(E_k)$ (exact in $r$, no wrapping).
$a_i-a_j>0$ and $u_i-u_j\ge0$ for all $j$ certify the whole box: the trapping
lemma [D] gives $s\to e_i$ for every initialization in it.

Limits: dimension $d$ grows the work as $d^2$ (the full Jacobian); the error set is a
plain box ($B=I$): a QR-preconditioned frame (``_orthonormal_basis``) and a parallelepiped
frame were tried and measured worse on conflict3 (the per-step term
$(MA_k-A_{k+1})[-1,1]^2$ dominates $E$, and a rotated frame wraps it once more each
step); the
Taylor coefficients of the state use Picard iteration in ``arb_series`` (simple, not fastest).

Schemes (:data:`SCHEMES`; all four make the same proof obligations, the checker re-proves any):
``"fast"`` (the default of :func:`enclose_box`; the atlas's default engine is ``"adaptive"``) guesses the
a-priori box by a contracting iteration (:func:`apriori_contract`) and computes the Jacobian coefficients
$\Phi_k$ by a linear recurrence in ``arb_mat`` (:func:`jacobian_taylor`: one field evaluation with $d$
tangents instead of ``order``);
``"baseline"`` is the engine before that (:func:`apriori`, the variational Picard iteration),
kept as the baseline of benchmark row 14. The fast scheme also retries a step whose remainder is
too large from the measured remainder (not by halving) and runs at order 6 (:data:`DEFAULT_ORDERS`).
``"adaptive"`` is the fast scheme with two changes, the proof obligations again the same: the Taylor order
is chosen per step between :data:`ADAPTIVE_MIN_ORDER` and ``order`` (:func:`next_order`, from the sizes of
the ball coefficients on the last a-priori box, the ones the remainder bound is made of), and the region test
first runs a cheap ball-arithmetic refusal (:func:`region_test_quick`) so that the exact margins are computed
only for a set that may be inside. Measured on 225 finest boxes of conflict3 at 1/32 (same boxes, CPU,
alternated): fast at order 6 3.4 s, fast at order 4 2.9 s, adaptive 2.7 s, all 137 certified (the whole
conflict3 atlas at 1/64, two alternated pairs: 35.2 s against 41.1 s, 96.295 % against 96.277 %); on this slice
the adaptive choice settles at order 4 (a linear work model picked orders 6-7 and was slower,
:data:`ADAPTIVE_COST_POWER`), so its gain over the fast scheme is the lower order plus the cheap refusal.
``"parent"`` is the adaptive scheme started from the box's parent in the atlas quadtree (``hints``: the
parent's ``trace``, :func:`encode_trace`; the atlas driver sends it with the child's task and keeps it in
the parent's journal record). What is reused, per step $k$ while the child's clock equals the parent's
(every earlier hinted step accepted): the parent's accepted step size $h_k$, its Taylor order $p_k$ and
its a-priori box $B_k$, as the child's *first try* of that step, and only if $h_k$ is not shorter than
the child's own guess. Why it is sound: none of it is evidence. $B_k$ is kept only if
:func:`apriori_check` proves $X+[0,h_k]F(B_k)\subset\operatorname{int}B_k$ for the child's own hull $X$
(the test :func:`apriori_contract` ends with; any $B$ that passes is an a-priori box, whoever proposed
it); the remainder on it, the Jacobian, the error set and the region test are the child's own, computed
as in the adaptive scheme; any exact dyadic step is a valid step. The child is a subset of its parent,
so the parent's $B_k$ (which holds every solution from the parent's set at $\tau\in[t_k,t_k+h_k]$)
usually passes, and the child skips the guess iteration and the tries the parent already failed. A
failed hinted try ends the reuse (the clocks part); a wrong or doctored hint costs that one try, and a
malformed one is dropped (:func:`decode_hints`). The independent checker never sees a trace (it is not
in the certificate) and takes only the step sizes, as before.
Measured (:data:`PARENT_TOL_FACTOR`; the tables in the atlas documentation): it does not win, so it is not the
default (conflict3 at 1/64, two alternated inline pairs: 31.4 and 32.2 s of CPU against the adaptive 30.3 and
31.9 s, 96.283 % certified against 96.295 %).
A profile of the adaptive scheme on conflict3 at 1/32 (inline, 1131 boxes, 10.6 s of box CPU) puts the
parts reuse can touch at 18 %: failed tries 0.81 s (5,552 of 26,585 tries), the a-priori guesses 1.06 s;
on the steps a parent's trace covers (13,141 of the 15,970 steps of the 860 boxes with a parent trace)
0.51 s and at most 0.74 s of them, under 10 % of the run. The rest is each step's own Taylor
coefficients and Jacobian (the remainder and the mean-value form), which the child must recompute. The
parent's late steps are also shorter than the child's own (its set is wider near where it failed), so
following them further costs steps.
Measured on the 322 finest boxes of conflict3 at 1/16 (same boxes, one run, CPU): fast at order 12
half the baseline's CPU, 184 boxes certified against 173 (the recurrence's balls are also narrower:
no field re-evaluation in series with tangents); at order 6 a quarter, 185 certified. The baseline's
guess proved only $\sim10^{-6}$ steps on components of radius 0 (see :func:`apriori_contract`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
import numpy as np

from theorems import InvalidArgument, check_choice, check_int

from .enclosure import round_down, softmax_ref

DEFAULT_PREC = 64
#: Taylor order per scheme. The fast scheme's 6 was measured on the 322 finest boxes of conflict3 at 1/16
#: (same boxes, CPU / certified / steps): order 4: 2.8 s / 186 / 4863; 6: 3.2 s / 185 / 4032; 8: 4.0 s /
#: 184 / 3734; 12: 5.8 s / 183 / 3494 (the baseline at 12: 13.3 s / 173 / 4438). The steps are bounded by
#: the solution's radius of convergence more than by the order, so a low order is cheaper per unit of tau;
#: 6 keeps the step count (what the checker's time grows with) below the baseline's.
DEFAULT_ORDERS = {"adaptive": 6, "parent": 6, "fast": 6, "baseline": 12}
#: the adaptive scheme's lowest order (its ``order`` is the highest); it starts every box at
#: :data:`ADAPTIVE_START`
ADAPTIVE_MIN_ORDER = 4
ADAPTIVE_START = 4
DEFAULT_ORDER = DEFAULT_ORDERS["baseline"]
METHODS = ("lohner", "naive")
#: ``"fast"``: the contracting a-priori iteration (:func:`apriori_contract`); ``"baseline"``: the
#: engine as it was before it (:func:`apriori`, kept as the benchmark's baseline, row 14);
#: ``"adaptive"``: the fast scheme with the Taylor order chosen per step (:func:`next_order`) and
#: the region test's cheap refusal first (:func:`region_test_quick`); ``"parent"``: the adaptive scheme
#: started from the steps of the box's parent (``hints``, see :func:`enclose_box` and the module doc)
SCHEMES = ("adaptive", "parent", "fast", "baseline")
DEFAULT_SCHEME = "fast"


def _flint():
    import flint
    return flint


def arb_q(q):
    """The arb ball containing the rational ``q`` (exact for short dyadics)."""
    flint = _flint()
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def _exact(x) -> Fraction:
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


# ---------------------------------------------------------------------------------------
# the reduced field and its tangent map, generic over arb and arb_series
# ---------------------------------------------------------------------------------------
def reduced_field(y, b, one, ref: int, tangents=()):
    r"""$F(y)$ and $DF(y)v$ for each tangent $v$ in ``tangents`` (reduced coordinates, see module doc).

    ``y``: list of $2(n-1)$ arb or arb_series; ``ref``: the softmax reference token (any
    choice is exact; the largest logit keeps the balls tight). Returns ``(F, [DF v, ...])``.
    """
    d = len(y)
    n = d // 2 + 1
    zero = one * 0
    u = list(y[:n - 1]) + [zero]
    a = list(y[n - 1:]) + [zero]
    s = softmax_ref(a, ref, one)
    q = [zero if k == ref else u[k] - u[ref] for k in range(n)]
    ybar = zero
    for k in range(n):
        if k != ref:
            ybar = ybar + s[k] * q[k]
    dev = [q[k] - ybar for k in range(n)]  # u_k - z
    fu = [s[k] * b for k in range(n)]
    fa = [s[k] * dev[k] for k in range(n)]
    F = [fu[k] - fu[n - 1] for k in range(n - 1)] + [fa[k] - fa[n - 1] for k in range(n - 1)]
    out = []
    for v in tangents:
        du = list(v[:n - 1]) + [zero]
        da = list(v[n - 1:]) + [zero]
        rel = [da[k] - da[ref] for k in range(n)]
        sbar = zero
        for k in range(n):
            if k != ref:
                sbar = sbar + s[k] * rel[k]
        ds = [s[k] * (rel[k] - sbar) for k in range(n)]
        dq = [du[k] - du[ref] for k in range(n)]
        dy = zero
        for k in range(n):
            dy = dy + ds[k] * q[k] + s[k] * dq[k]
        dfu = [ds[k] * b for k in range(n)]
        dfa = [ds[k] * dev[k] + s[k] * (dq[k] - dy) for k in range(n)]
        out.append([dfu[k] - dfu[n - 1] for k in range(n - 1)] + [dfa[k] - dfa[n - 1] for k in range(n - 1)])
    return F, out


def ref_token(y) -> int:
    """The largest logit midpoint (the last token has logit 0 in reduced coordinates)."""
    d = len(y)
    n = d // 2 + 1
    logits = [float(y[n - 1 + k].mid()) for k in range(n - 1)] + [0.0]
    return max(range(n), key=lambda k: logits[k])


def taylor(y, b, order: int, *, jacobian: bool = False):
    r"""Taylor coefficients $c_0..c_{\rm order}$ of the solution through ``y`` (and of $\Phi$ if ``jacobian``).

    Picard iteration in power series: after iteration $m$ the coefficient of $\tau^m$
    is exact. Returns ``C`` (``C[i][k]``) and, if ``jacobian``, ``P`` with
    ``P[j][i][k]`` = coefficient $k$ of $\Phi_{ij}$ (column $j$).
    """
    flint = _flint()
    arb_series, arb = flint.arb_series, flint.arb
    if flint.ctx.cap < order + 2:
        # a shorter cap would silently truncate the series (missing coefficients read as 0)
        raise InvalidArgument(f"flint.ctx.cap={flint.ctx.cap} < order + 2 = {order + 2}")
    d = len(y)
    ref = ref_token(y)
    C = [[x] for x in y]
    P = [[[arb(1) if i == j else arb(0)] for i in range(d)] for j in range(d)] if jacobian else []
    for m in range(1, order + 1):
        ys = [arb_series(c, prec=m) for c in C]
        one = arb_series([1], prec=m)
        tans = [[arb_series(c, prec=m) for c in col] for col in P]
        F, DF = reduced_field(ys, b, one, ref, tans)
        for i, Fi in enumerate(F):
            co = Fi.coeffs()
            C[i].append(co[m - 1] / m if m - 1 < len(co) else arb(0))
        for j, col in enumerate(DF):
            for i, Gi in enumerate(col):
                co = Gi.coeffs()
                P[j][i].append(co[m - 1] / m if m - 1 < len(co) else arb(0))
    return C, P


def jacobian_taylor(y, b, order: int):
    r"""Taylor coefficients $\Phi_0..\Phi_{\rm order}$ (``arb_mat``) of $\Phi'=DF(y(\tau))\Phi$, $\Phi(0)=I$.

    The same coefficients as ``taylor(y, b, order, jacobian=True)`` (enclosures, for every point of
    the ball vector ``y``), computed in a cheaper order: first the state's coefficients
    $c_0..c_{\rm order}$ (:func:`taylor`, no tangents), then the coefficients $J_0..J_{\rm order-1}$ of
    $J(\tau)=DF(y(\tau))$ from one evaluation of :func:`reduced_field` on the truncated state series with
    the $d$ unit tangents, then the linear recurrence

    .. math:: \Phi_m=\frac1m\sum_{i=0}^{m-1}J_i\,\Phi_{m-1-i}

    (the coefficient of $\tau^{m-1}$ of $\Phi'=J\Phi$) in ``arb_mat`` products. Every operation is a
    ball operation on enclosures of the true coefficients (inclusion monotone), so each computed
    $\Phi_m$ contains $\Phi_m(x)$ for every $x$ in ``y``. The Picard route re-evaluates the field with
    $d$ tangents in series ``order`` times; this one evaluates it once.
    Returns ``(C, Phi)``.
    """
    flint = _flint()
    arb_series = flint.arb_series
    d = len(y)
    C, _ = taylor(y, b, order)
    ref = ref_token(y)
    ys = [arb_series(c[:order], prec=order) for c in C]
    one = arb_series([1], prec=order)
    units = [[arb_series([1 if i == j else 0], prec=order) for i in range(d)] for j in range(d)]
    _, DF = reduced_field(ys, b, one, ref, units)
    cols = [[g.coeffs() for g in col] for col in DF]  # cols[j][i]: coefficients of J_ij

    def coeff(co, k):
        return co[k] if k < len(co) else 0

    J = [flint.arb_mat(d, d, [coeff(cols[j][i], k) for i in range(d) for j in range(d)]) for k in range(order)]
    Phi = [flint.arb_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])]
    for m in range(1, order + 1):
        acc = J[0] * Phi[m - 1]
        for i in range(1, m):
            acc = acc + J[i] * Phi[m - 1 - i]
        Phi.append(acc * flint.arb(flint.fmpq(1, m)))
    return C, Phi


def _zero_h(h: Fraction):
    flint = _flint()
    return arb_q(h) * flint.arb(flint.fmpq(1, 2), flint.fmpq(1, 2))


def apriori(X, b, h: Fraction, *, iterations: int = 8):
    r"""A box $B$ with $X+[0,h]F(B)\subset\operatorname{int}B$ proven in ball arithmetic, or ``None``."""
    flint = _flint()
    T = _zero_h(h)
    one = flint.arb(1)
    ref = ref_token(X)
    F, _ = reduced_field(X, b, one, ref)
    K = [x + T * f for x, f in zip(X, F)]
    for _ in range(iterations):
        B = [flint.arb(k.mid(), k.rad() * 1.5 + (abs(k.mid()) + 1) * 2.0 ** -30) for k in K]
        F, _ = reduced_field(B, b, one, ref_token(B))
        K = [x + T * f for x, f in zip(X, F)]
        if all(bb.contains_interior(k) for bb, k in zip(B, K)):
            return B
        K = [k.union(bb) for k, bb in zip(K, B)]
    return None


def apriori_contract(X, b, h: Fraction, *, iterations: int = 12):
    r"""Like :func:`apriori` (same test $X+[0,h]F(B)\subset\operatorname{int}B$), a better guess of $B$.

    The guess is $B_{k+1}=\operatorname{widen}(X+[0,h]F(B_k))$, widened by 25 % of each radius plus
    $2^{-12}$ of the largest radius: a contraction when $hL<1$ ($L$ the Lipschitz constant of $F$
    on $B$). :func:`apriori` widens $(X+[0,h]F(B_k))\cup B_k$ by 50 % every round instead, so a
    component of $X$ of radius 0 (a direction the slice does not move) gets exactly the radius it
    needs, never more, and is proven only once the absolute $2^{-30}$ term dominates: the first steps
    of every box came out near $10^{-6}$ and took ~12 doublings to reach the size the Taylor
    remainder allows. Only the guess changes; the test that makes $B$ an a-priori box is the same.
    """
    flint = _flint()
    T = _zero_h(h)
    one = flint.arb(1)
    F, _ = reduced_field(X, b, one, ref_token(X))
    K = [x + T * f for x, f in zip(X, F)]
    for _ in range(iterations):
        if not all(k.is_finite() for k in K):
            return None
        spread = max(float(k.rad()) for k in K) * 2.0 ** -12
        B = [flint.arb(k.mid(), k.rad() * 1.25 + spread + (abs(k.mid()) + 1) * 2.0 ** -30) for k in K]
        F, _ = reduced_field(B, b, one, ref_token(B))
        K = [x + T * f for x, f in zip(X, F)]
        if all(bb.contains_interior(k) for bb, k in zip(B, K)):
            return B
    return None


def apriori_check(X, b, h: Fraction, B):
    r"""``B`` if $X+[0,h]F(B)\subset\operatorname{int}B$ is proven in ball arithmetic, else ``None``.

    The test :func:`apriori_contract` ends with, on a given candidate (the parent scheme's reused box):
    whatever ``B`` is, a ``B`` that passes is an a-priori box for $X$ and $h$.
    """
    flint = _flint()
    if len(B) != len(X) or not all(bb.is_finite() for bb in B):
        return None
    F, _ = reduced_field(B, b, flint.arb(1), ref_token(B))
    T = _zero_h(h)
    K = [x + T * f for x, f in zip(X, F)]
    return B if all(bb.contains_interior(k) for bb, k in zip(B, K)) else None


def _horner(coeffs, hb):
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * hb + c
    return acc


def _mag(x) -> float:
    return float(abs(x).upper())


# ---------------------------------------------------------------------------------------
# the set and the driver
# ---------------------------------------------------------------------------------------
@dataclass
class BoxEnclosure:
    r"""Outcome of :func:`enclose_box`.

    ``status``: ``'certified'`` (the set entered $R_{\rm winner}^+$ at ``tau``) or
    ``'not certified'`` (``reason``); ``a_lower`` / ``u_lower``: the proven lower
    bounds of $a_i-a_j$, $u_i-u_j$ (exact rationals, ``None`` for $j=i$);
    ``steps``: the exact dyadic steps taken; ``max_error``: largest radius of $E$.
    """

    status: str
    winner: int | None
    tau: Fraction
    steps: list
    reason: str = ""
    a_lower: tuple = ()
    u_lower: tuple = ()
    max_error: float = 0.0
    seconds: float = 0.0
    method: str = "lohner"
    history: list = field(default_factory=list, repr=False)
    #: the parent scheme: ``(h, order, a-priori box)`` of every accepted step (the box as float
    #: ``[mid, rad, ...]``), the ``hints`` of this box's children (:func:`encode_trace`)
    trace: list = field(default_factory=list, repr=False)


#: significant bits of the stored gap margins (:func:`.enclosure.round_down`)
MARGIN_BITS = 30


@dataclass
class BoxSet:
    r"""$\{m+Ar+B\epsilon:\ r\in[-1,1]^2,\ \epsilon\in\mathcal E\}$: exact ``m`` (d x 1), ``A`` (d x 2),
    ``B`` (d x d, exact, well conditioned), and the ball vector ``eps`` (d x 1)."""

    m: object
    A: object
    B: object
    eps: object

    def hull(self):
        """A ball vector containing the set."""
        flint = _flint()
        unit = flint.arb_mat(self.A.ncols(), 1, [flint.arb(0, 1)] * self.A.ncols())
        X = self.m + self.A * unit + self.B * self.eps
        return [X[i, 0] for i in range(X.nrows())]

    def form_lower(self, coeffs: dict):
        r"""Ball containing $\min\ell$ over the set, $\ell(x)=\sum_i c_ix_i$: exact in $r$, no wrapping."""
        flint = _flint()
        d = self.m.nrows()
        row = flint.arb_mat(1, d, [coeffs.get(i, 0) for i in range(d)])
        val = (row * self.m)[0, 0] + (row * self.B * self.eps)[0, 0]
        lA = row * self.A
        for j in range(lA.ncols()):
            val = val - abs(lA[0, j])
        return val

    def error_size(self) -> float:
        r"""Largest component of $|B\epsilon|$ (float, for reports)."""
        E = self.B * self.eps
        return max(float(abs(E[i, 0]).upper()) for i in range(E.nrows()))

    def floats(self):
        return ([float(self.m[i, 0].mid()) for i in range(self.m.nrows())],
                [[float(self.A[i, j].mid()) for j in range(self.A.ncols())] for i in range(self.A.nrows())],
                self.error_size())


def gap_forms(n: int, i: int, j: int):
    """Coefficients of $u_i-u_j$ and $a_i-a_j$ in reduced coordinates (token ``n-1`` is the origin)."""
    def form(offset):
        out = {}
        if i != n - 1:
            out[offset + i] = out.get(offset + i, 0) + 1
        if j != n - 1:
            out[offset + j] = out.get(offset + j, 0) - 1
        return out
    return form(0), form(n - 1)


def region_test(S: BoxSet, n: int):
    r"""``(winner, inside, a_lower, u_lower)`` for the largest-logit token (see module doc).

    The bounds are the lower endpoints rounded down to 30 bits (short exact numbers); ``inside``
    iff every $a_i-a_j\ge L^a_j>0$ and $u_i-u_j\ge L^u_j\ge0$ is proven in ball arithmetic.
    """
    logits = [float(S.m[n - 1 + k, 0].mid()) for k in range(n - 1)] + [0.0]
    i = max(range(n), key=lambda k: logits[k])
    a_low, u_low, inside = [], [], True
    for j in range(n):
        if j == i:
            a_low.append(None)
            u_low.append(None)
            continue
        fu, fa = gap_forms(n, i, j)
        la, lu = S.form_lower(fa), S.form_lower(fu)
        ra = round_down(_exact(la.lower()), MARGIN_BITS) if la.is_finite() else Fraction(-1)
        ru = round_down(_exact(lu.lower()), MARGIN_BITS) if lu.is_finite() else Fraction(-1)
        a_low.append(ra)
        u_low.append(ru)
        inside = inside and ra > 0 and bool(la >= arb_q(ra)) and ru >= 0 and bool(lu >= arb_q(ru))
    return i, inside, tuple(a_low), tuple(u_low)


def region_test_quick(S: BoxSet, n: int) -> bool:
    r"""``False`` only where :func:`region_test` would find the set outside: a cheap refusal first.

    The same forms, the same winner; the first $a_i-a_j$ not proven $>0$ or $u_i-u_j$ not proven
    $\ge0$ in ball arithmetic ends it. :func:`region_test` needs $\ell\ge L$ with an exact $L>0$
    (resp. $L\ge0$), which implies these, so a ``False`` here is a ``False`` there; a ``True`` is
    decided by :func:`region_test` itself (the exact margins are computed only then).
    """
    logits = [float(S.m[n - 1 + k, 0].mid()) for k in range(n - 1)] + [0.0]
    i = max(range(n), key=lambda k: logits[k])
    for j in range(n):
        if j != i:
            fu, fa = gap_forms(n, i, j)
            if not S.form_lower(fa) > 0 or not S.form_lower(fu) >= 0:
                return False
    return True


#: the work of one step at order $q$ is taken as $q^{2}$ (this exponent): the Picard iteration of
#: :func:`taylor` runs $q$ rounds on series of length up to $q$. Measured on 225 finest boxes of conflict3
#: at 1/32 (CPU, same boxes): fixed orders 4 / 5 / 6 cost 2.9 / 3.1 / 3.4 s, so a linear cost model
#: (which picks orders 6-7 here) loses to the quadratic one (orders 4-5, as fast as the best fixed order).
ADAPTIVE_COST_POWER = 2.0


def next_order(mags, p: int, tol: float, lowest: int, highest: int) -> int:
    r"""The Taylor order for the next step, from the coefficient sizes on the last a-priori box.

    ``mags[k]`` $=\max_i|c_k(B)|$, $k=0..p+1$ (the ball coefficients the remainder of the last step
    came from, order ``p``). At order $q\le p$ the remainder $|c_{q+1}(B)|h^{q+1}\le$ ``tol`` allows
    $h_q=(\mathrm{tol}/|c_{q+1}(B)|)^{1/(q+1)}$; at $q=p+1$ the next coefficient is extrapolated
    geometrically from the last two. The order with the largest $h_q/q^{2}$ (step length per unit of
    work, :data:`ADAPTIVE_COST_POWER`) wins, moving up at most one order a step. A choice only: every step's
    remainder is still proven at the order it runs at.
    """
    best, best_score = p, -1.0
    for q in range(lowest, min(highest, p + 1) + 1):
        if q + 1 < len(mags):
            mag = mags[q + 1]
        elif mags[-2] > 0:
            mag = mags[-1] ** 2 / mags[-2]
        else:
            continue
        if not (mag > 0 and math.isfinite(mag)):
            continue
        score = (tol / mag) ** (1.0 / (q + 1)) / q ** ADAPTIVE_COST_POWER
        if score > best_score:
            best, best_score = q, score
    return best


def initial_set(center, directions) -> BoxSet:
    r"""The exact box set: ``center`` (reduced, rationals) and the two half-width vectors, $B=I$, $\epsilon=0$."""
    flint = _flint()
    d = len(center)
    m = flint.arb_mat(d, 1, [arb_q(c) for c in center])
    A = flint.arb_mat(d, len(directions), [arb_q(directions[j][i]) for i in range(d)
                                           for j in range(len(directions))])
    I = flint.arb_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])
    return BoxSet(m, A, I, flint.arb_mat(d, 1))


def enclose_box(center, directions, b, *, method: str = "lohner", tau_max=60, prec: int = DEFAULT_PREC,
                order: int | None = None, tol: float = 1e-12, rel_tol: float = 2.0 ** -10,
                h_max: float = 0.5, max_width: float = 4.0, max_error: float = 0.05, max_steps: int = 600,
                time_budget: float | None = None, record: bool = False,
                scheme: str = DEFAULT_SCHEME, hints=None) -> BoxEnclosure:
    r"""Enclose the flow from the box $\{c+\sum_j r_j\,v_j\}$ until it lies in some $R_i^+$.

    Args:
        center: reduced initial state (``Fraction`` s, length $2(n-1)$).
        directions: the two half-width vectors $v_1,v_2$ (reduced, ``Fraction`` s).
        b: ``Fraction`` > 0.
        method: ``'lohner'`` (this module's mean-value form with QR-preconditioned error)
            or ``'naive'`` (interval Taylor on the box hull: the wrapping baseline).
        tau_max: give up at this $\tau$; max_width: give up when a hull radius exceeds it;
            max_error: give up when the error set $|B\epsilon|$ exceeds it (it rarely recovers);
            tol, rel_tol: a step is accepted when its Lagrange remainder is at most
            $\max(\mathrm{tol},\ \mathrm{rel\_tol}\cdot\text{hull radius})$ (tightness, not soundness).
        record: keep ``(tau, m, A, |B eps|)`` (floats) after every step in ``history``.
        scheme: ``'fast'`` (default) or ``'baseline'`` (see :data:`SCHEMES`); every proof obligation
            is the same in both. order: the Taylor order (default :data:`DEFAULT_ORDERS` of the scheme).
        hints: the parent scheme only: the ``trace`` of an enclosure of a box containing this one
            (:func:`encode_trace`, plain JSON data); each hinted step is a first try, verified as any
            other (see the module doc), so a wrong or doctored hint costs a try and proves nothing.
            Malformed hints are dropped (no reuse).
    """
    check_choice("method", method, METHODS)
    check_choice("scheme", scheme, SCHEMES)
    order = DEFAULT_ORDERS[scheme] if order is None else order
    check_int("order", order, minimum=2)
    adaptive = scheme in ("adaptive", "parent")
    if hints is not None and scheme != "parent":
        raise InvalidArgument(f"hints given with scheme={scheme!r}; expected scheme='parent' (or no hints)")
    # the order of the next step: fixed, or (adaptive) chosen per step between ``lowest`` and ``order``
    lowest = min(ADAPTIVE_MIN_ORDER, order)
    p = min(ADAPTIVE_START, order) if adaptive else order
    check_int("prec", prec, minimum=32)
    flint = _flint()
    d = len(center)
    if d < 2 or d % 2 or any(len(v) != d for v in directions):
        raise InvalidArgument(f"center of length {d}, directions {[len(v) for v in directions]}: "
                              "expected an even length >= 2 and directions of the same length")
    if Fraction(b) <= 0:
        raise InvalidArgument(f"b={b!r} is not allowed; expected > 0")
    n = d // 2 + 1
    started = time.perf_counter()
    old = flint.ctx.prec, flint.ctx.cap
    flint.ctx.prec, flint.ctx.cap = prec, max(order + 4, old[1])
    try:
        bb = arb_q(b)
        S = initial_set(center, directions)
        tau, steps, hist, trace = Fraction(0), [], [], []
        # the parent's steps, followed while this box's clock equals the parent's (every hinted try accepted)
        hinted = decode_hints(hints, d, lowest, order, h_max, max_steps) if scheme == "parent" else []

        def result(status, winner=None, reason="", al=(), ul=()):
            return BoxEnclosure(status, winner, tau, steps, reason, al, ul, S.error_size(),
                                time.perf_counter() - started, method, hist, trace)

        h_next = h_max
        # the step guess is ``safety`` times the one the point coefficients suggest: fixed at 0.8 in the
        # baseline; adapted in the fast scheme (a first try whose remainder on B is too large lowers it)
        safety = 0.8
        while True:
            if adaptive and not region_test_quick(S, n):
                inside = False
            else:
                win, inside, al, ul = region_test(S, n)
            if inside:
                return result("certified", win, al=al, ul=ul)
            if tau >= tau_max:
                return result("not certified", reason=f"tau_max={float(tau_max):g} reached")
            if len(steps) >= max_steps:
                return result("not certified", reason=f"{max_steps} steps")
            if time_budget is not None and time.perf_counter() - started > time_budget:
                return result("not certified", reason=f"time budget {time_budget:g} s")
            if S.error_size() > max_error:
                return result("not certified", reason=f"error set larger than {max_error:g} at tau={float(tau):.4g}")
            X = S.hull()
            radius = max(float(x.rad()) for x in X)
            if not all(x.is_finite() for x in X) or radius > max_width:
                return result("not certified", reason=f"set wider than {max_width:g} at tau={float(tau):.4g}")
            step_tol = max(tol, rel_tol * radius)
            mids = [flint.arb(x.mid()) for x in X] if method == "naive" else \
                [S.m[i, 0] for i in range(d)]
            hint = hinted[len(steps)] if len(steps) < len(hinted) else None
            if hint is not None:
                p = hint[1]
            Cm, _ = taylor(mids, bb, p)
            hf = h_next
            for k in (p - 1, p):
                mag = max(_mag(c[k]) for c in Cm)
                if mag > 0 and math.isfinite(mag):
                    hf = min(hf, (step_tol / mag) ** (1.0 / k))
            h = _to_dyadic(max(safety * hf, 1e-9))
            step, first, info = None, True, {}
            if hint is not None and hint[0] < h:
                hint, hinted = None, []  # this box's own guess is the longer step: its own search from here
            if hint is not None:
                # the parent's step, order and a-priori box as the first try (one try, verified as any)
                step = _try_step(method, S, X, bb, hint[0], p, step_tol * PARENT_TOL_FACTOR, Cm, scheme, info,
                                 guess=hint[2])
                if step is not None:
                    h = hint[0]
                else:
                    hinted = []  # the clocks part: the parent's later steps start from other times
            while step is None and h > Fraction(1, 1 << 30):
                info = {}
                step = _try_step(method, S, X, bb, h, p, step_tol, Cm, scheme, info)
                if step is not None:
                    break
                rem = info.get("remainder")
                if scheme != "baseline" and rem is not None and math.isfinite(rem) and rem > 0:
                    # the remainder on B scales like h^(p+1): aim just under the tolerance
                    shrink = min(0.9, max(1 / 16, 0.9 * (step_tol / rem) ** (1.0 / (p + 1))))
                    h = _to_dyadic(float(h) * shrink)
                else:
                    h /= 2
                if first and scheme != "baseline":  # the point coefficients were optimistic: predict lower
                    safety = max(0.3, safety * 0.85)
                first = False
            if first and scheme != "baseline":
                safety = min(0.95, safety * 1.04)
            if step is None:
                return result("not certified", reason=f"step underflow at tau={float(tau):.4g}")
            if scheme == "parent":
                trace.append((h, p, info["B"]))
            if adaptive:
                p = next_order(info["mags"], p, step_tol, lowest, order)
            S = step
            tau += h
            steps.append(h)
            h_next = min(h_max, float(h) * 2.0)
            if record:
                hist.append((float(tau), *S.floats()))
    finally:
        flint.ctx.prec, flint.ctx.cap = old


#: a hinted step (the parent scheme) is accepted with a remainder up to this times the box's own
#: tolerance (tightness only: the remainder is proven and carried in the error set either way). The
#: parent's tolerance is ``rel_tol`` times its hull radius, about twice the child's. On conflict3 at 1/32,
#: with every hinted step tried: at 1, 856 of 2,189 hinted tries failed; at 2 (the parent's tolerance)
#: 549 of 7,233, but the children then follow the parent's shorter late steps (22,010 steps against
#: 21,033). With the not-shorter rule, 2 cost 5 certified boxes of 682 and saved no CPU (12.45 s against
#: the adaptive 12.42 s, one pair)
PARENT_TOL_FACTOR = 1.0


def encode_trace(trace) -> list:
    """A :class:`BoxEnclosure` ``trace`` as JSON data: ``[[h, order, [mid, rad, ...]], ...]`` (``h`` an exact
    string; the box's balls as floats, the radius rounded up to cover the midpoint's rounding)."""
    out = []
    for h, p, B in trace:
        flat = []
        for x in B:
            m, r = float(x.mid()), float(x.rad())
            flat += [m, math.nextafter(r + abs(m) * 2.0 ** -52, math.inf)]
        out.append([str(h), int(p), flat])
    return out


def decode_hints(hints, d: int, lowest: int, highest: int, h_max: float, max_steps: int) -> list:
    r"""``[(h, order, [arb])]`` from :func:`encode_trace` data; ``[]`` (no reuse) if anything is malformed.

    Each ``h`` must be a dyadic in $[2^{-30}, h_{\max}]$, each order in ``lowest..highest``, each box ``d``
    finite balls; at most ``max_steps`` steps. Nothing here is trusted: the engine re-verifies every hinted
    step (:func:`apriori_check`, the remainder, the whole step), so the bounds only keep a bad hint cheap.
    """
    if not hints:
        return []
    flint = _flint()
    out = []
    try:
        if not isinstance(hints, (list, tuple)) or len(hints) > max_steps:
            return []
        for item in hints:
            hs, p, flat = item
            h = Fraction(hs) if isinstance(hs, str) and len(hs) <= 64 else None
            if h is None or not Fraction(1, 1 << 30) <= h <= Fraction(h_max) or h.denominator & (h.denominator - 1):
                return []
            if not isinstance(p, int) or isinstance(p, bool) or not lowest <= p <= highest:
                return []
            if not isinstance(flat, (list, tuple)) or len(flat) != 2 * d or \
                    not all(type(v) in (int, float) and math.isfinite(v) for v in flat):
                return []
            if any(flat[2 * i + 1] < 0 for i in range(d)):
                return []
            out.append((h, p, [flint.arb(flat[2 * i], flat[2 * i + 1]) for i in range(d)]))
    except (TypeError, ValueError, ZeroDivisionError):
        return []
    return out


def _to_dyadic(h: float) -> Fraction:
    k = 24 - math.frexp(h)[1]
    return Fraction(math.floor(h * 2.0 ** k)) / Fraction(2) ** k


def _mid_mat(M):
    flint = _flint()
    return flint.arb_mat(M.nrows(), M.ncols(), [M[i, j].mid() for i in range(M.nrows()) for j in range(M.ncols())])


def _orthonormal_basis(MB, eps):
    r"""An exact matrix $Q$ (float QR of $\operatorname{mid}(MB)$, columns weighted by the widths of
    $\epsilon$ and sorted by length): the new frame of the error set (Lohner's QR method)."""
    flint = _flint()
    d = MB.nrows()
    w = np.array([float(abs(eps[i, 0]).upper()) for i in range(d)])
    G = np.array([[float(MB[i, j].mid()) for j in range(d)] for i in range(d)])
    order = np.argsort(-np.linalg.norm(G * w, axis=0))
    Q, _ = np.linalg.qr(G[:, order])
    if not np.all(np.isfinite(Q)):
        Q = np.eye(d)
    return flint.arb_mat(d, d, [float(Q[i, j]) for i in range(d) for j in range(d)])


def _try_step(method, S: BoxSet, X, b, h, order, tol, Cm, scheme="baseline", info=None, guess=None):
    """One step (see module doc); ``None`` if no a-priori box or the remainder exceeds ``tol``
    (then ``info["remainder"]`` is the remainder's size, for the next guess). ``guess``: a candidate
    a-priori box (the parent's), used if :func:`apriori_check` proves it, else the usual guess."""
    flint = _flint()
    B = None if guess is None else apriori_check(X, b, h, guess)
    if B is None:
        B = apriori(X, b, h) if scheme == "baseline" else apriori_contract(X, b, h)
    if B is None:
        return None
    if info is not None:
        info["B"] = B
    hb = arb_q(h)
    CB, _ = taylor(B, b, order + 1)
    hp = hb ** (order + 1)
    R = [c[order + 1] * hp for c in CB]
    rmag = max(_mag(r) for r in R)
    if info is not None:
        info["remainder"] = rmag
        if scheme in ("adaptive", "parent"):
            info["mags"] = [max(_mag(c[k]) for c in CB) for k in range(order + 2)]
    if rmag > tol:
        return None
    d = len(X)
    unit2 = flint.arb_mat(S.A.ncols(), 1, [flint.arb(0, 1)] * S.A.ncols())
    if method == "naive":
        CX, _ = taylor(X, b, order)
        Y = [_horner(c, hb) + r for c, r in zip(CX, R)]
        m_new = flint.arb_mat(d, 1, [y.mid() for y in Y])
        eps = flint.arb_mat(d, 1, [y - y.mid() for y in Y])
        I = flint.arb_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])
        return BoxSet(m_new, flint.arb_mat(d, S.A.ncols()), I, eps)
    # the mean value theorem runs along segments [m, y], y in S: the Jacobian box must contain m too
    Xm = [x.union(S.m[i, 0]) for i, x in enumerate(X)]
    if scheme != "baseline":
        _, Phi = jacobian_taylor(Xm, b, order)
        M = _horner(Phi, hb)
    else:
        _, PX = taylor(Xm, b, order, jacobian=True)
        M = flint.arb_mat(d, d, [_horner(PX[j][i], hb) for i in range(d) for j in range(d)])
    P = flint.arb_mat(d, 1, [_horner(c, hb) for c in Cm])
    m_new = _mid_mat(P)
    MA = M * S.A
    A_new = _mid_mat(MA)
    N = (P - m_new) + flint.arb_mat(d, 1, R) + (MA - A_new) * unit2
    MB = M * S.B
    # B stays I: QR (``_orthonormal_basis``) or parallelepiped frames were measured to be worse
    # here (README), because the error is dominated by the per-step Jacobian-width term N, which a
    # rotated frame wraps once more every step, not by the wrapping of B*eps.
    eps = MB * S.eps + N
    if not all(eps[i, 0].is_finite() for i in range(d)):
        return None
    return BoxSet(m_new, A_new, S.B, eps)
