"""Dask scheduler addresses: syntax check and a quick reachability probe (no torch, no dask import).

Used by ``softpolar experiment --scheduler`` before anything heavy loads, so a bad or refused
address fails in seconds, and by :func:`softpolar.experiments._grid.run_grid`.
"""
from __future__ import annotations

from theorems import InvalidArgument


#: dask comm schemes a scheduler address may use.
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
#: seconds allowed for the first TCP connection to a scheduler (a refused or unroutable
#: address fails within this; dask's own connect retries for 30 s).
CONNECT_TIMEOUT = 3.0


def check_scheduler(scheduler) -> tuple[str, str, int]:
    """Parse ``[scheme://]host:port``; ``InvalidArgument`` (naming the value) unless valid."""
    from theorems.errors import show

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


def _probe(scheduler) -> None:
    """Fail in at most :data:`CONNECT_TIMEOUT` seconds when nothing listens at ``scheduler``."""
    import socket

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
