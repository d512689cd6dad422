"""PyInstaller entry of the window (``shelfwise-app``)."""

import sys

from shelfwise.app.main import main

if __name__ == "__main__":
    sys.exit(main())
