"""Over-long questions: clip a question to what the model's context can hold beside the rest of a prompt.

A navigation level puts its candidate listing and the question in one context, and an answer puts the found
passages and the question in one prompt; a 100 kB question (18,900 tokens) overflowed the bundled model's 8,192.
A question keeps at most ``min(MAX_QUESTION_TOKENS, n_ctx // QUESTION_CONTEXT_SHARE)`` of the model's tokens:
1,024 with the bundled model, which leaves 7,168 for a level's listing (48 candidates of ~40-60 tokens each) or
an answer's sources (5 passages of 70 words) and its 120 generated tokens. The clipped question is what both the
walk and the answer use, and the trace and answer carry a note that says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from shelfwise.core.models.backend import DecisionBackend

MAX_QUESTION_TOKENS = 1024
QUESTION_CONTEXT_SHARE = 8  # a question may use at most 1/8 of the model's context


@dataclass
class Question:
    text: str  # what the walk and the answer use
    tokens: int  # tokens of the original question
    kept_tokens: int
    note: str = ""  # empty unless clipped

    @property
    def clipped(self) -> bool:
        return bool(self.note)


def question_budget(backend: DecisionBackend | None) -> int:
    n_ctx = backend.n_ctx if backend is not None else 0
    if n_ctx > 0:
        return max(16, min(MAX_QUESTION_TOKENS, n_ctx // QUESTION_CONTEXT_SHARE))
    return MAX_QUESTION_TOKENS


def _count(backend: DecisionBackend | None, text: str) -> int:
    return len(text.split()) if backend is None else int(backend.count_tokens(text))


def clip_question(question: str, backend: DecisionBackend | None) -> Question:
    """The question, cut at a word boundary to the token budget of ``backend`` (see the module doc)."""
    budget = question_budget(backend)
    if len(question) <= budget:  # a token is at least one character: nothing to count
        return Question(question, -1, -1)
    tokens = _count(backend, question)
    if tokens <= budget:
        return Question(question, tokens, tokens)
    cut = int(len(question) * budget / tokens)
    text = question
    kept = tokens
    while cut > 0:
        text = question[:cut].rsplit(None, 1)[0] if " " in question[:cut] else question[:cut]
        kept = _count(backend, text)
        if kept <= budget:
            break
        cut = int(cut * 0.9)
    note = (f"The question was {tokens:,} tokens; only its first {kept:,} were used (a question may use "
            f"{budget:,} of the model's context).")
    return Question(text.strip(), tokens, kept, note)
