"""The import graph, read statically (every ``import``, function-level ones included).

* no upward arrow between the layers theorems -> numerics -> proofs_check -> softpolar;
* no cycle between the modules of one package (a function-level import hides a cycle from
  ``import``-time checks, not from this one);
* ``numerics`` keeps its wings: integrators in ``numerics.integrate``, validated numerics in
  ``numerics.validated``, and the independent checkers import nothing of the code they check;
* doors: a ``_private`` module or name is for its own package or wing. ``proofs_check``'s wings
  (``claims``, ``cli``, ``report``, ``mutation``) are entered by product code through their ``__init__``
  (``__all__``) only. Product code imports no private module or name of another home but in the mutation wing
  (it plants bugs), tests none but to patch it for one test (:data:`TESTS_PATCH_PRIVATE`, each entry checked to
  be used for nothing else); both counts are a ratchet besides: they may fall, never grow.
* the same door, seen through an attribute: a private name of another home read as ``m._x`` (or
  ``getattr(m, "_x")``) after ``import``-ing ``m``. What counts is stated above :func:`attr_reads`; a read stays
  only to plant a bug or to spy (:data:`ATTR_PLANTS`, each checked), and the count is a ratchet
  (:data:`ATTR_RATCHET`).
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
RATCHET = {"product": 8, "tests": 11}


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


#: the tests that patch private code of another home for one test (monkeypatch undoes it): a negative control that
#: plants a bug where the code under test looks the name up, a stub, a spy, a lowered setting. file -> the private
#: modules it imports to do so, and why. Each is checked below to be used for nothing else: every use of the
#: imported name is the object a ``setattr`` call patches, or reads an attribute the file patches (a spy wraps the
#: original). Any other crossing by a test is an error.
TESTS_PATCH_PRIVATE: dict[str, dict[str, str]] = {
    "test_benchmarks.py": {"softpolar.benchmarks._runner": "stub: fake rows for the runner's row table"},
    "test_cli_derive.py": {"proofs_check.cli._cmd_derive": "plants a bug: an identity that fails"},
    "test_derive_generic.py": {"proofs_check.cli._cmd_derive": "plants a bug: a generic control that holds"},
    "test_experiments_grid.py": {"softpolar.experiments._train": "spy: counts the eval forward passes"},
    "test_first_hour.py": {"proofs_check.cli._cmd_verify": "setting: a lower long-claim threshold"},
    "test_fuzz_cli.py": {"proofs_check.cli._cmd_verify": "stub: canned claim results",
                         "softpolar.experiments._cmd": "stub: no training behind the hostile arguments"},
    "test_report.py": {"proofs_check.report._report": "plants a bug: an interrupted write",
                       "proofs_check.report._figures": "plants a bug: a failing figure rewrite"},
    "test_safety_repros.py": {"numerics.integrate._mpmath": "plants a bug: a sign-flipped flow"},
    "test_stateful.py": {"proofs_check.report._report": "plants a bug: a writer that replaces the folder"},
}

_PATCHERS = {"setattr", "object", "delattr", "setitem"}


def _bindings(tree: ast.AST, target: str) -> list[str]:
    """The names under which the module's imports bind ``target`` (a module or a module's name)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == target:
                    out.append(a.asname or a.name)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for a in node.names:
                if f"{node.module}.{a.name}" == target:
                    out.append(a.asname or a.name)
    return out


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def only_patched(source: str, target: str) -> bool:
    """Whether every use of the names ``source`` binds ``target`` to is the object a patching call patches
    (``monkeypatch.setattr(X, ...)``, ``mock.patch.object(X, ...)``, with X the name or an attribute of it)."""
    tree = ast.parse(source)
    names = _bindings(tree, target)
    if not names:
        return False
    patched = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PATCHERS
                and node.args):
            patched.update(id(n) for n in ast.walk(node.args[0]))
    roots = {x.split(".")[0] for x in names}
    patched_attrs = {c.args[1].value for c in ast.walk(tree) if isinstance(c, ast.Call)
                     and isinstance(c.func, ast.Attribute) and c.func.attr in _PATCHERS and len(c.args) > 1
                     and isinstance(c.args[1], ast.Constant) and _dotted(c.args[0]) in names}
    # a spy reads the original it wraps: `real = mod.f` where the file patches `mod, "f"`
    spied = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in patched_attrs
             and _dotted(n.value) in names}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in roots]
    return bool(patched) and bool(uses) and all(id(n) in patched or id(n) in spied for n in uses)


def test_tests_cross_into_no_private_module_but_to_plant_bugs():
    """The door rule, for the tests: a test imports public names only (a package's or wing's door, a public
    module). The one exception: a negative control that plants a bug in private code, listed in
    :data:`TESTS_PATCH_PRIVATE` and using what it imports for nothing else."""
    tests_dir = Path(__file__).resolve().parent
    found = all_crossings()["tests"]
    assert [(p, t) for p, t in found if t not in TESTS_PATCH_PRIVATE.get(p, {})] == []
    for name, targets in TESTS_PATCH_PRIVATE.items():
        source = (tests_dir / name).read_text()
        assert [t for t in targets if not only_patched(source, t)] == [], name


def test_the_tests_rule_sees_a_private_import_used_for_more_than_a_planted_bug():
    """The control: a private module that a test patches *and* reads is refused; patched only, it passes."""
    planted = ("from numerics.integrate import _gd\n\n"
               "def test_x(monkeypatch):\n    monkeypatch.setattr(_gd, 'FINITE_BLOCK', 1)\n")
    assert only_patched(planted, "numerics.integrate._gd")
    assert not only_patched(planted + "    assert _gd.gradient_descent() is None\n", "numerics.integrate._gd")
    spy = planted + "    real = _gd.step\n    monkeypatch.setattr(_gd, 'step', lambda *a: real(*a))\n"
    assert only_patched(spy, "numerics.integrate._gd")
    assert not only_patched(spy + "    _gd.other()\n", "numerics.integrate._gd")
    assert not only_patched("from numerics.integrate._gd import FINITE_BLOCK\nx = FINITE_BLOCK\n",
                            "numerics.integrate._gd.FINITE_BLOCK")


# ---- private attributes ----------------------------------------------------------------------------------
# The door rule seen through an attribute: ``from softpolar.experiments import grid; grid._SHARED`` reads a private
# name of another home as surely as ``from softpolar.experiments.grid import _SHARED`` imports it. What counts as a
# read (:func:`attr_reads`):
#
# * ``X._name`` (any context: a load, an assignment, a ``del``) where ``X`` is a name that an import binds to a
#   first-party module or object of another home (a dotted ``pkg.mod._name`` through ``import pkg.mod`` too),
#   ``_name`` not a dunder. For a test every first-party module is another home. Inside a chain only the first
#   private step counts (``m._a._b`` is one read);
# * ``getattr(X, "_name"[, default])`` and ``hasattr(X, "_name")`` with a string constant: the same read, spelled
#   to hide it;
# * a dotted path with a private step, given as a string to ``monkeypatch.setattr``/``delattr``, ``mock.patch`` or
#   ``importlib.import_module`` (``monkeypatch.setattr("pkg.mod._x", v)``): an import and a read spelled to hide
#   both; counted, and never allowed by :func:`only_planted` (patch the object: ``setattr(mod, "_x", v)``);
# * not a read: a string naming the attribute a patching call replaces (``monkeypatch.setattr(X, "_name", v)``,
#   ``mock.patch.object(X, "_name")``, ``setattr``/``delattr``, the mutation wing's ``(X, "_name", v)`` patch
#   triples). A plant replaces the name for one test or one mutant run; it does not use what the name holds.
#
# A read stays only to plant a bug or to spy (:data:`ATTR_PLANTS`, each entry checked by :func:`only_planted`):
# every read of the listed name is the object a patching call patches (``monkeypatch.setitem(X._d, k, v)``), or
# keeps the original of a name the same file patches, to wrap or copy it (``real = X._f`` / ``dict(X._d)`` inside
# the patching call), never a call of it, never a comparison with it.

#: private attribute reads left (product, tests), allowlisted plants and spies included; a ratchet like
#: :data:`RATCHET`: lower it when you remove one, never raise it
ATTR_RATCHET = {"product": 2, "tests": 9}

#: file (a test's file name; a product module's dotted name) -> the private attributes it reads to plant a bug or
#: to spy, and why
ATTR_PLANTS: dict[str, dict[str, str]] = {
    "proofs_check.mutation._planted": {
        "proofs_check.claims._logistic_laws._polar": "plants a bug: a wrong exponent or constant in a law",
        "proofs_check.claims._logistic_laws._tL": "plants a bug: a wrong exponent or constant in a law"},
    "test_atlas.py": {"softpolar.benchmarks.row_box._atlas": "spy: records the schemes quick mode builds"},
    "test_experiments_grid.py": {"softpolar.experiments.grid._start_local": "spy: counts the local clusters started",
                                 "softpolar.experiments._train._forward_np": "spy: counts the eval forward passes",
                                 "softpolar.experiments.claims._draw_figures": "spy: records the figures drawn"},
    "test_mutants.py": {"proofs_check.mutation.mutants._GROUPS": "setting: a copy of the group table, for a test's "
                                                                 "own group"},
    "test_mutants_parallel.py": {"proofs_check.mutation.mutants._GROUPS": "setting: a copy of the group table, for "
                                                                          "a test's own groups"},
    "test_sink_cert.py": {"numerics.validated.sink_certcheck._substep": "spy: records each substep's result",
                          "numerics.validated.sink_certcheck._inside": "spy: counts the boxes sought"},
}

_READERS = {"getattr", "hasattr"}
#: calls that take a dotted path as a string: ``monkeypatch.setattr("pkg.mod._x", v)``, ``mock.patch(...)``,
#: ``importlib.import_module(...)``
_STRING_FORMS = {"setattr", "delattr", "patch", "import_module", "__import__"}


def _called(func: ast.AST) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
_PLANTERS = _PATCHERS | {"delitem"}


def _resolve(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def _first_party(tree: ast.AST, package: str) -> dict[str, str]:
    """Local name -> the first-party module or object an import (anywhere in the file) binds it to."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                if root in LAYERS:
                    out[a.asname or root] = a.name if a.asname else root
        elif isinstance(node, ast.ImportFrom):
            mod = _resolve(node, package)
            if mod.split(".")[0] in LAYERS:
                out.update({a.asname or a.name: f"{mod}.{a.name}" for a in node.names})
    return out


def _is_private_name(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_reads(tree: ast.AST, me: str, is_init: bool) -> list[tuple[ast.AST, str]]:
    """(node, ``owner._name``) for each read of a private attribute of another home (see above)."""
    package = me if is_init else me.rpartition(".")[0]
    bound = _first_party(tree, package)

    def owner(value: ast.AST) -> str | None:
        dotted = _dotted(value)
        if dotted is None or dotted.split(".")[0] not in bound:
            return None
        root, _, rest = dotted.partition(".")
        if any(_is_private_name(x) for x in rest.split(".") if x):
            return None  # m._a._b: counted at m._a
        full = ".".join([bound[root]] + ([rest] if rest else []))
        door = is_init and full.startswith(me + ".")
        return None if door or _home(full) == _home(me) else full

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private_name(node.attr):
            who = owner(node.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _READERS
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _is_private_name(node.args[1].value)):
            who = owner(node.args[0])
        elif (isinstance(node, ast.Call) and _called(node.func) in _STRING_FORMS and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            text = node.args[0].value  # a dotted path in a string: the import (and the read) spelled to hide it
            if (text.split(".")[0] in LAYERS and any(_is_private_name(x) for x in text.split(".")[1:])
                    and _home(text) != _home(me)):
                out.append((node, text))
            continue
        else:
            continue
        if who is not None:
            out.append((node, f"{who}.{node.attr if isinstance(node, ast.Attribute) else node.args[1].value}"))
    return out


def attr_reads(source: str, me: str, is_init: bool = False) -> list[tuple[int, str]]:
    """(line, ``owner._name``): the private attributes of another home module ``me`` (``tests`` for a test) reads."""
    return sorted((n.lineno, t) for n, t in _private_reads(ast.parse(source), me, is_init))


def all_attr_reads() -> dict[str, list[tuple[str, int, str]]]:
    product = [(m, line, t) for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))
               for m in [_module_name(p)] for line, t in attr_reads(p.read_text(), m, p.name == "__init__.py")]
    tests_dir = Path(__file__).resolve().parent
    tests = [(p.name, line, t) for p in sorted(tests_dir.rglob("*.py"))
             for line, t in attr_reads(p.read_text(), "tests")]
    return {"product": product, "tests": tests}


def _plants(tree: ast.AST) -> list[tuple[ast.AST, list[ast.AST]]]:
    """(the patched object's node, the nodes of the call or triple) for each patching call or patch triple."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and (
                isinstance(node.func, ast.Attribute) and node.func.attr in _PLANTERS
                or isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")):
            out.append((node, node.args))
        elif (isinstance(node, ast.Tuple) and len(node.elts) == 3 and isinstance(node.elts[1], ast.Constant)
              and isinstance(node.elts[1].value, str)):
            out.append((node, node.elts))
    return out


def only_planted(source: str, target: str, me: str = "tests") -> bool:
    """Whether every read of the private attribute ``target`` (``owner._name``) in ``source`` plants a bug or spies:
    it is (inside) the object a patching call patches, or it keeps the original of ``owner._name``, which the file
    patches, in an assignment or inside that patching call (a spy wraps it, a copy replaces it). False when the
    file reads ``target`` nowhere."""
    tree = ast.parse(source)
    reads = [n for n, t in _private_reads(tree, me, False) if t == target]
    if not reads:
        return False
    bound = _first_party(tree, me.rpartition(".")[0])
    owner, _, name = target.rpartition(".")

    def is_owner(node: ast.AST) -> bool:
        dotted = _dotted(node)
        if dotted is None or dotted.split(".")[0] not in bound:
            return False
        root, _, rest = dotted.partition(".")
        return ".".join([bound[root]] + ([rest] if rest else [])) == owner

    patched_objects, spy_places = set(), set()
    for plant, args in _plants(tree):
        patched_objects.update(id(n) for n in ast.walk(args[0]))
        if (len(args) > 1 and isinstance(args[1], ast.Constant) and args[1].value == name and is_owner(args[0])):
            spy_places.update(id(n) for a in args[2:] for n in ast.walk(a))
            spy_places.add(id(plant))
    kept = set()
    if spy_places:  # the file patches owner._name: an assignment may keep the original
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                kept.update(id(v) for v in values)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return all(id(r) not in called and (id(r) in patched_objects or id(r) in spy_places or id(r) in kept)
               for r in reads)


@pytest.mark.parametrize("part", ["product", "tests"])
def test_private_attribute_reads_do_not_grow(part):
    found = all_attr_reads()[part]
    assert len(found) <= ATTR_RATCHET[part], (
        f"{len(found) - ATTR_RATCHET[part]} more private attribute reads than the ratchet ({ATTR_RATCHET[part]}); "
        f"use the public name, or test through the public function that uses it")


def test_product_reads_no_private_attribute_but_to_plant_bugs():
    """Product code reads no private attribute of another home; the mutation wing's planted bugs keep the originals
    they wrap (:data:`ATTR_PLANTS`)."""
    found = all_attr_reads()["product"]
    assert [(m, line, t) for m, line, t in found if t not in ATTR_PLANTS.get(m, {})] == []


def test_tests_read_no_private_attribute_but_to_plant_bugs_or_spy():
    """The door rule through attributes, for the tests: a test reads public names only; a read that plants a bug
    or spies is listed in :data:`ATTR_PLANTS` (and checked below to do nothing else)."""
    found = all_attr_reads()["tests"]
    assert [(f, line, t) for f, line, t in found if t not in ATTR_PLANTS.get(f, {})] == []


def test_the_listed_attribute_reads_only_plant_bugs_or_spy():
    tests_dir = Path(__file__).resolve().parent
    for where, targets in ATTR_PLANTS.items():
        if where.endswith(".py"):
            source, me = (tests_dir / where).read_text(), "tests"
        else:
            source, me = (ROOT / Path(*where.split("."))).with_suffix(".py").read_text(), where
        assert [t for t in targets if not only_planted(source, t, me)] == [], where


def test_the_attribute_rule_sees_a_planted_private_read():
    """The controls: a private attribute read, plain or through ``getattr``, is counted; a dunder, a public name, a
    read inside its own home and a string a patching call replaces are not; a listed name that the file also calls
    is refused by the allowlist's check, a spy passes it."""
    src = ("from softpolar.experiments import grid\nimport numerics.rhs as R\nimport softpolar.experiments.grid\n"
           "x = grid._SHARED['client']\ny = getattr(R, '_LOSS_KERNELS')\nz = grid.__name__, grid.run_grid\n"
           "w = softpolar.experiments.grid._SHARED._x\n"
           "def test_x(monkeypatch):\n    monkeypatch.setattr(grid, '_start_local', None)\n")
    assert attr_reads(src, "tests") == [(4, "softpolar.experiments.grid._SHARED"),
                                        (5, "numerics.rhs._LOSS_KERNELS"),
                                        (7, "softpolar.experiments.grid._SHARED")]
    assert attr_reads(src, "softpolar.experiments.claims") == [(5, "numerics.rhs._LOSS_KERNELS")]  # grid: own wing
    assert attr_reads(src, "proofs_check.cli._planted") == [(4, "softpolar.experiments.grid._SHARED"),
                                                           (5, "numerics.rhs._LOSS_KERNELS"),
                                                           (7, "softpolar.experiments.grid._SHARED")]
    spy = ("from numerics.validated import atlas_check as ac\n\n"
           "def test_x(monkeypatch):\n    real = ac._inside\n"
           "    monkeypatch.setattr(ac, '_inside', lambda *a: not real(*a))\n")
    assert only_planted(spy, "numerics.validated.atlas_check._inside")
    assert not only_planted(spy + "    assert ac._inside(1, 2)\n", "numerics.validated.atlas_check._inside")
    assert not only_planted(spy + "    assert ac._inside is real\n", "numerics.validated.atlas_check._inside")
    assert not only_planted(spy, "numerics.validated.atlas_check._affine")  # listed but not read: a stale entry
    copy = ("from proofs_check.mutation import mutants as M\n\n"
            "def test_x(monkeypatch):\n    monkeypatch.setattr(M, '_GROUPS', dict(M._GROUPS))\n")
    assert only_planted(copy, "proofs_check.mutation.mutants._GROUPS")
    assert not only_planted(copy + "    assert M._GROUPS\n", "proofs_check.mutation.mutants._GROUPS")
    hidden = ("def test_x(monkeypatch):\n    monkeypatch.setattr('numerics.validated.atlas_check._inside', None)\n"
              "    import importlib\n    importlib.import_module('numerics.integrate._gd')\n")
    assert attr_reads(hidden, "tests") == [(2, "numerics.validated.atlas_check._inside"),
                                           (4, "numerics.integrate._gd")]
    assert attr_reads(hidden, "numerics.integrate._other") == [(2, "numerics.validated.atlas_check._inside")]
    assert not only_planted(hidden, "numerics.validated.atlas_check._inside")
    triple = ("from numerics.validated import atlas_check as ac\n\n"
              "def mutant():\n    real = ac._affine\n    return [(ac, '_affine', lambda t: real(t[:9]))]\n")
    assert only_planted(triple, "numerics.validated.atlas_check._affine", "proofs_check.mutation.checker_mutants")
    # a read kept in an assignment while the file patches another name is no spy
    assert not only_planted(triple.replace("'_affine'", "'_inside'"), "numerics.validated.atlas_check._affine",
                            "proofs_check.mutation.checker_mutants")
