"""benchmarks: softpolar measured against the anchor tools (``softpolar bench``).

Rows, runner and timing primitives; see :mod:`softpolar.benchmarks._cmd` for the command and
:mod:`softpolar.benchmarks._runner` for the report format. Importing this package imports neither
numpy nor torch (``python -m benchmarks`` pins the thread pools before they load).
"""
__all__ = ["BEGIN", "DOCUMENTED_S", "END", "ROWS", "documented_time", "format_markdown", "format_table",
           "load_report", "render", "render_page", "run_rows", "summarize"]
#: the names of :mod:`._page` (``softpolar bench --render-page``); the others are the runner's
_PAGE = {"BEGIN", "DOCUMENTED_S", "END", "documented_time", "load_report", "render", "render_page", "summarize"}


def __getattr__(name: str):
    """The runner's and the page generator's names, loaded on first use (PEP 562): importing the package stays
    cheap."""
    if name in __all__:
        from . import _page, _runner

        return getattr(_page if name in _PAGE else _runner, name)
    raise AttributeError(f"module 'softpolar.benchmarks' has no attribute {name!r}")
