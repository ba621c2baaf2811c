r"""Row 15: ``softpolar verify`` against the code of the issue's day, claim by claim, in one run.

The baseline is **the code itself**: the tree of :data:`ISSUE_DAY_COMMIT` (the last commit before the work on
the scale issue began, the code its measurements were taken on), extracted by ``git archive`` from the checkout
this softpolar runs from, and run by the same interpreter with that tree first on ``PYTHONPATH`` (the row checks,
before the run, that ``softpolar``, ``proofs_check``, ``numerics`` and ``theorems`` import from it). Nothing of
it is re-implemented or switched back by a flag: whatever the speed-ups changed is really undone. (The engine
switch ``verify --engines baseline`` undoes only the engine choices, about 6 % of the full profile; it stays a
``verify`` option, not a row child.) Without a git checkout holding that commit (an installed wheel) the row is
*not available* and says why.

The children, one run each, in this order, each from its own scratch folder with a fresh experiments folder
(``SOFTPOLAR_EXPERIMENTS_DIR``: the full profile trains the transformer grids from scratch in each):

* **issue-day** -- ``verify --profile P`` of that tree (it has no ``--jobs``: its claims ran one after another);
* **serial** -- today's ``verify --profile P --jobs 1``;
* **parallel** -- today's ``verify --profile P --jobs auto`` (for a whole profile the same command as row 5's: one
  run of a bench run serves both rows, :func:`~softpolar.benchmarks.row_verify_jobs.shared_parallel`; when row 5
  ran it first, the notes say so and give its load);
* **same-claims** -- today's ``--jobs auto`` restricted (``--claims``) to the claims the issue-day tree has.
  Today's profiles hold claims added since (the sinks claims, FORMAL's Coq check, KSINK's training runs: 7 in the
  quick profile, 10 in the full one), so the whole-profile ratio is conservative: today's run does more work.

What the row reads from the reports:

* **verdicts** (claim, control, passed): serial, parallel and same-claims must agree with each other in report
  order, and with the issue-day run on every claim both have; the row raises (status ``error``) otherwise, and
  when a claim of the issue-day tree is missing today. A faster verify with other verdicts is no result;
* **per claim**, wall seconds (all runs) and CPU seconds (``cpu_seconds`` of report.json, today's runs; the
  issue-day reports do not have it): the claims with the largest issue-day wall time get a fact each;
* the **whole run** (:func:`profile_lines`): issue-day/same-claims with the target (:data:`TARGETS`: the issue's
  1.8x for the full profile, 1.5x for the quick one), serial/parallel with the same target (row 11's, which the
  default set of rows no longer runs twice), and issue-day/parallel on the whole profiles, reported without a
  target once today's profile holds claims the issue-day tree lacks (different work: not like for like); the CPU
  seconds of each child from ``os.wait4`` (everything it waited for), the load average before and after, serial CPU
  / cores, and
  in the full profile the parallel wall against :data:`FULL_WALL_S`;
* the **ceilings** (:func:`ceilings`): the issue-day wall over today's CPU seconds / cores, the best ratio any
  schedule of this run's work could reach on this machine, for the whole profile, the same claims and the training
  claims alone.

Modes: ``smoke`` -- two cheap claims (the same wiring, every child); ``quick`` -- ``verify --profile quick``;
``full`` -- that and ``verify --profile full`` (about 40 min in all on an idle 2-core machine: the issue-day full
profile alone about 11 min).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from proofs_check import cpu_count, registry

from .row_verify_jobs import _child, shared_parallel, verify_child
from ._timing import loadavg
from ._runner import NotAvailable

TITLE = ("softpolar verify claim by claim: the code of the issue's day vs today's --jobs 1 and --jobs auto, "
         "same verdicts")
#: the code the scale issue measured (``verify --profile full`` 25 min 22 s from a fresh folder): the last commit
#: before its work began
ISSUE_DAY_COMMIT = "28464c81cda082854fe3339c8a12dfa399702ab9"
PROFILES = {"smoke": (("quick", "C02,C14"),), "quick": (("quick", None),),
            "full": (("quick", None), ("full", None))}
#: per profile: the target on issue-day / today's --jobs auto (whole profile, and the same claims where run)
TARGETS = {"quick": 1.5, "full": 1.8}
#: the profiles that also run today's --jobs auto on the issue-day tree's claims only (the full one since the
#: first full-mode report: today's full profile has 10 claims more, two of them training grids)
SAME_CLAIMS = ("quick", "full")
#: the issue's absolute aim for the full profile with --jobs auto on 2 cores: "about 8.5 min"
FULL_WALL_S = 510.0
TIMEOUT_S = {"smoke": 300, "quick": 1800, "full": 7200}
#: claims shown one by one (largest issue-day wall time first); the others are summed in one fact
TOP = 8
PACKAGES = ("softpolar", "proofs_check", "numerics", "theorems")


def claim_groups() -> dict:
    """Claim id -> group, from today's registry."""
    return {cid: getattr(c, "group", "") for cid, c in registry().items()}


class Unavailable(Exception):
    """The issue-day tree cannot be had here (no git checkout holding :data:`ISSUE_DAY_COMMIT`)."""


def repo_root(start: Path | None = None) -> Path | None:
    """The git checkout this softpolar's source lies in (a folder above it with ``.git``), or ``None``."""
    here = (start or Path(__file__)).resolve()
    for folder in here.parents:
        if (folder / ".git").exists():
            return folder
    return None


def issue_day_tree(dest: Path, commit: str = ISSUE_DAY_COMMIT, repo: Path | None = None) -> Path:
    """Extract ``commit``'s tree into the new folder ``dest`` (``git archive``); raises :class:`Unavailable`
    naming what is missing."""
    repo = repo or repo_root()
    if repo is None:
        raise Unavailable(f"needs a git checkout of softpolar holding commit {commit[:12]} (the issue-day "
                          f"baseline); this softpolar runs from {Path(__file__).resolve().parents[2]}")
    try:
        probe = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
                               capture_output=True, check=False)
    except FileNotFoundError:
        raise Unavailable(f"needs git to extract commit {commit[:12]} (the issue-day baseline)") from None
    if probe.returncode != 0:
        raise Unavailable(f"the git checkout {repo} does not hold commit {commit[:12]} (the issue-day baseline; "
                          "a shallow clone? fetch the history)")
    dest.mkdir(parents=True)
    archive = dest.with_name(dest.name + ".tar")
    subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", "-o", str(archive), commit], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    return dest


def env_first(src: Path) -> dict:
    """This process's environment with ``src`` first on ``PYTHONPATH`` (so its packages shadow this softpolar)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def check_imports_from(src: Path, env: dict) -> None:
    """Raise unless every package of :data:`PACKAGES` imports from ``src`` under ``env``."""
    code = "import importlib, sys\nfor p in sys.argv[1:]: print(importlib.import_module(p).__file__)"
    out = subprocess.run([sys.executable, "-c", code, *PACKAGES], env=env, cwd=src, capture_output=True,
                         text=True, check=False, timeout=300)
    files = out.stdout.split()
    root = src.resolve()
    if out.returncode != 0 or len(files) != len(PACKAGES) or \
            not all(Path(f).resolve().is_relative_to(root) for f in files):
        raise RuntimeError(f"the issue-day tree does not import from {src}: {out.stdout.strip()!r} "
                           f"{out.stderr.strip()[-300:]!r}")


def issue_day_child(src: Path, profile: str, claims, tmp: Path, timeout_s: float) -> tuple[dict, Path]:
    """``verify --profile P [--claims ...]`` of the issue-day tree ``src`` as a child from the fresh folder ``tmp``
    (its own experiments folder too); ``(measurement, report folder)``."""
    env = env_first(src)
    env["SOFTPOLAR_EXPERIMENTS_DIR"] = str(tmp / "experiments")
    check_imports_from(src, env)
    out = tmp / "report"
    cmd = [sys.executable, "-m", "softpolar", "verify", "--profile", profile, "--out", str(out)] + \
        (["--claims", claims] if claims else [])
    res = _child(cmd, timeout_s, env, cwd=tmp)
    if res["rc"] not in (0, 1):
        raise RuntimeError(f"the issue-day verify exited {res['rc']}: {res['tail'][-300:]}")
    return res, out


def _claims(folder: Path) -> list[dict]:
    return claims_of(json.loads((folder / "report.json").read_text(encoding="utf-8")))


def claims_of(data: dict) -> list[dict]:
    """Each claim of a report.json's ``data``: id, verdicts (claim, control, passed), wall and CPU seconds."""
    return [{"id": c["id"], "verdicts": (c["verdict"], c["negative_control"]["verdict"], c["passed"]),
             "wall": float(c["seconds"]), "cpu": c.get("cpu_seconds")} for c in data["claims"]]


def _num(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def claim_fact(case: str, what: str, rows: list[dict], names) -> dict:
    """One fact for ``rows`` of :func:`compare` (one claim, or several summed): wall and CPU of each run
    (``-`` where a run lacks the claim or its CPU seconds)."""
    def total(key):
        vals = [r.get(key) for r in rows]
        return None if any(v is None for v in vals) else sum(vals)
    runs = " / ".join(names)
    return {"label": f"{case}: {what}, wall {runs}; CPU {runs}",
            "value": " / ".join(f"{_num(total(n + '_wall'))} s" for n in names) + "; CPU "
                     + " / ".join(f"{_num(total(n + '_cpu'))} s" for n in names), "unit": "",
            "notes": "wall and CPU seconds from the report.json files (cpu_seconds: the claim's process and the "
                     "children it waited for; the issue-day reports have no cpu_seconds)"}


def compare(runs: dict[str, list[dict]], *, reference: str = "issue-day") -> dict:
    """Check the verdicts of ``runs`` (name -> :func:`_claims` of its report) and tabulate them.

    Every run but ``reference`` must give the same verdicts in the same order as the first of them; ``reference``
    (the issue-day run, which has fewer claims) must agree with them on every claim it has, and each of its
    claims must be there. Raises ``RuntimeError`` naming the runs and the first claim that differs. Returns the
    per-claim table (every claim of today's runs, largest ``reference`` wall time first, then the claims it lacks),
    the claim counts and the ids only today's runs have.
    """
    today = [n for n in runs if n != reference]
    first = today[0]
    ref = [(c["id"], c["verdicts"]) for c in runs[first]]
    for name in today[1:]:
        other = [(c["id"], c["verdicts"]) for c in runs[name]]
        if name == "same-claims":  # a subset run: compare on its claims, in report order
            ids = {i for i, _ in other}
            ref_sub = [x for x in ref if x[0] in ids]
        else:
            ref_sub = ref
        if other != ref_sub:
            diff = next(((x, y) for x, y in zip(ref_sub, other) if x != y),
                        (ref_sub[len(other):] or None, other[len(ref_sub):] or None))
            raise RuntimeError(f"the verdicts differ between {first} and {name}: first difference {diff}")
    now = dict(ref)
    old = runs.get(reference, [])
    for c in old:
        if c["id"] not in now:
            raise RuntimeError(f"claim {c['id']} of the {reference} run is missing from today's {first} run")
        if c["verdicts"] != now[c["id"]]:
            raise RuntimeError(f"the verdicts differ between {reference} and {first}: claim {c['id']} "
                               f"{c['verdicts']} then, {now[c['id']]} now")
    by = {n: {c["id"]: c for c in runs[n]} for n in runs}
    rows = []
    for cid, _ in ref:
        row = {"id": cid}
        for n in runs:
            c = by[n].get(cid)
            row[n + "_wall"], row[n + "_cpu"] = (c["wall"], c["cpu"]) if c else (None, None)
        rows.append(row)
    rows.sort(key=lambda r: (r.get(reference + "_wall") is None, -(r.get(reference + "_wall") or 0.0),
                             -r[first + "_wall"]))
    old_ids = {c["id"] for c in old}
    return {"rows": rows, "claims": len(rows), "common": len(old_ids),
            "new": [cid for cid, _ in ref if cid not in old_ids]}


#: the claim group whose claims train transformers (the full profile's grids): its CPU is shown on its own
TRAINING_GROUP = "transformer experiments"


def ceilings(res: dict, per: dict, cores: int, groups: dict) -> dict:
    """The highest issue-day / today ratios the work of this run allows on ``cores`` CPUs.

    No schedule of ``c`` CPU seconds on ``cores`` CPUs ends before ``c / cores`` seconds, so the issue-day wall
    divided by that is the ratio a perfect schedule of today's work would reach: ``whole`` for today's
    ``--jobs auto`` run, ``same_claims`` for the same-claims run where there is one, and ``training`` for the CPU
    seconds of the claims in :data:`TRAINING_GROUP` alone (``groups``: claim id -> group), as if every other claim
    cost nothing (``None`` without such claims or without their CPU seconds).
    """
    issue = res["issue-day"]["wall_s"]
    out = {"whole": issue / (res["parallel"]["cpu_s"] / cores), "same_claims": None, "training": None,
           "training_cpu_s": None}
    if "same-claims" in res:
        out["same_claims"] = issue / (res["same-claims"]["cpu_s"] / cores)
    train = [c["cpu"] for c in per["parallel"] if groups.get(c["id"]) == TRAINING_GROUP]
    if train and all(v is not None for v in train):
        out["training_cpu_s"] = sum(train)
        out["training"] = issue / (sum(train) / cores)
    return out


def ceiling_fact(case: str, ceil: dict, res: dict, cores: int, target) -> dict:
    """The fact line of ``case``'s :func:`ceilings` ``ceil``: the highest ratios the run's CPU work allows."""
    parts = [f"{ceil['whole']:.2f}x whole profile"]
    if ceil["same_claims"] is not None:
        parts.append(f"{ceil['same_claims']:.2f}x same claims")
    notes = (f"issue-day wall / (CPU seconds of today's run / {cores} cores): no schedule of that much CPU work "
             f"on {cores} cores ends sooner; --jobs auto CPU {res['parallel']['cpu_s']:.0f} s")
    if ceil["training"] is not None:
        parts.append(f"{ceil['training']:.2f}x training alone")
        notes += (f"; the claims of group '{TRAINING_GROUP}' took {ceil['training_cpu_s']:.0f} CPU s of it, "
                  f"{ceil['training_cpu_s'] / cores:.0f} s on {cores} cores even if every other claim cost nothing")
    if target:
        notes += f"; target {target:g}x"
    return {"label": f"{case}: the highest issue-day / today ratio the work of this run allows",
            "value": "; ".join(parts), "unit": "", "notes": notes}


def _line(case, name, anchor, res, target, notes, label=None):
    ratio = res[anchor]["wall_s"] / res[name]["wall_s"]
    return {"case": case, "softpolar": ANCHOR_TEXT[name], "anchor": ANCHOR_TEXT[anchor],
            "softpolar_s": res[name]["wall_s"], "anchor_s": res[anchor]["wall_s"],
            "ratio_label": label or f"{anchor}/{name}", "ratio": ratio,
            "target": f">= {target:g}" if target else None, "met": (ratio >= target) if target else None,
            "notes": notes}


def profile_lines(case: str, res: dict, table: dict, target, common: str) -> list[dict]:
    """The row's lines for one profile: issue-day / today's ``--jobs auto`` on the whole profile, on the same
    claims (where that child ran) and serial / parallel.

    The target (``target``) sits on the like-for-like lines: the same-claims one and serial / parallel. The
    whole-profile line compares different work once today's profile holds claims the issue-day tree lacks
    (``table["new"]``): it is reported without a target, and its notes say why. Without a same-claims child
    (and with no new claims) the whole-profile line keeps the target."""
    extra = ", ".join(table["new"]) or "none"
    unlike = bool(table["new"]) and "same-claims" in res
    why = (f"no target: not like for like, today's profile holds {table['claims']} claims against "
           f"{table['common']} then (the target is on the same-claims line); " if unlike else "")
    lines = [_line(case, "parallel", "issue-day", res, None if unlike else target,
                   why + f"whole profiles: {table['claims']} claims today against {table['common']} then "
                   f"(today's run does more: {extra}); verdicts identical on the {table['common']} "
                   f"claims both have (asserted); " + common)]
    if "same-claims" in res:
        lines.append(_line(case, "same-claims", "issue-day", res, target,
                           f"the same {table['common']} claims in both, verdicts identical (asserted); " + common))
    lines.append(_line(case, "parallel", "serial", res, target,  # row 11's target, same two children
                       f"{table['claims']} claims, verdicts identical (asserted); " + common))
    return lines


ANCHOR_TEXT = {"issue-day": f"the code of the issue's day (commit {ISSUE_DAY_COMMIT[:7]}, claims one after another)",
               "serial": "--jobs 1 (today, serial)", "parallel": "--jobs auto (today)",
               "same-claims": "--jobs auto on the issue-day claims only (today)"}


def run(mode: str, log) -> dict:
    """Run row 15; see the module docstring."""
    lines, facts = [], []
    cores = cpu_count()
    with tempfile.TemporaryDirectory(prefix="softpolar-bench-issue-day-") as src_tmp:
        try:
            src = issue_day_tree(Path(src_tmp) / "tree")
        except Unavailable as exc:
            raise NotAvailable(str(exc)) from None
        for profile, claims in PROFILES[mode]:
            load0 = loadavg()
            res, per = {}, {}
            with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
                log(f"row 15: verify --profile {profile} of commit {ISSUE_DAY_COMMIT[:7]} (issue-day)")
                res["issue-day"], out = issue_day_child(src, profile, claims, Path(tmp), TIMEOUT_S[mode])
                per["issue-day"] = _claims(out)
            with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
                log(f"row 15: verify --profile {profile} --jobs 1 (serial)")
                res["serial"], out = verify_child(profile, "1", claims, Path(tmp), TIMEOUT_S[mode])
                per["serial"] = _claims(out)
            shared = None
            if claims is None:  # the same command as row 5's: one run serves both rows (whichever runs first)
                log(f"row 15: verify --profile {profile} --jobs auto (parallel)")
                shared = shared_parallel(profile, TIMEOUT_S[mode], 15)
                res["parallel"], per["parallel"] = shared["res"], claims_of(shared["report"])
            else:
                with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
                    log(f"row 15: verify --profile {profile} --jobs auto (parallel)")
                    res["parallel"], out = verify_child(profile, "auto", claims, Path(tmp), TIMEOUT_S[mode])
                    per["parallel"] = _claims(out)
            if profile in SAME_CLAIMS:
                same = ",".join(c["id"] for c in per["issue-day"])
                with tempfile.TemporaryDirectory(prefix="softpolar-bench-profile-") as tmp:
                    log(f"row 15: verify --profile {profile} --jobs auto --claims <the issue-day tree's "
                        f"{len(per['issue-day'])}> (same-claims)")
                    res["same-claims"], out = verify_child(profile, "auto", same, Path(tmp), TIMEOUT_S[mode])
                    per["same-claims"] = _claims(out)
            load1 = loadavg()
            table = compare(per)
            names = list(res)
            case = f"verify --profile {profile}" + (f" --claims {claims}" if claims else "")
            target = TARGETS[profile] if claims is None else None
            walls = "; ".join(f"{n} {res[n]['wall_s']:.1f} s" for n in names)
            cpus = ", ".join(f"{n} {res[n]['cpu_s']:.0f}" for n in names)
            rss = " / ".join(f"{res[n]['maxrss_mib']:.0f}" for n in names)
            common = (f"wall {walls}; CPU s {cpus}; peak RSS {rss} MiB; {cores} cores; load {load0} -> {load1}; "
                      "one run each, in that order")
            if shared and shared["reused"]:
                common += (f"; the parallel child is the run row {shared['row']} measured earlier in this bench run "
                           f"(the same command, not run twice; load {shared['load'][0]} -> {shared['load'][1]})")
            lines.extend(profile_lines(case, res, table, target, common))
            bound = res["serial"]["cpu_s"] / cores  # today's serial CPU work spread perfectly over every core
            facts.append({"label": f"{case}: wall " + " / ".join(names) + "; CPU the same",
                          "value": " / ".join(f"{res[n]['wall_s']:.1f} s" for n in names) + "; CPU "
                                   + " / ".join(f"{res[n]['cpu_s']:.1f} s" for n in names),
                          "unit": "", "notes": f"on an otherwise idle machine no schedule of today's work beats "
                                               f"serial CPU / cores = {bound:.1f} s; load {load0} -> {load1}"})
            if claims is None:
                facts.append(ceiling_fact(case, ceilings(res, per, cores, claim_groups()), res, cores, target))
            if profile == "full" and claims is None:
                facts.append({"label": f"{case} --jobs auto: wall against the issue's about 8.5 min on 2 cores",
                              "value": res["parallel"]["wall_s"], "unit": "s",
                              "notes": f"aim {FULL_WALL_S:.0f} s "
                                       f"({'met' if res['parallel']['wall_s'] <= FULL_WALL_S else 'MISSED'}); "
                                       f"{cores} cores; load {load0} -> {load1}"})
            for r in table["rows"][:TOP]:
                facts.append(claim_fact(case, f"claim {r['id']}", [r], names))
            rest = table["rows"][TOP:]
            if rest:
                facts.append(claim_fact(case, f"the other {len(rest)} claims (summed)", rest,
                                        [n for n in names if n != "issue-day"]))
    return {"lines": lines, "facts": facts, "issue_day_commit": ISSUE_DAY_COMMIT}
