"""Turning files into stored documents: the runner that walks folders, skips unchanged files and writes each
parsed document in one transaction (`runner`), and the isolated worker process that runs a parser with limits
(`worker`). May import `shelfwise.ingest` and `shelfwise.core.store`.
"""
