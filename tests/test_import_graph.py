"""The import graph, read statically (every ``import``, function-level ones included).

* no upward arrow between the layers theorems -> numerics -> proofs_check -> softpolar;
* no cycle between the modules of one package (a function-level import hides a cycle from
  ``import``-time checks, not from this one);
* ``numerics`` keeps its wings: integrators in ``numerics.integrate``, validated numerics in
  ``numerics.validated``, and the independent checkers import nothing of the code they check.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import theorems

#: the packages' own location: the checkout, or site-packages when the suite runs against an installed wheel
ROOT = Path(theorems.__file__).resolve().parents[1]
LAYERS = ("theorems", "numerics", "proofs_check", "softpolar")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules (or module attributes) ``path`` imports."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (names resolved to existing modules)."""
    files = [p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    edges = {}
    for mod, path in modules.items():
        targets = set()
        for imp in _imports(path):
            while imp and imp not in modules:
                imp = imp.rpartition(".")[0]
            if imp and imp != mod and not mod.startswith(imp + ".") and not imp.startswith(mod + "."):
                targets.add(imp)
        edges[mod] = targets
    return edges


def _cycles(edges: dict[str, set[str]], within: str) -> list[list[str]]:
    """Strongly connected components with more than one module, inside package ``within``."""
    nodes = [m for m in edges if m == within or m.startswith(within + ".")]
    # package __init__ modules re-export their children: edges into and out of an __init__ are
    # not a dependency between implementation modules
    inits = {m for m in nodes if (ROOT / Path(*m.split(".")) / "__init__.py").exists()}
    sub = {m: {t for t in edges[m] if t in nodes and t not in inits} for m in nodes if m not in inits}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sub[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sub:
        if v not in index:
            visit(v)
    return out


def test_no_upward_arrow_between_layers():
    edges = graph()
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = [(m, t) for m, ts in edges.items() for t in ts if rank[t.split(".")[0]] > rank[m.split(".")[0]]]
    assert upward == []


@pytest.mark.parametrize("package", LAYERS)
def test_no_cycle_inside_a_package(package):
    assert _cycles(graph(), package) == []


def test_cycle_finder_sees_a_planted_cycle():
    """The control: a graph with a hidden (function-level) circle is reported."""
    edges = graph()
    edges["numerics.integrate._common"] = edges["numerics.integrate._common"] | {"numerics.integrate._simulate"}
    assert any("numerics.integrate._common" in c for c in _cycles(edges, "numerics"))


def test_numerics_wings():
    edges = graph()
    flat = sorted(m for m in edges if m.count(".") == 1 and m.startswith("numerics."))
    assert flat == ["numerics._io", "numerics._lambdify", "numerics._metrics", "numerics._plot",
                    "numerics._problem", "numerics._progress", "numerics._rhs", "numerics.integrate",
                    "numerics.optim", "numerics.strategies", "numerics.validated"]
    # the core modules never reach up into a wing
    for m in flat:
        if m not in ("numerics.integrate", "numerics.validated", "numerics.optim"):
            assert not {t for t in edges[m] if t.startswith(("numerics.integrate", "numerics.validated",
                                                             "numerics.optim"))}, m


@pytest.mark.parametrize("checker, checked", [
    ("numerics.validated._certcheck", ("numerics.validated._enclosure", "numerics.validated._certify",
                                       "numerics._rhs", "numerics.integrate")),
    ("numerics.validated._atlas_check", ("numerics.validated._box", "numerics.validated._enclosure",
                                         "numerics.validated._box_float", "softpolar.atlas")),
])
def test_independent_checkers_import_nothing_they_check(checker, checked):
    edges = graph()
    assert not {t for t in edges[checker] if t.startswith(checked)}
