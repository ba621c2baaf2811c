"""Every file in examples/ is accepted by every command whose docs point at it (issue 39).

The commands are read from the docs and README (each ``softpolar ...`` line naming ``examples/``), and each
JSON initial condition is also run through ``simulate --init`` (the input format cli.md documents for both);
``verify`` lines run one claim (``C01``) where they can, to stay fast: what is tested is that the file
is accepted.
"""
import json
import re
import shlex
from pathlib import Path

import pytest

from proofs_check.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_CMD = re.compile(r"(?:\.venv/bin/)?softpolar ((?:[^`\n\\]|\\\n)*examples/(?:[^`\n\\]|\\\n)*)")


def _documented():
    seen = {}
    for page in PAGES:
        if not page.is_file():
            continue
        for m in _CMD.finditer(page.read_text(encoding="utf-8")):
            line = m.group(1).replace("\\\n", " ").split("#")[0].strip()
            seen.setdefault(line, page.name)
    py = EXAMPLES / "sink_links.py"
    if py.is_file():  # the commands its own docstring documents
        for m in _CMD.finditer(py.read_text(encoding="utf-8")):
            seen.setdefault(m.group(1).replace("\\\n", " ").strip(), py.name)
    # prose such as "softpolar --models examples/sink_links.py ..." is no command line
    return sorted((line, page) for line, page in seen.items() if re.match(r"[a-z]+ ", line) and "..." not in line)


DOCUMENTED = _documented()


def _run(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SOFTPOLAR_PROGRESS", "off")
    out = []
    for i, tok in enumerate(argv):  # outputs go to the test's folder, never into the checkout
        if i and argv[i - 1] == "--out":
            tok = str(tmp_path / Path(tok).name)
        elif tok.endswith(".json") and not tok.startswith("examples/") and i and argv[i - 1] == "--check":
            tok = str(tmp_path / Path(tok).name)
        out.append(tok)
    rc = main(out)
    return rc, capsys.readouterr()


def test_docs_name_example_commands():
    if not (ROOT / "README.md").is_file():
        pytest.skip("run from outside the checkout (the wheel stage copies tests/ and examples/, not the docs)")
    assert DOCUMENTED, "no documented command names a file in examples/"
    named = {f for line, _ in DOCUMENTED for f in re.findall(r"examples/[\w.]+", line)}
    assert {"examples/certify_init.json", "examples/sink_links.py"} <= named


@pytest.mark.parametrize("line,page", [
    pytest.param(line, page, marks=[pytest.mark.slow] if line.startswith("verify") and "--link" in line else [])
    for line, page in DOCUMENTED], ids=[line[:60] for line, _ in DOCUMENTED])
def test_documented_example_command_runs(line, page, tmp_path, monkeypatch, capsys):
    argv = shlex.split(line)
    for f in re.findall(r"examples/[\w.]+", line):
        assert (ROOT / f).is_file(), f"{page}: {f} does not exist"
    if argv[0] == "verify":  # one claim where the line allows it: the file's acceptance is what is tested
        # (a family claim's id, F.vertex[logistic,softmax2], holds a comma that --claims splits on: the
        # line with --link runs its four family claims, in the slow set)
        argv += ([] if "--link" in argv else ["--claims", "C01"]) + ["--out", str(tmp_path / "report")]
    if argv[0] == "simulate" and "--quiet" not in argv:
        argv.append("--quiet")
    rc, cap = _run(argv, tmp_path, monkeypatch, capsys)
    assert rc == 0, f"{page}: softpolar {line} exited {rc}: {cap.err[-500:]}"


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_example_init_accepted_by_simulate_and_certify(name, tmp_path, monkeypatch, capsys):
    path = f"examples/{name}"
    assert "comment" in json.loads((EXAMPLES / name).read_text()), "the example documents itself"
    rc, cap = _run(["simulate", "--init", path, "--t-end", "10", "--backend", "numpy", "--quiet", "--json"],
                   tmp_path, monkeypatch, capsys)
    assert rc == 0, cap.err
    assert json.loads(cap.out)["problem"]["loss"] == "logistic"
    rc, cap = _run(["certify", "--init", path, "--out", "cert.json"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and "certified" in cap.out, cap.err


def test_init_comment_must_be_text():
    """The negative control: a comment that is not a string is refused with the key named."""
    from numerics import InvalidArgument, Problem
    data = json.loads((EXAMPLES / "certify_init.json").read_text())
    assert Problem.from_json(data).n == 3
    with pytest.raises(InvalidArgument, match="comment"):
        Problem.from_json({**data, "comment": 3})
    with pytest.raises(InvalidArgument, match="unknown keys"):
        Problem.from_json({**data, "remark": "x"})
