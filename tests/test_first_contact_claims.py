"""``--claims`` parsing (issue 39): family ids hold a comma inside brackets and must still be selectable;
an unknown id is named, with the closest known ids, in one line."""
import json

import pytest

from proofs_check.cli import main

FAMILY = "F.vertex[logistic,softmax1]"


@pytest.mark.parametrize("text", ["F.rate_law[logistic,softmax1", "C01]", "F.x]logistic,softmax1["])
def test_unbalanced_brackets_refused(text, tmp_path, capsys):
    rc = main(["verify", "--claims", text, "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and f"claims={text!r}" in err[0] and ("'['" in err[0] or "']'" in err[0])
    assert not (tmp_path / "r").exists()


def test_family_id_selected_end_to_end(tmp_path, capsys):
    out = tmp_path / "r"
    rc = main(["verify", "--link", "softmax1", "--loss", "logistic",
               "--claims", f" F.top_gap[logistic,softmax1], {FAMILY},,", "--out", str(out), "--jobs", "1"])
    assert rc == 0
    ran = [c["id"] for c in json.loads((out / "report.json").read_text())["claims"]]
    assert ran == ["F.top_gap[logistic,softmax1]", FAMILY]


def test_unknown_id_names_it_and_close_matches(tmp_path, capsys):
    rc = main(["verify", "--claims", "C01,C1x", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    named, _, hint = err[0].partition("; did you mean ")
    assert named.endswith("claims='C1x' is not a known claim id")  # the unknown id alone, not the known C01
    assert 0 < len(hint.split(", ")) <= 3 * 5  # close matches, never the whole registry
    # a family id with a typo in the link: the close match is the right family id, not the whole list
    rc = main(["verify", "--link", "softmax1", "--loss", "logistic", "--claims", "F.vertex[logistic,sofmax1]",
               "--out", str(tmp_path / "r2")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and f"did you mean {FAMILY}" in err
