"""Interrupts and outputs (issue 38): signals mid-way, dead scheduler endpoints, odd output folders,
doctored sink certificates. Each case ends in one line (or a clean stop) that keeps the user's files, leaves no
half-written output, within a bound."""
from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest


from .helpers import cli, one_error_line

ROOT = Path(__file__).resolve().parent.parent


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


# ---- signals in the middle of each long command (real processes) -----------------------------------------

#: each runs for a minute or more on a fast machine (the signal comes at 7 s, after the imports): a run that ends
#: before the signal, or just as it lands, tests nothing (CI once saw `simulate` to 1e300 at 100 digits finish in
#: 5 s, and a SIGTERM that arrived after the report was written exited 0)
LONG = {
    "verify": ["verify", "--out", "out", "--jobs", "1"],
    "simulate": ["simulate", "--seed", "1", "--d", "10", "--n", "10", "--loss", "logistic", "--t-end", "1e3000",
                 "--dps", "300", "--out", "out.json"],
    "atlas": ["atlas", "conflict3", "--out", "out", "--min-width", "1/64", "--scheduler", "inline",
              "--no-progress"],
    "derive": ["derive", "--check", "--loss", "logistic", "--jobs", "1", "--out", "out.md"],
}


def _signal_mid_way(args, sig, cwd: Path, after: float = 7.0, timeout: float = 60.0):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "softpolar", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(after)               # imports done, computing
        if p.poll() is not None:
            out, err = p.communicate()
            return p.returncode, out, err, None
        t0 = time.monotonic()
        os.killpg(p.pid, sig)
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err, time.monotonic() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.mark.slow
@pytest.mark.parametrize("sig,code,line", [(signal.SIGINT, 130, "softpolar: interrupted"),
                                           (signal.SIGTERM, 143, "softpolar: terminated (SIGTERM)")])
@pytest.mark.parametrize("command", sorted(LONG))
def test_a_signal_mid_way_is_one_line_and_leaves_no_half_written_output(tmp_path, command, sig, code, line):
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    rc, out, err, took = _signal_mid_way(LONG[command], sig, tmp_path)
    if took is None:
        pytest.skip(f"{command} finished before the signal (rc {rc})")
    assert rc == code, (rc, err[-2000:])
    assert err.rstrip().splitlines()[-1] == line and "Traceback" not in err, err[-2000:]
    assert took < 30                                       # the clean-up is bounded
    assert mine.read_text() == "mine"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert not [n for n in left if n.endswith(".tmp") or n.endswith(".lock") or n.startswith(".tmp")], left
    if command == "atlas" and (tmp_path / "out").exists():  # a resumable folder: its marker and journal only
        assert {p.name for p in (tmp_path / "out").iterdir()} <= {"atlas-run.json", "journal.jsonl"}
    else:
        assert left == ["notes.txt"], left                     # no report, no partial file


# ---- --scheduler at dead or foreign endpoints ------------------------------------------------------------------

@contextlib.contextmanager
def _server(reply: bytes | None):
    """A loopback listener: ``reply`` is sent to every connection (``None``: accept and never answer)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []

    def serve():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = srv.accept()
                conns.append(conn)
                if reply is not None:
                    with contextlib.suppress(OSError):
                        conn.recv(4096)
                        conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        srv.close()
        for c in conns:
            c.close()


def _closed_port() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"tcp://127.0.0.1:{port}"


HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\n<html></html>"


@pytest.mark.parametrize("endpoint", ["closed", "http", "silent", "unresolvable"])
def test_a_dead_or_foreign_scheduler_is_one_line_within_a_bound(tmp_path, capsys, endpoint):
    with contextlib.ExitStack() as stack:
        address = {"closed": _closed_port, "unresolvable": lambda: "tcp://no-such-host.invalid:8786",
                   "http": lambda: stack.enter_context(_server(HTTP)),
                   "silent": lambda: stack.enter_context(_server(None))}[endpoint]()
        t0 = time.perf_counter()
        rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(tmp_path / "o"), "--scheduler", address)
        took = time.perf_counter() - t0
    line = one_error_line(err)
    assert rc == 2 and "scheduler" in line.lower() or "dask" in line, line
    assert took < 20, took
    assert not (tmp_path / "o").exists()


# ---- odd output folders --------------------------------------------------------------------------------------

def test_out_through_a_symlink_to_a_users_folder_keeps_it(tmp_path, capsys):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.tex").write_text("five years of work\n")
    (tmp_path / "link").symlink_to(theirs, target_is_directory=True)
    before = snapshot(theirs)
    rc, _, err = cli(capsys, "verify", "--claims", "C04", "--out", str(tmp_path / "link"))
    assert rc == 2 and one_error_line(err)
    assert snapshot(theirs) == before
    rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(tmp_path / "link"), "--scheduler", "inline")
    assert rc == 2 and one_error_line(err)
    assert snapshot(theirs) == before


def test_simulate_out_through_a_symlink_to_a_users_file_keeps_it(tmp_path, capsys):
    (tmp_path / "data.json").write_text('{"mine": 1}')
    (tmp_path / "link.json").symlink_to(tmp_path / "data.json")
    rc, _, err = cli(capsys, "simulate", "--seed", "0", "--n", "2", "--d", "2", "--loss", "logistic", "--t-end",
                     "1", "--out", str(tmp_path / "link.json"))
    assert rc == 2 and one_error_line(err)
    assert (tmp_path / "data.json").read_text() == '{"mine": 1}' and (tmp_path / "link.json").is_symlink()


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder nobody may write into, root included (CI runs as root: mode bits do not stop root)."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        return ro
    probe = Path("/proc/softpolar-probe")      # procfs: not even root creates files there
    return probe


@pytest.mark.parametrize("args", [("verify", "--claims", "C04", "--out", "{ro}/rep"),
                                  ("simulate", "--seed", "0", "--n", "2", "--d", "2", "--loss", "logistic",
                                   "--t-end", "1", "--out", "{ro}/sim.json"),
                                  ("atlas", "conflict3", "--scheduler", "inline", "--out", "{ro}/atlas")])
def test_out_into_a_read_only_folder_is_one_line_before_computing(tmp_path, capsys, args):
    ro = _read_only_folder(tmp_path)
    t0 = time.perf_counter()
    rc, _, err = cli(capsys, *[a.format(ro=ro) for a in args])
    assert rc == 2 and one_error_line(err)
    assert time.perf_counter() - t0 < 30      # refused before the computation
    if ro.exists():
        assert list(ro.iterdir()) == []


def test_an_atlas_folder_with_a_forged_marker_is_refused_untouched(tmp_path, capsys):
    d = tmp_path / "a"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    (d / "atlas-run.json").write_text(json.dumps({"format": "softpolar-atlas-run/1", "files": {}}))
    before = snapshot(d)
    rc, _, err = cli(capsys, "atlas", "conflict3", "--out", str(d), "--scheduler", "inline")
    assert rc == 2 and one_error_line(err)
    assert snapshot(d) == before


# ---- doctored sink certificates (numerics.validated sink checker) --------------------------------------------

@pytest.fixture(scope="module")
def sink_cert():
    from numerics.validated.sink_cert import certify_sink

    c = certify_sink([Fraction(-2), Fraction(-5, 2)], Fraction(1, 4), eps=Fraction(1, 100), prec=192, order=20)
    assert c.status == "certified", c.status
    return c.data


def _doctor(data, how):
    c = copy.deepcopy(data)
    s0 = c["steps"][0]
    if how == "nan-end":
        c["steps"][-1]["end"] = ["nan" for _ in c["steps"][-1]["end"]]
    elif how == "nan-init":
        c["init"]["b"] = "nan"
    elif how == "huge-exponent":
        s0["h"] = "1/2^999999999"
    elif how == "negative-step":
        s0["h"] = "-" + s0["h"]
    elif how == "winner":
        c["winner"] = 1 - c["winner"] if isinstance(c["winner"], int) else 0
    elif how == "bool-winner":
        c["winner"] = True
    elif how == "extra-key":
        c["note"] = "trust me"
    elif how == "no-steps":
        c["steps"] = []
    elif how == "not-a-dict":
        return [c]
    elif how == "deep":
        c["init"] = [[[[[[[[[[0]]]]]]]]]]
    elif how == "escape-early":
        c["escape"] = {**c["escape"], "step": 0}
    elif how == "eps-zero":
        c["eps"] = "0"
    return c


DOCTORED = ["nan-end", "nan-init", "huge-exponent", "negative-step", "winner", "bool-winner", "extra-key", "no-steps",
            "not-a-dict", "deep", "escape-early", "eps-zero"]


@pytest.mark.parametrize("how", DOCTORED)
def test_a_doctored_sink_certificate_is_refused_not_crashed(sink_cert, how):
    from numerics.validated import sink_certcheck as S

    t0 = time.perf_counter()
    res = S.check_sink_independent(_doctor(sink_cert, how), time_budget=60)
    assert not res.ok and not res.crashed, (how, res)
    assert time.perf_counter() - t0 < 90


def test_the_undoctored_sink_certificate_passes(sink_cert):
    # the witness of the doctored cases: the same checker accepts the honest certificate
    from numerics.validated import sink_certcheck as S

    assert S.check_sink_independent(copy.deepcopy(sink_cert), time_budget=60).ok
