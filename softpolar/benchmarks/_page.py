"""``softpolar bench --render-page PAGE REPORT.json ...``: the performance page's runs section from bench reports.

Issue 40 asks for the spread over consecutive runs, not one run, with the load each ran at. This module reads
several ``softpolar bench --json`` reports (one run each, the same rows) and writes one markdown section:

* the runs: each report's command, wall time against the documented time of its mode (:data:`DOCUMENTED_S`),
  the load average at its start and end, how many targets it met;
* the targets across the runs: each target line's ratio in every run (with the range of its interleaved
  repetitions where the line is a median of several, ``ratios``), the median and range over the runs, and
  in how many runs it was met;
* what each row cost: its wall and CPU seconds in every run, the median, the load at the row's start.

The section replaces the text between :data:`BEGIN` and :data:`END` in ``PAGE`` (both must be there: the
command never writes a page that lacks them), atomically. Nothing here runs a benchmark or imports numpy.
"""
from __future__ import annotations

import statistics
from pathlib import Path

from theorems import InvalidArgument
from numerics.io import read_json, write_text_atomic

BEGIN = "<!-- softpolar:bench-runs -->"
END = "<!-- /softpolar:bench-runs -->"

#: the documented wall time of each mode on an idle 2-core machine (``--quick``'s help and docs/performance.md
#: quote it); ``None``: no time is promised. The per-row costs behind the quick figure are on the performance page.
DOCUMENTED_S = {"smoke": None, "quick": 15 * 60, "full": None}

_REPORT_KEYS = ("mode", "wall_s", "machine", "rows")


def documented_time(mode: str, rows, default) -> float | None:
    """The documented wall time of a run of ``rows`` in ``mode``: :data:`DOCUMENTED_S` for the whole default set
    ``default`` of the mode (in its order), ``None`` for a subset (no time is promised for it)."""
    doc = DOCUMENTED_S.get(mode)
    return doc if doc is not None and list(rows) == list(default) else None


def load_report(path) -> dict:
    """One ``softpolar bench --json`` report; ``InvalidArgument`` naming the file and what is wrong."""
    report = read_json(path, "report", expected="a `softpolar bench --json` report")
    missing = [k for k in _REPORT_KEYS if k not in report]
    if missing:
        raise InvalidArgument(f"report={str(path)!r} has no {', '.join(missing)}; expected a "
                              "`softpolar bench --json` report")
    return report


def _med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _load(la) -> str:
    return "?" if not la else f"{la[0]:.2f}"


def _num(x, fmt="{:.3g}") -> str:
    return "-" if x is None else fmt.format(x)


def _line_key(row, line):
    return row["row"], line["case"], line["ratio_label"]


def _targets(reports):
    """``{(row, case, ratio_label): {"target", "runs": [line or None per report]}}`` in first-seen order."""
    out: dict = {}
    for i, report in enumerate(reports):
        for row in report["rows"]:
            for line in row.get("lines", []):
                if not line.get("target"):
                    continue
                entry = out.setdefault(_line_key(row, line), {"target": line["target"], "runs": [None] * len(reports)})
                entry["runs"][i] = line
    return out


def _cell(line) -> str:
    if line is None:
        return "not run"
    if line.get("ratio") is None:
        return "-"
    text = f"{line['ratio']:.3g}"
    rs = line.get("ratios")
    if rs and len(rs) > 1:
        text += f" ({min(rs):.3g}-{max(rs):.3g}, {len(rs)} reps)"
    return text + ("" if line.get("met") else " **missed**")


def summarize(reports) -> dict:
    """The numbers the section shows, computed from the reports (also what the tests check)."""
    runs = []
    for report in reports:
        m = report["machine"]
        doc = report.get("documented_s")
        tgt = [t for row in report["rows"] for t in row.get("lines", []) if t.get("target")]
        runs.append({"command": report.get("command"), "mode": report["mode"], "wall_s": report["wall_s"],
                     "documented_s": doc, "within": None if doc is None else report["wall_s"] <= doc,
                     "load_start": m.get("loadavg_start"), "load_end": m.get("loadavg_end"),
                     "targets": len(tgt), "met": sum(bool(t.get("met")) for t in tgt),
                     "errors": [row["row"] for row in report["rows"] if row.get("status") == "error"]})
    targets = []
    for (row, case, label), entry in _targets(reports).items():
        ratios = [ln["ratio"] for ln in entry["runs"] if ln is not None and ln.get("ratio") is not None]
        pooled = [r for ln in entry["runs"] if ln is not None for r in (ln.get("ratios") or [ln.get("ratio")])
                  if r is not None]
        targets.append({"row": row, "case": case, "ratio_label": label, "target": entry["target"],
                        "cells": [_cell(ln) for ln in entry["runs"]], "median": _med(ratios),
                        "min": min(ratios) if ratios else None, "max": max(ratios) if ratios else None,
                        "reps": len(pooled), "met": sum(bool(ln and ln.get("met")) for ln in entry["runs"]),
                        "of": sum(ln is not None for ln in entry["runs"]), "runs": len(reports)})
    rows: dict = {}
    for i, report in enumerate(reports):
        for row in report["rows"]:
            e = rows.setdefault(row["row"], {"row": row["row"], "title": row["title"], "wall": [None] * len(reports),
                                             "cpu": [None] * len(reports), "load": [None] * len(reports)})
            e["wall"][i], e["cpu"][i], e["load"][i] = row.get("wall_s"), row.get("cpu_s"), row.get("loadavg_start")
    costs = [dict(e, wall_median=_med(e["wall"]), cpu_median=_med(e["cpu"])) for _, e in sorted(rows.items())]
    return {"runs": runs, "targets": targets, "costs": costs,
            "wall_median": _med([r["wall_s"] for r in runs]),
            "all_met": all(t["met"] == t["of"] for t in targets) if targets else None,
            "complete": all(t["of"] == t["runs"] for t in targets)}


def render(reports, names) -> str:
    """The markdown section (without the markers) for ``reports`` (read from the files ``names``)."""
    s = summarize(reports)
    n = len(reports)
    out = [f"Generated by `softpolar bench --render-page` from {n} report(s), in the order given: "
           + ", ".join(f"`{name}`" for name in names) + ". Each run's load average is the 1-minute figure "
           "at its start and end; a run at a load near or above the core count says little about an idle "
           "machine.", "",
           "| run | command | wall time | documented | load start -> end | targets met | rows with an error |",
           "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(s["runs"], 1):
        doc = "-" if r["documented_s"] is None else (f"{r['documented_s'] / 60:.0f} min: "
                                                     + ("within" if r["within"] else "**over**"))
        out.append(f"| {i} | `{r['command'] or '?'}` | {r['wall_s']:.0f} s ({r['wall_s'] / 60:.1f} min) | {doc} | "
                   f"{_load(r['load_start'])} -> {_load(r['load_end'])} | {r['met']} of {r['targets']} | "
                   f"{', '.join(map(str, r['errors'])) or 'none'} |")
    out += ["", f"Median wall time over the runs: {_num(s['wall_median'], '{:.0f}')} s.", ""]
    if s["targets"]:
        out += ["Every target over the runs (a run's cell is the row's own result: for a line measured in "
                "repeated interleaved pairs, the median of its pairs, with their range):", "",
                "| row | case | ratio | target | " + " | ".join(f"run {i}" for i in range(1, n + 1))
                + " | median over runs (range) | met |",
                "|---|---|---|---|" + "---|" * n + "---|---|"]
        for t in s["targets"]:
            rng = "" if t["min"] is None else f" ({t['min']:.3g}-{t['max']:.3g})"
            met = (f"{t['met']} of {t['of']}" + ("" if t["met"] == t["of"] else " **missed**")
                   + ("" if t["of"] == t["runs"] else f", not run in {t['runs'] - t['of']}"))
            out.append(f"| {t['row']} | {t['case']} | {t['ratio_label']} | {t['target']} | "
                       + " | ".join(t["cells"]) + f" | {_num(t['median'])}{rng} | {met} |")
        out.append("")
        verdict = ("**not every target met in every run**" if not s["all_met"] else
                   "every target met in every run" if s["complete"] else
                   "every target met in every run that measured it (not every run measured every target)")
        out += [f"Over these runs: {verdict}.", ""]
    out += ["What each row cost (wall seconds; CPU seconds of the bench and its reaped children; the 1-minute load "
            "at the row's start), run by run:", "",
            "| row | title | " + " | ".join(f"run {i}" for i in range(1, n + 1)) + " | median wall | median CPU |",
            "|---|---|" + "---|" * n + "---|---|"]
    for c in s["costs"]:
        cells = [("not run" if w is None else f"{w:.0f} s, {_num(cpu, '{:.0f}')} CPU s, load {_load(la)}")
                 for w, cpu, la in zip(c["wall"], c["cpu"], c["load"])]
        out.append(f"| {c['row']} | {c['title']} | " + " | ".join(cells)
                   + f" | {_num(c['wall_median'], '{:.0f} s')} | {_num(c['cpu_median'], '{:.0f} s')} |")
    out.append("| | the bench's whole run (rows, start and report) | "
               + " | ".join(f"{r['wall_s']:.0f} s" for r in s["runs"])
               + f" | {_num(s['wall_median'], '{:.0f} s')} | |")
    return "\n".join(out)


def render_page(page, report_paths) -> str:
    """Replace the section between :data:`BEGIN` and :data:`END` in ``page`` with :func:`render` of the reports;
    return the new section. ``InvalidArgument`` (naming the argument) for a missing page, missing markers or an
    unreadable report; the page is written atomically, or not at all."""
    page = Path(page)
    if not report_paths:
        raise InvalidArgument("--render-page needs at least one report; expected REPORT.json files written by "
                              "`softpolar bench --json --out`")
    try:
        text = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"--render-page={str(page)!r} could not be read ({exc}); expected the markdown page "
                              f"to update") from None
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise InvalidArgument(f"--render-page={str(page)!r} lacks one {BEGIN} ... {END} pair; expected a page that "
                              "marks where the generated section goes (the command writes nothing else)")
    reports = [load_report(p) for p in report_paths]
    section = render(reports, [str(p) for p in report_paths])
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    write_text_atomic(page, head + BEGIN + "\n" + section + "\n" + END + tail)
    return section
