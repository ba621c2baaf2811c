"""``--models FILE.py`` for every subcommand: user links and losses on the command line.

:func:`add_models_argument` declares the option on a subparser (repeatable);
:func:`preload_models` runs before argument parsing and registers the module-level
``theorems.Link`` / ``theorems.Loss`` objects of each file (:func:`theorems.load_models_file`), so
that the names they define are available to every option and to init files that name them. A
missing file, an import error, a name that shadows a built-in: one line, exit 2.
"""
from __future__ import annotations

from theorems import InvalidArgument, load_models_file
from theorems import DEFAULT_SETUP_TIMEOUT, check_timeout

MODELS_HELP = ("Python file defining theorems.Link / theorems.Loss objects at module level; their names "
               "become usable with --link / --loss and in init files (repeatable; the file is executed)")


def add_models_argument(parser) -> None:
    """Declare ``--models FILE.py`` (repeatable) and ``--setup-timeout SECONDS`` on ``parser``."""
    parser.add_argument("--models", action="append", metavar="FILE.py", help=MODELS_HELP)
    parser.add_argument("--setup-timeout", type=float, default=DEFAULT_SETUP_TIMEOUT, metavar="SECONDS",
                        help="wall-clock bound on each symbolic setup step: loading each --models file, derive's "
                             "derivation, building simulate's problem (default %(default)g s)")


def setup_timeout(argv) -> float:
    """The ``--setup-timeout`` of ``argv`` (the last one), checked, or the default."""
    value = DEFAULT_SETUP_TIMEOUT
    for i, tok in enumerate(argv):
        if tok == "--":
            break
        if tok == "--setup-timeout":
            if i + 1 >= len(argv):
                raise InvalidArgument("--setup-timeout needs a value; expected seconds")
            value = argv[i + 1]
        elif tok.startswith("--setup-timeout="):
            value = tok.split("=", 1)[1]
    return check_timeout(value)


def models_paths(argv) -> list[str]:
    """The ``--models`` values of ``argv`` (``--models F`` and ``--models=F``), in order."""
    out = []
    it = iter(range(len(argv)))
    for i in it:
        tok = argv[i]
        if tok == "--":
            break
        if tok == "--models":
            if i + 1 >= len(argv):
                raise InvalidArgument("--models needs a value; expected a Python file FILE.py")
            out.append(argv[i + 1])
            next(it, None)
        elif tok.startswith("--models="):
            out.append(tok.split("=", 1)[1])
    return out


def preload_models(argv) -> list:
    """Register the definitions of every ``--models`` file named in ``argv``; return them."""
    defs, timeout = [], setup_timeout(argv)
    for path in models_paths(argv):
        defs.extend(load_models_file(path, timeout=timeout))
    return defs
