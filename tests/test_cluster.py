"""Scale-out on a real cluster that loses a worker: `dask scheduler` + two `dask worker` on loopback.

Each test starts a scheduler and two single-threaded workers (``--no-nanny``: a killed worker stays
dead, nothing restarts it), runs a softpolar command through ``--scheduler tcp://127.0.0.1:PORT``,
kills one worker with SIGKILL while the scheduler shows it processing a task, and checks:

* the run completes (exit 0) with one worker left;
* nothing is recorded twice (the atlas journal has one line per box; the grid one file per run)
  and nothing is lost (the same boxes / runs as a local run);
* the results match a run without dask (``--scheduler inline``) bit for bit, timings aside.

Slow (a minute or more on 2 shared cores); ``.ci/run`` runs this file on its own.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
#: wall-clock bounds (a loaded 2-core machine): cluster start, one command
START_S, RUN_S = 120, 900
#: record fields that are measurements of time (they differ between any two runs)
TIMING = {"seconds", "cpu_seconds", "digest"}


def _dask(*args) -> list[str]:
    """The ``dask`` console script next to this interpreter (what a user types), else the module."""
    script = Path(sys.executable).with_name("dask")
    if script.exists():
        return [str(script), *args]
    module = {"scheduler": "distributed.cli.dask_scheduler", "worker": "distributed.cli.dask_worker"}[args[0]]
    return [sys.executable, "-m", module, *args[1:]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[key] = "1"
    return env


class Cluster:
    """A scheduler and named workers on loopback, every process ended (by its pid) on exit."""

    def __init__(self, tmp: Path, workers=("w1", "w2")):
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs = tmp / "cluster-logs"
        self.logs.mkdir()
        self._start("scheduler", _dask("scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                       "--no-dashboard"))
        for name in workers:
            self._start(name, _dask("worker", self.address, "--name", name, "--nthreads", "1", "--no-nanny",
                                    "--no-dashboard", "--death-timeout", "60"))
        from distributed import Client

        self.client = Client(self.address, timeout=START_S)
        self.client.wait_for_workers(len(workers), timeout=START_S)

    def _start(self, name, cmd):
        log = open(self.logs / f"{name}.log", "wb")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(),
                                            cwd=self.logs, start_new_session=True)
        log.close()

    def worker_address(self, name) -> str | None:
        for addr, info in self.client.scheduler_info()["workers"].items():
            if info.get("name") == name:
                return addr
        return None

    def busy(self, name) -> bool:
        """True when the scheduler shows worker ``name`` processing at least one task."""
        addr = self.worker_address(name)
        return addr is not None and bool(self.client.processing().get(addr))

    def kill(self, name):
        self.procs[name].send_signal(signal.SIGKILL)
        self.procs[name].wait(timeout=30)

    def close(self):
        try:
            self.client.close()
        finally:
            for p in reversed(list(self.procs.values())):  # the workers first, then the scheduler
                if p.poll() is None:
                    p.terminate()
            for p in self.procs.values():
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                p.wait()


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.close()


def _softpolar(*args) -> list[str]:
    return [sys.executable, "-m", "softpolar", *args]


def _run(cmd) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=RUN_S)


def _run_killing(cmd, cluster, victim, ready) -> subprocess.CompletedProcess:
    """Run ``cmd``; SIGKILL worker ``victim`` as soon as ``ready()`` holds and the victim is busy."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    killed_busy = False
    deadline = time.monotonic() + RUN_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if ready() and cluster.busy(victim):
                cluster.kill(victim)
                killed_busy = True
                break
            time.sleep(0.02)
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert killed_busy, f"the run ended before worker {victim} could be killed mid-run:\n{err[-2000:]}"
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _strip(value):
    """``value`` without the timing fields (recursively)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def test_atlas_survives_a_lost_worker_and_matches_a_local_run(tmp_path, cluster):
    local, remote = tmp_path / "local", tmp_path / "remote"
    spec = ["atlas", "uniform3", "--min-width", "1/16", "--no-progress", "--map-size", "128"]
    ref = _run(_softpolar(*spec, "--scheduler", "inline", "--out", str(local)))
    assert ref.returncode == 0, ref.stderr
    journal = remote / "journal.jsonl"

    def ready():  # some boxes done, many to go
        return journal.is_file() and journal.read_bytes().count(b"\n") >= 20

    res = _run_killing(_softpolar(*spec, "--scheduler", cluster.address, "--out", str(remote)), cluster, "w2", ready)
    assert res.returncode == 0, res.stderr
    assert cluster.procs["w2"].poll() is not None and cluster.procs["w1"].poll() is None
    keys = [tuple(json.loads(line)["key"]) for line in journal.read_text().splitlines()]
    ref_keys = [tuple(json.loads(line)["key"]) for line in (local / "journal.jsonl").read_text().splitlines()]
    assert len(keys) == len(set(keys)), "a box was recorded twice"
    assert set(keys) == set(ref_keys), "boxes lost or added"
    a, b = (json.loads((d / "atlas.json").read_text()) for d in (local, remote))
    assert _strip(a) == _strip(b)  # every box, enclosure bound and float64 comparison, bit for bit
    assert (local / "float64.npy").read_bytes() == (remote / "float64.npy").read_bytes()


def test_grid_survives_a_lost_worker_and_matches_a_local_run(tmp_path, cluster):
    local, remote = tmp_path / "local", tmp_path / "remote"
    spec = ["experiment", "induction", "--grid", "tiny", "--no-progress", "--no-figures"]
    ref = _run(_softpolar(*spec, "--scheduler", "inline", "--out", str(local)))
    assert ref.returncode == 0, ref.stderr
    res = _run_killing(_softpolar(*spec, "--scheduler", cluster.address, "--out", str(remote)), cluster, "w2",
                       lambda: True)
    assert res.returncode == 0, res.stderr
    assert cluster.procs["w2"].poll() is not None
    names = sorted(p.name for p in (remote / "runs").glob("*.json"))
    assert names == sorted(p.name for p in (local / "runs").glob("*.json")) and names  # nothing lost
    for name in names:
        a, b = (json.loads((d / "runs" / name).read_text()) for d in (local, remote))
        assert _strip(a) == _strip(b), name  # the trained model's metrics, bit for bit
