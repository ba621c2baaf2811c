r"""Mutation testing: planted bugs that the claims' checks and the checkers must catch.

:mod:`._mutants` re-runs claims under planted bugs of the engines (``verify --mutants``);
:mod:`._checker_mutants` plants bugs into the certificate checkers. Both patch private code of the lower layers
on purpose, for the run only.

The door: the names other parts of softpolar may use are :data:`__all__` (sorted); they load on first use
(PEP 562), so importing the wing costs nothing.
"""
from __future__ import annotations

import importlib

#: each name of the door, and the module of this wing that defines it
_DOOR = {
    "format_report": "_checker_mutants",
    "mutant": "_mutants",
    "mutation_markdown": "_mutation_report",
    "previous_seconds": "_mutants",
    "run_checker_mutants": "_checker_mutants",
    "run_mutants": "_mutants",
    "run_witness": "_mutants",
    "select_mutants": "_mutants",
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
