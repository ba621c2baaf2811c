"""``python -m proofs_check`` is the same program as the ``softpolar`` console script."""
import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
