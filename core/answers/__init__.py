"""Answers from what the walk found: the cited answer (`answer`), DeepRAG adaptive retrieval (`adaptive`) and its
offline best-first tree search over labelled questions (`adaptive_search`), and Markdown export (`export`). May
import `shelfwise.core.models` and `shelfwise.core.navigation`; never evaluation or a front end.
"""
