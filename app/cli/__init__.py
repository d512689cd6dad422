"""The ``shelfwise`` command line (click): a thin layer over :class:`shelfwise.core.shelf.Shelf` and the store.
Renders the core's trace and answer objects as text or JSON. Never imports Qt (``shelfwise app`` imports the GUI
inside the command).
"""
