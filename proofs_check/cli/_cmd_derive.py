r"""``softpolar derive``: print the derived equations of one (loss, link), or re-prove every identity.

::

    softpolar derive [--loss LOSS] [--link LINK] [--n N] [--d D] [--format latex|markdown|json]
                     [--out FILE] [--pdf FILE.pdf] [--no-proofs]
    softpolar derive --check [--only ID ...] [--jobs J] [--format ...] [--out FILE] [--quiet]

Without ``--check``: the model, the loss gradient, the Jacobian, the flow $\dot V$, $\dot a$ in
structured and component form for the given ``n``, ``d``, the replicator form, the invariants that
apply, the output dynamics, the entropy rate and the reduced / clock systems where they apply, each
with its provenance tag (paper-notes#provenance-tags: [A] paper per reading notes, [D] derived for softpolar, [C] code,
[P] paper). Each identity shown is re-proven at the requested sizes with its negative control
(skip with ``--no-proofs``). ``--format latex --out eqs.tex`` writes a standalone document;
``--pdf eqs.pdf`` compiles it with pdflatex (exit 2 when pdflatex is not installed).

With ``--check``: :func:`theorems.run_identities` for n = 2..6 (every scheduled d) and the
size-generic proofs (every n >= 2, d >= 1, or the size an identity is specific to), a table (id,
n-range, d, status, method, negative control, size-generic status, generic method, generic
negative control, provenance), one line per generic proof with what it uses and still assumes,
and a summary line; exit 0 only if every identity holds, every negative control is disproved,
no generic proof is disproved and no generic negative control holds.
Without ``--check`` each general statement is marked with its size-generic status ("proved for
all n, d" or "proved for n = 2 only") next to the expansions proven at the requested sizes.

The format defaults to the ``--out`` extension (``.tex``, ``.json``, ``.md``), else Markdown.
Files are written atomically. Exit codes: 0 success, 1 a check failed, 2 bad input.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import re
import shutil
import tempfile

from theorems import (IDENTITIES, InvalidArgument, check_choice, check_int, get_link, get_loss, run_identities,
                      scope_report, setup_deadline)
from theorems import __version__
from numerics.io import OWN_KEY, OWN_MARK, check_output_file, own_text_marker, same_path, write_bytes_atomic
from numerics.progress import Heartbeat, Progress
from theorems.asymptotics import asymptotics

from ..derivation import build_derivation
from ..report import RENDERERS, Derivation, table_json, table_latex, table_markdown, write_atomic
from ._cmd_optim import add_optimizer_argument, derive_optimizer
from ._models_cli import add_models_argument

#: Largest sizes ``derive`` prints (component forms grow like n^2 d; proofs get slow beyond).
MAX_N, MAX_D = 8, 4
_EXT = {".tex": "latex", ".json": "json", ".md": "markdown", ".markdown": "markdown"}


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "derive", help="print the derived gradient-flow equations; --check re-proves every identity",
        description="Print the gradient flow of L(V phi(a)) derived by SymPy, with the identities that "
                    "apply and their provenance; --check re-proves every identity for n = 2..6.")
    p.add_argument("--loss", help="logistic | square | kl, or a loss from --models (default logistic; with "
                                  "--check: only the identities stated for this loss)")
    p.add_argument("--link",
                   help="softmax | sigmoid | relu-norm | l1-norm | l2-norm | sum-norm | softmax1 | stablemax | "
                        "softpick | ssmax-n<N> (Scalable-Softmax for N tokens), or a link from --models "
                        "(default softmax; with --check: only the identities stated for this link)")
    p.add_argument("--n", type=int, default=3, help=f"number of tokens, 2..{MAX_N} (default 3)")
    p.add_argument("--d", type=int, default=2, help=f"output dimension, 1..{MAX_D} (default 2)")
    p.add_argument("--format", choices=sorted(RENDERERS), help="output format (default: from --out, else markdown)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--pdf", metavar="FILE.pdf",
                   help="compile the LaTeX document with pdflatex and write the PDF to FILE (needs pdflatex)")
    p.add_argument("--check", action="store_true",
                   help="re-prove every identity for n = 2..6 and print a table (with --loss / --link: the "
                        "identities that apply to them, under them)")
    p.add_argument("--jobs", type=int, help="worker processes for --check (default: available CPUs)")
    p.add_argument("--only", action="append", metavar="ID",
                   help="with --check: only this identity (repeatable; default: all)")
    p.add_argument("--no-proofs", action="store_true", help="print the equations without re-proving them")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--asymptotics", action="store_true",
                   help="print the asymptotic laws derived from the definitions (theorems.asymptotics): exponent "
                        "and constant of 1 - max weight ~ C (log t)^-p, or why none is derived")
    p.add_argument("--json", action="store_true", help="with --asymptotics: JSON on stdout")
    add_models_argument(p)
    add_optimizer_argument(p, simulate=False)
    p.set_defaults(func=run)


# ---- validation ---------------------------------------------------------------------------------
def _validate(args) -> str:
    if not args.check:  # the derivation needs one (loss, link); --check without them runs every identity's own
        args.loss = "logistic" if args.loss is None else args.loss
        args.link = "softmax" if args.link is None else args.link
    if args.loss is not None:
        get_loss(args.loss)
    if args.link is not None:
        get_link(args.link)
    for name, value, lo, hi in (("n", args.n, 2, MAX_N), ("d", args.d, 1, MAX_D)):
        if not lo <= value <= hi:
            raise InvalidArgument(f"{name}={value!r} is not allowed; expected an integer in {lo}..{hi}")
    if args.jobs is not None:
        check_int("jobs", args.jobs, minimum=1)
    for ident in args.only or ():
        check_choice("only", ident, IDENTITIES)
    if args.check and (args.loss is not None or args.link is not None):
        ids = args.only or list(IDENTITIES)
        if len(scope_report(ids, args.loss, args.link)) == len(ids):
            raise InvalidArgument(f"{_scope_words(args)}: no identity{' of --only' if args.only else ''} is stated "
                                  f"for it; expected a loss / link one of them applies to (see derive --check)")
    fmt = args.format
    if args.out is not None:
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise InvalidArgument(f"out={args.out!r}: the folder {folder!r} does not exist; expected a writable path")
        # before any derivation: writable, not a folder or device, not an input, new or a file softpolar wrote
        check_output_file("--out", args.out, inputs=_inputs(args))
        if fmt is None:
            fmt = _EXT.get(os.path.splitext(args.out)[1].lower())
    if args.pdf is not None:
        _check_pdf_target(args.pdf, inputs=_inputs(args))
        if args.out is not None:
            if same_path(args.out, args.pdf):
                raise InvalidArgument(f"pdf={args.pdf!r} is the same file as --out; expected two different files")
    return fmt or "markdown"


def _inputs(args) -> list:
    """The run's input files (every ``--models`` file): no output may replace one."""
    return list(getattr(args, "models", None) or ())


def _check_pdf_target(path: str, *, inputs=()) -> None:
    if not path.lower().endswith(".pdf"):
        raise InvalidArgument(f"pdf={path!r} is not allowed; expected a file name ending in .pdf")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InvalidArgument(f"pdf={path!r}: the folder {folder!r} does not exist; expected a writable path")
    check_output_file("--pdf", path, inputs=inputs)
    if shutil.which("pdflatex") is None:
        raise InvalidArgument("--pdf needs pdflatex, which is not on PATH; expected a TeX installation "
                              "(Debian/Ubuntu: apt-get install texlive-latex-base)")


def pdflatex_error(log: str) -> str:
    """The first error of a pdflatex transcript, in one line: a missing file is named as such
    (``File `x.sty' not found`` becomes "the LaTeX file x.sty is not installed"), any other error
    is its ``!`` line with the source line it stopped at."""
    m = re.search(r"^! LaTeX Error: File `([^']+)' not found", log, re.M)
    if m:
        return (f"the LaTeX file {m.group(1)} is not installed (a TeX package is missing; Debian/Ubuntu: "
                f"apt-get install texlive-latex-extra, or find the package with `apt-file search {m.group(1)}`)")
    lines = log.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("! ") and "==> Fatal error" not in line:
            where = next((x.strip() for x in lines[k + 1:k + 8] if re.match(r"l\.\d+ ", x)), "")
            return line[2:].strip() + (f" (at {where})" if where else "")
    return " | ".join(x for x in lines[-6:] if x.strip())


def run_pdflatex(tex: str, *, timeout: float = 300) -> tuple[bytes, int, str]:
    """Compile the standalone document ``tex`` with pdflatex in a temporary folder:
    ``(pdf bytes, page count, transcript)``. Raises ``RuntimeError`` naming the first error
    (:func:`pdflatex_error`) when pdflatex fails."""
    with tempfile.TemporaryDirectory(prefix="softpolar-pdf-") as tmp:
        src = os.path.join(tmp, "derive.tex")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(tex)
        res = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                              "derive.tex"], cwd=tmp, capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL, errors="replace")
        log_path = os.path.join(tmp, "derive.log")
        log = res.stdout
        if os.path.isfile(log_path):
            with open(log_path, encoding="utf-8", errors="replace") as fh:
                log = fh.read()
        pdf = os.path.join(tmp, "derive.pdf")
        if res.returncode != 0 or not os.path.isfile(pdf):
            raise RuntimeError(f"pdflatex failed (exit {res.returncode}): {pdflatex_error(log)}")
        m = re.search(r"Output written on derive\.pdf \((\d+) pages?", log)
        with open(pdf, "rb") as fh:
            data = fh.read()
    return data, (int(m.group(1)) if m else 0), log


def compile_pdf(tex: str, path: str, *, timeout: float = 300) -> int:
    """Compile ``tex`` (:func:`run_pdflatex`) and write the PDF to ``path`` atomically; return its
    page count. Raises ``RuntimeError`` naming pdflatex's first error when it fails (a missing TeX
    package, or a bug in the rendered LaTeX; not bad input)."""
    # the PDF's /Creator marks it as softpolar's own output (numerics.io.softpolar_output)
    tex = tex.replace("\\begin{document}", "\\pdfinfo{/Creator (%s derive)}\n\\begin{document}" % OWN_MARK, 1)
    data, pages, _ = run_pdflatex(tex, timeout=timeout)
    write_bytes_atomic(path, data)
    return pages


def overfull_boxes(log: str) -> list[str]:
    """The ``Overfull \\hbox`` lines of a pdflatex transcript (text running into the margin)."""
    return [line for line in log.splitlines() if line.startswith(("Overfull \\hbox", "Overfull \\vbox"))]


def _emit_pdf(args, tex: str) -> int:
    """``--pdf``: 0 when written, 1 (one line on stderr) when pdflatex fails."""
    try:
        pages = compile_pdf(tex, args.pdf)
    except (RuntimeError, subprocess.SubprocessError) as exc:
        print(f"softpolar derive: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"softpolar derive: wrote {args.pdf} ({pages} page{'s' if pages != 1 else ''})", file=sys.stderr)
    return 0


def mark_own(text: str, fmt: str) -> str:
    """``text`` of format ``fmt`` with the marker that makes the file recognisably softpolar's
    (:func:`numerics.io.softpolar_output`): a top-level key in JSON, a last comment line in Markdown and LaTeX."""
    if fmt == "json":
        return json.dumps({OWN_KEY: "derive", **json.loads(text)}, indent=2) + "\n"
    comment = "%" if fmt == "latex" else "<!--"
    return text + ("" if text.endswith("\n") else "\n") + own_text_marker(comment, "derive") + "\n"


def _emit(text: str, out: str | None, fmt: str) -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        write_atomic(out, mark_own(text, fmt))


def run(args) -> int:
    if args.optimizer is not None:  # the optimizer's forms and facts (theorems.optimizers.derive_facts)
        for flag in ("check", "pdf", "out", "only", "format"):
            if getattr(args, flag):
                raise InvalidArgument(f"--{flag} with --optimizer is not allowed; expected derive --optimizer NAME "
                                      "alone (markdown on stdout)")
        sys.stdout.write(derive_optimizer(args))
        return 0
    if args.asymptotics or args.json:
        return _run_asymptotics(args)
    fmt = _validate(args)
    if args.check:
        return _run_check(args, fmt)

    # proving every identity at these sizes takes ~20 s: after 2 s, progress on stderr (which identity)
    with Heartbeat("softpolar derive", after=2.0, interval=5.0, enabled=not args.quiet):
        with setup_deadline(args.setup_timeout, "derive (the symbolic derivation)"):
            der = build_derivation(args.loss, args.link, args.n, args.d, prove=not args.no_proofs)
    der.argv = ["softpolar", *sys.argv[1:]]
    if args.pdf is None or args.out is not None or args.format is not None:  # --pdf alone: no text
        _emit(RENDERERS[fmt](der), args.out, fmt)
    if args.out is not None and not args.quiet:
        print(f"softpolar derive: wrote {args.out}", file=sys.stderr)
    if args.pdf is not None and _emit_pdf(args, RENDERERS["latex"](der)):
        return 1
    return 0 if derivation_ok(der) else 1


def _run_asymptotics(args) -> int:
    """``derive --asymptotics [--json]``: each derived law (provenance D), or the step that did not hold."""
    if not args.asymptotics:
        raise InvalidArgument("--json is only used with --asymptotics; expected derive --asymptotics --json")
    for flag in ("check", "pdf", "out", "only", "format"):
        if getattr(args, flag):
            raise InvalidArgument(f"--{flag} with --asymptotics is not allowed; expected derive --asymptotics "
                                  "[--json] with --loss/--link")
    L, K = get_loss(args.loss or "logistic"), get_link(args.link or "softmax")
    laws = asymptotics(L, K)
    if args.json:
        sys.stdout.write(json.dumps({"loss": L.name, "link": K.name, "provenance": "D (derived here, not the "
                                     "paper's statement)", "asymptotics": laws}, indent=2) + "\n")
        return 0
    print(f"# Asymptotic laws: {L.name} loss, {K.name} link [D: derived here]")
    for e in laws:
        if e["exponent"] is None:
            print(f"- {e['quantity']}: no law derived ({e['no_law']})")
            continue
        clock = e.get("clock", "log t")
        print(f"- {e['quantity']} ~ C {clock if clock == 't' else f'({clock})'}^-p with p = {e['exponent']}, "
              f"C = {e['constant']}")
        for step in e["derivation"]:
            print(f"    {step}")
    return 0


def derivation_ok(der: Derivation) -> bool:
    """No section is disproved or undecided, and every checked section's negative control is disproved."""
    for sec in der.sections:
        if sec.status in ("disproved", "undecided") or sec.generic.startswith("disproved"):
            return False
        if sec.status in ("proved", "numeric") and not sec.negative.startswith("disproved"):
            return False
    return True


def _scope_words(args) -> str:
    return " ".join(f"--{k} {v}" for k, v in (("loss", args.loss), ("link", args.link)) if v is not None)


def _run_check(args, fmt: str) -> int:
    bar = Progress("softpolar derive --check", enabled=not args.quiet)
    t0 = time.perf_counter()
    try:
        rows = run_identities(args.only, ns=range(2, 7), jobs=args.jobs, loss=args.loss, link=args.link,
                              progress=lambda done, total: bar.set_count(done, total, note="batches"))
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    concrete = [r for r in rows if r.n is not None]
    generic = [r for r in rows if r.n is None]
    ok = all(r.passed for r in rows)
    summary = {
        "identities": len({r.id for r in rows}), "ns": [2, 3, 4, 5, 6],
        "all_hold": all(r.holds for r in concrete),
        "all_controls_disproved": all(r.negative_status == "disproved" for r in concrete),
        "numeric_only": sorted({f"{r.id} n={r.n}" for r in concrete if r.status == "numeric"}),
        "generic_proved": sum(r.status == "proved" for r in generic),
        "generic_proved_all_sizes": sorted(r.id for r in generic if r.status == "proved" and r.scope == "all n, d"),
        "generic_proved_restricted": {r.id: r.scope for r in generic if r.status == "proved" and
                                      r.scope != "all n, d"},
        "generic_undecided": sum(r.status == "undecided" for r in generic),
        "generic_disproved": sum(r.status == "disproved" for r in generic),
        # no generic proof was run: the prover does not cover the given loss/link (the concrete sizes still ran)
        "generic_not_covered": sorted(r.id for r in generic if r.status == "not covered"),
        "generic_controls": {st: sum(r.negative_status == st for r in generic)
                             for st in ("disproved", "undecided", "numeric", "proved")},
        "generic_assumptions": sorted({x for r in generic for x in r.assumptions}),
        "wall_seconds": round(wall, 2), "passed": ok, "version": __version__,
        "scope": {"loss": args.loss, "link": args.link},
        "not_applicable": scope_report(args.only, args.loss, args.link),
    }
    restricted = "".join(f", {k} proved for {v}" for k, v in summary["generic_proved_restricted"].items())
    gc = summary["generic_controls"]
    na = summary["not_applicable"]
    scope = (f" for {_scope_words(args)} ({len(na)} not stated for it: {', '.join(na)})"
             if args.loss is not None or args.link is not None else "")
    footer = (f"{summary['identities']} identities{scope}, n = 2..6: "
              f"{'all hold' if summary['all_hold'] else 'SOME FAIL'}; negative controls "
              f"{'all disproved' if summary['all_controls_disproved'] else 'NOT ALL DISPROVED'}; "
              f"size-generic: {len(summary['generic_proved_all_sizes'])} proved (all n, d){restricted}, "
              f"{summary['generic_undecided']} undecided, {summary['generic_disproved']} disproved"
              + (f", {len(summary['generic_not_covered'])} not covered (no size-generic claim)"
                 if summary["generic_not_covered"] else "") + "; generic "
              f"negative controls: {gc['disproved']} disproved, {gc['undecided']} undecided, "
              f"{gc['proved'] + gc['numeric']} holding; {wall:.1f} s wall.")
    if fmt == "json":
        text = table_json(rows, summary=summary)
    elif fmt == "latex":
        text = table_latex(rows, footer=footer)
    else:
        text = table_markdown(rows, footer=footer)
    if args.pdf is None or args.out is not None or args.format is not None:  # --pdf alone: no text
        _emit(text, args.out, fmt)
    if args.pdf is not None and _emit_pdf(args, table_latex(rows, footer=footer)):
        return 1
    return 0 if ok else 1
