"""The layers depend in one direction only: theorems -> numerics -> proofs_check."""
import subprocess
import sys


def _modules_after_import(name):
    code = f"import sys, {name}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_theorems_imports_no_numerics():
    # mpmath is excluded from this list: SymPy itself imports it.
    mods = _modules_after_import("theorems")
    for forbidden in ("numpy", "torch", "numerics", "proofs_check", "scipy"):
        assert forbidden not in mods, f"theorems imported {forbidden}"


def test_numerics_does_not_import_proofs_check():
    mods = _modules_after_import("numerics")
    assert "proofs_check" not in mods
    assert "torch" not in mods, "numerics must import torch lazily (only for backend='torch')"
