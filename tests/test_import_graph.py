"""The import graph, read statically (every ``import``, function-level ones included).

* no upward arrow between the layers theorems -> numerics -> proofs_check -> softpolar;
* no cycle between the modules of one package (a function-level import hides a cycle from
  ``import``-time checks, not from this one);
* ``numerics`` keeps its wings: integrators in ``numerics.integrate``, validated numerics in
  ``numerics.validated``, and the independent checkers import nothing of the code they check;
* doors: a ``_private`` module or name is for its own package or wing. ``proofs_check``'s wings
  (``claims``, ``cli``, ``report``, ``mutation``) are entered by product code through their ``__init__``
  (``__all__``) only;
  elsewhere the crossings that remain are a ratchet: their number may fall, never grow.
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
    assert flat == ["numerics.integrate", "numerics.io", "numerics.lambdify", "numerics.metrics", "numerics.optim",
                    "numerics.plot", "numerics.problem", "numerics.progress", "numerics.rhs", "numerics.strategies",
                    "numerics.validated"]
    # the core modules never reach up into a wing
    for m in flat:
        if m not in ("numerics.integrate", "numerics.validated", "numerics.optim"):
            assert not {t for t in edges[m] if t.startswith(("numerics.integrate", "numerics.validated",
                                                             "numerics.optim"))}, m


@pytest.mark.parametrize("checker, checked", [
    ("numerics.validated.certcheck", ("numerics.validated.enclosure", "numerics.validated.certify",
                                       "numerics.rhs", "numerics.integrate")),
    ("numerics.validated.atlas_check", ("numerics.validated.box", "numerics.validated.enclosure",
                                         "numerics.validated.box_float", "softpolar.atlas")),
])
def test_independent_checkers_import_nothing_they_check(checker, checked):
    edges = graph()
    assert not {t for t in edges[checker] if t.startswith(checked)}


# ---- doors ---------------------------------------------------------------------------------------------
#: proofs_check's wings: what lies behind their doors (``__all__``) is theirs alone
WINGS = ("proofs_check.claims", "proofs_check.cli", "proofs_check.report", "proofs_check.mutation")
#: the mutation wing plants bugs into private code of every layer on purpose (for one run, then undone)
PLANTS_BUGS = "proofs_check.mutation"
#: crossings still left (a module or name ``_private`` to another package or wing), product and tests; lower
#: them when you open a door, never raise them: import the public name (``numerics.io``, ``theorems.errors``,
#: a wing's ``__init__``) instead
#: 286: the optimizer claims' witnesses (Witness from the core _claim, as every claim module takes Claim/Control)
RATCHET = {"product": 9, "tests": 179}


def _home(module: str) -> str:
    """A module's package, or its wing (a subpackage folder: ``numerics.integrate``, ``proofs_check.claims``)."""
    parts = module.split(".")
    if len(parts) >= 2 and (ROOT / parts[0] / parts[1]).is_dir():
        return ".".join(parts[:2])
    return parts[0]


def _is_private(target: str) -> bool:
    return any(x.startswith("_") and not x.startswith("__") for x in target.split(".")[1:])


def crossings(path: Path, me: str, modules: set[str]) -> list[str]:
    """The private modules and names ``path`` (module ``me``; ``tests`` for a test) imports from another home."""
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" for a in node.names]
        for t in targets:
            if t.split(".")[0] not in LAYERS:
                continue
            owner = t if t in modules else t.rpartition(".")[0]
            # a package's __init__ is the door of what lies below it
            door = path.name == "__init__.py" and owner.startswith(me + ".")
            if _is_private(t) and _home(owner) != _home(me) and not door:
                out.append(t)
    return out


def all_crossings() -> dict[str, list[tuple[str, str]]]:
    modules = set(graph())
    product = [(m, t) for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))
               for m in [_module_name(p)] for t in crossings(p, m, modules)]
    tests_dir = Path(__file__).resolve().parent
    tests = [(p.name, t) for p in sorted(tests_dir.rglob("*.py")) for t in crossings(p, "tests", modules)]
    return {"product": product, "tests": tests}


def test_proofs_check_wings_are_entered_through_their_doors():
    found = all_crossings()
    inside = [(m, t) for m, t in found["product"]
              if _home(t) in WINGS and not m.startswith(PLANTS_BUGS) and not t.startswith(PLANTS_BUGS)
              and any(x.startswith("_") for x in t[len(_home(t)) + 1:].split("."))]
    assert inside == []


@pytest.mark.parametrize("wing", WINGS)
def test_a_wing_door_lists_its_names_sorted_and_each_loads(wing):
    import importlib
    door = importlib.import_module(wing)
    assert door.__all__ == sorted(door.__all__)
    assert all(not n.startswith("_") and getattr(door, n) is not None for n in door.__all__)


@pytest.mark.parametrize("part", ["product", "tests"])
def test_private_crossings_do_not_grow(part):
    found = all_crossings()[part]
    assert len(found) <= RATCHET[part], (f"{len(found) - RATCHET[part]} more private crossings than the ratchet "
                                          f"({RATCHET[part]}); use the public name or the wing's door")


def test_product_code_crosses_into_no_private_module_but_to_plant_bugs():
    """The door rule, as a rule for the product: no module imports a private module or name of another package or
    wing. The one exception is the mutation wing, whose planted bugs patch private code on purpose (for one run,
    then undone): its crossings are the product's ratchet."""
    found = all_crossings()["product"]
    assert [(m, t) for m, t in found if not m.startswith(PLANTS_BUGS)] == []
    assert len(found) <= RATCHET["product"]


def test_the_door_rule_sees_a_planted_private_import(tmp_path):
    """The control: a module of one wing importing a private module of another is found."""
    modules = set(graph())
    planted = tmp_path / "x.py"
    planted.write_text("from proofs_check.report._report import environment\nfrom numerics.io import read_json\n")
    assert crossings(planted, "proofs_check.cli._planted", modules) == ["proofs_check.report._report.environment"]
    assert crossings(planted, "proofs_check.report._planted", modules) == []
