r"""The ``softpolar`` command line: the parser and one module per subcommand.

:func:`main` is what ``python -m softpolar`` runs; each ``_cmd_*`` module adds its subcommand
(``add_parser``) and runs it (``run``). The library functions behind the commands live below this wing.

The door: the names other parts of softpolar may use are :data:`__all__` (sorted); they load on first use
(PEP 562), so importing the wing costs nothing.
"""
from __future__ import annotations

import importlib

#: each name of the door, and the module of this wing that defines it
_DOOR = {
    "EVIDENCE_SHORT": "_cmd_verify",
    "EXIT_TERMINATED": "_cli",
    "LIST_WIDTH": "_cmd_verify",
    "add_models_argument": "_models_cli",
    "compile_pdf": "_cmd_derive",
    "list_table": "_cmd_verify",
    "main": "_cli",
    "overfull_boxes": "_cmd_derive",
    "pdflatex_error": "_cmd_derive",
    "reopen_closed_streams": "_cli",
    "run_pdflatex": "_cmd_derive",
    "sigterm_handler": "_cli",
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
