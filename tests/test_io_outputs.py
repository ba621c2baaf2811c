"""Outputs never replace an input, and an existing file is replaced only when softpolar recognises it as its own.

Reviewer's case: ``simulate --models m.py --init i.json --out m.py`` and ``derive --models m.py --out m.py``
replaced the model definitions with JSON (only ``--init`` was protected, and an existing file was overwritten
whatever it was).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from numerics.io import check_output_file, softpolar_output
from softpolar import main
from theorems import InvalidArgument

matplotlib = pytest.importorskip("matplotlib")  # the figure outputs; skipped where it is missing
matplotlib.use("Agg")

MODELS = '''import sympy as sp
from theorems import Link
x = sp.Symbol("x", real=True)
rmb_sm1 = Link("rmb-sm1", h=sp.exp(x), c=1)
'''
INIT = {"loss": "square", "link": "rmb-sm1", "V": [[0.5, 0.1], [0.2, -0.3]], "a": [0.0, 0.3],
        "target": [1.0, 0.5]}


def cli(capsys, *args):
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("softpolar: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def files(tmp_path):
    m = tmp_path / "m.py"
    m.write_text(MODELS)
    i = tmp_path / "i.json"
    i.write_text(json.dumps(INIT))
    return m, i


def _sim(m, i, *extra):
    return ("simulate", "--models", str(m), "--init", str(i), "--t-end", "1", "--times", "0,1", "--backend",
            "numpy", "--quiet", *extra)


def test_simulate_never_replaces_its_models_file(files, capsys):
    m, i = files
    rc, _, err = cli(capsys, *_sim(m, i, "--out", str(m)))
    assert rc == 2 and "--out=" in one_error_line(err) and "input" in err
    rc, _, err = cli(capsys, *_sim(m, i, "--plot", str(m.with_suffix(".png")), "--out", str(i)))
    assert rc == 2 and "input" in one_error_line(err)
    assert m.read_text() == MODELS and json.loads(i.read_text()) == INIT


def test_derive_never_replaces_its_models_file(files, capsys):
    m, _ = files
    rc, _, err = cli(capsys, "derive", "--models", str(m), "--loss", "square", "--link", "rmb-sm1", "--no-proofs",
                     "--quiet", "--out", str(m))
    assert rc == 2 and "--out=" in one_error_line(err) and "input" in err
    assert m.read_text() == MODELS


@pytest.mark.parametrize("name", ["notes.json", "notes.md", "notes.tex", "plot.png"])
def test_a_file_softpolar_did_not_write_is_refused(files, capsys, name):
    m, i = files
    target = m.parent / name
    target.write_text('{"mine": 1}\n' if name.endswith(".json") else "my own notes\n")
    before = target.read_bytes()
    if name.endswith(".png"):
        rc, _, err = cli(capsys, *_sim(m, i, "--plot", str(target)))
        arg = "--plot="
    elif name == "notes.json":
        rc, _, err = cli(capsys, *_sim(m, i, "--out", str(target)))
        arg = "--out="
    else:
        rc, _, err = cli(capsys, "derive", "--loss", "square", "--no-proofs", "--quiet", "--out", str(target))
        arg = "--out="
    line = one_error_line(err)
    assert rc == 2 and arg in line and str(target) in line and "remove" in line and "another path" in line
    assert target.read_bytes() == before


def test_softpolar_outputs_are_recognised_and_rewritten(files, capsys):
    m, i = files
    out, png = m.parent / "o.json", m.parent / "p.png"
    for _ in range(2):  # the second run replaces the first run's files
        rc, _, err = cli(capsys, *_sim(m, i, "--out", str(out), "--plot", str(png)))
        assert rc == 0, err
    assert json.loads(out.read_text())["softpolar_output"] == "simulate"
    assert softpolar_output(out) and softpolar_output(png)
    for name in ("d.md", "d.tex", "d.json"):
        target = m.parent / name
        for _ in range(2):
            rc, _, err = cli(capsys, "derive", "--loss", "square", "--no-proofs", "--quiet", "--out", str(target))
            assert rc == 0, err
        assert softpolar_output(target), name


def test_recognition_needs_the_marker(tmp_path):
    import matplotlib.pyplot as plt

    fig = plt.figure()
    plain = tmp_path / "plain.png"
    fig.savefig(plain)  # matplotlib's own Software chunk: not softpolar's
    plt.close(fig)
    cases = {"a.json": '{"format": "someone-else"}', "b.json": "[1, 2]", "c.json": '{"format": "softpolar-atlas/1"}',
             "d.md": "# notes\n<!-- Written by someone -->\n", "e.v": "(* Written by softpolar certify --coq *)\n",
             "f.txt": "Written by softpolar, says the user\n"}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    got = {name: softpolar_output(tmp_path / name) is not None for name in [*cases, "plain.png"]}
    assert got == {"a.json": False, "b.json": False, "c.json": True, "d.md": False, "e.v": True, "f.txt": False,
                   "plain.png": False}
    with pytest.raises(InvalidArgument, match="remove the file or choose another path"):
        check_output_file("--out", tmp_path / "a.json")
    assert check_output_file("--out", tmp_path / "c.json") == tmp_path / "c.json"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_derive_pdf_is_recognised_and_a_foreign_pdf_refused(tmp_path, capsys):
    pdf = tmp_path / "d.pdf"
    for _ in range(2):
        rc, _, err = cli(capsys, "derive", "--loss", "square", "--n", "2", "--no-proofs", "--quiet", "--pdf", str(pdf))
        assert rc == 0, err
    assert softpolar_output(pdf)
    foreign = tmp_path / "f.pdf"
    foreign.write_bytes(b"%PDF-1.5\n/Creator (LaTeX)\n%%EOF\n")
    rc, _, err = cli(capsys, "derive", "--loss", "square", "--no-proofs", "--quiet", "--pdf", str(foreign))
    assert rc == 2 and "--pdf=" in one_error_line(err)
    assert Path(foreign).read_bytes().startswith(b"%PDF-1.5\n/Creator (LaTeX)")



def test_certify_never_replaces_its_models_file(files, capsys):
    """certify accepts --models too; its --out protected --init only (--coq needs a .v name, --models a .py)."""
    m, i = files
    before = m.read_text()
    rc, _, err = cli(capsys, "certify", "--models", str(m), "--init", str(i), "--out", str(m))
    assert rc == 2, err
    line = one_error_line(err)
    assert "--out" in line and "input" in line, line
    assert m.read_text() == before
