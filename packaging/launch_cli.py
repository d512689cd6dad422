"""PyInstaller entry of the command line (``shelfwise`` = ``shelfwise.app.cli.main:main``)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the ingest parser runs in a spawned child: this executable, re-entered
    from shelfwise.app.cli.main import main

    sys.exit(main())
