"""The ``softpolar`` command: the core subcommands of :mod:`proofs_check` plus this layer's own.

The core CLI (:func:`proofs_check._cli.main`) knows only the layers below it; this module adds the
subcommands and claims of the top floor (transformer experiments, benchmarks) by name, so that no
lower layer ever names a module above it.
"""
from __future__ import annotations

import sys

#: subcommand modules of this layer, after the core ones in ``--help``
EXTRA_SUBCOMMANDS = (
    "softpolar.experiments._cmd",
    "softpolar.benchmarks._cmd",
    "softpolar.atlas._cmd",
)


def main(argv: list[str] | None = None) -> int:
    """Run ``softpolar``; return the exit code (0 success, 1 a failed check, 2 bad input, 130 interrupted)."""
    import softpolar  # noqa: F401 - registers this layer's claim modules

    from proofs_check._cli import main as core_main

    return core_main(sys.argv[1:] if argv is None else argv, extra=EXTRA_SUBCOMMANDS)
