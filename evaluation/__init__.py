"""Measuring Shelfwise on public datasets, beside the app as a client of the core: loading ConditionalQA / SQuAD /
a user's own questions (`datasets`), retrieval metrics and every method side by side (`retrieval`), building the
evaluation collection and writing the reports (`run`), answer-quality evaluation (`answers`), and ``shelfwise
eval`` as one call (`command`, which opens the library through the facade). May import any part of
`shelfwise.core` and the parsed-document types of `shelfwise.ingest.model`; nothing in the core imports it (the
front ends reach it only through `command`).
"""
