"""Report writing: atomic replacement, refusal to clobber foreign directories, markdown contents."""
from __future__ import annotations

import json

import numpy as np
import pytest

from proofs_check.report import MD_JSON_LINES, draw, environment, write_report
from proofs_check import Claim, ClaimResult, Context, Control, Figure, Outcome
from theorems import InvalidArgument


def _result(verdict="verified", control="refuted", figure=False):
    claim = Claim(id="C99", title="A test claim", statement=r"x=x", provenance="D", assumptions="none",
                  evidence_kind="property search", check_description="looks", expected="verified",
                  check=lambda ctx: None, control=Control("wrong variant", lambda ctx: None), digest_number=99,
                  group="test")
    figs = (Figure("fig.png", "kappa", "a figure",
                   {"kappa": [1, 2], "H": [2.0, 1.0], "reference": [2.0, 1.0], "log_n": 3.0,
                    "record": [1, 2], "H_hist": np.ones((2, 2))}),) if figure else ()
    cex = {"t": 1.0} if verdict == "refuted" else None
    out = Outcome(verdict, "evidence | with a pipe", {"x": np.float64(1.5), "arr": np.arange(3)}, cex,
                  figures=figs)
    ctl = Outcome(control, "control evidence", counterexample={"t": 2.0} if control == "refuted" else None)
    return ClaimResult(claim, out, ctl, 0.25)


def _env():
    return environment(Context(), ["verify", "--claims", "C99"])


def test_writes_all_files(tmp_path):
    out = tmp_path / "rep"
    data = write_report([_result(figure=True)], out, _env(), 1.0)
    assert sorted(p.name for p in out.iterdir()) == [".softpolar-report.json", "fig.pdf", "fig.png", "report.json",
                                                     "report.md"]
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk == json.loads(json.dumps(data))
    assert on_disk["claims"][0]["outcome"]["details"] == {"x": 1.5, "arr": [0, 1, 2]}
    md = (out / "report.md").read_text()
    assert "evidence \\| with a pipe" in md  # table cell escaped
    assert "derived for this project, not the paper's statement" in md
    assert "![a figure](fig.png)" in md and "(vector: [fig.pdf](fig.pdf))" in md
    assert data["figure_vectors"] == {"fig.png": ["fig.pdf"]}


def test_interrupted_write_leaves_no_partial_report(tmp_path, monkeypatch):
    from proofs_check.report import _report  # the planted interruption goes into the writer's own module

    out = tmp_path / "rep"

    def explode(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(_report, "build_markdown", explode)  # after the figures and report.json
    with pytest.raises(KeyboardInterrupt):
        write_report([_result(figure=True)], out, _env(), 1.0)
    assert list(tmp_path.iterdir()) == []  # neither the report nor a temporary directory


def test_failed_rewrite_keeps_the_previous_report(tmp_path, monkeypatch):
    from proofs_check.report import _figures  # the planted failure goes into the figure module

    out = tmp_path / "rep"
    write_report([_result()], out, _env(), 1.0)
    before = (out / "report.json").read_text()

    def explode(figure, path):
        raise RuntimeError("disk full")
    monkeypatch.setattr(_figures, "draw", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        write_report([_result(figure=True)], out, _env(), 2.0)
    assert (out / "report.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_refuses_to_replace_a_foreign_directory(tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(InvalidArgument, match="no softpolar report"):
        write_report([_result()], foreign, _env(), 1.0)
    assert (foreign / "thesis.tex").read_text() == "precious"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(InvalidArgument, match="not a directory"):
        write_report([_result()], a_file, _env(), 1.0)


def test_failed_control_is_flagged(tmp_path):
    out = tmp_path / "rep"
    data = write_report([_result(control="verified")], out, _env(), 1.0)
    assert data["summary"]["all_passed"] is False
    assert data["claims"][0]["negative_control"]["failed_as_required"] is False
    assert "DID NOT FAIL" in (out / "report.md").read_text()


def test_image_figures_are_copied_and_must_be_png(tmp_path):
    src = tmp_path / "drawn.png"
    draw(_result(figure=True).outcome.figures[0], src)  # any real PNG
    fig = Figure("copy.png", "image", "a copied figure", {"source": str(src)})
    res = _result()
    res = ClaimResult(res.claim, Outcome("verified", "e", figures=(fig,)), res.control, 0.1)
    out = tmp_path / "rep"
    write_report([res], out, _env(), 1.0)
    assert (out / "copy.png").read_bytes() == src.read_bytes()
    (tmp_path / "fake.png").write_text("not a png")
    bad = Figure("bad.png", "image", "x", {"source": str(tmp_path / "fake.png")})
    res = ClaimResult(res.claim, Outcome("verified", "e", figures=(bad,)), res.control, 0.1)
    with pytest.raises(ValueError, match="not a PNG"):
        write_report([res], tmp_path / "rep2", _env(), 1.0)
    assert not (tmp_path / "rep2").exists()


def test_report_md_leads_with_the_summary_and_folds_the_evidence(tmp_path):
    """The result line and the table come before any claim section; evidence, numbers and the control sit in
    <details>; a block of numbers longer than MD_JSON_LINES is left to report.json (pointed at)."""
    big = _result()
    long_numbers = {f"row{k}": [float(k)] * 3 for k in range(MD_JSON_LINES + 10)}
    big = ClaimResult(big.claim, Outcome("verified", "long evidence " * 40, long_numbers), big.control, 0.1)
    fail = _result(control="verified")
    out = tmp_path / "rep"
    write_report([big, fail], out, _env(), 1.0)
    md = (out / "report.md").read_text()
    head = md.split("\n## ", 1)[0]
    assert "**1/2 claims got their expected verdict" in head and "SOME FAILED" in head
    assert "- failed: [C99](#c99)" in head and "| id | title |" in head
    assert md.count("<details>") == md.count("</details>") == 3  # two claims and the environment
    section = md.split("## C99", 1)[1]
    assert section.index("**verified** (expected verified)") < section.index("<details>")
    assert section.index("<details>") < section.index("long evidence") < section.index("</details>")
    assert "lines of numbers: `report.json`, claims[0].outcome.details" in md and "row49" not in md
    table_row = next(x for x in head.splitlines() if x.startswith("| [C99]"))
    assert len(table_row) < 400  # the table keeps a short evidence cell
    assert "**M** missing" in md  # the full provenance legend


def test_environment_reads_versions_without_importing_torch():
    """The report's versions are the modules' own; a verify process that never imported torch (the --jobs parent)
    does not import it to read the version (1.2 s after the last claim)."""
    import subprocess
    import sys

    code = ("import sys\nfrom proofs_check.claim import Context\nfrom proofs_check.report import environment\n"
            "v = environment(Context(), [])['versions']\nassert 'torch' not in sys.modules, 'torch imported'\n"
            "import matplotlib, numpy, scipy, sympy, mpmath, torch\n"
            "for m in (matplotlib, numpy, scipy, sympy, mpmath, torch):\n"
            "    assert v[m.__name__] == str(m.__version__), (m.__name__, v[m.__name__], m.__version__)\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-800:]
