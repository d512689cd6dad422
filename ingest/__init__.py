"""Shelfwise ingestion: one parser module per file format (no Qt).

``registry.parse(path)`` picks the parser by extension and returns a :class:`ParsedDocument` or raises an
:class:`IngestError` with a message for the user. Format libraries are imported only when a file needs them, and the
registry only by what parses: the core reads this package's data types (``model``) on every question, and importing
the package does not load the parsers' registry, its file sniffing and text normalisation.
Scanned PDF pages are read by OCR (``ocr``, ``pdf_ocr``) when the optional engine (the ``ocr`` extra) is installed;
a parser reports its own progress through ``progress``.
Imports nothing of Shelfwise outside `shelfwise.ingest`: the core imports this package, never the other way round.
"""

from shelfwise.ingest.model import IngestError, Limits, Location, ParsedDocument, ParsedNode

__all__ = [
    "IngestError",
    "Limits",
    "Location",
    "ParsedDocument",
    "ParsedNode",
]
