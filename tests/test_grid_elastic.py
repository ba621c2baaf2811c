"""Training grids inside ``verify --jobs`` grow their local dask cluster when a finished claim process hands its
CPUs on (``proofs_check.parallel.take_freed_cpus``); the run files do not depend on it."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("distributed")

from softpolar.experiments import grid
from softpolar.experiments import run_grid
from softpolar.experiments import RunConfig

TINY = dict(d_model=16, n_heads=2, n_train=256, epochs=1, batch_size=64, n_eval=64, n_flip_pairs=20)


def _tiny(kind):
    return RunConfig(task="classification", attention=kind, positional="none", vocab_size=41, n_layers=1, **TINY)


def _same(a, b):
    drop = ("seconds", "cpu_seconds")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_a_local_grid_grows_by_the_cpus_handed_on_and_keeps_its_numbers(tmp_path, monkeypatch):
    """Worker processes, as in the product (threads would share torch's global random state between runs)."""
    import proofs_check.parallel as par

    handed = iter([[], [7]])  # nothing before the grid, then one CPU (id 7) handed on while it runs
    monkeypatch.setattr(par, "take_freed_cpus", lambda: next(handed, []))
    monkeypatch.delenv(grid.WORKERS_ENV, raising=False)
    monkeypatch.setattr(grid, "default_workers", lambda device="cpu": 1)
    configs = [_tiny("softmax"), _tiny("sigmoid-unnorm"), _tiny("linear-unnorm")]
    grid.close_kept_cluster()
    try:
        grown = run_grid(configs, tmp_path / "g", progress=False, keep_cluster=True)
        assert grid.kept_cluster()["key"] == (2, True)  # one worker, then one per CPU handed on
        grid.kept_cluster()["client"].wait_for_workers(2, timeout=60)
        assert len(grid.kept_cluster()["client"].scheduler_info()["workers"]) == 2
        # the next grid of the process finds the grown cluster (and would grow it, not restart it)
        kept = grid.kept_cluster()["cluster"]
        monkeypatch.setattr(grid, "default_workers", lambda device="cpu": 2)
        run_grid([_tiny("uniform")], tmp_path / "n", progress=False, keep_cluster=True)
        assert grid.kept_cluster()["cluster"] is kept
    finally:
        grid.close_kept_cluster()
    inline = run_grid(configs, tmp_path / "i", scheduler="inline", progress=False)
    assert all(_same(a, b) for a, b in zip(grown, inline))  # bit for bit whatever the number of workers


def test_a_grid_with_its_size_given_does_not_grow(tmp_path, monkeypatch):
    import proofs_check.parallel as par

    calls = []
    monkeypatch.setattr(par, "take_freed_cpus", lambda: calls.append(1) or [7])
    run_grid([_tiny("softmax")], tmp_path / "g", processes=False, progress=False, n_workers=1)
    monkeypatch.setenv(grid.WORKERS_ENV, "1")
    run_grid([_tiny("uniform")], tmp_path / "h", processes=False, progress=False)
    assert calls == []  # n_workers or SOFTPOLAR_GRID_WORKERS fix the size: no CPU is taken


def _grid_claim(cid, out):
    from proofs_check import catalog as _registry
    from proofs_check import Control, Outcome

    def check(ctx):
        import os

        # long enough for the short claim's worker to finish and hand its share on while this grid runs
        configs = [_tiny(k) for k in ("softmax", "sigmoid-unnorm", "linear-unnorm", "uniform", "softmax1",
                                      "gated-softmax")]
        grid.close_kept_cluster()
        try:
            run_grid(configs, out, progress=False, keep_cluster=True)
            client = grid.kept_cluster()["client"]
            client.wait_for_workers(grid.kept_cluster()["key"][0], timeout=120)  # a grown worker may still be starting
            cpus = client.run(lambda: sorted(os.sched_getaffinity(0)))
            details = {"key": list(grid.kept_cluster()["key"]), "worker_cpus": sorted(cpus.values()),
                       "mine": sorted(os.sched_getaffinity(0))}
        finally:
            grid.close_kept_cluster()
        return Outcome("verified", "grid", details=details)
    return _registry.Claim(id=cid, title="a grid", statement="x", provenance="D", assumptions="-",
                           evidence_kind="exact symbolic proof", check_description="runs a tiny grid",
                           expected="verified", check=check,
                           control=Control("the opposite",
                                           lambda ctx: Outcome("refuted", "no", counterexample={"x": 1})),
                           group=cid)


def test_in_verify_jobs_the_grid_grows_onto_the_finished_workers_share(tmp_path):
    """End to end: verify --jobs 2 with a grid claim and a short one; the grid's process gets the short claim's
    CPUs and its cluster a second worker, which may run there. In a fresh process: a process that has run dask
    clusters (this one, in the tests above) must not fork claim processes (its threads' locks would be copied
    held), and verify never does: it forks before any claim runs."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from proofs_check import parallel as _parallel

    if not _parallel.can_fork() or _parallel.cpu_count() < 2:
        pytest.skip("needs fork and 2 CPUs")
    shares = _parallel.cpu_shares(_parallel.affinity(), 2)
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\n"
            "from proofs_check import parallel as _parallel, catalog as _registry\n"
            "from test_grid_elastic import _grid_claim\nreg = _registry.registry()\n"
            "extra = {'GRIDC': _grid_claim('GRIDC', sys.argv[2] + '/g'), 'C02': reg['C02']}\n"
            "_registry.registry = lambda: {**reg, **extra}\n"
            "_parallel.DEFAULT_SECONDS = {'quick': {'GRIDC': 10.0}}\n"
            "from softpolar._cli import main\n"
            "sys.exit(main(['verify', '--claims', 'C02,GRIDC', '--jobs', '2', '--out', sys.argv[2] + '/r']))")
    env = {k: v for k, v in __import__("os").environ.items() if k != grid.WORKERS_ENV}
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads((tmp_path / "r" / "report.json").read_text())["claims"][1]["outcome"]["details"]
    everything = sorted(c for s in shares for c in s)
    assert d["mine"] == everything and d["key"] == [2, True], d
    # the worker started on the handed-on CPUs may run on them (the first one keeps its share when the grid
    # started before the short claim ended, and has them too when it started after)
    assert everything in d["worker_cpus"] and len(d["worker_cpus"]) == 2, d
