"""``simulate --out``: the file holds the run, stdout one line naming it, never a second copy of the file
(issue 39: ``--json --out F.json`` printed the whole JSON, V included with --full-json, to stdout as well)."""
import json

import numpy as np

from proofs_check.cli import main

ARGV = ["simulate", "--seed", "1", "--n", "3", "--d", "2", "--loss", "logistic", "--t-end", "10",
        "--backend", "numpy", "--quiet", "--times", "1,10"]


def test_json_out_prints_one_line_not_the_file(tmp_path, capsys):
    dest = tmp_path / "run.json"
    assert main([*ARGV, "--json", "--full-json", "--out", str(dest)]) == 0
    out = capsys.readouterr().out
    data = json.loads(dest.read_text())
    assert out.count("\n") == 1 and out.startswith(f"wrote {dest}: 2 output times to t = 10, numpy / ")
    # the line's leading token is the JSON's argmax, counted from 0 as everywhere
    assert f"token {data['argmax'][-1]} leads" in out and np.shape(data["V"]) == (2, 2, 3)
    # without --json the table is not printed either: the same one line
    dest2 = tmp_path / "run2.json"
    assert main([*ARGV, "--out", str(dest2)]) == 0
    out2 = capsys.readouterr().out
    assert out2.count("\n") == 1 and out2.startswith(f"wrote {dest2}: ") and "argmax" not in out2


def test_json_with_npz_out_still_prints_the_json(tmp_path, capsys):
    # the binary file holds the arrays, the JSON has no file to go to: stdout is the JSON alone (parseable)
    dest = tmp_path / "run.npz"
    assert main([*ARGV, "--json", "--out", str(dest)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["times"] == [1.0, 10.0] and dest.is_file()
    # no --out: the table, as before
    assert main(ARGV) == 0
    assert "argmax" in capsys.readouterr().out
