"""benchmarks: softpolar measured against the anchor tools (``softpolar bench``).

Rows, runner and timing primitives. The command: :func:`parse_rows` (``--rows``) and :func:`pinned_env` (the
measurement process's environment); the runner: :data:`ROWS`, :func:`row_module` (row ``k``'s module: its
``run(mode, log)``, ``TITLE``, ``TARGET`` and the helpers it measures with), :func:`default_rows`,
:func:`run_rows` and the report formats; the timing primitives every row uses: :func:`interleaved`,
:func:`median`, :func:`ratio`, :func:`budget_alarm` and :class:`Budget`; the performance page's generator
(``softpolar bench --render-page``). Importing this package imports neither numpy nor torch
(``python -m benchmarks`` pins the thread pools before they load): every name loads on first use.
"""
import importlib
#: public name -> the module (in this package) that defines it
_EXPORTS = {
    **dict.fromkeys(("BEGIN", "DOCUMENTED_S", "END", "documented_time", "load_report", "render", "render_page",
                     "summarize"), "_page"),
    **dict.fromkeys(("ROWS", "default_rows", "format_markdown", "format_table", "row_module", "run_rows"),
                    "_runner"),
    **dict.fromkeys(("Budget", "budget_alarm", "interleaved", "median", "ratio"), "_timing"),
    **dict.fromkeys(("parse_rows", "pinned_env"), "_cmd"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """The runner's, the command's, the timing primitives' and the page generator's names, loaded on first use
    (PEP 562): importing the package stays cheap."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'softpolar.benchmarks' has no attribute {name!r}")
