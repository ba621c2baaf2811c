r"""Mutation testing: planted bugs that the claims' checks and the checkers must catch.

:mod:`.mutants` re-runs claims under planted bugs of the engines (``verify --mutants``);
:mod:`.checker_mutants` plants bugs into the certificate checkers. Both patch private code of the lower layers
on purpose, for the run only. Those two modules and :mod:`.forked` (one process per unit) are public: a test or
a plugin builds its own ``Mutant``, ``MutantGroup`` or ``CheckerMutant`` there and runs it (``run_mutant``,
``run_checker_mutant``).

The door: the names other parts of softpolar may use are :data:`__all__` (sorted); they load on first use
(PEP 562), so importing the wing costs nothing.
"""
from __future__ import annotations

import importlib

#: each name of the door, and the module of this wing that defines it
_DOOR = {
    "format_report": "checker_mutants",
    "mutant": "mutants",
    "mutation_markdown": "_mutation_report",
    "previous_seconds": "mutants",
    "run_checker_mutants": "checker_mutants",
    "run_mutants": "mutants",
    "run_witness": "mutants",
    "select_mutants": "mutants",
}
__all__ = sorted(_DOOR)


def __getattr__(name: str):
    if name in _DOOR:
        value = getattr(importlib.import_module(f".{_DOOR[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
