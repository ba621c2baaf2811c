"""`softpolar list` names every evidence kind without truncating it; a huge --claims error stays short."""
from __future__ import annotations

import pytest

from proofs_check import EVIDENCE_KINDS
from proofs_check.cli import EVIDENCE_SHORT, list_table
from proofs_check import registry
from softpolar import main


def test_every_evidence_kind_has_a_short_name_explained_in_the_legend():
    assert set(EVIDENCE_SHORT) == set(EVIDENCE_KINDS)
    text = list_table(registry().values())
    legend = " ".join(text.split("\n\n", 1)[1].split())  # the legend, unwrapped
    for kind, short in EVIDENCE_SHORT.items():
        if short != kind:
            assert f"{short} = {kind}" in legend, (short, legend)
    table = text.split("\n\n", 1)[0]
    assert "interval arith  " not in table and "machine-checke  " not in table  # the kinds cut to 14 characters
    assert "interval+Coq" in text and "Coq proof" in text


@pytest.mark.parametrize("argv", [["verify"], ["verify", "--link", "softmax", "--loss", "logistic"]])
def test_thousands_of_unknown_claim_ids_give_a_short_error(tmp_path, capsys, argv):
    ids = ",".join(f"NOPE{k}" for k in range(5000))
    assert main([*argv, "--claims", ids, "--out", str(tmp_path / "r")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "NOPE0,NOPE1" in line and "5000 unknown ids" in line and "NOPE4999" not in line
    assert len(line) < 2000, len(line)


def test_a_few_unknown_ids_are_all_named(tmp_path, capsys):
    assert main(["verify", "--claims", "C01,NOPE,ALSO" + "x" * 100, "--out", str(tmp_path / "r")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "NOPE,ALSOxxx" in line and "..." in line and "x" * 100 not in line and "(2 unknown ids)" in line
    assert main(["verify", "--claims", "C01,NOPE", "--out", str(tmp_path / "r")]) == 2
    assert "claims='NOPE' is not a known claim id" in capsys.readouterr().err
