r"""The verification report and the renderers: Markdown, JSON, LaTeX and the figures.

:func:`write_report` writes ``verify``'s report folder; :mod:`._render` renders derivations and tables;
:mod:`._figures` draws the claims' figures.

The door: the names other parts of softpolar may use are :data:`__all__` (sorted); they load on first use
(PEP 562), so importing the wing costs nothing.
"""
from __future__ import annotations

import importlib

#: each name of the door, and the module of this wing that defines it (``module:name`` where it is named so there)
_DOOR = {
    "DRAW": "_figures",
    "Derivation": "_render",
    "LINE_BUDGET_PT": "_render",
    "MARKER": "_report",
    "MD_JSON_LINES": "_report",
    "RENDERERS": "_render",
    "Section": "_render",
    "check_target": "_report",
    "draw": "_figures",
    "dumps": "_report",
    "environment": "_report",
    "file_digest": "_report:_file_digest",
    "incomplete_text": "_report",
    "not_settled_text": "_report",
    "prerender": "_figures",
    "selection_text": "_report",
    "table_json": "_render",
    "table_latex": "_render",
    "table_markdown": "_render",
    "tex_plain": "_render",
    "tex_width": "_render",
    "to_latex": "_render",
    "to_markdown": "_render",
    "write_atomic": "_render",
    "write_report": "_report",
}
__all__ = sorted(_DOOR)


def __getattr__(name: str):
    if name in _DOOR:
        module, _, inner = _DOOR[name].partition(":")
        value = getattr(importlib.import_module(f".{module}", __name__), inner or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
