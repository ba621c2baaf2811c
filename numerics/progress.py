"""The one progress reporter of softpolar: integrators, ``certify``, ``derive --check``, grids.

``Progress(label)`` reports a fraction (``update(0.4, note)``); ``Progress(label, total)``
counts (``update(note=...)`` or ``advance(n)`` adds one / n done items). How it shows depends
on where the output goes, decided once, at the first draw:

* **disabled** (``enabled=False``): nothing, so library code can always call it;
* **a terminal**: tqdm when installed, else a ``\\r`` bar redrawn at most 10 times a second;
* **a Jupyter notebook** (ipykernel's stderr): ``tqdm.auto`` (a widget) when tqdm and
  ipywidgets are installed, plain tqdm when only tqdm is, else lines;
* **anything else** (a log file, CI, a pipe): *lines*: no ``\\r``; one line at most every
  ``line_interval`` seconds (10 s), and a last line on :meth:`close` (a short run prints one
  line only);
* ``SOFTPOLAR_PROGRESS=off|lines|bar|tqdm`` forces a mode (``bar``: the ``\\r`` bar).

A closed or broken stream (``ValueError`` / ``OSError`` on write) switches the reporter off
instead of failing the computation. ``mode=`` forces a mode for one reporter (``lines`` where
several processes share a terminal).

:class:`Heartbeat` is the progress of one long task whose code need not know about it: silent
for the first ``after`` seconds (a short task prints nothing), then a line or bar with the
elapsed time and whatever the task last told :func:`report` (a fraction and a note), from a
background thread. Grids run through dask additionally show dask's own
progress widget in a notebook (:meth:`Progress.watch_futures`).
"""
from __future__ import annotations

import os
import sys
import time
import importlib.util
import threading

MODES = ("off", "lines", "bar", "tqdm")
ENV = "SOFTPOLAR_PROGRESS"


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def in_notebook(stream=None) -> bool:
    """True when ``stream`` (default ``sys.stderr``) is a Jupyter kernel's output stream."""
    stream = sys.stderr if stream is None else stream
    return type(stream).__module__.split(".")[0] == "ipykernel"


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def choose_mode(stream) -> str:
    """The display mode for ``stream`` (see module docstring)."""
    forced = os.environ.get(ENV, "").strip().lower()
    if forced in MODES:
        return forced if forced != "tqdm" or _have("tqdm") else "bar"
    if stream is None or getattr(stream, "closed", False):
        return "off"
    if in_notebook(stream):
        return "tqdm" if _have("tqdm") else "lines"
    if _isatty(stream):
        return "tqdm" if _have("tqdm") else "bar"
    return "lines"


def _fmt_time(s: float) -> str:
    return f"{s:.0f}s" if s < 600 else f"{s / 60:.1f}min"


class Progress:
    """``Progress(label, total=None, *, done=0, enabled=True, stream=None)``.

    ``update(fraction, note='')`` for fraction reporting; with ``total``, ``update(note=...)``
    (or ``advance(n)``) counts finished items. ``message(text)`` prints one line (above a bar).
    ``close()`` ends the display; also a context manager.
    """

    width = 30
    min_interval = 0.1     # seconds between redraws of a bar
    line_interval = 10.0   # seconds before the first line in line mode; the gap then doubles (a log stays short)
    max_line_interval = 120.0

    def __init__(self, label: str, total: int | None = None, *, done: int = 0, enabled: bool = True,
                 stream=None, mode: str | None = None):
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode={mode!r} is not allowed; expected one of {MODES}")
        self._forced = mode
        self.label = label
        self.total = total
        self.done = done
        self.enabled = enabled
        self.stream = stream
        self.mode = None if enabled else "off"
        self._start = time.perf_counter()
        self._started_done = done
        self._last = -1e9
        self._last_line = time.perf_counter()
        self._fraction = 0.0
        self._note = ""
        self._drawn = False
        self._updated = False
        self._tqdm = None

    # -- public -------------------------------------------------------------------------
    def update(self, fraction: float | None = None, note: str = "", n: int = 1) -> None:
        """Report ``fraction`` done (0..1), or, with ``total`` and no fraction, ``n`` more items done."""
        if self.mode == "off":
            return
        if fraction is None:
            if self.total is None:
                return
            self.done += n
            fraction = self.done / self.total if self.total else 1.0
        self._fraction = min(max(float(fraction), 0.0), 1.0)
        self._note = note
        self._updated = True
        self._draw()

    def advance(self, n: int = 1, note: str = "") -> None:
        """Count mode: ``n`` more items are done."""
        self.update(None, note, n=n)

    def set_count(self, done: int, total: int | None = None, note: str = "") -> None:
        """Count mode: ``done`` of ``total`` items are done (``total`` may be learnt late)."""
        if total is not None:
            self.total = total
        self.done = done
        self.update(None, note, n=0)

    def status(self, text: str) -> None:
        """Show ``text`` with the elapsed time when no fraction is known (e.g. "level 3: 40 boxes to do");
        redrawn at most 10 times a second on a terminal, one line every ``line_interval`` seconds elsewhere."""
        mode = self._resolve()
        if mode == "off":
            return
        now = time.perf_counter()
        if mode == "lines":
            if now - self._last_line < self.line_interval:
                return
            self._last_line = now
        elif now - self._last < self.min_interval:
            return
        self._last = now
        self._note = text
        self._draw_elapsed()

    def message(self, text: str) -> None:
        """One line of text (e.g. a dashboard link), shown in every mode but ``off``."""
        if self._resolve() == "off":
            return
        if self.mode == "tqdm" and self._tqdm is not None:
            self._guard(lambda: self._tqdm.write(text, file=self._stream()))
            return
        prefix = "\n" if self.mode in ("bar", "tqdm") and self._drawn else ""
        self._write(prefix + text + "\n")
        if prefix:
            self._drawn = False

    def watch_futures(self, futures) -> bool:
        """In a notebook, show dask's progress widget for ``futures`` and take this bar off
        the screen; returns whether dask's widget is shown. Elsewhere: False (keep this bar)."""
        if self._resolve() == "off" or not in_notebook(self._stream()):
            return False
        try:
            from distributed import progress
            progress(futures, notebook=True, multi=False)
        except Exception:  # no ipywidgets etc.: keep our own display
            return False
        self.close()
        self.mode = "off"
        return True

    def close(self) -> None:
        mode = self.mode
        if mode in (None, "off"):
            return
        if mode == "tqdm" and self._tqdm is not None:
            bar, self._tqdm = self._tqdm, None
            self._guard(bar.close)
        elif mode in ("bar", "tqdm") and self._drawn:  # tqdm mode without a tqdm: our own bar was drawn
            self._write("\n")
        elif mode == "lines" and self._updated:
            self._write(self._line(final=True) + "\n")
        self._drawn = False
        self._updated = False
        if self.mode != "off":
            self.mode = None  # a later update starts a fresh display

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- internals ----------------------------------------------------------------------
    def _stream(self):
        return self.stream if self.stream is not None else sys.stderr

    def _resolve(self) -> str:
        if self.mode is None:
            self.mode = self._forced or choose_mode(self._stream())
        return self.mode

    def _guard(self, fn) -> None:
        try:
            fn()
        except (ValueError, OSError):  # closed or broken stream: stop reporting, keep computing
            self._tqdm = None
            self.mode = "off"

    def _write(self, text: str) -> None:
        def go():
            s = self._stream()
            s.write(text)
            s.flush()
        self._guard(go)

    def _line(self, final: bool = False) -> str:
        elapsed = time.perf_counter() - self._start
        if self.total is not None:
            ran = self.done - self._started_done
            eta = "" if final or not ran else f" eta {_fmt_time(elapsed / ran * (self.total - self.done))}"
            head = f"{self.done}/{self.total}"
        else:
            eta = ""
            # a fraction still at 0 says nothing (issue 39: "0.0%" lines that never moved): show the elapsed time only
            head = f"{100 * self._fraction:5.1f}%" if self._fraction > 0 else "running"
        tail = f" {self._note}" if self._note else ""
        return f"[{self.label}] {head} {_fmt_time(elapsed)}{eta}{tail}".rstrip()

    def _draw_elapsed(self) -> None:
        """One line / bar with the elapsed time and the note only (no fraction known)."""
        mode = self._resolve()
        if mode == "off":
            return
        elapsed = _fmt_time(time.perf_counter() - self._start)
        if mode == "lines":
            self._write(f"[{self.label}] {elapsed} {self._note}".rstrip() + "\n")
            self._updated = False  # no closing line repeating it
            return
        self._write(f"\r{self.label} {elapsed} {self._note}")
        self._drawn = True

    def _draw(self) -> None:
        mode = self._resolve()
        if mode == "off":
            return
        now = time.perf_counter()
        last = self._fraction >= 1.0
        if mode == "lines":
            gap = getattr(self, "_gap", self.line_interval)
            if now - self._last_line >= gap:
                self._last_line = now
                # not a terminal: lines go to a log, so space them out (10 s, 20 s, 40 s, .. at most 2 min)
                self._gap = min(2 * gap, max(self.max_line_interval, self.line_interval))
                self._write(self._line() + "\n")
            return
        if now - self._last < self.min_interval and not last:
            return
        self._last = now
        if mode == "tqdm":
            self._guard(self._draw_tqdm)
            if self.mode != "bar":  # drawn by tqdm, or switched off; "bar": tqdm was unusable
                return
        f = self._fraction
        filled = int(round(f * self.width))
        bar = "#" * filled + "-" * (self.width - filled)
        count = f" {self.done}/{self.total}" if self.total is not None else ""
        self._write(f"\r{self.label} [{bar}] {100 * f:5.1f}%{count} {now - self._start:7.1f}s {self._note}")
        self._drawn = True

    def _draw_tqdm(self) -> None:
        if self._tqdm is None:
            self._tqdm = self._make_tqdm()
            if self._tqdm is None:
                self.mode = "bar"
                return
        t = self._tqdm
        if self.total is not None:
            t.total = self.total
            t.n = self.done
        else:
            t.n = round(100 * self._fraction, 1)
        if self._note:
            t.set_postfix_str(self._note[:40], refresh=False)
        t.refresh()

    def _make_tqdm(self):
        stream = self._stream()
        try:
            if in_notebook(stream) and _have("ipywidgets"):
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
            kw = {"total": self.total, "initial": self.done} if self.total is not None else \
                {"total": 100, "bar_format": "{desc} |{bar}| {n:.1f}% {elapsed}{postfix}"}
            return tqdm(desc=self.label, file=stream, leave=True, dynamic_ncols=True, mininterval=0,
                        **kw)
        except Exception:  # any tqdm trouble: our own bar instead
            return None


# ---- heartbeat: progress of a long task from the outside -------------------------------------------
_CURRENT: list = []  # the innermost active Heartbeat of this process (a stack)


def current_heartbeat() -> "Heartbeat | None":
    """The innermost active :class:`Heartbeat` of this process, or ``None``."""
    return _CURRENT[-1] if _CURRENT else None


def report(fraction: float | None = None, note: str = "") -> None:
    """Tell the active :class:`Heartbeat` (if any) how far the current task is; a no-op otherwise,
    so library code may call it freely."""
    if _CURRENT:
        hb = _CURRENT[-1]
        hb.fraction, hb.note = fraction, note


class Heartbeat:
    """``with Heartbeat(label, after=10): task()``: after ``after`` seconds, progress of ``task`` on
    stderr every ``interval`` seconds (a bar on a terminal, lines elsewhere; ``mode=`` forces one):
    the elapsed time and the last :func:`report` (fraction, note). Nothing at all for a task shorter
    than ``after``. The display is a :class:`Progress`, so ``SOFTPOLAR_PROGRESS=off`` silences it."""

    def __init__(self, label: str, *, after: float = 10.0, interval: float = 10.0, enabled: bool = True,
                 stream=None, mode: str | None = None):
        self.label, self.after, self.interval = label, float(after), float(interval)
        self.fraction: float | None = None
        self.note = ""
        self._bar = Progress(label, enabled=enabled, stream=stream, mode=mode)
        self._bar.line_interval = 0.0  # the heartbeat's own clock decides when a line is due
        self._stop = None
        self._thread = None
        self.beats = 0

    def _run(self) -> None:
        if self._stop.wait(self.after):
            return
        while True:
            self.beats += 1
            note = self.note or "running"
            if self.fraction is None:
                self._bar.status(note)
            else:
                self._bar.update(self.fraction, note)
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        _CURRENT.append(self)
        if self._bar.mode != "off":
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, name=f"heartbeat {self.label}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self.beats:
                self._bar._updated = False  # the task's own result line follows; no closing progress line
                self._bar.close()
        if self in _CURRENT:
            _CURRENT.remove(self)
        return False
