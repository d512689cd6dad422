"""Measuring Shelfwise on public datasets: loading ConditionalQA / SQuAD / a user's own questions (`datasets`),
retrieval metrics and every method side by side (`retrieval`), building the evaluation collection and writing the
reports (`run`), and answer-quality evaluation (`answers`). May import any other part of `shelfwise.core` and the
parsed-document types of `shelfwise.ingest.model`; nothing in the core imports it but the facade, which imports
`command` (``shelfwise eval`` as one call: ``evaluate`` in ``core/api/evaluation.py``).
"""
