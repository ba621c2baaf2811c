"""Imports sit at the module's top (issue 34): a function imports only what may not be loaded with its module.

The doors of the four packages and of ``proofs_check``'s wings are lazy (PEP 562): ``import numerics`` or
``import proofs_check`` loads nothing beneath them, and a module's top-level ``from numerics import simulate``
loads the engines only when that module is loaded. So start-up time is no reason for a first-party import to sit
inside a function any more. What may still be imported inside a function, read statically from every module of
the four packages:

* a package of :data:`LAZY_PACKAGES`, each with its reason (heavy at start-up, an optional extra, or POSIX-only);
* an import inside a ``try`` block (the function handles its absence or its failure);
* an entry of :data:`LOCAL_IMPORTS`, ``(file, module) -> reason``: a cycle, a name the module binds otherwise,
  or a lazy door resolved on purpose at call time. Each entry must still exist (a stale one fails the test).

Anything else (a first-party module, a cheap standard-library module) goes at the top. The controls feed planted
sources to the same counting function.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import theorems

#: the packages' own location: the checkout, or site-packages when the suite runs against an installed wheel
ROOT = Path(theorems.__file__).resolve().parents[1]
LAYERS = ("theorems", "numerics", "proofs_check", "softpolar")

#: third-party (and a few standard-library) packages a function may import when called, and why
LAZY_PACKAGES = {
    "torch": "heavy: about 1 s and 200 MB at start-up; only the torch engines, experiments and kernels need it",
    "matplotlib": "heavy: figures are drawn on request only",
    "dask": "heavy: the cluster is started on request only",
    "distributed": "heavy: the cluster is started on request only",
    "heyoka": "heavy (LLVM at import); the Taylor engine only",
    "sympy": "heavy; the numerical modules a grid client loads must not load it",
    "scipy": "heavy; the numerical modules a grid client loads must not load it",
    "flint": "arb balls for the validated numerics only",
    "IPython": "optional: inline figures in a notebook",
    "pandas": "optional extra (notebook): Trajectory.to_dataframe",
    "tqdm": "optional extra (notebook): progress bars",
    "gguf": "optional extra (pretrained)",
    "regex": "optional extra (pretrained)",
    "torchode": "a bench anchor, optional",
    "torchdiffeq": "a bench anchor, optional",
    "fcntl": "POSIX-only (file locks)",
    "resource": "POSIX-only (rlimits)",
    "ctypes": "platform calls (prctl), only where they are made",
    "multiprocessing": "process pools are started on request only",
    "concurrent": "process pools are started on request only",
    "cProfile": "the profiler, on request only",
    "pstats": "the profiler, on request only",
}

#: first-party or standard-library imports that stay inside a function: (file, module) -> reason
LOCAL_IMPORTS = {
    ("proofs_check/parallel.py", ".claim"): "a grid client imports this module for the CPU hand-over "
                                             "(take_freed_cpus); the claim machinery loads when claims run",
}


def function_imports(source: str, filename: str = "<planted>") -> list[tuple[int, str, bool]]:
    """``(line, module, in_try)`` of every import statement inside a function of ``source`` (one entry per
    statement; ``module`` as written, relative ones with their dots)."""
    out = []

    def visit(node, in_function: bool, in_try: bool):
        for child in ast.iter_child_nodes(node):
            function = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            tried = in_try or (in_function and isinstance(child, ast.Try))
            if in_function and isinstance(child, ast.Import):
                out.extend((child.lineno, a.name, in_try) for a in child.names)
            elif in_function and isinstance(child, ast.ImportFrom):
                out.append((child.lineno, "." * child.level + (child.module or ""), in_try))
            visit(child, function, tried)

    visit(ast.parse(source, filename), False, False)
    return out


def misplaced(source: str, filename: str, lazy=LAZY_PACKAGES, listed=LOCAL_IMPORTS) -> list[str]:
    """The function-level imports of ``source`` that belong at the top: ``file:line module``."""
    return [f"{filename}:{line} {module}" for line, module, in_try in function_imports(source, filename)
            if not in_try and module.split(".")[0] not in lazy and (filename, module) not in listed]


def _files():
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_imports_inside_functions_are_heavy_optional_or_listed():
    bad = [m for name, text in _files() for m in misplaced(text, name)]
    assert bad == [], "imports inside functions that belong at the top:\n" + "\n".join(bad)


def test_every_listed_local_import_is_still_there():
    here = {(name, module) for name, text in _files() for _, module, _ in function_imports(text, name)}
    assert sorted(set(LOCAL_IMPORTS) - here) == []


def test_control_a_planted_local_import_is_found_and_the_allowed_ones_are_not():
    planted = ("import os\n\n"
               "def f():\n    from numerics import simulate\n    import json\n    return simulate, json\n\n"
               "def g():\n    import torch\n    try:\n        import heyoka\n    except ImportError:\n"
               "        heyoka = None\n    return torch, heyoka\n\n"
               "class C:\n    def m(self):\n        from .errors import InvalidArgument\n"
               "        return InvalidArgument\n")
    assert misplaced(planted, "x.py") == ["x.py:4 numerics", "x.py:5 json", "x.py:18 .errors"]
    # the same source with the first-party one listed: only the others are left
    assert misplaced(planted, "x.py", listed={("x.py", "numerics"): "planted"}) == ["x.py:5 json", "x.py:18 .errors"]
    # a top-level import is never counted
    assert function_imports("import sys\nfrom numerics import io\n") == []


def test_the_lazy_doors_are_what_makes_top_imports_cheap():
    """The reason stated above holds: importing the four packages' doors loads no module beneath them."""
    code = ("import sys, json\nimport theorems, numerics, proofs_check, softpolar\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('theorems', 'numerics', 'proofs_check', 'softpolar') and m.count('.') and "
            "m != 'theorems.door')))")  # theorems.door: the lazy-door helper itself
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert got.stdout.strip().splitlines()[-1] == "[]"


HEAVY_AT_START = ("torch", "matplotlib", "distributed", "heyoka")


def _loaded_after(code: str) -> list[str]:
    probe = (f"import sys, json\n{code}\n"
             f"print(json.dumps(sorted(m for m in {HEAVY_AT_START!r} if m in sys.modules)))")
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    return json.loads(got.stdout.strip().splitlines()[-1])


def test_the_command_line_starts_without_the_heavy_packages():
    """With the imports at the top, ``softpolar --help`` (which loads every subcommand and claim module) still
    loads none of torch, matplotlib, dask's distributed or heyoka. The control: the same probe after an import
    that does load torch (SymPy's torch printer, which a top-level import in ``numerics.lambdify`` once pulled in)
    sees it."""
    code = ("import contextlib, io\nfrom softpolar import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main(['--help'])\n"
            "    except SystemExit:\n        pass")
    assert _loaded_after(code) == []
    assert "torch" in _loaded_after("import sympy.printing.pytorch")
