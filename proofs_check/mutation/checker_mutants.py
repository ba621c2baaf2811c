r"""Mutants of the checkers: does each tamper or soundness suite notice a weakened checker?

A claim's mutants (:mod:`proofs_check.mutation.mutants`) show that the claims' checks can fail. These
show the same for the *checkers* the claims rest on: the point-certificate checker
(:mod:`numerics.validated.certcheck`), the atlas checker (:mod:`numerics.validated.atlas_check`),
the box engine (:mod:`numerics.validated.box`) and the size-generic prover
(:mod:`theorems.id_generic_nf`). Each mutant weakens one test of one of them, by monkeypatching a
function for the duration of a run (drops a bound, skips a check, widens a rounding, contracts
out of range), and names the suites that must catch it.

A **suite** runs honest inputs and attacks through the real code and returns its failures: an
honest input refused, or an attack accepted. Without a mutant every suite must come back clean
(the baseline); under a mutant, a suite *catches* it when it comes back with a failure. The
suites:

* ``point-tamper``: one point certificate, accepted, and four edits of it refused by the
  independent checker (a wrong winner told consistently, a raised a-gap and u-gap bound, a
  display field, the model);
* ``atlas-tamper`` (:mod:`softpolar.atlas.checker_suites`): a small conflict3 atlas (width 1/4), accepted, and the
  audit's attacks refused
  (a wrong winner told consistently on a box that needed integration, raised stored bounds, an
  edited tau, area and fraction, a missing box, a 4-entry vector under ``n = 3``, a text cut at
  200 characters, a preset name on other data);
* ``box-soundness``: the box engine builds the same atlas afresh (under the mutant) and the
  independent checker must re-prove every box it certified;
* ``prover-soundness``: the auditor's five expressions get the right verdicts and a random
  mixed-range identity run (25 identities) finds no unsound verdict.

:func:`run_checker_mutants` reports, per mutant, every suite that caught it and the time.
"""
from __future__ import annotations

import contextlib
import copy
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable
import importlib
import json
import numerics
from numerics.validated import atlas_check as ac, box as _box, certcheck as K
from numerics.validated.certify import certificate_digest, claim_fields, wrong_winner_certificate
from theorems import id_generic_model as G, id_generic_nf as nf
from theorems.id_generic_fuzz import run as fuzz
from theorems.id_generic_nf import D, N
from theorems.id_generic_proofs import prove_parts, refute_parts
from ..parallel import can_fork
from .forked import run_forked


@dataclass(frozen=True)
class CheckerMutant:
    """``patch()`` returns ``(module, attribute, replacement)`` triples; ``suites``: the suites that must catch it."""

    name: str
    checker: str
    weakens: str
    patch: Callable
    suites: tuple


@contextlib.contextmanager
def applied(mutant: CheckerMutant):
    """Apply the mutant's patches for the duration of the block (always undone)."""
    saved = []
    try:
        for obj, attr, new in mutant.patch():
            saved.append((obj, attr, getattr(obj, attr)))
            setattr(obj, attr, new)
        yield
    finally:
        for obj, attr, old in reversed(saved):
            setattr(obj, attr, old)


# ---- the mutants -----------------------------------------------------------------------------------
def _pc(name):
    return K, name


def _pc_skip_display():
    return [(*_pc("_check_display"), lambda cert, expected: None)]


def _pc_skip_model():
    return [(*_pc("check_model"), lambda init: None)]


def _pc_drop_bounds(which: str):
    def weak(ar, U, A, n, winner, la, lu):
        # as prove_gap_bounds, with the comparison of one kind of stored bound dropped
        own_a, own_u = [], []
        for j in range(n):
            if j == winner:
                own_a.append(None)
                own_u.append(None)
                continue
            ga_lo, _ = ar.bounds(A[winner] - A[j])
            gu_lo, _ = ar.bounds(U[winner] - U[j])
            own_a.append(float(ga_lo))
            own_u.append(float(gu_lo))
            if which != "a" and not (la[j] > 0 and ga_lo >= la[j]):
                raise K.Reject(f"a-gap bound for token {j} not proven")
            if which != "u" and not (lu[j] >= 0 and gu_lo >= lu[j]):
                raise K.Reject(f"u-gap bound for token {j} not proven")
        return own_a, own_u
    return [(K, "prove_gap_bounds", weak)]


def _ac(name):
    return ac, name


def _ac_ignore_winner():
    real = ac.in_region
    return [(ac, "in_region", lambda m, A, E, n, i, *claims: any(real(m, A, E, n, k) for k in range(n)))]


def _ac_skip_bounds():
    real = ac.in_region
    return [(ac, "in_region", lambda m, A, E, n, i, *claims: real(m, A, E, n, i))]


def _ac_truncate():
    real = ac.read_affine
    return [(ac, "read_affine", lambda text: real(text[:ac.MAX_TEXT] if isinstance(text, str) else text))]


def _ac_skip_numbers():
    return [(*_ac("_number_problems"), lambda cert, nums: [])]


def _ac_skip_tiling():
    return [(*_ac("check_tiling"), lambda cert, sv=None: [])]


def _box_drop_u_gap():
    real = _box.gap_forms

    def forms(n, i, j):
        fu, fa = real(n, i, j)
        return fa, fa  # the u-gap test replaced by the a-gap test
    return [(_box, "gap_forms", forms)]


def _nf_contract_out_of_range():
    return [(nf, "in_range", lambda x, hi, ranges=None: True)]


def _nf_unknown_as_outside():
    real = nf.in_range

    def outside(x, hi, ranges=None):
        v = real(x, hi, ranges)
        return False if v is None else v  # "not provably inside" read as "outside": the term dropped as 0
    return [(nf, "in_range", outside)]


MUTANTS = (
    CheckerMutant("point.skip_display", "point checker", "display fields not compared with the verified numbers",
                  _pc_skip_display, ("point-tamper",)),
    CheckerMutant("point.skip_model", "point checker", "init.loss / init.link not checked", _pc_skip_model,
                  ("point-tamper",)),
    CheckerMutant("point.drop_a_bound", "point checker", "the stored a-gap bounds not compared (drops a bound)",
                  lambda: _pc_drop_bounds("a"), ("point-tamper",)),
    CheckerMutant("point.drop_u_bound", "point checker", "the stored u-gap bounds not compared (drops a bound)",
                  lambda: _pc_drop_bounds("u"), ("point-tamper",)),
    CheckerMutant("atlas.ignore_winner", "atlas checker", "region test accepts any token's R_i^+",
                  _ac_ignore_winner, ("atlas-tamper",)),
    CheckerMutant("atlas.skip_bounds", "atlas checker", "stored lower bounds not re-proven", _ac_skip_bounds,
                  ("atlas-tamper",)),
    CheckerMutant("atlas.truncate", "atlas checker", "expressions cut at 200 characters instead of refused",
                  _ac_truncate, ("atlas-tamper",)),
    CheckerMutant("atlas.skip_numbers", "atlas checker", "area and certified fraction not recomputed",
                  _ac_skip_numbers, ("atlas-tamper",)),
    CheckerMutant("atlas.skip_tiling", "atlas checker", "the tiling not checked (a face of the layout skipped)",
                  _ac_skip_tiling, ("atlas-tamper",)),
    CheckerMutant("box.drop_u_gap", "box engine", "R_i^+ test without the u-gap condition", _box_drop_u_gap,
                  ("box-soundness",)),
    CheckerMutant("prover.contract_out_of_range", "generic prover", "deltas contracted whatever the range",
                  _nf_contract_out_of_range, ("prover-soundness",)),
    CheckerMutant("prover.unknown_as_outside", "generic prover", "an index not provably in range taken to be "
                  "outside (its delta dropped as 0)", _nf_unknown_as_outside, ("prover-soundness",)),
)


# ---- the suites ------------------------------------------------------------------------------------
_CACHE: dict = {}


def _point_cert():
    if "point" not in _CACHE:
        _CACHE["point"] = json.loads(json.dumps(numerics.certify(numerics.family_init(5, 3)).certificate))
    return _CACHE["point"]


def point_tamper() -> list[str]:
    cert = _point_cert()
    out = []

    def accepted(c) -> bool:
        res = K.independent_check(c)
        if res.crashed:  # an exception in the checker's own code: no evidence either way (the suite crashes)
            raise RuntimeError(f"the independent checker crashed: {res.crashed}")
        return res.ok

    if not accepted(cert):
        out.append("the honest certificate is refused")
    n = len(cert["init"]["a"])
    other = next(j for j in range(n) if j != cert["winner"])

    def edit(f):
        c = copy.deepcopy(cert)
        f(c)
        c["digest"] = certificate_digest(c)
        return c

    def raised(key):
        # a consistent lie: one stored bound raised, its texts and decimals rewritten, the digest recomputed
        def f(c):
            w = c["winner"]
            low = {k: [None if x is None else K.parse_dyadic(x) for x in c["bounds"][k]]
                   for k in ("a_gap_lower", "u_gap_lower")}
            low[key][other] = Fraction(1000)
            c.update(claim_fields(w, K.parse_dyadic(c["tau_star"]), low["a_gap_lower"], low["u_gap_lower"]))
        return edit(f)

    attacks = {
        "wrong winner (consistent)": wrong_winner_certificate(cert, (cert["winner"] + 1) % n),
        "a-gap bound raised (consistent)": raised("a_gap_lower"),
        "u-gap bound raised (consistent)": raised("u_gap_lower"),
        "token edited": edit(lambda c: c.update(token=(c["token"] + 1) % n)),
        "init.loss edited": edit(lambda c: c["init"].update(loss="square")),
    }
    for name, bad in attacks.items():
        if accepted(bad):
            out.append(f"attack accepted: {name}")
    return out


def prover_soundness() -> list[str]:
    import sympy as sp

    b, c = sp.symbols("b c", integer=True, positive=True)
    q = sp.Symbol("q", integer=True, positive=True)
    dl = sp.KroneckerDelta
    audit = [
        (sp.Sum(dl(b, 3), (b, 1, N)) - 1, {}, False),
        (sp.Sum(dl(b, 3) * G.a[b], (b, 1, N)) - G.a[3], {}, False),
        (sp.Sum(dl(c, q) * G.g[c], (c, 1, D)) - G.g[q], {q: N}, False),
        (sp.Sum(dl(b, q) * G.c[b], (b, 1, N)) - G.c[q], {q: D}, False),
        (sp.Sum(dl(b, N + 1), (b, 1, N)), {}, True),
    ]
    out = []
    for k, (expr, ranges, true) in enumerate(audit):
        res = prove_parts([("e", expr)], "audit", ranges=ranges)
        if true and (res.status != "proved" or refute_parts([("e", expr)], "audit", ranges=ranges).status
                     == "disproved"):
            out.append(f"audit expression {k + 1} (true) is {res.status}")
        if not true and res.status == "proved":
            out.append(f"audit expression {k + 1} (false) is proved")
    # true for q in 1..d, not provable for a token q: never "disproved"
    if refute_parts([("e", sp.Sum(dl(c, q) * G.g[c], (c, 1, D)) - G.g[q])], "mixed", ranges={q: N}).status \
            == "disproved":
        out.append("sum_{k<=d} delta_{k,q} g_k - g_q (q a token index) was disproved; it holds wherever g_q exists")
    try:
        fuzz(0, 25)
    except AssertionError as exc:
        out.append(f"random mixed-range identity: unsound verdict ({str(exc)[:120]})")
    return out


#: modules of the upper layer that add suites (a ``SUITES`` dict), found by name like claim modules: the atlas
#: suites need the atlas driver (softpolar.atlas), which this layer must not import
SUITE_MODULES = ("softpolar.atlas.checker_suites",)


def suites_all() -> dict:
    """Every suite by name: this module's and those of :data:`SUITE_MODULES` that import."""
    out = {"point-tamper": point_tamper, "prover-soundness": prover_soundness}
    for name in SUITE_MODULES:
        try:
            out.update(importlib.import_module(name).SUITES)
        except ImportError:
            continue  # its mutants then report the suite as missing
    return out



def run_checker_mutant(m: CheckerMutant, table: dict, suites=None) -> dict:
    """``m`` under every suite it names (or ``suites``): its row of :func:`run_checker_mutants`."""
    t = time.perf_counter()
    caught, missed = {}, []
    with applied(m):
        for s in (suites or m.suites):
            try:
                fails = table[s]()
            except Exception as exc:  # a crash under a mutant is reported, never a kill
                fails = None
                missed.append(f"{s} (crashed: {type(exc).__name__}: {str(exc)[:80]})")
            if fails:
                caught[s] = fails[:3]
            elif fails is not None:
                missed.append(s)
    return {"name": m.name, "checker": m.checker, "weakens": m.weakens, "expected": list(m.suites),
            "caught_by": caught, "missed_by": missed, "seconds": round(time.perf_counter() - t, 2)}


def run_checker_mutants(mutants=MUTANTS, *, suites=None, log=None, jobs: int = 1, estimates=None) -> dict:
    """Baseline (every suite clean) and each mutant under every suite it names (or ``suites``).

    Returns ``{"baseline": {suite: failures}, "mutants": [{name, checker, weakens, caught_by, missed_by,
    expected, seconds}], "caught": k, "total": m, "seconds": s}``.

    ``jobs > 1`` (``verify --mutants --jobs N``): the baseline runs here first, as in the serial run (it also
    computes the suites' honest inputs, kept in their caches: the point certificate, the small atlas), then the
    mutants side by side, each in a process of its own forked from this one
    (:func:`.forked.run_forked`), so each starts from exactly those inputs and its patch stays there; they
    start longest first by ``estimates`` (seconds by mutant name, :func:`.mutants.previous_seconds`; 1 s for a
    name missing there); the rows keep the order of ``mutants``.
    """
    started = time.perf_counter()
    table = suites_all()
    mutants = tuple(mutants)
    names = sorted({s for m in mutants for s in (suites or m.suites)})
    baseline = {}
    for s in names:
        t = time.perf_counter()
        baseline[s] = table[s]() if s in table else [f"suite {s!r} is not available"]
        if log:
            log(f"baseline {s}: {'clean' if not baseline[s] else baseline[s][:2]} ({time.perf_counter() - t:.1f} s)")

    def line(r):
        return (f"{r['name']}: caught by {sorted(r['caught_by']) or 'none'}; missed by {r['missed_by'] or 'none'} "
                f"({r['seconds']:.1f} s)")

    jobs = min(int(jobs), len(mutants))
    if jobs <= 1 or not can_fork():
        rows = []
        for m in mutants:
            rows.append(run_checker_mutant(m, table, suites))
            if log:
                log(line(rows[-1]))
    else:
        def run_task(k, log):
            r = run_checker_mutant(mutants[k], table, suites)
            log(line(r))
            return r
        got: dict = {}
        est = [(estimates or {}).get(m.name, 1.0) for m in mutants]
        order = sorted(range(len(mutants)), key=lambda k: (-est[k], k))
        run_forked(order, run_task, jobs=jobs, on_done=got.__setitem__, log=log, what="checker mutant")
        rows = [got[k] for k in range(len(mutants))]
    return {"baseline": baseline, "baseline_clean": not any(baseline.values()), "mutants": rows,
            "caught": sum(bool(r["caught_by"]) for r in rows), "total": len(rows),
            "seconds": round(time.perf_counter() - started, 1)}


def format_report(result: dict) -> str:
    """The checker-mutant table as markdown lines."""
    lines = ["| checker mutant | checker | weakens | caught by | time |", "|---|---|---|---|---|"]
    for r in result["mutants"]:
        by = ", ".join(sorted(r["caught_by"])) or "**survived**" + (f" ({'; '.join(r['missed_by'])})"
                                                                     if r["missed_by"] else "")
        lines.append(f"| {r['name']} | {r['checker']} | {r['weakens']} | {by} | {r['seconds']:.1f} s |")
    lines.append(f"\n{result['caught']}/{result['total']} checker mutants caught; baseline "
                 f"{'clean' if result['baseline_clean'] else 'NOT clean: ' + str(result['baseline'])}; "
                 f"{result['seconds']:.0f} s")
    return "\n".join(lines)
