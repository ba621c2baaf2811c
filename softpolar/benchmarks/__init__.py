"""benchmarks: softpolar measured against the anchor tools (``softpolar bench``).

Rows, runner and timing primitives; see :mod:`softpolar.benchmarks._cmd` for the command and
:mod:`softpolar.benchmarks._runner` for the report format. Importing this package imports neither
numpy nor torch (``python -m benchmarks`` pins the thread pools before they load).
"""
__all__: list[str] = []
