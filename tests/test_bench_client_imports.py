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
