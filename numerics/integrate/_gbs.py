r"""Gragg–Bulirsch–Stoer extrapolation in arbitrary precision (mpmath), with order and
step-size control after ODEX (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.9).

One step of length $H$ from $(x,y)$: for the harmonic sequence $n_j=2j$ the modified
midpoint rule with $n_j$ substeps ($h=H/n_j$, $z_1=y+hf(y)$, $z_{m+1}=z_{m-1}+2hf(z_m)$)
gives $T_{j,1}=z_{n_j}$, whose error has an expansion in $h^2$; Aitken–Neville

.. math:: T_{j,l+1}=T_{j,l}+\frac{T_{j,l}-T_{j-1,l}}{(n_j/n_{j-l})^2-1}

eliminates it term by term ($T_{j,j}$ has order $2j$). The coefficients are exact ratios
of integers, rounded once at the working precision, so the method has any order at any
precision. $\mathrm{err}_j=\|T_{j,j}-T_{j,j-1}\|$ (RMS, scaled by
$\mathrm{atol}+\mathrm{rtol}\,|y|$) drives the choice of the column $k$ by work per unit
step, $W_j=A_j/H_j$, $A_j=1+\sum_{i\le j}(n_i-1)$ right-hand-side evaluations.

Output points: in ``x`` mode the steps are shortened to land on each requested $x$
exactly. In *component* mode (the $\tau$ clock, where the requested quantity is the state
component $T=\log(1+t)$), the step that crosses $T=c$ is re-taken from its start with the
same column and a length $s$ found by Newton's method on $T(x+s)-c$ (safeguarded by
bisection; the derivative is the right-hand side), to $64\,\epsilon_{\rm work}$ relative.

Failures raise :class:`IntegrationError`: step-size underflow, ``max_steps``, a
right-hand side that cannot be evaluated or is not finite after repeated step cuts.
The caller sets the working precision (``mp.workdps``).
"""
from __future__ import annotations

import math

import mpmath
from mpmath.libmp import (mpf_abs as _abs, mpf_add as _add, mpf_cmp as _cmp, mpf_div as _div,
                          mpf_mul as _mul, mpf_sub as _sub, round_nearest, to_float as _to_float)

from theorems import InvalidArgument

from ._common import IntegrationError

_SAFE1, _SAFE2 = 0.65, 0.94
_GROW_MIN, _GROW_MAX = 0.02, 4.0
_FAC3, _FAC4 = 0.8, 0.9
_RHS_ERRORS = (ZeroDivisionError, ValueError, OverflowError)
_RND = round_nearest


class _StepFailure(Exception):
    pass


def default_kmax(rtol: float) -> int:
    """Largest column: enough for order 2k to reach ``rtol`` in a few steps, at most 40.

    The cap is measured: with column 48 (the former cap, reached from dps 78 on) the
    extrapolation tableau amplifies rounding beyond the guard digits, the error estimate
    cannot fall below ``rtol`` and steps are rejected and shrunk (logistic, d=2, n=3, t in
    [0, 0.25]: dps 78 took 295735 right-hand sides, dps 80 48114; with the cap 40 dps 80 takes
    1446, dps 100 1446, dps 150 4112).
    """
    digits = -math.log10(rtol)
    return max(6, min(40, int(0.5 * digits) + 8))


class GBS:
    """The extrapolation stepper for ``y' = f(x, y)`` (lists of ``mpf``)."""

    def __init__(self, f, *, rtol: float, atol: float, kmax: int | None = None):
        self.f = f
        self.rtol = mpmath.mpf(rtol)
        self.atol = mpmath.mpf(atol)
        self.kmax = kmax or default_kmax(rtol)
        km = self.kmax + 2
        self.nj = [0] + [2 * j for j in range(1, km + 1)]  # 1-based
        self.A = [0] * (km + 1)
        self.A[1] = self.nj[1]
        for j in range(2, km + 1):
            self.A[j] = self.A[j - 1] + self.nj[j] - 1
        self.coef = [[None] * (km + 1) for _ in range(km + 1)]
        for j in range(2, km + 1):
            for l in range(1, j):
                nn, nl = self.nj[j] ** 2, self.nj[j - l] ** 2
                self.coef[j][l] = mpmath.mpf(nl) / (nn - nl)
        self.n_rhs = 0
        self.eps = mpmath.mpf(2) ** (-mpmath.mp.prec)

    # -- pieces -------------------------------------------------------------------------
    def rhs(self, x, y):
        self.n_rhs += 1
        try:
            out = self.f(x, y)
        except _RHS_ERRORS as exc:
            raise _StepFailure(f"right-hand side failed: {type(exc).__name__}: {exc}") from None
        return out

    # The vector arithmetic of the midpoint rule and of the tableau runs on mpmath's raw
    # ``_mpf_`` tuples (libmp), which is about twice as fast as mpf objects; the
    # right-hand side sees ordinary ``mpf`` numbers.
    def _midpoint(self, x, y, f0, H, nsub):
        prec = mpmath.mp.prec
        make = mpmath.mp.make_mpf
        h = H / nsub
        hm, h2m = h._mpf_, (2 * h)._mpf_
        z0 = [v._mpf_ for v in y]
        z1 = [_add(yi, _mul(hm, fi._mpf_, prec, _RND), prec, _RND) for yi, fi in zip(z0, f0)]
        for m in range(1, nsub):
            fm = self.rhs(x + m * h, [make(v) for v in z1])
            z0, z1 = z1, [_add(a, _mul(h2m, b._mpf_, prec, _RND), prec, _RND)
                          for a, b in zip(z0, fm)]
        return z1

    def _row(self, x, y, f0, H, j, prev):
        prec = mpmath.mp.prec
        row = [self._midpoint(x, y, f0, H, self.nj[j])]
        for l in range(1, j):
            c = self.coef[j][l]._mpf_
            a, b = row[l - 1], prev[l - 1]
            row.append([_add(ai, _mul(_sub(ai, bi, prec, _RND), c, prec, _RND), prec, _RND)
                        for ai, bi in zip(a, b)])
        return row

    @staticmethod
    def _vec(raw):
        make = mpmath.mp.make_mpf
        return [make(v) for v in raw]

    def _err(self, y, hi, lo):
        r"""RMS of $(T_{j,j}-T_{j,j-1})/(\mathrm{atol}+\mathrm{rtol}\max(|y|,|T_{j,j}|))$ (raw
        tuples in, a float out: three digits of the norm are all the controller uses)."""
        prec = 53
        at, rt = self.atol._mpf_, self.rtol._mpf_
        s = 0.0
        for yi, a, b in zip(y, hi, lo):
            big = a if _cmp(_abs(a), _abs(yi._mpf_)) > 0 else yi._mpf_
            sc = _add(at, _mul(rt, _abs(big), prec, _RND), prec, _RND)
            q = _to_float(_div(_sub(a, b, prec, _RND), sc, prec, _RND))
            s += q * q
        return math.sqrt(s / len(y)) if math.isfinite(s) else math.inf

    def _hh(self, H, err, j):
        r"""Optimal step for column j: $H(0.65/\mathrm{err})^{1/(2j-1)}\cdot0.94$, growth in [1/50, 4].

        (ODEX caps growth at $50^{1/(2j-1)}$, which at the orders used in high precision
        (2j ~ 30) would allow only ~13% growth per step.)"""
        expo = 1.0 / (2 * j - 1)
        if err <= 0.0:
            growth = _GROW_MAX
        elif err > 1e300:
            growth = _GROW_MIN
        else:
            growth = min(_GROW_MAX, max(_GROW_MIN, _SAFE2 * (_SAFE1 / err) ** expo))
        return H * mpmath.mpf(growth)

    def fixed(self, x, y, f0, H, kc):
        """The extrapolated value $T_{k_c,k_c}$ for step ``H`` (no error control)."""
        prev = None
        for j in range(1, kc + 1):
            prev = self._row(x, y, f0, H, j, prev)
        return self._vec(prev[-1])

    def attempt(self, x, y, f0, H, k):
        """Try one step; return ``(accepted, y_new, kc, hh, w)`` (rows 1-based)."""
        hh, w = {}, {}
        prev = None
        nj = self.nj
        for j in range(1, k + 2):
            row = self._row(x, y, f0, H, j, prev)
            prev = row
            if j < 2:
                continue
            err = self._err(y, row[-1], row[-2])
            hi = self._vec(row[-1])
            hh[j] = self._hh(H, err, j)
            w[j] = self.A[j] / float(hh[j])
            ok = all(mpmath.isfinite(v) for v in hi)
            if not ok:
                raise _StepFailure("non-finite state")
            if j == k - 1:
                if err <= 1.0:
                    return True, hi, j, hh, w
                if err > ((nj[k + 1] * nj[k]) / (nj[1] * nj[1])) ** 2:
                    return False, None, j, hh, w
            elif j == k:
                if err <= 1.0:
                    return True, hi, j, hh, w
                if err > (nj[k + 1] / nj[1]) ** 2:
                    return False, None, j, hh, w
            elif j == k + 1:
                return err <= 1.0, (hi if err <= 1.0 else None), j, hh, w
        raise AssertionError("unreachable")

    def next_order(self, kc, k, hh, w, last_rejected):
        """Column and step for the next step after acceptance in column ``kc`` (ODEX)."""
        km1 = self.kmax - 1
        if kc == 2:
            knew = 2 if last_rejected else min(3, km1)
        elif kc <= k:
            knew = kc
            if w[kc - 1] < _FAC3 * w[kc]:
                knew = kc - 1
            if w[kc] < _FAC4 * w[kc - 1]:
                knew = min(kc + 1, km1)
        else:
            knew = kc - 1
            if kc > 3 and w[kc - 2] < _FAC3 * w[kc - 1]:
                knew = kc - 2
            if w[kc] < _FAC4 * w[knew]:
                knew = min(kc, km1)
        knew = max(2, min(knew, km1))
        if knew <= kc:
            Hn = hh[knew]
        else:
            Hn = hh[kc] * self.A[knew] / self.A[kc]
        return knew, Hn


def gbs_solve(f, x0, y0, targets, *, component=None, rtol, atol, max_steps, t_of,
              kmax=None, h0=None, freeze=None, progress=None):
    """Integrate from ``(x0, y0)`` and return ``(outputs, stats, frozen)``.

    ``targets``: increasing output coordinates (``mpf``), all at or after the start.
    ``component``: ``None`` (the coordinate is ``x``) or the index of an increasing state
    component. ``t_of(x, y)`` maps a state to physical time (for error messages).
    ``freeze(x, y)`` returns ``None`` or a bound (the state is then frozen, ``x`` mode).
    ``outputs`` is a list of ``(x, y)``; ``frozen`` is ``None`` or ``(x, y, bound)``.
    """
    solver = GBS(f, rtol=rtol, atol=atol, kmax=kmax)
    for k in range(1, len(targets)):  # distinct times that round to one coordinate at the working precision
        if not targets[k] > targets[k - 1]:
            raise InvalidArgument(f"times[{k - 1}] and times[{k}] are not allowed with backend='mpmath' at "
                                  f"{mpmath.mp.dps} working digits: they round to the same coordinate "
                                  f"{mpmath.nstr(targets[k], 8)}; expected times that differ at that precision "
                                  "(a larger dps)")
    coord = (lambda x, y: x) if component is None else (lambda x, y: y[component])
    x, y = x0, list(y0)
    outputs = []
    k_out = 0
    while k_out < len(targets) and targets[k_out] <= coord(x, y):
        outputs.append((x, list(y)))
        k_out += 1
    stats = {"n_steps": 0, "n_rejected": 0}
    frozen = None
    if k_out == len(targets):
        stats["n_rhs"] = 0
        return outputs, stats, frozen
    try:
        f0 = solver.rhs(x, y)
    except _StepFailure as exc:
        raise IntegrationError(t_of(x, y), str(exc)) from None
    if not all(mpmath.isfinite(v) for v in f0):
        raise IntegrationError(t_of(x, y), "non-finite right-hand side at the start")
    k = max(3, min(solver.kmax - 1, int(-math.log10(rtol) * 0.6 + 1.5)))
    if h0 is None:
        ynorm = max([abs(v) for v in y] + [mpmath.mpf(1)])
        fnorm = max([abs(v) for v in f0] + [mpmath.mpf("1e-30")])
        H = ynorm / fnorm / 3
        if component is None:
            H = min(H, targets[-1] - x)
    else:
        H = mpmath.mpf(h0)
    last_rejected = False
    # the time scale being resolved: the span to the last output (or, in a component clock, the first step);
    # a step below 16 eps of max(|x|, it) cannot move x at the working precision (16 eps |x|) or is a
    # vanishing fraction of the run. An absolute floor (max(|x|, 1)) refused every horizon below ~1e-40.
    tscale = abs(targets[-1] - x) if component is None else abs(H)
    c_start = coord(x, y)
    span = targets[-1] - c_start
    failures = 0
    while k_out < len(targets):
        if stats["n_steps"] >= max_steps:
            raise IntegrationError(t_of(x, y), f"max_steps={max_steps} reached before the last "
                                   "output time")
        Hstep, clipped = H, False
        if component is None and x + H >= targets[k_out]:
            Hstep, clipped = targets[k_out] - x, True
        if not Hstep > 16 * solver.eps * max(abs(x), tscale):
            raise IntegrationError(t_of(x, y), f"step size underflow (H = {mpmath.nstr(Hstep, 5)})")
        try:
            accepted, ynew, kc, hh, w = solver.attempt(x, y, f0, Hstep, k)
        except _StepFailure as exc:
            failures += 1
            if failures > 30:
                raise IntegrationError(t_of(x, y), f"{exc} after {failures} step cuts") from None
            H = Hstep / 4
            last_rejected = True
            stats["n_rejected"] += 1
            continue
        if not accepted:
            stats["n_rejected"] += 1
            knew = min(k, kc)
            if knew > 2 and w.get(knew - 1, math.inf) < _FAC3 * w[knew]:
                knew -= 1
            k, H = knew, min(hh[knew], Hstep / 2)
            last_rejected = True
            continue
        failures = 0
        stats["n_steps"] += 1
        knew, Hn = solver.next_order(kc, k, hh, w, last_rejected)
        if last_rejected:
            Hn = min(Hn, Hstep) if not clipped else Hn
        xnew = targets[k_out] if clipped else x + Hstep
        try:
            fnew = solver.rhs(xnew, ynew)
        except _StepFailure as exc:
            raise IntegrationError(t_of(xnew, ynew), str(exc)) from None
        if not all(mpmath.isfinite(v) for v in fnew):
            raise IntegrationError(t_of(xnew, ynew), "non-finite right-hand side")
        if component is None:
            while k_out < len(targets) and targets[k_out] <= xnew:
                outputs.append((xnew, list(ynew)))
                k_out += 1
        else:
            while k_out < len(targets) and targets[k_out] <= ynew[component]:
                c = targets[k_out]
                if c == ynew[component]:
                    outputs.append((xnew, list(ynew)))
                else:
                    outputs.append(_locate(solver, x, y, f0, Hstep, kc, component, c, ynew, t_of))
                k_out += 1
        x, y, f0 = xnew, ynew, fnew
        # after a step shortened to hit an output point, keep the longer proposal
        k, H = knew, (max(Hn, H) if clipped else Hn)
        last_rejected = False
        if progress is not None and span > 0:
            progress.update(float((coord(x, y) - c_start) / span))
        if freeze is not None and k_out < len(targets):
            bound = freeze(x, y)
            if bound is not None:
                frozen = (x, list(y), bound)
                while k_out < len(targets):
                    outputs.append((x, list(y)))
                    k_out += 1
    stats["n_rhs"] = solver.n_rhs
    return outputs, stats, frozen


def _locate(solver, x, y, f0, H, kc, idx, c, yend, t_of):
    """Step length s in (0, H) with T(x + s)[idx] = c: safeguarded Newton."""
    lo, hi = mpmath.mpf(0), H
    y0c, y1c = y[idx], yend[idx]
    s = H * (c - y0c) / (y1c - y0c)
    # locate T = c well below the integration tolerance, not to the last bit: the
    # extrapolated values carry rounding noise of a few hundred ulps
    gtol = max(solver.rtol / 100, 1024 * solver.eps) * max(abs(c), mpmath.mpf(1))
    g = None
    for _ in range(60):
        try:
            ys = solver.fixed(x, y, f0, s, kc)
        except _StepFailure as exc:
            raise IntegrationError(t_of(x, y), f"while locating an output time: {exc}") from None
        g = ys[idx] - c
        if abs(g) <= gtol:
            return x + s, ys
        if g < 0:
            lo = s
        else:
            hi = s
        dg = solver.rhs(x + s, ys)[idx]
        s_new = s - g / dg if dg != 0 else (lo + hi) / 2
        if not (lo < s_new < hi):
            s_new = (lo + hi) / 2
        if hi - lo <= 1024 * solver.eps * max(abs(x), mpmath.mpf(1)):
            return x + s, ys
        s = s_new
    raise IntegrationError(t_of(x, y), "could not locate an output time inside a step "
                           f"(|T - c| = {mpmath.nstr(abs(g), 3)})")
