"""The package version, read from the installed package's metadata (the one source: setup.cfg)."""
from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("softpolar")
except metadata.PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"
