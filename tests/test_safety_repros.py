"""Every reported hostile-input reproduction (a crash, a hang, an overwrite), one regression test each.

Each test runs the exact repro of the issue (CLI in process, or in a real process where
streams, signals or the exit path matter) and asserts the documented behaviour: exit 2 with
one line ``softpolar: error: ...`` for bad input, exit 1 with one line for an integration
failure, exit 130 with one line for Ctrl-C, no traceback, and no file outside the output
touched.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from softpolar import main

from .helpers import cli, one_error_line
from theorems import InvalidArgument

GOOD = {"loss": "logistic", "V": [[0.1, -0.2, 0.05], [0.3, 0.1, -0.1]], "a": [0.3, 0.1, 0.0],
        "target": [0.6, 0.8]}
HUGE_V = [[1e150, -1e150, 3e149], [2e149, 1e150, -1e150]]


def write(path: Path, obj) -> Path:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def proc(*args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "softpolar", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None, p.stat().st_mode)
            for p in sorted(folder.rglob("*"))}


# ---- data loss ---------------------------------------------------------------------------------
def test_verify_never_replaces_a_folder_with_foreign_files(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    (d / "report.md").write_text("x\n")
    (d / "thesis.tex").write_text("keep\n")
    (d / "sub").mkdir()
    before = snapshot(d)
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(d))
    assert rc == 2
    assert "holds no softpolar report" in one_error_line(err)
    assert "[ 1/1]" not in err  # refused before any claim ran
    assert snapshot(d) == before


def test_report_folder_life_cycle_and_umask(tmp_path, capsys):
    from proofs_check.report import MARKER

    out = tmp_path / "rep"
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 0, err
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~mask  # not mkdtemp's 0o700
    marker = json.loads((out / MARKER).read_text())
    assert set(marker["files"]) == {p.name for p in out.iterdir()} - {MARKER}
    # our own earlier report is replaced ...
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 0, err
    # ... but not once a foreign file sits in it
    (out / "notes.txt").write_text("mine")
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 2 and "'notes.txt'" in one_error_line(err)
    assert (out / "notes.txt").read_text() == "mine"


def test_verify_out_dot_never_wipes_the_current_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "report.md").write_text("x")
    (tmp_path / "keep.txt").write_text("keep")
    monkeypatch.chdir(tmp_path)
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", ".")
    assert rc == 2
    one_error_line(err)
    assert (tmp_path / "keep.txt").read_text() == "keep"


def test_verify_out_a_file_fails_before_running_claims(tmp_path, capsys):
    afile = write(tmp_path / "afile", "x")
    t0 = time.perf_counter()
    rc, _, err = cli(capsys, "verify", "--out", str(afile))
    assert rc == 2 and "not a directory" in one_error_line(err)
    assert "[ 1/" not in err
    assert afile.read_text() == "x"
    assert time.perf_counter() - t0 < 60  # the full quick profile takes minutes


def test_simulate_and_certify_never_overwrite_their_input(tmp_path, capsys):
    g = write(tmp_path / "g.json", GOOD)
    before = g.read_bytes()
    rc, _, err = cli(capsys, "simulate", "--init", str(g), "--t-end", "1", "--out", str(g), "--quiet")
    assert rc == 2 and "input" in one_error_line(err)
    rc, _, err = cli(capsys, "simulate", "--init", str(g), "--t-end", "1", "--plot",
                     str(tmp_path / "x.png"), "--out", str(tmp_path / "x.png"), "--quiet")
    assert rc == 2
    one_error_line(err)
    rc, _, err = cli(capsys, "certify", "--init", str(g), "--out", str(g))
    assert rc == 2 and "input" in one_error_line(err)
    assert g.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


# ---- silent wrong answers ------------------------------------------------------------------------
@pytest.mark.parametrize("loss,target", [("square", [0.6, 0.8]), ("kl", [0.5, 0.5])])
def test_torch_huge_states_fail_loudly(tmp_path, capsys, loss, target):
    pytest.importorskip("torch")
    f = write(tmp_path / "huge.json", {"loss": loss, "V": HUGE_V, "a": [0.3, 0.1, 0], "target": target})
    rc, out, err = cli(capsys, "simulate", "--init", str(f), "--backend", "torch", "--t-end", "100",
                       "--quiet")
    assert rc == 1, out
    assert one_error_line(err, "softpolar: integration failed: ")
    assert out == ""


def test_torch_freeze_never_uses_an_overflowed_tolerance():
    torch = pytest.importorskip("torch")
    from numerics import integrate_batch

    res = integrate_batch(np.array([[[1.0, 0.5], [0.2, 1.0]]]), np.array([[0.1, 0.0]]),
                          np.array([[0.6, 0.8]]), loss="square", t_end=1e4)
    assert torch.isfinite(res["frozen_at"]).all()  # a normal problem still freezes
    with pytest.raises(Exception) as info:
        integrate_batch(np.array([HUGE_V]), np.array([[0.3, 0.1, 0.0]]), np.array([[0.6, 0.8]]),
                        loss="square", t_end=100)
    assert type(info.value).__name__ == "IntegrationError"


def test_descent_check_rejects_a_rising_loss():
    from numerics import IntegrationError
    from numerics.integrate import check_descent

    check_descent([1.0, 0.5, 0.5 + 1e-12, 0.1], [0, 1, 2, 3], rtol=1e-12)  # rounding-size wiggle
    with pytest.raises(IntegrationError, match="rose"):
        check_descent([1.0, 0.5, 0.7], [0, 1, 2], rtol=1e-12)
    with pytest.raises(IntegrationError, match="non-finite"):
        check_descent([1.0, float("inf")], [0, 1], rtol=1e-12)


@pytest.mark.parametrize("backend", ["mpmath", "taylor"])
def test_high_precision_backends_reject_a_rising_loss(monkeypatch, backend):
    # a planted bug (the flow's sign flipped: gradient ascent) must fail loudly on the
    # high-precision backends too, as on numpy/torch; the unplanted run passes (control)
    from numerics import IntegrationError, Problem, simulate
    from numerics import rhs as _rhs
    from numerics.integrate import _mpmath as _integrate_mp

    if backend == "taylor":
        pytest.importorskip("heyoka")
    p = Problem.from_json(dict(GOOD))
    simulate(p, t_end=2, backend=backend, dps=20)  # the true flow: the loss decreases
    if backend == "mpmath":
        real = _rhs.flow_rhs

        class Flipped:  # the generated rhs with both derivatives negated, other attributes kept
            def __init__(self, f):
                self.f = f

            def __call__(self, *args):
                dV, da = self.f(*args)
                return [[-x for x in row] for row in dV], [-x for x in da]

            def __getattr__(self, name):
                return getattr(self.f, name)

        monkeypatch.setattr(_integrate_mp, "flow_rhs", lambda *a, **k: Flipped(real(*a, **k)))
        with pytest.raises(IntegrationError, match="rose"):
            simulate(p, t_end=2, backend=backend, dps=20)
    else:  # the descent check itself on a computed taylor trajectory, with its loss reversed
        from numerics.integrate import taylor as _integ_taylor

        real_check = _integ_taylor.check_descent
        monkeypatch.setattr(_integ_taylor, "check_descent",
                            lambda loss, times, **k: real_check(list(reversed(loss)), times, **k))
        with pytest.raises(IntegrationError, match="rose"):
            simulate(p, t_end=2, backend=backend, dps=20)


# ---- hangs ------------------------------------------------------------------------------------
def test_huge_logit_tau_clock_does_not_hang():
    # the repro ran for hours inside mpmath.exp(-T) of an overshooting trial step; now the guarded
    # e^{-T} makes that step fail and be cut, and --max-steps bounds the rest
    from numerics import IntegrationError, Problem, simulate

    p = Problem.from_json({**GOOD, "a": [1e5, 0, 0]})
    for backend in ("mpmath", "numpy"):
        try:
            traj = simulate(p, t_end="1e3", times=["1", "1000"], max_steps=20, backend=backend)
        except IntegrationError:
            continue
        assert all(math.isfinite(float(L)) for L in traj.loss)


def test_guarded_exp_of_T():
    import mpmath

    from numerics.integrate import exp_neg_T

    assert exp_neg_T(mpmath.mpf(2)) == mpmath.exp(-2)
    for bad in (mpmath.mpf("-1e3084"), mpmath.mpf("1e3084"), -5.0):
        with pytest.raises(OverflowError):
            exp_neg_T(bad)


def test_gd_steps_are_bounded_by_max_steps(tmp_path, capsys):
    g = write(tmp_path / "g.json", GOOD)
    rc, _, err = cli(capsys, "simulate", "--init", str(g), "--t-end", "1e10", "--gd-lr", "1e-10",
                     "--backend", "numpy", "--quiet")
    assert rc == 2 and "--max-steps" in one_error_line(err)
    rc, _, err = cli(capsys, "simulate", "--init", str(g), "--t-end", "1", "--gd-lr", "0.01",
                     "--backend", "numpy", "--max-steps", "50", "--quiet")
    assert rc == 2 and "100" in one_error_line(err)


def test_gd_divergence_warns_loudly(tmp_path, capsys):
    from numerics import Problem, gradient_descent
    from numerics import DescentWarning

    p = Problem(loss="square", V=[[1.0, 2.0], [0.5, -1.0]], a=[0.0, 0.1], target=[0.3, 0.2])
    with pytest.warns(DescentWarning, match="raised the loss"):
        traj = gradient_descent(p, lr=50.0, steps=8)
    assert any("WARNING" in n for n in traj.notes)
    g = write(tmp_path / "g.json", p.to_json_dict())
    rc, _, err = cli(capsys, "simulate", "--init", str(g), "--t-end", "400", "--gd-lr", "50",
                     "--backend", "numpy", "--quiet")
    assert any(ln.startswith("softpolar: warning: gradient descent raised the loss")
               for ln in err.splitlines()), err
    assert "Traceback" not in err


# ---- one line and exit 2 -------------------------------------------------------------------------
def test_unwritable_outputs_fail_before_computing(tmp_path, capsys):
    g = write(tmp_path / "g.json", GOOD)
    base = ["simulate", "--init", str(g), "--t-end", "1", "--quiet"]
    for extra in (["--out", str(tmp_path)], ["--plot", str(tmp_path / "sub") + "/"],
                  ["--out", "/dev/null"]):
        rc, out, err = cli(capsys, *base, *extra)
        assert rc == 2, extra
        one_error_line(err)
        assert out == ""
    if os.path.isdir("/sys/kernel"):  # sysfs refuses new files, also to root
        rc, _, err = cli(capsys, *base, "--out", "/sys/x.json")
        assert rc == 2
        one_error_line(err)
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        try:
            rc, _, err = cli(capsys, *base, "--out", str(ro / "x.json"))
            assert rc == 2 and "cannot be written" in one_error_line(err)
        finally:
            ro.chmod(0o700)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"] + (["ro"] if os.geteuid() else [])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line(tmp_path):
    g = write(tmp_path / "g.json", GOOD)
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "softpolar", "simulate", "--init", str(g), "--t-end",
                              "1", "--quiet"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert out.returncode == 2
    one_error_line(out.stderr)


def test_closed_stderr_still_runs():
    # `2>&-`: the command runs, progress bar included (its stderr text is lost), exit code 0
    ok = subprocess.run(f"{sys.executable} -m softpolar simulate --seed 1 --d 2 --n 2 --loss logistic "
                        "--t-end 1 --backend numpy --json 2>&-", shell=True, stdout=subprocess.PIPE, text=True,
                        timeout=300)
    assert ok.returncode == 0 and json.loads(ok.stdout)["times"]


def test_closed_streams_become_devnull(monkeypatch, capsys):
    from proofs_check.cli import reopen_closed_streams

    monkeypatch.setattr(sys, "stderr", None)  # what Python sets when fd 2 was closed at start-up
    reopen_closed_streams()
    assert sys.stderr is not None
    print("lost", file=sys.stderr)
    sys.stderr.close()  # closefd=False: fd 2 stays open


@pytest.mark.parametrize("doc,needle", [
    ({**GOOD, "loss": ["logistic"]}, "loss="),
    ({**GOOD, "link": {"x": 1}}, "link="),
    ({**GOOD, "target": [0.6, 10**400]}, "target="),
    ({**GOOD, "V": [[0.1j, 0, 0], [0, 0, 0]]} if False else '{"loss": "logistic", "V": [[1e999, 0, 0], '
     '[0, 0, 0]], "a": [0, 0, 0], "target": [1, 0]}', "non-finite"),
    (b"\xff\xfe{}", "UTF-8"),
    ("[" * 100_000, "nested"),
    ('{"loss": ' + "9" * 5000 + ', "V": [[0.1]], "a": [0], "target": [1]}', "4300 digits"),  # found by fuzzing
])
def test_hostile_init_files(tmp_path, capsys, doc, needle):
    f = tmp_path / "init.json"
    if isinstance(doc, bytes):
        f.write_bytes(doc)
    else:
        write(f, doc)
    rc, _, err = cli(capsys, "simulate", "--init", str(f), "--t-end", "1", "--quiet")
    assert rc == 2 and needle in one_error_line(err)


def test_certify_huge_integers_and_never_raising_check(tmp_path, capsys):
    from numerics import check_certificate

    big = write(tmp_path / "big.json", '{"loss": "logistic", "V": [[0.1, -0.2, 0.05], [0.3, 0.1, -0.1]], '
                '"a": [0.3, 0.1, 0.0], "target": [0.6, ' + "9" * 5000 + "]}")
    rc, _, err = cli(capsys, "certify", "--init", str(big))
    assert rc == 2
    one_error_line(err)
    rc, _, err = cli(capsys, "certify", "--check", str(big))
    assert rc == 2
    one_error_line(err)
    for bad in (b"\xff", b"[" * 100_000):
        (tmp_path / "bad.json").write_bytes(bad)
        for mode in ("--init", "--check"):
            rc, _, err = cli(capsys, "certify", mode, str(tmp_path / "bad.json"))
            assert rc == 2
            one_error_line(err)
    cert = {"format": "softpolar-certificate", "version": 2, "status": "certified", "prec": 10**5000,
            "init": {"a": [10**5000]}}
    res = check_certificate(cert)  # never raises on bad content
    assert not res.ok


@pytest.mark.parametrize("args,needle", [
    (["simulate", "--seed", "1", "--d", "2", "--n", "2", "--loss", "logistic", "--t-end", "1", "--dps", "400"],
     "dps="),
    (["verify", "--claims", "C04", "--dps", "400"], "dps="),
    (["simulate", "--seed", str(2**32), "--d", "2", "--n", "2", "--loss", "logistic", "--t-end", "1"], "seed="),
    (["verify", "--claims", "C04", "--seed", str(2**32)], "seed="),
    (["simulate", "--seed", "1", "--d", "1000000", "--n", "1000000", "--loss", "logistic", "--t-end", "1"],
     "d * n"),
    (["simulate", "--seed", "1", "--d", "2", "--n", "2", "--loss", "logistic", "--t-end", "1e99999999"],
     "t_end="),
    (["certify", "--init", "/nonexistent.json", "--prec", str(10**6)], "--prec="),
])
def test_bounds_are_stated(capsys, args, needle):
    rc, _, err = cli(capsys, *args)
    assert rc == 2 and needle in one_error_line(err)


def test_scheduler_urls_fail_fast(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("distributed")
    from softpolar.experiments import grid_configs, run_grid

    configs = grid_configs("classification", "tiny")[:1]
    with pytest.raises(InvalidArgument, match="scheduler="):
        run_grid(configs, tmp_path / "g1", scheduler="http://127.0.0.1:8786", progress=False)
    t0 = time.perf_counter()
    with pytest.raises(InvalidArgument, match="could not be reached"):
        run_grid(configs, tmp_path / "g2", scheduler="tcp://127.0.0.1:1", progress=False)
    assert time.perf_counter() - t0 < 5  # "a refused scheduler fails in under 5 s" (was 36 s)


def test_experiment_cli_refusals(tmp_path, capsys):
    pytest.importorskip("torch")
    rc, _, err = cli(capsys, "experiment", "classification", "--grid", "tiny", "--scheduler",
                     "http://127.0.0.1:8786", "--out", str(tmp_path / "e"))
    assert rc == 2 and "scheduler=" in one_error_line(err)
    fake = write(tmp_path / "fake.gguf", "not a model")
    rc, _, err = cli(capsys, "experiment", "pretrained-sinks", "--gguf", str(fake), "--out",
                     str(tmp_path / "p"))
    assert rc == 2 and "GGUF" in one_error_line(err)
    (tmp_path / "mine").mkdir()
    write(tmp_path / "mine" / "thesis.tex", "keep")
    rc, _, err = cli(capsys, "experiment", "classification", "--grid", "tiny", "--out",
                     str(tmp_path / "mine"))
    assert rc == 2
    one_error_line(err)
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["thesis.tex"]


# ---- Python API -------------------------------------------------------------------------------
def test_api_refusals_are_invalid_argument():
    from numerics import Problem, prepare_times, simulate

    p = Problem.from_json(GOOD)
    with pytest.raises(InvalidArgument, match="complex"):
        Problem(loss="logistic", V=np.array([[1 + 2j, 0, 0], [0, 0, 0]]), a=[0, 0, 0], target=[1, 0])
    with pytest.raises(InvalidArgument, match="character by character"):
        prepare_times(1, "0.5")
    with pytest.raises(InvalidArgument):
        Problem(loss=["logistic"], V=GOOD["V"], a=GOOD["a"], target=GOOD["target"])
    # np.int64 accepted for dps, as np.float32 is for rtol
    traj = simulate(p, t_end=0.1, times=[0.1], dps=np.int64(20), rtol=np.float32(1e-8))
    assert traj.dps == 20
    with pytest.raises(InvalidArgument, match="dps="):
        simulate(p, t_end=0.1, dps=400)


def test_gap_identities_refuse_equal_indices():
    from theorems import check_gap_identities

    with pytest.raises(InvalidArgument, match="i != j"):
        check_gap_identities(3, 0, 0)
    with pytest.raises(InvalidArgument):
        check_gap_identities(3, 0, 5)


# ---- Ctrl-C ------------------------------------------------------------------------------------
def _interrupt(args, wait_for: str, tmp_path, timeout=240, stream="stderr"):
    """Start ``softpolar args`` in a real process, send SIGINT once ``wait_for`` shows on ``stream``."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "softpolar", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                         start_new_session=True)
    seen = ""
    t0 = time.monotonic()
    try:
        if isinstance(wait_for, (int, float)):
            time.sleep(wait_for)  # imports done, computing (the process prints nothing meanwhile)
        while isinstance(wait_for, str) and wait_for not in seen and time.monotonic() - t0 < timeout:
            ch = getattr(p, stream).read(1)
            if not ch:
                break
            seen += ch
        time.sleep(0.5)
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=timeout)
        out, err = p.stdout.read(), p.stderr.read()  # the same (buffered) readers as above
        p.stdout.close()
        p.stderr.close()
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    if stream == "stdout":
        return p.returncode, seen + out, err
    return p.returncode, out, seen + err


@pytest.mark.parametrize("args,wait_for", [
    # verify prints a result line per finished claim on stdout: interrupted after the first
    (["verify", "--claims", "C01,C02,C03,C04,C05", "--out", "rep"], "[ 1/"),
    pytest.param(["simulate", "--seed", "1", "--d", "10", "--n", "10", "--loss", "logistic", "--t-end", "1e300",
                  "--dps", "100", "--out", "sim.json"], 8, marks=pytest.mark.slow),
])
def test_ctrl_c_is_one_line_exit_130_and_no_output(tmp_path, args, wait_for):
    stream = "stdout" if args[0] == "verify" else "stderr"
    rc, out, err = _interrupt(args, wait_for, tmp_path, stream=stream)
    if rc == 0:
        pytest.skip("finished before the interrupt arrived")
    assert rc == 130, err
    assert err.rstrip().splitlines()[-1] == "softpolar: interrupted"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    if stream == "stdout":  # only whole result lines of the claims that finished, no summary
        assert out and all(re.match(r"\[ ?\d+/5\] (ok  |FAIL) C0\d ", x) for x in out.splitlines()), out
    else:
        assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no report, no partial file


def test_ctrl_c_on_certify_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    """The certify path, interrupted inside the enclosure loop (a real Ctrl-C raises there)."""
    import numerics

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(numerics, "certify", interrupted)
    g = write(tmp_path / "g.json", GOOD)
    rc, out, err = cli(capsys, "certify", "--init", str(g), "--out", str(tmp_path / "cert.json"))
    assert rc == 130 and out == ""
    assert err.strip() == "softpolar: interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


@pytest.mark.slow
def test_ctrl_c_on_a_dask_grid_has_no_worker_tracebacks(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("distributed")
    # a real process: workers spawned, one run in flight, then Ctrl-C to the whole process group
    import threading

    p = subprocess.Popen([sys.executable, "-m", "softpolar", "experiment", "classification", "--grid", "smoke",
                          "--workers", "2", "--out", "grid"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp_path, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True)
    reader.start()
    try:
        t0 = time.monotonic()  # the dashboard line comes once the cluster is up (Ctrl-C before it is lost)
        while not any("dask dashboard" in ln for ln in lines) and time.monotonic() - t0 < 240:
            time.sleep(0.5)
        time.sleep(5)  # runs in flight
        os.killpg(p.pid, signal.SIGINT)
        out = p.stdout.read()
        p.wait(timeout=120)
        reader.join(timeout=30)
        err = "".join(lines)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        p.stdout.close()
        p.stderr.close()
    rc = p.returncode
    assert rc == 130, err
    assert err.rstrip().splitlines()[-1] == "softpolar: interrupted"
    assert "Traceback" not in err and "ERROR" not in err, err
    assert out == ""


def test_derive_outputs_are_checked_first(tmp_path, capsys):
    for bad in (str(tmp_path), "/dev/null"):
        rc, out, err = cli(capsys, "derive", "--no-proofs", "--out", bad)
        assert rc == 2 and out == ""
        one_error_line(err)
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_on_simulate_in_process(tmp_path, capsys, monkeypatch):
    """The simulate path interrupted inside the integrator (the real-process test is marked slow)."""
    import numerics

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(numerics, "simulate", interrupted)
    rc, out, err = cli(capsys, "simulate", "--seed", "1", "--d", "2", "--n", "2", "--loss", "logistic",
                       "--t-end", "1", "--out", str(tmp_path / "sim.json"), "--plot", str(tmp_path / "p.png"))
    assert rc == 130 and out == "" and err.strip() == "softpolar: interrupted"
    assert list(tmp_path.iterdir()) == []


# ---- round two: every input bounded before it is expanded ----------------------------------------
def _fifo(tmp_path, name="fifo.json") -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path):
    """A FIFO as any JSON input is refused in one line (never a blocking ``open()``)."""
    from numerics.io import read_json

    fifo = _fifo(tmp_path)
    with pytest.raises(InvalidArgument, match="FIFO"):
        read_json(fifo, "spec")
    for args in (["simulate", "--init", str(fifo), "--t-end", "1"], ["certify", "--init", str(fifo)],
                 ["certify", "--check", str(fifo)], ["atlas", str(fifo), "--out", str(tmp_path / "o")],
                 ["atlas", "--check", str(fifo)]):
        r = proc(*args, timeout=60)
        assert r.returncode == 2, (args, r.stderr)
        assert "FIFO" in one_error_line(r.stderr), args
    assert not (tmp_path / "o").exists()


def test_duplicate_keys_are_refused(tmp_path, capsys):
    doc = '{"loss": "logistic", "V": [[0.1]], "a": [0], "target": [1], "target": [2]}'
    rc, _, err = cli(capsys, "simulate", "--init", str(write(tmp_path / "d.json", doc)), "--t-end", "1")
    assert rc == 2 and "repeats the key 'target'" in one_error_line(err)
    rc, _, err = cli(capsys, "simulate", "--init", str(write(tmp_path / "ok.json", GOOD)), "--t-end", "1",
                     "--backend", "numpy")
    assert rc == 0, err  # control: the same reader takes a file with unique keys


def test_a_12_million_entry_init_file_is_refused_before_parsing(tmp_path):
    """Counted on the bytes: no entry is built, so the memory stays near the file's own size."""
    import tracemalloc

    from numerics import Problem
    from numerics.problem import MAX_FILE_NUMBERS

    n = 12_000_000
    path = tmp_path / "big.json"
    path.write_bytes(b'{"loss": "logistic", "V": [[' + b",".join([b"0.1"] * n) + b']], "a": [0], "target": [1]}')
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(InvalidArgument, match=f"holds {n + 2} numbers.*at most {MAX_FILE_NUMBERS}"):
            Problem.from_json(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * size, (peak, size)  # the file and one translated copy; entries would be ~100x
    small = tmp_path / "small.json"  # control: the bound is on the count, a normal file reads
    small.write_text(json.dumps({**GOOD, "V": [[0.1] * 3] * 2}))
    assert Problem.from_json(small).n == 3


@pytest.mark.parametrize("raw,needle", [
    (b'{"x": 1e100000}', "exponent beyond"),
    (b'{"x": 0.' + b"1" * 5000 + b'}', "at most 4300 digits"),
])
def test_exact_readers_bound_each_number_token(tmp_path, raw, needle):
    from decimal import Decimal

    from numerics.io import parse_json

    with pytest.raises(InvalidArgument, match=needle):
        parse_json(raw, "init", parse_float=Decimal)
    assert parse_json(b'{"x": 1e99999}', "init", parse_float=Decimal) == {"x": Decimal("1e99999")}


@pytest.mark.parametrize("text,ok", [("1/3", True), ("-0.5e-3", True), ("1e150", True), ("1e151", False),
                                     ("1e999999999", False), ("-1e99999999", False), ("\uff11", False),
                                     ("\u0661", False), ("1/0", False), ("0x10", False), ("1_0", False)])
def test_parse_rational_bounds_the_exponent_before_expanding(text, ok):
    from fractions import Fraction

    from numerics.io import parse_rational

    if ok:
        assert parse_rational("b", text, max_exponent=150) == Fraction(text)
    else:
        with pytest.raises(InvalidArgument, match="b="):
            parse_rational("b", text, max_exponent=150)


# ---- round two: report folders keep the user's bytes ----------------------------------------------
def test_an_edited_report_md_is_never_replaced(tmp_path, capsys):
    out = tmp_path / "rep"
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 0, err
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 0, err  # control: an unchanged report of ours is replaced
    with open(out / "report.md", "a") as fh:
        fh.write("\nmy notes on the claims\n")
    before = snapshot(out)
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 2 and "changed since softpolar wrote them ('report.md')" in one_error_line(err)
    assert "[ 1/1]" not in err and snapshot(out) == before


def test_a_hand_made_marker_is_not_believed(tmp_path, capsys):
    from proofs_check.report import MARKER

    d = tmp_path / "thesis"
    d.mkdir()
    (d / "thesis.tex").write_text("five years of work\n")
    for marker in ({"softpolar_report": 1, "files": ["thesis.tex"]},  # the old names-only format
                   {"softpolar_report": 2, "files": {"thesis.tex": "sha256:" + "0" * 64}}):  # a guessed hash
        (d / MARKER).write_text(json.dumps(marker))
        before = snapshot(d)
        rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(d))
        assert rc == 2, err
        assert "without content hashes" in one_error_line(err) or "changed since" in err
        assert snapshot(d) == before


def test_a_second_concurrent_run_on_one_folder_is_refused(tmp_path, capsys):
    """While one run holds the folder (a real second process), verify refuses it in one line."""
    out = tmp_path / "vcc"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from numerics.io import folder_lock\n"
                               f"with folder_lock({str(out)!r}):\n print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert holder.stdout.readline().strip() == "locked"
        rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
        assert rc == 2 and "in use by another softpolar run (pid" in one_error_line(err)
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(out))
    assert rc == 0, err  # control: the lock died with its process
    assert not (tmp_path / ".vcc.lock").exists()


def test_folder_lock_never_truncates_a_foreign_file(tmp_path):
    from numerics.io import folder_lock

    (tmp_path / ".rep.lock").write_text("my file\n")
    with pytest.raises(InvalidArgument, match="not written by softpolar"):
        with folder_lock(tmp_path / "rep"):
            pass
    assert (tmp_path / ".rep.lock").read_text() == "my file\n"


# ---- round two: atlas specs, journals, folders, schedulers -----------------------------------------
_SPEC = {"name": "s", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"], "x": ["-1", "1"],
         "y": ["-1", "1"]}


@pytest.mark.parametrize("change,needle", [
    ({"b": "1e999999999"}, "decimal exponent 999999999"),   # was a hang: Fraction built 10**999999999
    ({"b": "1e999999"}, "decimal exponent 999999"),         # was a traceback
    ({"x": ["-1e99999999", "1e99999999"]}, "x[0]="),        # was a hang
    ({"b": "1e7"}, "within +-1000000"),
    ({"n": 100000, "u0": ["x"] * 100000, "a0": ["y"] * 100000}, "n=100000 is not allowed"),  # ran unbounded
    ({"bb": "2"}, "unknown keys ['bb']"),                   # a misspelt key was ignored
    ({"b": "\uff12"}, "ASCII"),                             # fullwidth 2 was read as 2
    ({"u0": ["\uff58", "0", "-1"]}, "non-ASCII"),           # NFKC: fullwidth x was read as x
    ({"u0": ["x*1e999", "0", "-1"]}, "u0[0]="),
    ({"name": "../../etc"}, "name="),
])
def test_hostile_atlas_specs_are_one_line(tmp_path, capsys, change, needle):
    spec = write(tmp_path / "spec.json", {**_SPEC, **change})
    t0 = time.perf_counter()
    rc, _, err = cli(capsys, "atlas", str(spec), "--out", str(tmp_path / "o"), "--scheduler", "inline")
    assert rc == 2 and needle in one_error_line(err), err
    assert time.perf_counter() - t0 < 60  # a bound on a hang, not a timing claim
    assert not (tmp_path / "o").exists()


def test_a_good_atlas_spec_still_loads():
    from softpolar.atlas import load_slice
    from softpolar.atlas.engine import MAX_N

    sl = load_slice({**_SPEC, "b": "5/2", "x": ["-1e-3", "0.5"]})
    assert sl.b == Fraction(5, 2) and sl.x == (Fraction(-1, 1000), Fraction(1, 2))
    assert load_slice({**_SPEC, "n": MAX_N, "u0": ["x"] + ["0"] * (MAX_N - 1),
                       "a0": ["y"] + ["0"] * (MAX_N - 1)}).n == MAX_N


@pytest.mark.parametrize("scheduler,needle", [("file:///etc/passwd", "is not allowed"),
                                              ("tcp://127.0.0.1:1", "could not be reached")])
def test_atlas_scheduler_addresses_are_one_line(tmp_path, capsys, scheduler, needle):
    for args in (["conflict3", "--out", str(tmp_path / "o")], ["--check", str(tmp_path / "x.json")]):
        if args[0] == "--check":
            write(tmp_path / "x.json", {"format": "softpolar-atlas/1"})
        rc, _, err = cli(capsys, "atlas", *args, "--scheduler", scheduler)
        assert rc == 2 and needle in one_error_line(err), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("banner", [None, b"SSH-2.0-OpenSSH_9.6\r\n"])
def test_a_non_dask_server_is_named_as_such(tmp_path, capsys, banner):
    """Something that answers but is not dask: said so (it used to read as 'out of memory')."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = srv.accept()
                if banner:
                    conn.sendall(banner)
                time.sleep(4)
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(tmp_path / "o"), "--scheduler",
                         f"tcp://127.0.0.1:{srv.getsockname()[1]}")
    finally:
        srv.close()
    line = one_error_line(err)
    assert rc == 2 and "is not a dask scheduler" in line and "memory" not in line
    assert not (tmp_path / "o").exists()


def test_a_real_dask_scheduler_passes_the_probe():
    from distributed import LocalCluster

    from softpolar.cluster import probe_scheduler

    with LocalCluster(n_workers=0, processes=False, dashboard_address="127.0.0.1:0", protocol="tcp",
                      host="127.0.0.1") as cluster:
        probe_scheduler(cluster.scheduler_address)  # control: the handshake check accepts dask itself


@pytest.fixture(scope="module")
def atlas_run(tmp_path_factory):
    from softpolar.atlas import run_atlas

    out = tmp_path_factory.mktemp("atlas2") / "c3"
    cert = run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
                     progress=False, draw=False)
    return out, cert


def _journal(out):
    return [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]


def _flip(rec):
    return {**rec, "winner": (rec["winner"] + 1) % 3}


def test_an_edited_journal_record_is_recomputed_not_trusted(atlas_run, tmp_path, capsys):
    import shutil

    out, cert = atlas_run
    copy = tmp_path / "c3"
    shutil.copytree(out, copy)
    recs = _journal(copy)
    k = next(i for i, r in enumerate(recs) if r["status"] == "certified")
    recs[k] = _flip(recs[k])  # the edit keeps the old digest: it no longer matches
    (copy / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(copy), "--start-width", "1/2", "--min-width",
                     "1/4", "--map-size", "32", "--scheduler", "inline", "--no-progress")
    assert rc == 0, err
    again = json.loads((copy / "atlas.json").read_text())
    assert again["area"] == cert["area"] and again["float64"]["disagreements"] == 0


def test_a_forged_journal_record_fails_the_run_and_names_the_box(atlas_run, tmp_path, capsys):
    """Digest recomputed by the forger: the run's own float64 map catches it, exit 1, the box named."""
    import shutil

    from softpolar.atlas import load_slice
    from softpolar.atlas.engine import record_digest

    out, cert = atlas_run
    copy = tmp_path / "c3"
    shutil.copytree(out, copy)
    marker = json.loads((copy / "atlas-run.json").read_text())
    recs = _journal(copy)
    k = next(i for i, r in enumerate(recs) if r["status"] == "certified")
    forged = _flip(recs[k])
    forged["digest"] = record_digest(load_slice("conflict3").spec, marker["engine"], forged)
    recs[k] = forged
    (copy / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(copy), "--start-width", "1/2", "--min-width",
                     "1/4", "--map-size", "32", "--scheduler", "inline", "--no-progress")
    assert rc == 1, err
    assert f"box {forged['key']}" in err and "--check" in err and "Traceback" not in err
    rc, out_text, _ = cli(capsys, "atlas", "--check", str(copy), "--scheduler", "inline", "--no-progress")
    assert rc == 1 and "REJECTED" in out_text  # and the independent checker refuses the certificate


def _hold_lock(folder):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; from numerics.io import folder_lock\n"
                               f"with folder_lock({str(folder)!r}):\n print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert holder.stdout.readline().strip() == "locked"
    return holder


def _release(holder):
    holder.kill()
    holder.wait()
    holder.stdout.close()


def test_a_second_experiment_run_on_one_folder_is_refused(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "e"
    holder = _hold_lock(out)
    try:
        rc, _, err = cli(capsys, "experiment", "classification", "--grid", "tiny", "--scheduler", "inline",
                         "--out", str(out))
        assert rc == 2 and "in use by another softpolar run" in one_error_line(err)
        assert not out.exists()
    finally:
        _release(holder)


def test_a_second_atlas_run_on_one_folder_is_refused(atlas_run, capsys):
    out, _ = atlas_run
    from numerics.io import folder_lock

    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; from numerics.io import folder_lock\n"
                               f"with folder_lock({str(out)!r}):\n print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = snapshot(out)
        rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(out), "--start-width", "1/2",
                         "--min-width", "1/4", "--map-size", "32", "--scheduler", "inline", "--no-progress")
        assert rc == 2 and "in use by another softpolar run" in one_error_line(err)
        assert snapshot(out) == before
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    with folder_lock(out):
        pass  # control: the lock died with its holder


# ---- round two: times, gradient descent's grid, the descent check -------------------------------
@pytest.mark.parametrize("args,needle", [
    (["--t-end", "1/3", "--backend", "numpy"], "t_end='1/3' is not allowed"),  # was a traceback
    (["--t-end", "\uff11"], "ASCII digits"),
    (["--t-end", "1e1000000"], "below 10**1000000"),  # passed its own bound
    (["--t-end", "1e99999999999999"], "below 10**1000000"),
    (["--gd-lr", "1e10", "--t-end", "10", "--times", "0,1e-9,10"], "--times=1e-09 is not a time of gradient"),
    (["--gd-lr", "3", "--t-end", "10", "--times", "0,1,10"], "--times=1 is not a time of gradient"),
    (["--gd-lr", "0.3", "--t-end", "1"], "--t-end=1 is not a time of gradient"),
])
def test_time_refusals_are_one_line(tmp_path, capsys, args, needle):
    rc, out, err = cli(capsys, "simulate", "--init", str(write(tmp_path / "g.json", GOOD)), *args)
    assert rc == 2 and needle in one_error_line(err) and not out


def test_gd_reports_every_requested_time_at_that_time(tmp_path, capsys):
    init = str(write(tmp_path / "g.json", GOOD))
    for lr, times in (("3", [0, 3, 9]), ("0.1", [0, 0.1, 0.3]), ("1e10", [0, 1e10, 3e10])):
        rc, out, err = cli(capsys, "simulate", "--init", init, "--gd-lr", lr, "--t-end", repr(times[-1]),
                           "--times", ",".join(map(repr, times)), "--json", "--quiet")
        assert rc == 0, err
        got = json.loads(out)["times"]
        assert len(got) == len(times) and all(math.isclose(float(g), t, rel_tol=1e-12) for g, t in zip(got, times))
    rc, out, err = cli(capsys, "simulate", "--init", init, "--gd-lr", "0.1", "--t-end", "1", "--json", "--quiet")
    assert rc == 0 and float(json.loads(out)["times"][-1]) == pytest.approx(1.0, rel=1e-12)


def test_square_sigmoid_round_off_is_not_a_rise():
    """Losses of 1e-25 wiggling by 3e-24 are float64 round-off against L(0) ~ 1: not 'the loss rose'."""
    from numerics import IntegrationError, Problem, simulate
    from numerics.integrate import check_descent

    for seed in range(6):
        p = Problem.from_seed(seed, d=3, n=3, loss="square", link="sigmoid")
        tr = simulate(p, t_end=1e4, times=[1e2, 1e3, 1e4], backend="numpy")
        assert max(tr.loss) < 1e-20
    check_descent([1.9e-23, 2.4e-22], [1e2, 1e3], rtol=1e-10, initial=0.6)  # the floor is slack * L(0)
    with pytest.raises(IntegrationError, match="rose"):  # control: without L(0) the same wiggle is a "rise"
        check_descent([1.9e-23, 2.4e-22], [1e2, 1e3], rtol=1e-10)
    with pytest.raises(IntegrationError, match="rose"):  # and a real rise is still one with L(0)
        check_descent([0.5, 0.7], [1, 2], rtol=1e-10, initial=1.0)


# ---- round two: certify across its --prec range, strict certificates -------------------------------
@pytest.mark.parametrize("prec", [512, 4096])
def test_certify_works_at_the_top_of_the_prec_range(tmp_path, capsys, prec):
    """Was 'step underflow' at 4096 bits (the tolerance 2**-2048 is 0.0 as a float) and 4,539 steps at 512."""
    example = Path(__file__).resolve().parents[1] / "examples" / "certify_init.json"
    steps = {}
    for p in (128, prec):
        rc, out, err = cli(capsys, "certify", "--init", str(example), "--prec", str(p), "--json",
                           "--out", str(tmp_path / f"c{p}.json"))
        assert rc == 0, err
        steps[p] = json.loads(out)["steps"]
    assert steps[prec] <= 2 * steps[128], steps
    rc, out, err = cli(capsys, "certify", "--check", str(tmp_path / f"c{prec}.json"))
    assert rc == 0 and out.startswith("check passed"), err


def test_certify_check_refuses_settings_it_does_not_use(tmp_path, capsys):
    example = Path(__file__).resolve().parents[1] / "examples" / "certify_init.json"
    rc, _, err = cli(capsys, "certify", "--init", str(example), "--out", str(tmp_path / "c.json"))
    assert rc == 0, err
    for flag, value in (("--prec", "64"), ("--order", "5"), ("--tau-max", "3")):
        rc, _, err = cli(capsys, "certify", "--check", str(tmp_path / "c.json"), flag, value)
        assert rc == 2 and f"{flag}={value!r}".replace("'64'", "64").replace("'5'", "5") in one_error_line(err)


def test_a_duplicate_key_in_a_certificate_is_refused(tmp_path, capsys):
    """'"winner": 0, "winner": 1' passed --check: the digest saw the parsed dict, the last key won."""
    example = Path(__file__).resolve().parents[1] / "examples" / "certify_init.json"
    rc, _, err = cli(capsys, "certify", "--init", str(example), "--out", str(tmp_path / "c.json"))
    assert rc == 0, err
    text = (tmp_path / "c.json").read_text()
    cert = json.loads(text)
    assert "winner" in cert
    doubled = text.replace('"winner": ', f'"winner": {1 - cert["winner"]}, "winner": ', 1)
    assert doubled != text
    (tmp_path / "d.json").write_text(doubled)
    rc, _, err = cli(capsys, "certify", "--check", str(tmp_path / "d.json"))
    assert rc == 2 and "repeats the key 'winner'" in one_error_line(err)
    rc, out, _ = cli(capsys, "certify", "--check", str(tmp_path / "c.json"))
    assert rc == 0 and out.startswith("check passed")  # control: the original passes


# ---- found by tests/test_fuzz_inputs.py ----------------------------------------------------------
def test_an_init_entry_of_1e10000_is_one_line(tmp_path, capsys):
    """Its overflow message took str() of a 10001-digit integer: a ValueError traceback."""
    doc = {**GOOD, "V": [["1e10000", -0.2, 0.05], [0.3, 0.1, -0.1]]}
    rc, _, err = cli(capsys, "simulate", "--init", str(write(tmp_path / "i.json", doc)), "--t-end", "1")
    assert rc == 2 and "~1e10000" in one_error_line(err) and "float64" in err


@pytest.mark.parametrize("reader", ["problem", "certify"])
def test_non_ascii_digits_in_init_strings_are_refused(reader):
    """'\\uff10.\\uff11' (fullwidth 0.1) was read as 0.1 by Decimal."""
    from numerics import Problem
    from numerics import parse_init

    doc = {"loss": "logistic", "V": [["\uff10.\uff11", "-0.2", "0.05"], ["0.3", "0.1", "-0.1"]],
           "a": ["0.3", "0.1", "0"], "target": ["0.6", "0.8"]}
    read = Problem.from_json if reader == "problem" else parse_init
    with pytest.raises(InvalidArgument, match="ASCII"):
        read(doc)
    doc["V"][0][0] = "0.1"
    read(doc)  # control: the ASCII spelling reads


@pytest.mark.parametrize("args,needle", [
    (["certify", "--init", "EXAMPLE", "--tau-max", "1e999999999"], "decimal exponent 999999999"),
    (["atlas", "conflict3", "--min-width", "1e999999999", "--scheduler", "inline"], "min_width='1e999999999'"),
    (["atlas", "conflict3", "--start-width=-1e99999999", "--scheduler", "inline"], "start_width="),
])
def test_number_flags_are_bounded_before_expanding(tmp_path, capsys, args, needle):
    example = Path(__file__).resolve().parents[1] / "examples" / "certify_init.json"
    args = [str(example) if a == "EXAMPLE" else a for a in args]
    if args[0] == "atlas":
        args += ["--out", str(tmp_path / "o")]
    t0 = time.perf_counter()
    rc, _, err = cli(capsys, *args)
    assert rc == 2 and needle in one_error_line(err)
    assert time.perf_counter() - t0 < 60  # a bound on a hang, not a timing claim
    assert not (tmp_path / "o").exists()


def test_numpy_rtol_below_its_floor_is_refused(capsys, tmp_path):
    """Found by the thorough fuzz profile: rtol=1.37e-179 on numpy was clamped by scipy with a warning."""
    from numerics import Problem, simulate
    from numerics.integrate import RTOL_MIN

    p = Problem.from_json(GOOD)
    with pytest.raises(InvalidArgument, match="rtol=1.37e-179 is not allowed with backend='numpy'"):
        simulate(p, t_end=0.5, backend="numpy", rtol=1.37e-179)
    assert simulate(p, t_end=0.5, backend="numpy", rtol=RTOL_MIN).loss  # control: the floor itself runs


def test_a_non_finite_field_in_dop853s_dense_output_is_an_integration_error():
    """Found by the fuzz suite (rtol = 71554 on the reduced system): DOP853's dense output evaluates the field
    at extra stages, and a non-finite value there escaped as the engine's private _NonFinite."""
    import numerics

    with pytest.raises(numerics.IntegrationError, match="dense output|non-finite"):
        numerics.reduced_logistic([0.1, 0.2], [0.0, 0.1], 1.0, t_end=3, max_steps=300, backend="numpy", rtol=71554)


# ---- found by the fuzz suites in CI (wheel stage, other draws) -------------------------------------
def test_integrate_batch_dtype_given_an_array_is_invalid_argument():
    # an array's == is elementwise: ``dtype in ("float64", ...)`` raised numpy's ValueError (ambiguous truth)
    torch = pytest.importorskip("torch")  # noqa: F841 - the torch backend needs it
    from numerics import integrate_batch
    with pytest.raises(InvalidArgument, match="dtype="):
        integrate_batch(V0=None, a0=np.array([[0.3, 0.1, 0.0]]), target=np.array([[0.6, 0.8]]), loss="logistic",
                        t_end=0.5, max_steps=300, dtype=np.zeros((0, 3)))


@pytest.mark.parametrize("ch", ["\x1e", "\x1c", "\x85", "\u2028", "\x0b", "\r"])
def test_a_line_break_inside_a_library_message_stays_one_line(ch, capsys):
    # torch's message quotes the device raw ("Invalid device string: '\x1e'"): splitlines broke it in two
    pytest.importorskip("torch")
    rc = main(["experiment", "induction", "--device", ch])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.splitlines()) == 1 and err.startswith("softpolar: error: "), repr(err)
    if ch != "\r":
        assert ch.encode("unicode_escape").decode() in err
