"""Dask for softpolar's own work (the atlas's boxes, the training grids): one home for the ``--scheduler``
option, scheduler addresses and local clusters. Importing it loads neither dask nor torch.

* :func:`add_scheduler_option`: the ``--scheduler`` option of ``softpolar atlas`` and ``softpolar experiment``;
* :func:`check_scheduler` / :func:`probe_scheduler`: an address's syntax, and a quick reachability probe, so a bad
  or refused address fails in seconds, before anything heavy loads;
* :func:`local_cluster` / :func:`grow`: a local cluster with softpolar's settings (below).

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
import socket

from theorems import InvalidArgument
from theorems.errors import show

__all__ = ["CONNECT_TIMEOUT", "DROPPED", "GROW_TIMEOUT_S", "SCHEDULER_SCHEMES", "add_scheduler_option",
           "check_scheduler", "grow", "local_cluster", "probe_scheduler"]

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



#: dask comm schemes a scheduler address may use.
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
#: seconds allowed for the first TCP connection to a scheduler (a refused or unroutable
#: address fails within this; dask's own connect retries for 30 s).
CONNECT_TIMEOUT = 3.0


def check_scheduler(scheduler) -> tuple[str, str, int]:
    """Parse ``[scheme://]host:port``; ``InvalidArgument`` (naming the value) unless valid."""
    bad = (f"scheduler={show(scheduler)} is not allowed; expected 'local', 'inline' or a dask "
           f"scheduler address such as 'tcp://host:8786' (schemes {', '.join(SCHEDULER_SCHEMES)})")
    if not isinstance(scheduler, str):
        raise InvalidArgument(bad)
    scheme, sep, rest = scheduler.partition("://")
    if not sep:
        scheme, rest = "tcp", scheduler
    if scheme == "inproc":  # a scheduler in this process (inproc://host/pid/n): no host:port
        if not rest:
            raise InvalidArgument(bad)
        return scheme, rest, 0
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if scheme not in SCHEDULER_SCHEMES or not colon or not host or "/" in rest \
            or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidArgument(bad)
    return scheme, host, int(port)


#: the --scheduler values that name no address
LOCAL = ("local", "inline")


def add_scheduler_option(parser) -> None:
    """Add ``--scheduler`` (default ``local``) to an argparse parser: the one option of every dask subcommand."""
    parser.add_argument("--scheduler", default="local",
                        help="'local' (dask LocalCluster, default), 'inline' (serial, no dask) or the "
                             "address of a running dask scheduler, e.g. tcp://host:8786")


def probe_scheduler(scheduler) -> None:
    """Nothing for 'local' or 'inline'; else :func:`check_scheduler`, and fail in at most :data:`CONNECT_TIMEOUT`
    seconds when nothing listens at ``scheduler`` or what answers is not a dask scheduler."""
    if isinstance(scheduler, str) and scheduler in LOCAL:
        return

    scheme, host, port = check_scheduler(scheduler)
    if scheme in ("ucx", "inproc"):
        return
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        raise InvalidArgument(f"scheduler={scheduler!r} could not be reached ({exc.strerror or exc}); "
                              "expected the address of a running dask scheduler") from None
    with sock:
        if scheme != "tcp":
            return
        # a dask server writes its handshake first: an 8-byte little-endian length, then that many
        # bytes of msgpack (a few hundred). Anything else answering here is not a dask scheduler, and
        # dask's own client would misread it (a text banner read as a length is "out of memory").
        head = b""
        try:
            while len(head) < 8:
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
        except OSError:  # socket.timeout included: nothing sent within CONNECT_TIMEOUT
            pass
        length = int.from_bytes(head, "little") if len(head) == 8 else -1
        if not 0 < length < 2**20:
            what = (f"sent nothing within {CONNECT_TIMEOUT:g} s" if not head else
                    f"sent {head[:8]!r}, which does not start a dask handshake")
            raise InvalidArgument(f"scheduler={scheduler!r} answers, but is not a dask scheduler (it {what}); "
                                  "expected the address of a running dask scheduler")
