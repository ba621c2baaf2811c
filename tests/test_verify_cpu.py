"""A claim's ``cpu_seconds`` counts the CPU of the processes it started that are still alive when it ends (a dask
cluster kept for the next claim's grid), once: a child reaped later moves from the live sum to the reaped one."""
from __future__ import annotations

import subprocess
import sys

import pytest

from proofs_check import Claim, Control, Outcome, run_claim
from proofs_check.claim import cpu_time
from proofs_check import Context

BURN = 0.5  # CPU seconds the child burns before it idles
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live descendants via /proc (Linux)")


def _burner():
    code = ("import time\nt = time.process_time()\nwhile time.process_time() - t < %r:\n    pass\n"
            "print('done', flush=True)\ntime.sleep(60)\n" % BURN)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "done"
    return proc


def test_a_live_child_counts_in_the_claim_and_not_again_when_reaped():
    kept = []

    def check(ctx):
        kept.append(_burner())  # still running (idle) when the claim returns
        return Outcome("verified", "started a child")

    claim = Claim(id="KEEPS", title="keeps a child", statement="x", provenance="D", assumptions="-",
                  evidence_kind="exact symbolic proof", check_description="starts a child", expected="verified",
                  check=check, control=Control("none", lambda ctx: Outcome("refuted", "x", counterexample={"x": 1})),
                  group="KEEPS")
    try:
        res = run_claim(claim, Context())
        assert res.cpu_seconds >= BURN
        before = cpu_time()
    finally:
        for p in kept:
            p.kill()
            p.wait()
            p.stdout.close()
    assert cpu_time() - before < 0.2  # reaping moves its time, it does not add it again
