"""A tiny progress bar on stderr (no tqdm): ``Progress(label).update(fraction)``.

Disabled instances do nothing, so library code can always call it; only callers that
ask for ``progress=True`` get output. Redraws are throttled to 10 per second and the
bar ends with a newline on :meth:`close`.
"""
from __future__ import annotations

import sys
import time


class Progress:
    """``Progress(label, enabled=True, stream=sys.stderr)``; ``update(fraction, note='')``."""

    width = 30

    def __init__(self, label: str, *, enabled: bool = True, stream=None):
        self.label = label
        self.enabled = enabled
        self.stream = stream
        self._last = 0.0
        self._start = time.perf_counter()
        self._drawn = False

    def update(self, fraction: float, note: str = "") -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and fraction < 1.0:
            return
        self._last = now
        f = min(max(float(fraction), 0.0), 1.0)
        filled = int(round(f * self.width))
        bar = "#" * filled + "-" * (self.width - filled)
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(f"\r{self.label} [{bar}] {100 * f:5.1f}% {now - self._start:7.1f}s {note}")
        stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            stream = self.stream if self.stream is not None else sys.stderr
            stream.write("\n")
            stream.flush()
            self._drawn = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
