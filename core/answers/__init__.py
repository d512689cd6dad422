"""Answers from what the walk found: the entry point that searches then answers (`ask`), what an answer is
(`types`: `Answer`, `Citation`, `Extracted`, `Step`), the sentence(s) that answer, extracted from the passages
(`extractive`, reading the sentence vectors made at indexing through `sentence_vectors`), the check that a
generated answer's facts are in its sources (`grounding`), the cited answer written from the passages (`answer`),
DeepRAG adaptive retrieval (`adaptive`) and its offline best-first tree search over labelled questions
(`adaptive_search`), SQuAD-style answer matching (`matching`), and Markdown export (`export`).
May import `shelfwise.core.models` and `shelfwise.core.navigation`; never the store directly, indexing, evaluation
or a front end.
"""
