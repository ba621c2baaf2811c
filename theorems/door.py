r"""A package's lazy door (PEP 562), stated once: ``__getattr__`` and ``__dir__`` over a table of names.

``lazy_door(package, table)``: ``table`` maps each name to ``(module, attribute)``, the module relative to
``package`` or absolute, ``attribute`` ``None`` for the module itself. A name resolves on first access and is then
kept in the package's namespace. Used by :mod:`theorems`, :mod:`numerics` and :mod:`proofs_check`; it imports
nothing heavy.
"""
from __future__ import annotations

import importlib
import sys


def lazy_door(package: str, table: dict):
    """The ``(__getattr__, __dir__)`` pair of ``package``'s door over ``table``."""
    def __getattr__(name: str):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = table[name]
        value = importlib.import_module(module, package)
        value = value if attr is None else getattr(value, attr)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
