r"""Row 15: ``softpolar verify`` claim by claim: the baseline (the code path before the speed-ups), today's serial
path (``--jobs 1``) and ``--jobs auto``, three children in one run.

The three children (:data:`CHILDREN`, in that order, one run each):

* **baseline** -- ``--jobs 1 --engines baseline``: the claims one after another on the engines kept for this row
  (:data:`proofs_check._claim.ENGINE_SETTINGS`: GBS for the main high-precision runs of the logistic claims, the
  Taylor backend as their cross-check; the box scheme before the fast one for ATLAS);
* **serial** -- ``--jobs 1`` on today's engines (``--engines current``);
* **parallel** -- ``--jobs auto`` on today's engines.

Each runs into its own scratch report folder with a fresh experiments folder (``SOFTPOLAR_EXPERIMENTS_DIR``: the
full profile trains the transformer grids from scratch in each), as in row 11. This row reads the three reports
claim by claim:

* the **verdicts** (claim, control, passed) must be identical in report order, across all three; the row raises
  (status ``error``) when they are not -- a faster verify with other verdicts is no result;
* **per claim**, wall seconds and CPU seconds (``cpu_seconds`` of report.json: user + system of the process
  that ran the claim and of the children it waited for, a claim's dask workers included) in the three runs: the
  claims with the largest baseline wall time each get a fact, the rest one fact together;
* the **whole run**: two lines, baseline/parallel and serial/parallel (wall); the target (:data:`TARGETS`) is on
  baseline/parallel in the full profile (the issue's 1.8x against the code path of its day) and on
  serial/parallel in the quick one (as before); the CPU seconds of each child from ``os.wait4`` (everything it
  waited for), the load average before and after, serial CPU / cores (the time no schedule of the same work beats
  on an otherwise idle machine) and, in the full profile, the parallel wall against :data:`FULL_WALL_S`.

Modes: ``smoke`` -- two cheap claims (the same three-way wiring); ``quick`` -- ``verify --profile quick``;
``full`` -- that and ``verify --profile full`` (tens of minutes per child on a shared 2-core machine, which is why
the committed report is a quick-mode one).
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ._row_verify_jobs import verify_child
from ._timing import loadavg

TITLE = ("softpolar verify claim by claim: the baseline engines serially vs today's --jobs 1 vs --jobs auto, "
         "same verdicts")
PROFILES = {"smoke": (("quick", "C02,C14"),), "quick": (("quick", None),),
            "full": (("quick", None), ("full", None))}
#: (name, --jobs, --engines) of the three children, run in this order
CHILDREN = (("baseline", "1", "baseline"), ("serial", "1", "current"), ("parallel", "auto", "current"))
#: per profile: the anchor the target applies to (wall anchor / parallel) and the target
TARGETS = {"quick": ("serial", 1.5), "full": ("baseline", 1.8)}
#: the issue's absolute aim for the full profile with --jobs auto on 2 cores: "about 8.5 min"
FULL_WALL_S = 510.0
TIMEOUT_S = {"smoke": 300, "quick": 1800, "full": 7200}
#: claims shown one by one (largest baseline wall time first); the others are summed in one fact
TOP = 8
ANCHORS = {"baseline": "--jobs 1 --engines baseline (the code path before the speed-ups)",
           "serial": "--jobs 1 (serial, today's engines)"}


def _claims(folder: Path) -> list[dict]:
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return [{"id": c["id"], "verdicts": (c["verdict"], c["negative_control"]["verdict"], c["passed"]),
             "wall": float(c["seconds"]), "cpu": c.get("cpu_seconds")} for c in data["claims"]]


def _cpu(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def claim_fact(case: str, what: str, rows: list[dict], names=tuple(n for n, _, _ in CHILDREN)) -> dict:
    """One fact for ``rows`` of :func:`compare` (one claim, or several summed): wall and CPU of each run."""
    def total(key):
        vals = [r[key] for r in rows]
        return None if any(v is None for v in vals) else sum(vals)
    runs = " / ".join(names)
    return {"label": f"{case}: {what}, wall {runs}; CPU {runs}",
            "value": " / ".join(f"{total(n + '_wall'):.1f} s" for n in names) + "; CPU "
                     + " / ".join(f"{_cpu(total(n + '_cpu'))} s" for n in names), "unit": "",
            "notes": "wall and CPU seconds from the report.json files (cpu_seconds: the claim's process and the "
                     "children it waited for)"}


def compare(runs: dict[str, list[dict]]) -> dict:
    """Check that every run (name -> :func:`_claims` of its report; the first is the reference) gave the same
    verdicts in the same order; the per-claim table (the first run's wall time, largest first). Raises
    ``RuntimeError`` naming the runs and the first claim that differs."""
    names = list(runs)
    ref = [(c["id"], c["verdicts"]) for c in runs[names[0]]]
    for name in names[1:]:
        other = [(c["id"], c["verdicts"]) for c in runs[name]]
        if other != ref:
            diff = next(((x, y) for x, y in zip(ref, other) if x != y),
                        (ref[len(other):] or None, other[len(ref):] or None))
            raise RuntimeError(f"the verdicts differ between {names[0]} and {name}: first difference {diff}")
    by = {n: {c["id"]: c for c in runs[n]} for n in names}
    rows = []
    for c in runs[names[0]]:
        row = {"id": c["id"]}
        for n in names:
            row[n + "_wall"], row[n + "_cpu"] = by[n][c["id"]]["wall"], by[n][c["id"]]["cpu"]
        rows.append(row)
    return {"rows": sorted(rows, key=lambda r: -r[names[0] + "_wall"]), "claims": len(rows)}


def run(mode: str, log) -> dict:
    """Run row 15; see the module docstring."""
    from proofs_check._parallel import cpu_count

    lines, facts = [], []
    cores = cpu_count()
    for profile, claims in PROFILES[mode]:
        load0 = loadavg()
        res, per = {}, {}
        for name, jobs, engines in CHILDREN:
            with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
                log(f"row 15: verify --profile {profile} --jobs {jobs} --engines {engines} ({name})")
                res[name], out = verify_child(profile, jobs, claims, Path(tmp), TIMEOUT_S[mode], engines=engines)
                per[name] = _claims(out)
                got = json.loads((out / "report.json").read_text(encoding="utf-8"))["environment"].get("engines")
                if (got or {}).get("name") != engines:  # the child ran on other engines than asked: no result
                    raise RuntimeError(f"verify --engines {engines} reported engines {got!r}")
        load1 = loadavg()
        table = compare(per)
        p = res["parallel"]
        case = f"verify --profile {profile}" + (f" --claims {claims}" if claims else "")
        aimed, target = TARGETS[profile]
        target = target if claims is None else None
        walls = "; ".join(f"{n} {res[n]['wall_s']:.1f} s" for n, _, _ in CHILDREN)
        cpus = ", ".join(f"{n} {res[n]['cpu_s']:.0f}" for n, _, _ in CHILDREN)
        rss = " / ".join(f"{res[n]['maxrss_mib']:.0f}" for n, _, _ in CHILDREN)
        for anchor in ("baseline", "serial"):
            ratio = res[anchor]["wall_s"] / p["wall_s"]
            t = target if anchor == aimed else None
            lines.append({
                "case": case, "softpolar": "--jobs auto", "anchor": ANCHORS[anchor],
                "softpolar_s": p["wall_s"], "anchor_s": res[anchor]["wall_s"], "ratio_label": f"{anchor}/parallel",
                "ratio": ratio, "target": f">= {t:g}" if t else None, "met": (ratio >= t) if t else None,
                "notes": (f"{table['claims']} claims, verdicts identical in all three runs (asserted); wall {walls}; "
                          f"CPU s {cpus}; peak RSS {rss} MiB; {cores} cores; load {load0} -> {load1}; one run "
                          "each, in that order")})
        bound = res["serial"]["cpu_s"] / cores  # today's serial CPU work spread perfectly over every core
        facts.append({"label": f"{case}: wall " + " / ".join(n for n, _, _ in CHILDREN) + "; CPU the same",
                      "value": " / ".join(f"{res[n]['wall_s']:.1f} s" for n, _, _ in CHILDREN) + "; CPU "
                               + " / ".join(f"{res[n]['cpu_s']:.1f} s" for n, _, _ in CHILDREN),
                      "unit": "", "notes": f"on an otherwise idle machine no schedule of today's work beats serial "
                                           f"CPU / cores = {bound:.1f} s; load {load0} -> {load1}"})
        if profile == "full" and claims is None:
            facts.append({"label": f"{case} --jobs auto: wall against the issue's about 8.5 min on 2 cores",
                          "value": p["wall_s"], "unit": "s",
                          "notes": f"aim {FULL_WALL_S:.0f} s ({'met' if p['wall_s'] <= FULL_WALL_S else 'MISSED'}); "
                                   f"{cores} cores; load {load0} -> {load1}"})
        for r in table["rows"][:TOP]:
            facts.append(claim_fact(case, f"claim {r['id']}", [r]))
        rest = table["rows"][TOP:]
        if rest:
            facts.append(claim_fact(case, f"the other {len(rest)} claims (summed)", rest))
    return {"lines": lines, "facts": facts}
