"""Conversations: a follow-up question answered with its history. The stored object and its turns (`model`), their
rows in the library database (`storage`), how a follow-up is read from the turns before it and whether it moved
to another topic (`cues` for the rules on words, `reading` for the embedder's evidence), one turn asked and kept
(`turn`), and the Markdown export with citations (`export`).
May import `shelfwise.core.store`, `shelfwise.core.models`, `shelfwise.core.navigation`,
`shelfwise.core.answers` and the parsed-document types of `shelfwise.ingest.model`; never evaluation or a front end.
"""
