r"""Certified basin atlases: which token wins, proven over whole boxes of initializations [D].

A *slice* is a 2-D affine family of initializations of the logistic tau-system
($u'=b\,s$, $a'=J(s)u$; :mod:`theorems.trapping`): $u(0)$, $a(0)$ are affine in $(x,y)$ over a
rectangle. By :mod:`theorems._symmetry` a slice at $b=1$ stands for the 5-parameter family of
shifted and rescaled initializations (:func:`theorems.slice_coverage`).

:func:`run_atlas` subdivides the rectangle adaptively (a quadtree from ``start_width`` down to
``min_width``). Each box is first *screened* with the float64 integrator
(:mod:`numerics.validated.box_float`, a 4 x 4 sample grid): boxes whose samples disagree are split
without trying (a heuristic that only saves time). The others go to the box engine
(:func:`numerics.validated.box.enclose_box`, C1 Lohner), which either proves that the whole box enters
$R_i^+$ -- the trapping lemma [D] then gives $s\to e_i$ for every initialization in it -- or
fails, and the box is split. Boxes at ``min_width`` that are not certified are *uncertified*
(grey in the map).

Scheduling: ``"inline"`` runs level by level in this process; otherwise everything goes through
``dask.distributed`` (a ``LocalCluster`` by default, ``scheduler="tcp://..."`` for a running
cluster): the float64 screening (in chunks of boxes), the certification of each box and the float64
map (row blocks, at low priority) all run on the workers, with no level barrier (:func:`_pipelined`),
so the client only routes results; every number is the inline run's, bit for bit. Each finished box is
appended as one JSON line to ``OUT/journal.jsonl`` (flushed), so an interrupted run resumes with
only the boxes in flight lost (a torn last line is ignored). Outputs, written atomically
(:mod:`numerics.io`): ``atlas.json`` (the certificate), ``atlas.png`` (certified map with the
float64 basin boundary, beside the float64 map), ``float64.npy`` (the float64 winner image).
``OUT`` must be new, empty, or a folder this module made for the same slice and engine settings
(``atlas-run.json``, which records the content hash of each output as written: an output edited since,
or one it does not record, is refused and left as it is; :func:`_prepare_out`); nothing else is ever
overwritten.

Provenance: everything here is derived for this project [D]; the paper proves polarization only
from a uniform $a(0)$ [A]. The ``rule`` statistics (argmax of $u_i+\kappa a_i$) are our own
observation on the float64 map [D], not a statement of the paper.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
import ast
import io
import math
import numpy as np

from theorems import InvalidArgument
from numerics import basin_winners as winners, enclose_box, io as _io
from numerics.io import (canonical_json, check_keys, content_digest, folder_lock, parse_json, parse_rational,
                         read_bytes, read_json)
from numerics.progress import Progress
from numerics.validated.box import encode_trace
from numerics.validated.box_float import boundary_mask
from proofs_check.report import file_digest as _file_digest
from softpolar.cluster import check_scheduler, local_cluster, probe_scheduler

FORMAT = "softpolar-atlas/2"  # tokens counted from 0 in area labels (format 1: from 1)
MARKER = "atlas-run.json"
OWN_FILES = (MARKER, "journal.jsonl", "atlas.json", "atlas.png", "float64.npy")

PRESETS = {
    "conflict3": {"name": "conflict3", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"],
                  "x": ["-1", "1"], "y": ["-1", "1"]},
    "uniform3": {"name": "uniform3", "n": 3, "b": "1", "u0": ["x", "y", "0"], "a0": ["0", "0", "0"],
                 "x": ["-1", "1"], "y": ["-1", "1"]},
    "conflict4": {"name": "conflict4", "n": 4, "b": "1", "u0": ["x", "0", "-1", "-1/2"],
                  "a0": ["0", "y", "-1", "-1/2"], "x": ["-1", "1"], "y": ["-1", "1"]},
}


#: keys of a slice spec (any other key is refused: a misspelt "b" must not silently default to 1)
SPEC_KEYS = ("name", "n", "b", "u0", "a0", "x", "y")
#: stated bounds of a slice: tokens (the box engine's cost grows with n; the map has 6 colours), the
#: size of b, of the x / y ranges and of every constant in u0, a0 (each read exactly, its decimal
#: exponent checked before it is expanded: ``"1e999999999"`` is refused, never built).
MAX_N = 6
MAX_COORD = 10**6
MAX_SPEC_EXPONENT = 30


def _number(argument, value):
    q = parse_rational(argument, value, max_exponent=MAX_SPEC_EXPONENT, max_chars=200,
                       expected=f"an exact number (ASCII decimal or p/q) within +-{MAX_COORD}")
    if abs(q) > MAX_COORD:
        raise InvalidArgument(f"{argument}={str(value)[:40]!r} is not allowed; expected a number within "
                              f"+-{MAX_COORD} (the stated size of a slice)")
    return q


def _affine(text, argument):
    """``(c, cx, cy)`` (Fractions) of ``c + cx x + cy y`` from a string; anything else is an ``InvalidArgument``.

    Parsed with :mod:`ast` and evaluated node by node (numbers, ``x``, ``y``, ``+ - * /``, parentheses):
    a spec file is data, never code (``sympify`` would ``eval`` it). Every number is read exactly from
    its digits (``0.123456789012345678901`` is that decimal, not the float64 nearest to it).
    """
    def bad(why):
        return InvalidArgument(f"{argument}={str(text)[:80]!r} is not allowed ({why}); expected an affine "
                               "expression in x, y with rational coefficients, e.g. '1/2 - x'")

    def constant(node):
        """The exact value of a number in the text: an int is exact; a float literal is read from its own
        digits (``Fraction(str(float))`` would prove things about the float64 nearest to it), its decimal
        exponent bounded as for ``b`` (``1e-400`` is refused, never read as 0)."""
        if type(node.value) is int:
            q = Fraction(node.value)
        else:
            digits = ast.get_source_segment(str(text), node) or ""
            try:
                q = parse_rational(argument, digits, max_exponent=MAX_SPEC_EXPONENT, max_chars=200, rational=False)
            except InvalidArgument as exc:
                why = str(exc).partition("(")[2].partition(")")[0]
                raise bad(f"the constant {digits[:40]}: {why}; constants are plain decimals with decimal "
                          f"exponent within +-{MAX_SPEC_EXPONENT}, read exactly") from None
        if not abs(q) <= MAX_COORD:
            raise bad(f"the constant {str(node.value)[:20]} is beyond +-{MAX_COORD}")
        return q

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return (constant(node), Fraction(0), Fraction(0))
        if isinstance(node, ast.Name) and node.id in ("x", "y"):
            return (Fraction(0), Fraction(node.id == "x"), Fraction(node.id == "y"))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return tuple(-c for c in v) if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            lhs, rhs = ev(node.left), ev(node.right)
            if isinstance(node.op, (ast.Add, ast.Sub)):
                sign = 1 if isinstance(node.op, ast.Add) else -1
                return tuple(a + sign * b for a, b in zip(lhs, rhs))
            if isinstance(node.op, ast.Mult):
                if not (lhs[1] or lhs[2]):
                    return tuple(lhs[0] * b for b in rhs)
                if not (rhs[1] or rhs[2]):
                    return tuple(a * rhs[0] for a in lhs)
                raise bad("not affine: a product of two variables")
            if isinstance(node.op, ast.Div):
                if rhs[1] or rhs[2] or rhs[0] == 0:
                    raise bad("division by a variable or by zero")
                return tuple(a / rhs[0] for a in lhs)
        raise bad(f"unsupported element {type(node).__name__}")

    if not isinstance(text, (str, int)) or isinstance(text, bool) or len(str(text)) > 200:
        raise bad("not a string of at most 200 characters")
    if isinstance(text, int) and abs(text) > MAX_COORD:
        raise bad(f"beyond +-{MAX_COORD}")
    if not str(text).isascii():  # Python reads fullwidth digits and NFKC-folds identifiers ('ｘ' is x)
        raise bad("non-ASCII characters")
    try:
        return ev(ast.parse(str(text), mode="eval").body)
    except InvalidArgument:
        raise
    except (SyntaxError, ValueError, RecursionError, OverflowError) as exc:
        raise bad(type(exc).__name__) from None


@dataclass(frozen=True)
class Slice:
    """A 2-D affine slice of initializations (see the module doc); built by :func:`load_slice`."""

    name: str
    n: int
    b: Fraction
    u0: tuple
    a0: tuple
    x: tuple
    y: tuple
    spec: dict

    def reduced(self, x: Fraction, y: Fraction) -> list:
        """Reduced initial state $(u_k-u_n, a_k-a_n)_{k<n}$ at ``(x, y)`` (exact)."""
        u = [c + cx * x + cy * y for c, cx, cy in self.u0]
        a = [c + cx * x + cy * y for c, cx, cy in self.a0]
        return [u[k] - u[-1] for k in range(self.n - 1)] + [a[k] - a[-1] for k in range(self.n - 1)]

    def directions(self, rx: Fraction, ry: Fraction) -> list:
        """Half-width vectors of a box in reduced coordinates."""
        du = [r[1] - self.u0[-1][1] for r in self.u0[:-1]] + [r[1] - self.a0[-1][1] for r in self.a0[:-1]]
        dv = [r[2] - self.u0[-1][2] for r in self.u0[:-1]] + [r[2] - self.a0[-1][2] for r in self.a0[:-1]]
        return [[rx * c for c in du], [ry * c for c in dv]]

    @property
    def area(self) -> Fraction:
        return (self.x[1] - self.x[0]) * (self.y[1] - self.y[0])


def load_slice(spec) -> Slice:
    """A :class:`Slice` from a preset name, a JSON file path or a dict (keys as in :data:`PRESETS`)."""
    if isinstance(spec, str) and spec in PRESETS:
        spec = PRESETS[spec]
    elif isinstance(spec, (str, Path)):
        try:
            spec = read_json(spec, "spec", expected="a JSON slice spec")
        except InvalidArgument as exc:
            raise InvalidArgument(f"spec={str(spec)!r} is neither a preset {sorted(PRESETS)} nor a "
                                  f"readable JSON file ({exc})") from None
    if not isinstance(spec, dict):
        raise InvalidArgument(f"spec={str(spec)[:80]!r} is not allowed; expected a preset name, a JSON file or a dict")

    check_keys("spec", spec, SPEC_KEYS, required=("n", "u0", "a0", "x", "y"))
    n = spec["n"]
    if not isinstance(n, int) or isinstance(n, bool) or not 2 <= n <= MAX_N:
        raise InvalidArgument(f"n={str(n)[:40]} is not allowed; expected an integer in 2..{MAX_N}")
    for key in ("u0", "a0"):
        if not isinstance(spec[key], list) or len(spec[key]) != n:
            raise InvalidArgument(f"{key}={str(spec[key])[:80]!r} is not allowed; expected a list of {n} expressions")
    name = spec.get("name", "custom")
    if not isinstance(name, str) or not name.isascii() or not name.isprintable() or not 0 < len(name) <= 64 \
            or "/" in name or name.startswith("."):
        raise InvalidArgument(f"name={str(name)[:80]!r} is not allowed; expected a printable ASCII name of at "
                              "most 64 characters, without '/'")
    u0 = tuple(_affine(t, f"u0[{k}]") for k, t in enumerate(spec["u0"]))
    a0 = tuple(_affine(t, f"a0[{k}]") for k, t in enumerate(spec["a0"]))
    b = _number("b", spec.get("b", "1"))
    for key in ("x", "y"):
        if not isinstance(spec[key], list) or len(spec[key]) != 2:
            raise InvalidArgument(f"{key}={str(spec[key])[:80]!r} is not allowed; expected [lo, hi] with lo < hi")
    xr = tuple(_number(f"x[{k}]", v) for k, v in enumerate(spec["x"]))
    yr = tuple(_number(f"y[{k}]", v) for k, v in enumerate(spec["y"]))
    if b <= 0:
        raise InvalidArgument(f"b={b} is not allowed; expected > 0")
    for key, r in (("x", xr), ("y", yr)):
        if not r[0] < r[1]:
            raise InvalidArgument(f"{key}={spec[key]!r} is not allowed; expected [lo, hi] with lo < hi")
    if sum(1 for c in u0 + a0 if c[1]) == 0 or sum(1 for c in u0 + a0 if c[2]) == 0:
        raise InvalidArgument("the spec does not depend on both x and y; expected a 2-D slice")
    clean = {"name": name, "n": n, "b": str(b), "u0": [str(t) for t in spec["u0"]],
             "a0": [str(t) for t in spec["a0"]], "x": [str(v) for v in xr], "y": [str(v) for v in yr]}
    return Slice(clean["name"], n, b, u0, a0, xr, yr, clean)


# ---------------------------------------------------------------------------------------
# boxes
# ---------------------------------------------------------------------------------------
def box_bounds(sl: Slice, key) -> tuple:
    """``(x_lo, x_hi, y_lo, y_hi)`` (exact) of the box ``key = (level, i, j)``."""
    level, i, j = key
    wx = (sl.x[1] - sl.x[0]) / 2 ** level
    wy = (sl.y[1] - sl.y[0]) / 2 ** level
    return sl.x[0] + i * wx, sl.x[0] + (i + 1) * wx, sl.y[0] + j * wy, sl.y[0] + (j + 1) * wy


def certify_box(spec: dict, key, engine: dict, hints=None) -> dict:
    """Run the box engine on one box (a dask task: plain data in, plain data out).

    The parent scheme (``engine["scheme"] == "parent"``): ``hints`` is the ``trace`` of the parent's
    record (``None``: no reuse), and a box that is not certified records its own ``trace`` for its
    children (journal only: :func:`_certificate` leaves it out).
    """
    sl = load_slice(spec)
    x0, x1, y0, y1 = box_bounds(sl, tuple(key))
    center = sl.reduced((x0 + x1) / 2, (y0 + y1) / 2)
    dirs = sl.directions((x1 - x0) / 2, (y1 - y0) / 2)
    parent = engine.get("scheme") == "parent"
    res = enclose_box(center, dirs, sl.b, **engine, **({"hints": hints} if parent else {}))
    rec = {"key": list(key), "status": res.status, "seconds": round(res.seconds, 4), "steps": len(res.steps)}
    if res.status == "certified":
        rec.update(winner=res.winner, tau=str(res.tau), h=[str(h) for h in res.steps],
                   a_lower=[None if v is None else str(v) for v in res.a_lower],
                   u_lower=[None if v is None else str(v) for v in res.u_lower],
                   max_error=res.max_error)
    else:
        rec["reason"] = res.reason
        if parent:
            rec["trace"] = encode_trace(res.trace)
    return rec


def certify_boxes(spec: dict, keys, engine: dict, hints=None) -> list:
    """:func:`certify_box` on each of ``keys`` in turn (one dask task for a few boxes: fewer tasks for the
    client and the scheduler to handle; each record depends on its box and its ``hints`` alone)."""
    hints = hints if hints is not None else [None] * len(keys)
    return [certify_box(spec, key, engine, h) for key, h in zip(keys, hints)]


def _screen(sl: Slice, keys, *, samples: int = 4):
    """Float64 winners on a ``samples x samples`` grid of each box: a common winner or ``None``."""
    pts, owner = [], []
    for k, key in enumerate(keys):
        x0, x1, y0, y1 = (float(v) for v in box_bounds(sl, key))
        for s in np.linspace(0, 1, samples):
            for t in np.linspace(0, 1, samples):
                pts.append([float(v) for v in sl.reduced(Fraction(x0 + s * (x1 - x0)), Fraction(y0 + t * (y1 - y0)))])
                owner.append(k)
    if not pts:
        return []
    # a short horizon: a sample not settled by tau = 30 (a near-tie) just marks its box as mixed
    W = winners(np.array(pts), float(sl.b), tau_max=30.0)
    owner = np.array(owner)
    out = []
    for k in range(len(keys)):
        w = np.unique(W[owner == k])
        out.append(int(w[0]) if len(w) == 1 and w[0] >= 0 else None)
    return out


#: the outputs whose content hashes the marker records (the journal is append-only and checked line by line)
OUTPUTS = ("atlas.json", "atlas.png", "float64.npy")


def _marker_files(out: Path, old: dict) -> dict:
    """The digests the marker accepts for each output: ``{name: {digest, ...}}``.

    ``files`` holds the digest of each output as written; ``replacing`` (present only while new outputs
    are being put in place) the digest of the one it replaces, so a run killed between the two renames
    leaves a folder that is still recognised. A marker without them (written before content hashes)
    vouches for no output.
    """
    accepted = {}
    for field in ("files", "replacing"):
        part = old.get(field, {})
        if not isinstance(part, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in part.items()):
            raise InvalidArgument(f"out={str(out)!r} holds an {MARKER} whose {field!r} is not a table of content "
                                  "hashes (not written by this softpolar); expected a new folder or an atlas "
                                  "folder as softpolar wrote it")
        for k, v in part.items():
            accepted.setdefault(k, set()).add(v)
    return accepted


def _check_outputs(out: Path, old: dict) -> dict:
    """Refuse the folder when an output is there that softpolar did not write, or changed since it did.

    The same rule as ``verify``'s report folder (:func:`proofs_check.report._report._folder_problem`): a file
    is replaced only while its content hash is the one the marker recorded when softpolar wrote it.
    Returns the digests recorded now (``{name: digest}``) of the outputs present.
    """
    accepted = _marker_files(out, old)
    present = {}
    for name in OUTPUTS:
        path = out / name
        if not (path.exists() or path.is_symlink()):
            continue
        digest = _file_digest(path)
        if digest is None or digest not in accepted.get(name, ()):
            why = ("was not written by softpolar (the folder's marker records no content hash for it)"
                   if name not in accepted else "was changed since softpolar wrote it")
            raise InvalidArgument(f"out={str(out)!r} holds {name!r}, which {why}; expected an atlas folder "
                                  "whose files are as softpolar wrote them (move that file away, or choose "
                                  "another folder)")
        present[name] = digest
    return present


def _write_marker(out: Path, sl: Slice, engine: dict, files: dict, replacing: dict | None = None) -> None:
    body = {"format": FORMAT, "spec": sl.spec, "engine": engine, "files": dict(sorted(files.items()))}
    if replacing:
        body["replacing"] = dict(sorted(replacing.items()))
    body["note"] = ("written by softpolar atlas; an output here is replaced only while its content hash is "
                    "the one recorded in 'files'")
    _io.write_json_atomic(out / MARKER, body, indent=1)


def _read_marker(out: Path) -> dict:
    old = _io.read_json(out / MARKER, "out", expected="an atlas run marker", max_bytes=2**20)
    if not isinstance(old, dict):
        raise InvalidArgument(f"out={str(out)!r} holds an {MARKER} that is not a JSON object; expected a new "
                              "folder or an atlas folder as softpolar wrote it")
    return old


def _prepare_out(out: Path, sl: Slice, engine: dict) -> None:
    """Refuse folders (and files) softpolar did not make; write the marker of a new run.

    A folder with the marker is resumed only for the same slice and engine settings, when it holds
    nothing but softpolar's names and each output (:data:`OUTPUTS`) still has the content hash the
    marker recorded (:func:`_check_outputs`).
    """
    marker = out / MARKER
    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"out={str(out)!r} exists and is not a folder; expected a new or atlas folder")
    if marker.exists() or marker.is_symlink():
        old = _read_marker(out)
        if old.get("spec") != sl.spec or old.get("engine") != engine:
            raise InvalidArgument(f"out={str(out)!r} holds an atlas of another slice or engine setting; "
                                  "expected a new folder (or the same settings to resume)")
        foreign = sorted(p.name for p in out.iterdir() if p.name not in OWN_FILES and not p.name.startswith("."))
        if foreign:
            raise InvalidArgument(f"out={str(out)!r} holds files softpolar atlas did not write "
                                  f"({', '.join(map(repr, foreign[:5]))}); expected an atlas folder with nothing added")
        _check_outputs(out, old)
        return
    if out.exists() and any(out.iterdir()):
        raise InvalidArgument(f"out={str(out)!r} is not empty and was not made by softpolar atlas; "
                              "expected a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    _write_marker(out, sl, engine, {})


def _write_outputs(out: Path, sl: Slice, engine: dict, contents: dict) -> None:
    """Put the outputs ``{name: bytes}`` in place, each atomically, the marker recording their hashes first.

    The folder is checked again (a file edited while the run computed is never replaced); the marker
    then accepts the old and the new hash of each output until all are renamed into place.
    """
    old = _check_outputs(out, _read_marker(out))
    new = {name: _io.content_digest(data) for name, data in contents.items()}
    files = {**old, **new}
    _write_marker(out, sl, engine, files, {k: v for k, v in old.items() if k in new and new[k] != v})
    for name, data in contents.items():
        _io.write_bytes_atomic(out / name, data)
    _write_marker(out, sl, engine, files)


def record_digest(spec: dict, engine: dict, rec: dict) -> str:
    """The digest binding a journal record to its slice and engine settings (canonical JSON bytes)."""
    body = {k: v for k, v in rec.items() if k != "digest"}
    return content_digest(canonical_json({"spec": spec, "engine": engine, "record": body}))


def read_journal(path: Path, spec: dict, engine: dict) -> tuple[dict, int]:
    """Journal records that pass their digest, and how many lines were dropped (recomputed instead).

    A record counts only if it is strict JSON whose ``digest`` matches its slice, engine settings
    and content: an accidental edit, a torn last line of an interrupted run, or a record of another
    run is recomputed. (The digest is no signature: whoever recomputes it can forge a record. The
    run's own float64 map is compared with every certified box, and ``softpolar atlas --check``
    re-proves every box independently.)
    """
    done, dropped = {}, 0
    if path.exists() or path.is_symlink():
        raw = read_bytes(path, "out", expected="an atlas journal", max_bytes=2**30)
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                rec = parse_json(line, "journal line")
                ok = isinstance(rec, dict) and rec.get("digest") == record_digest(spec, engine, rec)
                key = tuple(rec["key"]) if ok else None
            except (InvalidArgument, KeyError, TypeError, ValueError, RecursionError):
                ok = False   # ValueError: a NaN or an infinity the canonical JSON of the digest refuses
            if ok:
                done[key] = rec
            else:
                dropped += 1
    return done, dropped


#: the fast scheme at order 6 (``numerics.validated.box.SCHEMES``): the default engine before the adaptive one
FAST_ENGINE = {"method": "lohner", "order": 6, "prec": 64, "tau_max": 60, "max_error": 0.05,
               "max_steps": 600, "scheme": "fast"}
#: the adaptive scheme (per-step Taylor order between 4 and ``order``, cheap region refusal first): the
#: default since it measured 15 % less CPU than the fast scheme on conflict3 at 1/64 (inline, alternated
#: pairs) for a slightly larger certified fraction (96.30 % vs 96.28 %); a folder made with another engine
#: setting is refused on resume (:func:`_prepare_out`)
ADAPTIVE_ENGINE = {**FAST_ENGINE, "scheme": "adaptive"}
#: the adaptive scheme started from the parent box's steps (``numerics.validated.box``, scheme "parent")
PARENT_ENGINE = {**FAST_ENGINE, "scheme": "parent"}
DEFAULT_ENGINE = ADAPTIVE_ENGINE
#: the engine before the fast scheme, at its order 12: the baseline of benchmark row 14
BASELINE_ENGINE = {**FAST_ENGINE, "order": 12, "scheme": "baseline"}


def run_atlas(spec, out, *, min_width="1/128", start_width="1/4", scheduler: str = "local",
              workers: int | None = None, engine: dict | None = None, map_size: int = 1024,
              draw: bool = True, progress: bool = True, stream=None) -> dict:
    """Build (or resume) the atlas of ``spec`` in folder ``out``; return the certificate dict.

    ``min_width`` / ``start_width``: box widths in units of x (exact strings such as ``'1/128'``;
    the x-range divided by each must be a power of 2). See the module doc for the rest.
    """
    sl = load_slice(spec)
    engine = {**DEFAULT_ENGINE, **(engine or {})}
    out = Path(out)
    lmax, l0 = _level(sl, min_width, "min_width"), _level(sl, start_width, "start_width")
    if l0 > lmax:
        raise InvalidArgument(f"start_width={start_width!r} is smaller than min_width={min_width!r}")

    probe_scheduler(scheduler)  # syntax (file:///etc/passwd is refused) and a 3 s reachability probe

    with folder_lock(out):  # a second run on this folder is refused, never repeats or mixes the work
        _prepare_out(out, sl, engine)
        return _run_locked(sl, out, engine, lmax, l0, scheduler, workers, map_size, draw, progress, stream)


def _run_locked(sl, out, engine, lmax, l0, scheduler, workers, map_size, draw, progress, stream) -> dict:

    journal = out / "journal.jsonl"
    done, dropped = read_journal(journal, sl.spec, engine)

    bar = Progress(sl.name, enabled=progress, stream=stream)
    if dropped:
        bar.message(f"[{sl.name}] {dropped} journal record(s) failed their digest check and are recomputed")
    started = time.perf_counter()
    client, cluster = _client(scheduler, workers)
    boxes = []  # final leaves: (key, record or None, reason)
    stats = {"tried": 0, "certified": 0}

    def record(rec):  # a box the engine ran on: journal it (flushed) and count it
        rec["digest"] = record_digest(sl.spec, engine, rec)
        jf.write(json.dumps(rec) + "\n")
        jf.flush()
        stats["tried"] += 1
        stats["certified"] += rec["status"] == "certified"
        bar.status(f"level {rec['key'][0]}: {stats['certified']}/{stats['tried']} boxes certified")

    hint_of = {}  # the parent scheme: a box to do -> its parent's trace (a resumed parent's from the journal)

    def settle(key, rec):  # a box's outcome: a leaf, or its four children to do
        if rec["status"] == "certified":
            boxes.append(rec)
            return []
        if key[0] < lmax:
            L, i, j = key
            kids = [(L + 1, 2 * i + di, 2 * j + dj) for di in (0, 1) for dj in (0, 1)]
            if rec.get("trace"):
                hint_of.update((k, rec["trace"]) for k in kids)
            return kids
        boxes.append({**rec, "status": "uncertified"})
        return []

    try:
        first = [(l0, i, j) for i in range(2 ** l0) for j in range(2 ** l0)]
        # on a cluster the float64 map runs on the workers too, behind the boxes (low priority)
        parts = None if client is None else [
            client.submit(float_map_rows, sl.spec, map_size, r0, min(map_size, r0 + MAP_ROWS), priority=-10,
                          pure=False) for r0 in range(0, map_size, MAP_ROWS)]
        with open(journal, "a", encoding="utf-8") as jf:
            if client is None:
                _levels(sl, engine, first, done, record, settle, bar, lmax, hint_of)
            else:
                _pipelined(client, sl, engine, first, done, record, settle, hint_of)
        if parts is not None:
            fmap = np.concatenate(client.gather(parts), axis=0)
    finally:
        bar.close()
        _close(client, cluster)
    cert = _certificate(sl, boxes, engine, lmax, time.perf_counter() - started)
    if parts is None:
        fmap = float_map(sl, map_size)
    cert["float64"] = compare_float(sl, cert, fmap)
    npy = io.BytesIO()
    np.save(npy, fmap)
    contents = {"float64.npy": npy.getvalue(), "atlas.json": (json.dumps(cert, indent=1) + "\n").encode("utf-8")}
    if draw:
        contents["atlas.png"] = atlas_png(sl, cert, fmap)
    _write_outputs(out, sl, engine, contents)
    return cert


def _screened(key):
    return {"key": list(key), "status": "screened", "reason": "float64 samples disagree"}


def _levels(sl, engine, pending, done, record, settle, bar, lmax, hint_of):
    """Serial quadtree, level by level (``scheduler="inline"``): screen a level, certify its survivors.
    ``hint_of``: a child's parent trace (the parent scheme), filled by ``settle``."""
    while pending:
        nxt = []
        for key, w in zip(pending, _screen(sl, pending)):
            if w is None:
                rec = _screened(key)
            elif key in done:
                rec = done[key]
            else:
                rec = certify_box(sl.spec, key, engine, hint_of.pop(key, None))
                record(rec)
            nxt += settle(key, rec)
        pending = nxt
        bar.message(f"[{sl.name}] level {pending[0][0] if pending else lmax}: {len(pending)} boxes to do")


#: boxes per float64 screening task on a cluster (16 samples each, integrated as one numpy batch)
SCREEN_CHUNK = 64
#: boxes per certification task on a cluster: a box at 1/128 is tens of ms of worker CPU, about what the
#: client and the scheduler spend on one task, so single-box tasks left the second core to them
CERT_CHUNK = 8


def screen_task(spec: dict, keys) -> list:
    """The float64 screen of a list of boxes (a dask task: plain data in, plain data out)."""
    return _screen(load_slice(spec), [tuple(k) for k in keys])


def _pipelined(client, sl, engine, first, done, record, settle, hint_of):
    """The quadtree on a dask cluster, with no level barrier and nothing serial on the client.

    Screening runs on the workers, :data:`SCREEN_CHUNK` boxes per task; the survivors of a chunk
    are submitted for certification (:data:`CERT_CHUNK` boxes per task) as soon as it returns, and
    the children of a box that fails are queued for screening at once (a chunk is sent when it is
    full, or when nothing else is in flight). Each box's screen and enclosure depend on the box alone
    (the float64 integrator treats the rows of a batch independently), so the leaves are those of
    :func:`_levels`, bit for bit. Results arrive with their futures (``with_results``): no round
    trip per task.
    """
    from distributed import as_completed

    queue, kinds, inflight = list(first), {}, as_completed(with_results=True)

    def send_screens(force):
        while queue and (len(queue) >= SCREEN_CHUNK or force):
            chunk, queue[:] = queue[:SCREEN_CHUNK], queue[SCREEN_CHUNK:]
            fut = client.submit(screen_task, sl.spec, [list(k) for k in chunk], pure=False)
            kinds[fut.key] = ("screen", chunk)
            inflight.add(fut)

    send_screens(True)
    for fut, result in inflight:
        kind, payload = kinds.pop(fut.key)
        if kind == "screen":
            todo = []
            for key, w in zip(payload, result):
                if w is None:
                    queue.extend(settle(key, _screened(key)))
                elif key in done:
                    queue.extend(settle(key, done[key]))
                else:
                    todo.append(key)
            for a in range(0, len(todo), CERT_CHUNK):
                chunk = todo[a:a + CERT_CHUNK]
                hints = [hint_of.pop(k, None) for k in chunk]
                task = client.submit(certify_boxes, sl.spec, [list(k) for k in chunk], engine,
                                     hints if any(h is not None for h in hints) else None, pure=False)
                kinds[task.key] = ("boxes", chunk)
                inflight.add(task)
        else:
            for key, rec in zip(payload, result):
                record(rec)
                queue.extend(settle(key, rec))
        send_screens(inflight.count() == 0)


def _level(sl: Slice, width, argument) -> int:
    """Quadtree level whose boxes have x-width ``width`` (absolute, in units of x)."""
    try:  # exponent bounded before expanding: '1e999999999' is refused, never built
        w = parse_rational(argument, width, max_exponent=MAX_SPEC_EXPONENT, max_chars=200)
    except InvalidArgument:
        w = Fraction(-1)
    ratio = (sl.x[1] - sl.x[0]) / w if w > 0 else Fraction(0)
    level = ratio.numerator.bit_length() - 1 if ratio.denominator == 1 and ratio >= 1 else -1
    if level < 0 or ratio != 1 << level or level > 14:
        raise InvalidArgument(f"{argument}={width!r} is not allowed; expected a width w with "
                              f"(x range {sl.x[1] - sl.x[0]}) / w = 2^k, 0 <= k <= 14")
    return level


def _client(scheduler, workers):
    if scheduler == "inline":
        return None, None
    from distributed import Client

    if scheduler == "local":
        n = workers or max(1, len(os.sched_getaffinity(0)))
        cluster = local_cluster(n, silence_logs=50)  # no heartbeat noise at shutdown
        return Client(cluster), cluster

    check_scheduler(scheduler)
    try:
        return Client(scheduler, timeout=10), None
    except (OSError, TimeoutError, ValueError, TypeError, MemoryError) as exc:
        # something that answers but is not a dask scheduler (an HTTP server, ...) makes dask's
        # handshake fail in odd ways (a huge bogus frame length reads as MemoryError): say what it is
        raise InvalidArgument(f"scheduler={scheduler!r} answered, but not as a dask scheduler "
                              f"({type(exc).__name__}: {str(exc)[:120]}); expected the address of a running "
                              "dask scheduler") from None


def _close(client, cluster):
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


def _certificate(sl: Slice, boxes, engine, lmax, seconds) -> dict:
    area = {}
    out_boxes = []
    for rec in sorted(boxes, key=lambda r: tuple(r["key"])):
        x0, x1, y0, y1 = box_bounds(sl, tuple(rec["key"]))
        a = (x1 - x0) * (y1 - y0)
        label = f"token {rec['winner']}" if rec["status"] == "certified" else "uncertified"
        area[label] = area.get(label, Fraction(0)) + a
        # a parent-scheme trace is the engine's hint for the children, kept in the journal only
        out_boxes.append({**{k: v for k, v in rec.items() if k != "trace"}, "x": [str(x0), str(x1)],
                          "y": [str(y0), str(y1)]})
    certified = sum((v for k, v in area.items() if k != "uncertified"), Fraction(0))
    return {"format": FORMAT, "spec": sl.spec, "engine": engine, "min_level": lmax,
            "boxes": out_boxes, "area": {k: str(v) for k, v in sorted(area.items())},
            "fraction_certified": float(certified / sl.area), "seconds": round(seconds, 2),
            "provenance": "D"}


# ---------------------------------------------------------------------------------------
# float64 map, comparison, rule, picture
# ---------------------------------------------------------------------------------------
def float_map(sl: Slice, size: int, rows=None):
    """Float64 winners at the ``size x size`` pixel centres (row = y index, column = x index).

    ``rows=(r0, r1)``: only rows ``r0..r1-1`` (the same numbers: each pixel is integrated on its own).
    """
    r0, r1 = rows if rows is not None else (0, size)
    xs = float(sl.x[0]) + (np.arange(size) + 0.5) * float(sl.x[1] - sl.x[0]) / size
    ys = float(sl.y[0]) + (np.arange(size) + 0.5) * float(sl.y[1] - sl.y[0]) / size
    X, Y = np.meshgrid(xs, ys[r0:r1])
    Y0 = _reduced_np(sl, X.ravel(), Y.ravel())
    return winners(Y0, float(sl.b)).reshape(r1 - r0, size).astype(np.int8)


#: float64 map rows per task on a cluster
MAP_ROWS = 64


def float_map_rows(spec: dict, size: int, r0: int, r1: int):
    """Rows ``r0..r1-1`` of :func:`float_map` (a dask task)."""
    return float_map(load_slice(spec), size, (r0, r1))


def _reduced_np(sl, X, Y):
    u = np.stack([float(c) + float(cx) * X + float(cy) * Y for c, cx, cy in sl.u0], axis=1)
    a = np.stack([float(c) + float(cx) * X + float(cy) * Y for c, cx, cy in sl.a0], axis=1)
    return np.concatenate([u[:, :-1] - u[:, -1:], a[:, :-1] - a[:, -1:]], axis=1)


def _pixel_ranges(sl, box, size):
    x0, x1 = (Fraction(v) for v in box["x"])
    y0, y1 = (Fraction(v) for v in box["y"])
    sx, sy = (sl.x[1] - sl.x[0]) / size, (sl.y[1] - sl.y[0]) / size
    # pixel c has centre x[0] + (c + 1/2) sx: those inside the closed box
    cx0 = max(0, math.ceil((x0 - sl.x[0]) / sx - Fraction(1, 2)))
    cx1 = min(size - 1, math.floor((x1 - sl.x[0]) / sx - Fraction(1, 2)))
    cy0 = max(0, math.ceil((y0 - sl.y[0]) / sy - Fraction(1, 2)))
    cy1 = min(size - 1, math.floor((y1 - sl.y[0]) / sy - Fraction(1, 2)))
    return cx0, cx1, cy0, cy1


def compare_float(sl: Slice, cert: dict, fmap, *, boxes=None) -> dict:
    """Pixels of the float64 map inside certified boxes whose float winner differs (or is undecided)."""
    size = fmap.shape[0]
    disagree, undecided, pixels, examples = 0, 0, 0, []
    for box in boxes if boxes is not None else cert["boxes"]:
        if box["status"] != "certified":
            continue
        cx0, cx1, cy0, cy1 = _pixel_ranges(sl, box, size)
        if cx1 < cx0 or cy1 < cy0:
            continue
        patch = fmap[cy0:cy1 + 1, cx0:cx1 + 1]
        pixels += patch.size
        undecided += int((patch < 0).sum())
        bad = int(((patch >= 0) & (patch != box["winner"])).sum())
        if bad and len(examples) < 5:
            examples.append({"box": box["key"], "winner": box["winner"], "float64": np.unique(patch).tolist()})
        disagree += bad
    W = fmap[fmap >= 0]
    rule = fit_rule(sl, fmap)
    return {"size": size, "pixels_in_certified": pixels, "disagreements": disagree, "undecided": undecided,
            "examples": examples, "float_area": {f"token {k}": float((W == k).mean()) for k in range(sl.n)},
            "rule": rule}


def fit_rule(sl: Slice, fmap, kappas=None) -> dict:
    r"""Fit $\kappa$ in the rule "winner = argmax $u_i(0)+\kappa a_i(0)$" to the float64 map [D]."""
    size = fmap.shape[0]
    xs = float(sl.x[0]) + (np.arange(size) + 0.5) * float(sl.x[1] - sl.x[0]) / size
    ys = float(sl.y[0]) + (np.arange(size) + 0.5) * float(sl.y[1] - sl.y[0]) / size
    X, Y = np.meshgrid(xs, ys)
    X, Y, W = X.ravel(), Y.ravel(), fmap.ravel()
    keep = W >= 0
    X, Y, W = X[keep], Y[keep], W[keep]
    u = np.stack([float(c) + float(cx) * X + float(cy) * Y for c, cx, cy in sl.u0], axis=1)
    a = np.stack([float(c) + float(cx) * X + float(cy) * Y for c, cx, cy in sl.a0], axis=1)
    kappas = np.linspace(0, 4, 401) if kappas is None else np.asarray(kappas)
    fails = np.array([(np.argmax(u + k * a, axis=1) != W).mean() for k in kappas])
    best = int(np.argmin(fails))
    return {"kappa": float(kappas[best]), "failure_rate": float(fails[best]),
            "failure_rate_kappa0": float(fails[0]), "pixels": int(len(W)),
            "note": "our observation on the float64 map [D], not the paper's statement"}


def draw_atlas(sl: Slice, cert: dict, fmap, path) -> None:
    """Certified map (one colour per winner, grey uncertified, float64 boundary in black) beside the float64 map,
    written atomically to ``path`` (:func:`atlas_png`)."""
    data = atlas_png(sl, cert, fmap)
    _io.write_bytes_atomic(path, data)


def atlas_png(sl: Slice, cert: dict, fmap) -> bytes:
    """The PNG bytes of :func:`draw_atlas`'s picture (the run hashes them before they are written)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    size = fmap.shape[0]
    img = np.full((size, size), -1, dtype=np.int8)
    for box in cert["boxes"]:
        cx0, cx1, cy0, cy1 = _pixel_ranges(sl, box, size)
        if box["status"] == "certified" and cx1 >= cx0 and cy1 >= cy0:
            img[cy0:cy1 + 1, cx0:cx1 + 1] = box["winner"]
    colours = ["#bbbbbb", "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"][: sl.n + 1]
    cmap = ListedColormap(colours)
    ext = [float(sl.x[0]), float(sl.x[1]), float(sl.y[0]), float(sl.y[1])]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8))
    axes[0].imshow(img + 1, origin="lower", extent=ext, cmap=cmap, vmin=0, vmax=sl.n, interpolation="nearest")
    edge = np.ma.masked_where(~boundary_mask(fmap), np.ones_like(fmap))
    axes[0].imshow(edge, origin="lower", extent=ext, cmap=ListedColormap(["black"]), interpolation="nearest")
    axes[0].set_title(f"{sl.name}: certified {100 * cert['fraction_certified']:.1f}% (black: float64 boundary)",
                      fontsize=9)
    axes[1].imshow(fmap.astype(int) + 1, origin="lower", extent=ext, cmap=cmap, vmin=0, vmax=sl.n,
                   interpolation="nearest")
    axes[1].set_title(f"float64 map {size}x{size} (grey: undecided)", fontsize=9)
    for ax in axes:
        ax.set_xlabel("x")
        ax.set_ylabel("y")
    handles = [Patch(color=colours[k + 1], label=f"token {k}") for k in range(sl.n)]
    handles.append(Patch(color=colours[0], label="uncertified"))
    fig.legend(handles=handles, loc="lower center", ncol=sl.n + 1, fontsize=8)
    fig.suptitle(f"u0={sl.spec['u0']}  a0={sl.spec['a0']}  b={sl.spec['b']}  [D]", fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return buf.getvalue()


def width_scan(spec, points, widths, *, methods=("lohner", "naive"), engine: dict | None = None) -> list[dict]:
    """Benchmark: one box of each width centred at each point, for each method (not a timed test).

    Returns rows ``{point, width, method, status, winner, tau, steps, seconds, error}``: how the time
    per box grows with its width, and the width at which each method stops certifying.
    """
    sl = load_slice(spec)
    rows = []
    for x, y in points:
        x, y = Fraction(str(x)), Fraction(str(y))
        for w in widths:
            w = Fraction(str(w))
            for method in methods:
                res = enclose_box(sl.reduced(x, y), sl.directions(w / 2, w / 2), sl.b,
                                  **{**DEFAULT_ENGINE, **(engine or {}), "method": method})
                rows.append({"point": [str(x), str(y)], "width": str(w), "method": method, "status": res.status,
                             "winner": res.winner, "tau": float(res.tau), "steps": len(res.steps),
                             "seconds": round(res.seconds, 3), "error": res.max_error, "reason": res.reason})
    return rows
