"""`softpolar simulate` end to end: JSON on stdout, --out, --plot, exit codes."""
from __future__ import annotations

import json
import subprocess
import sys

import mpmath
import pytest

from softpolar import main

KEYS = ("a", "weights", "loss", "entropy", "max_weight", "argmax", "V")


def run_inprocess(capsys, *args):
    """The same CLI code path without a subprocess (a real process is tested above)."""
    rc = main(["simulate", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def run(*args, check_rc=None):
    out = subprocess.run([sys.executable, "-m", "softpolar", "simulate", *args],
                         capture_output=True, text=True, timeout=600)
    if check_rc is not None:
        assert out.returncode == check_rc, out.stderr
    return out


def test_json_lists_are_aligned_with_times_numpy():
    out = run("--seed", "123", "--d", "8", "--n", "8", "--loss", "logistic", "--t-end", "1e4",
              "--times", "0,10,1e4", "--backend", "numpy", "--json", "--full-json", check_rc=0)
    data = json.loads(out.stdout)
    assert data["times"] == [0.0, 10.0, 1e4]
    for key in KEYS:
        assert len(data[key]) == 3, key
    assert len(data["V"][0]) == 8 and len(data["V"][0][0]) == 8
    assert data["argmax"][-1] == 6 and data["meta"]["backend"] == "numpy"
    assert data["meta"]["argv"][:2] == ["softpolar", "simulate"] and "progress" not in out.stdout
    assert "[" in out.stderr  # the progress bar went to stderr


def test_mpmath_gives_decimal_strings_with_dps_digits(tmp_path):
    init = tmp_path / "init.json"
    init.write_text(json.dumps({"loss": "logistic", "V": [[0.1, -0.2, 0.05]], "a": [0, 0, 0],
                                "target": [1.0]}))
    dest = tmp_path / "traj.json"
    out = run("--init", str(init), "--t-end", "1e20", "--times", "1e20", "--dps", "25", "--json",
              "--quiet", "--out", str(dest), check_rc=0)
    data = json.loads(dest.read_text())  # with --out, stdout is one line naming the file (issue 39)
    assert out.stdout.count("\n") == 1 and out.stdout.startswith(f"wrote {dest}: 1 output times")
    assert data["meta"]["dps"] == 25 and data["meta"]["clock"] == "tau"
    x = data["weights"][0][2]
    assert isinstance(x, str) and len(x.replace("0.", "").lstrip("0")) >= 20
    with mpmath.workdps(25):
        assert abs(mpmath.mpf(data["times"][0]) - mpmath.mpf("1e20")) == 0
    assert out.stderr == ""


def test_plot_writes_a_png(tmp_path, capsys):
    png = tmp_path / "w.png"
    rc, _, _ = run_inprocess(capsys, "--preset", "logistic-toy", "--t-end", "100", "--backend",
                             "numpy", "--plot", str(png), "--quiet")
    assert rc == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, message", [
    (("--seed", "1", "--d", "2", "--loss", "logistic", "--t-end", "1"), "--n"),
    (("--seed", "1", "--d", "2", "--n", "2", "--t-end", "1"), "--loss"),
    (("--seed", "1", "--d", "2", "--n", "2", "--loss", "hinge", "--t-end", "1"), "loss"),
    (("--seed", "1", "--d", "2", "--n", "2", "--loss", "square", "--t-end", "-3"), "t_end"),
    (("--seed", "1", "--d", "2", "--n", "2", "--loss", "square", "--t-end", "1", "--times", "1,,2"), "times"),
    (("--seed", "1", "--d", "2", "--n", "2", "--loss", "square", "--t-end", "1", "--clock", "tau"), "clock"),
    (("--seed", "1", "--d", "2", "--n", "2", "--loss", "square", "--t-end", "1", "--backend", "jax"), "backend"),
    (("--init", "/no/such/file.json", "--t-end", "1"), "cannot be read"),
    (("--init", "x.json", "--seed", "1", "--t-end", "1"), "not allowed with"),
    (("--preset", "logistic-toy", "--t-end", "1", "--plot", "out.pdf"), "png"),
    (("--preset", "logistic-toy", "--t-end", "1", "--out", "/no/such/dir/x.json"), "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    rc, _, err = run_inprocess(capsys, *args)
    lines = err.strip().splitlines()
    assert rc == 2
    assert len(lines) == 1 and lines[0].startswith("softpolar: error:") and message in lines[0]


def test_bad_input_in_a_real_process():
    out = run("--seed", "1", "--d", "2", "--loss", "logistic", "--t-end", "1", check_rc=2)
    assert out.stderr.strip().startswith("softpolar: error:") and "Traceback" not in out.stderr


def test_integration_failure_exits_1(capsys):
    rc, _, err = run_inprocess(capsys, "--seed", "1", "--d", "3", "--n", "3", "--loss", "kl",
                               "--t-end", "1e9", "--backend", "numpy", "--max-steps", "2", "--quiet")
    assert rc == 1 and "integration failed" in err and "max_steps" in err


def test_gradient_descent_mode(capsys):
    rc, stdout, _ = run_inprocess(capsys, "--preset", "logistic-toy", "--t-end", "10", "--times",
                                  "0,1,10", "--gd-lr", "0.1", "--backend", "numpy", "--json", "--quiet")
    assert rc == 0
    data = json.loads(stdout)
    assert data["times"] == [0.0, 0.1 * 10, 0.1 * 100] and data["meta"]["method"].startswith("GD")
