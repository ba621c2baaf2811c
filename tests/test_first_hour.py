"""What a new user meets first: ``softpolar list`` fits 100 columns, ``verify`` prints results on stdout
and progress on stderr, report.md leads with the summary."""
from __future__ import annotations

import re

from proofs_check.cli import LIST_WIDTH, list_table
from proofs_check import registry
from softpolar import main


def test_list_fits_100_columns_and_names_every_claim(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # a wide terminal still gets the 100-column table
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= LIST_WIDTH
    ids = {x.split()[0] for x in lines if x and not x.startswith(" ")}
    assert set(registry()) <= ids
    assert "$" not in out and "\\" not in out  # titles' math reads as ASCII on a terminal


def test_list_table_wraps_to_a_narrow_terminal():
    text = list_table(registry().values(), 80)
    assert max(len(x) for x in text.splitlines()) <= 80
    unwrapped = list_table(registry().values(), 10_000)
    assert max(len(x) for x in unwrapped.splitlines()) > 100  # the width bound is what keeps it narrow


def test_verify_results_on_stdout_progress_on_stderr(tmp_path, capsys):
    """``softpolar verify > log.txt`` captures the results: a line per claim and the summary go to stdout."""
    assert main(["verify", "--claims", "C04,C22", "--jobs", "1", "--out", str(tmp_path / "r")]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert re.match(r"\[ 1/2\] ok   C04 ", lines[0]) and re.match(r"\[ 2/2\] ok   C22 ", lines[1])
    assert lines[-1].startswith("softpolar verify: 2/2 claims passed")
    assert "C04" not in err and "claims passed" not in err


def test_verify_json_keeps_stdout_pure_json(tmp_path, capsys):
    import json
    assert main(["verify", "--claims", "C04", "--jobs", "1", "--json", "--out", str(tmp_path / "r")]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["passed"] == 1 and "[ 1/1] ok   C04" in err


def test_a_long_claim_shows_progress_on_stderr(tmp_path, capsys, monkeypatch):
    """A claim running past LONG_CLAIM_SECONDS shows its elapsed time and what its code reports; a short one
    shows nothing (the same run, the threshold is what decides)."""
    import dataclasses

    from numerics.progress import report
    from proofs_check.cli import _cmd_verify
    from proofs_check import catalog as _registry

    reg = _registry.registry()

    def slow_check(ctx):
        from numerics import progress as _progress
        hb = _progress.current_heartbeat()  # the heartbeat verify runs this claim under
        assert hb is not None
        for k in range(3):
            report(k / 3, f"step {k + 1} of 3")
            _wait_for_beats(hb, hb.beats + 1)  # a loaded machine may be slow to schedule the thread
        return reg["C04"].check(ctx)

    slow = dataclasses.replace(reg["C04"], check=slow_check)
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, "C04": slow})
    monkeypatch.setenv("SOFTPOLAR_PROGRESS", "lines")
    monkeypatch.setattr(_cmd_verify, "LONG_CLAIM_SECONDS", 0.1)
    monkeypatch.setattr(_cmd_verify, "PROGRESS_INTERVAL", 0.2)
    assert main(["verify", "--claims", "C04", "--jobs", "1", "--out", str(tmp_path / "r")]) == 0
    out, err = capsys.readouterr()
    assert "[verify C04]" in err and "of 3" in err and "[verify C04]" not in out
    monkeypatch.setattr(_cmd_verify, "LONG_CLAIM_SECONDS", 60.0)
    monkeypatch.setattr(_registry, "registry", lambda: reg)  # the real, short C04
    assert main(["verify", "--claims", "C04", "--jobs", "1", "--out", str(tmp_path / "r")]) == 0
    assert "[verify C04]" not in capsys.readouterr().err


def _wait_for_beats(hb, count, timeout=30.0):
    import time
    end = time.monotonic() + timeout
    while hb.beats < count:
        assert time.monotonic() < end, "the heartbeat never beat"
        time.sleep(0.01)


def test_heartbeat_is_silent_for_a_short_task_and_off_when_disabled():
    import io
    import time

    from numerics.progress import Heartbeat, report

    buf = io.StringIO()
    with Heartbeat("t", after=0.05, interval=0.05, stream=buf, mode="lines") as hb:
        _wait_for_beats(hb, 1)
        report(0.5, "half")
        _wait_for_beats(hb, hb.beats + 2)
    text = buf.getvalue()
    assert text.startswith("[t] ") and "running" in text and "50.0%" in text and "half" in text
    for hb in (Heartbeat("t", after=5, stream=(buf := io.StringIO()), mode="lines"),
               Heartbeat("t", after=0.0, interval=0.01, stream=(buf2 := io.StringIO()), enabled=False)):
        with hb:
            time.sleep(0.1)
    assert buf.getvalue() == "" and buf2.getvalue() == ""
    report(0.3, "no heartbeat active")  # a no-op outside a heartbeat
