"""Turning files into stored documents: the runner that walks folders, skips unchanged files and writes each
parsed document in one transaction (`runner`), the isolated worker process that runs a parser with limits
(`worker`), rebuilding a damaged library from its files (`rebuild`), and the lock that tells questions an ingest is
running (`lock`). May import `shelfwise.ingest` and `shelfwise.core.store`.
"""
