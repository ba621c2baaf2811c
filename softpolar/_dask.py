"""Local dask clusters for softpolar's own work (the atlas's boxes, the training grids).

:func:`local_cluster` starts a ``distributed.LocalCluster`` of single-threaded worker processes with two
settings of dask's changed, and the calling process's environment left as it was:

* dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536`` (``distributed.nanny.pre-spawn-environ``),
  which makes glibc hand every freed buffer back to the OS: measured on the training grids, a run then costs
  1.8x the CPU time (40 % of it in the kernel). It is left out (a value the user exported still reaches the
  workers, as any environment variable does); dask's single-threaded BLAS / OpenMP settings are kept.
* the nanny applies those variables by ``os.environ.update`` in the *calling* process, so after one cluster
  every later child of the process inherited them: a training grid run after an atlas in the same process
  (as ``verify --jobs`` runs claims) got ``MALLOC_TRIM_THRESHOLD_`` back, and the process ``OMP_NUM_THREADS=1``.
  The variables are restored once the workers have started.
* no statistical profiler in the workers (it samples each worker's stack every 10 ms for the dashboard):
  an idle 2-worker cluster then spends about 1.2 CPU s less per 30 s; it never changes a result.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

#: the nanny setting left out of the workers' environment (see the module docstring)
DROPPED = ("MALLOC_TRIM_THRESHOLD_",)


@contextmanager
def _settings():
    """dask's config with the module docstring's settings while inside (workers created then get them), and
    ``os.environ`` as it was afterwards."""
    import dask

    spawn = dict(dask.config.get("distributed.nanny.pre-spawn-environ") or {})
    env = {k: v for k, v in spawn.items() if k not in DROPPED}
    saved = {k: os.environ.get(k) for k in spawn}
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": env,
                              "distributed.worker.profile.enabled": False}):
            yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def local_cluster(n_workers: int, *, processes: bool = True, **kwargs):
    """A ``LocalCluster(n_workers, threads_per_worker=1, processes=processes, dashboard_address="127.0.0.1:0",
    **kwargs)`` with the settings of the module docstring; ``os.environ`` is as before when it returns."""
    from distributed import LocalCluster

    with _settings():
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                            dashboard_address=kwargs.pop("dashboard_address", "127.0.0.1:0"), **kwargs)


#: seconds :func:`grow` waits for the new workers to join
GROW_TIMEOUT_S = 120.0


def grow(cluster, client, n_workers: int) -> None:
    """Scale a :func:`local_cluster` up to ``n_workers`` workers with the same settings. ``cluster.scale`` creates
    the new workers later, on the cluster's event loop, where a plain call would give them dask's defaults
    (MALLOC_TRIM back) and apply those to this process: so the settings stay in force until the new workers
    have joined (at most :data:`GROW_TIMEOUT_S`; a worker slower than that starts with dask's defaults)."""
    with _settings():
        cluster.scale(n_workers)
        try:
            client.wait_for_workers(n_workers, timeout=GROW_TIMEOUT_S)
        except TimeoutError:  # pragma: no cover - a machine too loaded to start a worker in 2 min
            pass
