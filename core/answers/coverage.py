"""Do the passages found cover what the question asks about? :func:`key_coverage` is the share of the question's
key terms (its content words, less the words that only say what kind of answer it wants) that the top passages
hold, with their titles and headings. The not-found rule (:func:`~shelfwise.core.answers.answer.weak_evidence`)
reads it beside the encoder's cosine: a walk whose passages leave most of the question's terms uncovered and whose
best cosine is not high says "Not found in your documents" (a question in another language than the documents
shares no words with them, so a high cosine keeps it found). The thresholds are the encoder's own
(``core/answers/tuning.py``), chosen by ``benchmarks/research/not_found_tune.py`` on data built for it
(docs/eval/answers.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from shelfwise.core.answers.extractive import focus_question
from shelfwise.core.answers.short import stems
from shelfwise.core.navigation.trace import Hit

PASSAGES = 3  # the top passages whose words count
# words that say what kind of answer a question wants, not what it is about
_SCAFFOLD = stems("""many much long often get gets need needs want know tell happen happens able allowed possible
viele viel lange oft brauche braucht bekomme bekommt combien souvent besoin faut""")


def key_terms(question: str) -> set[str]:
    """The question's key terms (:func:`~shelfwise.core.answers.short.stems` of its asking sentence, less
    ``_SCAFFOLD``)."""
    return stems(focus_question(question)) - _SCAFFOLD


def key_coverage(question: str, hits: Sequence[Hit], passages: int = PASSAGES) -> float:
    """The share of the question's key terms that the first ``passages`` hits hold (text, title, headings); 1.0
    for a question without key terms."""
    keys = key_terms(question)
    if not keys:
        return 1.0
    held: set[str] = set()
    for h in hits[:passages]:
        held |= stems(" ".join([h.text, h.title, *h.heading_path]))
    return len(keys & held) / len(keys)
