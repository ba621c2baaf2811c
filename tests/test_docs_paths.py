"""Every module, name and file that the docs and the docstrings point at exists (issue 34: stale paths).

The house moves (``proofs_check`` into wings, private helpers made public, big modules split) left docstrings,
comments and pages naming paths that no longer exist. :func:`stale_references` reads every tracked ``*.py``
outside ``tests/`` (which plant missing names on purpose), ``docs/*.md``, ``README.md`` and ``CONTRIBUTING.md``
(not ``CHANGELOG.md``: its entries record the past) and lists each reference that does not resolve:

* a dotted path ``theorems.``/``numerics.``/``proofs_check.``/``softpolar.``...: the longest importable module
  prefix, then each attribute (a dataclass field counts); entry-point groups named in ``setup.cfg`` are names too;
* a Sphinx role in a module's docstring or comments (``:mod:`.x```, ``:data:`~a.b```, ``:func:`x.y```): a leading
  dot from the module's package, a dotted name whose head is in the module's namespace from there;
* a private file name ``_x.py`` (or a path ending in one): a tracked file of that name.
"""
from __future__ import annotations

import configparser
import dataclasses
import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("theorems", "numerics", "proofs_check", "softpolar")
_DOTTED = re.compile(r"(?<![\w./-])((?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)")
_PRIVATE_FILE = re.compile(r"(?<![\w.-])((?:[\w]+/)*_\w+\.py)\b")
_ROLE = re.compile(r":(?:mod|func|data|class|attr|meth|exc|obj):`(?:[^`<]*<)?~?([.\w]+)>?`")
_SUFFIXES = (".py", ".md", ".json", ".toml", ".txt", ".v", ".npz", ".cfg")


def _tracked() -> list[str]:
    run = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0 or not run.stdout:
        pytest.skip("needs a git checkout (the files git tracks are the files that exist)")
    return [f for f in run.stdout.split() if (ROOT / f).is_file()]


def _entry_point_groups(tracked: list[str]) -> set[str]:
    """The entry-point groups: those ``setup.cfg`` fills and those the code reads (``..._GROUP = "..."``)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    groups = set(cfg["options.entry_points"]) if cfg.has_section("options.entry_points") else set()
    for f in tracked:
        if f.endswith(".py") and f.split("/")[0] in PACKAGES:
            groups |= set(re.findall(r'^\w*GROUP = "([\w.]+)"', (ROOT / f).read_text(encoding="utf-8"), re.M))
    return groups


def _has(obj, name: str) -> tuple[bool, object]:
    if hasattr(obj, name):
        return True, getattr(obj, name)
    if isinstance(obj, type) and dataclasses.is_dataclass(obj) and name in {f.name for f in dataclasses.fields(obj)}:
        return True, None
    return False, None


def _walk(obj, names) -> bool:
    for name in names:
        if obj is None:  # a dataclass field: nothing further to check
            return True
        ok, obj = _has(obj, name)
        if not ok:
            return False
    return True


def resolves(dotted: str) -> bool:
    """Whether ``a.b.c`` is an importable module, or one followed by attributes that exist."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        mod = ".".join(parts[:i])
        try:
            obj = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name and (mod == exc.name or mod.startswith(exc.name + ".")):
                continue
            if exc.name and exc.name.split(".")[0] not in PACKAGES:
                return True  # an optional dependency (torch, dask) is missing here: not checkable, not stale
            raise
        return _walk(obj, parts[i:])
    return False


def _module_name(path: str) -> str:
    mod = path[:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def _role_resolves(target: str, module: str, is_package: bool) -> bool:
    if target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (level - 1)] if level > 1 else base
        rest = target.lstrip(".")
        return resolves(".".join(base + ([rest] if rest else [])))
    if target.split(".")[0] in PACKAGES:
        return resolves(target)
    head, *tail = target.split(".")
    mod = importlib.import_module(module)
    # a name of the module's namespace is checked attribute by attribute; a bare name that is not there (a method
    # of the class the docstring is in, a name the door loads lazily) or another library's path is not checked
    return _walk(getattr(mod, head), tail) if tail and hasattr(mod, head) else True


def stale_references(root: Path = ROOT, files: list[str] | None = None) -> list[str]:
    """``path:line: reference`` for each reference that does not resolve."""
    tracked = _tracked()
    files = files if files is not None else tracked
    names = {Path(f).name for f in tracked}
    groups = _entry_point_groups(tracked)
    bad = []
    for f in files:
        is_py = f.endswith(".py")
        if not (is_py and not f.startswith("tests/") or f in ("README.md", "CONTRIBUTING.md")
                or f.startswith("docs/") and f.endswith(".md")):
            continue
        module = _module_name(f) if is_py and f.split("/")[0] in PACKAGES else None
        for n, line in enumerate((root / f).read_text(encoding="utf-8").splitlines(), 1):
            for m in _DOTTED.finditer(line):
                ref = m.group(1)
                if ref in groups or ref.endswith(_SUFFIXES) or resolves(ref):
                    continue
                bad.append(f"{f}:{n}: {ref}")
            for m in _PRIVATE_FILE.finditer(line):
                ref = m.group(1)
                if ("/" in ref and not any(t == ref or t.endswith("/" + ref) for t in tracked)
                        or "/" not in ref and ref not in names):
                    bad.append(f"{f}:{n}: {ref}")
            if module is not None:
                for m in _ROLE.finditer(line):
                    if not _role_resolves(m.group(1), module, f.endswith("__init__.py")):
                        bad.append(f"{f}:{n}: {m.group(0)}")
    return bad


def test_every_referenced_path_exists():
    bad = stale_references()
    assert not bad, "stale references:\n" + "\n".join(bad)


@pytest.mark.parametrize("planted", [
    "see :func:`numerics._io.write_json_atomic`",          # a module made public
    "see proofs_check._registry.registry",                  # a module renamed
    "split into ``_claims_nowhere.py``",                    # a file that does not exist
    "the machinery of :mod:`.no_such_module`",              # a relative role
    "the helper :func:`summarize.no_such_attribute` here",  # a dotted role from the module's namespace
    "numerics.validated.certify.no_such_name",              # a missing attribute of a real module
])
def test_a_planted_stale_reference_is_found(tmp_path, planted):
    """The control: the same scan over a copy of a real module with one stale line added lists that line."""
    _tracked()  # skips outside a git checkout, as the scan does (the wheel stage runs tests/ away from the sources)
    src = "proofs_check/mutation/mutants.py"
    text = (ROOT / src).read_text(encoding="utf-8")
    (tmp_path / "proofs_check" / "mutation").mkdir(parents=True)
    (tmp_path / src).write_text(text + f"\n# {planted}\n", encoding="utf-8")
    line = text.count("\n") + 2
    bad = stale_references(tmp_path, [src])
    assert bad and all(b.startswith(f"{src}:{line}: ") for b in bad), bad  # the planted line, and only that one
