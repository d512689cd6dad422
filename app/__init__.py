"""Shelfwise desktop application (PySide6). The only package that imports Qt."""
