"""The ``softpolar`` command line.

Each subcommand lives in its own module, which defines ``add_parser(subparsers)``;
the parser it creates sets ``func(args) -> int``. A module listed in
:data:`SUBCOMMANDS` that is not installed is skipped, so optional parts (the
transformer experiments, the benchmarks) do not break the core CLI.

Error contract: bad usage or bad input prints exactly one line
``softpolar: error: ...`` to stderr and exits 2 (no traceback); a failed check
exits 1; success exits 0; Ctrl-C exits 130 ("softpolar: interrupted"), SIGTERM 143 ("softpolar: terminated
(SIGTERM)"), both after the same clean-up.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import importlib.metadata
import signal
import warnings

from theorems import InvalidArgument

from theorems import __version__, models_scope
from theorems.errors import SoftpolarWarning

from ._models_cli import preload_models

#: (module, ...) providing the core subcommands, in the order shown by ``--help``. The layers above
#: (:mod:`softpolar`: the transformer experiments, the benchmarks, the atlas) register theirs in the
#: entry-point group :data:`COMMANDS_GROUP` (``setup.cfg``); this layer never names them.
SUBCOMMANDS = (
    "proofs_check.cli._cmd_derive",
    "proofs_check.cli._cmd_simulate",
    "proofs_check.cli._cmd_verify",
    "proofs_check.cli._cmd_certify",
)


#: entry-point group of subcommand modules from installed packages (each defines ``add_parser(subparsers)``)
COMMANDS_GROUP = "softpolar.commands"


def command_modules() -> tuple[str, ...]:
    """The core subcommand modules, then those registered in :data:`COMMANDS_GROUP` (in setup.cfg order)."""
    return (*SUBCOMMANDS, *dict.fromkeys(ep.value for ep in importlib.metadata.entry_points(group=COMMANDS_GROUP)))


class UsageError(Exception):
    """Raised by the parser instead of printing a multi-line usage message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse API
        raise UsageError(f"{self.prog}: {message}")


def build_parser(extra: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    """The CLI parser: the modules of :func:`command_modules`, then ``extra`` (modules not installed)."""
    parser = _Parser(
        prog="softpolar",
        description="Machine-checked theory of 'Gradient Flow Polarizes Softmax Outputs "
                    "towards Low-Entropy Solutions' (arXiv 2603.06248).",
    )
    parser.add_argument("--version", action="version", version=f"softpolar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parser._softpolar_commands = sub.choices  # the subcommand names, for the one-line usage error
    for module in dict.fromkeys((*command_modules(), *extra)):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            continue
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            continue
        importlib.import_module(module).add_parser(sub)
    return parser


def reopen_closed_streams() -> None:
    """``2>&-`` / ``>&-``: a closed standard stream becomes ``/dev/null`` (Python sets it to None,
    and ``print(..., file=None)`` would write to stdout), so the command runs as documented and
    only the text meant for the closed stream is lost."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        try:
            os.fstat(fd)
            ok = stream is not None
        except OSError:
            ok = False
        if not ok:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, open(fd, "w", encoding="utf-8", errors="replace", closefd=False))


#: characters ``str.splitlines`` breaks at besides newline and return (a library's message may quote an argument raw)
_BREAKS = {ord(c): c.encode("unicode_escape").decode("ascii") for c in "\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def _line(text: str) -> None:
    """One line on stderr; never raises (stderr may be a full disk or a closed pipe)."""
    # newlines become spaces; the other line breaks are shown escaped, as repr would (a message quoting a
    # hostile argument, e.g. torch's "Invalid device string: '\x1e'", must stay one line)
    text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").translate(_BREAKS)
    # an undecodable argument (a surrogate escape) must not make the message unprintable
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _silence_stdout() -> None:
    """stdout failed (closed pipe, full disk): send the rest, and the flush at exit, to /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _show_warning(message, category, filename, lineno, file=None, line=None):
    _line(f"softpolar: warning: {message}")


class Terminated(KeyboardInterrupt):
    """SIGTERM in the CLI's process, raised like Ctrl-C's ``KeyboardInterrupt`` so that it takes the same clean-up
    path (a half-written report folder and the ``--out`` lock removed); the CLI exits 143 (128 + SIGTERM)."""


#: the exit code after SIGTERM (128 + 15, what a shell reports for a process the signal killed)
EXIT_TERMINATED = 143


def sigterm_handler(owner: int):
    """The SIGTERM handler of the CLI process ``owner``: raise :class:`Terminated` there, further SIGINT and SIGTERM
    ignored meanwhile (the clean-up runs to the end). A process forked from it (a claim or mutant worker, which
    inherits Python's handlers) dies of the signal as before: its parent's ``terminate()`` and the parent-death
    signal (:mod:`proofs_check.parallel`) must still end it."""
    def handler(signum, frame):
        if os.getpid() != owner:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        raise Terminated("SIGTERM")
    return handler


def main(argv: list[str] | None = None, extra: tuple[str, ...] = ()) -> int:
    """Run the CLI; return the exit code. ``extra``: subcommand modules not registered as entry points.

    Every failure is one line on stderr: bad input, unwritable output, a full disk ("error",
    exit 2), an integration failure (exit 1), Ctrl-C ("interrupted", exit 130) and SIGTERM ("terminated",
    exit 143), both leaving nothing half-written (further Ctrl-C or SIGTERM during the clean-up is
    ignored). Warnings are one line each (``softpolar: warning: ...``).
    """
    argv = sys.argv[1:] if argv is None else argv
    reopen_closed_streams()
    try:
        previous = signal.signal(signal.SIGTERM, sigterm_handler(os.getpid()))
    except (ValueError, OSError):  # not the main thread: SIGTERM keeps its handler
        previous = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", SoftpolarWarning)  # shown as one line, never an error
            warnings.showwarning = _show_warning
            with models_scope():  # --models links, losses, optimizers live for this run only (no in-process leak)
                return _main(argv, extra)
    finally:
        if previous is not None:
            try:
                signal.signal(signal.SIGTERM, previous)
            except (ValueError, OSError):  # pragma: no cover
                pass


def _main(argv, extra) -> int:
    try:
        parser = build_parser(extra)
        preload_models(argv)  # --models FILE.py: user definitions by name, before any option is read
        args = parser.parse_args(argv)
        if getattr(args, "func", None) is None:
            names = ", ".join(sorted(getattr(parser, "_softpolar_commands", ())))
            _line(f"softpolar: error: a COMMAND is required; expected one of {names} "
                  "(`softpolar --help` describes them)")
            return 2
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at interpreter exit
        return code
    except (UsageError, InvalidArgument) as exc:
        _line(f"softpolar: error: {exc}")
        return 2
    except KeyboardInterrupt as exc:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread
            pass
        if isinstance(exc, Terminated):
            _line("softpolar: terminated (SIGTERM)")
            return EXIT_TERMINATED
        _line("softpolar: interrupted")
        return 130
    except BrokenPipeError:
        # stdout closed early (e.g. `softpolar list | head`): silence the flush at exit.
        _silence_stdout()
        return 1
    except OSError as exc:
        # an output that could not be written after all (disk full, /dev/full as stdout, ...)
        _silence_stdout()
        where = f" ({exc.filename!r})" if getattr(exc, "filename", None) else ""
        _line(f"softpolar: error: input/output failed{where}: {exc.strerror or exc}")
        return 2
    except MemoryError:
        _line("softpolar: error: out of memory; expected smaller sizes")
        return 2
    except RuntimeError as exc:
        if type(exc).__name__ != "IntegrationError":
            raise
        _line(f"softpolar: integration failed: {exc}")
        return 1
