"""Training grids inside ``verify --jobs`` grow their local dask cluster when a finished claim process hands its
CPUs on (``proofs_check._parallel.take_freed_cpus``); the run files do not depend on it."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("distributed")

from softpolar.experiments import _grid  # noqa: E402
from softpolar.experiments._grid import run_grid  # noqa: E402
from softpolar.experiments._train import RunConfig  # noqa: E402

TINY = dict(d_model=16, n_heads=2, n_train=256, epochs=1, batch_size=64, n_eval=64, n_flip_pairs=20)


def _tiny(kind):
    return RunConfig(task="classification", attention=kind, positional="none", vocab_size=41, n_layers=1, **TINY)


def _same(a, b):
    drop = ("seconds", "cpu_seconds")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_a_local_grid_grows_by_the_cpus_handed_on_and_keeps_its_numbers(tmp_path, monkeypatch):
    """Worker processes, as in the product (threads would share torch's global random state between runs)."""
    import proofs_check._parallel as par

    handed = iter([[], [7]])  # nothing before the grid, then one CPU (id 7) handed on while it runs
    monkeypatch.setattr(par, "take_freed_cpus", lambda: next(handed, []))
    monkeypatch.delenv(_grid.WORKERS_ENV, raising=False)
    monkeypatch.setattr(_grid, "default_workers", lambda device="cpu": 1)
    configs = [_tiny("softmax"), _tiny("sigmoid-unnorm"), _tiny("linear-unnorm")]
    _grid.close_kept_cluster()
    try:
        grown = run_grid(configs, tmp_path / "g", progress=False, keep_cluster=True)
        assert _grid._SHARED["key"] == (2, True)  # one worker, then one per CPU handed on
        _grid._SHARED["client"].wait_for_workers(2, timeout=60)
        assert len(_grid._SHARED["client"].scheduler_info()["workers"]) == 2
        # the next grid of the process finds the grown cluster (and would grow it, not restart it)
        kept = _grid._SHARED["cluster"]
        monkeypatch.setattr(_grid, "default_workers", lambda device="cpu": 2)
        run_grid([_tiny("uniform")], tmp_path / "n", progress=False, keep_cluster=True)
        assert _grid._SHARED["cluster"] is kept
    finally:
        _grid.close_kept_cluster()
    inline = run_grid(configs, tmp_path / "i", scheduler="inline", progress=False)
    assert all(_same(a, b) for a, b in zip(grown, inline))  # bit for bit whatever the number of workers


def test_a_grid_with_its_size_given_does_not_grow(tmp_path, monkeypatch):
    import proofs_check._parallel as par

    calls = []
    monkeypatch.setattr(par, "take_freed_cpus", lambda: calls.append(1) or [7])
    run_grid([_tiny("softmax")], tmp_path / "g", processes=False, progress=False, n_workers=1)
    monkeypatch.setenv(_grid.WORKERS_ENV, "1")
    run_grid([_tiny("uniform")], tmp_path / "h", processes=False, progress=False)
    assert calls == []  # n_workers or SOFTPOLAR_GRID_WORKERS fix the size: no CPU is taken
