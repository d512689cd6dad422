"""The Shelfwise window (PySide6): one widget per module, QObject workers that wrap the core's plain callbacks in
signals. The only package that imports Qt.
"""
