r"""MkDocs hook: the pages that are generated, never copied by hand.

- ``claims.md``: the live claim registry (:func:`proofs_check.registry`), one table and one section per
  claim (statement, assumptions, check, negative control, provenance);
- ``performance.md``: the committed ``softpolar bench --json`` reports in ``docs/data/bench-*.json``,
  rendered with the benchmark's own markdown formatter (each report records the command that made it);
- ``api/softpolar.md``: the public names of ``import softpolar`` (its lazy export table), each linked to
  the object it resolves to;
- ``tutorials/*.ipynb``: every notebook in ``examples/``, executed at build time by mkdocs-jupyter;
- the optional topic pages (``formal.md``, ``cluster.md``, ``sinks.md``, ``models.md``) join the nav when
  they exist;
- glossary links: the first use of a glossary term on every page links to its entry
  (:data:`GLOSSARY_TERMS`; ``tests/test_docs.py`` checks that every entry exists).

Pure functions (:func:`claims_markdown`, :func:`performance_markdown`, :func:`softpolar_api_markdown`,
:func:`link_glossary_terms`) are tested without MkDocs.
"""
from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
BENCH_GLOB = "data/bench-*.json"

#: (nav title, file) of the topic pages other changes may add; listed when the file exists
OPTIONAL_TOPICS = (
    ("Formal proofs", "formal.md"),
    ("Running on a cluster", "cluster.md"),
    ("Attention sinks", "sinks.md"),
    ("Models and links", "models.md"),
)

#: glossary anchor -> regular expression of the term as it appears in prose (first use per page is linked)
GLOSSARY_TERMS = {
    "value-softmax-model": r"value-softmax model",
    "polarization": r"polari[sz]ation",
    "provenance-tags": r"provenance tags?",
    "negative-control": r"negative controls?",
    "control-witness": r"control witness(?:es)?",
    "mutant": r"mutants?|mutation testing",
    "tau-clock": r"tau clock|internal clock|tau-system",
    "gbs": r"GBS",
    "taylor-backend": r"Taylor backend|taylor backend",
    "dps": r"dps",
    "index-normal-form": r"index normal form",
    "exact-zero": r"exact-zero",
    "trapping-lemma": r"trapping lemma",
    "ri-plus": r"R_i\^\+|\$R_i\^\+\$",
    "arb-balls": r"arb balls|arb-ball",
    "certificate": r"certificates?",
    "c1-lohner": r"C1[- ]Lohner",
    "atlas": r"basin atlas(?:es)?",
    "float64-screen": r"float64 screen",
    "profile": r"quick profile|full profile",
    "attention-sink": r"attention sinks?|sink heads?",
    "flip-rate": r"flip rate",
    "paper-notes": r"reading notes",
}


# --------------------------------------------------------------------------------------------- claims
def _md_cell(text) -> str:
    """One table cell or line of plain text: whitespace collapsed, markdown's special characters escaped."""
    text = " ".join(str(text or "").split())
    for ch in ("\\", "|", "*", "_", "`", "[", "]"):
        text = text.replace(ch, "\\" + ch)
    return text.replace("<", "&lt;")


def claims_markdown(reg: dict | None = None) -> str:
    """The claims page, from the registry (``proofs_check.registry()`` when ``reg`` is None)."""
    if reg is None:
        import softpolar  # its import registers the upper layer's claims (C31-C33, ATLAS)

        reg = softpolar.registry()
    from proofs_check.claim import provenance_note

    out = [
        "# Claims",
        "",
        "This page is generated from the live claim registry when the site is built "
        f"({len(reg)} claims; `softpolar list` prints the same registry). Every claim has a negative control "
        "that the same check must reject; `softpolar verify` fails if a control passes. The provenance tags "
        "are explained on the [paper notes](paper-notes.md#provenance-tags) page.",
        "",
        '<div class="claims-table" markdown>',
        "",
        "| id | title | tags | expected | evidence |",
        "|---|---|---|---|---|",
    ]
    for cid, c in reg.items():
        anchor = _anchor(cid)
        profiles = tuple(getattr(c, "profiles", ()) or ())
        only = f" ({', '.join(profiles)} profile only)" if profiles and len(profiles) == 1 else ""
        out.append(f"| [{cid}](#{anchor}) | {_md_cell(c.title)}{only} | {_md_cell(c.provenance)} | "
                   f"{_md_cell(c.expected)} | {_md_cell(c.evidence_kind)} |")
    out.append("")
    out.append("</div>")
    out.append("")
    for cid, c in reg.items():
        out.append(f"## {cid}: {_md_cell(c.title)} {{#{_anchor(cid)}}}")
        out.append("")
        note = provenance_note(c.provenance)
        rows = [
            ("Statement", getattr(c, "statement", "")),
            ("Provenance", f"`{c.provenance}`" + (f" ({note})" if note else "")),
            ("Expected verdict", getattr(c, "expected", "")),
            ("Assumptions", getattr(c, "assumptions", "")),
            ("Evidence", getattr(c, "evidence_kind", "")),
            ("Check", getattr(c, "check_description", "")),
        ]
        control = getattr(c, "control", None)
        if control is not None:
            rows.append(("Negative control", getattr(control, "description", "")))
        witness = getattr(c, "witness", None)
        if witness is not None:
            kind = getattr(witness, "kind", "")
            why = getattr(witness, "weak_because", "")
            rows.append(("Control witness", f"{getattr(witness, 'description', '')}"
                         + (f" ({kind}" + (f": {why}" if why else "") + ")" if kind else "")))
        engines = getattr(c, "engines", ())
        if engines:
            rows.append(("Engines (mutant scope)", ", ".join(f"`{e}`" for e in engines)))
        for label, value in rows:
            if value:
                out.append(f"- **{label}:** {' '.join(str(value).split())}")
        out.append("")
    return "\n".join(out)


def _anchor(cid: str) -> str:
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", cid.lower()).strip("-")


# ---------------------------------------------------------------------------------------- performance
def performance_markdown(reports: list[tuple[str, dict]]) -> str:
    """The generated part of the performance page: one section per committed bench report."""
    from softpolar.benchmarks import format_markdown

    if not reports:
        return "*(no committed benchmark report in `docs/data/`)*"
    out = []
    for name, report in reports:
        command = report.get("command") or "softpolar bench"
        out.append(f"### `{command}`")
        out.append("")
        out.append(f"Report: `docs/{name}` ({report.get('mode', '?')} mode, "
                   f"{report.get('wall_s', 0):.0f} s of wall time).")
        out.append("")
        text = format_markdown(report, command=command)
        if not any(row.get("lines") for row in report.get("rows", [])):  # facts only: no ratio table
            text = "\n".join(text.split("\n")[2:]).lstrip("\n")
        out.append(text)
        out.append("")
    return "\n".join(out)


def times_markdown(reports: list[tuple[str, dict]]) -> str:
    """Every measured wall time in the committed reports (bench row 5: the CLI's own commands)."""
    out = ["| what | wall time | peak memory | report | machine |", "|---|---|---|---|---|"]
    found = False
    for name, report in reports:
        m = report.get("machine", {})
        machine = f"{m.get('cpu_count', '?')} cores ({m.get('cpu_model', '?')}), load {m.get('loadavg_start', '?')}"
        for row in report.get("rows", []):
            facts = row.get("facts", [])
            mem = {f["label"].replace(" peak memory (max RSS)", ""): f for f in facts if "peak memory" in f["label"]}
            for f in facts:
                if not f["label"].endswith("wall time"):
                    continue
                what = f["label"][: -len(" wall time")]
                secs = float(f["value"])
                mm = mem.get(what)
                peak = f"{mm['value']} {mm.get('unit', '')}".strip() if mm else ""
                out.append(f"| `{what}` | {_fmt_duration(secs)} | {peak} | `docs/{name}` | {machine} |")
                found = True
    return "\n".join(out) if found else "*(no committed report measures a command's wall time yet)*"


def _fmt_duration(secs: float) -> str:
    return f"{secs:.0f} s" if secs < 120 else f"{int(secs // 60)} min {secs % 60:02.0f} s ({secs:.0f} s)"


def load_bench_reports() -> list[tuple[str, dict]]:
    reports = []
    for path in sorted(DOCS.glob(BENCH_GLOB)):
        reports.append((path.relative_to(DOCS).as_posix(), json.loads(path.read_text(encoding="utf-8"))))
    return reports


# ------------------------------------------------------------------------------------------- softpolar
def softpolar_api_markdown() -> str:
    """``import softpolar``'s public names, each with the object it resolves to."""
    import softpolar

    exports = getattr(softpolar, "_EXPORTS", None) or {}
    out = [
        "# `softpolar`",
        "",
        "::: softpolar",
        "    options:",
        "      show_root_heading: false",
        "      members: false",
        "",
        "`import softpolar` is cheap: each name below is resolved on first access. The table is generated "
        "from the package's export table when the site is built.",
        "",
        "| name | is |",
        "|---|---|",
    ]
    direct = []
    layer_pages = {"theorems": "theorems.md", "numerics": "numerics.md", "proofs_check": "proofs_check.md"}
    for name, (module, attr) in exports.items():
        if attr is None:  # the name is a module (a callable wing, e.g. softpolar.atlas)
            module, attr = module.rsplit(".", 1)
        page = layer_pages.get(module)
        if page:
            # data without a docstring (a dict, a constant) has no entry of its own: link the layer's page
            documented = callable(getattr(importlib.import_module(module), attr, None))
            anchor = f"#{module}.{attr}" if documented else ""
            target = f"[`{module}.{attr}`]({page}{anchor})"
        else:
            target = f"[`{module}.{attr}`](#{module}.{attr})"
            direct.append((module, attr))
        out.append(f"| `softpolar.{name}` | {target} |")
    out.append("")
    if direct:
        out.append("## Names defined above the three layers")
        out.append("")
        for module, attr in direct:
            out.append(f"::: {module}.{attr}")
            out.append("    options:")
            out.append("      heading_level: 3")
            out.append("")
    return "\n".join(out)


# -------------------------------------------------------------------------------------------- glossary
_PROTECT = re.compile(
    r"(```.*?```|~~~.*?~~~"          # fenced code
    r"|`[^`\n]*`"                    # inline code
    r"|\$\$.*?\$\$|\$[^$\n]+\$"      # math
    r"|\[[^\]\n]*\]\([^)\n]*\)"      # links
    r"|\[[^\]\n]*\]\[[^\]\n]*\]"     # reference links
    r"|<[^>\n]+>"                    # html tags
    r"|^#+ [^\n]*$"                  # headings
    r"|^:::[^\n]*$"                  # mkdocstrings directives
    r"|\{#[^}\n]*\})",               # attribute lists
    re.S | re.M,
)


def link_glossary_terms(markdown: str, glossary_url: str, skip: set[str] = frozenset()) -> str:
    """Link the first use of every glossary term in ``markdown`` to ``glossary_url#anchor``.

    Code, math, links, headings and HTML are left alone; a term already linked on the page is not linked
    again.
    """
    parts = _PROTECT.split(markdown)
    done = set(skip)
    for anchor in GLOSSARY_TERMS:
        if f"{glossary_url}#{anchor})" in markdown or f"(#{anchor})" in markdown:
            done.add(anchor)
    for anchor, pattern in GLOSSARY_TERMS.items():
        if anchor in done:
            continue
        rx = re.compile(rf"(?<![\w/#-])({pattern})(?![\w-])")
        for i in range(0, len(parts), 2):   # even indices: prose (odd: protected)
            m = rx.search(parts[i])
            if m:
                parts[i] = (parts[i][:m.start()] + f"[{m.group(1)}]({glossary_url}#{anchor})"
                            + parts[i][m.end():])
                done.add(anchor)
                # the new link must not be rewritten by a later term: re-split this part
                sub = _PROTECT.split(parts[i])
                parts[i:i + 1] = sub
                break
    return "".join(parts)


# ----------------------------------------------------------------------------------------- MkDocs hooks
def _ensure_path():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def on_config(config, **kwargs):
    _ensure_path()
    nav = config.nav or []
    for entry in nav:
        if not isinstance(entry, dict):
            continue
        (title, items), = entry.items()
        if title == "Topics" and isinstance(items, list):
            present = {next(iter(i.values())) for i in items if isinstance(i, dict)}
            for label, fname in OPTIONAL_TOPICS:
                if (DOCS / fname).is_file() and fname not in present:
                    items.append({label: fname})
        if title == "Tutorials" and isinstance(items, list):
            present = {next(iter(i.values())) for i in items if isinstance(i, dict)}
            for nb in sorted(EXAMPLES.glob("*.ipynb")):
                uri = f"tutorials/{nb.name}"
                if uri not in present:
                    items.append({nb.stem.replace("_", " ").capitalize(): uri})
    return config


try:  # MkDocs >= 1.4: run before mkdocs-jupyter wraps the notebooks
    from mkdocs.plugins import event_priority
except ImportError:  # pragma: no cover
    def event_priority(_):
        return lambda f: f


@event_priority(100)
def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    _ensure_path()
    generated = {
        "claims.md": claims_markdown(),
        "api/softpolar.md": softpolar_api_markdown(),
    }
    for uri, content in generated.items():
        old = files.get_file_from_path(uri)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, uri, content=content))
    # the notebooks live in examples/: a temporary source folder links them in as tutorials/NAME.ipynb (a
    # File with a real src_dir, which mkdocs-jupyter's wrapper needs; File.generated has none)
    global _TUTORIALS_DIR
    if _TUTORIALS_DIR is None:
        _TUTORIALS_DIR = tempfile.mkdtemp(prefix="softpolar-docs-")
    (Path(_TUTORIALS_DIR) / "tutorials").mkdir(exist_ok=True)
    for nb in sorted(EXAMPLES.glob("*.ipynb")):
        uri = f"tutorials/{nb.name}"
        if files.get_file_from_path(uri) is None:
            link = Path(_TUTORIALS_DIR) / uri
            if not link.exists():
                link.symlink_to(nb)
            files.append(File(uri, src_dir=_TUTORIALS_DIR, dest_dir=config.site_dir,
                              use_directory_urls=config.use_directory_urls))
    return files


_TUTORIALS_DIR = None


def on_shutdown(**kwargs):
    global _TUTORIALS_DIR
    if _TUTORIALS_DIR is not None:
        shutil.rmtree(_TUTORIALS_DIR, ignore_errors=True)
        _TUTORIALS_DIR = None


_SPHINX_ROLE = re.compile(r":(func|class|mod|meth|data|attr|exc|obj|py:\w+):<code>(~?)([\w.]+)(\(\))?</code>")


def sphinx_roles_to_autorefs(html: str, package: str) -> str:
    """Docstrings use Sphinx roles (``:func:`simulate```); rendered, they read ``:func:<code>simulate</code>``.

    Each becomes an optional cross-reference (linked when the object has an entry, plain code otherwise);
    an unqualified name is looked up in ``package``, ``~`` keeps only the last component as the title.
    """
    def repl(m):
        role, tilde, name, call = m.group(1), m.group(2), m.group(3).lstrip("."), m.group(4) or ""
        absolute = role.endswith("mod") or "." in name or name == package  # modules are named in full
        ident = name if absolute else f"{package}.{name}"
        title = (name.rsplit(".", 1)[-1] if tilde else name) + call
        return f'<autoref identifier="{ident}" optional><code>{title}</code></autoref>'

    return _SPHINX_ROLE.sub(repl, html)


def on_page_content(html, page, config, files, **kwargs):
    src = page.file.src_uri
    if src.startswith("api/"):
        html = sphinx_roles_to_autorefs(html, src[len("api/"):-len(".md")])
    return html


def on_page_markdown(markdown, page, config, files, **kwargs):
    src = page.file.src_uri
    if src == "performance.md":
        reports = load_bench_reports()
        markdown = markdown.replace("<!-- softpolar:bench -->", performance_markdown(reports))
        markdown = markdown.replace("<!-- softpolar:times -->", times_markdown(reports))
    if src == "paper-notes.md":
        import softpolar

        lines = [f"- **{cid}** `[{c.provenance}]` {_md_cell(c.title)}" for cid, c in softpolar.registry().items()]
        markdown = markdown.replace("<!-- softpolar:claims-short -->", "\n".join(lines))
    if src.endswith(".md") and src != "glossary.md" and not src.startswith("api/"):
        depth = src.count("/")
        markdown = link_glossary_terms(markdown, "../" * depth + "glossary.md")
    return markdown
