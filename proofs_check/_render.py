r"""Rendering of derived equations and of the identity table: LaTeX, Markdown, JSON.

Inputs are plain data built by :mod:`proofs_check._cmd_derive`:

* a :class:`Derivation` (loss, link, sizes, and a list of :class:`Section`, each with
  its identity id, title, provenance tag, general statement, component equations for
  the requested sizes, notes, and the proof status at those sizes);
* a list of :class:`theorems.IdentityResult` rows from :func:`theorems.run_identities`.

``to_latex`` returns a standalone ``article`` document (``amsmath``, ``amssymb``)
that compiles with ``pdflatex``; equations sit in ``align*`` (one ``&=`` per
line) so that a researcher can copy them. Plain text (titles, notes) is escaped.
:func:`write_atomic` writes a file atomically (temporary file in the same folder,
then ``os.replace``; :mod:`numerics._io`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

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


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: :func:`numerics._io.write_text_atomic`.

    A temporary file in the same folder, then ``os.replace``; the file gets the usual
    ``0o666 & ~umask`` permissions. Imported here, not at module level, so that building
    the CLI parser does not import :mod:`numerics`.
    """
    from numerics._io import write_text_atomic

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
def to_latex(der: Derivation) -> str:
    """A standalone LaTeX document with every section of ``der``."""
    lines = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[T1]{fontenc}",  # so that < > | in the plain-text notes print as themselves
        r"\usepackage{lmodern}",  # scalable T1 fonts (texlive-latex-base brings lmodern; no bitmap fallback)
        r"\usepackage{amsmath,amssymb}",
        r"\allowdisplaybreaks",
        r"\setlength{\parindent}{0pt}",
        r"\title{Gradient flow of $\mathcal L(V\varphi(a))$: derived equations}",
        r"\author{softpolar derive %s}" % tex_escape(der.version),
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        (r"Loss \texttt{%s}, link \texttt{%s}, $n=%d$ tokens, $d=%d$. Every equation below was derived by SymPy "
         r"from the definitions (scalar-by-scalar differentiation) and, where a status is given, proven "
         r"for these sizes by \texttt{softpolar derive} (each general statement carries its size-generic "
         r"status: proved for all $n$, $d$, or the sizes it is specific to); a negative control "
         r"(a deliberately wrong variant) "
         r"is disproved by the same check. Provenance tags: [A] the paper per public reading notes, "
         r"[D] derived for softpolar (not the paper's own statement), [C] the authors' code, [P] the paper.")
        % (tex_escape(der.loss), tex_escape(der.link), der.n, der.d),
        "",
    ]
    for sec in der.sections:
        lines.append(r"\section*{%s \quad [%s]}" % (tex_escape(sec.title), tex_escape(sec.provenance)))
        if sec.key:
            lines.append(r"\texttt{%s}\\" % tex_escape(sec.key))
        if sec.statement:
            lines += [r"\[", sec.statement, r"\]"]
        if sec.generic:
            lines.append(r"\emph{General statement:} %s\\" % tex_escape(_generic_line(sec)))
        if sec.equations:
            lines.append(r"\begin{align*}")
            lines.append("\\\\\n".join(sec.equations))
            lines.append(r"\end{align*}")
        if sec.note:
            lines.append(r"\emph{Note.} %s\\" % tex_escape(sec.note))
        if sec.status:
            lines.append(r"\emph{Expansion at $n=%d$, $d=%d$:} %s" % (der.n, der.d, tex_escape(_status_line(sec))))
        lines.append("")
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


def to_markdown(der: Derivation) -> str:
    """Markdown with ``$$`` display math (GitHub / Jupyter flavour)."""
    out = [f"# Derived equations: loss `{der.loss}`, link `{der.link}`, n = {der.n}, d = {der.d}", "",
           "Derived by SymPy from the definitions. Each general statement carries its size-generic status "
           "(proved for all n, d, or the sizes it is specific to); each expansion its proof at these sizes, "
           "with a negative control. Provenance: [A] paper per reading notes, [D] derived for softpolar, "
           "[C] authors' code, [P] paper.", ""]
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


def claim_latex(claim) -> str:
    """A :class:`~proofs_check.Claim` as MathJax-ready text: id, provenance, title, statement, expected verdict."""
    return (f"{claim.id} [{claim.provenance}] {claim.title}: $${claim.statement}$$"
            f"expected: {claim.expected}; negative control: {claim.control.description}")


def result_latex(result) -> str:
    """A :class:`~proofs_check.ClaimResult` as MathJax-ready text: the claim, its verdict and its control's."""
    c = result.claim
    return (f"{c.id} [{c.provenance}] {c.title}: $${c.statement}$$"
            f"{'passed' if result.passed else 'FAILED'}: {result.outcome.verdict} (expected {c.expected}); "
            f"negative control {result.control.verdict} (needs the opposite); {result.seconds:.1f} s")


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
