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

import importlib
import importlib.util

from theorems import InvalidArgument

from ._claim import (  # noqa: F401 - re-exported: the registry's public types
    EVIDENCE_KINDS, PROFILES, TAGS, VERDICTS, Claim, ClaimResult, Context, Control, Figure, Outcome, missing_requirements,
    opposite, provenance_note, run_claim)
from ._claims_identities import identity_claims

# ---- the registry ------------------------------------------------------------------------
_EXTRA: dict[str, Claim] = {}
_CLAIM_MODULES = (
    "proofs_check._claims_calculus",
    "proofs_check._claims_logistic",
    "proofs_check._claims_regression",
    "proofs_check._claims_alternatives",
    "proofs_check._claims_certify",
    "proofs_check._claims_formal",
    "proofs_check._claims_sinks",
)
#: modules of the layers above that contribute claims through a ``VERIFY_CLAIMS`` list of :class:`Claim`
#: (claims 31-33 of the transformer experiments, the atlas); added by :func:`register_claim_module`,
#: so that this layer never names a module above it
PLUGIN_CLAIM_MODULES: list[str] = []


def register_claim_module(name: str) -> None:
    """Add module ``name`` (imported lazily, skipped when its dependencies are missing) to the registry."""
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"name={name!r} is not allowed; expected a module name")
    if name not in PLUGIN_CLAIM_MODULES:
        PLUGIN_CLAIM_MODULES.append(name)


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
    claims: dict[str, Claim] = {}
    for name in _CLAIM_MODULES:
        for c in importlib.import_module(name).CLAIMS:
            claims[c.id] = c
    for name in PLUGIN_CLAIM_MODULES:
        pkg = name.split(".")[0]
        try:
            if importlib.util.find_spec(pkg) is None or importlib.util.find_spec(name) is None:
                continue
        except (ModuleNotFoundError, ImportError, ValueError):
            continue
        for c in getattr(importlib.import_module(name), "VERIFY_CLAIMS", ()):
            if isinstance(c, Claim):
                claims[c.id] = c
    for c in identity_claims():
        claims[c.id] = c
    claims.update(_EXTRA)
    return {cid: claims[cid] for cid in sorted(claims, key=_sort_key)}


def not_run(ids: list[str] | None, profile: str | None = None) -> list[tuple[Claim, str]]:
    """Claims a plain selection (``ids`` empty) leaves out because a program they need is missing, with why."""
    if ids:
        return []
    return [(c, "; ".join(missing_requirements(c))) for c in registry().values()
            if (profile is None or profile in c.profiles) and missing_requirements(c)]


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
            f"claims={','.join(unknown)!r} is not a known claim id; expected ids from: {', '.join(reg)}")
    seen, out = set(), []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(reg[i])
    return out

