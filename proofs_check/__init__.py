r"""proofs_check: the claim registry, checks, reports and the ``softpolar`` CLI.

Top layer of softpolar, on :mod:`theorems` (symbolic) and :mod:`numerics`
(numerical).
"""
from theorems._version import __version__

__all__ = ["__version__"]

# claim registry and verification report
from ._registry import (Claim, ClaimResult, Context, Control, Figure, Outcome, register, registry,  # noqa: E402
                        run_claim, select)
from ._report import write_report  # noqa: E402

__all__ += ["Claim", "ClaimResult", "Context", "Control", "Figure", "Outcome", "register", "registry",
            "run_claim", "select", "write_report"]
