"""The ``softpolar`` command: :func:`proofs_check.cli._cli.main`.

The subcommands of this layer (transformer experiments, benchmarks, the atlas) and its claims are registered
in the entry-point groups ``softpolar.commands`` and ``softpolar.claims`` (``setup.cfg``), which the core CLI
reads; no lower layer names a module above it, and ``python -m proofs_check`` is the same program.
"""
from __future__ import annotations

import sys
from proofs_check.cli import main as core_main


def main(argv: list[str] | None = None) -> int:
    """Run ``softpolar``; return the exit code (0 success, 1 a failed check, 2 bad input, 130 interrupted,
    143 terminated by SIGTERM)."""
    return core_main(sys.argv[1:] if argv is None else argv)
