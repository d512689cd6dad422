"""The facade's parts, one module per job: ``opened`` (the library and its models, what every part holds),
``reads`` (reading the library as the front ends show it), ``asking`` (questions, the walk, conversations),
``indexing`` (ingest, the index, calibration, the sentence encoder), and the entry points that need no open
library as plain functions: ``doctor`` (checking and repairing a library file), ``models`` (what ``shelfwise
models`` shows, installing EmbeddingGemma, start-up helpers). ``shelfwise eval`` is the evaluation's own
(``evaluation/command.py``, beside the app: a client of the facade, which never imports it).
:class:`~shelfwise.core.shelf.Shelf` composes the three library parts; each module's ``__all__`` is what the front
ends may use of it: the names it defines and the types of its job that its calls take and return.

May import `core.store`, `core.models`, `core.navigation`, `core.answers`, `core.indexing`, `core.ingestion`,
`core.conversation`; never the evaluation.
"""
