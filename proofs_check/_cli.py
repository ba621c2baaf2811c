"""The ``softpolar`` command line.

Each subcommand lives in its own module, which defines ``add_parser(subparsers)``;
the parser it creates sets ``func(args) -> int``. A module listed in
:data:`SUBCOMMANDS` that is not installed is skipped, so optional parts (the
transformer experiments, the benchmarks) do not break the core CLI.

Error contract: bad usage or bad input prints exactly one line
``softpolar: error: ...`` to stderr and exits 2 (no traceback); a failed check
exits 1; success exits 0.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

from theorems import InvalidArgument

from . import __version__

#: (module, ...) providing the core subcommands, in the order shown by ``--help``. The layers above
#: (:mod:`softpolar`: the transformer experiments, the benchmarks, the atlas) pass their own
#: modules to :func:`main` as ``extra``; this layer never names them.
SUBCOMMANDS = (
    "proofs_check._cmd_derive",
    "proofs_check._cmd_simulate",
    "proofs_check._cmd_verify",
    "proofs_check._cmd_certify",
)


class UsageError(Exception):
    """Raised by the parser instead of printing a multi-line usage message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # noqa: D401 - argparse API
        raise UsageError(f"{self.prog}: {message}")


def build_parser(extra: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="softpolar",
        description="Machine-checked theory of 'Gradient Flow Polarizes Softmax Outputs "
                    "towards Low-Entropy Solutions' (arXiv 2603.06248).",
    )
    parser.add_argument("--version", action="version", version=f"softpolar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in (*SUBCOMMANDS, *extra):
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


def main(argv: list[str] | None = None, extra: tuple[str, ...] = ()) -> int:
    """Run the CLI; return the exit code. ``extra``: modules of the layers above adding subcommands."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser(extra)
        args = parser.parse_args(argv)
        if getattr(args, "func", None) is None:
            parser.print_help(sys.stderr)
            return 2
        return int(args.func(args) or 0)
    except (UsageError, InvalidArgument) as exc:
        msg = str(exc).replace("\n", " ")
        print(f"softpolar: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("softpolar: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (e.g. `softpolar list | head`): silence the flush at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
