"""What a new user meets first: ``softpolar list`` fits 100 columns, ``verify`` prints results on stdout
and progress on stderr, report.md leads with the summary."""
from __future__ import annotations

import re

from proofs_check._cmd_verify import LIST_WIDTH, list_table
from proofs_check._registry import registry
from softpolar._cli import main


def test_list_fits_100_columns_and_names_every_claim(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # a wide terminal still gets the 100-column table
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= LIST_WIDTH
    ids = {x.split()[0] for x in lines if x and not x.startswith(" ")}
    assert set(registry()) <= ids
    assert "$" not in out and "\\" not in out  # titles' math reads as ASCII on a terminal


def test_list_table_wraps_to_a_narrow_terminal():
    text = list_table(registry().values(), 80)
    assert max(len(x) for x in text.splitlines()) <= 80
    unwrapped = list_table(registry().values(), 10_000)
    assert max(len(x) for x in unwrapped.splitlines()) > 100  # the width bound is what keeps it narrow
