r"""Row 15: ``softpolar verify`` claim by claim: today's serial path (``--jobs 1``) against ``--jobs auto``.

Both commands run as child processes in alternation (serial first), each into its own scratch report
folder with a fresh experiments folder (``SOFTPOLAR_EXPERIMENTS_DIR``: the full profile trains the
transformer grids from scratch in both), as in row 11. This row reads the two reports claim by claim:

* the **verdicts** (claim, control, passed) must be identical in report order; the row raises (status
  ``error``) when they are not -- a faster verify with other verdicts is no result;
* **per claim**, wall seconds and CPU seconds (``cpu_seconds`` of report.json: user + system of the process
  that ran the claim and of the children it waited for, a claim's dask workers included) in both runs: the
  claims with the largest serial wall time each get a fact, the rest one fact together;
* the **whole run**: the wall ratio serial/parallel (the line, with the issue's target), the CPU seconds of
  each child from ``os.wait4`` (everything it waited for), the load average before and after, and
  serial CPU / cores, the time no schedule of the same work beats on an otherwise idle machine.

``--jobs 1`` is the baseline kept reachable: the serial loop, claims in report order in one process.
Modes: ``smoke`` -- two cheap claims (the wiring); ``quick`` -- ``verify --profile quick`` (target 1.5x);
``full`` -- that and ``verify --profile full`` (target 1.8x; tens of minutes per run on a shared 2-core
machine, which is why the committed report is a quick-mode one).
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ._row_verify_jobs import verify_child
from ._timing import loadavg

TITLE = "softpolar verify claim by claim: today's serial path (--jobs 1) vs --jobs auto, same verdicts"
PROFILES = {"smoke": (("quick", "C02,C14"),), "quick": (("quick", None),),
            "full": (("quick", None), ("full", None))}
TARGETS = {"quick": 1.5, "full": 1.8}
TIMEOUT_S = {"smoke": 300, "quick": 1800, "full": 7200}
#: claims shown one by one (largest serial wall time first); the others are summed in one fact
TOP = 8


def _claims(folder: Path) -> list[dict]:
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return [{"id": c["id"], "verdicts": (c["verdict"], c["negative_control"]["verdict"], c["passed"]),
             "wall": float(c["seconds"]), "cpu": c.get("cpu_seconds")} for c in data["claims"]]


def _cpu(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def claim_fact(case: str, what: str, rows: list[dict]) -> dict:
    """One fact for ``rows`` of :func:`compare` (one claim, or several summed): wall and CPU, both runs."""
    def total(key):
        vals = [r[key] for r in rows]
        return None if any(v is None for v in vals) else sum(vals)
    return {"label": f"{case}: {what}, wall serial / parallel; CPU serial / parallel",
            "value": f"{total('serial_wall'):.1f} s / {total('parallel_wall'):.1f} s; "
                     f"CPU {_cpu(total('serial_cpu'))} s / {_cpu(total('parallel_cpu'))} s", "unit": "",
            "notes": "wall and CPU seconds from the two report.json files (cpu_seconds: the claim's process and the "
                     "children it waited for)"}


def compare(serial: list[dict], parallel: list[dict]) -> dict:
    """Check that the two runs gave the same verdicts in the same order; the per-claim table (serial wall
    time, largest first). Raises ``RuntimeError`` naming the first claim that differs."""
    a = [(c["id"], c["verdicts"]) for c in serial]
    b = [(c["id"], c["verdicts"]) for c in parallel]
    if a != b:
        diff = next(((x, y) for x, y in zip(a, b) if x != y), (a[len(b):] or None, b[len(a):] or None))
        raise RuntimeError(f"the verdicts differ between --jobs 1 and --jobs auto: first difference {diff}")
    par = {c["id"]: c for c in parallel}
    rows = [{"id": c["id"], "serial_wall": c["wall"], "serial_cpu": c["cpu"], "parallel_wall": par[c["id"]]["wall"],
             "parallel_cpu": par[c["id"]]["cpu"]} for c in serial]
    return {"rows": sorted(rows, key=lambda r: -r["serial_wall"]), "claims": len(rows)}


def run(mode: str, log) -> dict:
    """Run row 15; see the module docstring."""
    from proofs_check._parallel import cpu_count

    lines, facts = [], []
    cores = cpu_count()
    for profile, claims in PROFILES[mode]:
        load0 = loadavg()
        res, per = {}, {}
        for jobs in ("1", "auto"):
            with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
                log(f"row 15: verify --profile {profile} --jobs {jobs}")
                res[jobs], out = verify_child(profile, jobs, claims, Path(tmp), TIMEOUT_S[mode])
                per[jobs] = _claims(out)
        load1 = loadavg()
        table = compare(per["1"], per["auto"])
        s, p = res["1"], res["auto"]
        ratio = s["wall_s"] / p["wall_s"]
        bound = s["cpu_s"] / cores  # the serial run's CPU work spread perfectly over every core
        case = f"verify --profile {profile}" + (f" --claims {claims}" if claims else "")
        target = TARGETS[profile] if claims is None else None
        lines.append({
            "case": case, "softpolar": "--jobs auto", "anchor": "--jobs 1 (serial, today's path)",
            "softpolar_s": p["wall_s"], "anchor_s": s["wall_s"], "ratio_label": "serial/parallel", "ratio": ratio,
            "target": f">= {target:g}" if target else None, "met": (ratio >= target) if target else None,
            "notes": (f"{table['claims']} claims, verdicts identical (asserted); CPU s serial {s['cpu_s']:.0f}, "
                      f"parallel {p['cpu_s']:.0f}; peak RSS {s['maxrss_mib']:.0f} / {p['maxrss_mib']:.0f} MiB; "
                      f"{cores} cores; load {load0} -> {load1}; one run each, serial first")})
        facts.append({"label": f"{case}: wall serial / parallel; CPU serial / parallel",
                      "value": f"{s['wall_s']:.1f} s / {p['wall_s']:.1f} s; "
                               f"CPU {s['cpu_s']:.1f} s / {p['cpu_s']:.1f} s",
                      "unit": "", "notes": f"on an otherwise idle machine no schedule of the same work beats serial "
                                           f"CPU / cores = {bound:.1f} s; load {load0} -> {load1}"})
        for r in table["rows"][:TOP]:
            facts.append(claim_fact(case, f"claim {r['id']}", [r]))
        rest = table["rows"][TOP:]
        if rest:
            facts.append(claim_fact(case, f"the other {len(rest)} claims (summed)", rest))
    return {"lines": lines, "facts": facts}
