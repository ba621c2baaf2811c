"""softpolar.cluster.local_cluster: the workers' environment and the calling process's.

dask's nanny applies ``distributed.nanny.pre-spawn-environ`` (``MALLOC_TRIM_THRESHOLD_=65536``,
``OMP_NUM_THREADS=1``, ...) with ``os.environ.update`` in the calling process: after one plain
``LocalCluster`` every later child of the process inherits them (a training grid after an atlas got
MALLOC_TRIM back: 1.8x a run's CPU). The first test shows the hazard on dask itself, the others that
softpolar's clusters leave the process as it was and the workers without MALLOC_TRIM.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("distributed")

KEYS = ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@pytest.fixture
def clean_env(monkeypatch):
    for k in KEYS:
        monkeypatch.delenv(k, raising=False)
    yield
    for k in KEYS:  # whatever a cluster left behind
        os.environ.pop(k, None)


def _worker_env(cluster):
    from distributed import Client
    with Client(cluster) as client:
        return next(iter(client.run(lambda: {k: os.environ.get(k) for k in KEYS}).values()))


def test_a_plain_local_cluster_leaks_the_nanny_environment_into_the_caller(clean_env):
    from distributed import LocalCluster
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                           silence_logs=50)
    try:
        assert os.environ.get("MALLOC_TRIM_THRESHOLD_") == "65536"
        assert _worker_env(cluster)["MALLOC_TRIM_THRESHOLD_"] == "65536"
    finally:
        cluster.close()


def test_local_cluster_keeps_the_callers_environment_and_drops_malloc_trim(clean_env):
    from softpolar.cluster import local_cluster
    os.environ["OMP_NUM_THREADS"] = "3"  # the user's value: kept in the caller
    cluster = local_cluster(1, silence_logs=50)
    try:
        assert {k: os.environ.get(k) for k in KEYS} == {"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "3",
                                                         "MKL_NUM_THREADS": None, "OPENBLAS_NUM_THREADS": None}
        env = _worker_env(cluster)
        assert env["MALLOC_TRIM_THRESHOLD_"] is None
        assert env["MKL_NUM_THREADS"] == "1"  # dask's single-threaded BLAS settings are kept in the workers
    finally:
        cluster.close()


def _env_of_each(client):
    return list(client.run(lambda: {k: os.environ.get(k) for k in KEYS}).values())


def test_a_grown_cluster_gives_its_new_workers_the_same_settings(clean_env):
    """softpolar.cluster.grow: the new workers of a grown cluster have no MALLOC_TRIM and this process stays as it
    was; a plain cluster.scale on the same cluster gives the next new worker dask's defaults (the hazard)."""
    from distributed import Client

    from softpolar.cluster import grow, local_cluster
    cluster = local_cluster(1, silence_logs=50)
    try:
        with Client(cluster) as client:
            grow(cluster, client, 2)
            assert len(client.scheduler_info()["workers"]) == 2
            assert all(e["MALLOC_TRIM_THRESHOLD_"] is None for e in _env_of_each(client))
            assert os.environ.get("MALLOC_TRIM_THRESHOLD_") is None and os.environ.get("OMP_NUM_THREADS") is None
            cluster.scale(3)  # the control: dask's own scale, outside softpolar's settings
            client.wait_for_workers(3, timeout=120)
            assert sorted(str(e["MALLOC_TRIM_THRESHOLD_"]) for e in _env_of_each(client)) == ["65536", "None",
                                                                                           "None"]
    finally:
        cluster.close()


def test_the_scheduler_has_one_home_and_one_option(capsys):
    """``softpolar atlas`` and ``softpolar experiment`` take the same ``--scheduler`` option from softpolar.cluster,
    and the address checks live there only (the atlas no longer reaches into the experiments wing)."""
    import argparse

    from softpolar import main
    from softpolar.cluster import add_scheduler_option

    mine = argparse.ArgumentParser()
    add_scheduler_option(mine)
    ref = next(a for a in mine._actions if "--scheduler" in a.option_strings)
    assert ref.default == "local"
    for command in ("atlas", "experiment"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        shown = " ".join(capsys.readouterr().out.split())
        assert " ".join(ref.help.split()) in shown, command
    root = Path(__file__).resolve().parents[1] / "softpolar"
    if root.is_dir():  # in the checkout: no second home for the scheduler code
        assert not (root / "experiments" / "_scheduler.py").exists()
        for path in (root / "atlas").glob("*.py"):
            assert "softpolar.experiments" not in path.read_text(), path


def test_probe_scheduler_passes_local_and_inline_and_refuses_a_bad_address():
    from softpolar.cluster import probe_scheduler
    from theorems import InvalidArgument

    assert probe_scheduler("local") is None and probe_scheduler("inline") is None
    for bad in ("file:///etc/passwd", "tcp://host", None):
        with pytest.raises(InvalidArgument, match="scheduler="):
            probe_scheduler(bad)
