"""docs/tests.md maps every feature to its test files: each ``tests/test_*.py`` is listed there exactly once, and
every file listed exists. Skipped outside the checkout (the wheel stage copies tests/ only)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
MAP = TESTS.parent / "docs" / "tests.md"


def _listed(text: str) -> Counter:
    section = text.split("## Where are the tests for X", 1)
    assert len(section) == 2, "docs/tests.md has no section 'Where are the tests for X'"
    rows = [line for line in section[1].splitlines() if line.startswith("| ") and "`test_" in line]
    return Counter(name for row in rows for name in re.findall(r"`(test_\w+\.py)`", row.rsplit("|", 2)[-2]))


def _map_text() -> str:
    if not MAP.is_file():
        pytest.skip("run from outside the checkout (the wheel stage copies tests/ only)")
    return MAP.read_text(encoding="utf-8")


def test_every_test_file_is_listed_under_exactly_one_feature():
    listed = _listed(_map_text())
    files = {p.name for p in TESTS.glob("test_*.py")}
    missing = sorted(files - set(listed))
    assert not missing, f"add these to a feature row of docs/tests.md: {missing}"
    twice = sorted(name for name, count in listed.items() if count > 1)
    assert not twice, f"listed under more than one feature in docs/tests.md: {twice}"
    gone = sorted(set(listed) - files)
    assert not gone, f"docs/tests.md lists files that do not exist: {gone}"


def test_the_map_check_can_fail():
    """Negative controls: a map that misses a file, lists one twice or names a stray one is caught by ``_listed``."""
    text = _map_text()
    some = sorted(p.name for p in TESTS.glob("test_*.py"))[0]
    without = text.replace(f"`{some}`", "`x`", 1)
    assert some not in _listed(without)
    doubled = text + f"| Extra | [Tests](tests.md) | `{some}` |\n"
    assert _listed(doubled)[some] == 2
    stray = text + "| Extra | [Tests](tests.md) | `test_no_such_feature.py` |\n"
    assert "test_no_such_feature.py" in _listed(stray)
