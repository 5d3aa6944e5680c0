"""``python -m tools.capture``: see :mod:`tools.capture.cli`."""

import sys

from tools.capture.cli import main

if __name__ == "__main__":
    sys.exit(main())
