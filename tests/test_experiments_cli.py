"""``softpolar experiment`` end to end (tiny grid), error contract, and the layering rules."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "softpolar", "experiment", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def _main(*args):
    """In-process CLI (same code path as the console script, without a process start-up)."""
    from softpolar import main

    return main(["experiment", *args])


def test_tiny_induction_grid_end_to_end_and_resume(tmp_path, capsys):
    out = tmp_path / "ind"
    proc = _cli("induction", "--grid", "tiny", "--scheduler", "inline", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["n_runs"] == 4 and {r["attention"] for r in summary["table"]} == {
        "softmax", "sigmoid-unnorm", "softmax1", "gated-softmax"}
    assert (out / "summary.json").is_file() and (out / "table.md").is_file()
    assert (out / "sink_heads.png").is_file() and (out / "attention_maps.png").is_file()
    assert (out / "attention_maps_sinks.png").is_file()  # softmax next to softmax1 and gated softmax
    assert len(list((out / "runs").glob("*.json"))) == 4
    assert "[induction-tiny]" in proc.stderr  # the progress bar
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    assert _main("induction", "--grid", "tiny", "--scheduler", "inline", "--out", str(out),
                 "--no-figures", "--no-progress") == 0
    assert "% sink heads" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()} == before, \
        "finished runs are not rerun"


def test_tiny_classification_grid_table(tmp_path, capsys):
    code = _main("classification", "--grid", "tiny", "--scheduler", "inline", "--out",
                 str(tmp_path / "c"), "--no-progress")
    assert code == 0
    assert "flip rate" in capsys.readouterr().out
    assert (tmp_path / "c" / "flip_rates.png").is_file()


@pytest.mark.parametrize("args, needle", [
    (("induction", "--device", "cuda:7"), "device"),
    (("induction", "--device", "banana"), "device"),
    (("induction", "--workers", "0"), "workers"),
    (("induction", "--scheduler", "cluster"), "scheduler"),
    (("translation",), "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path, capsys):
    assert _main(*args, "--out", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert err.startswith("softpolar: error:") and err.count("\n") == 1
    assert needle in err
    assert not (tmp_path / "o").exists()


def _modules_after(code):
    out = subprocess.run([sys.executable, "-c", f"import sys; {code}; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split())


def test_layering():
    # the CLI builds every subcommand parser at start-up: that must not import torch
    mods = _modules_after("import softpolar.experiments._cmd, softpolar.experiments.claims, softpolar.experiments")
    assert "torch" not in mods and "distributed" not in mods
    # lower layers never import the top floor by themselves: its claims and subcommands come in through the
    # entry-point groups softpolar.claims / softpolar.commands only (with those empty, nothing of it loads)
    mods = _modules_after("import theorems, numerics, proofs_check, proofs_check.cli._cli, "
                          "proofs_check.catalog as r; r.plugin_claim_modules = lambda: []; proofs_check.registry()")
    assert not any(m == "softpolar" or m.startswith("softpolar.") for m in mods)
    for layer in ("theorems", "numerics", "proofs_check"):
        for path in (ROOT / layer).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "import softpolar" not in text and "from softpolar" not in text, path
