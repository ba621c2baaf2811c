"""benchmarks: softpolar measured against the anchor tools (``softpolar bench``).

Rows, runner and timing primitives; see :mod:`softpolar.benchmarks._cmd` for the command and
:mod:`softpolar.benchmarks._runner` for the report format. Importing this package imports neither
numpy nor torch (``python -m benchmarks`` pins the thread pools before they load).
"""
__all__ = ["ROWS", "format_markdown", "run_rows"]


def __getattr__(name: str):
    """The runner's names, loaded on first use (PEP 562): importing the package stays cheap."""
    if name in __all__:
        from . import _runner

        return getattr(_runner, name)
    raise AttributeError(f"module 'softpolar.benchmarks' has no attribute {name!r}")
