r"""Mutation testing: planted bugs in the engine, what each one did to each claim, and the kill matrix.

A *mutant* is a plausible mistake planted into the engine for the duration of a ``with`` block, by
monkeypatching; no source file is edited. A mutant names the engine parts it plants its bug in
(``engines``: ``"flow"``, ``"reduced"``, ``"symbolic.flow"``, ...); every claim whose record lists one of those
parts (:attr:`Claim.engines <proofs_check.claim.Claim>`) is re-run under it (check and negative control)
in a fresh :class:`Context`, so no trajectory computed without the bug is reused. Each run has one outcome:

* **killed**: the check no longer reaches the claim's expected verdict (its verdict sees the bug);
* **detected**: the check raised :class:`numerics.IntegrationError`, an engine that refused to produce a wrong
  answer (loud failure), counted apart from kills;
* **crashed**: any other exception escaped the check's own code, or a certificate checker it ran crashed in its
  own code on a certificate it had read (``Outcome.raised``; a bug of the check, not evidence);
* **equivalent**: the mutant is *proven* equal to a reparametrization that the claim's statement is blind to
  (``Mutant.equivalent_under`` matches ``Claim.invariant_under``; e.g. ``reduced.du_scale2`` is exactly
  $b\to2b$, proven by :func:`prove_du_scale2_is_b_doubled`); the claim is not re-run;
* **survived**: the check still reached its expected verdict.

Only killed and detected count. Besides, a run records whether the negative control's *statement* held under
the mutant (**control passes**): with the claim's witness (:class:`proofs_check.claim.Witness`, on the claim
record: a planted bug, or an input under which the control's wrong statement holds) this shows every control
*can* pass, so "control refuted" is evidence. Witnesses are ``strong`` or ``weak`` (they re-run the claim's own
check, or keep inputs where the wrong statement happens to hold); the report lists the weak ones.

Requirements checked by :func:`summarize`: every numeric claim (evidence other than a proof, :data:`PROOF_KINDS`)
that ran is killed or detected by at least one mutant aimed at it, no run crashed, and every control that ran
is shown passable. ``softpolar verify --mutants`` exits 1 otherwise.

Mutant groups: :data:`MUTANTS` is the engine group; other modules add groups (e.g. mutants of the independent
checkers) with :func:`register_mutant_group`, or by listing a module that defines ``MUTANT_GROUP`` in
:data:`MUTANT_GROUP_MODULES`. A group may bring its own ``evaluate(mutant, ctx) -> dict`` (for mutants caught
by a tamper suite rather than by a claim's verdict); its rows are kept in the report next to the matrix.

Side by side (``verify --mutants --jobs N``, default ``auto`` as for the claims): each *unit*, one mutant with
every claim it aims at, or the witnesses of one group of claims, runs in a process ``fork``ed for it alone
(:func:`run_forked`), so a patch, and whatever a cache kept under it, ends with that process: it never reaches the
verify process or another mutant's run. The units start longest first (the seconds of the report already in
``--out``, else :data:`DEFAULT_MUTANT_SECONDS`, else 1 s); the processes run on CPU shares of their own, hold no
lock of the verify process and die with it (the machinery of :mod:`..parallel`). The report is the serial run's,
the ``seconds`` fields aside: each mutant's cells come from one context as before, and the rows, cells and
witnesses are put together in the serial order. A process that dies without answering costs time, not cells: its
unit runs again in the verify process, after a note on stderr. Progress lines come as each unit finishes.

Known limits: a mutant that leaves every aimed claim intact is reported as surviving; it is then either
equivalent on the tested inputs (e.g. no max shift while every logit stays far below 709) or a gap in the
checks; the report lists it either way.

Where it lives: the planted bugs in :mod:`._planted`, the forked processes in :mod:`.forked`, the requirements
and the Markdown in :mod:`._mutation_report`; this module holds the groups and runs the units.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
import time

from theorems import InvalidArgument
import numerics

from ..claim import Context, run_claim
from .forked import run_forked
from ._mutation_report import in_scope, mutation_markdown, summarize  # noqa: F401 - in_scope re-exported
from ._planted import (  # noqa: F401 - ENGINES, is_numeric, prove_...: re-exported (tests, door)
    COUNTING, ENGINES, MUTANTS, OUTCOMES, WITNESS_MUTANTS, Mutant, MutantGroup, patched, is_numeric,
    prove_du_scale2_is_b_doubled)
from ..parallel import can_fork, previous_report, units


# ---- groups of mutants ------------------------------------------------------------------------
#: modules that define ``MUTANT_GROUP`` (a :class:`MutantGroup`), imported on first use
MUTANT_GROUP_MODULES: list[str] = []
_GROUPS: dict[str, MutantGroup] = {"engine": MutantGroup("engine", "planted bugs in the engine, seen by claims",
                                                         MUTANTS)}


def register_mutant_group(group: MutantGroup) -> MutantGroup:
    """Add ``group`` (its mutants join ``--mutants all`` and name lookup); names must be new."""
    if not isinstance(group, MutantGroup):
        raise InvalidArgument(f"group={group!r} is not allowed; expected a MutantGroup")
    taken = {m.name for g in _GROUPS.values() if g.name != group.name for m in g.mutants}
    clash = [m.name for m in group.mutants if m.name in taken]
    if clash:
        raise InvalidArgument(f"mutant names {clash} of group {group.name!r} are taken; expected new names")
    _GROUPS[group.name] = group
    return group


def mutant_groups() -> dict[str, MutantGroup]:
    """Every group, the engine group first (modules of :data:`MUTANT_GROUP_MODULES` imported now)."""
    for name in MUTANT_GROUP_MODULES:
        g = getattr(importlib.import_module(name), "MUTANT_GROUP", None)
        if g is not None and g.name not in _GROUPS:
            register_mutant_group(g)
    return dict(_GROUPS)


def all_mutants() -> tuple[Mutant, ...]:
    return tuple(m for g in mutant_groups().values() for m in g.mutants)


def group_of(m: Mutant) -> MutantGroup:
    for g in mutant_groups().values():
        if any(x.name == m.name for x in g.mutants):
            return g
    return _GROUPS["engine"]


def mutant(name: str) -> Mutant:
    """The mutant called ``name`` (from any group or the witness-only mutants)."""
    for m in all_mutants() + WITNESS_MUTANTS:
        if m.name == name:
            return m
    raise InvalidArgument(f"mutants={name!r} is not a known mutant; expected names from: "
                          f"{', '.join(m.name for m in all_mutants())}")


def select_mutants(text: str | None) -> tuple[Mutant, ...]:
    """``None``/``'all'``: every mutant of every group; a group name: its mutants; else comma-separated names."""
    if text is None or text == "all":
        return all_mutants()
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InvalidArgument(f"mutants={text!r} is empty; expected 'all' or comma-separated mutant names")
    groups = mutant_groups()
    out = []
    for n in dict.fromkeys(names):
        out.extend(groups[n].mutants if n in groups else (mutant(n),))
    return tuple(dict.fromkeys(out))


# ---- running ---------------------------------------------------------------------------------
#: under a mutant, a batch integration that needs more than this many steps raises IntegrationError (a
#: detection, reported as such); the unmutated searches need far fewer (12 points per decade, log clock)
MUTANT_MAX_STEPS = 20_000


def _step_budget():
    orig = numerics.integrate_batch

    def integrate_batch(*args, **kw):
        kw["max_steps"] = min(int(kw.get("max_steps", MUTANT_MAX_STEPS)), MUTANT_MAX_STEPS)
        return orig(*args, **kw)
    return patched((numerics, "integrate_batch", integrate_batch))


def ctx_like(ctx: Context) -> Context:
    """A fresh :class:`Context` with every setting of ``ctx`` (profile, seed, device, dps, ``engines``, and any
    setting a later Context adds: every field is copied) and an empty memo, so that nothing computed without the
    bug is reused while what the user asked to compute with (``verify --engines``) stays the user's choice."""
    return dataclasses.replace(ctx, cache={})


def classify(claim, outcome) -> str:
    """The outcome class of a check's result under a mutant (``equivalent`` is decided before running).

    ``outcome.raised`` is set when the check raised (:func:`proofs_check.claim.run_claim`) and when a certificate
    checker it ran crashed in its own code (the checkers' results say so; the claims then set
    :data:`proofs_check.claims._claims_certify.CHECKER_CRASH`): both are crashes, never kills."""
    if outcome.raised == "IntegrationError":
        return "detected"
    if outcome.raised:
        return "crashed"
    return "survived" if outcome.verdict == claim.expected else "killed"


def _cell(claim, result) -> dict:
    ctl = result.control
    outcome = classify(claim, result.outcome)
    return {"outcome": outcome, "check": result.outcome.verdict, "control": ctl.verdict,
            "killed": outcome in COUNTING,
            **({"raised": result.outcome.reason[:240]} if result.outcome.raised else {}),
            "control_passes": ctl.verdict == claim.expected,
            "evidence": result.outcome.evidence[:240], "seconds": round(result.seconds, 2)}


_PROOFS: dict = {}


def equivalence(m: Mutant, claim):
    """``(True, why)`` when ``m`` is proven equal to a reparametrization ``claim`` is invariant under."""
    if not m.equivalent_under or m.equivalent_under not in getattr(claim, "invariant_under", ()):
        return None
    if m.name not in _PROOFS:
        _PROOFS[m.name] = m.equivalence_proof() if m.equivalence_proof else (False, "no proof given")
    ok, why = _PROOFS[m.name]
    return (f"the mutant is {m.equivalent_under} -> reparametrized ({why}); the claim holds for every "
            f"{m.equivalent_under} > 0 and states nothing about its value") if ok else None


def run_witness(claim, ctx) -> dict:
    """Run ``claim``'s witness: the control under its mutant, or the witness's own run; never raises."""
    w = claim.witness
    base = {"witness": w.description, "kind": w.kind, **({"mutant": w.mutant} if w.mutant else {}),
            **({"weak_because": w.weak_because} if w.weak_because else {})}
    try:
        if w.mutant:
            with mutant(w.mutant).patch():
                out = claim.control.run(ctx_like(ctx))
        else:
            out = w.run(ctx)
    except Exception as exc:  # recorded, never swallowed silently
        return {**base, "control": "inconclusive", "passes": False, "evidence": f"{type(exc).__name__}: {exc}"}
    return {**base, "control": out.verdict, "passes": out.verdict == claim.expected, "evidence": out.evidence[:300]}


# ---- one unit of a mutation run: a mutant (its patch and every aimed claim), or witnesses ----------------
def run_mutant(m: Mutant, claims, ctx: Context, log) -> dict:
    """Run ``m``: under its patch, every claim of ``claims`` it aims at (check and control) in one fresh context;
    ``{"row": per-mutant row, "cells": {claim id: cell}}``, or ``{"group_row": row}`` for a group's own
    ``evaluate``. ``log`` gets one line per claim as it finishes."""
    group = group_of(m)
    t0 = time.perf_counter()
    if group.evaluate is not None:
        row = dict(group.evaluate(m, ctx_like(ctx)))
        log(f"mutant {m.name:<22} {row.get('outcome', '?')} by {row.get('caught_by') or '-'}")
        return {"group_row": {"group": group.name, "name": m.name, "description": m.description, **row,
                              "seconds": round(time.perf_counter() - t0, 2)}}
    aimed = [c for c in claims if m.aims_at(c)]
    cells: dict = {}
    for c in aimed:
        why = equivalence(m, c)
        if why:
            cells[c.id] = {"outcome": "equivalent", "killed": False, "control_passes": False, "evidence": why,
                           "seconds": 0.0}
            log(f"mutant {m.name:<22} {c.id:<28} equivalent (not run): {why[:80]}")
    todo = [c for c in aimed if c.id not in cells]
    if todo:
        mctx = ctx_like(ctx)
        with m.patch(), _step_budget():
            for c in todo:
                r = run_claim(c, mctx)
                cells[c.id] = cell = _cell(c, r)
                log(f"mutant {m.name:<22} {c.id:<28} check {r.outcome.verdict:<12} {cell['outcome'].upper()}; "
                    f"control {r.control.verdict}{' (passes)' if cell['control_passes'] else ''} "
                    f"{r.seconds:6.1f} s")
    row = {"name": m.name, "description": m.description, "engines": list(m.engines),
           "aimed_at": [c.id for c in aimed],
           **{k: [c.id for c in aimed if cells[c.id]["outcome"] == k] for k in OUTCOMES},
           "seconds": round(time.perf_counter() - t0, 2)}
    return {"row": row, "cells": cells}


def _witness_row(claim, ctx: Context, log) -> dict:
    """:func:`run_witness` with its wall time (``seconds``: the start order of a later ``jobs=N`` run)."""
    t0 = time.perf_counter()
    w = run_witness(claim, ctx)
    w["seconds"] = round(time.perf_counter() - t0, 2)
    log(f"witness {claim.id:<28} control {w['control']:<12} {'passes' if w['passes'] else 'NOT PASSED'} "
        f"({w['kind']}) under {w['witness']}")
    return w


#: estimated seconds of each unit of ``verify --mutants --jobs N`` (a mutant by name, ``witness <claim id>``),
#: when the report already in ``--out`` has none (there the previous run's seconds are used): only the order in
#: which the units start depends on them (longest first); 1 s for a unit missing here. Quick profile: the units
#: of 2 s or more in the serial mutation run of every quick claim (``verify --mutants --jobs 1``, commit 29248fd,
#: this project's shared 2-core machine at load 1-2); full profile: not measured yet (1 s each)
DEFAULT_MUTANT_SECONDS: dict = {
    "quick": {"reduced.gamma_sign": 80.5, "loss.dell_argument": 75.0, "flow.da_sign": 35.6, "flow.da_zero": 27.0,
              "flow.da_scale3": 21.6, "flow.time_scale2": 19.7, "jacobian.diag_only": 18.6,
              "coq.lemma_as_axiom": 13.3, "witness SINK2.CERT": 8.9, "witness C25": 7.7, "test.non_strict": 6.4,
              "softmax.no_max_shift": 6.0, "sinks.sink_weight2": 6.0, "sinks.no_sink": 4.8, "loss.dell_sign": 4.4,
              "certify.field_da_scale": 3.9, "witness FORMAL": 3.0, "coq.ties_region": 2.9, "symbolic.no_J": 2.4,
              "witness C28": 2.4, "witness C14": 2.2, "symbolic.dV_sign": 2.1, "witness C16": 2.1,
              "reduced.da_scale2": 2.1},
    "full": {},
}


def previous_seconds(profile: str, out_dir=None) -> dict:
    """The seconds per unit in the report already in ``out_dir`` when it is of ``profile``: each mutant's and
    checker mutant's by name, each witness's as ``witness <claim id>``, on top of
    :data:`DEFAULT_MUTANT_SECONDS`; a unit neither knows is missing (the callers take 1 s)."""
    known = dict(DEFAULT_MUTANT_SECONDS.get(profile, {}))
    data = previous_report(out_dir, profile)
    if data is not None:
        try:
            mut = data.get("mutation") or {}
            checker = (mut.get("checker_mutants") or {}).get("mutants", [])
            for r in [*mut.get("mutants", []), *mut.get("groups", []), *checker]:
                known[str(r["name"])] = float(r["seconds"])
            for cid, w in (mut.get("witnesses") or {}).items():
                if "seconds" in w:
                    known[f"witness {cid}"] = float(w["seconds"])
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # not one of ours: the defaults
    return known


def unit_estimates(tasks, mutants, wclaims, wunits, profile: str, out_dir) -> dict:
    """Estimated seconds per task (:func:`previous_seconds`, else 1 s per mutant or witness)."""
    known = previous_seconds(profile, out_dir)
    est = {}
    for kind, i in tasks:
        if kind == "m":
            est[(kind, i)] = known.get(mutants[i].name, 1.0)
        else:
            est[(kind, i)] = sum(known.get(f"witness {wclaims[k].id}", 1.0) for k in wunits[i])
    return est


def start_order(tasks, est) -> list:
    """``tasks`` longest first by ``est`` (ties: their order in ``tasks``)."""
    return sorted(tasks, key=lambda t: (-est[t], tasks.index(t)))


def _preload() -> None:
    """Import here, once, what most units would import on their own in their fresh process: torch (the batch
    integrators' backend; 1.8 s per process on this project's machine), when installed. Importing starts no
    thread (the workers set their thread count, :func:`..parallel.worker_init`); nothing computed changes."""
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is not None:
        import torch  # noqa: F401


def run_mutants(claims, ctx: Context, mutants=None, *, log=None, jobs: int = 1, out_dir=None) -> dict:
    """Run the aimed claims under each mutant and every claim's witness; return the kill matrix.

    ``jobs``: processes side by side (``verify --mutants --jobs N``). With ``jobs > 1`` (and ``fork``) each unit,
    a mutant (its patch and every claim it aims at) or the witnesses of one group of claims
    (:func:`..parallel.units`), runs in a process of its own (:func:`run_forked`), longest first
    (:func:`unit_estimates`: the seconds of the report in ``out_dir``); a patch is applied only there. The
    report is that of the serial run (``jobs=1``: every mutant in order in this process, then the witnesses),
    ``seconds`` aside. ``log`` gets the progress lines: each claim's as it finishes (serial), each unit's as
    the unit finishes (in processes).
    """
    log = log or (lambda s: None)
    mutants = all_mutants() if mutants is None else tuple(mutants)
    claims = list(claims)
    start = time.perf_counter()
    wclaims = [c for c in claims if c.witness is not None]
    wunits = units(wclaims)
    tasks = [("m", i) for i in range(len(mutants))] + [("w", j) for j in range(len(wunits))]
    jobs = min(int(jobs), len(tasks))
    results: dict = {}
    if jobs <= 1 or not can_fork():
        for i, m in enumerate(mutants):
            results[("m", i)] = run_mutant(m, claims, ctx, log)
        wctx = ctx_like(ctx)
        witnesses = {c.id: _witness_row(c, wctx, log) for c in wclaims}
    else:
        def run_task(task, log):
            kind, i = task
            if kind == "m":
                return run_mutant(mutants[i], claims, ctx, log)
            wctx = ctx_like(ctx)
            return [(k, _witness_row(wclaims[k], wctx, log)) for k in wunits[i]]

        _preload()
        order = start_order(tasks, unit_estimates(tasks, mutants, wclaims, wunits, ctx.profile, out_dir))
        run_forked(order, run_task, jobs=jobs, on_done=results.__setitem__, log=log)
        rows = dict(item for j in range(len(wunits)) for item in results[("w", j)])
        witnesses = {c.id: rows[k] for k, c in enumerate(wclaims)}
    matrix: dict = {c.id: {} for c in claims}
    per_mutant, group_rows = [], []
    for i, m in enumerate(mutants):
        got = results[("m", i)]
        if "group_row" in got:
            group_rows.append(got["group_row"])
            continue
        for cid, cell in got["cells"].items():
            matrix[cid][m.name] = cell
        per_mutant.append(got["row"])
    summary = summarize(claims, matrix, witnesses, mutants, group_rows)
    summary["total_seconds"] = round(time.perf_counter() - start, 2)
    return {"mutants": per_mutant, "matrix": matrix, "witnesses": witnesses, "groups": group_rows,
            "summary": summary, "claims": [c.id for c in claims]}
