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
import stat
from pathlib import Path

from theorems import InvalidArgument

__all__ = ["write_text_atomic", "write_json_atomic", "save_figure_atomic", "check_output_file",
           "check_writable_folder", "make_temp_dir", "same_path"]


def _bad_output(argument: str, path, why: str, expected: str = "a writable file path"):
    from theorems import InvalidArgument  # lazy: importing numerics._io stays cheap
    from theorems._errors import show

    return InvalidArgument(f"{argument}={show(os.fspath(path), 200)} {why}; expected {expected}")


def same_path(a, b) -> bool:
    """Whether ``a`` and ``b`` name the same file (same inode, or the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        try:
            return Path(a).resolve() == Path(b).resolve()
        except (OSError, RuntimeError, ValueError):
            return False


def check_writable_folder(argument: str, folder, path=None) -> Path:
    """Raise ``InvalidArgument`` unless a new file can be created in ``folder``.

    The nearest existing ancestor must be a folder; a file is created there (with the same
    ``O_CREAT | O_EXCL`` recipe as the writers) and removed again, so read-only file systems,
    missing permissions (also for root on ``/sys`` or ``/proc``) and full quotas of inodes are
    found before any computation. ``path`` is the name shown in the message (default ``folder``).
    """
    shown = folder if path is None else path
    folder = Path(folder)
    probe_dir = folder
    while not probe_dir.exists():
        if probe_dir.parent == probe_dir:
            break
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        raise _bad_output(argument, shown, f"cannot be created: {str(probe_dir)!r} is not a folder")
    probe = probe_dir / f".softpolar-probe.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise _bad_output(argument, shown, f"cannot be written: folder {str(probe_dir)!r} refuses a "
                                           f"new file ({exc.strerror or exc})") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return folder


def check_output_file(argument: str, path, *, inputs=(), suffix: str | None = None) -> Path:
    """Validate an output file path *before* any computation; return it as a ``Path``.

    Refused (``InvalidArgument`` naming ``argument``): an empty name, an existing folder, an
    existing file that is not a regular file (``/dev/null``, a FIFO: a rename would replace the
    device node), a path equal to one of ``inputs`` (the same run's input files: output never
    overwrites an input), a wrong ``suffix`` (e.g. ``".png"``) and a folder where no new file
    can be created (:func:`check_writable_folder`). An existing regular file is overwritten
    atomically, as ``--out`` promises.
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise _bad_output(argument, path if isinstance(path, (str, bytes)) else repr(path),
                          "is not a file name")
    p = Path(path)
    if os.fspath(path).endswith(os.sep) or p.is_dir():
        raise _bad_output(argument, path, "is a folder", "a file path")
    if p.exists() or p.is_symlink():
        try:
            mode = os.stat(p).st_mode
        except OSError as exc:
            raise _bad_output(argument, path, f"cannot be inspected ({exc.strerror or exc})") from None
        if not stat.S_ISREG(mode):
            raise _bad_output(argument, path, "exists and is not a regular file (a device, a pipe "
                                              "or a socket)", "a regular file path")
    for inp in inputs:
        if inp is not None and same_path(p, inp):
            raise _bad_output(argument, path, f"is an input of this run ({os.fspath(inp)!r}); output "
                                              "never overwrites an input", "a different file path")
    if suffix is not None and not p.name.lower().endswith(suffix):
        raise _bad_output(argument, path, "has the wrong extension", f"a {suffix} file name")
    check_writable_folder(argument, p.resolve().parent if p.parent.exists() else p.parent, path)
    return p


def make_temp_dir(parent, prefix: str) -> Path:
    """Create a fresh folder ``parent/<prefix><12 hex digits>`` with the usual umask permissions.

    (``tempfile.mkdtemp`` would give ``0o700``, and a report folder renamed from it would keep it.)
    """
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        path = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            os.mkdir(path, 0o777)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free temporary folder name in {str(parent)!r}")


def _write_atomic(path, write, *, binary: bool, fsync: bool) -> Path:
    """Create ``path`` atomically; ``write(fh)`` fills the open temporary file."""
    path = Path(path)
    if path.is_dir() or (path.exists() and not stat.S_ISREG(os.stat(path).st_mode)):
        raise _bad_output("path", path, "exists and is not a regular file", "a regular file path")
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


#: largest JSON input read (bytes): far above any initialization, certificate or atlas, and a
#: bound on the memory a hostile file can take before it is parsed
MAX_JSON_BYTES = 256 * 2**20


def read_json(path, argument: str, *, expected: str = "a JSON object", max_bytes: int = MAX_JSON_BYTES,
              **loads_kw):
    """Parse the JSON file ``path``, an input named ``argument``; ``loads_kw`` go to :func:`json.loads`.

    Every way a file can be unreadable becomes one :class:`InvalidArgument` naming the argument, the
    path and what was expected: missing or unreadable, larger than ``max_bytes``, not UTF-8, not JSON,
    nested too deeply (``RecursionError``), or an integer beyond Python's 4300-digit text limit.
    """
    where = f"{argument}={os.fspath(path)!r}"
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InvalidArgument(f"{where} cannot be read ({exc.strerror}); expected a readable file with "
                              f"{expected}") from None
    if len(raw) > max_bytes:
        raise InvalidArgument(f"{where} is larger than {max_bytes} bytes; expected a smaller file")
    try:
        return json.loads(raw.decode("utf-8"), **loads_kw)
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"{where} is not UTF-8 text ({exc.reason} at byte {exc.start}); expected "
                              f"{expected}") from None
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}); expected "
                              f"{expected}") from None
    except RecursionError:
        raise InvalidArgument(f"{where} is nested too deeply; expected {expected}") from None
    except ValueError as exc:  # an integer beyond Python's 4300-digit int-from-text limit
        raise InvalidArgument(f"{where} holds a number that cannot be read ({str(exc).split(';')[0]}); "
                              "expected numbers of at most 4300 digits") from None
