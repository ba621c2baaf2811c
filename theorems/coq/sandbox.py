"""Run ``coqc`` on a file someone sent you so that it cannot write outside a private temporary folder.

Three layers, from the text inward (the threat model is in ``docs/safety.md``):

1. :func:`writing_commands` refuses, before anything is compiled, every vernacular of the Coq 8.16 command index
   that writes a file, changes the working folder, or reads or runs code from outside the scanned file
   (``Extraction`` in all its forms, ``Redirect``, ``Cd``, ``Print Universes "FILE"``, NativeCompute profiling,
   ``Load``, ``Declare ML Module``, load-path changes). The scan reads comments and strings as Coq's lexer does
   (:func:`theorems.coq.code_only`), so nesting and string tricks do not hide a command.
2. :func:`run_private` compiles in a fresh folder made by :func:`tempfile.mkdtemp` (mode 0700), holding a copy of
   the compiled development and the file; it is the working folder, ``HOME`` and ``TMPDIR`` of ``coqc``, and it is
   removed afterwards. A relative path in a missed command lands there.
3. Where the system allows it (Linux, ``unshare`` with user and mount namespaces), ``coqc`` runs in its own mount
   namespace in which every mount point is read-only except the private folder: an absolute path in a missed
   command fails with "Read-only file system". :func:`confinement` says which layers are active.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

#: Vernaculars refused before compiling (pattern on the code with comments and strings blanked, what it is).
#: Matching a single keyword is deliberate: a comment between two words of a command is blanked to spaces, and an
#: identifier that happens to be the keyword is refused too (a certificate file never needs one).
WRITES = (
    (r"\bExtraction\b", "Extraction (writes a program to a file: Extraction \"F\", Recursive, Separate "
                        "Extraction, (Recursive) Extraction Library, Extraction TestCompile, output settings)"),
    (r"\bRedirect\b", "Redirect (writes a command's output to a file)"),
    (r"\bCd\b", "Cd (changes the working folder)"),
    (r"\bPrint\s+(Sorted\s+)?Universes\b", "Print Universes (writes the universe graph to a file it is given)"),
    (r"\bNativeCompute\s+Profil", "NativeCompute profiling (writes a profile file)"),
    (r"\bLoad\b", "Load (runs the commands of another file, unscanned)"),
    (r"\bDeclare\s+ML\s+Module\b", "a plugin loaded (Declare ML Module)"),
    (r"\bAdd\s+(Rec\s+)?(LoadPath|ML\s+Path)\b", "a load path added (only the development is on it)"),
)

#: Environment variables ``coqc`` keeps (where Coq and its libraries are); everything else is dropped, and
#: ``HOME``, ``TMPDIR`` and the XDG folders it could write to point into the private folder.
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "COQLIB", "COQCORELIB", "COQPATH", "OCAMLPATH", "OCAMLFIND_CONF",
             "XDG_DATA_DIRS", "XDG_DATA_HOME")

#: Run in a new user + mount namespace: every mount point read-only, then the private folder ($1) writable again.
_CONFINE = r"""
priv="$1"; shift
mount --make-rprivate / 2>/dev/null
awk '{print $2}' /proc/self/mounts | sort -u | while read -r m; do
  mount -o remount,bind,ro "$m" 2>/dev/null
done
mount --bind "$priv" "$priv" && mount -o remount,bind,rw "$priv" || exit 97
cd "$priv" || exit 97
exec "$@"
"""


def writing_commands(code: str) -> list[tuple[int, str]]:
    """(position, ``WORD: what it is``) of each :data:`WRITES` command in ``code`` (comments and strings already
    blanked by :func:`theorems.coq.code_only`)."""
    return [(m.start(), f"{' '.join(m.group(0).split())}: {what}")
            for pattern, what in WRITES for m in re.finditer(pattern, code)]


def private_env(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
    env.setdefault("XDG_DATA_HOME", str(Path.home() / ".local" / "share"))   # read only: user-installed libraries
    env.update(HOME=str(folder), TMPDIR=str(folder), TMP=str(folder), TEMP=str(folder),
               XDG_CONFIG_HOME=str(folder / ".config"), XDG_CACHE_HOME=str(folder / ".cache"))
    return env


@functools.lru_cache(maxsize=1)
def namespace_works() -> bool:
    """Whether :data:`_CONFINE` runs here and really makes the rest of the file system read-only (probed once)."""
    exe = shutil.which("unshare")
    if exe is None or not Path("/proc/self/mounts").exists():
        return False
    with tempfile.TemporaryDirectory(prefix="softpolar-probe-") as top:
        inner = Path(top) / "private"
        inner.mkdir()
        probe = "if (: > ../outside) 2>/dev/null; then exit 3; fi; : > inside"
        try:
            out = subprocess.run([exe, "-rm", "sh", "-c", _CONFINE, "sh", str(inner), "sh", "-c", probe],
                                 capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return False
        return out.returncode == 0 and (inner / "inside").exists() and not (Path(top) / "outside").exists()


def confinement() -> str:
    """Which layers :func:`run_private` uses here, in words."""
    base = "private temporary working folder, HOME and TMPDIR"
    return base + (" + read-only mount namespace (unshare)" if namespace_works() else
                   " (no mount namespace on this system: absolute paths rely on the command scan)")


def run_private(coqc: str, args: list[str], folder: Path, timeout: float) -> tuple[int | None, str, float]:
    """Run ``coqc ARGS`` with ``folder`` as its working folder, home and temporary folder, confined to it where
    the system allows. Returns (exit status or ``None`` on time-out, stdout + stderr, seconds)."""
    cmd = [coqc, *args]
    if namespace_works():
        cmd = [shutil.which("unshare"), "-rm", "sh", "-c", _CONFINE, "sh", str(folder), *cmd]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=str(folder), env=private_env(folder),
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"coqc timed out after {timeout:g} s", time.perf_counter() - t0
    return out.returncode, out.stdout + out.stderr, time.perf_counter() - t0


def private_copy(development: Path) -> Path:
    """A new private folder (mode 0700) holding a copy of the compiled development (its ``.v``, ``.vo`` files)."""
    folder = Path(tempfile.mkdtemp(prefix="softpolar-check-"))
    for f in Path(development).iterdir():
        if f.is_file() and f.suffix in (".v", ".vo", ".vos", ".vok", ".glob") or f.name == "_CoqProject":
            shutil.copyfile(f, folder / f.name)
    return folder
