r"""Rendering of derived equations and of the identity table: LaTeX, Markdown, JSON.

Inputs are plain data built by :mod:`proofs_check.derivation`:

* a :class:`Derivation` (loss, link, sizes, and a list of :class:`Section`, each with
  its identity id, title, provenance tag, general statement, component equations for
  the requested sizes, notes, and the proof status at those sizes);
* a list of :class:`theorems.IdentityResult` rows from :func:`theorems.run_identities`.

``to_latex`` returns a standalone ``article`` document (``amsmath``, ``amssymb``)
that compiles with ``pdflatex``; equations sit in ``align*`` (one ``&=`` per
line) so that a researcher can copy them. Plain text (titles, notes) is escaped.
:func:`write_atomic` writes a file atomically (temporary file in the same folder,
then ``os.replace``; :mod:`numerics.io`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
import re
from numerics.io import write_text_atomic
from ..claim import TAG_LEGEND

#: Order of statuses, worst first, for summarizing several rows.
_WORST = ("disproved", "undecided", "numeric", "proved")
_NEG_WORST = ("proved", "numeric", "undecided", "disproved", "n/a")


@dataclass
class Section:
    """One block of the derivation (usually one identity)."""

    key: str
    title: str
    provenance: str
    statement: str = ""
    equations: list = field(default_factory=list)  # LaTeX "lhs &= rhs" strings
    note: str = ""
    status: str = ""       # proof status at the requested sizes ("" = not an identity)
    method: str = ""
    negative: str = ""     # negative-control status, with its description
    generic: str = ""      # status of the general statement: "proved for all n, d", "proved for n = 2 only", ...
    generic_method: str = ""
    check_sizes: str = ""  # sizes ``derive --check`` re-proves the expansion at ("n = 2..6", "n = 2", ...)


@dataclass
class Derivation:
    """Everything ``softpolar derive`` prints for one (loss, link, n, d)."""

    loss: str
    link: str
    n: int
    d: int
    sections: list
    version: str = ""
    argv: list = field(default_factory=list)

    def to_latex(self) -> str:
        """A standalone LaTeX document (:func:`to_latex`); compiles with pdflatex."""
        return to_latex(self)

    def to_markdown(self) -> str:
        """Markdown with ``$$`` display math (:func:`to_markdown`)."""
        return to_markdown(self)

    def to_json(self) -> str:
        return to_json(self)

    def _repr_latex_(self) -> str:
        """A notebook shows the derivation as text with MathJax display math (:func:`latex_fragment`)."""
        return latex_fragment(self)


# ---- helpers --------------------------------------------------------------------------------------
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "^": r"\^{}",
                "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$", "~": r"\~{}"}


def tex_escape(text: str) -> str:
    """Escape plain text for LaTeX (``--`` stays two hyphens: ``-{}-``, not an en dash)."""
    return "".join(_TEX_ESCAPES.get(c, c) for c in text).replace("--", "-{}-").replace("--", "-{}-")


def tex_text(text: str) -> str:
    """Prose with inline ``$...$`` math (titles, notes) for a LaTeX document: the prose is escaped,
    the math is kept. An odd number of ``$`` is a bug in the text, not in the reader's input."""
    parts = text.split("$")
    if len(parts) % 2 == 0:
        raise ValueError(f"unbalanced $ in {text!r}")
    return "".join(f"${p}$" if k % 2 else tex_escape(p) for k, p in enumerate(parts))


def tex_plain(text: str) -> str:
    """Prose with inline ``$...$`` math for a terminal: the math reads as ASCII (``\\|s\\|^2`` as ``||s||^2``)."""
    def math(m):
        t = m.group(1)
        t = re.sub(r"(?<=[A-Za-z0-9)])\\(varphi|beta|gamma|rho|tau|lambda|nabla|mathcal L)", r" \\\1", t)
        for a, b in ((r"\|", "||"), (r"\top", "T"), (r"\nabla", "grad "), (r"\mathcal L", "L"), (r"\varphi", "phi"),
                     (r"\dot ", "d"), (r"\tau", "tau"), (r"\beta", "beta"), (r"\gamma", "gamma"), (r"\rho", "rho"),
                     (r"\ell", "l"), (r"\lambda", "lambda"), (r"\ge", ">="), (r"\le", "<="), (r"\ne", "!="),
                     (r"\langle", "<"), (r"\rangle", ">"), (r"\mathbf 1", "1"), (r"\star", "*"), (r"\,", " "),
                     (r"\ ", " ")):
            t = t.replace(a, b)
        t = re.sub(r"\\operatorname\{([^}]*)\}|\\mathrm\{([^}]*)\}|\\text\{([^}]*)\}",
                   lambda k: next(g for g in k.groups() if g is not None), t)
        t = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", t)
        t = re.sub(r"\\[A-Za-z]+ ?", "", t)
        return t.replace("{", "").replace("}", "")
    return re.sub(r"\$([^$]*)\$", math, text)


#: width of the text block of ``article`` at 10 pt, and the budget a display line is packed to
#: (:func:`tex_width` is within a few percent above pdflatex's width for the equations derive prints)
TEXT_WIDTH_PT = 345.0
LINE_BUDGET_PT = 320.0
_SPACES = {"quad": 10.0, "qquad": 20.0, ",": 1.7, ":": 2.2, ";": 2.8, " ": 3.3, "!": -1.7}
_SILENT = {"left", "right", "bigl", "bigr", "Bigl", "Bigr", "big", "Big", "textstyle", "displaystyle",
           "operatorname", "mathrm", "mathbf", "mathcal", "mathbb", "text", "limits", "begin", "end"}


def tex_width(tex: str) -> float:
    r"""Estimated width in points of display math ``tex`` at 10 pt (scripts at 70%, a fraction as wide as
    its wider part, a matrix as its widest row); an estimate that errs on the wide side, used to decide
    where to break lines. Checked against pdflatex by the every-loss-and-link overfull test."""
    tokens = re.findall(r"\\[A-Za-z]+|\\.|\{|\}|\^|_|&|[^\\{}^_&]", tex)
    pos = 0

    def group(scale: float) -> float:  # after "{": up to the matching "}"
        nonlocal pos
        w = 0.0
        while pos < len(tokens):
            t = tokens[pos]
            pos += 1
            if t == "}":
                break
            w += atom(t, scale)
        return w

    def arg(scale: float) -> float:
        nonlocal pos
        if pos >= len(tokens):
            return 0.0
        t = tokens[pos]
        pos += 1
        return group(scale) if t == "{" else atom(t, scale)

    def atom(t: str, scale: float) -> float:
        nonlocal pos
        if t == "{":
            return group(scale)
        if t in ("^", "_"):
            return arg(scale * 0.7)
        if t in ("\\frac", "\\tfrac", "\\dfrac"):
            f = 0.7 if t == "\\tfrac" else 1.0
            return max(arg(scale * f), arg(scale * f)) + 2 * scale
        if t.startswith("\\"):
            name = t[1:]
            if name in _SPACES:
                return _SPACES[name] * scale
            if name in _SILENT:
                if name in ("begin", "end"):
                    arg(scale)
                return 0.0
            return (4.0 if name == "\\" else 7.0) * scale
        if t in "=<>":
            return 13.0 * scale
        if t in "+-":
            return 12.0 * scale
        if t in ",;":
            return 4.0 * scale
        return 0.0 if t.isspace() or t == "&" else 6.0 * scale

    if r"\begin{matrix}" in tex:  # a matrix: the widest of its rows, entries side by side
        inner = tex.split(r"\begin{matrix}", 1)[1].rsplit(r"\end{matrix}", 1)[0]
        rows = [r.split("&") for r in inner.split(r"\\")]
        ncol = max(len(r) for r in rows)
        colw = [max(tex_width(r[j]) if j < len(r) else 0.0 for r in rows) for j in range(ncol)]
        outer = tex.split(r"\begin{matrix}", 1)[0]
        return tex_width(outer) + sum(colw) + 10.0 * (ncol - 1) + 12.0
    w = 0.0
    while pos < len(tokens):
        t = tokens[pos]
        pos += 1
        w += atom(t, 1.0)
    return w


def _top_level_breaks(tex: str) -> list[str]:
    r"""``tex`` cut before each top-level ``\quad``/``\qquad`` (outside braces and \left..\right): the places
    a long statement may break; punctuation before the space stays on the first piece."""
    pieces, depth, start = [], 0, 0
    for m in re.finditer(r"\\left\b|\\right\b|\\[Bb]igl\b|\\[Bb]igr\b|\{|\}|\\qquad\b|\\quad\b", tex):
        t = m.group(0)
        if t in ("{", r"\left", r"\bigl", r"\Bigl"):
            depth += 1
        elif t in ("}", r"\right", r"\bigr", r"\Bigr"):
            depth -= 1
        elif depth == 0:
            pieces.append(tex[start:m.start()])
            start = m.end()
    pieces.append(tex[start:])
    return [p.strip() for p in pieces if p.strip()]


def statement_lines(tex: str, budget: float = LINE_BUDGET_PT) -> list[str]:
    """A statement packed into display lines of at most ``budget`` points (estimated), broken at its
    top-level ``\\quad`` spaces; one line when it fits."""
    lines: list[str] = []
    for piece in _top_level_breaks(tex):
        if lines and tex_width(lines[-1] + r"\quad " + piece) <= budget:
            lines[-1] += r"\quad " + piece
        else:
            lines.append(piece)
    return lines or [tex]


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: :func:`numerics.io.write_text_atomic`.

    A temporary file in the same folder, then ``os.replace``; the file gets the usual
    ``0o666 & ~umask`` permissions. Imported here, not at module level, so that building
    the CLI parser does not import :mod:`numerics`.
    """
    write_text_atomic(path, text)


def _status_line(sec: Section) -> str:
    if not sec.status:
        return ""
    out = f"{sec.status} ({sec.method})" if sec.method else sec.status
    if sec.status == "proved" and sec.check_sizes:
        out += f"; derive --check re-proves it for {sec.check_sizes}"
    if sec.negative:
        out += f"; negative control: {sec.negative}"
    return out


def _generic_line(sec: Section) -> str:
    return f"{sec.generic} ({sec.generic_method})" if sec.generic_method else sec.generic


# ---- derivation ---------------------------------------------------------------------------------
def _legend() -> list[tuple[str, str]]:
    """Every provenance tag with its meaning (:data:`proofs_check.claim.TAG_LEGEND`)."""
    return list(TAG_LEGEND.items())


def _sizes_tex(text: str) -> str:
    r"""Sizes in escaped prose as math: ``all n, d`` -> ``all $n$, $d$``, ``n = 2..6`` -> ``$n=2,\dots,6$``."""
    text = re.sub(r"\b(all|every) n, d\b", r"\1 $n$, $d$", text)
    text = re.sub(r"\b([nd]) = (\d+)\.\.(\d+)", r"$\1=\2,\\dots,\3$", text)
    rel = {"=": "=", ">=": r"\ge "}
    text = re.sub(r"\b([nd]) (=|>=) (\d+)", lambda m: "$" + m.group(1) + rel[m.group(2)] + m.group(3) + "$", text)
    return text


def _display(statement: str) -> list[str]:
    """A statement as display math, broken into centred lines where it is wider than the page."""
    lines = statement_lines(statement)
    if len(lines) == 1:
        return [r"\[", lines[0], r"\]"]
    return [r"\begin{gather*}", "\\\\\n".join(lines), r"\end{gather*}"]


def to_latex(der: Derivation) -> str:
    """A standalone LaTeX document with every section of ``der``; no line is wider than the page
    (long statements and sums are broken, wide matrices printed entry by entry)."""
    legend = "; ".join(r"[%s] %s" % (tag, tex_escape(text)) for tag, text in _legend())
    lines = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[T1]{fontenc}",  # so that < > | in the plain-text notes print as themselves
        r"\usepackage{lmodern}",  # scalable T1 fonts (texlive-latex-base brings lmodern; no bitmap fallback)
        r"\usepackage{amsmath,amssymb}",
        r"\allowdisplaybreaks",
        r"\setlength{\parindent}{0pt}",
        r"\setlength{\emergencystretch}{3em}",  # prose lines with long inline math break instead of running over
        r"\title{Gradient flow of $\mathcal L(V\varphi(a))$: derived equations}",
        r"\author{softpolar derive %s}" % tex_escape(der.version),
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        (r"Loss \texttt{%s}, link \texttt{%s}, $n=%d$ tokens, $d=%d$. Every equation below was derived by SymPy "
         r"from the definitions (scalar-by-scalar differentiation) and, where a status is given, proven "
         r"for these sizes by \texttt{softpolar derive} (each general statement carries its size-generic "
         r"status: proved for all $n$, $d$, or the sizes it is specific to); a negative control "
         r"(a deliberately wrong variant) is disproved by the same check.")
        % (tex_escape(der.loss), tex_escape(der.link), der.n, der.d),
        "",
        r"\emph{Provenance tags.} " + legend + ".",
        "",
    ]
    for sec in der.sections:
        lines.append(r"\section*{\raggedright %s \quad [%s]}" % (tex_text(sec.title), tex_escape(sec.provenance)))
        if sec.key:
            lines.append(r"\texttt{%s}\\" % tex_escape(sec.key))
        if sec.statement:
            lines += _display(sec.statement)
        if sec.generic:
            lines.append(r"\emph{General statement:} %s\\" % _sizes_tex(tex_escape(_generic_line(sec))))
        if sec.equations:
            lines.append(r"\begin{align*}")
            lines.append("\\\\\n".join(sec.equations))
            lines.append(r"\end{align*}")
        if sec.note:
            lines.append(r"\emph{Note.} %s\\" % tex_text(sec.note))
        if sec.status:
            lines.append(r"\emph{Expansion at $n=%d$, $d=%d$:} %s" % (der.n, der.d,
                                                                        _sizes_tex(tex_escape(_status_line(sec)))))
        lines.append("")
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


def to_markdown(der: Derivation) -> str:
    """Markdown with ``$$`` display math (GitHub / Jupyter flavour)."""
    legend = "; ".join(f"[{tag}] {text}" for tag, text in _legend())
    out = [f"# Derived equations: loss `{der.loss}`, link `{der.link}`, n = {der.n}, d = {der.d}", "",
           "Derived by SymPy from the definitions. Each general statement carries its size-generic status "
           "(proved for all n, d, or the sizes it is specific to); each expansion its proof at these sizes, "
           f"with a negative control. Provenance tags: {legend}.", ""]
    for sec in der.sections:
        out.append(f"## {sec.title} [{sec.provenance}]")
        if sec.key:
            out.append(f"`{sec.key}`")
        out.append("")
        if sec.statement:
            out += ["$$", sec.statement, "$$", ""]
        if sec.generic:
            out += [f"**General statement**: {_generic_line(sec)}", ""]
        if sec.equations:
            out += ["$$", r"\begin{aligned}", "\\\\\n".join(sec.equations), r"\end{aligned}", "$$", ""]
        if sec.note:
            out += [f"*Note.* {sec.note}", ""]
        if sec.status:
            out += [f"**Expansion** (n = {der.n}, d = {der.d}): {_status_line(sec)}", ""]
    return "\n".join(out)


def latex_fragment(der: Derivation) -> str:
    """The sections of ``der`` as MathJax-ready text (a notebook's ``text/latex``): plain lines with
    inline ``$...$`` and ``$$...$$`` display math, no preamble."""
    out = [f"Loss {der.loss}, link {der.link}, $n={der.n}$, $d={der.d}$", ""]
    for sec in der.sections:
        out.append(f"{sec.title} [{sec.provenance}]")
        if sec.statement:
            out.append(f"$${sec.statement}$$")
        if sec.equations:
            out.append("$$\\begin{aligned}" + "\\\\".join(sec.equations) + "\\end{aligned}$$")
        if sec.status:
            out.append(f"at $n={der.n}$, $d={der.d}$: {_status_line(sec)}")
        out.append("")
    return "\n".join(out)


def to_json(der: Derivation) -> str:
    """The derivation as JSON (equations as LaTeX strings)."""
    return json.dumps(asdict(der), indent=2) + "\n"


RENDERERS = {"latex": to_latex, "markdown": to_markdown, "json": to_json}


# ---- identity table ---------------------------------------------------------------------------
def summarize(rows) -> list[dict]:
    """One summary per identity: n-range, d values, worst status, methods, negative control, generic."""
    out: dict[str, dict] = {}
    for r in rows:
        s = out.setdefault(r.id, {"id": r.id, "provenance": r.provenance, "ns": [], "ds": {},
                                  "status": "proved", "methods": set(), "negative": "disproved",
                                  "generic": "", "generic_label": "", "generic_method": "", "generic_scope": "",
                                  "generic_negative": "", "generic_detail": "", "generic_negative_detail": "",
                                  "generic_uses": [], "generic_assumptions": [],
                                  "seconds": 0.0, "passed": True, "detail": ""})
        s["passed"] = s["passed"] and r.passed
        s["seconds"] += r.seconds
        if r.n is None:
            s.update(generic=r.status, generic_label=r.generic_label, generic_method=r.method,
                     generic_scope=r.scope, generic_negative=r.negative_status, generic_detail=r.detail,
                     generic_negative_detail=r.negative_detail, generic_uses=list(r.uses),
                     generic_assumptions=list(r.assumptions))
            continue
        s["ns"].append(r.n)
        s["ds"][r.n] = list(r.ds)
        s["methods"].add(r.method)
        if _WORST.index(r.status) < _WORST.index(s["status"]):
            s["status"], s["detail"] = r.status, r.detail
        if _NEG_WORST.index(r.negative_status) < _NEG_WORST.index(s["negative"]):
            s["negative"] = r.negative_status
    for s in out.values():
        ns = sorted(s["ns"])
        s["n_range"] = (f"{ns[0]}-{ns[-1]}" if len(ns) > 1 else str(ns[0])) if ns else "-"
        s["d_text"] = _d_text(s["ds"])
        s["ds"] = {str(n): ds for n, ds in sorted(s["ds"].items())}
        s["methods"] = "+".join(sorted(s["methods"]))
        s["seconds"] = round(s["seconds"], 2)
    return list(out.values())


def _d_text(ds_by_n: dict) -> str:
    """'1,2,3' if every n has the same d values, else e.g. '1,2,3 (n=2-4); 1,2 (n=5-6)'."""
    groups: list = []
    for n in sorted(ds_by_n):
        ds = ",".join(map(str, ds_by_n[n]))
        if groups and groups[-1][0] == ds and groups[-1][2] == n - 1:
            groups[-1][2] = n
        else:
            groups.append([ds, n, n])
    if len(groups) <= 1:
        return groups[0][0] if groups else "-"
    return "; ".join(f"{ds} (n={lo})" if lo == hi else f"{ds} (n={lo}-{hi})" for ds, lo, hi in groups)


_HEAD = ("id", "n", "d", "status", "method", "negative control", "size-generic", "generic method",
         "generic control", "prov.")


def _cells(s: dict) -> tuple:
    return (s["id"], s["n_range"], s["d_text"], s["status"], s["methods"], s["negative"],
            s["generic_label"] or "-", s["generic_method"] or "-", s["generic_negative"] or "-", s["provenance"])


def generic_notes(rows) -> list[str]:
    """One line per size-generic proof: its status, what it uses and what it still assumes.

    An assumption shared by at least half of the proofs is listed once, on a first line.
    """
    sums = [s for s in summarize(rows) if s["generic"]]
    counts: dict = {}
    for s in sums:
        for x in s["generic_assumptions"]:
            counts[x] = counts.get(x, 0) + 1
    common = [x for x, c in counts.items() if len(sums) > 1 and 2 * c >= len(sums)]
    out = [f"every proof marked (*) assumes: {'; '.join(common)}"] if common else []
    for s in sums:
        own = [x for x in s["generic_assumptions"] if x not in common]
        line = f"{s['id']}: {s['generic_label']} [{s['generic_method']}]"
        if any(x in common for x in s["generic_assumptions"]):
            line += " (*)"
        if s["generic_uses"]:
            line += "; uses " + ", ".join(s["generic_uses"])
        if own:
            line += "; assumes " + "; ".join(own)
        if s["generic"] != "proved":
            line += f"; why: {s['generic_detail']}"
        out.append(line)
    return out


def table_markdown(rows, *, footer: str = "") -> str:
    """The ``derive --check`` table in Markdown (readable as plain text)."""
    sums = summarize(rows)
    body = [_cells(s) for s in sums]
    widths = [max(len(str(c)) for c in col) for col in zip(_HEAD, *body)]
    fmt = "| " + " | ".join(f"{{:{w}}}" for w in widths) + " |"
    lines = [fmt.format(*_HEAD), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt.format(*b) for b in body]
    notes = generic_notes(rows)
    if notes:
        lines += ["", "Size-generic proofs (every n >= 2 and d >= 1 unless the scope says otherwise): "
                      "what each uses and still assumes", ""]
        lines += [f"- {x}" for x in notes]
    if footer:
        lines += ["", footer]
    return "\n".join(lines) + "\n"


def table_latex(rows, *, footer: str = "") -> str:
    """The ``derive --check`` table as a standalone LaTeX document."""
    body = [" & ".join(tex_escape(str(c)) for c in _cells(s)) + r" \\" for s in summarize(rows)]
    return "\n".join([
        r"\documentclass[10pt]{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{lmodern}",
        r"\usepackage{amsmath,amssymb}", r"\begin{document}",
        r"\section*{softpolar derive --check}", r"{\small", r"\begin{tabular}{" + "l" * len(_HEAD) + "}",
        " & ".join(r"\textbf{%s}" % tex_escape(h) for h in _HEAD) + r" \\ \hline",
        *body, r"\end{tabular}}", "",
        r"\section*{Size-generic proofs: uses and assumptions}",
        *[tex_escape(x) + r"\\" for x in generic_notes(rows)], "",
        tex_escape(footer), r"\end{document}", "",
    ])


def table_json(rows, *, summary: dict | None = None) -> str:
    """Rows (one per identity and n, generic rows with ``n = null``) plus per-identity summaries."""
    return json.dumps({"summary": summary or {}, "identities": summarize(rows),
                       "rows": [r.to_dict() for r in rows]}, indent=2) + "\n"
