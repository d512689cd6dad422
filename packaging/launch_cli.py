"""PyInstaller entry of the command line (``shelfwise`` = ``shelfwise.core.cli:main``)."""

import sys

from shelfwise.core.cli import main

if __name__ == "__main__":
    sys.exit(main())
