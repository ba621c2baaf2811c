r"""Row 5: ``softpolar verify --profile quick``, wall time and peak memory.

The command runs as a child process (``python -m softpolar verify --profile quick --jobs auto --out <scratch
folder>``, the same program as the console script, from fresh folders: a fresh experiments folder too). It is the
same command as bench row 15's parallel child, so within one bench run it runs once and both rows read it
(:func:`~softpolar.benchmarks.row_verify_jobs.shared_parallel`; the notes say which row ran it and at what load).
Its peak resident set size is the child's own
``ru_maxrss`` from ``os.wait4`` (kilobytes on Linux), not ``RUSAGE_CHILDREN``, which would
be the maximum over every child this process ever waited for. No anchor: the row reports
facts, no ratio.

If the ``verify`` subcommand does not exist yet (module ``proofs_check.cli._cmd_verify``), the
row reports *not available*. The row also times ``softpolar derive --check`` (target: under
60 s on 2 cores), as a fact, in full mode (it would crowd the 10-minute quick mode).
"""
from __future__ import annotations

import importlib.util
import sys

from ._timing import run_child
from ._runner import NotAvailable
from .row_verify_jobs import shared_parallel

TITLE = "CLI wall time and peak memory: softpolar verify --profile quick; softpolar derive --check"
#: wall-clock limit of the child; the row reports a timeout rather than blocking the run.
TIMEOUT_S = {"smoke": 120, "quick": 300, "full": 900}


def run(mode: str, log) -> dict:
    """Run row 5; see the module docstring."""
    if mode == "smoke":
        # the measuring machinery on a trivial child (the real verify takes minutes)
        cmd, what = [sys.executable, "-m", "softpolar", "--version"], "softpolar --version (smoke)"
    else:
        if importlib.util.find_spec("proofs_check.cli._cmd_verify") is None:
            raise NotAvailable("`softpolar verify` does not exist yet (no proofs_check.cli._cmd_verify)")
        cmd, what = None, "softpolar verify --profile quick"
    log(f"row 5: {what}")
    if mode == "smoke":
        res, shared = run_child(cmd, TIMEOUT_S[mode]), None
    else:  # the same command as row 15's parallel child: one run of a bench run serves both rows
        try:
            shared = shared_parallel("quick", TIMEOUT_S[mode], 5)
        except RuntimeError as exc:
            if "invalid choice" in str(exc):
                raise NotAvailable(f"{what}: the subcommand or profile is not available ({exc})") from None
            raise
        res = {"rc": shared["res"]["rc"], "wall_s": shared["res"]["wall_s"],
               "maxrss_kb": shared["res"]["maxrss_mib"] * 1024, "timed_out": False,
               "stderr_tail": shared["res"]["tail"]}
    if res["timed_out"]:
        raise RuntimeError(f"{what} did not finish within {TIMEOUT_S[mode]} s (killed)")
    if res["rc"] == 2 and "invalid choice" in res["stderr_tail"]:
        raise NotAvailable(f"{what}: the subcommand or profile is not available "
                           f"({res['stderr_tail'].strip().splitlines()[-1]})")
    how = "one run"
    if shared is not None:
        how = ("one run, from fresh folders (report and experiments), --jobs auto (the default); "
               + (f"the run row {shared['row']} measured earlier in this bench run (the same command, not run "
                  f"twice; load {shared['load'][0]} -> {shared['load'][1]})" if shared["reused"] else
                  "row 15 reads this same run as its parallel child"))
    facts = [
        {"label": f"{what} wall time", "value": res["wall_s"], "unit": "s",
         "notes": f"{how}; absolute time on a shared machine"},
        {"label": f"{what} peak memory (max RSS)", "value": round(res["maxrss_kb"] / 1024, 1),
         "unit": "MiB", "notes": "os.wait4 ru_maxrss of the child"},
        {"label": f"{what} exit status", "value": res["rc"], "unit": "",
         "notes": "" if res["rc"] == 0 else (res["stderr_tail"].strip().splitlines() or [""])[-1][-200:]},
    ]
    if mode == "full" and importlib.util.find_spec("proofs_check.cli._cmd_derive") is not None:
        log("row 5: softpolar derive --check")
        der = run_child([sys.executable, "-m", "softpolar", "derive", "--check"], TIMEOUT_S[mode])
        status = "killed at the time limit" if der["timed_out"] else f"exit status {der['rc']}"
        facts.append({"label": "softpolar derive --check wall time", "value": der["wall_s"], "unit": "s",
                      "notes": (f"target < 60 s; {'met' if der['wall_s'] < 60 else 'MISSED'}; {status}; "
                                f"peak memory {der['maxrss_kb'] / 1024:.0f} MiB; one run")})
    return {"lines": [], "facts": facts}
