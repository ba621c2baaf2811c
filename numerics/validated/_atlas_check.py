r"""Independent checker of atlas certificates (``softpolar atlas --check``).

Shares no enclosure code with the box engine (:mod:`numerics.validated._box`): its own parsing of the
slice, its own reduced vector field, its own Taylor arithmetic, its own a-priori test and its
own set update. What differs:

* **Taylor coefficients by Moore's recurrences** (each coefficient of $e^{t}$, of a quotient
  and of a product computed once, from the lower ones) on plain arb lists, instead of Picard
  iteration in ``arb_series``;
* **the Jacobian by forward-mode differentiation**: the recurrences run on first-order jets
  :class:`_Jet` (value and gradient, both arb balls), so the coefficients of $DT$ come out of
  the same recurrences, instead of a separate variational system;
* only the step sizes $h_k$ are taken from the certificate (hints: any exact dyadic step is
  sound); if the claimed winner's region $R_i^+$ is not reached after the recorded steps, the
  checker continues with the last step for a few more.

The mathematics per step is the mean-value (Lohner) form of the module doc of
:mod:`numerics.validated._box`: the set $\{m+Ar+\epsilon\}$, $r\in[-1,1]^2$, is mapped to
$T(m)+[DT(X)](Ar+\epsilon)+c_{p+1}(B)h^{p+1}$ with $X$ its hull and $B$ an a-priori box
($X+[0,h]F(B)\subset\operatorname{int}B$, checked). A box is *verified* when, after some step,
$a_i-a_j>0$ and $u_i-u_j\ge0$ are proven for all $j\ne i$ over the set, $i$ the certificate's
winner; by the trapping lemma [D] this proves $s\to e_i$ for the whole box.

The certificate as a whole passes iff its boxes tile the slice exactly (quadtree keys, none an
ancestor of another, exact areas summing to the slice's area, bounds matching the keys) and
every box marked certified is verified. Anything else -- a wrong winner, a moved box, a missing
box -- is a rejection with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from theorems import InvalidArgument

CHECK_ORDER = 8
#: a box the checker cannot verify whole is split in four, up to this depth (each part re-proven)
SPLIT_DEPTH = 2
CHECK_PREC = 64
EXTRA_STEPS = 12


def _flint():
    import flint
    return flint


def _ball(q):
    flint = _flint()
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


class _Jet:
    """A first-order jet: value ``v`` and gradient ``g`` (list), entries arb balls."""

    __slots__ = ("v", "g")

    def __init__(self, v, g):
        self.v, self.g = v, g

    def __add__(self, o):
        if isinstance(o, _Jet):
            return _Jet(self.v + o.v, [x + y for x, y in zip(self.g, o.g)])
        return _Jet(self.v + o, self.g)

    __radd__ = __add__

    def __sub__(self, o):
        if isinstance(o, _Jet):
            return _Jet(self.v - o.v, [x - y for x, y in zip(self.g, o.g)])
        return _Jet(self.v - o, self.g)

    def __mul__(self, o):
        if isinstance(o, _Jet):
            return _Jet(self.v * o.v, [self.v * y + o.v * x for x, y in zip(self.g, o.g)])
        return _Jet(self.v * o, [x * o for x in self.g])

    __rmul__ = __mul__

    def __truediv__(self, o):
        if isinstance(o, _Jet):
            q = self.v / o.v
            return _Jet(q, [(x - q * y) / o.v for x, y in zip(self.g, o.g)])
        return _Jet(self.v / o, [x / o for x in self.g])

    def exp(self):
        e = self.v.exp()
        return _Jet(e, [e * x for x in self.g])


def _conv(x, y, m, start=0):
    """$\\sum_{j=start}^{m} x_j\\,y_{m-j}$."""
    acc = x[start] * y[m - start]
    for j in range(start + 1, m + 1):
        acc = acc + x[j] * y[m - j]
    return acc


def _coefficients(y0, b, ref, order, zero, one):
    """Taylor coefficients ``C[i][0..order]`` of the reduced tau-system through ``y0`` (Moore recurrences)."""
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
    return Y


def _ref(values, n):
    logits = [float(values[n - 1 + k].mid()) for k in range(n - 1)] + [0.0]
    return max(range(n), key=lambda k: logits[k])


def _field(X, b):
    flint = _flint()
    n = len(X) // 2 + 1
    C = _coefficients(X, b, _ref(X, n), 0, flint.arb(0), flint.arb(1))
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


def _step(m, A, E, b, h, order):
    """One Lohner step of the checker; ``None`` if no a-priori box was verified."""
    flint = _flint()
    d = len(m)
    n = d // 2 + 1
    unit = flint.arb(0, 1)
    X = [m[i] + E[i] + sum((A[i][j] * unit for j in range(len(A[i]))), flint.arb(0)) for i in range(d)]
    B = _apriori(X, b, h)
    if B is None:
        return None
    hb = _ball(h)
    CB = _coefficients(B, b, _ref(B, n), order + 1, flint.arb(0), flint.arb(1))
    R = [c[order + 1] * hb ** (order + 1) for c in CB]
    Cm = _coefficients(m, b, _ref(m, n), order, flint.arb(0), flint.arb(1))
    P = [_poly(c, hb) for c in Cm]
    zero = _Jet(flint.arb(0), [flint.arb(0)] * d)
    one = _Jet(flint.arb(1), [flint.arb(0)] * d)
    # mean value theorem along [m, y]: the jets' box must contain the midpoint m as well
    Xm = [X[i].union(m[i]) for i in range(d)]
    jets = [_Jet(Xm[i], [flint.arb(1) if j == i else flint.arb(0) for j in range(d)]) for i in range(d)]
    CJ = _coefficients(jets, b, _ref(X, n), order, zero, one)
    M = [[_poly([c.g[j] for c in CJ[i]], hb) for j in range(d)] for i in range(d)]
    k = len(A[0])
    m_new = [flint.arb(p.mid()) for p in P]
    MA = [[sum((M[i][l] * A[l][j] for l in range(d)), flint.arb(0)) for j in range(k)] for i in range(d)]
    A_new = [[flint.arb(x.mid()) for x in row] for row in MA]
    E_new = []
    for i in range(d):
        acc = (P[i] - m_new[i]) + R[i]
        for j in range(k):
            acc = acc + (MA[i][j] - A_new[i][j]) * unit
        for l in range(d):
            acc = acc + M[i][l] * E[l]
        E_new.append(acc)
    return m_new, A_new, E_new


def _inside(m, A, E, n, i) -> bool:
    """$a_i-a_j>0$ and $u_i-u_j\\ge0$ for all $j\\ne i$ over the set (reduced coordinates, token n-1 at 0)."""
    flint = _flint()

    def coord(vec, off, k):
        return vec[off + k] if k < n - 1 else None

    for j in range(n):
        if j == i:
            continue
        for off, strict in ((n - 1, True), (0, False)):
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
            if not (val > 0 if strict else val >= 0):
                return False
    return True


# ---------------------------------------------------------------------------------------
# the slice, parsed again
# ---------------------------------------------------------------------------------------
def _affine(text):
    """``[c, cx, cy]`` of an affine expression in x, y: a small evaluator over :mod:`ast` (never ``eval``)."""
    import ast

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return [Fraction(str(node.value)), Fraction(0), Fraction(0)]
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

    return ev(ast.parse(str(text)[:200], mode="eval").body)


def _box_set(spec, x0, x1, y0, y1):
    """Exact ``(m, A)`` of the box in reduced coordinates, from the spec's expressions."""
    u = [_affine(t) for t in spec["u0"]]
    a = [_affine(t) for t in spec["a0"]]
    rows = [(u[k], u[-1]) for k in range(len(u) - 1)] + [(a[k], a[-1]) for k in range(len(a) - 1)]
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    m = [(p[0] - q[0]) + (p[1] - q[1]) * cx + (p[2] - q[2]) * cy for p, q in rows]
    A = [[(p[1] - q[1]) * rx, (p[2] - q[2]) * ry] for p, q in rows]
    return m, A


def verify_box(spec: dict, box: dict, *, order: int = CHECK_ORDER, prec: int = CHECK_PREC,
               split_depth: int = SPLIT_DEPTH) -> tuple[bool, str]:
    """Re-prove one certified box of a certificate; ``(ok, why)``.

    The checker's own enclosure is somewhat wider than the engine's (measured: about 20% larger
    error sets, the jets' dependency effect), so a box it cannot verify whole is split into four
    quarters, each re-proven the same way (down to ``split_depth`` levels): still a proof for the
    whole box, since the quarters cover it.
    """
    flint = _flint()
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        n = int(spec["n"])
        winner = box.get("winner")
        if not isinstance(winner, int) or isinstance(winner, bool) or not 0 <= winner < n:
            return False, f"winner {winner!r} is not a token index"
        hs = [Fraction(h) for h in box.get("h", [])]
        if any(h <= 0 or h.denominator & (h.denominator - 1) for h in hs):
            return False, "a step is not a positive dyadic rational"
        hs = hs + [hs[-1] if hs else Fraction(1, 16)] * EXTRA_STEPS
        b = _ball(Fraction(spec["b"]))
        x0, x1 = (Fraction(v) for v in box["x"])
        y0, y1 = (Fraction(v) for v in box["y"])
        return _verify_part(spec, n, b, winner, hs, order, (x0, x1, y0, y1), split_depth)
    finally:
        flint.ctx.prec = old


def _verify_part(spec, n, b, winner, hs, order, bounds, depth):
    flint = _flint()
    x0, x1, y0, y1 = bounds
    m, A = _box_set(spec, x0, x1, y0, y1)
    m = [_ball(v) for v in m]
    A = [[_ball(v) for v in row] for row in A]
    E = [flint.arb(0) for _ in m]
    why = f"R_{winner + 1}+ not reached in {len(hs)} steps"
    for k, h in enumerate([None] + hs):
        if h is not None:
            nxt = _step(m, A, E, b, h, order)
            if nxt is None:
                why = f"no a-priori enclosure at step {k}"
                break
            m, A, E = nxt
        if _inside(m, A, E, n, winner):
            return True, f"in R_{winner + 1}+ after {k} steps"
    if depth <= 0:
        return False, why
    xm, ym = (x0 + x1) / 2, (y0 + y1) / 2
    parts = [(x0, xm, y0, ym), (xm, x1, y0, ym), (x0, xm, ym, y1), (xm, x1, ym, y1)]
    for part in parts:
        ok, sub = _verify_part(spec, n, b, winner, hs, order, part, depth - 1)
        if not ok:
            return False, f"{why}; quarter [{part[0]}, {part[1]}] x [{part[2]}, {part[3]}]: {sub}"
    return True, f"split into quarters ({why} for the whole box)"


@dataclass
class AtlasCheck:
    """Outcome of :func:`check_atlas`: ``passed``, the boxes verified, and every rejection reason."""

    passed: bool
    verified: int
    certified: int
    problems: list = field(default_factory=list)
    seconds: float = 0.0


def check_tiling(cert: dict) -> list[str]:
    """Problems with the box layout: keys vs bounds, overlaps (ancestor keys), area sum."""
    spec = cert["spec"]
    X0, X1 = (Fraction(v) for v in spec["x"])
    Y0, Y1 = (Fraction(v) for v in spec["y"])
    keys, total, problems = set(), Fraction(0), []
    for box in cert["boxes"]:
        L, i, j = box["key"]
        wx, wy = (X1 - X0) / 2 ** L, (Y1 - Y0) / 2 ** L
        want = [str(X0 + i * wx), str(X0 + (i + 1) * wx)], [str(Y0 + j * wy), str(Y0 + (j + 1) * wy)]
        if [box["x"], box["y"]] != list(want) or not (0 <= i < 2 ** L and 0 <= j < 2 ** L):
            problems.append(f"box {box['key']}: bounds {box['x']} x {box['y']} do not match its key")
        keys.add((L, i, j))
        total += wx * wy
    for L, i, j in keys:
        for up in range(1, L + 1):
            if (L - up, i >> up, j >> up) in keys:
                problems.append(f"box {[L, i, j]} overlaps box {[L - up, i >> up, j >> up]}")
                break
    if len(keys) != len(cert["boxes"]):
        problems.append("duplicate boxes")
    if total != (X1 - X0) * (Y1 - Y0):
        problems.append(f"boxes cover area {total}, the slice has {(X1 - X0) * (Y1 - Y0)}")
    return problems


def check_atlas(cert: dict, *, mapper=map) -> AtlasCheck:
    """Verify a whole atlas certificate (see the module doc). ``mapper``: ``map`` or a parallel map."""
    import time

    started = time.perf_counter()
    if not isinstance(cert, dict) or cert.get("format") != "softpolar-atlas/1":
        raise InvalidArgument("certificate is not a softpolar atlas (format 'softpolar-atlas/1' expected)")
    try:
        problems = check_tiling(cert)
    except (ValueError, KeyError, TypeError, ZeroDivisionError, IndexError) as exc:
        problems = [f"malformed certificate ({type(exc).__name__}: {str(exc)[:120]})"]
    boxes = cert.get("boxes") if isinstance(cert.get("boxes"), list) else []
    certified = [bx for bx in boxes if isinstance(bx, dict) and bx.get("status") == "certified"]
    verified = 0
    for bx, (ok, why) in zip(certified, mapper(_verify_one, [(cert["spec"], bx) for bx in certified])):
        if ok:
            verified += 1
        else:
            w = bx.get("winner")
            problems.append(f"box {bx.get('key')} (winner token {w + 1 if isinstance(w, int) else w!r}): {why}")
    return AtlasCheck(not problems, verified, len(certified), problems, time.perf_counter() - started)


def _verify_one(args):
    spec, box = args
    try:
        return verify_box(spec, box)
    except (ValueError, KeyError, TypeError, ZeroDivisionError, IndexError, AttributeError) as exc:
        return False, f"malformed certificate entry ({type(exc).__name__}: {str(exc)[:120]})"
