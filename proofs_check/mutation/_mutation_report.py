r"""The mutation report: the requirements (:func:`summarize`: every numeric claim that ran is killed or
detected, no run crashed, every control shown passable) and the kill matrix in Markdown
(:func:`mutation_markdown`).
"""
from __future__ import annotations

from ..claim import opposite
from ._planted import COUNTING, OUTCOMES, is_numeric


def in_scope(claim) -> bool:
    """A claim whose record names the engine parts it runs through or a witness; other claims (plugins without
    either) are listed as outside the scope, never counted as covered. A claim with a witness but no engine
    tags (C31-C33 and KSINK.* of the transformer experiments, ATLAS) is in the scope for its control's
    passability only: no engine mutant is aimed at it, so it is listed as *witness only*, not as killed."""
    return bool(claim.engines) or claim.witness is not None


def summarize(claims, matrix, witnesses, mutants, group_rows=()) -> dict:
    """Counts per outcome class; numeric claims not killed; crashes; controls not shown passable."""
    outside = [c.id for c in claims if not in_scope(c)]
    claims = [c for c in claims if in_scope(c)]
    witness_only = [c.id for c in claims if not c.engines]
    numeric = [c.id for c in claims if is_numeric(c) and c.engines]
    aimed = {cid: list(cells) for cid, cells in matrix.items()}
    by = {k: {cid: [m for m, cell in matrix.get(cid, {}).items() if cell["outcome"] == k] for cid in matrix}
          for k in OUTCOMES}
    killed = {cid: by["killed"][cid] + by["detected"][cid] for cid in matrix}
    not_killed = [cid for cid in numeric if not killed.get(cid)]
    passable = {}
    for c in claims:
        how = [m for m, cell in matrix.get(c.id, {}).items() if cell["control_passes"]]
        if witnesses.get(c.id, {}).get("passes"):
            how.append(f"witness ({witnesses[c.id]['kind']}): " + witnesses[c.id]["witness"])
        passable[c.id] = how
    unpassable = [cid for cid, how in passable.items() if not how]
    crashes = sorted(f"{cid} under {m}" for cid, ms in by["crashed"].items() for m in ms)
    counts = {k: sum(len(v) for v in by[k].values()) for k in OUTCOMES}
    weak = [cid for cid, w in witnesses.items() if w["kind"] == "weak"]
    strong_control = [cid for cid in passable if any(m for m in passable[cid] if not m.startswith("witness"))
                      or witnesses.get(cid, {}).get("kind") == "strong" and witnesses[cid]["passes"]]
    n_runs = sum(len(cells) for cells in matrix.values())
    return {"mutants": len(mutants), "claim_runs": n_runs, "outside_scope": outside, "witness_only": witness_only,
            "counts": counts, "kills": counts["killed"] + counts["detected"],
            "numeric_claims": numeric, "numeric_claims_not_killed": not_killed,
            "claims_without_aimed_mutant": [cid for cid in numeric if not aimed.get(cid)],
            "killed_by": {cid: by["killed"][cid] for cid in matrix},
            "detected_by": {cid: by["detected"][cid] for cid in matrix},
            "equivalent_under": {cid: by["equivalent"][cid] for cid in matrix if by["equivalent"][cid]},
            "crashes": crashes, "control_passable_by": passable, "controls_not_shown_passable": unpassable,
            "controls_with_only_weak_evidence": [cid for cid in weak if cid not in strong_control],
            "checker_mutants_not_caught": [r["name"] for r in group_rows if r.get("outcome") not in COUNTING],
            "ok": not not_killed and not unpassable and not crashes
            and not [r for r in group_rows if r.get("outcome") not in COUNTING]}


def expected_control(claim) -> str:
    """The verdict a control must reach in a normal run (for the report)."""
    return opposite(claim.expected)


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_LETTER = {"killed": "K", "detected": "D", "crashed": "X", "equivalent": "=", "survived": "s"}


def mutation_markdown(mutation: dict) -> str:
    """The ``--mutants`` section of report.md: counts per outcome, the claim x mutant matrix, the witnesses."""
    m = mutation["summary"]
    names = [x["name"] for x in mutation["mutants"]]
    short = {n: f"M{k + 1}" for k, n in enumerate(names)}
    c = m["counts"]
    lines = ["", "## Mutation testing (`--mutants`)", "",
             "Planted bugs (monkeypatched for the run, no source edited); each claim whose engines a mutant changes "
             "is re-run under it in a fresh context. **K** killed (the verdict saw the bug); **D** detected (an "
             "IntegrationError refused to give an answer); **X** crashed (another exception escaped the check: a "
             "bug of the check, not evidence); **=** equivalent (the mutant is proven to be a reparametrization "
             "the claim's statement is blind to; not run); **s** survived; **+c**: the negative control's "
             "statement held under this mutant; blank: not aimed. Only K and D count.", "",
             f"- {m['mutants']} mutants, {m['claim_runs']} claim runs: {c['killed']} killed, {c['detected']} "
             f"detected, {c['crashed']} crashed, {c['equivalent']} equivalent, {c['survived']} survived; "
             f"{m['total_seconds']:.1f} s",
             f"- numeric claims not killed by any aimed mutant: "
             f"**{', '.join(m['numeric_claims_not_killed']) or 'none'}**",
             f"- crashes of a check: **{', '.join(m['crashes']) or 'none'}**",
             f"- controls not shown passable: **{', '.join(m['controls_not_shown_passable']) or 'none'}**",
             f"- controls shown passable only by a weak witness (the claim's own check, or inputs kept where the "
             f"wrong statement happens to hold): {', '.join(m['controls_with_only_weak_evidence']) or 'none'}",
             f"- requirements met: **{'yes' if m['ok'] else 'NO'}**",
             f"- claims outside the mutation scope (no engines, no witness on the record): "
             f"{', '.join(m.get('outside_scope', [])) or 'none'}",
             f"- claims with a witness but no engine tags (no mutant aimed at them; their controls shown passable "
             f"by the witness only): {', '.join(m.get('witness_only', [])) or 'none'}", "",
             "| mutant | planted bug | aimed at | killed | detected | crashed | equivalent | time |",
             "|---|---|---|---|---|---|---|---|"]
    for x in mutation["mutants"]:
        lines.append(f"| {short[x['name']]} `{x['name']}` | {_md(x['description'])} | {len(x['aimed_at'])} | "
                     + " | ".join(f"{len(x[k])}: {', '.join(x[k]) or '-'}" if x[k] else "0"
                                  for k in ("killed", "detected", "crashed", "equivalent"))
                     + f" | {x['seconds']:.1f} s |")
    lines += ["", "| claim | " + " | ".join(short[n] for n in names) + " | control passable by |",
              "|---|" + "---|" * len(names) + "---|"]
    for cid in mutation["claims"]:
        cells = mutation["matrix"].get(cid, {})
        row = []
        for n in names:
            cell = cells.get(n)
            row.append("" if cell is None else _LETTER[cell["outcome"]] + ("+c" if cell["control_passes"] else ""))
        how = m["control_passable_by"].get(cid, [])
        lines.append(f"| {cid} | " + " | ".join(row) + f" | {_md('; '.join(how) or '**not shown**')} |")
    if mutation.get("groups"):
        lines += ["", "Mutants of the checkers (each must be caught by its tamper or soundness suite):", "",
                  "| group | mutant | weakening | outcome | caught by | time |", "|---|---|---|---|---|---|"]
        for r in mutation["groups"]:
            lines.append(f"| {r['group']} | `{r['name']}` | {_md(r['description'])} | {r.get('outcome', '?')} | "
                         f"{_md(r.get('caught_by') or '-')} | {r['seconds']:.1f} s |")
    if mutation["witnesses"]:
        lines += ["", "Control witnesses (an input or planted bug under which the control's statement holds):", "",
                  "| claim | witness | kind | control verdict | passes |", "|---|---|---|---|---|"]
        for cid, w in mutation["witnesses"].items():
            kind = w["kind"] + (f" ({w['weak_because']})" if w.get("weak_because") else "")
            lines.append(f"| {cid} | {_md(w['witness'])} | {_md(kind)} | {w['control']} | "
                         f"{'yes' if w['passes'] else '**no**'} |")
    return "\n".join(lines) + "\n"
