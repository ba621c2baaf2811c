"""``softpolar derive``: output formats, the standalone LaTeX document, --check, bad input."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from proofs_check import derivation as _derivation
from proofs_check.cli import compile_pdf, overfull_boxes, pdflatex_error, run_pdflatex
from softpolar import main
from proofs_check.report import to_latex
from theorems import LINKS, LOSSES, IdentityResult

#: Macros a plain ``article`` with amsmath/amssymb knows; the rendered documents may use only these.
KNOWN_MACROS = set("""
documentclass usepackage allowdisplaybreaks setlength parindent title author date begin end maketitle
section emph texttt textbf small hline quad qquad frac tfrac dfrac textstyle left right Bigl Bigr bigl bigr
dot ddot mathcal mathbb mathbf mathrm operatorname varphi sigma beta gamma delta rho tau ell nabla partial
top langle rangle sum log cosh sinh exp dots cdot text Longrightarrow theta max min delta alpha in times
raggedright emergencystretch succeq le ge ne lambda
""".split()) | {"textbackslash", "sign"}


def check_latex_structure(doc: str) -> None:
    """Balanced braces, matched environments and \\left/\\right, known macros only."""
    body = re.sub(r"\\[{}%&#$_]", "", doc)  # escaped characters are not delimiters
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a closing brace without an opening one"
    assert depth == 0, f"{depth} unclosed brace(s)"
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([^}]*)\}", doc):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env, f"\\end{{{env}}} does not match"
    assert not stack, f"unclosed environments {stack}"
    assert len(re.findall(r"\\left\b", doc)) == len(re.findall(r"\\right\b", doc))
    unknown = set(re.findall(r"\\([A-Za-z]+)", doc)) - KNOWN_MACROS
    assert not unknown, f"unknown macros {sorted(unknown)}"


def run_cli(capsys, *argv):
    rc = main(["derive", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_has_every_applicable_identity_proved(capsys):
    rc, out, _ = run_cli(capsys, "--loss", "logistic", "--n", "2", "--d", "1", "--format", "json")
    assert rc == 0
    der = json.loads(out)
    assert (der["loss"], der["link"], der["n"], der["d"]) == ("logistic", "softmax", 2, 1)
    keys = [s["key"] for s in der["sections"]]
    for ident in ("flow.structured", "jacobian.softmax", "replicator", "sum_a.conserved", "balance.per_token",
                  "logistic.orthogonal_fixed", "two_token.first_integral", "output.dynamics", "entropy.rate",
                  "reduced.logistic", "clock.logistic"):
        assert ident in keys, ident
    for sec in der["sections"]:
        if sec["key"]:
            assert sec["status"] == "proved", sec
            assert sec["negative"].startswith("disproved"), sec
            assert sec["provenance"]


def test_markdown_default_carries_provenance_and_the_papers_sign(capsys):
    rc, out, _ = run_cli(capsys, "--loss", "logistic", "--n", "3", "--d", "2", "--no-proofs")
    assert rc == 0
    assert "## Effective output dynamics" in out and "[A/D]" in out
    assert r"$-\gamma$" in out and r"$+\gamma$" in out  # the sign note of Eqs. (6)/(7)
    assert r"\dot a_{3}" in out and r"\dot V_{2,3}" in out


def test_other_links_print_their_jacobian(capsys):
    rc, out, _ = run_cli(capsys, "--loss", "square", "--link", "sigmoid", "--n", "2", "--d", "2", "--no-proofs")
    assert rc == 0
    assert r"\sigma_{\mathrm{sig}}\left(a_{1}\right)^{2}" in out  # a power of a named function renders
    assert "Structured Jacobian" in out and "output dynamics" not in out.lower()


def test_latex_document_is_standalone_and_well_formed(capsys, tmp_path):
    out_file = tmp_path / "eqs.tex"
    rc, out, err = run_cli(capsys, "--loss", "kl", "--n", "2", "--d", "2", "--out", str(out_file))
    assert rc == 0 and out == ""
    doc = out_file.read_text()
    assert doc.startswith(r"\documentclass") and r"\usepackage{amsmath,amssymb}" in doc
    # the last line after \end{document} is the comment that marks the file as softpolar's (TeX ignores it)
    assert doc.rstrip().endswith("\\end{document}\n% Written by softpolar derive")
    check_latex_structure(doc)
    assert sorted(os.listdir(tmp_path)) == ["eqs.tex"], "no temporary file is left behind"
    umask = os.umask(0)
    os.umask(umask)
    assert out_file.stat().st_mode & 0o777 == 0o666 & ~umask, "mkstemp's 0600 is not kept"


@pytest.mark.parametrize("broken", [r"\begin{align*} x \end{aligned}", r"{ x", r"\quadV", r"\left( x"])
def test_latex_checker_has_power(broken):
    with pytest.raises(AssertionError):
        check_latex_structure(r"\documentclass{article}\begin{document}" + broken + r"\end{document}")


#: pdflatex is installed by .ci/run (texlive-latex-base); under CI a missing pdflatex fails, elsewhere it skips
needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None and not os.environ.get("CI"),
                                    reason="pdflatex not installed (apt-get install texlive-latex-base)")


@needs_pdflatex
def test_latex_compiles_with_pdflatex(capsys, tmp_path):
    out_file = tmp_path / "eqs.tex"
    assert run_cli(capsys, "--loss", "square", "--n", "3", "--d", "2", "--out", str(out_file))[0] == 0
    res = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", out_file.name],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-2000:]


def _assert_fits_the_page(loss, link, n, d, tmp_path):
    der = _derivation.build_derivation(loss, link, n, d, prove=False)
    data, pages, log = run_pdflatex(to_latex(der))
    assert pages >= 1 and data[:5] == b"%PDF-"
    assert overfull_boxes(log) == [], f"{loss} x {link} at n={n}, d={d} runs into the margin"
    assert os.listdir(tmp_path) == []


@needs_pdflatex
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("link", sorted(LINKS))
def test_every_loss_and_link_compiles_without_overfull_boxes(loss, link, tmp_path):
    """``derive --pdf`` at the default sizes (equations as printed; proofs are tested above): the pdflatex
    log has no "Overfull" line, so no statement, sum, matrix, title or note runs off the page."""
    _assert_fits_the_page(loss, link, 3, 2, tmp_path)


@pytest.mark.slow
@needs_pdflatex
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("link", sorted(LINKS))
@pytest.mark.parametrize("n, d", [(2, 1), (8, 4)])
def test_every_loss_and_link_fits_the_page_at_the_smallest_and_largest_sizes(loss, link, n, d, tmp_path):
    _assert_fits_the_page(loss, link, n, d, tmp_path)


@needs_pdflatex
def test_overfull_check_has_power():
    """Negative control of the page-width test: the derivation's own widest sum printed unbroken on one
    line is reported as overfull; broken by ``eq_lines`` it is not."""
    import sympy as sp
    from proofs_check.report import tex_width
    x = sp.symbols("x_1:41", real=True)
    expr = sp.Add(*[sp.Symbol("V", real=True) * xi for xi in x])
    head = r"\documentclass[10pt]{article}\usepackage{amsmath}\begin{document}\begin{align*}"
    tail = r"\end{align*}\end{document}"
    one_line = head + r"y &= " + _derivation.to_latex(expr) + tail
    broken = head + "\\\\\n".join(_derivation.eq_lines("y", expr)) + tail
    assert overfull_boxes(run_pdflatex(one_line)[2])
    assert overfull_boxes(run_pdflatex(broken)[2]) == []
    assert len(_derivation.eq_lines("y", expr)) > 1 and tex_width(_derivation.to_latex(expr)) > 345


@needs_pdflatex
def test_a_missing_latex_package_is_named(tmp_path):
    doc = "\\documentclass{article}\n\\usepackage{softpolar-no-such-package}\n\\begin{document}x\\end{document}\n"
    with pytest.raises(RuntimeError, match=r"LaTeX file softpolar-no-such-package\.sty is not installed"):
        compile_pdf(doc, str(tmp_path / "bad.pdf"))
    assert not (tmp_path / "bad.pdf").exists()


def test_pdflatex_error_lines():
    log = "(article.cls)\n! Undefined control sequence.\n<recently read> \\foo\n\nl.3 $\\foo\n    x$\n"
    assert pdflatex_error(log) == "Undefined control sequence. (at l.3 $\\foo)"


@needs_pdflatex
def test_compile_pdf_reports_a_latex_error(tmp_path):
    """Negative control of the compile check: a document with an undefined macro fails, loudly."""
    doc = "\\documentclass{article}\n\\begin{document}\n$\\undefinedmacro x$\n\\end{document}\n"
    with pytest.raises(RuntimeError, match=r"pdflatex failed \(exit 1\): Undefined control sequence"):
        compile_pdf(doc, str(tmp_path / "bad.pdf"))
    assert not (tmp_path / "bad.pdf").exists()


@needs_pdflatex
def test_pdf_option_writes_the_document(capsys, tmp_path):
    pdf = tmp_path / "eqs.pdf"
    rc, out, err = run_cli(capsys, "--loss", "logistic", "--n", "2", "--d", "1", "--no-proofs", "--pdf", str(pdf))
    assert rc == 0 and out == "" and "page" in err
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_pdf_option_without_pdflatex_is_exit_2(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    rc, out, err = run_cli(capsys, "--pdf", str(tmp_path / "eqs.pdf"))
    assert rc == 2 and err.count("\n") == 1 and "pdflatex" in err and "texlive-latex-base" in err
    assert not (tmp_path / "eqs.pdf").exists()


def _parse_back(tex):
    """SymPy's LaTeX parser (lark backend) on ``tex``; None where the parser does not read it."""
    from sympy.parsing.latex import parse_latex
    import sympy as sp
    try:
        out = parse_latex(tex, backend="lark")
    except Exception:  # any parser failure means "not readable", counted below
        return None
    return out if isinstance(out, sp.Expr) else None  # an ambiguous parse comes back as a lark Tree


def _same(parsed, expr, rng) -> bool:
    """``parsed`` (plain symbols named as printed) equals ``expr`` at 3 random points."""
    import sympy as sp
    norm = lambda name: name.replace("\\", "").replace("varphi", "phi")
    by_name = {norm(x.name): x for x in expr.free_symbols}
    sub = {}
    for x in parsed.free_symbols:
        if x.name == "e":
            sub[x] = sp.E
        elif x.name in by_name:
            sub[x] = by_name[x.name]
        else:
            return False
    lhs = parsed.xreplace(sub)
    for _ in range(3):
        point = {x: sp.Rational(int(rng.integers(1, 90)), 37) for x in expr.free_symbols}
        a, b = complex(sp.N(lhs.xreplace(point), 30)), complex(sp.N(expr.xreplace(point), 30))
        if abs(a - b) > 1e-20 * max(1.0, abs(b)):
            return False
    return True


def test_latex_round_trips_through_sympys_parser(monkeypatch):
    """Every printed expression that SymPy's LaTeX parser reads parses back to the derived expression.

    Negative control: the same parsed text compared with a wrong expression (the derived one plus
    one of its symbols) is caught.
    """
    pytest.importorskip("lark")
    import numpy as np
    import sympy as sp
    log = []
    monkeypatch.setattr(_derivation, "LATEX_LOG", log)
    for loss, link in (("logistic", "softmax"), ("kl", "sigmoid")):
        _derivation.build_derivation(loss, link, 2, 2, prove=False)
    rng = np.random.default_rng(0)
    read = 0
    for tex, expr in log:
        if isinstance(expr, sp.MatrixBase):
            continue
        parsed = _parse_back(tex)
        if parsed is None:
            continue
        read += 1
        assert _same(parsed, expr, rng), (tex, expr, parsed)
        wrong = expr + sorted(expr.free_symbols, key=str)[0] if expr.free_symbols else expr + 1
        assert not _same(parsed, wrong, rng), tex
    assert read >= 10, f"only {read} of {len(log)} printed expressions were read back"


def test_check_subset_json(capsys, tmp_path):
    out_file = tmp_path / "check.json"
    rc, _, _ = run_cli(capsys, "--check", "--only", "jacobian.softmax", "--only", "two_token.first_integral",
                       "--jobs", "1", "--out", str(out_file))
    assert rc == 0
    data = json.loads(out_file.read_text())
    assert data["summary"]["passed"] and data["summary"]["all_controls_disproved"]
    ids = {s["id"]: s for s in data["identities"]}
    assert ids["jacobian.softmax"]["n_range"] == "2-6" and ids["jacobian.softmax"]["generic"] == "proved"
    assert ids["two_token.first_integral"]["n_range"] == "2"


def test_check_table_latex_is_well_formed(capsys):
    rc, out, _ = run_cli(capsys, "--check", "--only", "jacobian.softmax", "--jobs", "1", "--format", "latex")
    assert rc == 0 and out.startswith(r"\documentclass")
    check_latex_structure(out)


def test_check_table_markdown(capsys):
    rc, out, _ = run_cli(capsys, "--check", "--only", "sum_a.conserved", "--jobs", "1")
    assert rc == 0
    assert "| sum_a.conserved" in out and "disproved" in out and "all hold" in out


def test_check_exits_1_when_an_identity_fails(capsys, monkeypatch):
    from proofs_check.cli import _cmd_derive  # the planted bug below goes into the command's own module

    bad = IdentityResult("flow.structured", 2, (1,), "disproved", "spot-check", 0.0, "disproved", "spot-check",
                         "counterexample", "", "A/D", 1)
    monkeypatch.setattr(_cmd_derive, "run_identities", lambda *a, **k: [bad])
    rc, out, _ = run_cli(capsys, "--check")
    assert rc == 1 and "SOME FAIL" in out


@pytest.mark.slow
def test_full_check_passes(capsys):
    rc, out, _ = run_cli(capsys, "--check", "--format", "json")
    assert rc == 0
    assert json.loads(out)["summary"]["passed"]


@pytest.mark.parametrize("argv, needle", [
    (["--loss", "hinge"], "loss='hinge'"),
    (["--link", "tanh"], "link='tanh'"),
    (["--n", "1"], "n=1"),
    (["--n", "99"], "n=99"),
    (["--d", "0"], "d=0"),
    (["--n", "two"], "--n"),
    (["--format", "pdf"], "--format"),
    (["--jobs", "0", "--check"], "jobs=0"),
    (["--check", "--only", "nope"], "only='nope'"),
    (["--out", "/no/such/folder/eqs.tex"], "out="),
    (["--bogus"], "--bogus"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    rc, out, err = run_cli(capsys, *argv)
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("softpolar: error:") and needle in err
    assert "Traceback" not in err


def test_python_m_proofs_check_same_contract():
    res = subprocess.run([sys.executable, "-m", "softpolar", "derive", "--loss", "hinge"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "loss='hinge'" in lines[0] and "'logistic'" in lines[0]


def test_check_with_a_link_proves_the_identities_under_that_link(capsys):
    # --check --link K: the identities stated for K (or not involving the link) are re-proven under K, the
    # others are named as not stated for it (before, --link was ignored and softmax's table was printed)
    rc, out, _ = run_cli(capsys, "--check", "--link", "softmax1", "--only", "flow.structured", "--only",
                         "loss.gradient", "--only", "replicator", "--jobs", "1", "--format", "json", "--quiet")
    assert rc == 0
    data = json.loads(out)
    assert data["summary"]["scope"] == {"loss": None, "link": "softmax1"}
    assert data["summary"]["not_applicable"] == {"replicator": "stated for links with the definition of softmax only"}
    rows = {(r["id"], r["n"]): r for r in data["rows"]}
    assert {i for i, _ in rows} == {"flow.structured", "loss.gradient"}
    assert all(r["passed"] for r in data["rows"])
    from theorems import IDENTITIES
    flow = IDENTITIES["flow.structured"]
    for n in range(2, 7):  # the row combines exactly the softmax1 cases (fewer than every link's)
        mine = flow.cases(n, link="softmax1")
        assert mine and {c.link for c in mine} == {"softmax1"}
        assert rows[("flow.structured", n)]["cases"] == len(mine) < len(flow.cases(n))
    # the link-free identity runs under its own link, whatever link is asked
    assert {c.link for c in IDENTITIES["loss.gradient"].cases(2, link="softmax1")} == {"softmax"}


def test_check_with_a_loss_no_identity_is_stated_for_is_exit_2(capsys):
    rc, out, err = run_cli(capsys, "--check", "--loss", "logistic", "--only", "square.rank_one", "--quiet")
    assert rc == 2 and out == ""
    assert "--loss logistic" in err and "no identity of --only" in err


def test_model_section_tag_names_a_user_link():
    """issue 39: derive for a user link headed its model section [P/C]; the user's tag U now shows, and a
    built-in model keeps [P/C] (the control)."""
    import sympy as sp

    import softpolar
    x = sp.symbols("x", real=True)
    link = softpolar.Link("softmax2-derive-tag", h=sp.exp(x), c=2)
    softpolar.register(link)
    user = softpolar.derive(loss="logistic", link="softmax2-derive-tag", n=2, prove=False)
    builtin = softpolar.derive(loss="logistic", link="softmax", n=2, prove=False)
    tag = lambda d: next(s.provenance for s in d.sections if s.title == "Model")
    assert tag(user) == "P/C/U" and tag(builtin) == "P/C"
    note = lambda d: next(s.note for s in d.sections if s.key == "loss.gradient")
    assert "Square loss" not in note(user) and "Square loss" not in note(builtin)
    assert "Square loss" in note(softpolar.derive(loss="square", link="softmax", n=2, prove=False))
