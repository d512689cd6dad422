"""Answers from what the walk found: the entry point that searches then answers (`ask`), what an answer is
(`types`: `Answer`, `Citation`, `Extracted`, `Step`), the sentence(s) that answer, extracted from the passages
(`extractive`, reading the sentence vectors made at indexing through `sentence_vectors`), the check that a
generated answer's facts are in its sources (`grounding`), the cited answer written from the passages (`answer`),
DeepRAG adaptive retrieval (`adaptive`) and its offline best-first tree search over labelled questions
(`adaptive_search`), SQuAD-style answer matching (`matching`), and Markdown export (`export`).
What it needs from the library is the walk (`LibraryWalk`, which the facade hands it), whose store is the real
`Store`: may import `shelfwise.core.models`, `shelfwise.core.navigation` and `shelfwise.core.store`; never the
facade, indexing, evaluation or a front end.
"""
