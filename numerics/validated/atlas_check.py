r"""Independent checker of atlas certificates (``softpolar atlas --check``).

Shares no code with the box engine (:mod:`numerics.validated.box`) or the atlas driver
(:mod:`softpolar.atlas`): its own reading of the spec and of the certificate, its own reduced
vector field, its own Taylor arithmetic, its own a-priori test and its own set update. It
re-derives everything a certificate states, or refuses it:

1. **the spec** (:func:`check_spec`), by the engine's rules in this module's own code: exactly the
   keys ``name, n, b, u0, a0, x, y``; $2\le n\le$ :data:`MAX_N`; ``u0`` and ``a0`` lists of exactly
   $n$ affine expressions in $x,y$, each ASCII and at most :data:`MAX_TEXT` characters (a longer one is
   refused, never cut); ``b > 0`` and the ranges ``[lo, hi]`` exact rationals in canonical form, every
   number within :data:`MAX_COORD`;
   the slice depends on both $x$ and $y$; a spec named like a preset (:data:`PRESETS`, the
   engine's presets written out again) must be that preset's slice;
2. **the layout**: only the keys the engine writes, at every level (the ``engine`` settings, the
   ``float64`` section and its parts included, :func:`form_problems`: their values are diagnostics,
   checked for their type only); the provenance tag, which must be the atlas claim's
   :data:`PROVENANCE` ``"D"``; boxes with integer quadtree keys, bounds
   equal to their keys', no box an ancestor of another, exact areas summing to the slice's;
   uncertified boxes at the finest level ``min_level``;
3. **every number it prints**: the area per winner, the certified fraction and the box counts are
   recomputed from the boxes and must equal the certificate's ``area`` and ``fraction_certified``
   exactly; per certified box, ``tau`` must be the exact sum of its steps ``h``, ``steps`` their
   count, and the stored lower bounds ``a_lower``/``u_lower`` (``None`` exactly at the winner) must
   be proven by the checker's own enclosure at that ``tau``;
4. **every certified box**, re-proven: after exactly the recorded steps (any exact dyadic step is
   sound, so the steps are only hints) the checker's own enclosure proves
   $a_i-a_j\ge$ ``a_lower[j]`` $>0$ and $u_i-u_j\ge$ ``u_lower[j]`` $\ge0$ for all $j\ne i$, $i$ the
   claimed winner: the set lies in $R_i^+$ at $\tau$, and the trapping lemma [D] gives $s\to e_i$
   for the whole box. A box the checker cannot prove whole is cut in two halves (across $x$, then
   across $y$, alternating), each proven the same way (down to :data:`SPLIT_DEPTH` cuts): still a
   proof for the whole box.

**Not covered** (:data:`NOT_COVERED`, said in every report): the values of the float64 map and of
everything derived from it (the ``float64`` section: disagreements, the fitted rule; ``float64.npy``;
the picture), and of the engine's diagnostics (``seconds``, ``engine``, a box's ``max_error``,
``reason``, ``digest``): only their form is checked.

What differs from the engine's enclosure:

* **Taylor coefficients by Moore's recurrences** (each coefficient of $e^{t}$, of a quotient
  and of a product computed once, from the lower ones) on plain arb lists, instead of Picard
  iteration in ``arb_series``;
* **the Jacobian by the variational equation as a linear recurrence**
  (:func:`jacobian_coefficients`): the derivatives of the field written out by hand (in that
  function's doc), their Taylor coefficients along the solution from the checker's own state
  recurrences, then $(k+1)\Phi_{k+1}=\sum_jJ_j\Phi_{k-j}$ in ``arb_mat``. The checker's first
  method, forward-mode jets :class:`Jet` through the state's recurrences (``_step(...,
  jacobian="jets")``), is kept as a cross-check (a test pins the two equal at thin points); it
  was 2.5x slower per step and its wider balls (the jets' dependency effect) failed 57 of 60
  sampled conflict3 boxes whole, so nearly every box was split into quarters (measured on one
  conflict3 certificate at 1/32, 678 certified boxes, CPU seconds, alternated pairs at load 15-20 on 2
  cores: jets with quarters 68.5 / 70.5 s and 3258 proven parts; the recurrence 11.1 s and 1322 parts
  with quarters, 8.3 / 8.6 s and 1000 parts with halves; bench row 16 measures it). At 1/128 (2930
  boxes, engine 92.8 s CPU) the checker takes 84 s and 5892 parts: about half the finest boxes fail
  whole, nearly all on the stored lower bounds, which are the engine's own, rounded down from its
  enclosure at the first step it entered $R_i^+$; the two enclosures differ by $\sim10^{-3}$ either
  way, so only a part (a half) has the slack to prove them.

The mathematics per step is the mean-value (Lohner) form of the module doc of
:mod:`numerics.validated.box`: the set $\{m+Ar+\epsilon\}$, $r\in[-1,1]^2$, is mapped to
$T(m)+[DT(X)](Ar+\epsilon)+c_{p+1}(B)h^{p+1}$ with $X$ its hull and $B$ an a-priori box
($X+[0,h]F(B)\subset\operatorname{int}B$, checked).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from fractions import Fraction
import math
import time

from theorems import InvalidArgument

CHECK_ORDER = 8
#: a box the checker cannot verify whole is cut in halves, alternately across x and y, up to this many cuts
#: (each part re-proven; 4 cuts reach the quarter-width parts of the former two levels of quarters). Halves:
#: all 18 of 80 sampled conflict3 boxes (1/32) the checker could not prove whole were proven by either pair of
#: halves, so a failed box costs 1 + 2 parts instead of 1 + 4
SPLIT_DEPTH = 4
#: how a box is re-proven: ``"recurrence"`` (default: the variational recurrence, parts cut in halves down to
#: :data:`SPLIT_DEPTH` cuts) or ``"jets"`` (the checker before it, kept as bench row 16's anchor: forward-mode
#: jets, parts cut in quarters down to 2 levels); the same proof obligations, the same refusals
CHECK_METHODS = ("recurrence", "jets")
CHECK_PREC = 64
FORMAT = "softpolar-atlas/2"
#: every format this checker reads, and where its area labels count tokens from: format 2 counts from 0, as every
#: other output (``token 0`` is box winner 0; issue 39); format 1 files, which counted from 1, are read as written
READ_FORMATS = {"softpolar-atlas/1": 1, "softpolar-atlas/2": 0}


def token_label(winner: int, fmt: str = FORMAT) -> str:
    """The area label of token ``winner`` (an index from 0) in an atlas of format ``fmt``."""
    return f"token {winner + READ_FORMATS[fmt]}"
#: the engine's stated bounds of a slice, written out again (a test pins them equal): tokens, the longest
#: expression text (refused beyond, never cut), the size of b, of the ranges and of every constant
MAX_N = 6
MAX_TEXT = 200
MAX_COORD = 10**6
MAX_NAME = 64
#: the decimal exponent (of the leading digit) of a constant in u0, a0: within +-MAX_EXPONENT
MAX_EXPONENT = 30
#: the largest exponent written in a decimal constant that is read at all (bounds what Fraction expands)
MAX_WRITTEN_EXPONENT = 1000
_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE]([+-]?[0-9]{1,6}))?", re.ASCII)
#: the finest quadtree level a certificate may use (boxes of width range / 2**14)
MAX_LEVEL = 14
#: the engine's presets, written out again (a test pins them equal to softpolar.atlas's): a spec that
#: carries one of these names must be exactly that slice
PRESETS = {
    "conflict3": {"name": "conflict3", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"],
                  "x": ["-1", "1"], "y": ["-1", "1"]},
    "uniform3": {"name": "uniform3", "n": 3, "b": "1", "u0": ["x", "y", "0"], "a0": ["0", "0", "0"],
                 "x": ["-1", "1"], "y": ["-1", "1"]},
    "conflict4": {"name": "conflict4", "n": 4, "b": "1", "u0": ["x", "0", "-1", "-1/2"],
                  "a0": ["0", "y", "-1", "-1/2"], "x": ["-1", "1"], "y": ["-1", "1"]},
}
#: what ``--check`` does not vouch for (printed with every verdict)
NOT_COVERED = ("the float64 map and all derived from it (the values in the certificate's 'float64' section: "
               "disagreements, undecided pixels, the fitted rule; float64.npy; the picture), and the values of the "
               "engine's diagnostics ('seconds', the 'engine' settings, a box's 'max_error', 'reason' and journal "
               "'digest'); these are checked for their form only (known keys, values of the right type)")
#: the provenance tag of an atlas's claim: the trapping lemma and the box proofs are derived for this project
#: [D] (the paper proves polarization only from a uniform a(0)); a certificate tagged otherwise is refused
PROVENANCE = "D"
#: the engine settings a certificate may record (the keyword arguments of the engine's box enclosure, written
#: out again; a test pins them to its signature), each a plain JSON value: values not checked (diagnostics)
ENGINE_KEYS = {"method", "order", "prec", "tau_max", "max_error", "max_steps", "scheme", "tol", "rel_tol",
                "h_max", "max_width", "time_budget"}
#: the float64 comparison the engine writes (``softpolar.atlas`` ``compare_float``): keys, and those of its parts
_FLOAT64_KEYS = {"size", "pixels_in_certified", "disagreements", "undecided", "examples", "float_area", "rule"}
_EXAMPLE_KEYS = {"box", "winner", "float64"}
_RULE_KEYS = {"kappa", "failure_rate", "failure_rate_kappa0", "pixels", "note"}
_TOP_KEYS = {"format", "spec", "engine", "min_level", "boxes", "area", "fraction_certified", "seconds",
             "provenance", "float64"}
_TOP_REQUIRED = {"format", "spec", "min_level", "boxes", "area", "fraction_certified"}
_SPEC_KEYS = {"name", "n", "b", "u0", "a0", "x", "y"}
_BOX_KEYS = {"key", "status", "x", "y", "winner", "tau", "h", "steps", "a_lower", "u_lower", "max_error",
             "seconds", "reason", "digest"}
_CERTIFIED_REQUIRED = {"key", "status", "x", "y", "winner", "tau", "h", "steps", "a_lower", "u_lower"}
_CANONICAL = re.compile(r"-?(0|[1-9][0-9]{0,300})(/[1-9][0-9]{0,300})?", re.ASCII)


def _flint():
    import flint
    return flint


def _ball(q):
    flint = _flint()
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


class Jet:
    """A first-order jet: value ``v`` and gradient ``g`` (list), entries arb balls."""

    __slots__ = ("v", "g")

    def __init__(self, v, g):
        self.v, self.g = v, g

    def __add__(self, o):
        if isinstance(o, Jet):
            return Jet(self.v + o.v, [x + y for x, y in zip(self.g, o.g)])
        return Jet(self.v + o, self.g)

    __radd__ = __add__

    def __sub__(self, o):
        if isinstance(o, Jet):
            return Jet(self.v - o.v, [x - y for x, y in zip(self.g, o.g)])
        return Jet(self.v - o, self.g)

    def __mul__(self, o):
        if isinstance(o, Jet):
            return Jet(self.v * o.v, [self.v * y + o.v * x for x, y in zip(self.g, o.g)])
        return Jet(self.v * o, [x * o for x in self.g])

    __rmul__ = __mul__

    def __truediv__(self, o):
        if isinstance(o, Jet):
            q = self.v / o.v
            return Jet(q, [(x - q * y) / o.v for x, y in zip(self.g, o.g)])
        return Jet(self.v / o, [x / o for x in self.g])

    def exp(self):
        e = self.v.exp()
        return Jet(e, [e * x for x in self.g])


def _conv(x, y, m, start=0):
    """$\\sum_{j=start}^{m} x_j\\,y_{m-j}$."""
    acc = x[start] * y[m - start]
    for j in range(start + 1, m + 1):
        acc = acc + x[j] * y[m - j]
    return acc


def taylor_coefficients(y0, b, ref, order, zero, one):
    """Taylor coefficients ``C[i][0..order]`` of the reduced tau-system through ``y0`` (Moore recurrences)."""
    return _series(y0, b, ref, order, zero, one)[0]


def _series(y0, b, ref, order, zero, one):
    r"""``(C, s, dev)``: the state's coefficients ``C[i][0..order+1]`` and those of the softmax ``s[k]`` and of
    ``dev[k]`` $=u_k-\bar u$ ($\bar u=\sum_j s_ju_j$) along the solution, ``[0..order]``, every token ``k``."""
    d = len(y0)
    n = d // 2 + 1
    Y = [[c] for c in y0]
    t = [[] for _ in range(n)]
    e = [[] for _ in range(n)]
    s = [[] for _ in range(n)]
    q = [[] for _ in range(n)]
    dev = [[] for _ in range(n)]
    S, yb = [], []
    for m in range(order + 1):
        u_m = [Y[k][m] for k in range(n - 1)] + [zero]
        a_m = [Y[n - 1 + k][m] for k in range(n - 1)] + [zero]
        for k in range(n):
            if k == ref:
                e[k].append(one if m == 0 else zero)
                continue
            t[k].append(a_m[k] - a_m[ref])
            if m == 0:
                e[k].append(t[k][0].exp())
            else:
                acc = t[k][1] * e[k][m - 1]
                for j in range(2, m + 1):
                    acc = acc + j * t[k][j] * e[k][m - j]
                e[k].append(acc / m)
        tot = e[0][m]
        for k in range(1, n):
            tot = tot + e[k][m]
        S.append(tot)
        for k in range(n):
            num = e[k][m] - _conv(S, s[k] + [zero], m, start=1) if m else e[k][m]
            s[k].append(num / S[0])
            q[k].append(zero if k == ref else u_m[k] - u_m[ref])
        ybm = zero
        for k in range(n):
            if k != ref:
                ybm = ybm + _conv(s[k], q[k], m)
        yb.append(ybm)
        fu, fa = [], []
        for k in range(n):
            dev[k].append(q[k][m] - yb[m])
            fu.append(s[k][m] * b)
            fa.append(_conv(s[k], dev[k], m))
        F = [fu[k] - fu[n - 1] for k in range(n - 1)] + [fa[k] - fa[n - 1] for k in range(n - 1)]
        for i in range(d):
            Y[i].append(F[i] / (m + 1))
    return Y, s, dev


def jacobian_coefficients(X, b, ref, order):
    r"""$\Phi_0..\Phi_{order}$ (``arb_mat``, $d\times d$): the Taylor coefficients in $h$ of $D\varphi_h(y)$, for
    every $y$ in the ball vector ``X``, by the variational equation as a linear recurrence.

    The mathematics, written out for this module: for a fixed start $y$, $\Phi(t)=D\varphi_t(y)$ solves
    $\Phi'=J(t)\Phi$, $\Phi(0)=I$, $J(t)=DF(\varphi_t(y))$; matching the coefficients of $t^k$ gives
    $(k+1)\Phi_{k+1}=\sum_{j=0}^{k}J_j\Phi_{k-j}$, which needs only $J_0..J_{order-1}$. The
    derivatives of the full field ($f^u_k=b\,s_k$, $f^a_k=s_k\,\delta_k$, $\delta_k=u_k-\bar u$) are
    $\partial s_k/\partial a_l=s_k(\delta_{kl}-s_l)$, so

    * $\partial f^u_k/\partial a_l=b\,s_k(\delta_{kl}-s_l)$, $\partial f^u_k/\partial u_l=0$;
    * $\partial f^a_k/\partial u_l=s_k(\delta_{kl}-s_l)$;
    * $\partial f^a_k/\partial a_l=\delta_{kl}s_k\delta_k-s_ks_l(\delta_k+\delta_l)$.

    In the reduced coordinates (token $n$ pinned at $u_n=a_n=0$) an entry is the row of token $k$ minus
    the row of token $n$, in the column of token $l<n$; written with one product per entry
    (a difference of two products would widen the balls): with $\sigma_k=s_k-s_n$,
    $\partial F^a_k/\partial p_l=\delta_{kl}s_k-\sigma_ks_l$ (times $b$ for $\partial F^u_k/\partial g_l$) and
    $\partial F^a_k/\partial g_l=\delta_{kl}s_k\delta_k-s_l\,(s_k\delta_k-s_n\delta_n+\sigma_k\delta_l)$.
    The coefficients of $s$ and $\delta$ along the solution from the ball ``X`` come from
    :func:`_series` (Moore's recurrences): balls containing those of every start in ``X``, so every
    $\Phi_k$ here contains $\partial c_k/\partial y$ for every $y\in$ ``X``.
    """
    flint = _flint()
    if order < 1:
        raise ValueError(f"order={order} is not >= 1")
    zero = flint.arb(0)
    d = len(X)
    n = d // 2 + 1
    L = order  # J_0 .. J_{order-1}
    _, s, dev = _series(X, b, ref, L - 1, zero, flint.arb(1))
    last = n - 1
    sd = [[_conv(s[k], dev[k], m) for m in range(L)] for k in range(n)]
    sig = [[s[k][m] - s[last][m] for m in range(L)] for k in range(n - 1)]
    Wp, Wg = {}, {}
    for k in range(n - 1):
        for l in range(n - 1):
            Wp[k, l] = [_conv(sig[k], s[l], m) for m in range(L)]
            inner = [sd[k][m] - sd[last][m] + _conv(sig[k], dev[l], m) for m in range(L)]
            Wg[k, l] = [_conv(s[l], inner, m) for m in range(L)]
    J = []
    for m in range(L):
        Jm = flint.arb_mat(d, d)
        for k in range(n - 1):
            for l in range(n - 1):
                wp = (s[k][m] - Wp[k, l][m]) if k == l else -Wp[k, l][m]
                wg = (sd[k][m] - Wg[k, l][m]) if k == l else -Wg[k, l][m]
                Jm[k, n - 1 + l] = b * wp
                Jm[n - 1 + k, l] = wp
                Jm[n - 1 + k, n - 1 + l] = wg
        J.append(Jm)
    Phi = [flint.arb_mat(d, d, [int(i == j) for i in range(d) for j in range(d)])]
    for k in range(order):
        acc = J[0] * Phi[k]
        for j in range(1, k + 1):
            acc = acc + J[j] * Phi[k - j]
        Phi.append(acc / (k + 1))
    return Phi


def _ref(values, n):
    logits = [float(values[n - 1 + k].mid()) for k in range(n - 1)] + [0.0]
    return max(range(n), key=lambda k: logits[k])


def _field(X, b):
    flint = _flint()
    n = len(X) // 2 + 1
    C = taylor_coefficients(X, b, _ref(X, n), 0, flint.arb(0), flint.arb(1))
    return [c[1] for c in C]


def _apriori(X, b, h):
    flint = _flint()
    T = _ball(h) * flint.arb(flint.fmpq(1, 2), flint.fmpq(1, 2))
    K = [x + T * f for x, f in zip(X, _field(X, b))]
    for _ in range(12):
        # B_{k+1} = X + [0,h] F(B_k), widened by 10% plus a little: a contraction for small h
        B = [flint.arb(k.mid(), k.rad() * 1.1 + (abs(k.mid()) + 1) * 2.0 ** -26) for k in K]
        K = [x + T * f for x, f in zip(X, _field(B, b))]
        if all(bb.contains_interior(k) for bb, k in zip(B, K)):
            return B
    return None


def _poly(coeffs, hb):
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * hb + c
    return acc


def _step(m, A, E, b, h, order, jacobian="recurrence"):
    """One Lohner step of the checker; ``None`` if no a-priori box was verified.

    ``jacobian``: ``"recurrence"`` (:func:`jacobian_coefficients`, the default) or ``"jets"`` (forward-mode
    jets through the state's recurrences, :class:`Jet`: the checker's first method, kept as a cross-check).
    """
    flint = _flint()
    d = len(m)
    n = d // 2 + 1
    unit = flint.arb(0, 1)
    X = [m[i] + E[i] + sum((A[i][j] * unit for j in range(len(A[i]))), flint.arb(0)) for i in range(d)]
    B = _apriori(X, b, h)
    if B is None:
        return None
    hb = _ball(h)
    CB = taylor_coefficients(B, b, _ref(B, n), order + 1, flint.arb(0), flint.arb(1))
    R = [c[order + 1] * hb ** (order + 1) for c in CB]
    Cm = taylor_coefficients(m, b, _ref(m, n), order, flint.arb(0), flint.arb(1))
    P = [_poly(c, hb) for c in Cm]
    # mean value theorem along [m, y]: the Jacobian's box must contain the midpoint m as well
    Xm = [X[i].union(m[i]) for i in range(d)]
    if jacobian == "recurrence":
        Phi = jacobian_coefficients(Xm, b, _ref(X, n), order)
        Mm = Phi[order]
        for k in range(order - 1, -1, -1):
            Mm = Mm * hb + Phi[k]
    elif jacobian == "jets":
        zero = Jet(flint.arb(0), [flint.arb(0)] * d)
        one = Jet(flint.arb(1), [flint.arb(0)] * d)
        jets = [Jet(Xm[i], [flint.arb(1) if j == i else flint.arb(0) for j in range(d)]) for i in range(d)]
        CJ = taylor_coefficients(jets, b, _ref(X, n), order, zero, one)
        Mm = flint.arb_mat([[_poly([c.g[j] for c in CJ[i]], hb) for j in range(d)] for i in range(d)])
    else:
        raise ValueError(f"jacobian={jacobian!r} is not 'recurrence' or 'jets'")
    k = len(A[0])
    m_new = [flint.arb(p.mid()) for p in P]
    MA_mat = Mm * flint.arb_mat(A)
    ME = Mm * flint.arb_mat([[e] for e in E])
    MA = [[MA_mat[i, j] for j in range(k)] for i in range(d)]
    A_new = [[flint.arb(x.mid()) for x in row] for row in MA]
    E_new = []
    for i in range(d):
        acc = (P[i] - m_new[i]) + R[i] + ME[i, 0]
        for j in range(k):
            acc = acc + (MA[i][j] - A_new[i][j]) * unit
        E_new.append(acc)
    return m_new, A_new, E_new


def _lower(m, A, E, off, i, j, n):
    r"""A ball containing $\min(x_i-x_j)$ over the set $\{m+Ar+E\}$, $x$ the block at ``off`` (token $n$ is 0)."""
    flint = _flint()
    val = flint.arb(0)
    for k, sign in ((i, 1), (j, -1)):
        if k < n - 1:
            val = val + sign * (m[off + k] + E[off + k])
    for c in range(len(A[0])):
        col = flint.arb(0)
        for k, sign in ((i, 1), (j, -1)):
            if k < n - 1:
                col = col + sign * A[off + k][c]
        val = val - abs(col)
    return val


def in_region(m, A, E, n, i, a_claim=None, u_claim=None) -> bool:
    r"""$a_i-a_j>0$ and $u_i-u_j\ge0$ for all $j\ne i$ over the set, and at least the claimed bounds.

    Reduced coordinates: the state has $2(n-1)$ entries ($u_k-u_n$, then $a_k-a_n$); a state of another
    length is refused (it would be read with the wrong offsets).
    """
    if len(m) != 2 * (n - 1) or len(E) != len(m) or len(A) != len(m):
        raise ValueError(f"a state of length {len(m)} for n = {n}: expected {2 * (n - 1)}")
    for j in range(n):
        if j == i:
            continue
        la, lu = _lower(m, A, E, n - 1, i, j, n), _lower(m, A, E, 0, i, j, n)
        if not (la > 0 and lu >= 0):
            return False
        if a_claim is not None and not la >= _ball(a_claim[j]):
            return False
        if u_claim is not None and not lu >= _ball(u_claim[j]):
            return False
    return True


# ---------------------------------------------------------------------------------------
# the spec, read again
# ---------------------------------------------------------------------------------------
def read_affine(text):
    """``[c, cx, cy]`` of an affine expression in x, y: a small evaluator over :mod:`ast` (never ``eval``).

    ``text`` is read whole: a text longer than :data:`MAX_TEXT` is refused, never cut. Every number is read
    exactly from its digits, its decimal exponent within +-:data:`MAX_EXPONENT` (the engine's rule).
    """
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ValueError(f"{str(text)[:60]!r}... is not a string of at most {MAX_TEXT} characters")
    if not text.isascii():  # Python would read fullwidth digits and fold identifiers
        raise ValueError(f"{text[:60]!r} has non-ASCII characters")

    def constant(node):
        # exact: an int as it is, a float literal from its own digits (never the float64 nearest to them)
        digits = ast.get_source_segment(text, node) or str(node.value)
        if type(node.value) is int:
            q = Fraction(node.value)
        else:
            m = _DECIMAL.fullmatch(digits)
            if not m or abs(int(m.group(1) or 0)) > MAX_WRITTEN_EXPONENT:
                raise ValueError(f"the number {digits[:40]!r} in {text[:60]!r} is not a plain decimal "
                                 f"(digits, '.', an exponent within +-{MAX_WRITTEN_EXPONENT})")
            q = Fraction(digits)
        if not abs(q) <= MAX_COORD:
            raise ValueError(f"the constant {digits[:40]} in {text[:60]!r} is beyond +-{MAX_COORD}")
        if q and abs(q) < Fraction(1, 10 ** MAX_EXPONENT):
            raise ValueError(f"the constant {digits[:40]} in {text[:60]!r} has a decimal exponent below "
                             f"-{MAX_EXPONENT}")
        return q

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return [constant(node), Fraction(0), Fraction(0)]
        if isinstance(node, ast.Name) and node.id in ("x", "y"):
            return [Fraction(0), Fraction(int(node.id == "x")), Fraction(int(node.id == "y"))]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return [-c for c in ev(node.operand)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return ev(node.operand)
        if isinstance(node, ast.BinOp):
            p, q = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return [a + b for a, b in zip(p, q)]
            if isinstance(node.op, ast.Sub):
                return [a - b for a, b in zip(p, q)]
            if isinstance(node.op, ast.Mult) and not (p[1] or p[2]):
                return [p[0] * b for b in q]
            if isinstance(node.op, ast.Mult) and not (q[1] or q[2]):
                return [a * q[0] for a in p]
            if isinstance(node.op, ast.Div) and not (q[1] or q[2]) and q[0]:
                return [a / q[0] for a in p]
        raise ValueError(f"{text!r} is not an affine expression in x, y")

    try:
        return ev(ast.parse(text, mode="eval").body)
    except (SyntaxError, RecursionError, OverflowError, MemoryError) as exc:
        raise ValueError(f"{text!r} is not an affine expression in x, y ({type(exc).__name__})") from None


def _rational(text, what: str) -> Fraction:
    """An exact rational from its canonical text (``str(Fraction)``: ``-3``, ``1/2``); anything else refused."""
    if not isinstance(text, str) or not _CANONICAL.fullmatch(text):
        raise ValueError(f"{what}={str(text)[:60]!r} is not a rational in canonical form (e.g. '-1/2')")
    q = Fraction(text)
    if str(q) != text:
        raise ValueError(f"{what}={text!r} is not in lowest terms")
    return q


def _spec_number(text, what: str) -> Fraction:
    q = _rational(text, what)
    if abs(q) > MAX_COORD:
        raise ValueError(f"{what}={q} is beyond +-{MAX_COORD}")
    return q


@dataclass(frozen=True)
class SpecView:
    """The checker's own reading of a spec: exact coefficients ``(c, cx, cy)`` per entry."""

    name: str
    n: int
    b: Fraction
    u0: tuple
    a0: tuple
    x: tuple
    y: tuple

    @property
    def area(self) -> Fraction:
        return (self.x[1] - self.x[0]) * (self.y[1] - self.y[0])

    def same_slice(self, other: SpecView) -> bool:
        return (self.n, self.b, self.u0, self.a0, self.x, self.y) == (other.n, other.b, other.u0, other.a0,
                                                                       other.x, other.y)


def check_spec(spec, *, presets: bool = True) -> SpecView:
    """Read a certificate's spec by the engine's rules, in this module's own code; ``ValueError`` if any fails."""
    if not isinstance(spec, dict):
        raise ValueError(f"spec is a {type(spec).__name__}, not an object")
    if set(spec) != _SPEC_KEYS:
        extra, missing = sorted(set(spec) - _SPEC_KEYS), sorted(_SPEC_KEYS - set(spec))
        raise ValueError(f"spec keys: unexpected {extra}, missing {missing}; expected exactly {sorted(_SPEC_KEYS)}")
    name, n = spec["name"], spec["n"]
    if (not isinstance(name, str) or not name.isascii() or not name.isprintable() or not 0 < len(name) <= MAX_NAME
            or "/" in name or name.startswith(".")):
        raise ValueError(f"spec name {str(name)[:60]!r} is not a printable ASCII name of 1..{MAX_NAME} characters "
                         "without '/'")
    if not isinstance(n, int) or isinstance(n, bool) or not 2 <= n <= MAX_N:
        raise ValueError(f"n={n!r} is not an integer in 2..{MAX_N}")
    vecs = {}
    for key in ("u0", "a0"):
        v = spec[key]
        if not isinstance(v, list) or len(v) != n:
            got = f"{len(v)} entries" if isinstance(v, list) else type(v).__name__
            raise ValueError(f"{key} has {got}; expected a list of n = {n} expressions")
        vecs[key] = tuple(tuple(read_affine(t)) for t in v)
    b = _spec_number(spec["b"], "b")
    if b <= 0:
        raise ValueError(f"b={b} is not > 0")
    ranges = {}
    for key in ("x", "y"):
        r = spec[key]
        if not isinstance(r, list) or len(r) != 2:
            raise ValueError(f"{key}={str(r)[:60]!r} is not a pair [lo, hi]")
        lo, hi = (_spec_number(v, key) for v in r)
        if not lo < hi:
            raise ValueError(f"{key}=[{lo}, {hi}] does not have lo < hi")
        ranges[key] = (lo, hi)
    coeffs = vecs["u0"] + vecs["a0"]
    if not any(c[1] for c in coeffs) or not any(c[2] for c in coeffs):
        raise ValueError("the spec does not depend on both x and y (not a 2-D slice)")
    view = SpecView(name, n, b, vecs["u0"], vecs["a0"], ranges["x"], ranges["y"])
    if presets and name in PRESETS and not view.same_slice(check_spec(PRESETS[name], presets=False)):
        raise ValueError(f"the spec is named {name!r} but is not that preset's slice")
    return view


def _box_set(sv: SpecView, x0, x1, y0, y1):
    """Exact ``(m, A)`` of the box in reduced coordinates, from the spec's coefficients."""
    u, a = sv.u0, sv.a0
    rows = [(u[k], u[-1]) for k in range(len(u) - 1)] + [(a[k], a[-1]) for k in range(len(a) - 1)]
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    m = [(p[0] - q[0]) + (p[1] - q[1]) * cx + (p[2] - q[2]) * cy for p, q in rows]
    A = [[(p[1] - q[1]) * rx, (p[2] - q[2]) * ry] for p, q in rows]
    return m, A


# ---------------------------------------------------------------------------------------
# one box
# ---------------------------------------------------------------------------------------
def _box_claims(box: dict, n: int):
    """``(winner, steps, tau, a_lower, u_lower)`` of a certified box, every number checked; ``ValueError`` if not."""
    missing = _CERTIFIED_REQUIRED - set(box)
    if missing:
        raise ValueError(f"a certified box without {sorted(missing)}")
    winner = box["winner"]
    if not isinstance(winner, int) or isinstance(winner, bool) or not 0 <= winner < n:
        raise ValueError(f"winner {winner!r} is not a token index 0..{n - 1}")
    if not isinstance(box["h"], list) or len(box["h"]) > 100_000:
        raise ValueError("h is not a list of steps")
    hs = [_rational(h, "h") for h in box["h"]]
    if any(h <= 0 or h.denominator & (h.denominator - 1) for h in hs):
        raise ValueError("a step is not a positive dyadic rational")
    tau = _rational(box["tau"], "tau")
    if tau != sum(hs, Fraction(0)):
        raise ValueError(f"tau={box['tau']} is not the sum of the box's steps ({sum(hs, Fraction(0))})")
    steps = box["steps"]
    if not isinstance(steps, int) or isinstance(steps, bool) or steps != len(hs):
        raise ValueError(f"steps={steps!r} is not the number of steps ({len(hs)})")
    bounds = {}
    for key, positive in (("a_lower", True), ("u_lower", False)):
        v = box[key]
        if not isinstance(v, list) or len(v) != n:
            raise ValueError(f"{key} is not a list of n = {n} entries")
        out = []
        for j, q in enumerate(v):
            if j == winner:
                if q is not None:
                    raise ValueError(f"{key}[{j}] is {q!r}; expected None at the winner")
                out.append(None)
                continue
            q = _rational(q, f"{key}[{j}]")
            if (q <= 0) if positive else (q < 0):
                raise ValueError(f"{key}[{j}]={q} is not {'> 0' if positive else '>= 0'}")
            out.append(q)
        bounds[key] = out
    return winner, hs, tau, bounds["a_lower"], bounds["u_lower"]


def verify_box(spec, box: dict, *, order: int = CHECK_ORDER, prec: int = CHECK_PREC,
               split_depth: int | None = None, method: str = "recurrence") -> tuple[bool, str]:
    """Re-prove one certified box of a certificate, with its ``tau`` and lower bounds; ``(ok, why)``.

    ``spec``: a :class:`SpecView` (or a spec dict, read by :func:`check_spec`). The checker's own
    enclosure can be a little wider than the engine's (the stored lower bounds are the engine's, tight
    to its own enclosure), so a box it cannot verify whole is cut in two halves (across x at even
    depth, across y at odd), each re-proven the same way (down to ``split_depth`` cuts): still a
    proof for the whole box, since the halves cover it. ``method``: one of :data:`CHECK_METHODS`
    (``"jets"`` cuts in quarters, ``split_depth`` levels, default 2).
    """
    flint = _flint()
    if method not in CHECK_METHODS:
        raise ValueError(f"method={method!r} is not one of {CHECK_METHODS}")
    if split_depth is None:
        split_depth = SPLIT_DEPTH if method == "recurrence" else 2
    sv = spec if isinstance(spec, SpecView) else check_spec(spec)
    try:
        winner, hs, tau, a_low, u_low = _box_claims(box, sv.n)
        x0, x1 = (_rational(v, "x") for v in box["x"])
        y0, y1 = (_rational(v, "y") for v in box["y"])
    except ValueError as exc:
        return False, str(exc)
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return _verify_part(sv, _ball(sv.b), winner, hs, a_low, u_low, order, (x0, x1, y0, y1), split_depth, tau,
                            method=method)
    finally:
        flint.ctx.prec = old


def _verify_part(sv, b, winner, hs, a_low, u_low, order, bounds, depth, tau, cut=0, method="recurrence"):
    """Prove the part ``bounds`` of a box, else cut it in halves (across x if ``cut`` is even, else y; quarters
    for ``method="jets"``)."""
    flint = _flint()
    n = sv.n
    x0, x1, y0, y1 = bounds
    m, A = _box_set(sv, x0, x1, y0, y1)
    m = [_ball(v) for v in m]
    A = [[_ball(v) for v in row] for row in A]
    E = [flint.arb(0) for _ in m]
    why = None
    for k, h in enumerate(hs):
        nxt = _step(m, A, E, b, h, order, jacobian=method)
        if nxt is None:
            why = f"no a-priori enclosure at step {k + 1}"
            break
        m, A, E = nxt
    if why is None:
        if in_region(m, A, E, n, winner, a_low, u_low):
            return True, f"in R_{winner}+ at tau = {tau} with the stored bounds"
        why = (f"R_{winner}+ with the stored lower bounds not proven at tau = {tau}" if
               in_region(m, A, E, n, winner) else f"R_{winner}+ not reached at tau = {tau}")
    if depth <= 0:
        return False, why
    xm, ym = (x0 + x1) / 2, (y0 + y1) / 2
    if method == "jets":
        parts = [(x0, xm, y0, ym), (xm, x1, y0, ym), (x0, xm, ym, y1), (xm, x1, ym, y1)]
    elif cut % 2 == 0:
        parts = [(x0, xm, y0, y1), (xm, x1, y0, y1)]
    else:
        parts = [(x0, x1, y0, ym), (x0, x1, ym, y1)]
    for part in parts:
        ok, sub = _verify_part(sv, b, winner, hs, a_low, u_low, order, part, depth - 1, tau, cut + 1, method)
        if not ok:
            return False, f"{why}; part [{part[0]}, {part[1]}] x [{part[2]}, {part[3]}]: {sub}"
    return True, f"cut into {len(parts)} parts ({why} for the whole part)"


# ---------------------------------------------------------------------------------------
# the whole certificate
# ---------------------------------------------------------------------------------------
@dataclass
class AtlasCheck:
    """Outcome of :func:`check_atlas`: ``passed``, the boxes verified, the recomputed numbers, every problem.

    ``area`` (exact, per label ``token k`` / ``uncertified``), ``fraction`` (exact certified fraction),
    ``boxes`` / ``uncertified``: recomputed from the boxes by the checker (``None`` if it could not
    read them); ``not_covered``: what the verdict does not vouch for.
    """

    passed: bool
    verified: int
    certified: int
    problems: list = field(default_factory=list)
    seconds: float = 0.0
    area: dict | None = None
    fraction: Fraction | None = None
    boxes: int | None = None
    uncertified: int | None = None
    slice: str | None = None
    not_covered: str = NOT_COVERED


def _key(box, min_level):
    key = box.get("key")
    if (not isinstance(key, list) or len(key) != 3
            or any(not isinstance(v, int) or isinstance(v, bool) for v in key)):
        raise ValueError(f"box key {str(key)[:60]} is not [level, i, j] (integers)")
    L, i, j = key
    if not 0 <= L <= min_level or not (0 <= i < 2 ** L and 0 <= j < 2 ** L):
        raise ValueError(f"box key {key} is outside the quadtree of levels 0..{min_level}")
    return L, i, j


def check_tiling(cert: dict, sv: SpecView | None = None) -> list[str]:
    """Problems with the box layout: keys vs bounds, overlaps (ancestor keys), area sum, levels, statuses."""
    sv = sv or check_spec(cert["spec"])
    X0, X1 = sv.x
    Y0, Y1 = sv.y
    min_level = cert["min_level"]
    if not isinstance(min_level, int) or isinstance(min_level, bool) or not 0 <= min_level <= MAX_LEVEL:
        return [f"min_level={min_level!r} is not an integer in 0..{MAX_LEVEL}"]
    keys, total, problems = set(), Fraction(0), []
    if not isinstance(cert["boxes"], list) or not cert["boxes"]:
        return ["boxes is not a non-empty list"]
    for box in cert["boxes"]:
        if not isinstance(box, dict):
            problems.append("a box is not an object")
            continue
        extra = set(box) - _BOX_KEYS
        if extra:
            problems.append(f"box {box.get('key')}: unexpected keys {sorted(extra)}")
        L, i, j = _key(box, min_level)
        if box.get("status") not in ("certified", "uncertified"):
            problems.append(f"box {[L, i, j]}: status {str(box.get('status'))[:40]!r} is not certified/uncertified")
        if box.get("status") == "uncertified" and L != min_level:
            problems.append(f"box {[L, i, j]}: uncertified above the finest level {min_level} (it would be split)")
        wx, wy = (X1 - X0) / 2 ** L, (Y1 - Y0) / 2 ** L
        want = [str(X0 + i * wx), str(X0 + (i + 1) * wx)], [str(Y0 + j * wy), str(Y0 + (j + 1) * wy)]
        if [box.get("x"), box.get("y")] != list(want):
            problems.append(f"box {[L, i, j]}: bounds {box.get('x')} x {box.get('y')} do not match its key")
        if (L, i, j) in keys:
            problems.append(f"box {[L, i, j]} appears twice")
        keys.add((L, i, j))
        total += wx * wy
    for L, i, j in keys:
        for up in range(1, L + 1):
            if (L - up, i >> up, j >> up) in keys:
                problems.append(f"box {[L, i, j]} overlaps box {[L - up, i >> up, j >> up]}")
                break
    if total != sv.area:
        problems.append(f"boxes cover area {total}, the slice has {sv.area}")
    return problems


def recompute_numbers(cert: dict, sv: SpecView) -> dict:
    """The headline numbers from the boxes: exact area per label, certified fraction, box counts."""
    X0, X1 = sv.x
    Y0, Y1 = sv.y
    area, counts = {}, {"certified": 0, "uncertified": 0}
    for box in cert["boxes"]:
        L = box["key"][0]
        a = (X1 - X0) * (Y1 - Y0) / 4 ** L
        if box["status"] == "certified":
            label = token_label(box["winner"], cert["format"])
            counts["certified"] += 1
        else:
            label = "uncertified"
            counts["uncertified"] += 1
        area[label] = area.get(label, Fraction(0)) + a
    certified = sum((v for k, v in area.items() if k != "uncertified"), Fraction(0))
    return {"area": area, "fraction": certified / sv.area, **counts, "boxes": len(cert["boxes"])}


def _number_problems(cert: dict, nums: dict) -> list[str]:
    problems = []
    stored = cert["area"]
    want = {k: str(v) for k, v in nums["area"].items()}
    if not isinstance(stored, dict) or stored != want:
        problems.append(f"area {str(stored)[:200]} is not the boxes' area per winner {want}")
    frac = cert["fraction_certified"]
    if type(frac) is not float or frac != float(nums["fraction"]):
        problems.append(f"fraction_certified={str(frac)[:40]} is not the boxes' certified fraction "
                        f"{float(nums['fraction'])!r} (= {nums['fraction']})")
    return problems


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _keys_problem(where: str, obj, allowed) -> str | None:
    if not isinstance(obj, dict):
        return f"{where} is a {type(obj).__name__}, not an object"
    extra = sorted(str(k)[:40] for k in set(obj) - set(allowed))
    return f"{where}: unexpected keys {extra}; expected keys among {sorted(allowed)}" if extra else None


def form_problems(cert: dict, n: int) -> list[str]:
    """Problems with the parts the checker does not re-derive: their form (keys at every level, value types),
    and the provenance tag, which it knows (:data:`PROVENANCE`)."""
    problems = []

    def need(ok, text):
        if not ok:
            problems.append(text)

    if "provenance" in cert:
        need(cert["provenance"] == PROVENANCE, f"provenance {str(cert['provenance'])[:20]!r} is not the atlas claim's "
             f"tag {PROVENANCE!r} (the trapping lemma and the box proofs are derived for this project)")
    if "seconds" in cert:
        need(_is_number(cert["seconds"]) and cert["seconds"] >= 0, "seconds is not a number >= 0")
    if "engine" in cert:
        why = _keys_problem("engine", cert["engine"], ENGINE_KEYS)
        need(why is None, str(why))
        if why is None:
            bad = sorted(k for k, v in cert["engine"].items() if not (v is None or isinstance(v, (str, bool))
                                                                        or _is_number(v)))
            need(not bad, f"engine: {bad} are not plain values (a string, a number, true/false or null)")
    if "float64" in cert:
        f = cert["float64"]
        why = _keys_problem("float64", f, _FLOAT64_KEYS)
        need(why is None, str(why))
        if why is None:
            for k in ("size", "pixels_in_certified", "disagreements", "undecided"):
                need(k not in f or (_is_int(f[k]) and f[k] >= 0), f"float64.{k} is not an integer >= 0")
            ex = f.get("examples", [])
            need(isinstance(ex, list) and len(ex) <= 100, "float64.examples is not a list of at most 100 entries")
            for e in ex if isinstance(ex, list) else []:
                why = _keys_problem("float64.examples[]", e, _EXAMPLE_KEYS)
                need(why is None, str(why))
                if why is None:
                    need(isinstance(e.get("box", []), list) and all(_is_int(v) for v in e.get("box", []))
                         and _is_int(e.get("winner", 0)) and isinstance(e.get("float64", []), list)
                         and all(_is_int(v) for v in e.get("float64", [])),
                         "float64.examples[]: box, winner and float64 are not integers")
            fa = f.get("float_area", {})
            why = _keys_problem("float64.float_area", fa, {token_label(k, cert["format"]) for k in range(n)})
            need(why is None, str(why))
            if why is None:
                need(all(_is_number(v) for v in fa.values()), "float64.float_area holds a value that is not a number")
            rule = f.get("rule", {})
            why = _keys_problem("float64.rule", rule, _RULE_KEYS)
            need(why is None, str(why))
            if why is None:
                need(all(_is_number(rule[k]) for k in _RULE_KEYS - {"note"} if k in rule)
                     and isinstance(rule.get("note", ""), str), "float64.rule holds a value of the wrong type")
    for box in cert["boxes"]:
        where = f"box {box.get('key')}"
        for k in ("seconds", "max_error"):
            need(k not in box or (_is_number(box[k]) and box[k] >= 0), f"{where}: {k} is not a number >= 0")
        need(not isinstance(box.get("reason", ""), (dict, list)), f"{where}: reason is not a plain value")
        need(isinstance(box.get("digest", ""), str), f"{where}: digest is not a string")
        if len(problems) > 50:
            break
    return problems


def check_atlas(cert: dict, *, mapper=map, method: str = "recurrence") -> AtlasCheck:
    """Verify a whole atlas certificate (see the module doc). ``mapper``: ``map`` or a parallel map;
    ``method``: one of :data:`CHECK_METHODS` (the default, or the checker before it for bench row 16)."""
    started = time.perf_counter()
    if method not in CHECK_METHODS:
        raise InvalidArgument(f"method={method!r} is not allowed; expected one of {CHECK_METHODS}")
    if not isinstance(cert, dict) or not isinstance(cert.get("format"), str) or cert["format"] not in READ_FORMATS:
        raise InvalidArgument(f"certificate is not a softpolar atlas this softpolar reads (format "
                              f"{' or '.join(map(repr, READ_FORMATS))} expected)")

    def refused(problems, **kw):
        return AtlasCheck(False, 0, 0, problems, time.perf_counter() - started, **kw)

    extra, missing = sorted(set(cert) - _TOP_KEYS), sorted(_TOP_REQUIRED - set(cert))
    if extra or missing:
        return refused([f"certificate keys: unexpected {extra}, missing {missing}"])
    try:
        sv = check_spec(cert["spec"])
    except ValueError as exc:
        return refused([f"spec: {exc}"])
    try:
        problems = check_tiling(cert, sv)
    except ValueError as exc:
        return refused([f"layout: {exc}"], slice=sv.name)
    if problems:  # the numbers below need well-formed boxes
        return refused(problems, slice=sv.name)
    problems = form_problems(cert, sv.n)
    if problems:
        return refused(problems, slice=sv.name)
    certified = [bx for bx in cert["boxes"] if bx["status"] == "certified"]
    try:
        for bx in certified:
            _box_claims(bx, sv.n)
    except ValueError as exc:
        return refused([f"box {bx['key']}: {exc}"], slice=sv.name)
    nums = recompute_numbers(cert, sv)
    problems += _number_problems(cert, nums)
    verified = 0
    for bx, (ok, why) in zip(certified, mapper(_verify_one, [(sv, bx, method) for bx in certified])):
        if ok:
            verified += 1
        else:
            problems.append(f"box {bx['key']} (winner token {bx['winner']}): {why}")
    return AtlasCheck(not problems, verified, len(certified), problems, time.perf_counter() - started,
                      area=nums["area"], fraction=nums["fraction"], boxes=nums["boxes"],
                      uncertified=nums["uncertified"], slice=sv.name)


def _verify_one(args):
    spec, box, method = args
    try:
        return verify_box(spec, box, method=method)
    except (ValueError, KeyError, TypeError, ZeroDivisionError, IndexError, AttributeError) as exc:
        return False, f"malformed certificate entry ({type(exc).__name__}: {str(exc)[:120]})"
