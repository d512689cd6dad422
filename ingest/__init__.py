"""Shelfwise ingestion: one parser module per file format (no Qt).

``parse(path)`` picks the parser by extension and returns a :class:`ParsedDocument` or raises an
:class:`IngestError` with a message for the user. Format libraries are imported only when a file needs them.
Scanned PDF pages are read by OCR (``ocr``, ``pdf_ocr``) when the optional engine (the ``ocr`` extra) is installed;
a parser reports its own progress through ``progress``.
Imports nothing of Shelfwise outside `shelfwise.ingest`: the core imports this package, never the other way round.
"""

from shelfwise.ingest.model import IngestError, Limits, Location, ParsedDocument, ParsedNode
from shelfwise.ingest.registry import LEGACY_EXTENSIONS, SUPPORTED_EXTENSIONS, is_candidate, parse

__all__ = [
    "LEGACY_EXTENSIONS",
    "SUPPORTED_EXTENSIONS",
    "IngestError",
    "Limits",
    "Location",
    "ParsedDocument",
    "ParsedNode",
    "is_candidate",
    "parse",
]
