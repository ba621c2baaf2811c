r"""``softpolar bench``: softpolar against the anchor tools, ratios measured in one run.

``softpolar bench [--quick] [--json | --markdown] [--rows 1,2,..] [--out FILE] [--threads N] [--repeat K]``;
``softpolar bench --render-page PAGE REPORT.json [REPORT.json ...]`` writes the runs section of the performance
page from several reports (:mod:`softpolar.benchmarks._page`: the spread over runs, the load, each row's cost).

Rows (see each ``benchmarks.row_*`` module for the exact problem):

1. RHS evaluation: generated numpy vs hand-written numpy vs torch autograd;
2. high precision: the mpmath backend vs ``mpmath.odefun`` (dps 30, 60), accuracy and reach;
3. float64: the numpy backend vs SciPy DOP853 called directly, to $t=10^6$;
4. batched: the torch backend vs ``torchdiffeq.odeint`` (dopri5), B = 256, 4096;
5. ``softpolar verify --profile quick``: wall time and peak memory;
6. the long-horizon numbers ($t=10^{100}$ at dps 50; 4096 x n=d=8 to $t=10^4$);
7-10. the Taylor backend against hand-written heyoka, GBS, numpy; the torch backend against torchode;
11. (not in the default set: row 15 measures the same) ``softpolar verify`` with ``--jobs auto`` (claims side
    by side) against ``--jobs 1`` (serial, the baseline), alternated, with CPU seconds and a same-verdicts check
    (quick; full mode adds the full profile);
12. ``softpolar atlas`` on a loopback dask cluster (``dask scheduler`` + ``dask worker``) with 2 workers vs 1;
15. ``softpolar verify`` claim by claim, ``--jobs 1`` vs ``--jobs auto``: wall and CPU seconds per claim, identical
    verdicts asserted (quick; full mode adds the full profile);
17. scaling: one problem at n = d in {64, 256, 1024} (4096 in full mode), time and peak memory of the numpy RHS
    against a hand-written one and of the torch backend against torchdiffeq on the same method.

The JSON report (``--json`` on stdout, ``--out FILE``), read by the docs' performance page generator:

* ``mode`` (``smoke`` | ``quick`` | ``full``), ``command`` (the ``softpolar bench ...`` that made it),
  ``wall_s``, ``machine`` (``cpu_count``, ``cpu_model``, ``platform``, ``python``, ``torch_threads``,
  ``versions``, ``loadavg_start`` / ``loadavg_end``: the 1/5/15-minute load averages);
* ``rows``: one object per row, ``{"row", "title", "status" ("ok" | "not available" | "error"),
  "reason" (when not ok), "wall_s", "cpu_s" (the bench's and its reaped children's CPU seconds),
  "loadavg_start", "loadavg_end", "lines", "facts", "table" (optional: a row's own table,
  ``{"columns", "rows"}``)}``; a *line* is one comparison,
  ``{"case", "softpolar", "anchor", "softpolar_s", "anchor_s", "ratio_label", "ratio", "target",
  "met", "notes"}`` (with ``"ratios"``, one per interleaved repetition, where the line is the median of
  several: ``--repeat K``) (``ratio_label`` says which way the ratio reads; ``target`` / ``met`` are null where
  no target is set); a *fact* is a number that is not a ratio, ``{"label", "value", "unit", "notes"}``;
* ``targets``: every line with a target, ``{"row", "case", "ratio_label", "ratio", "target", "met"}``.

stdout: a table (default), one JSON object (``--json``) or a README snippet
(``--markdown``); ``--out FILE`` also writes the JSON report there (atomically). Progress
goes to stderr, with the load average at the start and end of every row and of the whole run, and the
bench's own wall time. Exit 0 when every row ran (targets missed included: benchmarks report,
they never fail on speed), 1 when a row raised an error, 2 on bad usage.

Threads: the measurement runs in a fresh ``python -m benchmarks`` process whose BLAS /
OpenMP pools are pinned to ``--threads`` (default 1) *before* numpy loads: OpenBLAS's
spinning worker threads on a loaded 2-core machine made a 1024 x 1024 matrix-vector
product 5x slower than single-threaded while this was written. torch gets the same count.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
import argparse

from theorems import InvalidArgument
from numerics.io import write_json_atomic
from ._machine import THREAD_ENV
from ._page import render_page
from ._runner import ROWS, default_rows, format_markdown, format_table, run_rows

#: set in the measurement process once the thread pools are pinned (see module docstring).
PINNED_ENV = "SOFTPOLAR_BENCH_PINNED"


def parse_rows(text: str) -> list[int]:
    """``"1,3"`` -> ``[1, 3]``; ``InvalidArgument`` naming the value and the allowed rows."""
    allowed = sorted(ROWS)
    try:
        rows = [int(part) for part in str(text).split(",") if part.strip() != ""]
    except ValueError:
        rows = None
    if not rows or any(r not in ROWS for r in rows):
        raise InvalidArgument(f"--rows={text!r} is not allowed; expected a comma-separated list of "
                              f"row numbers among {allowed}")
    return sorted(set(rows), key=rows.index)


def _check_threads(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"--threads={value!r} is not allowed; expected an integer >= 1")
    return value


def add_parser(subparsers) -> None:
    """Create the ``bench`` subcommand."""
    p = subparsers.add_parser(
        "bench", help="benchmark softpolar against numpy, torch autograd, mpmath.odefun, SciPy, "
                      "torchdiffeq",
        description="Benchmarks against the anchor tools: interleaved repetitions, medians, "
                    "ratios measured in one run.")
    p.add_argument("--quick", action="store_true",
                   help="smaller sizes and budgets (under 15 min on 2 idle cores; the performance page has each "
                        "row's cost)")
    p.add_argument("--smoke", action="store_true", help=_suppress())
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    fmt.add_argument("--markdown", action="store_true", help="print the README table snippet")
    p.add_argument("--rows", default=None, metavar="1,2,..", help="rows to run (default: all)")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the JSON report to FILE")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="BLAS / OpenMP / torch threads of the measurement process (default 1)")
    p.add_argument("--repeat", type=int, default=None, metavar="K",
                   help="interleaved repetitions of the targets close to their threshold (rows 1 and 2, row 12's grid, "
                        "row 17): the median and range of K pairs (default: each row's own)")
    p.add_argument("--render-page", default=None, metavar="PAGE",
                   help="write the runs section of PAGE (between its <!-- softpolar:bench-runs --> markers) from "
                        "the REPORT.json files given after it: each run's wall time and load, every target over "
                        "the runs (median, range, runs met), each row's cost; runs no benchmark")
    p.add_argument("reports", nargs="*", metavar="REPORT.json", help="bench reports for --render-page")
    p.set_defaults(func=main)


def _suppress():
    return argparse.SUPPRESS


def _argv(args) -> list[str]:
    out = []
    for flag in ("quick", "smoke", "json", "markdown"):
        if getattr(args, flag):
            out.append(f"--{flag}")
    if args.rows is not None:
        out += ["--rows", args.rows]
    if args.out is not None:
        out += ["--out", args.out]
    out += ["--threads", str(args.threads)]
    if getattr(args, "repeat", None) is not None:
        out += ["--repeat", str(args.repeat)]
    return out


def pinned_env(threads: int) -> dict:
    """The environment of the measurement process (thread pools pinned to ``threads``)."""
    env = dict(os.environ)
    for key in THREAD_ENV:
        env[key] = str(threads)
    env[PINNED_ENV] = "1"
    pkg_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    return env


def main(args) -> int:
    """Entry point of ``softpolar bench`` (see module docstring)."""
    reports = getattr(args, "reports", None) or []
    if getattr(args, "render_page", None) is not None:
        render_page(args.render_page, reports)
        print(f"softpolar bench: wrote the runs section of {args.render_page} from {len(reports)} report(s)")
        return 0
    if reports:
        raise InvalidArgument(f"report files {reports[:3]!r} are only read with --render-page PAGE; expected no "
                              "positional argument when running the bench")
    rows = parse_rows(args.rows) if args.rows is not None else None
    threads = _check_threads(args.threads)
    repeat = getattr(args, "repeat", None)
    if repeat is not None and repeat < 1:
        raise InvalidArgument(f"--repeat={repeat!r} is not allowed; expected an integer >= 1")
    out = Path(args.out) if args.out is not None else None
    if out is not None and not out.parent.is_dir():
        raise InvalidArgument(f"--out={args.out!r} is not allowed; its folder does not exist")
    if os.environ.get(PINNED_ENV) != "1":
        # re-run in a fresh process whose thread pools are pinned before numpy loads
        cmd = [sys.executable, "-m", "softpolar.benchmarks", *_argv(args)]
        return subprocess.run(cmd, env=pinned_env(threads), check=False).returncode

    import torch

    torch.set_num_threads(threads)
    mode = "smoke" if args.smoke else ("quick" if args.quick else "full")

    def log(msg):
        print(f"bench: {msg}", file=sys.stderr, flush=True)

    report = run_rows(rows or default_rows(), mode=mode, log=log, repeat=repeat)
    report["command"] = "softpolar bench " + " ".join(_argv(args))
    if out is not None:
        write_json_atomic(out, report, indent=1, default=str)
    if args.json:
        print(json.dumps(report, default=str))
    elif args.markdown:
        print(format_markdown(report))
    else:
        print(format_table(report))
    return 1 if any(r["status"] == "error" for r in report["rows"]) else 0
