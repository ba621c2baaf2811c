r"""proofs_check: the claim registry, checks, reports and the ``softpolar`` CLI.

Top layer of softpolar, on :mod:`theorems` (symbolic) and :mod:`numerics`
(numerical).
"""
__version__ = "0.1.0"

__all__ = ["__version__"]
