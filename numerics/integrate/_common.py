r"""Shared pieces of the integrators: :class:`IntegrationError`, :class:`Trajectory`,
clocks and output times.

Clocks (the independent variable the integrator steps in):

* ``t``: physical time.
* ``log``: $\sigma=\log(1+t)$, $\frac{dy}{d\sigma}=(1+t)\,f(y)$. Suits dynamics that slow
  down like $1/t$ (logistic loss), *not* converged states (there $(1+t)f$ is stiff).
* ``tau``: the internal clock $d\tau=-\ell'(z)\,dt=\gamma\,dt$ of the logistic loss
  (paper-notes#logistic): $\frac{d(V,a)}{d\tau}=\frac{1}{\gamma}\frac{d(V,a)}{dt}$, which does not
  depend on the loss any more (it is $(w\varphi^\top, J_\varphi^\top V^\top w)$), with
  $T=\log(1+t)$ carried as an extra state, $\frac{dT}{d\tau}=\frac{e^{-T}}{\gamma}$. A
  requested $t_k$ is reached by solving $T(\tau)=\log(1+t_k)$ inside the step that crosses
  it. Any margin loss with $-\ell'(z)>0$ for every $z$ (:func:`theorems.has_internal_clock`), any link.
* ``auto``: for a loss with the internal clock (:func:`theorems.has_internal_clock`: a margin loss with
  $-\ell'>0$ everywhere, the logistic and $e^{-z}$ losses) ``t`` up to ``t_end = 100``
  (:data:`AUTO_T_CLOCK_MAX`), then ``tau`` with mpmath
  (measured 1.3x faster than ``log``
  at dps 30 to $t=10^{100}$; in ``log`` the poles of $\gamma(z)$ at $\operatorname{Im}z=\pm\pi$
  cap the step) and ``log`` with numpy / torch (at DOP853's default ``rtol=1e-12`` it is
  more accurate than ``tau``, whose $T$ equation relaxes at rate $\approx b$); ``t`` for
  the other losses.

Long horizons for the square and kl losses use the rigorous freezing rule of
:mod:`numerics.integrate._freeze` (a tail bound on the remaining path length).
"""
from __future__ import annotations

import decimal as _decimal
import math
import re

import mpmath
import numpy as np

from theorems import InvalidArgument, check_choice, has_internal_clock
from theorems.errors import check_int, check_real, show

from ._trajectory import BatchTrajectory, Trajectory, TrajectoryAPI, _fmt, _jsonable  # noqa: F401 - re-exported

CLOCKS = ("auto", "t", "tau", "log")
#: number of log-spaced output times when ``times`` is not given.
DEFAULT_NUM_TIMES = 40
#: largest ``dps`` accepted: the mpmath tolerances default to the float ``10**-(dps+2)``, which
#: must stay a normal float64 (> 2.2e-308).
MAX_DPS = 300
#: most output times accepted (each is a stored state).
MAX_TIMES = 100_000
#: relative slack of :func:`check_descent`: a rise of the loss above its smallest earlier value
#: by more than ``max(DESCENT_SLACK, 100 * rtol)`` times the largest loss magnitude seen so far
#: is an integration failure (the exact flow cannot raise the loss). float64 rounding of the
#: loss itself is ~1e-16 relative; the integrators' global error at their default tolerances is
#: below 1e-10 relative on every problem of the test suite.
DESCENT_SLACK = 1e-8
#: times are at most ``10**MAX_TIME_LOG10`` (so $T=\log(1+t)<2.31\times10^6$ in the tau clock).
MAX_TIME_LOG10 = 10**6
_T_MAX = 1e7


class IntegrationError(RuntimeError):
    """The integrator could not reach the requested time.

    Attributes:
        t_reached: the physical time reached (a float, or an ``mpf``).
        reason: why it stopped (step-size underflow, max steps, non-finite state, ...).
    """

    def __init__(self, t_reached, reason: str):
        self.t_reached = t_reached
        self.reason = reason
        super().__init__(f"integration stopped at t = {_fmt(t_reached)}: {reason}")


#: ``auto`` integrates short logistic runs (``t_end`` up to this) in ``t``: measured with
#: mpmath at dps 30, n = d = 4, the ``t`` clock needs 11 steps to t = 100 against 18 in
#: ``tau`` (whose $T$ equation relaxes at rate ~1), while to t = 1e4 it needs 44 against 24.
AUTO_T_CLOCK_MAX = 100.0


def resolve_clock(loss: str, clock: str, backend: str, t_end=None) -> str:
    """The clock actually used (see module docstring); ``InvalidArgument`` if unusable."""
    check_choice("clock", clock, CLOCKS)
    if clock == "auto":
        if has_internal_clock(loss):
            if t_end is not None and float(mpmath.mpf(t_end)) <= AUTO_T_CLOCK_MAX:
                return "t"
            return "tau" if backend == "mpmath" else "log"
        return "t"
    if clock == "tau":
        if not has_internal_clock(loss):
            raise InvalidArgument(
                f"clock='tau' is not allowed with loss={show(loss)}; the internal clock "
                "d tau = -ell'(z) dt exists for a margin loss with -ell'(z) > 0 for every z only (logistic, "
                "exp(-z); for the square loss t(tau) has a pole at a finite tau_inf, see the paper notes on the "
                "square loss); use clock='t' or 'log'")
        if backend == "torch":
            raise InvalidArgument("clock='tau' is not implemented for backend='torch'; expected "
                                  "'t', 'log' or 'auto' (= 'log' for logistic)")
    return clock


_TIME_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _parse_time(argument, value):
    """A time as a decimal string (exact for mpmath) and a float."""
    bad = f"{argument}={show(value)} is not allowed; expected a number"
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(bad)
    try:
        if isinstance(value, mpmath.mpf):
            text = mpmath.nstr(value, mpmath.mp.dps + 5)
        elif isinstance(value, str):
            text = value.strip()
            if len(text) > 1000:
                raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a number "
                                      "written in at most 1000 characters")
            if not _TIME_TEXT.fullmatch(text):  # mpmath would also take '1/3', 'inf', fullwidth digits
                raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a decimal number "
                                      "in ASCII digits, such as 0.5 or 1e100 (every backend reads it)")
        elif isinstance(value, (int, np.integer)):
            value = int(value)
            if value.bit_length() > 3000:
                raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a number "
                                      "below 10**900")
            text = str(value)
        elif isinstance(value, (float, np.floating)):
            text = repr(float(value))
        else:
            raise InvalidArgument(bad)
        as_mp = mpmath.mpf(text)
    except (ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, InvalidArgument):
            raise
        raise InvalidArgument(bad) from None
    if not mpmath.isfinite(as_mp) or as_mp < 0:
        raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a finite number >= 0")
    if as_mp >= mpmath.mpf(10) ** MAX_TIME_LOG10:  # exact at any size (mpf exponents are unbounded)
        raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a number below "
                              f"10**{MAX_TIME_LOG10}")
    return text


def prepare_times(t_end, times=None, *, num: int = DEFAULT_NUM_TIMES) -> list[str]:
    """Output times as decimal strings, increasing, all in ``[0, t_end]``.

    Without ``times``: ``0`` and ``num`` log-spaced times ending at ``t_end`` (starting at
    ``min(0.1, t_end / 10)``), rounded to 6 significant digits except the last.
    """
    end = _parse_time("t_end", t_end)
    end_mp = mpmath.mpf(end)
    if not end_mp > 0:
        raise InvalidArgument(f"t_end={show(t_end)} is not allowed; expected a number > 0")
    if times is None:
        with mpmath.workdps(30):
            lo = min(mpmath.mpf("0.1"), end_mp / 10)
            l0, l1 = mpmath.log10(lo), mpmath.log10(end_mp)
            out = ["0"]
            for k in range(num - 1):
                x = mpmath.power(10, l0 + (l1 - l0) * k / (num - 1))
                out.append(mpmath.nstr(x, 6, strip_zeros=True))
            out.append(end)
        return out
    if isinstance(times, (str, bytes, dict)) or (isinstance(times, np.ndarray) and times.ndim != 1):
        raise InvalidArgument(f"times={show(times)} is not allowed; expected a list of numbers (a "
                              "string is not read character by character: pass ['0.5'] or [0.5])")
    try:
        items = list(times)
    except TypeError:
        raise InvalidArgument(f"times={show(times)} is not allowed; expected a list of numbers") from None
    if not items:
        raise InvalidArgument("times=[] is not allowed; expected at least one time")
    if len(items) > MAX_TIMES:
        raise InvalidArgument(f"times has {len(items)} entries; expected at most {MAX_TIMES}")
    out = [_parse_time(f"times[{k}]", v) for k, v in enumerate(items)]
    # compared exactly (Decimal comparisons do not round, whatever the exponent): at mpmath's global 15 digits
    # times distinct at the run's dps compared equal; a backend that cannot tell two apart refuses them
    # itself (check_resolved, numerics.integrate._gbs.gbs_solve)
    vals = [_decimal.Decimal(x) for x in out]
    for k in range(1, len(vals)):
        if not vals[k] > vals[k - 1]:
            raise InvalidArgument(f"times={show(items)} is not allowed; expected strictly increasing times")
    if vals[-1] > _decimal.Decimal(end):
        raise InvalidArgument(f"times[-1]={show(items[-1])} exceeds t_end={show(t_end)}; expected all "
                              "times <= t_end")
    return out


def check_resolved(times, values, backend: str) -> None:
    """Refuse output times that the backend's number type cannot tell apart.

    ``times``: the decimal strings of :func:`prepare_times` (strictly increasing); ``values``: the same times
    as the backend holds them (floats, or ``heyoka.real``). Two distinct times that round to one value, or
    a time > 0 that rounds to 0, would come back as equal or zero output times: an
    :class:`InvalidArgument` naming them and the backend instead.
    """
    for k, (text, x) in enumerate(zip(times, values)):
        if k and not x > values[k - 1]:
            raise InvalidArgument(f"times {times[k - 1]} and {text} are not allowed with {backend}: they round to "
                                  "one value at its resolution; expected times that differ in that precision (or "
                                  "backend='mpmath' with a larger dps)")
        if not x > 0 and mpmath.mpf(text) > 0:
            raise InvalidArgument(f"time {text} is not allowed with {backend}: it rounds to 0 at its resolution; "
                                  "expected a time it can represent (or backend='mpmath')")


def check_tolerance(argument, value):
    """``None`` or a finite real number > 0 (Python or NumPy scalar, not ``bool``) as a float."""
    if value is None:
        return None
    x = check_real(argument, value, minimum=0.0, strict_minimum=True)
    if not x > 0:  # a positive value that rounds to 0.0 as a float
        raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a finite number > 0")
    return x


def check_dps(value, argument: str = "dps", minimum: int = 5) -> int:
    """``dps`` as an int in ``minimum..MAX_DPS`` (NumPy integers accepted, like floats for ``rtol``)."""
    return check_int(argument, value, minimum=minimum, maximum=MAX_DPS)


def exp_neg_T(T):
    r"""$e^{-T}$ for the $T=\log(1+t)$ component of the $\tau$ clock, guarded.

    Along the flow $0\le T\le\log(1+t_{\rm end})$, below $2.31\times10^6$ since times are at most
    ``10**(10**6)`` (:data:`MAX_TIME_LOG10`). A trial state of an overshooting step can carry a
    huge $|T|$, and ``mpmath.exp(1e3084)`` (or ``exp(-1e3084)``) then runs for hours; any $T$
    outside $[-1, 10^7]$ raises
    ``OverflowError`` instead, which the step-size controllers treat as a failed step (cut and
    retried, bounded by their failure count). Works for ``mpf`` and float ``T``.
    """
    if not -1 <= T <= _T_MAX:
        raise OverflowError(f"T = log(1+t) = {_fmt(T)} outside [-1, {_T_MAX:g}] in a trial step")
    if isinstance(T, mpmath.mpf):
        return mpmath.exp(-T)
    return math.exp(-T)


def check_descent(loss, times, *, rtol, where: str = "", initial=None) -> None:
    r"""Raise :class:`IntegrationError` if the loss rises along a gradient-flow trajectory.

    $\frac{d}{dt}\mathcal L(V\varphi(a))=-\|\nabla F\|^2\le0$ for the flow of every loss
    and link, so a computed loss that rises above its smallest earlier value by more than
    ``max(DESCENT_SLACK, 100 * rtol)`` times the largest loss magnitude seen so far means the
    numbers are wrong (overflowed states, a broken freeze). Non-finite losses also raise.
    ``loss`` and ``times`` are aligned sequences (floats or ``mpf``).

    ``initial``: the loss at the initial state, computed the same way. The flow never exceeds it,
    and the round-off of a computed loss is relative to the magnitudes the state carries from
    there, so it sets the scale from the start: the absolute floor of a "rise" is
    ``slack * |L(0)|`` even when no output time is 0 (square loss + sigmoid at t = 1e2, 1e3, 1e4 has
    losses of 1e-25 that wiggle by 3e-24 in float64: round-off, not a rise).
    """
    slack = max(DESCENT_SLACK, 100.0 * float(rtol or 0.0))
    low = None
    scale = 0.0
    if initial is not None:
        try:
            scale = abs(float(initial)) if math.isfinite(float(initial)) else 0.0
        except (TypeError, ValueError, OverflowError):
            scale = 0.0
    for k, (t, L) in enumerate(zip(times, loss)):
        try:
            Lf = float(L)
        except (TypeError, ValueError, OverflowError):
            Lf = math.inf
        if not math.isfinite(Lf):
            raise IntegrationError(t, f"non-finite loss {Lf!r} at output {k}{where}")
        scale = max(scale, abs(Lf))
        if low is not None and Lf > low + slack * scale:
            raise IntegrationError(t, f"the loss rose from {low:.6g} to {Lf:.6g} at output {k}{where}; "
                                      "gradient flow cannot raise the loss, so the computed states are "
                                      "wrong (overflow or loss of accuracy); rescale the input or use "
                                      "backend='mpmath'")
        low = Lf if low is None else min(low, Lf)
