r"""proofs_check: the claim registry, checks, reports and the ``softpolar`` CLI.

Third layer of softpolar, on :mod:`theorems` (symbolic) and :mod:`numerics` (numerical), under the
public face :mod:`softpolar`. A small core (:mod:`.claim`, :mod:`.catalog`, :mod:`.parallel`,
:mod:`.derivation`) and four wings, each with a door (its ``__all__``): :mod:`.claims`, :mod:`.report`,
:mod:`.mutation`, :mod:`.cli`.
"""
from theorems import __version__

__all__ = ["__version__"]

# claim registry and verification report
from .catalog import (Claim, ClaimResult, Context, Control, Figure, Outcome, register, registry,
                        run_claim, select)
from .report._report import write_report  # (the module itself: the docs resolve it statically)
# the claim record's vocabulary: provenance tags, evidence kinds, engine settings, witnesses
from .claim import ENGINE_SETTINGS, EVIDENCE_KINDS, PROFILES, TAG_LEGEND, TAGS, Engines, Witness
# claims on several processes (``verify --jobs``): the runner and the CPUs it may use
from .parallel import cpu_count, run_claims

__all__ += ["Claim", "ClaimResult", "Context", "Control", "Figure", "Outcome", "register", "registry",
            "run_claim", "select", "write_report"]
__all__ += ["ENGINE_SETTINGS", "EVIDENCE_KINDS", "Engines", "PROFILES", "TAGS", "TAG_LEGEND", "Witness"]
__all__ += ["cpu_count", "run_claims"]
