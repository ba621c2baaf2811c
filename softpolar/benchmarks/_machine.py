"""Where a benchmark ran: CPU, threads, load, library versions (all reported, none asserted)."""
from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
import mpmath

from proofs_check import __version__ as softpolar_version

from ._timing import loadavg

#: environment variables that pin the BLAS / OpenMP thread pools (see ``__main__``).
THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_model() -> str | None:
    """``model name`` of the first CPU in ``/proc/cpuinfo`` (Linux), else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _version(module_name: str) -> str | None:
    try:
        module = __import__(module_name)
    except ImportError:
        return None
    return getattr(module, "__version__", "?")


def _dist_version(name: str) -> str | None:
    """An installed distribution's version from its metadata (nothing imported); ``None`` where not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine_info() -> dict:
    """A JSON-able description of the machine and the software stack."""
    import torch

    cuda = bool(torch.cuda.is_available())
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "torch_threads": torch.get_num_threads(),
        "blas_threads_env": {k: os.environ.get(k) for k in THREAD_ENV},
        "cuda": torch.cuda.get_device_name(0) if cuda else None,
        "loadavg_start": loadavg(),
        "versions": {
            "softpolar": softpolar_version,
            "numpy": _version("numpy"),
            "scipy": _version("scipy"),
            "torch": torch.__version__,
            "torchdiffeq": _version("torchdiffeq"),
            "mpmath": mpmath.__version__ + f" ({mpmath.libmp.BACKEND})",
            "sympy": _version("sympy"),
            # the anchors of rows 7-10 and row 12's cluster (their rows say "not available" without them)
            **{name: _dist_version(name) for name in ("torchode", "heyoka", "distributed")},
        },
    }
