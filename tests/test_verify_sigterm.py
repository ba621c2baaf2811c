"""SIGTERM during verify takes Ctrl-C's path: one line, exit 143, no half-written report folder, no stale lock."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from proofs_check.cli import EXIT_TERMINATED, sigterm_handler

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# SIGTERM arrives while the report is being written: report.json is already in the temporary folder
SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from proofs_check.report import _report
    original = _report.build_markdown
    def build_markdown(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return original(*args, **kwargs)
    _report.build_markdown = build_markdown
    from softpolar._cli import main
    sys.exit(main(["verify", "--claims", sys.argv[1], "--jobs", sys.argv[2], "--out", "r"]))
""")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_while_the_report_is_written_cleans_up(tmp_path, jobs):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-c", SCRIPT, "C02,C08", jobs], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == EXIT_TERMINATED == 143, (p.returncode, p.stderr[-2000:])
    assert p.stderr.strip().splitlines() == ["softpolar: terminated (SIGTERM)"], p.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == []  # no report, no .r.tmp-*, no .r.lock


def test_a_process_forked_from_the_cli_still_dies_of_sigterm():
    previous = signal.signal(signal.SIGTERM, sigterm_handler(os.getpid()))
    try:
        pid = os.fork()
        if pid == 0:  # the child: inherits the handler, must die of the signal (a worker's terminate())
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                signal.pause()
            finally:
                os._exit(3)
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status
