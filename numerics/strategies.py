r"""Hypothesis strategies for the value-softmax model $\mathcal L(V\sigma(a))$.

Public, documented strategies that generate valid inputs of the flow
$\dot V=-g\sigma(a)^\top$, $\dot a=-J(\sigma(a))V^\top g$ (paper-notes#flow): points of the open
simplex, logits with controlled gaps (extreme ones included), value matrices with a
margin condition, target directions, regression designs with a prescribed condition
number, probability targets for the ``kl`` loss, sizes, and whole problems.

This module needs ``hypothesis`` (the ``test`` extra); :mod:`numerics` does not import
it, so import it explicitly::

    from numerics.strategies import flow_problems, logits

Conventions (the house style of Hypothesis's own strategies):

* every strategy returns ``float64`` numpy arrays and, by default, covers *everything
  valid*: all finite values in the documented range, ties, zeros and subnormals
  included. Each exclusion is on purpose and says why in a comment;
* arguments are plain values (never "value or strategy"), keyword-only when they have
  a default, and validated eagerly: a bad argument raises
  :class:`~theorems.InvalidArgument` naming the argument, the value and what was
  expected, when the strategy is *built*, not when it is drawn from;
* randomness comes only from Hypothesis (no global RNG), so every example shrinks and
  replays.

Limits: matrices are built from explicit entries, so margins, gaps and condition
numbers hold up to floating-point rounding (a few ulps of the largest entry); each
strategy's docstring states its guarantee and ``tests/test_strategies.py`` checks it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from theorems import InvalidArgument, check_int, get_loss

__all__ = [
    "sizes",
    "simplex_points",
    "logits",
    "target_directions",
    "value_matrices",
    "regression_designs",
    "probability_targets",
    "FlowProblem",
    "flow_problems",
    "DEFAULT_LOGIT_MAX_ABS",
]

#: Default bound on $|a_i|$. In float64, $e^{a_i-\max_j a_j}$ underflows to exactly 0 once
#: the gap exceeds about 745, and in float32 once it exceeds about 104, so logits up to
#: $10^3$ reach full saturation (a vertex of the simplex in floating point) in both
#: precisions; larger values add nothing but overflow of the gaps themselves.
DEFAULT_LOGIT_MAX_ABS = 1e3

# smallest positive normal float64: the floor of raw simplex weights (see simplex_points)
_TINY = float(np.finfo(np.float64).tiny)


def _check_float(argument: str, value, *, minimum: float | None = None, positive: bool = False,
                 allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(value)):
        raise InvalidArgument(
            f"{argument}={value!r} (type {type(value).__name__}) is not allowed; expected a finite real number"
        )
    value = float(value)
    if positive and not value > 0:
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a number > 0")
    if minimum is not None and value < minimum:
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a number >= {minimum}")
    return value


def _check_vector(argument: str, value) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64) if value is not None else None
    if arr is None or arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) \
            or not np.linalg.norm(arr) > 0:
        raise InvalidArgument(
            f"{argument}={value!r} is not allowed; expected a non-zero finite 1-d array"
        )
    return arr


# ----------------------------------------------------------------------------------------
def sizes(*, min_n: int = 2, max_n: int = 6, min_d: int = 2, max_d: int = 6) -> st.SearchStrategy[tuple[int, int]]:
    r"""Sizes ``(n, d)``: $n$ tokens (softmax support) and output dimension $d$.

    Both start at 2 by default (the smallest size where the flow has a non-trivial
    simplex and a non-trivial orthogonal complement of the target); ``min_d=1`` is
    allowed. The upper bounds only keep examples cheap; shrinking goes to ``(2, 2)``.
    """
    check_int("min_n", min_n, minimum=2)
    check_int("min_d", min_d, minimum=1)
    check_int("max_n", max_n, minimum=min_n)
    check_int("max_d", max_d, minimum=min_d)
    return st.tuples(st.integers(min_n, max_n), st.integers(min_d, max_d))


def simplex_points(n: int, *, min_entry: float = 0.0) -> st.SearchStrategy[np.ndarray]:
    r"""Points $s$ of the open simplex $\Delta_{n-1}^\circ=\{s\in\mathbb R^n: s_i>0,\ \sum_i s_i=1\}$.

    Raw weights are drawn in $[\mathrm{tiny},1]$ (``tiny`` the smallest normal float64)
    and normalized, so every entry is $>0$ (possibly subnormal: those are valid points,
    kept on purpose) and $|\sum_i s_i-1|\le n\,\varepsilon$. Vertices, faces (a zero
    entry) and near-uniform points are all reachable up to that floor.

    Args:
        n: dimension (>= 2).
        min_entry: every entry is at least ``min_entry`` (needs ``n * min_entry < 1``);
            ``0`` means only "strictly positive".
    """
    check_int("n", n, minimum=2)
    min_entry = _check_float("min_entry", min_entry, minimum=0.0)
    if n * min_entry >= 1:
        raise InvalidArgument(
            f"min_entry={min_entry!r} with n={n} is not allowed; expected n * min_entry < 1"
        )
    raw = hnp.arrays(np.float64, n, elements=st.floats(_TINY, 1.0))

    def normalize(w):
        s = w / np.sum(w)
        if min_entry > 0:
            s = min_entry + (1.0 - n * min_entry) * s
            s = s / np.sum(s)
        return s

    return raw.map(normalize)


def _gapped_values(draw, n: int, *, max_abs: float, min_gap: float, max_gap: float | None) -> np.ndarray:
    """``n`` values in [-max_abs, max_abs] whose sorted gaps lie in [min_gap, max_gap], in random order."""
    if min_gap == 0 and max_gap is None:
        return draw(hnp.arrays(np.float64, n, elements=st.floats(-max_abs, max_abs)))
    # the largest gap that still fits n-1 gaps into [-max_abs, max_abs]
    room = 2 * max_abs / (n - 1)
    hi = room if max_gap is None else min(max_gap, room)
    gaps = draw(hnp.arrays(np.float64, n - 1, elements=st.floats(min_gap, hi)))
    span = float(np.sum(gaps))
    start = draw(st.floats(-max_abs, max(-max_abs, max_abs - span)))
    values = np.clip(start + np.concatenate([[0.0], np.cumsum(gaps)]), -max_abs, max_abs)
    order = draw(st.permutations(range(n)))
    return values[np.asarray(order)]


def _check_gaps(n, max_abs, min_gap, max_gap):
    if max_gap is not None and max_gap < min_gap:
        raise InvalidArgument(f"max_gap={max_gap!r} is not allowed; expected max_gap >= min_gap={min_gap!r}")
    if (n - 1) * min_gap > 2 * max_abs:
        raise InvalidArgument(
            f"min_gap={min_gap!r} with n={n} and max_abs={max_abs!r} is not allowed; "
            f"expected (n - 1) * min_gap <= 2 * max_abs"
        )


def logits(n: int, *, max_abs: float = DEFAULT_LOGIT_MAX_ABS, min_gap: float = 0.0,
           max_gap: float | None = None) -> st.SearchStrategy[np.ndarray]:
    r"""Logit vectors $a\in[-M,M]^n$ ($M$ = ``max_abs``) with controlled gaps.

    By default every finite vector in the box (ties, zeros, subnormals, $\pm M$
    included), with $M=10^3$ (:data:`DEFAULT_LOGIT_MAX_ABS`): extreme logits that
    saturate the softmax in float64 and float32 are part of "valid".

    With ``min_gap`` / ``max_gap``, the sorted values $a_{(1)}<\dots<a_{(n)}$ have
    consecutive gaps $a_{(k+1)}-a_{(k)}\in[\texttt{min\_gap},\texttt{max\_gap}]$ (up to
    a few ulps of $M$ of rounding), in a random order. ``max_gap`` bounds how polarized
    $\sigma(a)$ can be: $\max_i\sigma_i\le 1/(1+(n-1)e^{-(n-1)\,\texttt{max\_gap}})$.
    """
    check_int("n", n, minimum=1)
    max_abs = _check_float("max_abs", max_abs, positive=True)
    min_gap = _check_float("min_gap", min_gap, minimum=0.0)
    max_gap = _check_float("max_gap", max_gap, minimum=0.0, allow_none=True)
    _check_gaps(n, max_abs, min_gap, max_gap)
    if n == 1:
        return hnp.arrays(np.float64, 1, elements=st.floats(-max_abs, max_abs))
    return st.composite(lambda draw: _gapped_values(draw, n, max_abs=max_abs, min_gap=min_gap,
                                                    max_gap=max_gap))()


def target_directions(d: int, *, min_norm: float = 1.0, max_norm: float = 1.0) -> st.SearchStrategy[np.ndarray]:
    r"""Target directions $w\in\mathbb R^d$ (the paper's $\beta^*$) with $\|w\|\in[$``min_norm``, ``max_norm``$]$.

    Unit by default (the authors' normalized $\beta^*$); pass ``max_norm`` for scaled
    targets ($b=\|w\|^2$ enters the rates, paper-notes#logistic). The direction is any non-zero
    vector of $[-1,1]^d$ rescaled; pre-images of norm below 0.1 are rejected, which
    excludes no direction (every unit vector is its own pre-image) and avoids
    normalizing subnormal vectors.
    """
    check_int("d", d, minimum=1)
    min_norm = _check_float("min_norm", min_norm, positive=True)
    max_norm = _check_float("max_norm", max_norm, positive=True)
    if max_norm < min_norm:
        raise InvalidArgument(f"max_norm={max_norm!r} is not allowed; expected max_norm >= min_norm={min_norm!r}")
    raw = hnp.arrays(np.float64, d, elements=st.floats(-1.0, 1.0)).filter(lambda v: np.linalg.norm(v) >= 0.1)
    return st.tuples(raw, st.floats(min_norm, max_norm)).map(lambda p: p[1] * p[0] / np.linalg.norm(p[0]))


def value_matrices(d: int, n: int, *, max_abs: float = 10.0, direction=None, min_gap: float = 0.0,
                   winner: int | None = None) -> st.SearchStrategy[np.ndarray]:
    r"""Value matrices $V\in\mathbb R^{d\times n}$ (columns = token values $v_i$).

    Without ``direction``: every finite matrix with $|V_{kj}|\le$ ``max_abs``.

    With a ``direction`` $w$ (a concrete non-zero vector) the projections
    $u=V^\top w$ are controlled (the margin conditions of the logistic theory,
    paper-notes#logistic, "strict ordering of the projections" [A]):

    * sorted $u$ has consecutive gaps $\ge$ ``min_gap`` (distinct projections when
      ``min_gap > 0``), with $|u_i|\le$ ``max_abs`` $\cdot\|w\|$;
    * if ``winner`` is given, $u_{\texttt{winner}}=\max_i u_i$ (the prescribed
      $i^\star=\arg\max_i\langle v_i,w\rangle$; strict when ``min_gap > 0``);

    built as $V=w\,u^\top/\|w\|^2+(I-ww^\top/\|w\|^2)R$ with $R$ any matrix in the box,
    so $V^\top w=u$ up to rounding (a few ulps of ``max_abs``·$\|w\|$).
    """
    check_int("d", d, minimum=1)
    check_int("n", n, minimum=1)
    max_abs = _check_float("max_abs", max_abs, positive=True)
    min_gap = _check_float("min_gap", min_gap, minimum=0.0)
    box = hnp.arrays(np.float64, (d, n), elements=st.floats(-max_abs, max_abs))
    if direction is None:
        if min_gap > 0 or winner is not None:
            raise InvalidArgument(
                f"min_gap={min_gap!r}, winner={winner!r} need a direction; got direction=None"
            )
        return box
    w = _check_vector("direction", direction)
    if w.shape[0] != d:
        raise InvalidArgument(f"direction of length {w.shape[0]} is not allowed; expected length d={d}")
    if winner is not None:
        check_int("winner", winner, minimum=0)
        if winner >= n:
            raise InvalidArgument(f"winner={winner!r} is not allowed; expected an index < n={n}")
    bound = max_abs * float(np.linalg.norm(w))
    _check_gaps(n, bound, min_gap, None)
    b = float(w @ w)
    P = np.eye(d) - np.outer(w, w) / b

    @st.composite
    def build(draw):
        u = _gapped_values(draw, n, max_abs=bound, min_gap=min_gap, max_gap=None) if n > 1 else \
            draw(hnp.arrays(np.float64, 1, elements=st.floats(-bound, bound)))
        if winner is not None:
            top = int(np.argmax(u))
            u[[top, winner]] = u[[winner, top]]
        R = draw(box)
        return np.outer(w, u) / b + P @ R

    return build()


def regression_designs(m: int, d: int, *, condition_number: float = 1.0,
                       max_singular_value: float = 1.0) -> st.SearchStrategy[np.ndarray]:
    r"""Designs $X\in\mathbb R^{m\times d}$ ($m\ge d$) with a prescribed condition number $\kappa$.

    $X=U\operatorname{diag}(\sigma)W^\top$ with $U$, $W$ orthogonal (Householder QR of
    drawn matrices: $Q$ is orthogonal even when the drawn matrix is singular) and
    singular values linearly spaced from $\sigma_{\max}$ down to $\sigma_{\max}/\kappa$,
    as in the authors' conditioning toy (paper-notes#losses, [C]). So
    $\operatorname{cond}_2(X)=\kappa$ up to rounding ($\approx\kappa\,d\,\varepsilon$ relative).
    ``d = 1`` allows only $\kappa=1$.
    """
    check_int("d", d, minimum=1)
    check_int("m", m, minimum=d)
    kappa = _check_float("condition_number", condition_number, minimum=1.0)
    smax = _check_float("max_singular_value", max_singular_value, positive=True)
    if d == 1 and kappa != 1:
        raise InvalidArgument(
            f"condition_number={kappa!r} with d=1 is not allowed; a single column has condition number 1"
        )
    sv = smax * np.linspace(1.0, 1.0 / kappa, d)
    # entries in [-1, 1]: any matrix direction; QR makes the scale irrelevant
    gauss_like = st.floats(-1.0, 1.0)

    def build(pair):
        U, _ = np.linalg.qr(pair[0], mode="reduced")
        W, _ = np.linalg.qr(pair[1])
        return (U * sv) @ W.T

    return st.tuples(hnp.arrays(np.float64, (m, d), elements=gauss_like),
                     hnp.arrays(np.float64, (d, d), elements=gauss_like)).map(build)


def probability_targets(k: int, *, total: float = 1.0, min_entry: float = 0.0) -> st.SearchStrategy[np.ndarray]:
    r"""Targets $p$ of the ``kl`` loss $-\sum_k p_k\log\operatorname{softmax}(\beta)_k$.

    Strictly positive (the symbolic ``kl`` model declares $p_k>0$) with
    $\sum_k p_k=$ ``total`` (1 by default: a distribution; the loss and its gradient
    $(\sum_kp_k)\operatorname{softmax}(\beta)-p$ are defined for any positive total).
    ``min_entry`` is relative to ``total``; see :func:`simplex_points`.
    """
    total = _check_float("total", total, positive=True)
    return simplex_points(k, min_entry=min_entry).map(lambda p: total * p)


# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FlowProblem:
    r"""One input of the flow: ``loss`` and the arrays ``(V, a, target, X)``.

    ``V`` is $d\times n$, ``a`` has length $n$, ``target`` is $w$ (logistic, length
    $d$), $y$ (square, length $m$) or $p$ (kl, length $d$), ``X`` the $m\times d$ design
    (square loss) or ``None`` ($X=I$).
    """

    loss: str
    V: np.ndarray
    a: np.ndarray
    target: np.ndarray
    X: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.V.shape[1])

    @property
    def d(self) -> int:
        return int(self.V.shape[0])

    def arrays(self) -> tuple:
        """``(V, a, target, X)``, the argument order of :class:`numerics.FlowRHS`."""
        return self.V, self.a, self.target, self.X


_LOSSES = ("logistic", "square", "kl")


def flow_problems(losses=_LOSSES, *, min_n: int = 2, max_n: int = 5, min_d: int = 2, max_d: int = 5,
                  logit_max_abs: float = DEFAULT_LOGIT_MAX_ABS, logit_max_gap: float | None = None,
                  value_max_abs: float = 10.0, target_max_norm: float = 3.0,
                  condition_number: float | None = None) -> st.SearchStrategy[FlowProblem]:
    r"""Whole problems $(V,a,\text{target},X)$ for one of ``losses`` (names of built-in or registered losses;
    the target is drawn by the loss's form, never by its name).

    Sizes from :func:`sizes`, logits from :func:`logits` (extreme by default),
    $V$ from :func:`value_matrices` (the box $|V_{kj}|\le$ ``value_max_abs``), and
    the target by loss: logistic, a direction with $\|w\|\in[1/10,$ ``target_max_norm``$]$;
    square, $y$ in the box $[-\texttt{target\_max\_norm},\texttt{target\_max\_norm}]^m$ and,
    if ``condition_number`` is given, a design from :func:`regression_designs` with
    $m=d$ (otherwise $X=I$); kl, a distribution from :func:`probability_targets`.
    """
    losses = tuple(losses) if not isinstance(losses, str) else (losses,)
    if not losses:
        raise InvalidArgument("losses=() is not allowed; expected at least one loss")
    losses = tuple(get_loss(loss).name for loss in losses)  # unknown names refused here
    shape = sizes(min_n=min_n, max_n=max_n, min_d=min_d, max_d=max_d)
    logits(2, max_abs=logit_max_abs, max_gap=logit_max_gap)  # validate eagerly
    value_max_abs = _check_float("value_max_abs", value_max_abs, positive=True)
    target_max_norm = _check_float("target_max_norm", target_max_norm, minimum=0.1)
    if condition_number is not None:
        _check_float("condition_number", condition_number, minimum=1.0)

    @st.composite
    def build(draw):
        loss = draw(st.sampled_from(losses))
        n, d = draw(shape)
        a = draw(logits(n, max_abs=logit_max_abs, max_gap=logit_max_gap))
        V = draw(value_matrices(d, n, max_abs=value_max_abs))
        X = None
        form = get_loss(loss)
        if form.target_positive:
            target = draw(probability_targets(d))
        elif form.design:
            target = draw(hnp.arrays(np.float64, d, elements=st.floats(-target_max_norm, target_max_norm)))
            if condition_number is not None:
                X = draw(regression_designs(d, d, condition_number=condition_number))
        else:
            target = draw(target_directions(d, min_norm=0.1, max_norm=target_max_norm))
        return FlowProblem(loss, V, a, target, X)

    return build()
