"""Issue 40, row 12's grid client: the package doors stay lazy. Importing softpolar, softpolar.experiments and
softpolar.benchmarks (what the grid client command loads before it imports run_grid) imports none of the layers
underneath; ``softpolar.__version__`` still works (resolved on first access)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("proofs_check", "theorems", "numerics", "sympy", "scipy", "torch", "distributed")


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_doors_import_no_layer_underneath():
    got = _run("import json, sys\nimport softpolar, softpolar.experiments, softpolar.benchmarks\n"
               f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    assert got == []


def test_the_version_is_still_there_and_the_same_as_the_layers():
    got = _run("import json, sys, softpolar\nv = softpolar.__version__\nfrom softpolar import __version__ as w\n"
               "import proofs_check\nprint(json.dumps([v, w, proofs_check.__version__, "
               "'__version__' in softpolar.__all__, '__version__' in dir(softpolar)]))")
    assert got[0] == got[1] == got[2] and got[0]
    assert got[3] is True and got[4] is True


#: what the grid client may load: the doors of theorems, numerics and proofs_check (lazy, PEP 562) and the small
#: modules run_grid's own imports name (errors, io, progress, proofs_check.parallel's CPU hand-over); never the
#: symbolic or numerical machinery, nor the claims, reports or CLI
MACHINERY = ("proofs_check.catalog", "proofs_check.claims", "proofs_check.report", "proofs_check.cli", "sympy",
             "scipy", "torch", "theorems._functions", "theorems._models", "numerics.integrate",
             "numerics.validated", "numerics.rhs")


def test_the_grid_clients_imports_load_no_machinery():
    """Row 12's serial part is the client's start: ``from softpolar.experiments import run_grid, RunConfig`` loaded
    SymPy and SciPy through theorems' and numerics' eager doors (1.0-1.2 CPU s). The control: asking the theorems
    door for a symbolic name does load SymPy, so the check sees an import when there is one."""
    got = _run("import json, sys\nfrom softpolar.experiments import run_grid, RunConfig\n"
               f"print(json.dumps(sorted(m for m in {MACHINERY!r} if m in sys.modules)))")
    assert got == []
    got = _run("import json, sys\nimport theorems\ntheorems.Link\n"
               f"print(json.dumps(sorted(m for m in {MACHINERY!r} if m in sys.modules)))")
    assert "sympy" in got


def test_every_door_name_of_theorems_and_numerics_resolves():
    got = _run("import json, theorems, numerics\nprint(json.dumps([[n for n in m.__all__ if getattr(m, n) is None] "
               "for m in (theorems, numerics)] + [sorted(set(theorems.__all__) - set(dir(theorems)))]))")
    assert got == [[], [], []]
