"""``python -m softpolar`` is the ``softpolar`` console script."""
import sys

from softpolar._cli import main

if __name__ == "__main__":
    sys.exit(main())
