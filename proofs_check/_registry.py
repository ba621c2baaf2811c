r"""The claim registry: every statement softpolar checks, with its provenance and negative control.

A :class:`Claim` couples a statement (LaTeX) and its provenance tag from the
digest of arXiv 2603.06248 (section 8) with

* a **check** ``check(ctx) -> Outcome`` that returns a verdict
  (``verified``, ``refuted`` with a concrete counterexample, or
  ``inconclusive`` with the reason),
* the **expected verdict** (what is actually true, per the digest's sections 2-5),
* a **negative control** ``control.run(ctx) -> Outcome``: the *same* check applied to
  a deliberately wrong variant (flipped sign, unsquared Jacobian, wrong rate
  exponent, shuffled winner, ...). The control must come out with the
  *opposite* definite verdict (a wrong variant of a true statement must be
  ``refuted``; a true variant of a false statement must be ``verified``),
  otherwise the check has no demonstrated power and ``softpolar verify`` fails.

Provenance tags (digest section 0): ``P`` paper text, ``C`` the authors' code,
``A`` public reading notes of the PDF, ``D`` derived for this project (not the
paper's statement), ``R`` reference re-run of the authors' settings (not the
paper's numbers); combinations such as ``A/D`` are kept exactly as the digest
prints them.

Claim ids: ``C01``..``C30`` are the digest's claims 1-30 (``C03P`` is the
paper's printed, unsquared form of claim 3, expected ``refuted``);
``ID.<identity>`` are the identities proven by ``softpolar derive --check``.
Other packages add entries through :func:`register` (claims 31-33 of the
transformer experiments, certified polarization).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from theorems import InvalidArgument

VERDICTS = ("verified", "refuted", "inconclusive")
#: every tag that may appear in a provenance string
TAGS = ("P", "C", "A", "D", "R", "I", "M")
EVIDENCE_KINDS = (
    "exact symbolic proof",
    "high-precision numerics",
    "property search",
    "asymptotic fit",
    "reproduction of the authors' settings",
)
PROFILES = ("quick", "full")


def provenance_note(provenance: str) -> str:
    """One sentence saying what the provenance tag means for the reader of a report."""
    tags = set(provenance.replace(",", "/").replace(" ", "/").split("/")) & set(TAGS)
    parts = []
    if "P" in tags:
        parts.append("paper text seen directly")
    if "A" in tags:
        parts.append("from public reading notes of the PDF (secondary, not the verbatim statement)")
    if "C" in tags:
        parts.append("from the authors' public code")
    if "D" in tags:
        parts.append("derived for this project, not the paper's statement")
    if "R" in tags:
        parts.append("reference re-run of the authors' settings, not the paper's statement or numbers")
    if "I" in tags:
        parts.append("an inference about what the paper says")
    return "; ".join(parts)


def _jsonable(value):
    """Turn numbers and containers into plain JSON (floats as repr-exact floats, non-finite as strings)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    try:  # numpy / mpmath scalars and arrays
        import numpy as np
        if isinstance(value, np.ndarray):
            return _jsonable(value.tolist())
        if isinstance(value, np.generic):
            return _jsonable(value.item())
    except ImportError:  # pragma: no cover
        pass
    try:
        return _jsonable(float(value))
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True)
class Figure:
    """A figure a check asks the report to draw: ``kind`` names a function in ``_figures``."""

    filename: str
    kind: str
    caption: str
    data: dict = field(default_factory=dict, compare=False, repr=False)


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
    """

    verdict: str
    evidence: str
    details: dict = field(default_factory=dict)
    counterexample: dict | None = None
    reason: str = ""
    figures: tuple = ()

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise InvalidArgument(f"verdict={self.verdict!r} is not allowed; expected one of {VERDICTS}")
        if self.verdict == "refuted" and not self.counterexample:
            raise InvalidArgument("verdict='refuted' needs a concrete counterexample (counterexample=None given)")
        if self.verdict == "inconclusive" and not self.reason:
            raise InvalidArgument("verdict='inconclusive' needs a reason (reason='' given)")

    def to_json(self) -> dict:
        out = {"verdict": self.verdict, "evidence": self.evidence, "details": _jsonable(self.details)}
        if self.counterexample:
            out["counterexample"] = _jsonable(self.counterexample)
        if self.reason:
            out["reason"] = self.reason
        if self.figures:
            out["figures"] = [f.filename for f in self.figures]
        return out


def opposite(verdict: str) -> str:
    """The verdict a negative control must reach for a claim expected to be ``verdict``."""
    return {"verified": "refuted", "refuted": "verified"}[verdict]


@dataclass(frozen=True)
class Control:
    """A negative control: the claim's own check run on a deliberately wrong variant."""

    description: str
    run: Callable[["Context"], Outcome]


@dataclass(frozen=True)
class Claim:
    """One registered claim (see the module docstring)."""

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

    def __post_init__(self):
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
                f"evidence_kind={self.evidence_kind!r} for claim {self.id} is not allowed; expected one of {EVIDENCE_KINDS}")


@dataclass
class Context:
    """Settings shared by every check of one ``softpolar verify`` run.

    ``seed`` drives the property searches and random instances; the
    reproductions of the authors' settings always use the authors' own seeds.
    ``cache`` lets a claim and its control (or two claims) share one expensive
    computation; it holds only values computed deterministically from the
    settings, so sharing never changes a result.
    """

    profile: str = "quick"
    seed: int = 0
    device: str = "cpu"
    dps: int = 30
    cache: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise InvalidArgument(f"profile={self.profile!r} is not allowed; expected one of {PROFILES}")

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
    """A claim, its outcome, its control's outcome and the time both took."""

    claim: Claim
    outcome: Outcome
    control: Outcome
    seconds: float

    @property
    def control_failed(self) -> bool:
        """True when the negative control reached the opposite definite verdict (the desired result)."""
        return self.control.verdict == opposite(self.claim.expected)

    @property
    def passed(self) -> bool:
        return self.outcome.verdict == self.claim.expected and self.control_failed

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
            "seconds": round(self.seconds, 3),
        }


def _error_outcome(exc: BaseException) -> Outcome:
    return Outcome("inconclusive", f"the check raised {type(exc).__name__}",
                   reason=f"{type(exc).__name__}: {exc}")


def run_claim(claim: Claim, ctx: Context) -> ClaimResult:
    """Run a claim's check and its negative control; an exception becomes ``inconclusive`` with the reason."""
    start = time.perf_counter()
    try:
        outcome = claim.check(ctx)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - reported as inconclusive, never swallowed silently
        outcome = _error_outcome(exc)
    try:
        control = claim.control.run(ctx)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001
        control = _error_outcome(exc)
    return ClaimResult(claim, outcome, control, time.perf_counter() - start)


# ---- the registry ------------------------------------------------------------------------
_EXTRA: dict[str, Claim] = {}
_CLAIM_MODULES = (
    "proofs_check._claims_calculus",
    "proofs_check._claims_logistic",
    "proofs_check._claims_regression",
    "proofs_check._claims_alternatives",
    "proofs_check._claims_certify",
)
#: optional modules that may contribute claims through a ``VERIFY_CLAIMS`` list of :class:`Claim`
#: (claims 31-33 of the transformer experiments, certified polarization)
OPTIONAL_CLAIM_MODULES = ("experiments.claims", "numerics.certify_claims")


def register(claim: Claim) -> Claim:
    """Add ``claim`` to the registry (used by other packages for claims 31-33 and certification)."""
    if not isinstance(claim, Claim):
        raise InvalidArgument(f"claim={claim!r} (type {type(claim).__name__}) is not allowed; expected a Claim")
    _EXTRA[claim.id] = claim
    return claim


def _sort_key(cid: str):
    if cid.startswith("C") and cid[1:3].isdigit():
        return (0, int(cid[1:3]), cid)
    if cid.startswith("ID."):
        return (2, 0, cid)
    return (1, 0, cid)


def registry() -> dict[str, Claim]:
    """All registered claims, by id, in report order (C01..C30, extras, then ID.*)."""
    import importlib
    import importlib.util

    claims: dict[str, Claim] = {}
    for name in _CLAIM_MODULES:
        for c in importlib.import_module(name).CLAIMS:
            claims[c.id] = c
    for name in OPTIONAL_CLAIM_MODULES:
        pkg = name.split(".")[0]
        try:
            if importlib.util.find_spec(pkg) is None or importlib.util.find_spec(name) is None:
                continue
        except (ModuleNotFoundError, ImportError, ValueError):
            continue
        for c in getattr(importlib.import_module(name), "VERIFY_CLAIMS", ()):
            if isinstance(c, Claim):
                claims[c.id] = c
    from ._claims_identities import identity_claims
    for c in identity_claims():
        claims[c.id] = c
    claims.update(_EXTRA)
    return {cid: claims[cid] for cid in sorted(claims, key=_sort_key)}


def select(ids: list[str] | None, profile: str | None = None) -> list[Claim]:
    """The claims named in ``ids``; when ``None``, every claim that runs in ``profile`` (all if ``None``).

    Unknown ids raise ``InvalidArgument`` listing the valid ones.
    """
    reg = registry()
    if not ids:
        return [c for c in reg.values() if profile is None or profile in c.profiles]
    unknown = [i for i in ids if i not in reg]
    if unknown:
        raise InvalidArgument(
            f"claims={','.join(unknown)!r} is not a known claim id; expected ids from: {', '.join(reg)}")
    seen, out = set(), []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(reg[i])
    return out

