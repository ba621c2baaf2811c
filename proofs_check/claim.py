r"""Claims, outcomes and controls: the data types of the claim registry (see :mod:`.catalog`).

Kept apart from the registry so that the claim modules, which build :class:`Claim` objects, and the
registry, which collects them, import in one direction only.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable
import os
import shutil

from theorems import InvalidArgument
from theorems.coq import APT_COMMAND

VERDICTS = ("verified", "refuted", "inconclusive")
#: every tag that may appear in a provenance string
TAGS = ("P", "C", "A", "D", "R", "I", "M", "U")
EVIDENCE_KINDS = (
    "exact symbolic proof",
    "high-precision numerics",
    "property search",
    "asymptotic fit",
    "reproduction of the authors' settings",
    "interval arithmetic + lemma (partly argued by hand)",
    "interval arithmetic + lemma (machine-checked in Coq, existence assumed)",
    "machine-checked proof (Coq)",
)
PROFILES = ("quick", "full")


#: what each provenance tag means for the reader of a report (``M`` adds nothing to the sentence)
_TAG_NOTES = {
    "P": "paper text seen directly",
    "A": "from public reading notes of the PDF (secondary, not the verbatim statement)",
    "C": "from the authors' public code",
    "D": "derived for this project, not the paper's statement",
    "R": "reference re-run of the authors' settings, not the paper's statement or numbers",
    "I": "an inference about what the paper says",
    "U": "a claim family run on a user-defined model: the expected verdict is the family's prediction for that "
         "model class, not a result of the paper",
}
#: every tag with its meaning, for legends (``M``: the sources read do not give it)
TAG_LEGEND = {**_TAG_NOTES, "M": "missing: not found in the sources read (wording or content unknown)"}


def provenance_note(provenance: str) -> str:
    """One sentence saying what the provenance tag means for the reader of a report."""
    tags = set(provenance.replace(",", "/").replace(" ", "/").split("/")) & set(TAGS)
    return "; ".join(note for tag, note in _TAG_NOTES.items() if tag in tags)


def jsonable(value):
    """Turn numbers and containers into plain JSON (floats as repr-exact floats, non-finite as strings)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    try:  # numpy / mpmath scalars and arrays
        import numpy as np
        if isinstance(value, np.ndarray):
            return jsonable(value.tolist())
        if isinstance(value, np.generic):
            return jsonable(value.item())
    except ImportError:  # pragma: no cover
        pass
    try:
        return jsonable(float(value))
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True)
class Figure:
    """A figure a check asks the report to draw: ``kind`` names a function in ``_figures``."""

    filename: str
    kind: str
    caption: str
    data: dict = field(default_factory=dict, compare=False, repr=False)
    #: the drawn files (file name -> bytes: the PNG, then its vector twins) when a ``verify --jobs`` worker drew the
    #: figure next to its claim (:func:`.report.prerender`); ``None``: the report draws it
    rendered: dict | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Outcome:
    """What one check found.

    Attributes:
        verdict: ``verified``, ``refuted`` or ``inconclusive``.
        evidence: one line a reader can understand without the code.
        details: the numbers behind the verdict (JSON-able).
        counterexample: for ``refuted``: initial condition, time, values.
        reason: for ``inconclusive``: why no verdict could be given.
        figures: figures to draw into the report.
        raised: the exception class name when the check raised (set by :func:`run_claim`), or a claim's own
            crash marker (``CHECKER_CRASH`` of the certificate claims: an exception inside a checker's code);
            the mutation matrix counts a non-empty ``raised`` as *crashed*, never as a kill.
    """

    verdict: str
    evidence: str
    details: dict = field(default_factory=dict)
    counterexample: dict | None = None
    reason: str = ""
    figures: tuple = ()
    #: the exception class name when the check raised instead of returning (set by :func:`run_claim`), or a
    #: claim's crash marker for an exception inside a checker it ran
    raised: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise InvalidArgument(f"verdict={self.verdict!r} is not allowed; expected one of {VERDICTS}")
        if self.verdict == "refuted" and not self.counterexample:
            raise InvalidArgument("verdict='refuted' needs a concrete counterexample (counterexample=None given)")
        if self.verdict == "inconclusive" and not self.reason:
            raise InvalidArgument("verdict='inconclusive' needs a reason (reason='' given)")

    def to_json(self) -> dict:
        out = {"verdict": self.verdict, "evidence": self.evidence, "details": jsonable(self.details)}
        if self.counterexample:
            out["counterexample"] = jsonable(self.counterexample)
        if self.reason:
            out["reason"] = self.reason
        if self.figures:
            out["figures"] = [f.filename for f in self.figures]
        if self.raised:
            out["raised"] = self.raised
        return out


def opposite(verdict: str) -> str:
    """The verdict a negative control must reach for a claim expected to be ``verdict``."""
    return {"verified": "refuted", "refuted": "verified"}[verdict]


@dataclass(frozen=True)
class Control:
    """A negative control: the claim's own check run on a deliberately wrong variant."""

    description: str
    run: Callable[["Context"], Outcome]


#: the kinds of witness a control can have (see :class:`Witness`)
WITNESS_KINDS = ("strong", "weak")


@dataclass(frozen=True, kw_only=True)
class Witness:
    r"""Evidence that a claim's negative control *can* pass, so that its usual failure is evidence.

    Exactly one of ``run`` (``run(ctx) -> Outcome``: the control's own code path on an input under which the
    control's wrong statement holds) or ``mutant`` (the name of a planted bug in :mod:`proofs_check.mutation.mutants`
    under which the control runs unchanged) is given. The witness *passes* when it reaches the claim's
    expected verdict (the verdict the control must not reach in a normal run).

    ``kind``: ``strong`` for a planted bug, or an input fixed in advance under which the wrong statement is
    known to hold; ``weak`` when the witness only re-runs the claim's own check (the true statement on the
    control's code path) or keeps the inputs on which the wrong statement happens to hold. ``weak_because``
    says which, and reports list weak witnesses as such.
    """

    description: str
    run: Callable[["Context"], "Outcome"] | None = None
    mutant: str | None = None
    kind: str = "strong"
    weak_because: str = ""

    def __post_init__(self):
        if (self.run is None) == (self.mutant is None):
            raise InvalidArgument(f"Witness({self.description!r}): give exactly one of run= or mutant=")
        if self.kind not in WITNESS_KINDS:
            raise InvalidArgument(f"kind={self.kind!r} is not allowed; expected one of {WITNESS_KINDS}")
        if self.kind == "weak" and not self.weak_because:
            raise InvalidArgument(f"Witness({self.description!r}) is weak: weak_because= must say why")


@dataclass(frozen=True, kw_only=True)
class Claim:
    r"""One registered claim: statement, provenance, check, negative control, its witness and the engines it runs.

    Keyword fields only; the record sits next to its check and control in the claim module.

    ``engines``: tags of the engine parts the check runs through (e.g. ``"flow"``: the generated full flow,
    ``"reduced"``: the reduced logistic system); a mutant re-runs every claim whose tags meet its own
    (:mod:`proofs_check.mutation.mutants`). ``invariant_under``: reparametrizations that the statement is
    blind to (``"b"``: the statement holds for every $b=\|\beta^*\|^2>0$ and states nothing about
    its value); a mutant proven equal to such a reparametrization is *equivalent* for this claim.
    """

    id: str
    title: str
    statement: str
    provenance: str
    assumptions: str
    evidence_kind: str
    check_description: str
    expected: str
    check: Callable[["Context"], Outcome]
    control: Control
    digest_number: int | None = None
    group: str = ""
    #: profiles in which a plain ``softpolar verify`` (no ``--claims``) runs this claim; a claim that
    #: cannot reach a verdict in the quick profile (e.g. it needs minutes of training) lists ``("full",)``.
    #: Naming it in ``--claims`` runs it in any profile.
    profiles: tuple = PROFILES
    #: external programs the check needs, as ``(executable, install hint)`` pairs; a plain ``softpolar verify``
    #: leaves the claim out (and says so, see :func:`missing_requirements`) when one is not installed
    requires: tuple = ()
    witness: Witness | None = None
    engines: tuple = ()
    invariant_under: tuple = ()
    #: the claim family (:mod:`proofs_check.claims`' ``FAMILIES``) this claim is the paper's instance of, as
    #: ``"family[loss,link]"``; empty for a claim that is no family's instance. The family's generic record on
    #: the same model is a second check of the same statement, and the tests require both to agree
    #: (``tests/test_family_instances.py``).
    family: str = ""

    def __post_init__(self):
        if self.witness is not None and not isinstance(self.witness, Witness):
            raise InvalidArgument(f"witness={self.witness!r} for claim {self.id} is not allowed; expected a Witness")
        for tag in (*self.engines, *self.invariant_under):
            if not isinstance(tag, str) or not tag or " " in tag:
                raise InvalidArgument(f"engine tag {tag!r} for claim {self.id} is not allowed; "
                                      "expected a non-empty string without spaces")
        if not set(self.profiles) <= set(PROFILES) or not self.profiles:
            raise InvalidArgument(f"profiles={self.profiles!r} for claim {self.id} is not allowed; "
                                  f"expected a non-empty subset of {PROFILES}")
        if not self.id or " " in self.id:
            raise InvalidArgument(f"id={self.id!r} is not allowed; expected a non-empty id without spaces")
        tags = set(self.provenance.replace(",", "/").replace(" ", "/").split("/")) - {"", "empirical"}
        if not tags or not tags <= set(TAGS):
            raise InvalidArgument(
                f"provenance={self.provenance!r} for claim {self.id} is not allowed; "
                f"expected tags from {TAGS} joined by '/' (e.g. 'A/D', 'D, empirical')")
        if self.expected not in ("verified", "refuted"):
            raise InvalidArgument(
                f"expected={self.expected!r} for claim {self.id} is not allowed; expected 'verified' or 'refuted'")
        if self.evidence_kind not in EVIDENCE_KINDS:
            raise InvalidArgument(
                f"evidence_kind={self.evidence_kind!r} for claim {self.id} is not allowed; expected "
                f"one of {EVIDENCE_KINDS}")

    def _repr_latex_(self) -> str:
        """A notebook shows the claim as text with its statement in display math (MathJax)."""
        return (f"{self.id} [{self.provenance}] {self.title}: $${self.statement}$$"
                f"expected: {self.expected}; negative control: {self.control.description}")


@dataclass(frozen=True)
class Engines:
    """Which engine each expensive check runs on (``softpolar verify --engines NAME``, :data:`ENGINE_SETTINGS`).

    ``high_precision``: the engine of the main high-precision runs of the logistic claims (``auto``:
    :func:`.claims.high_precision_backend`, the Taylor backend; ``mpmath``: GBS); the GBS-versus-Taylor
    cross-check runs both engines either way. ``box``: the box scheme of the ATLAS claim (``default``: the atlas
    engine's ``DEFAULT_ENGINE``; ``baseline``: its ``BASELINE_ENGINE``, the scheme before the fast one). The
    verdicts do not depend on the choice; the times do (the baseline is kept for bench row 15).
    """

    name: str = "current"
    high_precision: str = "auto"
    box: str = "default"

    def __post_init__(self):
        if self.high_precision not in ("auto", "mpmath"):
            raise InvalidArgument(f"high_precision={self.high_precision!r} is not allowed; expected 'auto' or "
                                  "'mpmath'")
        if self.box not in ("default", "baseline"):
            raise InvalidArgument(f"box={self.box!r} is not allowed; expected 'default' or 'baseline'")

    def to_json(self) -> dict:
        return {"name": self.name, "high_precision": self.high_precision, "box": self.box}


#: the named engine settings of ``softpolar verify --engines``: ``current`` (the default) and ``baseline``, the
#: code path before the speed-ups (GBS for the main high-precision runs, the box scheme before the fast one),
#: kept reachable as the baseline of bench row 15 (run serially, ``--jobs 1``, it is that row's baseline child)
ENGINE_SETTINGS = {"current": Engines(), "baseline": Engines(name="baseline", high_precision="mpmath", box="baseline")}


@dataclass
class Context:
    """Settings shared by every check of one ``softpolar verify`` run.

    ``seed`` drives the property searches and random instances; the
    reproductions of the authors' settings always use the authors' own seeds.
    ``engines``: which engine the expensive checks run on (:class:`Engines`; never changes a verdict).
    ``cache`` lets a claim and its control (or two claims) share one expensive
    computation; it holds only values computed deterministically from the
    settings, so sharing never changes a result.
    """

    profile: str = "quick"
    seed: int = 0
    device: str = "cpu"
    dps: int = 30
    #: bound on log10 t of the settling runs of the derived-law checks (numerics.integrate.settle; --max-log-t)
    max_log10_t: int = 10000
    cache: dict = field(default_factory=dict)
    engines: Engines = field(default_factory=Engines)

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise InvalidArgument(f"profile={self.profile!r} is not allowed; expected one of {PROFILES}")
        if not isinstance(self.engines, Engines):
            raise InvalidArgument(f"engines={self.engines!r} is not allowed; expected an Engines record "
                                  f"(proofs_check.claim.ENGINE_SETTINGS: {', '.join(ENGINE_SETTINGS)})")

    @property
    def full(self) -> bool:
        return self.profile == "full"

    def memo(self, key, fn):
        """``fn()`` computed once per run for ``key``."""
        if key not in self.cache:
            self.cache[key] = fn()
        return self.cache[key]


@dataclass(frozen=True)
class ClaimResult:
    """A claim, its outcome, its control's outcome and the time both took.

    ``seconds``: wall time; ``cpu_seconds``: CPU time (user + system) of the process that ran them and of
    every child it waited for meanwhile (a claim's dask workers, say), :func:`cpu_time`; ``None`` when not
    measured (a result built by hand).
    """

    claim: Claim
    outcome: Outcome
    control: Outcome
    seconds: float
    cpu_seconds: float | None = None

    @property
    def control_failed(self) -> bool:
        """True when the negative control reached the opposite definite verdict (the desired result)."""
        return self.control.verdict == opposite(self.claim.expected)

    @property
    def passed(self) -> bool:
        return self.outcome.verdict == self.claim.expected and self.control_failed

    def _repr_latex_(self) -> str:
        """A notebook shows the claim, its verdict and its control's (MathJax)."""
        c = self.claim
        return (f"{c.id} [{c.provenance}] {c.title}: $${c.statement}$$"
                f"{'passed' if self.passed else 'FAILED'}: {self.outcome.verdict} (expected {c.expected}); "
                f"negative control {self.control.verdict} (needs {opposite(c.expected)}); {self.seconds:.1f} s")

    def to_json(self) -> dict:
        c = self.claim
        return {
            "id": c.id,
            "title": c.title,
            "statement": c.statement,
            "provenance": c.provenance,
            "provenance_note": provenance_note(c.provenance),
            "digest_claim": c.digest_number,
            "assumptions": c.assumptions,
            "evidence_kind": c.evidence_kind,
            "check": c.check_description,
            "verdict": self.outcome.verdict,
            "expected": c.expected,
            "passed": self.passed,
            "evidence": self.outcome.evidence,
            "outcome": self.outcome.to_json(),
            "negative_control": {
                "description": c.control.description,
                "expected": opposite(c.expected),
                "failed_as_required": self.control_failed,
                **self.control.to_json(),
            },
            "witness": None if c.witness is None else {
                "description": c.witness.description, "kind": c.witness.kind,
                **({"mutant": c.witness.mutant} if c.witness.mutant else {}),
                **({"weak_because": c.witness.weak_because} if c.witness.weak_because else {})},
            "engines": list(c.engines),
            "seconds": round(self.seconds, 3),
            "cpu_seconds": None if self.cpu_seconds is None else round(self.cpu_seconds, 3),
        }


def missing_requirements(claim: Claim) -> list[str]:
    """The lines saying which programs ``claim`` needs and lacks, with how to install them (empty: none lacking)."""
    out = []
    for exe, hint in claim.requires:
        if shutil.which(exe) is None:
            out.append(f"{exe} not installed" + (f"; install it with: {_install_hint(exe, hint)}" if hint else ""))
    return out


def _install_hint(exe: str, hint: str) -> str:
    if exe == "coqc" and hint == "apt":
        return APT_COMMAND
    return hint


def _error_outcome(exc: BaseException) -> Outcome:
    return Outcome("inconclusive", f"the check raised {type(exc).__name__}",
                   reason=f"{type(exc).__name__}: {exc}", raised=type(exc).__name__)


def _live_descendants_cpu() -> float:
    """Linux: CPU seconds so far of this process's live descendants (``/proc/<pid>/stat`` utime + stime +
    cutime + cstime: each one's own and its reaped children's); 0 where ``/proc`` cannot be read."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        parent, times = {}, {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    raw = fh.read()
            except OSError:  # gone meanwhile, or not ours to read
                continue
            rest = raw[raw.rfind(b")") + 2:].split()  # the fields after the command name, from "state" on
            parent[int(name)] = int(rest[1])
            times[int(name)] = sum(int(v) for v in rest[11:15])  # utime, stime, cutime, cstime
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, list(children.get(os.getpid(), ()))
    while todo:
        pid = todo.pop()
        total += times[pid]
        todo.extend(children.get(pid, ()))
    return total / tick


def cpu_time() -> float:
    """CPU seconds (user + system) used so far by this process, by the children it has waited for
    (``getrusage``: a child's time, its own children's included, counts once it is reaped) and by its live
    descendants (:func:`_live_descendants_cpu`: a dask cluster kept alive for the next claim's grid, say).
    A difference of two readings is the CPU used in between: a child reaped in between moves from the live
    sum to the reaped one with the time it had, so nothing counts twice."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + _live_descendants_cpu()


def run_claim(claim: Claim, ctx: Context) -> ClaimResult:
    """Run a claim's check and its negative control; an exception becomes ``inconclusive`` with the reason."""
    start, cpu0 = time.perf_counter(), cpu_time()
    try:
        outcome = claim.check(ctx)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # reported as inconclusive, never swallowed silently
        outcome = _error_outcome(exc)
    try:
        control = claim.control.run(ctx)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        control = _error_outcome(exc)
    return ClaimResult(claim, outcome, control, time.perf_counter() - start, cpu_time() - cpu0)
