r"""The claim registry: every statement softpolar checks, with its provenance and negative control.

A :class:`Claim` couples a statement (LaTeX) and its provenance tag from the
claims list of the paper notes (paper-notes#claims) with

* a **check** ``check(ctx) -> Outcome`` that returns a verdict
  (``verified``, ``refuted`` with a concrete counterexample, or
  ``inconclusive`` with the reason),
* the **expected verdict** (what is actually true, per paper-notes#flow to #alternatives),
* a **negative control** ``control.run(ctx) -> Outcome``: the *same* check applied to
  a deliberately wrong variant (flipped sign, unsquared Jacobian, wrong rate
  exponent, shuffled winner, ...). The control must come out with the
  *opposite* definite verdict (a wrong variant of a true statement must be
  ``refuted``; a true variant of a false statement must be ``verified``),
  otherwise the check has no demonstrated power and ``softpolar verify`` fails.

Provenance tags (paper-notes#provenance-tags): ``P`` paper text, ``C`` the authors' code,
``A`` public reading notes of the PDF, ``D`` derived for this project (not the
paper's statement), ``R`` reference re-run of the authors' settings (not the
paper's numbers); combinations such as ``A/D`` are kept exactly as the paper notes
prints them.

Claim ids: ``C01``..``C30`` are the paper's claims 1-30 as numbered in the project's claims list
(``C03P`` is the paper's printed, unsquared form of claim 3, expected ``refuted``);
``ID.<identity>`` are the identities proven by ``softpolar derive --check``.

Where claims come from (one record type, :class:`Claim`, everywhere):

* this layer's claim modules (:data:`CLAIM_MODULES`), each with a ``CLAIMS`` list (or a function returning one);
* installed packages, through the entry-point group ``softpolar.claims``: each entry point names a module with
  a ``CLAIMS`` list (softpolar's own transformer experiments C31-C33 and the atlas are registered so, in
  ``setup.cfg``); a module that fails to import is reported, never skipped silently;
* :func:`register`, for a claim built in a Python session (a user model's claims).
"""
from __future__ import annotations

import importlib
import importlib.util
import importlib.metadata
import warnings

from theorems import InvalidArgument
from theorems.errors import SoftpolarWarning

from .claim import (  # noqa: F401 - re-exported: the registry's public types
    EVIDENCE_KINDS, PROFILES, TAGS, VERDICTS, WITNESS_KINDS, Claim, ClaimResult, Context, Control, Figure, Outcome,
    Witness, missing_requirements, opposite, provenance_note, run_claim)

# ---- the registry ------------------------------------------------------------------------
_EXTRA: dict[str, Claim] = {}
#: this layer's claim modules, each with ``CLAIMS`` (a list of :class:`Claim`, or a function returning one)
CLAIM_MODULES = (
    "proofs_check.claims._claims_calculus",
    "proofs_check.claims._claims_logistic",
    "proofs_check.claims._claims_regression",
    "proofs_check.claims._claims_alternatives",
    "proofs_check.claims._claims_certify",
    "proofs_check.claims._claims_formal",
    "proofs_check.claims._claims_sinks",
    "proofs_check.claims._claims_identities",
    "proofs_check.claims._claims_optim",
)
#: the entry-point group through which installed packages add claim modules
ENTRY_POINT_GROUP = "softpolar.claims"


def plugin_claim_modules() -> list[str]:
    """Module names registered in the ``softpolar.claims`` entry-point group (installed packages).

    An entry point naming a module that is not there (metadata of an older install) is left out with a
    warning that says so; reinstalling the package (``pip install -e .``) refreshes the metadata.
    """
    out = []
    for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        try:
            found = importlib.util.find_spec(ep.value) is not None
        except ImportError:
            found = False
        if found:
            out.append(ep.value)
        else:
            warnings.warn(f"entry point {ep.name!r} of {ENTRY_POINT_GROUP!r} names module {ep.value!r}, which is "
                          "not installed; its claims are left out (stale metadata: reinstall the package)",
                          SoftpolarWarning, stacklevel=2)
    return list(dict.fromkeys(out))


def module_claims(name: str) -> list[Claim]:
    """The ``CLAIMS`` of module ``name``; anything but a list of :class:`Claim` raises ``InvalidArgument``."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise InvalidArgument(f"claim module {name!r} failed to import ({type(exc).__name__}: {exc}); expected an "
                              f"importable module (installed packages register theirs in "
                              f"{ENTRY_POINT_GROUP!r})") from exc
    claims = getattr(module, "CLAIMS", None)
    if callable(claims):
        claims = claims()
    if not isinstance(claims, (list, tuple)) or not all(isinstance(c, Claim) for c in claims):
        raise InvalidArgument(f"module {name!r} registered in {ENTRY_POINT_GROUP!r} has CLAIMS={claims!r:.80}; "
                              "expected a list of proofs_check.Claim")
    return list(claims)


def register(claim: Claim) -> Claim:
    """Add ``claim`` to the registry of this Python session (e.g. a claim about a user's model)."""
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
    claims: dict[str, Claim] = {}
    for name in (*CLAIM_MODULES, *plugin_claim_modules()):
        for c in module_claims(name):
            claims[c.id] = c
    claims.update(_EXTRA)
    return {cid: claims[cid] for cid in sorted(claims, key=_sort_key)}


#: evidence kinds whose argument rests on another claim of the registry: a claim of that kind is complete only in a
#: report where those claims ran and passed (CERT and ATLAS: their lemma's continuation and divergence steps are
#: the Coq development that FORMAL compiles)
RESTS_ON = {"interval arithmetic + lemma (machine-checked in Coq, existence assumed)": ("FORMAL",)}


def rests_on(claim: Claim) -> tuple[str, ...]:
    """The ids of the claims whose check carries part of ``claim``'s argument (:data:`RESTS_ON`)."""
    return tuple(i for i in RESTS_ON.get(claim.evidence_kind, ()) if i != claim.id)


def not_run(ids: list[str] | None, profile: str | None = None) -> list[tuple[Claim, str]]:
    """Every registered claim a plain selection (``ids`` empty) leaves out, with why: a claim outside
    ``profile`` (``'full profile only'``) or one whose program is missing (``'program missing: coqc'``).
    A report is complete only when this is empty (issue 39: the quick profile said 59/59, complete, with 65
    claims registered)."""
    if ids:
        return []
    out = []
    for c in registry().values():
        if profile is not None and profile not in c.profiles:
            out.append((c, "/".join(c.profiles) + " profile only"))
        elif missing_requirements(c):
            out.append((c, "; ".join(missing_requirements(c))))
    return out


#: an error message names at most this many unknown ids (then their count), each cut to :data:`SHOWN_ID_CHARS`
SHOWN_IDS = 5
SHOWN_ID_CHARS = 40


def shown_ids(ids: list[str]) -> str:
    """The unknown ids for a one-line error: all of a few, else the first :data:`SHOWN_IDS` and how many there are."""
    cut = [i if len(i) <= SHOWN_ID_CHARS else i[:SHOWN_ID_CHARS - 3] + "..." for i in ids[:SHOWN_IDS]]
    text = repr(",".join(cut) + ("" if len(ids) <= SHOWN_IDS else ",..."))
    return text if len(ids) <= SHOWN_IDS and cut == ids[:SHOWN_IDS] else f"{text} ({len(ids)} unknown ids)"


def select(ids: list[str] | None, profile: str | None = None) -> list[Claim]:
    """The claims named in ``ids``; when ``None``, every claim that runs in ``profile`` (all if ``None``).

    A plain selection leaves out claims whose required programs are missing (:func:`not_run` lists them);
    a claim named in ``ids`` always runs. Unknown ids raise ``InvalidArgument`` listing the valid ones.
    """
    reg = registry()
    if not ids:
        return [c for c in reg.values() if (profile is None or profile in c.profiles) and not missing_requirements(c)]
    unknown = [i for i in ids if i not in reg]
    if unknown:
        raise InvalidArgument(
            f"claims={shown_ids(unknown)} is not a known claim id; expected ids from: {', '.join(reg)}")
    seen, out = set(), []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(reg[i])
    return out

