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

Users: :mod:`numerics.validated.certify` (certificates), ``softpolar simulate`` (``--out`` JSON,
``--plot`` PNG), ``softpolar derive --out``, the experiment grid (run files, summaries,
tables, figures) and ``softpolar bench --out``. Each caller passes its own JSON
formatting, so the bytes written are those of the code this module replaced.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from pathlib import Path
from fractions import Fraction
import hashlib
import math
import zipfile
import numpy as np

from theorems import InvalidArgument
from theorems.errors import show

__all__ = ["write_atomic", "write_text_atomic", "write_bytes_atomic", "write_json_atomic",
           "save_figure_atomic", "check_output_file",
           "check_writable_folder", "make_temp_dir", "same_path", "read_json", "parse_json", "read_bytes",
           "open_regular", "canonical_json", "content_digest", "check_keys", "parse_rational", "folder_lock",
           "softpolar_output", "own_text_marker", "own_figure_metadata", "OWN_MARK", "OWN_KEY"]


def _bad_output(argument: str, path, why: str, expected: str = "a writable file path"):
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
    can be created (:func:`check_writable_folder`), and an existing regular file that softpolar cannot
    recognise as its own output (:func:`softpolar_output`): softpolar never deletes or overwrites a file it
    did not create. A file it recognises is replaced atomically.
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
    if p.exists() and softpolar_output(p) is None:
        raise _bad_output(argument, path, "exists and is not a file softpolar wrote (softpolar never overwrites "
                                          "a file it did not create)", "a new path: remove the file or choose "
                                          "another path")
    check_writable_folder(argument, p.resolve().parent if p.parent.exists() else p.parent, path)
    return p


#: the words that mark a file as softpolar's own output (text outputs: on a comment line; PNG: the ``Software``
#: text chunk; PDF: the ``/Creator`` entry); :func:`softpolar_output` recognises them
OWN_MARK = "Written by softpolar"
#: the top-level key a JSON output carries when it has no ``format`` field of its own
OWN_KEY = "softpolar_output"
#: the ``format`` values of softpolar's JSON outputs begin with this
OWN_FORMAT_PREFIX = "softpolar-"
_OWN_TEXT_LINE = re.compile(r"^\s*(?:%|<!--|\(\*|#|//)\s*" + re.escape(OWN_MARK) + r"\b")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def own_text_marker(comment: str, what: str) -> str:
    """The marker line of a text output (``comment``: ``%`` LaTeX, ``<!--`` Markdown, ``(*`` Coq)."""
    close = {"<!--": " -->", "(*": " *)"}.get(comment, "")
    return f"{comment} {OWN_MARK} {what}{close}"


def own_figure_metadata(fmt: str, what: str = "") -> dict:
    """``savefig(metadata=...)`` that marks a PNG or PDF as softpolar's output ({} for other formats)."""
    text = f"{OWN_MARK} {what}".strip()
    return {"png": {"Software": text}, "pdf": {"Creator": text}}.get(fmt.lower(), {})


def _png_software(raw: bytes) -> str | None:
    pos = len(_PNG_SIGNATURE)
    while pos + 8 <= len(raw):
        size = int.from_bytes(raw[pos:pos + 4], "big")
        kind = raw[pos + 4:pos + 8]
        body = raw[pos + 8:pos + 8 + size]
        if kind == b"tEXt" and b"\0" in body:
            key, _, value = body.partition(b"\0")
            if key == b"Software":
                return value.decode("latin-1")
        if kind in (b"IDAT", b"IEND"):
            return None
        pos += 12 + size
    return None


def softpolar_output(path) -> str | None:
    """How the existing regular file ``path`` is recognised as softpolar's own output, or ``None``.

    Recognised: a JSON object with a top-level ``format`` beginning ``softpolar-`` (certificates, atlases,
    ``simulate --out``, ``derive --format json``) or an ``softpolar_output`` key; a ``.npz`` holding a
    ``softpolar_output`` member (``simulate --out FILE.npz``); a PNG whose ``Software`` text
    chunk, or a PDF whose ``/Creator``, begins with :data:`OWN_MARK`; a text file (Markdown, LaTeX, Coq) whose
    first or last non-empty line is a comment beginning with :data:`OWN_MARK`. Anything else (and a file over
    :data:`MAX_JSON_BYTES`, or one that cannot be read) is not recognised: the caller refuses to replace it.
    """
    try:
        with open(path, "rb") as fh:
            if fh.read(4) == b"PK\x03\x04":  # a zip: a .npz of numerics.save_trajectory, read by its members
                return npz_own_output(path)
            fh.seek(0)
            raw = fh.read(MAX_JSON_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_JSON_BYTES:
        return None
    if raw.startswith(_PNG_SIGNATURE):
        sw = _png_software(raw)
        return "png Software " + sw if sw is not None and sw.startswith(OWN_MARK) else None
    if raw.startswith(b"%PDF"):
        m = re.search(rb"/Creator\s*\((" + re.escape(OWN_MARK.encode()) + rb"[^)]*)\)", raw)
        return "pdf Creator " + m.group(1).decode("latin-1") if m else None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            fmt, own = obj.get("format"), obj.get(OWN_KEY)
            if isinstance(fmt, str) and fmt.startswith(OWN_FORMAT_PREFIX):
                return f"json format {fmt}"
            if isinstance(own, str):
                return f"json {OWN_KEY} {own}"
            return None
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines[:1] + lines[-1:]:
        if _OWN_TEXT_LINE.match(line):
            return "text " + line.strip()
    return None


def npz_own_output(path) -> str | None:
    """``'npz softpolar_output WHAT'`` when ``path`` is a zip holding softpolar's ``softpolar_output`` member
    (a file :func:`numerics.save_trajectory` wrote), else ``None``; never raises."""
    try:
        with zipfile.ZipFile(path) as zf:
            if f"{OWN_KEY}.npy" not in zf.namelist():
                return None
            with zf.open(f"{OWN_KEY}.npy") as fh:
                value = np.lib.format.read_array(fh, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None
    if value.shape != () or value.dtype.kind != "U":
        return None
    return f"npz {OWN_KEY} {value}"


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


def _write_atomic(path, write, *, binary: bool, fsync: bool, parents: bool = True) -> Path:
    """Create ``path`` atomically; ``write(fh)`` fills the open temporary file.

    ``parents``: create the folder (``mkdir -p``, the default); ``False``: a missing folder is an
    ``InvalidArgument`` naming the path (a user's output path is never given new folders).
    """
    path = Path(path)
    if path.is_dir() or (path.exists() and not stat.S_ISREG(os.stat(path).st_mode)):
        raise _bad_output("path", path, "exists and is not a regular file", "a regular file path")
    if not parents and not path.parent.is_dir():
        raise InvalidArgument(f"out={str(path)!r} is not allowed; its folder does not exist")
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


#: the general recipe, public: ``write(fh)`` fills the open temporary file (a streaming writer such as np.savez)
write_atomic = _write_atomic


def write_text_atomic(path, text: str, *, fsync: bool = False) -> Path:
    """Write the string ``text`` (UTF-8, as given: no newline is added) to ``path`` atomically.

    Returns ``path`` as a :class:`~pathlib.Path`. See the module docstring for the recipe
    (folder created, temporary file in the same folder, ``os.replace``, usual permissions).
    """
    return _write_atomic(path, lambda fh: fh.write(text), binary=False, fsync=fsync)


def write_bytes_atomic(path, data: bytes, *, fsync: bool = False) -> Path:
    """Write the bytes ``data`` to ``path`` atomically (a PDF, an image): the recipe of :func:`write_text_atomic`."""
    return _write_atomic(path, lambda fh: fh.write(data), binary=True, fsync=fsync)


def write_json_atomic(path, obj, *, end: str = "\n", fsync: bool = False, parents: bool = True, **json_kw) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically, followed by ``end`` (default a newline): the one
    JSON writer of the project (certificates, run files, summaries, reports, atlas files).

    ``parents=False`` refuses a missing folder instead of creating it (:func:`_write_atomic`).

    ``json_kw`` goes to :func:`json.dump` unchanged (``indent``, ``sort_keys``,
    ``allow_nan``, ``default``, ...), so the defaults are :func:`json.dump`'s: one line,
    ``NaN``/``Infinity`` allowed. A value that cannot be serialized raises (``TypeError``,
    ``ValueError``) and leaves no file behind. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    def write(fh):
        json.dump(obj, fh, **json_kw)
        fh.write(end)

    return _write_atomic(path, write, binary=False, fsync=fsync, parents=parents)


def save_figure_atomic(fig, path, *, format: str | None = None, fsync: bool = False,
                       **savefig_kw) -> Path:
    """Save the matplotlib figure ``fig`` to ``path`` atomically (``fig.savefig`` into the temporary file).

    ``format`` defaults to the suffix of ``path`` (``.png`` -> ``"png"``), else ``"png"``;
    it is always passed on, because the temporary file's ``.tmp`` suffix says nothing.
    ``savefig_kw`` (``dpi``, ``bbox_inches``, ...) go to :meth:`Figure.savefig`. The figure
    is not closed. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    fmt = format or path.suffix[1:].lower() or "png"
    # marks the figure as softpolar's own (softpolar_output), next to the caller's metadata
    savefig_kw["metadata"] = {**own_figure_metadata(fmt), **(savefig_kw.get("metadata") or {})}
    return _write_atomic(path, lambda fh: fig.savefig(fh, format=fmt, **savefig_kw),
                         binary=True, fsync=fsync)


#: largest JSON input read (bytes): far above any initialization, certificate or atlas, and a
#: bound on the memory a hostile file can take before it is parsed
MAX_JSON_BYTES = 256 * 2**20
#: most characters of one JSON number token (Python's own int-from-text limit is 4300 digits)
MAX_NUMBER_CHARS = 4300
#: largest |decimal exponent| written in a JSON number token (``1e99999`` is refused by the reader
#: before any caller could expand it; callers state tighter bounds of their own)
MAX_NUMBER_EXPONENT = 99_999

_TOKENS = bytes.maketrans(bytes(range(256)), bytes(
    b"d"[0] if chr(c) in "0123456789-" else b"c"[0] if chr(c) in ".eE+" else b" "[0] for c in range(256)))


def count_numbers(raw: bytes) -> int:
    """Runs of number characters (digits and ``-``, then also ``. e E +``) in ``raw``: an upper bound
    on the JSON numbers in it (a digit run inside a string counts too, ``"1/3"`` twice).

    One ``bytes.translate`` and one ``count`` (C speed, one copy of the bytes): 12 million numbers are
    counted in well under a second, where a regex ``subn`` would build 12 million pieces first.
    """
    t = raw.translate(_TOKENS)
    return t.count(b" d") + (t[:1] == b"d")


def _bounded(hook, where: str):
    """Wrap a ``parse_float`` / ``parse_int`` hook: refuse long tokens and huge written exponents first."""
    def parse(text):
        if len(text) > MAX_NUMBER_CHARS:
            raise InvalidArgument(f"{where} holds a number written in {len(text)} characters; expected "
                                  f"numbers of at most {MAX_NUMBER_CHARS} digits")
        cut = max(text.find("e"), text.find("E"))
        if cut >= 0 and abs(int(text[cut + 1:])) > MAX_NUMBER_EXPONENT:
            raise InvalidArgument(f"{where} holds the number {text[:40]!r} with a decimal exponent beyond "
                                  f"+-{MAX_NUMBER_EXPONENT}; expected numbers of moderate size")
        return hook(text)
    return parse


def open_regular(path, argument: str, *, expected: str = "a regular file"):
    """Open ``path`` for binary reading without ever blocking; refuse anything but a regular file.

    The file is opened with ``O_NONBLOCK`` (a FIFO with no writer would block a plain ``open()``
    forever) and ``fstat``-ed on the open descriptor (no race between a check and the open): a
    FIFO, a device, a socket or a folder is one :class:`InvalidArgument` naming ``argument``.
    """
    where = f"{argument}={os.fspath(path)!r}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InvalidArgument(f"{where} cannot be read ({exc.strerror}); expected a readable file with "
                              f"{expected}") from None
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{where} is not a file name ({exc}); expected a readable file with "
                              f"{expected}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
                    if stat.S_ISSOCK(mode) else "not a regular file")
            raise InvalidArgument(f"{where} is {kind}; expected a regular file with {expected}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, argument: str, *, expected: str = "a regular file", max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), refused beyond ``max_bytes``."""
    with open_regular(path, argument, expected=expected) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise InvalidArgument(f"{argument}={os.fspath(path)!r} is larger than {max_bytes} bytes; "
                                      "expected a smaller file")
            # the stated size first (no max_bytes buffer for a small file), then in chunks: a file
            # that grows, or reports size 0 (/proc), is still read only up to max_bytes + 1
            parts, total = [], 0
            want = size + 1
            while total <= max_bytes:
                chunk = fh.read(min(want, max_bytes + 1 - total))
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
                want = 2**20
            raw = b"".join(parts)
        except OSError as exc:
            raise InvalidArgument(f"{argument}={os.fspath(path)!r} cannot be read ({exc.strerror}); "
                                  f"expected a readable file with {expected}") from None
    if len(raw) > max_bytes:
        raise InvalidArgument(f"{argument}={os.fspath(path)!r} is larger than {max_bytes} bytes; expected a "
                              "smaller file")
    return raw


def _no_duplicates(where: str, expected: str):
    def hook(pairs):
        obj = {}
        for k, v in pairs:
            if k in obj:
                raise InvalidArgument(f"{where} repeats the key {k[:40]!r} in one object (JSON readers "
                                      f"disagree on which copy counts); expected {expected} with unique keys")
            obj[k] = v
        return obj
    return hook


def parse_json(raw: bytes, where: str, *, expected: str = "a JSON object", max_numbers: int | None = None,
               **loads_kw):
    """Strictly parse the JSON bytes ``raw`` (``where`` names the input in messages).

    Refused with one :class:`InvalidArgument` each, *before* anything is expanded:

    * more than ``max_numbers`` numbers (counted on the bytes before parsing, :func:`count_numbers`:
      a file of 12 million entries is refused in a fraction of a second, without building them);
    * with a ``parse_float`` / ``parse_int`` hook (exact readers: ``Decimal``, ``str``), a number token
      longer than :data:`MAX_NUMBER_CHARS` or with a written exponent beyond :data:`MAX_NUMBER_EXPONENT`,
      before the hook sees it (float and int parsing bound themselves: ``inf``, 4300 digits);
    * a key repeated in one object (``{"winner": 0, "winner": 1}``: readers that keep the first and
      readers that keep the last would see different documents);
    * not UTF-8, not JSON (JSON numbers are ASCII digits only), nested too deeply.
    """
    if not isinstance(raw, (bytes, bytearray)):
        raw = str(raw).encode("utf-8", "surrogatepass")
    if max_numbers is not None:
        count = count_numbers(raw)
        if count > max_numbers:
            raise InvalidArgument(f"{where} holds {count} numbers; expected {expected} with at most "
                                  f"{max_numbers} numbers")
    for name in ("parse_float", "parse_int"):
        if loads_kw.get(name) is not None:
            loads_kw[name] = _bounded(loads_kw[name], where)
    loads_kw.setdefault("object_pairs_hook", _no_duplicates(where, expected))
    try:
        return json.loads(bytes(raw).decode("utf-8"), **loads_kw)
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"{where} is not UTF-8 text ({exc.reason} at byte {exc.start}); expected "
                              f"{expected}") from None
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}); expected "
                              f"{expected}") from None
    except RecursionError:
        raise InvalidArgument(f"{where} is nested too deeply; expected {expected}") from None
    except InvalidArgument:
        raise
    except ValueError as exc:  # an integer beyond Python's 4300-digit int-from-text limit
        raise InvalidArgument(f"{where} holds a number that cannot be read ({str(exc).split(';')[0]}); "
                              "expected numbers of at most 4300 digits") from None


def read_json(path, argument: str, *, expected: str = "a JSON object", max_bytes: int = MAX_JSON_BYTES,
              max_numbers: int | None = None, **loads_kw):
    """Parse the JSON file ``path``, an input named ``argument``; ``loads_kw`` go to :func:`json.loads`.

    The one JSON reader of softpolar (init files, certificates, atlas specs and certificates, report
    and atlas markers). Every way a file can be unreadable or hostile becomes one
    :class:`InvalidArgument` naming the argument, the path and what was expected: missing or
    unreadable, not a regular file (a FIFO is never opened in blocking mode: :func:`open_regular`),
    larger than ``max_bytes``, and everything :func:`parse_json` refuses (duplicate keys, too many
    or too long numbers, huge written exponents, not UTF-8, not JSON, nested too deeply).
    """
    raw = read_bytes(path, argument, expected=expected, max_bytes=max_bytes)
    return parse_json(raw, f"{argument}={os.fspath(path)!r}", expected=expected, max_numbers=max_numbers,
                      **loads_kw)


def canonical_json(obj) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no spaces, ASCII only, no NaN/Infinity.

    Digests are computed over these bytes, so two documents have the same digest exactly when a
    strict reader (:func:`parse_json`, which refuses duplicate keys) reads them as the same value.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def content_digest(data: bytes) -> str:
    """``"sha256:<hex>"`` of some bytes (file contents, canonical JSON)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_keys(argument: str, obj: dict, allowed, *, required=()) -> None:
    """Refuse keys of ``obj`` outside ``allowed`` and missing ``required`` keys (one line, sorted)."""
    unknown = sorted(str(k)[:40] for k in obj if k not in allowed)
    if unknown:
        raise InvalidArgument(f"{argument} has unknown keys {unknown}; expected keys among {sorted(allowed)}")
    missing = sorted(k for k in required if k not in obj)
    if missing:
        raise InvalidArgument(f"{argument} is missing keys {missing}; expected keys {sorted(required)} "
                              f"(and optionally {sorted(set(allowed) - set(required))})")


_DECIMAL_TEXT = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?", re.ASCII)
_RATIONAL_TEXT = re.compile(r"([+-]?[0-9]+)/([0-9]+)", re.ASCII)


def parse_rational(argument: str, value, *, max_exponent: int, max_chars: int = 1000, rational: bool = True,
                   expected: str | None = None):
    """The exact :class:`~fractions.Fraction` of a number given as text, int or float, bounded first.

    Text must be ASCII: a decimal ``[+-]digits[.digits][e[+-]digits]`` or, with ``rational``, ``p/q``.
    Its decimal exponent (the position of its leading digit) is computed from the text *before*
    anything is expanded and must lie within ``+-max_exponent`` (``Fraction('1e999999999')`` would
    build a billion-digit integer); at most ``max_chars`` characters. Fullwidth or Arabic-Indic digits
    (which ``Decimal``, ``int`` and ``Fraction`` would read as ASCII) are refused.
    """
    want = expected or (f"a decimal number{' or a rational p/q' if rational else ''} (ASCII digits) "
                        f"with decimal exponent within +-{max_exponent}")

    def bad(why):
        return InvalidArgument(f"{argument}={_show(value)} is not allowed ({why}); expected {want}")

    if isinstance(value, bool):
        raise bad("a boolean")
    if isinstance(value, int):
        if (abs(value).bit_length() - 1) * 0.30103 > max_exponent:  # floor(log10 |value|) >= this
            raise bad("too large")
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise bad("not finite")
        value_text = repr(value)
    elif isinstance(value, str):
        value_text = value.strip()
    else:
        raise bad(f"a {type(value).__name__}")
    if len(value_text) > max_chars:
        raise bad(f"{len(value_text)} characters, at most {max_chars}")
    m = _RATIONAL_TEXT.fullmatch(value_text) if rational else None
    if m:
        p, q = m.group(1), m.group(2)
        if max(len(p.lstrip("+-").lstrip("0")), len(q.lstrip("0"))) - 1 > max_exponent:
            raise bad("too many digits")
        if int(q) == 0:
            raise bad("division by zero")
        return Fraction(int(p), int(q))
    m = _DECIMAL_TEXT.fullmatch(value_text)
    if not m or not (m.group(2) or m.group(3)):
        raise bad("not an ASCII decimal number" + (" or p/q" if rational else ""))
    sign, whole, frac, exp = m.group(1), m.group(2) or "", m.group(3) or "", m.group(4)
    digits = (whole + frac).lstrip("0")
    if not digits:
        return Fraction(0)
    e = int(exp) if exp else 0
    lead = len(whole.lstrip("0")) - 1 if whole.lstrip("0") else -(len(frac) - len(frac.lstrip("0")) + 1)
    if abs(e + lead) > max_exponent or abs(e - len(frac)) > max_exponent + max_chars:
        raise bad(f"decimal exponent {e + lead}")
    q = Fraction(int(whole + frac)) * (Fraction(10) ** (e - len(frac)))
    return -q if sign == "-" else q


def _show(value) -> str:
    return show(value, 80)


_HELD: set = set()
#: the descriptor of each lock this process holds (folder -> fd), for :func:`drop_inherited_locks`
_HELD_FDS: dict = {}


def drop_inherited_locks() -> None:
    """In a ``fork``ed child: close the lock descriptors inherited from the parent, without unlocking.

    ``flock`` belongs to the open file description, which a forked child shares: a child that kept the
    descriptor would keep the folder locked after its parent was killed (the next run refused until the
    child ends). Closing (not ``LOCK_UN``, which would release the parent's lock too) leaves the parent's
    lock as it is; the child holds none.
    """
    for fd in _HELD_FDS.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD_FDS.clear()
    _HELD.clear()


#: the one line of a lock file softpolar writes (:func:`folder_lock`)
_LOCK_LINE = re.compile(rb"softpolar lock, pid ([0-9]+)\n")


@contextlib.contextmanager
def folder_lock(folder, argument: str = "out"):
    """Hold an exclusive lock on the output folder ``folder`` for one run; a second run is refused.

    The lock is ``flock`` on a sibling file ``.<name>.lock`` (a report folder is replaced as a whole
    by a rename, so a lock inside it would be swapped away). ``LOCK_NB``: a concurrent run on the same
    folder gets one :class:`InvalidArgument` naming the folder and the holder's pid at once, and never
    overwrites what the first run writes. The lock file holds ``softpolar lock, pid N``. It is removed on exit
    when this run created it or found it holding that line (a lock file left by a killed run holds no lock:
    ``flock`` dies with its process, and it is reused); any other file of that name is refused untouched, except
    an empty one (another run may have just created it), which is used and left empty.
    """
    import fcntl

    folder = Path(folder).resolve()
    if folder in _HELD:  # re-entrant within one process (flock would refuse our own second descriptor)
        yield folder
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    path = folder.parent / f".{folder.name}.lock"
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    for _ in range(20):
        created = True
        try:
            try:
                fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                created = False
                fd = os.open(path, flags)
        except FileNotFoundError:  # removed by a finishing holder between the two opens
            continue
        except OSError as exc:
            raise _bad_output(argument, folder, f"cannot be locked ({exc.strerror or exc})",
                              "a folder where softpolar may create a lock file") from None
        try:
            st = os.fstat(fd)
            text = os.pread(fd, 64, 0) if stat.S_ISREG(st.st_mode) else b"?"
        except OSError:
            text = b"?"
        ours = created or _LOCK_LINE.fullmatch(text) is not None
        if not (ours or text == b""):  # never truncate or remove a file softpolar did not write
            os.close(fd)
            raise _bad_output(argument, folder, f"cannot be locked: {str(path)!r} exists and was not written "
                                                "by softpolar", "no foreign file of that name beside the folder")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = "?"
            with contextlib.suppress(OSError):
                m = _LOCK_LINE.fullmatch(os.pread(fd, 64, 0))
                holder = m.group(1).decode() if m else "?"
            os.close(fd)
            raise InvalidArgument(f"{argument}={str(folder)!r} is in use by another softpolar run (pid "
                                  f"{holder}); expected one run per folder at a time (wait for it to finish, "
                                  "or choose another folder)") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            same = False
        if same:  # not unlinked by a finishing holder between our open and our flock
            break
        os.close(fd)
    else:  # pragma: no cover - 20 races in a row
        raise InvalidArgument(f"{argument}={str(folder)!r} could not be locked; expected one run per folder")
    _HELD.add(folder)
    _HELD_FDS[folder] = fd
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"softpolar lock, pid {os.getpid()}\n".encode(), 0)
        yield folder
    finally:
        _HELD.discard(folder)
        _HELD_FDS.pop(folder, None)
        with contextlib.suppress(OSError):
            if ours:
                os.unlink(path)
            else:  # an empty file found there: left as it was found
                os.ftruncate(fd, 0)
        os.close(fd)
