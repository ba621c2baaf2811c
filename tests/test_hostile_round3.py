"""Hostile input, round three (issue 38): each finding is a test that failed on the code before the fix.

A traceback becomes one line (``softpolar: error: ...``, exit 2) or, for a journal, a recomputation; inputs that
were accepted silently are refused; symbolic setup has a time bound the user controls.
"""
from __future__ import annotations

import json
import shutil
import time

import pytest
import sympy as sp

from softpolar._cli import main

x = sp.Symbol("x", real=True)


def cli(capsys, *args):
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_error_line(err: str, prefix: str = "softpolar: error: ") -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err
    return lines[0]


def models(tmp_path, body: str, name="m.py"):
    path = tmp_path / name
    path.write_text("import sympy as sp\nfrom softpolar import Link, Loss\nx = sp.Symbol('x', real=True)\n" + body)
    return str(path)


SIM = ("--seed", "0", "--n", "3", "--d", "2", "--loss", "logistic", "--t-end", "10")


# ---- tracebacks -> one line ------------------------------------------------------------------------------

@pytest.mark.parametrize("definition,needle", [
    ("c=10**400", "c = about 10**400"),                  # was OverflowError in the numpy RHS
    ("c=-10**400", "c = -about 10**400"),
    ("c=sp.Rational(1, 10**400)", "c = about 10**-400"),   # float64 would read 0: softmax, silently
    ("c=sp.Float('1e-330')", "float64's range"),
])
def test_a_normalizer_constant_beyond_float64_is_one_line(tmp_path, capsys, definition, needle):
    path = models(tmp_path, f"huge = Link('huge', h=sp.exp(x), {definition})\n")
    for backend in ("numpy", "mpmath"):
        rc, _, err = cli(capsys, "simulate", "--models", path, "--link", "huge", *SIM, "--backend", backend)
        line = one_error_line(err)
        assert rc == 2 and needle in line and "link 'huge'" in line, line


def test_an_overflowing_constant_inside_h_is_one_line(tmp_path, capsys):
    # the same traceback from a constant of h itself: named as the link's, at the start, for every backend
    path = models(tmp_path, "big = Link('big', h=10**400 * sp.exp(x))\n")
    rc, _, err = cli(capsys, "simulate", "--models", path, "--link", "big", *SIM, "--backend", "numpy")
    assert rc == 2 and "does not fit float64" in one_error_line(err)


def test_normal_constants_still_work(tmp_path, capsys):
    # the control: the bound is float64's normal range, not a tighter one
    from theorems import Link

    for c in (sp.Rational(1, 10**300), 10**300, 1, sp.Float("1e-100")):
        assert Link(f"ok{abs(hash(c))}", h=sp.exp(x), c=c).c == sp.Rational(c)
    path = models(tmp_path, "fine = Link('fine', h=sp.exp(x), c=10**300)\n")
    rc, out, err = cli(capsys, "simulate", "--models", path, "--link", "fine", *SIM, "--backend", "numpy")
    assert rc == 0 and "Traceback" not in err, err


# ---- atlas journal: a non-finite record is recomputed, as the docs say -------------------------------------

@pytest.fixture(scope="module")
def atlas_run(tmp_path_factory):
    from softpolar.atlas._engine import run_atlas

    out = tmp_path_factory.mktemp("atlas3") / "c3"
    cert = run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
                     progress=False, draw=False)
    return out, cert


@pytest.mark.parametrize("poison", ["NaN", "Infinity", "-Infinity", "1e999", "[NaN]"])
def test_a_non_finite_journal_record_is_recomputed(atlas_run, tmp_path, capsys, poison):
    out, cert = atlas_run
    copy = tmp_path / "c3"
    shutil.copytree(out, copy)
    lines = (copy / "journal.jsonl").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if '"certified"' in ln)
    rec = json.loads(lines[k])
    lines[k] = json.dumps({**rec, "winner": "__POISON__"}).replace('"__POISON__"', poison)
    (copy / "journal.jsonl").write_text("\n".join(lines) + "\n")
    rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(copy), "--start-width", "1/2", "--min-width",
                     "1/4", "--map-size", "32", "--scheduler", "inline", "--no-progress")
    assert rc == 0 and "Traceback" not in err, err
    again = json.loads((copy / "atlas.json").read_text())
    assert again["area"] == cert["area"] and again["float64"]["disagreements"] == 0
    assert "NaN" not in (copy / "journal.jsonl").read_text().splitlines()[-1]


def test_a_journal_record_is_read_within_a_bound(atlas_run, tmp_path):
    # the control of the poison test: the journal reader keeps honest records (nothing is recomputed)
    from softpolar.atlas._engine import _read_journal, load_slice

    out, _ = atlas_run
    marker = json.loads((out / "atlas-run.json").read_text())
    t0 = time.perf_counter()
    done, dropped = _read_journal(out / "journal.jsonl", load_slice("conflict3").spec, marker["engine"])
    assert dropped == 0 and len(done) == len((out / "journal.jsonl").read_text().splitlines())
    assert time.perf_counter() - t0 < 10
