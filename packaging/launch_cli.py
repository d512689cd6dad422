"""PyInstaller entry of the command line (``shelfwise`` = ``shelfwise.core.cli:main``)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the ingest parser runs in a spawned child: this executable, re-entered
    from shelfwise.core.cli import main

    sys.exit(main())
