"""numerics.progress: one reporter, terminal-aware (bar / tqdm / lines / off), survives a closed stream."""
import io

import pytest

from numerics import progress as _progress
from numerics.progress import Progress, choose_mode, in_notebook


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


class Broken(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


@pytest.fixture(autouse=True)
def _no_forced_mode(monkeypatch):
    monkeypatch.delenv(_progress.ENV, raising=False)


def test_disabled_writes_nothing():
    buf = io.StringIO()
    with Progress("x", enabled=False, stream=buf) as bar:
        bar.update(0.5)
        bar.message("hello")
    assert buf.getvalue() == ""


def test_not_a_terminal_gives_lines_without_carriage_returns():
    buf = io.StringIO()
    assert choose_mode(buf) == "lines"
    bar = Progress("sim", stream=buf)
    for k in range(1, 101):
        bar.update(k / 100, note="t=1")
    assert buf.getvalue() == ""  # short run: no line before close
    bar.close()
    out = buf.getvalue()
    assert "\r" not in out and out.count("\n") == 1 and out.startswith("[sim] 100.0%")


def test_lines_are_throttled_by_line_interval():
    buf = io.StringIO()
    bar = Progress("g", 4, stream=buf)
    bar.line_interval = 0.0
    for _ in range(4):
        bar.update(note="run")
    bar.close()
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("[g] 1/4") and "eta" in lines[0]
    assert lines[-1].startswith("[g] 4/4") and len(lines) == 5
    assert "\r" not in buf.getvalue()


def test_no_update_no_output_in_line_mode():
    buf = io.StringIO()
    Progress("quiet", stream=buf).close()
    assert buf.getvalue() == ""


def test_terminal_bar_without_tqdm(monkeypatch):
    monkeypatch.setenv(_progress.ENV, "bar")
    tty = FakeTTY()
    bar = Progress("mp", stream=tty)
    bar.update(0.25, note="n")
    bar.update(1.0)
    bar.close()
    out = tty.getvalue()
    assert out.startswith("\rmp [") and "100.0%" in out and out.endswith("\n")


def test_terminal_uses_tqdm_when_installed():
    pytest.importorskip("tqdm")
    tty = FakeTTY()
    assert choose_mode(tty) == "tqdm"
    bar = Progress("tq", 3, stream=tty)
    bar.advance(note="a")
    bar.advance(3 - 1)
    bar.message("dashboard: http://x")
    bar.close()
    out = tty.getvalue()
    assert "tq" in out and "3/3" in out and "dashboard: http://x" in out


def test_a_closed_stream_switches_the_reporter_off():
    buf = io.StringIO()
    buf.close()
    assert choose_mode(buf) == "off"
    bar = Progress("c", stream=buf)
    bar.update(0.5)
    bar.message("x")
    bar.close()  # no ValueError


@pytest.mark.parametrize("mode", ["lines", "bar", "tqdm"])
def test_a_stream_that_breaks_midway_does_not_raise(monkeypatch, mode):
    if mode == "tqdm":
        pytest.importorskip("tqdm")
    monkeypatch.setenv(_progress.ENV, mode)
    bar = Progress("b", 2, stream=Broken())
    bar.line_interval = 0.0
    bar.update(note="1")
    bar.update(note="2")
    bar.message("m")
    bar.close()
    assert bar.mode == "off"


def test_notebook_stream_is_recognised():
    class OutStream(io.StringIO):  # ipykernel.iostream.OutStream, as a notebook's sys.stderr
        pass
    OutStream.__module__ = "ipykernel.iostream"
    s = OutStream()
    assert in_notebook(s) and not in_notebook(io.StringIO())
    assert choose_mode(s) in ("tqdm", "lines")


def test_forced_off(monkeypatch):
    monkeypatch.setenv(_progress.ENV, "off")
    tty = FakeTTY()
    bar = Progress("f", stream=tty)
    bar.update(0.5)
    bar.close()
    assert tty.getvalue() == ""


def test_integrators_report_through_it(capsys):
    """``simulate(progress=True)`` with stderr not a terminal: one line, no carriage return."""
    from numerics import Problem, simulate
    simulate(Problem.preset("logistic-toy"), t_end=10, backend="numpy", progress=True)
    err = capsys.readouterr().err
    assert err.startswith("[numpy/") and "\r" not in err and err.count("\n") == 1


def test_a_closed_stderr_file_descriptor_does_not_stop_a_simulation():
    """stderr's descriptor closed under a running process (EBADF on write): the flow still finishes."""
    import subprocess
    import sys
    code = ("import os; os.close(2)\n"
            "from numerics import Problem, simulate\n"
            "tr = simulate(Problem.preset('logistic-toy'), t_end=10, backend='numpy', progress=True)\n"
            "print('ok', tr.n_steps > 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok True"
