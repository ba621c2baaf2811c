"""`softpolar verify --jobs`: claims on several processes, the report identical to the serial run."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from proofs_check import parallel as _parallel, catalog as _registry
from proofs_check import Context, Control, Outcome
from softpolar import main

# three groups (calculus, logistic, identities): three units, so --jobs 2 really runs two processes
CLAIMS = "C02,C14,C08,ID.replicator"

needs_fork = pytest.mark.skipif(not _parallel.can_fork(), reason="no fork start method: verify runs serially")


def _read(out):
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def _comparable(data):
    for c in data["claims"]:
        c.pop("seconds")
        c.pop("cpu_seconds")
    data["summary"].pop("total_seconds")
    data["environment"]["command"] = [a for a in data["environment"]["command"] if a not in ("1", "2")]
    return data


@needs_fork
def test_two_jobs_give_the_serial_report(tmp_path):
    serial, par = tmp_path / "serial", tmp_path / "par"
    assert main(["verify", "--claims", CLAIMS, "--jobs", "1", "--out", str(serial)]) == 0
    assert main(["verify", "--claims", CLAIMS, "--jobs", "2", "--out", str(par)]) == 0
    a, b = _comparable(_read(serial)), _comparable(_read(par))
    assert [c["id"] for c in b["claims"]] == ["C02", "C14", "C08", "ID.replicator"]  # the order asked for
    assert a["claims"] == b["claims"]  # verdicts, evidence, counterexamples, details: all equal
    assert "--jobs" in _read(par)["environment"]["command"]


@needs_fork
def test_workers_run_the_selected_claim_objects(tmp_path, monkeypatch):
    """A claim patched in this process (not in any module a fresh process would import) is the one run."""
    reg = _registry.registry()
    weak = dataclasses.replace(
        reg["C02"], control=Control("a control without power", lambda ctx: Outcome("verified", "accepted")))
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, "C02": weak})
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C02,C14", "--jobs", "2", "--out", str(out)]) == 1
    c02, c14 = _read(out)["claims"]
    assert c02["negative_control"]["failed_as_required"] is False and c14["passed"]


def test_units_keep_groups_together_and_split_solo_claims():
    claims = _registry.select(["C21", "C25", "C22", "C02", "C01"])
    units = _parallel.units(claims)
    ids = [[claims[k].id for k in u] for u in units]
    assert ids == [["C21", "C22"], ["C25"], ["C02", "C01"]]  # report order inside a unit
    order = _parallel.plan(claims, "quick")
    assert [claims[u[0]].id for u in order][0] == "C25"  # the longest unit starts first


def test_claims_that_read_another_claims_grid_run_after_it():
    """KSINK.* read the induction grid C31 trains: with C31 they join its unit (never two trainings at once)."""
    assert set(_parallel.AFTER.values()) <= set(_parallel.SOLO)
    reg = _registry.registry()
    ksink = [cid for cid in reg if cid.startswith("KSINK.")]
    if not ksink:
        pytest.skip("no KSINK claims registered")
    claims = [reg[c] for c in ("C31", "C32", *ksink)]
    ids = [[claims[k].id for k in u] for u in _parallel.units(claims)]
    assert ids == [["C31", *ksink], ["C32"]]
    alone = [[c.id for c in (reg[k] for k in ksink)][j] for u in _parallel.units([reg[k] for k in ksink]) for j in u]
    assert alone == ksink  # without C31 they keep their own group's unit


def test_estimates_come_from_the_previous_report(tmp_path):
    claims = _registry.select(["C02", "C08"])
    (tmp_path / "report.json").write_text(json.dumps(
        {"environment": {"profile": "quick"}, "claims": [{"id": "C08", "seconds": 99.0}]}))
    assert _parallel.estimates(claims, "quick", tmp_path) == [1.0, 99.0]
    assert _parallel.estimates(claims, "full", tmp_path) == [1.0, 1.0]  # another profile's times are ignored
    (tmp_path / "report.json").write_text("not json")
    assert _parallel.estimates(claims, "quick", tmp_path) == [1.0, 1.0]


def test_one_job_is_the_serial_path():
    claims = _registry.select(["C02", "C08"])
    got = [(k, r.claim.id, r.passed) for k, r in _parallel.run_claims(claims, Context(), jobs=1)]
    assert got == [(0, "C02", True), (1, "C08", True)]


@pytest.mark.parametrize("bad", ["0", "-1", "x", "2.5", "100000"])
def test_bad_jobs_exit_2(tmp_path, capsys, bad):
    assert main(["verify", "--claims", "C02", "--jobs", bad, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "jobs=" in err[0] and err[0].startswith("softpolar: error:")


@needs_fork
def test_a_dead_worker_costs_time_not_claims(tmp_path, monkeypatch, capsys):
    """A claim process that dies (here: exits in the worker) leaves its claims to the verify process."""
    import os

    parent = os.getpid()
    reg = _registry.registry()
    c14 = reg["C14"]

    def dies_in_a_worker(ctx):
        if os.getpid() != parent:
            os._exit(3)
        return c14.check(ctx)
    fragile = dataclasses.replace(c14, check=dies_in_a_worker)
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, "C14": fragile})
    out = tmp_path / "r"
    assert main(["verify", "--claims", "C02,C14,ID.replicator", "--jobs", "2", "--out", str(out)]) == 0
    assert [c["id"] for c in _read(out)["claims"]] == ["C02", "C14", "ID.replicator"]
    assert all(c["passed"] for c in _read(out)["claims"])
    assert "a claim process died" in capsys.readouterr().err


_SLOW_VERIFY = r'''
import os, sys, time
from proofs_check import Claim, Control, Outcome, register
from softpolar._cli import main

marks = sys.argv[2]

def slow(ctx):
    open(os.path.join(marks, f"worker-{os.getpid()}"), "w").close()
    time.sleep(120)
    return Outcome("verified", "slept")

for cid in ("SLOWA", "SLOWB"):
    register(Claim(id=cid, title="sleeps", statement="s", provenance="D", assumptions="-",
                   evidence_kind="property search", check_description="sleeps", expected="verified",
                   check=slow, control=Control("-", lambda ctx: Outcome("refuted", "-")), group=cid))
sys.exit(main(["verify", "--claims", "SLOWA,SLOWB", "--jobs", "2", "--out", sys.argv[1]]))
'''


@needs_fork
@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_verify_leaves_no_lock_and_no_worker(tmp_path):
    """SIGKILL on verify --jobs 2 mid-claim: the next run on the same folder is not refused, and the claim
    processes end with their parent (they held the inherited --out lock before, until their claim ended)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from numerics.io import folder_lock

    marks, out = tmp_path / "marks", tmp_path / "r"
    marks.mkdir()
    script = tmp_path / "slow_verify.py"
    script.write_text(_SLOW_VERIFY)
    proc = subprocess.Popen([sys.executable, str(script), str(out), str(marks)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(list(marks.iterdir())) < 2:  # both claims running, each in its own worker
            assert proc.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.2)
        workers = [int(p.name.split("-")[1]) for p in marks.iterdir()]
        assert os.getpid() not in workers and proc.pid not in workers
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with folder_lock(out, "--out"):  # not refused: no process holds the lock any more
        pass

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    deadline = time.monotonic() + 30
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in workers), "a claim process outlived the killed verify"


def test_cpu_shares_split_the_cpus_disjointly():
    assert _parallel.cpu_shares([1, 0], 2) == [[0], [1]]
    assert _parallel.cpu_shares(range(5), 2) == [[0, 1, 2], [3, 4]]
    assert _parallel.cpu_shares(range(4), 4) == [[0], [1], [2], [3]]
    assert _parallel.cpu_shares([0], 2) is None  # fewer CPUs than jobs: no shares
    for n, jobs in ((16, 3), (7, 7), (9, 2)):
        parts = _parallel.cpu_shares(range(n), jobs)
        assert sorted(c for p in parts for c in p) == list(range(n)) and len(parts) == jobs
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


def _probe_claim(cid, check, title):
    """A throw-away claim whose check records where and how it ran (its control is refuted, as required)."""
    return _registry.Claim(id=cid, title=title, statement="x", provenance="D", assumptions="-",
                           evidence_kind="exact symbolic proof", check_description=title, expected="verified",
                           check=check, control=Control("the opposite",
                                                        lambda ctx: Outcome("refuted", "no", counterexample={"x": 1})),
                           group=cid)


def _affinity_claim(cid):
    import os
    import time

    def check(ctx):
        time.sleep(0.5)  # long enough for the other worker to take the other unit
        from softpolar.experiments.grid import usable_cores
        return Outcome("verified", "affinity", details={"pid": os.getpid(), "cpus": sorted(os.sched_getaffinity(0)),
                                                        "usable": usable_cores()})

    return _probe_claim(cid, check, "records its CPUs")


@needs_fork
@pytest.mark.skipif(_parallel.cpu_count() < 2, reason="one CPU: no shares")
def test_each_worker_runs_on_its_own_cpu_share(tmp_path, monkeypatch):
    """--jobs 2: a worker (and what it starts) sees only its share, so a claim's 'usable cores' is its share."""
    reg = _registry.registry()
    extra = {c: _affinity_claim(c) for c in ("AFFA", "AFFB", "AFFC", "AFFD")}
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, **extra})
    out = tmp_path / "r"
    assert main(["verify", "--claims", ",".join(extra), "--jobs", "2", "--out", str(out)]) == 0
    seen = [c["outcome"]["details"] for c in _read(out)["claims"]]
    shares = _parallel.cpu_shares(_parallel.affinity(), 2)
    by_pid = {s["pid"]: (tuple(s["cpus"]), s["usable"]) for s in seen}
    assert len(by_pid) == 2  # two workers ran them
    assert sorted(cpus for cpus, _ in by_pid.values()) == sorted(tuple(s) for s in shares)  # disjoint shares
    assert all(usable == len(cpus) for cpus, usable in by_pid.values())


@needs_fork
def test_workers_draw_the_figures_and_the_files_are_the_serial_ones(tmp_path, monkeypatch):
    """With --jobs the figures are drawn in the workers, next to their claims (the verify process only writes
    the bytes); every file of the report folder but the timings is byte for byte the serial run's."""
    import os

    from proofs_check.report import DRAW

    claims = "C15,C18,MARGIN,C02"  # three with figures (C15 two), in three units
    serial, par = tmp_path / "serial", tmp_path / "par"
    assert main(["verify", "--claims", claims, "--jobs", "1", "--out", str(serial)]) == 0
    drawn_in = []
    real = DRAW.copy()
    for kind, fn in real.items():
        monkeypatch.setitem(DRAW, kind, lambda data, path, fn=fn: (drawn_in.append(os.getpid()),
                                                                            fn(data, path))[1])
    assert main(["verify", "--claims", claims, "--jobs", "2", "--out", str(par)]) == 0
    assert drawn_in == []  # nothing drawn in this (the verify) process: the workers drew every figure
    names = sorted(p.name for p in serial.iterdir())
    assert names == sorted(p.name for p in par.iterdir())
    figures = [n for n in names if n.endswith((".png", ".pdf"))]
    assert len(figures) == 8  # flow_logistic, simplex_n3, polarization_rate, margin_direction: PNG + PDF each
    for n in figures:
        assert (serial / n).read_bytes() == (par / n).read_bytes(), n
    assert _read(serial)["figures"] == _read(par)["figures"]
    assert _read(serial)["figure_vectors"] == _read(par)["figure_vectors"]


def test_a_prerendered_figure_is_written_from_its_bytes(tmp_path):
    from proofs_check import Figure
    from proofs_check.report import draw

    fig = Figure("x.png", "no-such-kind", "a caption", rendered={"x.png": b"png", "x.pdf": b"pdf"})
    files = draw(fig, tmp_path / "x.png")  # the kind is never looked up
    assert [p.name for p in files] == ["x.png", "x.pdf"]
    assert (tmp_path / "x.png").read_bytes() == b"png" and (tmp_path / "x.pdf").read_bytes() == b"pdf"


def _threads_claim(cid):
    def check(ctx):
        import os
        import sys

        had = "torch" in sys.modules
        import torch
        return Outcome("verified", "threads", details={"torch_before": had, "threads": torch.get_num_threads(),
                                                       "omp": os.environ.get("OMP_NUM_THREADS"),
                                                       "cpus": len(os.sched_getaffinity(0))})
    return _probe_claim(cid, check, "records torch's threads")


@needs_fork
@pytest.mark.skipif(_parallel.cpu_count() < 2, reason="one CPU: no shares")
def test_a_worker_that_imports_torch_late_gets_its_share_as_threads(tmp_path):
    """A worker does not import torch up front; torch imported later in it runs as many threads as its share."""
    import subprocess
    import sys

    # in a fresh process (this one has torch imported already): torch is not imported before the claims run
    code = ("import sys, json\nfrom proofs_check import catalog as _registry\nsys.path.insert(0, sys.argv[1])\n"
            "from test_parallel import _threads_claim\nreg = _registry.registry()\n"
            "extra = {c: _threads_claim(c) for c in ('THRA', 'THRB')}\n"
            "_registry.registry = lambda: {**reg, **extra}\nfrom softpolar._cli import main\n"
            "assert 'torch' not in sys.modules\n"
            "rc = main(['verify', '--claims', 'THRA,THRB', '--jobs', '2', '--out', sys.argv[2]])\n"
            "print(rc)")
    out = tmp_path / "r"
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(out)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("0"), proc.stderr[-1500:]
    seen = [c["outcome"]["details"] for c in _read(out)["claims"]]
    assert all(s["torch_before"] is False for s in seen)  # the worker did not import it up front
    assert all(s["threads"] == s["cpus"] == int(s["omp"]) for s in seen), seen


@needs_fork
def test_a_worker_forked_after_torch_was_imported_runs_torch_on_one_thread():
    """torch's OpenMP pool does not survive fork: a worker forked from a process that had imported torch (this
    test session) runs torch on one thread, while what it starts still reads its share from OMP_NUM_THREADS."""
    import multiprocessing
    import os

    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(2)
    torch.ones(64, 64) @ torch.ones(64, 64)  # the parent's pool has run
    torch.set_num_threads(old)

    def child(conn):
        _parallel.worker_init(4)
        conn.send((torch.get_num_threads(), os.environ["OMP_NUM_THREADS"]))
        conn.close()

    ctx = multiprocessing.get_context("fork")
    r, w = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=child, args=(w,))
    proc.start()
    w.close()
    assert r.poll(60), "the forked worker did not answer"
    threads, omp = r.recv()
    proc.join(30)
    assert threads == _parallel.FORKED_TORCH_THREADS == 1 and omp == "4"


def _greedy_claim(cid, wait_s):
    def check(ctx):
        import os
        import threading
        import time

        before = sorted(os.sched_getaffinity(0))
        stop = threading.Event()
        helper = threading.Thread(target=stop.wait)  # a thread started before the CPUs came (dask's loop)
        helper.start()
        got, deadline = [], time.monotonic() + wait_s
        while not got and time.monotonic() < deadline:
            got = _parallel.take_freed_cpus()
            time.sleep(0.05)
        other = sorted(os.sched_getaffinity(helper.native_id))
        stop.set()
        helper.join()
        return Outcome("verified", "cpus", details={"before": before, "got": sorted(got), "thread": other,
                                                    "after": sorted(os.sched_getaffinity(0))})
    return _probe_claim(cid, check, "waits for freed CPUs")


@needs_fork
@pytest.mark.skipif(_parallel.cpu_count() < 2, reason="one CPU: no shares")
@pytest.mark.parametrize("first", ["LONGC", "SHORTC"])
def test_a_finished_worker_hands_its_cpus_to_the_claim_still_running(tmp_path, monkeypatch, first):
    """--jobs 2: once the short claim's worker has no unit left, the long claim's process gets its CPUs (every
    thread of it, so that what it starts later may run there), also when the short claim ended before the long
    one had started (the second submitted); serially there is nothing to take."""
    reg = _registry.registry()
    extra = {"LONGC": _greedy_claim("LONGC", 30.0), "SHORTC": _greedy_claim("SHORTC", 0.0)}
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, **extra})
    monkeypatch.setattr(_parallel, "DEFAULT_SECONDS", {"quick": {first: 10.0}})  # submitted first
    out = tmp_path / "r"
    assert main(["verify", "--claims", "LONGC,SHORTC", "--jobs", "2", "--out", str(out)]) == 0
    long_, short = (c["outcome"]["details"] for c in _read(out)["claims"])
    shares = _parallel.cpu_shares(_parallel.affinity(), 2)
    assert long_["before"] in shares and short["before"] in shares and long_["before"] != short["before"]
    assert long_["got"] == short["before"]  # the short claim's whole share
    assert long_["after"] == long_["thread"] == sorted(long_["before"] + short["before"])
    assert short["got"] == []  # the long claim's share was not free while it ran
    # the serial path: nothing is ever handed on
    assert main(["verify", "--claims", "SHORTC", "--jobs", "1", "--out", str(tmp_path / "s")]) == 0
    assert _read(tmp_path / "s")["claims"][0]["outcome"]["details"]["got"] == []
