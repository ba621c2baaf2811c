r"""The verification report: ``report.md``, ``report.json`` and figures (PNG + PDF), written atomically.

``report.md`` leads with the summary (the result, the failures, one table row per claim); each
claim's section shows its verdicts and figures and folds the rest (evidence, assumptions, numbers,
the negative control) into ``<details>``; a long block of numbers stays in ``report.json`` only.

:func:`write_report` renders everything into a fresh temporary directory next
to the target (same filesystem), then swaps it into place with renames. An
exception or an interrupt during rendering removes the temporary directory
and leaves any previous report untouched, so a half-written report never
exists under the target name.

``report.json`` is deterministic for a given command and seed except for the
timings (``seconds`` per claim, ``summary.total_seconds``).
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import stat
import sys
import tempfile
from pathlib import Path
import importlib.metadata

from theorems import InvalidArgument, __version__, coq
from numerics.io import (MAX_JSON_BYTES, check_writable_folder, content_digest, folder_lock, make_temp_dir, parse_json,
                         read_bytes)

from ..claim import ClaimResult, Context, TAG_LEGEND, jsonable, opposite, provenance_note
from .. import catalog
from ..catalog import rests_on as deps_of
from ..claims import high_precision_backend
from ..mutation import format_report, mutation_markdown as render
from . import _figures

#: top-level names a report directory may hold (anything else means "not ours": never replaced)
_REPORT_FILES = ("report.json", "report.md")


def _version_of(name: str, dist: str | None = None) -> str:
    """``name.__version__`` of the module this process runs, or, when it is not imported here (a ``verify --jobs``
    parent whose workers did the computing), its installed distribution's version (``dist``, default ``name``):
    importing torch only to read its version cost the verify process 1.2 s after the last claim. Raises
    ImportError when neither exists."""
    if sys.modules.get(name) is not None:
        return str(sys.modules[name].__version__)
    try:
        return importlib.metadata.version(dist or name)
    except importlib.metadata.PackageNotFoundError:
        return str(__import__(name).__version__)


#: the versions report.json records: ``(key, module, distribution)``. python-flint: the arb balls of every
#: validated enclosure (CERT, ATLAS, SINK2.CERT); heyoka: the Taylor backend behind ``engines.high_precision``
#: ``auto``; the Coq version (FORMAL's ``coqc``) is read from ``coqc --version`` (:func:`_coq_version`)
VERSIONED = (("numpy", "numpy", None), ("scipy", "scipy", None), ("sympy", "sympy", None),
             ("mpmath", "mpmath", None), ("torch", "torch", None), ("matplotlib", "matplotlib", None),
             ("python-flint", "flint", "python-flint"), ("heyoka", "heyoka", None))


def _coq_version() -> str | None:
    """The version of the ``coqc`` FORMAL runs (the one on PATH), ``None`` when there is none."""
    if coq.coqc_path() is None:
        return None
    try:
        return coq.coq_version()
    except (OSError, coq.CoqUnavailable, __import__("subprocess").SubprocessError) as exc:
        return f"unreadable ({type(exc).__name__}: {exc})"


def _engines_json(engines) -> dict:
    """``ctx.engines`` as given, and the backend ``high_precision`` resolves to in this environment (one
    resolution for the whole run: :func:`..claims.high_precision_backend` depends only on the settings and
    on whether heyoka imports, the same in every process of the run)."""
    return {**engines.to_json(), "high_precision_backend": high_precision_backend(engines)}


def environment(ctx, argv) -> dict:
    """Versions, seeds, precision, device, engines and the command, for ``report.json``."""
    versions = {"python": platform.python_version()}
    versions["softpolar"] = __version__
    for key, module, dist in VERSIONED:
        try:
            versions[key] = _version_of(module, dist)
        except ImportError:
            versions[key] = None
    versions["coq"] = _coq_version()
    try:
        import mpmath
        versions["mpmath_backend"] = mpmath.libmp.BACKEND
    except ImportError:  # pragma: no cover
        pass
    return {
        "versions": versions,
        "engines": _engines_json(ctx.engines),
        "platform": platform.platform(),
        "profile": ctx.profile,
        "seeds": {"search_seed": ctx.seed,
                  "authors_settings": "legacy NumPy RandomState streams of the authors' notebook "
                                      "(123: logistic, conditioning, KL; 42: comparison, tied)"},
        "dps": ctx.dps,
        "device": ctx.device,
        "command": ["softpolar", *argv],
    }


def rests_on(results: list[ClaimResult], not_run: dict | None = None) -> dict[str, list[dict]]:
    """For each result whose argument rests on other claims (:func:`..catalog.rests_on`: CERT and ATLAS on
    FORMAL), what became of those in this report: ``{claim id: [{"id", "status", "reason"}]}``, ``status`` one of
    ``passed``, ``failed``, ``not run`` (``reason``: why, from ``not_run`` = ``{id: why}``, else not selected)."""
    ran = {r.claim.id: r for r in results}
    not_run = not_run or {}
    out = {}
    for r in results:
        rows = []
        for d in deps_of(r.claim):
            if d in ran:
                rows.append({"id": d, "status": "passed" if ran[d].passed else "failed", "reason": None})
            else:
                rows.append({"id": d, "status": "not run", "reason": not_run.get(d) or _not_selected(d)})
        if rows:
            out[r.claim.id] = rows
    return out


def _not_selected(cid: str) -> str:
    """Why claim ``cid`` is absent from a report that did not leave it out itself: not named in ``--claims``, and
    whether it could have run here (a program it needs, :func:`..claim.missing_requirements`)."""
    claim = catalog.registry().get(cid)
    if claim is None:
        return "not in the registry"
    why = catalog.missing_requirements(claim)
    return "not selected (name it in --claims)" + (f"; it cannot run here: {'; '.join(why)}" if why else "")


def unsupported(results: list[ClaimResult], not_run: dict | None = None) -> dict[str, list[dict]]:
    """:func:`rests_on`, only the claims that did not pass in this report (an argument with a step unchecked here)."""
    out = {cid: [d for d in rows if d["status"] != "passed"] for cid, rows in rests_on(results, not_run).items()}
    return {cid: rows for cid, rows in out.items() if rows}


def _dep_text(d: dict) -> str:
    return f"{d['id']} {'did not pass' if d['status'] == 'failed' else 'did not run'} in this report" + (
        f" ({d['reason']})" if d["reason"] else "")


def undecided(results: list[ClaimResult]) -> list[str]:
    """The claims that ran and came back ``inconclusive``: the check decided nothing (never a pass, issue 39)."""
    return [r.claim.id for r in results if r.outcome.verdict == "inconclusive"]


def selection_text(selection: dict | None) -> str | None:
    """``"a selection: k of N claims of the registry (--claims)"`` when ``--claims`` named fewer claims than the
    selection could reach (``env["selection"]``, :func:`proofs_check.cli._cmd_verify._selection`), else ``None``."""
    if not selection or not selection.get("by"):
        return None
    return (f"a selection: {selection['selected']} of {selection['registered']} claims of {selection['of']} "
            f"({selection['by']})")


def not_settled_text(unsettled, ctx) -> str:
    """The summary's count of unsettled asymptotic checks with the horizon they reached: a check's own where it
    states one (``details["horizon_log10_t"]``: OPT.ADAM.RATE stops at t = 1e300 whatever ``--max-log-t`` says),
    ``--max-log-t`` for the checks it bounds."""
    own = [r.outcome.details.get("horizon_log10_t") for r in unsettled]
    stated = sorted({h for h in own if h is not None})
    parts = [f"{len(own) - own.count(None)} not settled by t = " + ", ".join(f"1e{h:g}" for h in stated)
             if stated else "",
             f"{own.count(None)} not settled within --max-log-t {ctx.max_log10_t}" if None in own else ""]
    return ", ".join(x for x in parts if x)


def incomplete_text(results: list[ClaimResult], not_run: dict | None = None) -> str | None:
    """One phrase naming what this report leaves unchecked (claims not run, with why; claims that ran undecided;
    claims resting on a claim that did not run and pass here), or ``None`` when the report is complete."""
    not_run = not_run or {}
    parts = []
    if not_run:
        parts.append("not run here: " + "; ".join(f"{i} ({why})" for i, why in not_run.items()))
    if undecided(results):
        parts.append("undecided: " + ", ".join(undecided(results)))
    by_dep: dict[str, list[str]] = {}
    for cid, rows in unsupported(results, not_run).items():
        for d in rows:
            by_dep.setdefault(d["id"], []).append(cid)
    for dep, cids in by_dep.items():
        # "X ran; it rests on D, which ..." (the bare "X rests on D, not run here" read as if X had not run)
        parts.append(f"{', '.join(cids)} ran; {'it rests' if len(cids) == 1 else 'they rest'} on {dep}, which "
                     f"{'was not run' if dep not in {r.claim.id for r in results} else 'failed'} here")
    return "; ".join(parts) or None


def build_json(results: list[ClaimResult], env: dict, total_seconds: float) -> dict:
    claims = [r.to_json() for r in results]
    not_run = dict(env.get("not_run") or {})
    deps = rests_on(results, not_run)
    for c in claims:
        if c["id"] in deps:
            c["rests_on"] = deps[c["id"]]  # the claims carrying part of its argument, and what became of them here
    n_pass = sum(r.passed for r in results)
    missing = unsupported(results, not_run)
    return {
        "claims": claims,
        # all_passed: every claim that ran passed; complete: every selected claim ran and was decided (none
        # inconclusive), and every claim whose argument rests on another (CERT and ATLAS on FORMAL) has that one
        # passed in this report; selection: how many claims were selected of how many registered, and by what
        # (--claims), so that a complete report of a few named claims says it is a selection
        "summary": {"claims": len(results), "passed": n_pass, "failed": len(results) - n_pass,
                    "all_passed": n_pass == len(results),
                    "not_run": [{"id": i, "reason": why} for i, why in not_run.items()],
                    "rests_on_unchecked": {cid: [d["id"] for d in rows] for cid, rows in missing.items()},
                    "undecided": undecided(results),
                    "selection": env.get("selection"),
                    "complete": not not_run and not missing and not undecided(results),
                    "total_seconds": round(total_seconds, 3)},
        "environment": env,
    }


# ---- markdown ---------------------------------------------------------------------------------
def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _compact(v, indent=0) -> str:
    """JSON with one key per line but lists of scalars kept on one line (readable numbers)."""
    pad = " " * (indent + 1)
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [f"{pad}{json.dumps(str(k))}: {_compact(x, indent + 1)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(v, list):
        if all(not isinstance(x, (dict, list)) for x in v):
            return "[" + ", ".join(json.dumps(x) for x in v) + "]"
        return "[\n" + ",\n".join(pad + _compact(x, indent + 1) for x in v) + "\n" + " " * indent + "]"
    return json.dumps(v)


def _md_details(value, limit=4000) -> str:
    text = _compact(_round(jsonable(value)))
    if len(text) > limit:
        text = text[:limit] + "\n... (truncated; full numbers in report.json)"
    return text


def _round(v):
    if isinstance(v, float):
        return float(f"{v:.6g}")
    if isinstance(v, dict):
        return {k: _round(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_round(x) for x in v]
    return v


_MARK = {True: "pass", False: "**FAIL**"}


#: a JSON block longer than this many lines stays in report.json only (report.md points at it)
MD_JSON_LINES = 12
#: evidence longer than this many characters is cut in the summary table (whole in the claim's section)
TABLE_EVIDENCE_CHARS = 140


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _json_block(value, where: str) -> list[str]:
    """A fenced JSON block, or, when longer than :data:`MD_JSON_LINES`, one line saying where in report.json it is."""
    text = _md_details(value)
    n = text.count("\n") + 1
    if n > MD_JSON_LINES:
        return [f"{n} lines of numbers: `report.json`, {where}.", ""]
    return ["```json", text, "```", ""]


def _figure_lines(f, vectors: list) -> list[str]:
    extra = f" (vector: {', '.join(f'[{v}]({v})' for v in vectors)})" if vectors else ""
    return [f"![{f.caption}]({f.filename})", "", f"*{f.caption}*{extra}", ""]


def build_markdown(results: list[ClaimResult], env: dict, total_seconds: float, figure_files: dict,
                   vectors: dict | None = None) -> str:
    """report.md: the summary first (result, failures, one table row per claim), then one short section per
    claim (verdicts and figures visible; evidence, assumptions, numbers and the control in ``<details>``)."""
    n_pass = sum(r.passed for r in results)
    failed = [r for r in results if not r.passed]
    not_run = dict(env.get("not_run") or {})
    missing = incomplete_text(results, not_run)
    unchecked = unsupported(results, not_run)
    scope = selection_text(env.get("selection"))
    scope = f"; {scope}" if scope else ""
    if missing is None:
        head = (f"**{n_pass}/{len(results)} claims got their expected verdict with a failing negative control** "
                f"({'all passed' if not failed else 'SOME FAILED'}{scope})")
    else:
        head = (f"**{n_pass}/{len(results)} claims run got their expected verdict with a failing negative control** "
                f"({'all run passed' if not failed else 'SOME FAILED'}{scope}; **incomplete**: {missing})")
    lines = [
        "# softpolar verification report",
        "",
        f"{head} in {total_seconds:.1f} s.",
        "",
        f"- command: `{' '.join(env['command'])}`",
        f"- profile: {env['profile']}; search seed: {env['seeds']['search_seed']}; device: {env['device']}; "
        f"mpmath dps: {env['dps']}; softpolar {env['versions'].get('softpolar')}",
    ]
    if failed:
        lines.append("- failed: " + ", ".join(
            f"[{r.claim.id}](#{r.claim.id.lower().replace('.', '')}) ({r.outcome.verdict}, expected "
            f"{r.claim.expected}; control {r.control.verdict})" for r in failed))
    lines += [
        "",
        "| id | title | provenance | verdict (expected) | negative control | evidence | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.claim
        note = "".join(f"[{_dep_text(d)}] " for d in unchecked.get(c.id, ()))
        lines.append(
            f"| [{c.id}](#{c.id.lower().replace('.', '')}) | {_cell(c.title)} | {c.provenance} | "
            f"{r.outcome.verdict} ({c.expected}) {_MARK[r.passed]} | {r.control.verdict} "
            f"({'fails as required' if r.control_failed else 'DID NOT FAIL'}) | "
            f"{_cell(note + _short(r.outcome.evidence, TABLE_EVIDENCE_CHARS))} | {r.seconds:.1f} s |")
    lines += [
        "",
        "## How to read this report",
        "",
        "Claims about *Gradient Flow Polarizes Softmax Outputs towards Low-Entropy Solutions* (arXiv 2603.06248), "
        "each checked by softpolar with a negative control: the same check run on a deliberately wrong variant, "
        "which must fail. A claim passes when its verdict is the expected one **and** its negative control reaches "
        "the opposite verdict. Verdicts: *verified*; *refuted* (with a concrete counterexample); *inconclusive* "
        "(with the reason). Times: a trajectory shared by several claims is computed once and counted for the "
        "first claim that uses it. Each claim's evidence, assumptions, numbers and negative control are folded "
        "under its verdict; every number is also in `report.json`.",
        "",
        "Provenance tags: " + "; ".join(f"**{t}** {text}" for t, text in TAG_LEGEND.items())
        + ". The paper's body was not available: no claim here is quoted from it verbatim.",
        "",
    ]
    for k, r in enumerate(results):
        c = r.claim
        o = r.outcome
        ctl = r.control
        lines += [
            f"## {c.id}",
            "",
            f"**{c.title}**" + (f" (claim {c.digest_number} of the paper notes)" if c.digest_number else ""),
            "",
            f"$$ {c.statement} $$",
            "",
            f"**{o.verdict}** (expected {c.expected}): {_MARK[r.passed]}; negative control **{ctl.verdict}** "
            f"({'fails as required' if r.control_failed else 'DID NOT FAIL: the check has no demonstrated power'}); "
            f"{r.seconds:.1f} s",
            "",
        ]
        for d in unchecked.get(c.id, ()):
            lines += [f"**Part of this argument is not checked in this report**: it rests on {d['id']}, which "
                      f"{'did not pass' if d['status'] == 'failed' else 'did not run'} here"
                      + (f" ({d['reason']})" if d["reason"] else "") + f"; the evidence's mention of {d['id']} "
                      f"refers to that claim's check, not to a run in this report.", ""]
        for f in o.figures:
            if f.filename in figure_files:
                lines += _figure_lines(f, (vectors or {}).get(f.filename, []))
        lines += [
            "<details><summary>evidence, assumptions, numbers and the negative control</summary>",
            "",
            f"- provenance: **[{c.provenance}]**, {provenance_note(c.provenance)}",
            f"- assumptions: {c.assumptions}",
            f"- evidence kind: {c.evidence_kind}",
            f"- check: {c.check_description}",
            "",
            o.evidence,
            "",
        ]
        if o.reason:
            lines += [f"Reason: {o.reason}", ""]
        if o.counterexample:
            lines += ["Counterexample:", ""] + _json_block(o.counterexample, f"claims[{k}].outcome.counterexample")
        if o.details:
            lines += ["Numbers:", ""] + _json_block(o.details, f"claims[{k}].outcome.details")
        lines += [
            f"**Negative control**: {c.control.description}. Required verdict: {opposite(c.expected)}; "
            f"got **{ctl.verdict}**.",
            "",
            ctl.evidence,
            "",
        ]
        if ctl.reason:
            lines += [f"Reason: {ctl.reason}", ""]
        if ctl.counterexample:
            lines += ["Control counterexample:", ""] + _json_block(
                ctl.counterexample, f"claims[{k}].negative_control.counterexample")
        lines += ["</details>", ""]
    lines += ["## Environment", "", "<details><summary>versions, platform, seeds</summary>", "", "```json",
              json.dumps(env, indent=1), "```", "", "</details>", ""]
    return "\n".join(lines)


# ---- atomic writing -----------------------------------------------------------------------------
#: the marker file that makes a folder "an earlier softpolar report": the content hash of every file written.
MARKER = ".softpolar-report.json"
#: marker format: 2 records ``{"files": {name: "sha256:..."}}``; format 1 (names only) is no longer believed.
MARKER_VERSION = 2


def _file_digest(path: Path) -> str | None:
    """The content digest of a regular file (``None`` for anything else: a folder, a FIFO, a link)."""
    try:
        if path.is_symlink():
            return None
        return content_digest(read_bytes(path, "out", max_bytes=8 * MAX_JSON_BYTES))
    except InvalidArgument:
        return None


def _folder_problem(out: Path) -> str | None:
    """Why the non-empty folder ``out`` may not be replaced, or ``None`` when it is an unchanged report.

    Believed only when :data:`MARKER` (read with the strict reader) lists every entry of the folder
    with its content hash and every listed file still has that hash: a user's edit to ``report.md``,
    a file added, or a hand-made marker naming ``thesis.tex`` (whose hash it cannot know) all keep the
    folder as it is.
    """
    entries = sorted(p.name for p in out.iterdir())
    if MARKER not in entries:
        return f"holds no softpolar report (no {MARKER})"
    try:
        data = parse_json(read_bytes(out / MARKER, "out", max_bytes=2**20), f"{out / MARKER}")
    except InvalidArgument as exc:
        return f"has an unreadable {MARKER} ({str(exc)[:120]})"
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("softpolar_report") != MARKER_VERSION or not isinstance(files, dict) \
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return f"has a {MARKER} without content hashes (not written by this softpolar)"
    foreign = [e for e in entries if e != MARKER and e not in files]
    if foreign:
        return (f"holds files softpolar did not write ({', '.join(map(repr, foreign[:5]))}"
                f"{', ...' if len(foreign) > 5 else ''})")
    changed = [name for name, digest in sorted(files.items())
               if "/" in name or name in (".", "..") or not (out / name).exists() or _file_digest(out / name) != digest]
    if changed:
        return (f"holds files changed since softpolar wrote them ({', '.join(map(repr, changed[:5]))}"
                f"{', ...' if len(changed) > 5 else ''})")
    return None


def check_target(out, argument: str = "out") -> Path:
    """Validate a report folder *before* any claim runs; return it resolved.

    Allowed: a path that does not exist yet (its parents are created), an empty folder, or an
    earlier softpolar report whose marker (:data:`MARKER`) lists every entry with its content hash,
    every hash still matching. Refused with :class:`InvalidArgument`, the folder left untouched: a
    file, a folder holding anything softpolar did not write or a file changed since (nothing is
    deleted), the current folder or a folder that contains it, and a place where no folder can be
    created.
    """
    out = Path(out).resolve()
    shown = f"{argument}={str(out)!r}"
    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"{shown} exists and is not a directory; expected a directory path")
    try:
        cwd = Path.cwd().resolve()
    except OSError:  # the current folder was removed: it cannot be the target
        cwd = None
    if cwd is not None and (out == cwd or out in cwd.parents):
        raise InvalidArgument(f"{shown} is the current folder or contains it; expected a report folder "
                              "elsewhere (a report folder is replaced as a whole)")
    if out.is_dir() and any(out.iterdir()):
        why = _folder_problem(out)
        if why is not None:
            raise InvalidArgument(f"{shown} {why}; expected a new or empty folder, or an earlier softpolar "
                                  "report folder left as it was written (nothing was changed or deleted)")
    check_writable_folder(argument, out.parent, out)
    return out


_check_target = check_target  # the earlier private name


def write_report(results: list[ClaimResult], out, env: dict | None = None, total_seconds: float | None = None,
                 mutation=None, *, ctx=None) -> dict:
    """Write ``report.md``, ``report.json`` and the figures to ``out``, atomically; return the JSON object.

    ``results``: :class:`ClaimResult` objects (from :func:`run_claim`, any claim, e.g. a claim family on a
    user's model). ``env``: the environment block; by default :func:`environment` of ``ctx`` (the settings
    the results were computed with; default ``Context()``) and this process's command line.
    ``total_seconds``: default the sum of the results' times. ``mutation``: the kill matrix of
    ``verify --mutants`` (:func:`..mutation.run_mutants`), added to both files.
    """
    if env is None:
        env = environment(ctx if ctx is not None else Context(), ["python", *sys.argv])
    if total_seconds is None:
        total_seconds = sum(r.seconds for r in results)

    out = check_target(out)
    with folder_lock(out):
        return _write_report(results, out, env, total_seconds, mutation)


def _write_report(results, out: Path, env: dict, total_seconds: float, mutation) -> dict:
    tmp = make_temp_dir(out.parent, f".{out.name}.tmp-")
    try:
        figure_files, vectors = {}, {}
        for r in results:
            for f in r.outcome.figures:
                if f.filename not in figure_files:
                    written = _figures.draw(f, tmp / f.filename)  # the PNG and its vector twin
                    figure_files[f.filename] = f.caption
                    vectors[f.filename] = [p.name for p in written[1:]]
        data = build_json(results, env, total_seconds)
        data["figures"] = figure_files
        data["figure_vectors"] = vectors
        if mutation is not None:
            data["mutation"] = jsonable(mutation)
        with open(tmp / "report.json", "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=False, allow_nan=False)
            fh.write("\n")
        with open(tmp / "report.md", "w", encoding="utf-8") as fh:
            fh.write(build_markdown(results, env, total_seconds, figure_files, vectors)
                     + (mutation_markdown(mutation) if mutation is not None else ""))
        written = {p.name: _file_digest(p) for p in sorted(tmp.iterdir())}
        with open(tmp / MARKER, "w", encoding="utf-8") as fh:
            json.dump({"softpolar_report": MARKER_VERSION, "files": written,
                       "note": "written by softpolar verify; this folder is replaced by the next report "
                               "written here, and only while it holds exactly these files with these "
                               "contents"}, fh, indent=1)
            fh.write("\n")
        check_target(out)  # nothing foreign appeared while the claims ran
        _swap_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return data


def _swap_into_place(tmp: Path, out: Path) -> None:
    """Move the finished ``tmp`` directory to ``out``; a previous report is removed only after the swap.

    The folder keeps the permissions of the ``out`` it replaces (an empty folder the user made private stays so).
    """
    if not out.exists():
        os.replace(tmp, out)
        return
    os.chmod(tmp, stat.S_IMODE(os.stat(out).st_mode))
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.rmdir(old)
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old, out)  # put the previous report back
        raise
    shutil.rmtree(old, ignore_errors=True)


def dumps(data: dict) -> str:
    """The JSON text printed by ``softpolar verify --json``."""
    return json.dumps(data, indent=1, allow_nan=False)



# ---- kill matrix (verify --mutants) ------------------------------------------------------------
def mutation_markdown(mutation: dict) -> str:
    """The ``--mutants`` section of report.md (rendered next to its data, :func:`..mutation.mutation_markdown`)."""
    out = render(mutation)
    if mutation.get("checker_mutants") is not None:
        out += ("\n\n### Checker mutants\n\nEach weakens one test of a checker (point checker, atlas checker, box "
                "engine, generic prover); the suite named caught it.\n\n" + format_report(mutation["checker_mutants"])
                + "\n")
    return out
