"""``python -m softpolar.benchmarks [options]`` is ``softpolar bench [options]``.

The BLAS / OpenMP thread pools are pinned here, before anything imports numpy (see
:mod:`softpolar.benchmarks._cmd`); ``--threads N`` sets them (default 1).
"""
import os
import sys


def _threads(argv) -> str:
    for k, arg in enumerate(argv):
        if arg == "--threads" and k + 1 < len(argv):
            return argv[k + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


if __name__ == "__main__":
    _argv = sys.argv[1:]
    _n = _threads(_argv)
    if _n.isdigit() and int(_n) >= 1:  # a bad value is reported by the parser
        for _key in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[_key] = _n
    os.environ["SOFTPOLAR_BENCH_PINNED"] = "1"
    from softpolar import main

    sys.exit(main(["bench", *_argv]))
