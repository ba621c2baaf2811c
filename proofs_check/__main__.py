"""``python -m proofs_check`` is the same program as the ``softpolar`` console script: the subcommands and
claims of installed packages (softpolar's experiment, bench and atlas; C31-C33 and ATLAS) join both through the
entry-point groups ``softpolar.commands`` and ``softpolar.claims``."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
