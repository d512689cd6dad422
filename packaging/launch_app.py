"""PyInstaller entry of the window (``shelfwise-app``)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the ingest parser runs in a spawned child: this executable, re-entered
    from shelfwise.app.gui.main import main

    sys.exit(main())
