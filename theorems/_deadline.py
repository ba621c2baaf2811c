r"""A wall-clock bound on symbolic setup (loading a ``--models`` file, a SymPy derivation).

SymPy has no time limit of its own: ``simplify`` of a large user definition, or ``exp`` of a huge argument
evaluated to many digits, can run for hours. :func:`setup_deadline` arms ``SIGALRM`` (an interval timer, main
thread only) around such a step; when it fires, the step is abandoned and :class:`~theorems.InvalidArgument` is
raised naming the bound, so the command line ends in one line with exit 2. The alarm is raised as a
``BaseException`` inside the step, so no ``except Exception`` of SymPy or of a user file swallows it. Nested
bounds keep the outer one; off the main thread (or on a system without ``setitimer``) the step runs unbounded.
"""
from __future__ import annotations

import gc
import math
import signal
import threading
from contextlib import contextmanager

from .errors import InvalidArgument

#: The default bound (seconds) of each symbolic setup step of the command line (``--setup-timeout``).
DEFAULT_SETUP_TIMEOUT = 300.0
#: The largest bound accepted (seconds): about 11.6 days.
MAX_SETUP_TIMEOUT = 1e6


#: seconds after which a swallowed alarm fires again (until the bounded step has ended)
_REARM = 0.05


class _Expired(BaseException):
    """The alarm of :func:`setup_deadline` (internal: turned into ``InvalidArgument`` at its boundary)."""


_ACTIVE = threading.Event()


def check_timeout(value, argument: str = "--setup-timeout") -> float:
    """``value`` as seconds in (0, :data:`MAX_SETUP_TIMEOUT`], or ``InvalidArgument`` naming ``argument``."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (0 < seconds <= MAX_SETUP_TIMEOUT):
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected seconds in (0, {MAX_SETUP_TIMEOUT:g}]")
    return seconds


@contextmanager
def setup_deadline(seconds: float | None, what: str):
    """Run the body within ``seconds`` of wall-clock time, else raise ``InvalidArgument`` about ``what``."""
    if (seconds is None or _ACTIVE.is_set() or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return

    in_gc = []  # non-empty while the garbage collector runs its callbacks (another library's, e.g. Hypothesis's)

    def gc_first(phase, info):
        if phase == "start":
            in_gc.append(True)

    def gc_last(phase, info):
        if phase == "stop":
            in_gc.clear()

    def on_alarm(signum, frame):
        # fire again shortly: an alarm raised in a gc callback is swallowed there ("Exception ignored in ...",
        # a second stderr line), or under an ``except BaseException``, and the step would run on unbounded
        signal.setitimer(signal.ITIMER_REAL, _REARM)
        if not in_gc:
            raise _Expired

    previous = signal.signal(signal.SIGALRM, on_alarm)
    _ACTIVE.set()
    gc.callbacks.insert(0, gc_first)  # first at "start", last at "stop": the flag covers every other callback
    gc.callbacks.append(gc_last)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Expired:
        signal.setitimer(signal.ITIMER_REAL, 0)  # before anything else: the alarm re-arms itself
        raise InvalidArgument(f"{what} took longer than --setup-timeout={seconds:g} s; expected a definition "
                              "SymPy handles within the bound (raise --setup-timeout to wait longer)") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for cb in (gc_first, gc_last):
            if cb in gc.callbacks:
                gc.callbacks.remove(cb)
        _ACTIVE.clear()
