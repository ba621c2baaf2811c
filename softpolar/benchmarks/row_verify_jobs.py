r"""Row 11: ``softpolar verify`` with ``--jobs auto`` (claims side by side) against ``--jobs 1``.

``--jobs 1`` is the serial path (one process, the claims one after another: today's baseline,
kept for this row). Both run as child processes in alternation (serial, parallel, serial, ...)
so that both see the same background load, each into its own scratch report folder, each with
a fresh experiments folder (``SOFTPOLAR_EXPERIMENTS_DIR``: the full profile trains the transformer
grids from scratch in both). The row reports the wall-time ratio serial/parallel, the CPU
seconds of each (user + system of the child and everything it waited for, from ``os.wait4``),
the load average, and whether the two reports give the same verdicts claim by claim (they
must: the row says ``verdicts differ`` otherwise).

Profiles: ``quick`` mode runs ``verify --profile quick`` (target 1.5x), ``full`` mode also
``--profile full`` (target 1.8x; about 25 min serial on 2 cores). ``smoke`` runs two cheap
claims of different groups.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from ._timing import loadavg, run_child

TITLE = "softpolar verify: claims side by side (--jobs auto) vs one after another (--jobs 1)"
PROFILES = {"smoke": (("quick", "C02,C14"),), "quick": (("quick", None),),
            "full": (("quick", None), ("full", None))}
TARGETS = {"quick": 1.5, "full": 1.8}
REPS = {"smoke": 1, "quick": 1, "full": 1}
TIMEOUT_S = {"quick": 1200, "full": 5400}
#: not in the default set of rows (``softpolar bench`` without ``--rows``): row 15 runs the same two children
#: (``verify --jobs 1`` and ``--jobs auto`` of the same profiles, fresh folders, verdicts asserted) and carries
#: this row's target on its serial/parallel line, so the default run measured them twice (about 115 s of the
#: quick mode on 2 idle cores). ``--rows 11`` still runs it.
IN_DEFAULT = False


def _child(cmd, timeout_s, env, cwd=None) -> dict:
    """:func:`._timing.run_child`, in the units rows 11 and 15 report."""
    res = run_child(cmd, timeout_s, env, cwd=cwd)
    return {"rc": res["rc"], "wall_s": res["wall_s"], "cpu_s": res["cpu_s"], "maxrss_mib": res["maxrss_kb"] / 1024,
            "tail": res["stderr_tail"][-1500:]}


def verify_child(profile: str, jobs: str, claims, tmp: Path, timeout_s: float,
                 engines: str = "current") -> tuple[dict, Path]:
    """Run ``softpolar verify --profile P --jobs J --engines E [--claims ...]`` from the fresh folder ``tmp``
    (its own experiments folder too) as a child; ``(measurement, report folder)``. An exit other than 0 / 1
    (every claim passed / some did not) raises."""
    env = dict(os.environ)
    env["SOFTPOLAR_EXPERIMENTS_DIR"] = str(Path(tmp) / "experiments")
    out = Path(tmp) / "report"
    cmd = [sys.executable, "-m", "softpolar", "verify", "--profile", profile, "--jobs", jobs, "--engines", engines,
           "--out", str(out)] + (["--claims", claims] if claims else [])
    res = _child(cmd, timeout_s, env)
    if res["rc"] not in (0, 1):
        raise RuntimeError(f"verify --jobs {jobs} --engines {engines} exited {res['rc']}: {res['tail'][-300:]}")
    return res, out


#: this bench run's ``verify --profile P --jobs auto`` children (no ``--claims``), by profile: row 5 (wall time and
#: peak memory of ``softpolar verify``) and row 15 (its parallel child) measure the same command from fresh
#: folders, so whichever runs first runs it and the other reads that run (about 70 s of the quick mode on 2 idle
#: cores, issue 40). :func:`~softpolar.benchmarks._runner.run_rows` clears it at its start.
_SHARED: dict = {}


def reset_shared() -> None:
    """Forget the shared children (a new bench run measures afresh)."""
    _SHARED.clear()


def shared_parallel(profile: str, timeout_s: float, row: int) -> dict:
    """``verify --profile P --jobs auto`` from fresh folders (:func:`verify_child`), run once per bench run.

    Returns ``{"res": measurement, "report": report.json's data, "row": the row that ran it, "load": [load
    average before, after], "reused": whether an earlier row of this run had already run it}``; ``row`` is this
    caller's row number. A child that fails raises and is not kept (the next caller runs its own)."""
    if profile not in _SHARED:
        load0 = loadavg()
        with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
            res, out = verify_child(profile, "auto", None, Path(tmp), timeout_s)
            report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        _SHARED[profile] = {"res": res, "report": report, "row": row, "load": [load0, loadavg()]}
        return dict(_SHARED[profile], reused=False)
    return dict(_SHARED[profile], reused=True)

def _verdicts(folder: Path) -> list:
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return [(c["id"], c["verdict"], c["negative_control"]["verdict"], c["passed"]) for c in data["claims"]]


def run(mode: str, log) -> dict:
    """Run row 11; see the module docstring."""
    lines, facts = [], []
    for profile, claims in PROFILES[mode]:
        samples = {"1": [], "auto": []}
        verdicts = {}
        load0 = loadavg()
        for rep in range(REPS[mode]):
            for jobs in ("1", "auto"):
                with tempfile.TemporaryDirectory(prefix="softpolar-bench-jobs-") as tmp:
                    log(f"row 11: verify --profile {profile} --jobs {jobs} (rep {rep + 1})")
                    res, out = verify_child(profile, jobs, claims, Path(tmp), TIMEOUT_S.get(mode, 300))
                    samples[jobs].append(res)
                    verdicts[jobs] = _verdicts(out)
        med = {j: sorted(s, key=lambda r: r["wall_s"])[len(s) // 2] for j, s in samples.items()}
        same = verdicts["1"] == verdicts["auto"]
        r = med["1"]["wall_s"] / med["auto"]["wall_s"]
        target = TARGETS["full"] if profile == "full" else TARGETS["quick"]
        load1 = loadavg()
        lines.append({
            "case": f"verify --profile {profile}" + (f" --claims {claims}" if claims else ""),
            "softpolar": "--jobs auto", "anchor": "--jobs 1 (serial)",
            "softpolar_s": med["auto"]["wall_s"], "anchor_s": med["1"]["wall_s"],
            "ratio_label": "serial/parallel", "ratio": r, "target": f">= {target:g}" if claims is None else None,
            "met": (r >= target) if claims is None else None,
            "notes": (f"CPU s serial {med['1']['cpu_s']:.0f}, parallel {med['auto']['cpu_s']:.0f}; peak RSS "
                      f"{med['1']['maxrss_mib']:.0f} / {med['auto']['maxrss_mib']:.0f} MiB; load {load0} -> "
                      f"{load1}; {len(verdicts['1'])} claims, verdicts "
                      f"{'identical' if same else 'DIFFER'}; {REPS[mode]} rep(s) each, alternated")})
        facts.append({"label": f"verify --profile {profile}: same verdicts with --jobs 1 and --jobs auto",
                      "value": "yes" if same else "NO", "unit": "",
                      "notes": "" if same else f"serial {verdicts['1']} / parallel {verdicts['auto']}"})
    return {"lines": lines, "facts": facts}
