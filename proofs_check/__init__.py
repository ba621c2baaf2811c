r"""proofs_check: the claim registry, checks, reports and the ``softpolar`` CLI.

Third layer of softpolar, on :mod:`theorems` (symbolic) and :mod:`numerics` (numerical), under the
public face :mod:`softpolar`. A small core (:mod:`.claim`, :mod:`.catalog`, :mod:`.parallel`,
:mod:`.derivation`) and four wings, each with a door (its ``__all__``): :mod:`.claims`, :mod:`.report`,
:mod:`.mutation`, :mod:`.cli`.
"""
from typing import TYPE_CHECKING as _TYPE_CHECKING

__all__ = ["__version__"]
# claim registry and verification report
__all__ += ["Claim", "ClaimResult", "Context", "Control", "Figure", "Outcome", "register", "registry",
            "run_claim", "select", "write_report"]
# the claim record's vocabulary: provenance tags, evidence kinds, engine settings, witnesses
__all__ += ["ENGINE_SETTINGS", "EVIDENCE_KINDS", "Engines", "PROFILES", "TAGS", "TAG_LEGEND", "Witness"]
# claims on several processes (``verify --jobs``): the runner and the CPUs it may use
__all__ += ["cpu_count", "run_claims"]

#: the door, resolved on first access (PEP 562): importing this package imports nothing beneath it; each
#: name -> (module, attribute), a relative module inside this package (importing ``proofs_check`` or one of its
#: modules, e.g. ``proofs_check.parallel`` for a grid client, loads no claim, check or report)
_DOOR = {
    '__version__': ('theorems', '__version__'),
    'Claim': ('.catalog', 'Claim'),
    'ClaimResult': ('.catalog', 'ClaimResult'),
    'Context': ('.catalog', 'Context'),
    'Control': ('.catalog', 'Control'),
    'Figure': ('.catalog', 'Figure'),
    'Outcome': ('.catalog', 'Outcome'),
    'register': ('.catalog', 'register'),
    'registry': ('.catalog', 'registry'),
    'run_claim': ('.catalog', 'run_claim'),
    'select': ('.catalog', 'select'),
    'write_report': ('.report._report', 'write_report'),
    'ENGINE_SETTINGS': ('.claim', 'ENGINE_SETTINGS'),
    'EVIDENCE_KINDS': ('.claim', 'EVIDENCE_KINDS'),
    'PROFILES': ('.claim', 'PROFILES'),
    'TAG_LEGEND': ('.claim', 'TAG_LEGEND'),
    'TAGS': ('.claim', 'TAGS'),
    'Engines': ('.claim', 'Engines'),
    'Witness': ('.claim', 'Witness'),
    'cpu_count': ('.parallel', 'cpu_count'),
    'run_claims': ('.parallel', 'run_claims'),
}

if _TYPE_CHECKING:  # the same names for static readers (type checkers, the docs' API pages)
    from theorems import __version__
    from .catalog import (Claim, ClaimResult, Context, Control, Figure, Outcome, register, registry,
                            run_claim, select)
    from .report._report import write_report  # (the module itself: the docs resolve it statically)
    from .claim import ENGINE_SETTINGS, EVIDENCE_KINDS, PROFILES, TAG_LEGEND, TAGS, Engines, Witness
    from .parallel import cpu_count, run_claims


from theorems.door import lazy_door as _lazy_door  # the one door mechanism (theorems, numerics, here)

__getattr__, __dir__ = _lazy_door(__name__, _DOOR)
