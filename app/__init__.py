"""Shelfwise's front ends: the command line (`cli`) and the desktop window (`gui`). Nothing in `shelfwise.core` or
`shelfwise.ingest` imports this package.
"""
