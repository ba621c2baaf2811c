r"""Atomic file writes: text, JSON and matplotlib figures, one recipe for the whole project.

Every writer here

1. creates the target's folder (``mkdir -p``);
2. writes a fresh temporary file ``.<name>.<12 hex digits>.tmp`` *in that folder* (same
   filesystem, so step 3 is a rename, never a copy);
3. ``os.replace``-s it onto the target.

A reader therefore sees the previous file or the complete new one, never a half-written
file. On any exception, ``KeyboardInterrupt`` included (``BaseException``), the temporary
file is removed, the exception propagates and an existing target is left as it was.

Permissions: the temporary file is created by ``os.open(..., O_CREAT | O_EXCL, 0o666)``,
so the kernel applies the umask and the final file gets the usual ``0o666 & ~umask``
(``tempfile.mkstemp`` would leave ``0o600``; reading the umask with ``os.umask`` and
restoring it is not thread-safe). ``O_EXCL`` never opens an existing file, so two writers
cannot share a temporary file. The ``.tmp`` suffix keeps temporaries out of globs such as
``runs/*.json``.

Durability: no ``fsync`` unless ``fsync=True`` (then the data is flushed to disk before
the rename; the folder entry itself is not synced).

Users: :mod:`numerics._certify` (certificates), ``softpolar simulate`` (``--out`` JSON,
``--plot`` PNG), ``softpolar derive --out``, the experiment grid (run files, summaries,
tables, figures) and ``softpolar bench --out``. Each caller passes its own JSON
formatting, so the bytes written are those of the code this module replaced.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path

__all__ = ["write_text_atomic", "write_json_atomic", "save_figure_atomic"]


def _write_atomic(path, write, *, binary: bool, fsync: bool) -> Path:
    """Create ``path`` atomically; ``write(fh)`` fills the open temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            write(fh)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path, text: str, *, fsync: bool = False) -> Path:
    """Write the string ``text`` (UTF-8, as given: no newline is added) to ``path`` atomically.

    Returns ``path`` as a :class:`~pathlib.Path`. See the module docstring for the recipe
    (folder created, temporary file in the same folder, ``os.replace``, usual permissions).
    """
    return _write_atomic(path, lambda fh: fh.write(text), binary=False, fsync=fsync)


def write_json_atomic(path, obj, *, end: str = "\n", fsync: bool = False, **json_kw) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically, followed by ``end`` (default a newline).

    ``json_kw`` goes to :func:`json.dump` unchanged (``indent``, ``sort_keys``,
    ``allow_nan``, ``default``, ...), so the defaults are :func:`json.dump`'s: one line,
    ``NaN``/``Infinity`` allowed. A value that cannot be serialized raises (``TypeError``,
    ``ValueError``) and leaves no file behind. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    def write(fh):
        json.dump(obj, fh, **json_kw)
        fh.write(end)

    return _write_atomic(path, write, binary=False, fsync=fsync)


def save_figure_atomic(fig, path, *, format: str | None = None, fsync: bool = False,  # noqa: A002
                       **savefig_kw) -> Path:
    """Save the matplotlib figure ``fig`` to ``path`` atomically (``fig.savefig`` into the temporary file).

    ``format`` defaults to the suffix of ``path`` (``.png`` -> ``"png"``), else ``"png"``;
    it is always passed on, because the temporary file's ``.tmp`` suffix says nothing.
    ``savefig_kw`` (``dpi``, ``bbox_inches``, ...) go to :meth:`Figure.savefig`. The figure
    is not closed. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    fmt = format or path.suffix[1:].lower() or "png"
    return _write_atomic(path, lambda fh: fig.savefig(fh, format=fmt, **savefig_kw),
                         binary=True, fsync=fsync)
