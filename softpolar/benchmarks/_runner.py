"""The benchmark runner: runs the rows, collects one JSON-able report, formats it.

A *row* is a module with ``TITLE`` and ``run(mode, log) -> dict`` (``mode`` one of
:data:`MODES`) returning
``{"lines": [...], "facts": [...], ...}``:

* a *line* compares softpolar with one anchor on one case:
  ``{"case", "softpolar", "anchor", "softpolar_s", "anchor_s", "ratio_label", "ratio",
  "target", "met", "notes"}`` (``ratio_label`` says which way the ratio reads, e.g.
  ``odefun/softpolar``; ``target`` / ``met`` are ``None`` where the issue sets no target);
* a *fact* is a reported number that is not a ratio (accuracy digits, t reached in a budget,
  wall time, peak memory): ``{"label", "value", "unit", "notes"}``.

A row that cannot run because a part of softpolar is missing raises :class:`NotAvailable`
and is reported as such; any other exception is reported as an error (exit status 1).
"""
from __future__ import annotations

import importlib
import math
import resource
import time

from ._machine import machine_info
from ._page import DOCUMENTED_S, documented_time
from .row_verify_jobs import reset_shared
from ._timing import loadavg

#: row number -> module (relative to this package).
ROWS = {
    1: ".row_rhs",
    2: ".row_mpmath",
    3: ".row_float64",
    4: ".row_batched",
    5: ".row_verify",
    6: ".row_horizons",
    7: ".row_taylor",
    8: ".row_taylor_gbs",
    9: ".row_taylor_f64",
    10: ".row_torchode",
    11: ".row_verify_jobs",
    12: ".row_cluster",
    14: ".row_box",
    15: ".row_verify_profile",
    16: ".row_check",
    17: ".row_scaling",
}


#: ``smoke``: every row at a trivial size (tests; numbers meaningless); ``quick``: under 15 min on 2 idle
#: cores (``_page.DOCUMENTED_S``); ``full``: the sizes and budgets the targets are stated for.
MODES = ("smoke", "quick", "full")


class NotAvailable(Exception):
    """A row needs a part of softpolar (or an anchor tool) that is not installed yet."""


def row_module(k: int):
    """Bench row ``k``'s module (``ROWS[k]``): its ``run(mode, log)``, ``TITLE``, ``TARGET`` and helpers."""
    return importlib.import_module(ROWS[k], __package__)


def default_rows() -> list[int]:
    """The rows ``softpolar bench`` runs without ``--rows``: every row except those whose module sets
    ``IN_DEFAULT = False`` (a row another row already measures in the same run)."""
    return [k for k in sorted(ROWS) if getattr(row_module(k), "IN_DEFAULT", True)]


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its children reaped so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_rows(rows, *, mode: str = "quick", log=lambda msg: None, repeat: int | None = None) -> dict:
    """Run the given row numbers; return the whole report (see module docstring).

    ``repeat``: the number of interleaved repetitions (pairs) of the rows whose module sets
    ``REPEATABLE = True`` (their targets sit close to the threshold: they report the median and the range
    of the repetitions); ``None`` keeps each row's own default. Every row records the load average at its
    start and end and the CPU seconds of the bench and its reaped children while it ran (the CPU time
    hardly depends on the load; the wall time does)."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}; expected one of {MODES}")
    if repeat is not None and (isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1):
        raise ValueError(f"repeat={repeat!r}; expected an integer >= 1 or None")
    report = {"mode": mode, "machine": machine_info(), "rows": [], "repeat": repeat}
    reset_shared()  # rows 5 and 15 share one `verify --jobs auto` child within a run, never across runs
    start = time.perf_counter()
    log(f"start: {len(rows)} row(s), {mode} mode, load {report['machine']['loadavg_start']}")
    for k in rows:
        mod = row_module(k)
        t0, c0 = time.perf_counter(), cpu_seconds()
        load0 = loadavg()
        log(f"row {k}: {mod.TITLE} (load {load0})")
        entry = {"row": k, "title": mod.TITLE, "status": "ok", "lines": [], "facts": [], "loadavg_start": load0}
        kwargs = {"repeat": repeat} if repeat is not None and getattr(mod, "REPEATABLE", False) else {}
        try:
            entry.update(mod.run(mode, log, **kwargs))
        except NotAvailable as exc:
            entry["status"] = "not available"
            entry["reason"] = str(exc)
        except Exception as exc:  # a failing row is reported, the rest still runs
            entry["status"] = "error"
            entry["reason"] = f"{type(exc).__name__}: {exc}"
        entry["row"], entry["title"] = k, mod.TITLE
        entry["wall_s"] = time.perf_counter() - t0
        entry["cpu_s"] = cpu_seconds() - c0
        entry["loadavg_end"] = loadavg()
        log(f"row {k}: {entry['status']}, {entry['wall_s']:.0f} s wall, {entry['cpu_s']:.0f} CPU s, "
            f"load {load0} -> {entry['loadavg_end']}")
        report["rows"].append(entry)
    report["wall_s"] = time.perf_counter() - start
    report["machine"]["loadavg_end"] = loadavg()
    report["documented_s"] = documented_time(mode, rows, default_rows() if DOCUMENTED_S.get(mode) else ())
    doc = "" if report["documented_s"] is None else f" (documented: under {report['documented_s'] / 60:.0f} min)"
    log(f"done: {report['wall_s']:.0f} s wall{doc}, load {report['machine']['loadavg_start']} -> "
        f"{report['machine']['loadavg_end']}")
    report["targets"] = targets_summary(report)
    return report


def targets_summary(report) -> list[dict]:
    """Every line that carries a target: ``{"row", "case", "ratio_label", "ratio", "target", "met"}``."""
    out = []
    for row in report["rows"]:
        for line in row.get("lines", []):
            if line.get("target"):
                out.append({k: line.get(k) for k in ("case", "ratio_label", "ratio", "target", "met")}
                           | {"row": row["row"]})
    return out


# ------------------------------------------------------------------------------------------
# formatting
def fmt_seconds(s) -> str:
    """Seconds with a unit that keeps 3 significant digits (``12.3 us``, ``4.56 s``)."""
    if s is None or (isinstance(s, float) and not math.isfinite(s)):
        return "-"
    s = float(s)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"  # pragma: no cover


def fmt_ratio(r) -> str:
    return "-" if r is None else f"{r:.3g}"


def _met(m) -> str:
    return "" if m is None else ("met" if m else "MISSED")


def _fmt_value(fact) -> str:
    v = fact.get("value")
    if v is None:
        return "-"
    if fact.get("unit") == "s":
        return fmt_seconds(v)
    if isinstance(v, float):
        return f"{v:.4g}" + (f" {fact['unit']}" if fact.get("unit") else "")
    return f"{v}" + (f" {fact['unit']}" if fact.get("unit") else "")


def _machine_line(m) -> str:
    v = m["versions"]
    return (f"{m['cpu_count']} CPUs ({m['cpu_model']}), torch threads {m['torch_threads']}, "
            f"load {m['loadavg_start']} -> {m.get('loadavg_end')}; python {m['python']}, "
            f"numpy {v['numpy']}, scipy {v['scipy']}, torch {v['torch']}, torchdiffeq "
            f"{v['torchdiffeq']}, mpmath {v['mpmath']}"
            + (f"; CUDA {m['cuda']}" if m.get("cuda") else "; no CUDA"))


def format_table(report) -> str:
    """The plain-text report printed on stdout."""
    doc = report.get("documented_s")
    doc = "" if doc is None else f"; documented: under {doc / 60:.0f} min"
    out = [f"softpolar benchmarks ({report['mode']} mode, {report['wall_s']:.0f} s wall{doc})",
           "machine: " + _machine_line(report["machine"]), ""]
    head = ("row", "case", "softpolar", "anchor", "t softpolar", "t anchor", "ratio", "", "target", "")
    table = []
    for row in report["rows"]:
        for line in row.get("lines", []):
            table.append((str(row["row"]), line["case"], line["softpolar"], line["anchor"],
                          fmt_seconds(line.get("softpolar_s")), fmt_seconds(line.get("anchor_s")),
                          fmt_ratio(line.get("ratio")) + _spread(line), line["ratio_label"], line.get("target") or "",
                          _met(line.get("met"))))
    widths = [max(len(r[i]) for r in [head] + table) for i in range(len(head))]
    out.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for r in table:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    out.append("")
    for row in report["rows"]:
        cpu = f", {row['cpu_s']:.0f} CPU s" if row.get("cpu_s") is not None else ""
        out.append(f"row {row['row']}: {row['title']} [{row['status']}, {row['wall_s']:.0f} s{cpu}, "
                   f"load {row.get('loadavg_start', '?')} -> {row.get('loadavg_end')}]")
        if row["status"] != "ok":
            out.append(f"  {row['status']}: {row.get('reason')}")
        for fact in row.get("facts", []):
            note = f"  ({fact['notes']})" if fact.get("notes") else ""
            out.append(f"  {fact['label']}: {_fmt_value(fact)}{note}")
        if row.get("table"):
            out.extend("  " + t for t in format_table_block(row["table"]).splitlines())
        for line in row.get("lines", []):
            if line.get("notes"):
                out.append(f"  [{line['case']}: {line['softpolar']} vs {line['anchor']}] {line['notes']}")
        if row.get("profile"):
            out.append("  profile of the softpolar call (target missed):")
            out.extend("    " + s for s in row["profile"].rstrip().splitlines())
    out.append("")
    out.append("targets: " + ("; ".join(
        f"row {t['row']} {t['case']} {t['ratio_label']} = {fmt_ratio(t['ratio'])} ({t['target']}: "
        f"{_met(t['met']) or 'n/a'})" for t in report["targets"]) or "none measured"))
    return "\n".join(out)


def _spread(line) -> str:
    """`` (median of K: min-max)`` for a line measured in K repetitions (``ratios``), else ``""``."""
    rs = line.get("ratios")
    if not rs or len(rs) < 2:
        return ""
    return f" (median of {len(rs)}: {fmt_ratio(min(rs))}-{fmt_ratio(max(rs))})"


def format_table_block(table: dict) -> str:
    """A row's own table (``{"columns": [...], "rows": [[...], ...]}``) as markdown."""
    cols = table["columns"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out.extend("| " + " | ".join(str(c) for c in r) + " |" for r in table["rows"])
    return "\n".join(out)


def format_markdown(report, command: str | None = None) -> str:
    """A markdown snippet for the README: the ratios, the facts, the machine, the command."""
    if command is None:
        command = "softpolar bench" + {"smoke": " --smoke", "quick": " --quick"}.get(report["mode"], "")
    out = ["| row | case | softpolar | anchor | ratio | target |",
           "|---|---|---|---|---|---|"]
    for row in report["rows"]:
        if row["status"] != "ok":
            out.append(f"| {row['row']} | {row['title']} | | | {row['status']} | |")
            continue
        for line in row.get("lines", []):
            target = line.get("target") or ""
            if target:
                target = f"{target}: {_met(line.get('met')).lower()}"
            out.append(f"| {row['row']} | {line['case']} | {line['softpolar']}, "
                       f"{fmt_seconds(line.get('softpolar_s'))} | {line['anchor']}, "
                       f"{fmt_seconds(line.get('anchor_s'))} | {line['ratio_label']} = "
                       f"**{fmt_ratio(line.get('ratio'))}**{_spread(line)} | {target} |")
    for row in report["rows"]:
        if row.get("table"):
            out.append("")
            out.append(f"Row {row['row']}, {row['title']}:")
            out.append("")
            out.append(format_table_block(row["table"]))
    facts = [(row["row"], f) for row in report["rows"] for f in row.get("facts", [])]
    if facts:
        out.append("")
        for k, fact in facts:
            out.append(f"- row {k}: {fact['label']}: {_fmt_value(fact)}")
    m = report["machine"]
    out.append("")
    out.append(f"Measured with `{command}` ({report['mode']} mode) on {_machine_line(m)}. "
               "Ratios come from interleaved repetitions in one run (median); absolute times on "
               "a shared machine are indicative only.")
    return "\n".join(out)
