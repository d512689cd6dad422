"""The words of a follow-up: pronouns and ellipsis that point back (the pronouns in ``core/answers/cues.py``, which
several questions asked at once read too), phrases that announce a new topic, and the rule rewrite that puts the
referent into the question. Pure text rules, no model; what they are worth is measured on
the multi-turn set (docs/eval/conversation.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from shelfwise.core.answers.cues import names_referent, words
from shelfwise.core.answers.extractive import question_keys
from shelfwise.core.languages import lazy

# openings that continue the last question ("and for part-time staff?", "what about Berlin?")
CONTINUE = lazy(r"^\s*(?:(?:ok(?:ay)?|thanks|thank you|great|right)\b[\s,.!—–-]*)?"
                r"(?:and|also|but|or|so|then|what about|how about|what if|same for|and for|and in)\b", re.I)
# phrases that announce another subject
SHIFT = lazy(r"\b(?:new question|different question|another question|unrelated|something else|"
             r"different topic|change of subject|changing the subject|on another note|other topic)\b", re.I)
# discourse words a rewrite drops from the front ("thanks - and ...")
LEAD = lazy(r"^\s*(?:(?:ok(?:ay)?|thanks|thank you|great|right|cool|sure)\b[\s,.!—–-]*)*"
            r"(?:(?:and|also|but|so|then)\b[\s,]*)?", re.I)
STOP = frozenset("""a an the and or but so of to in on at for from by with about as is are was were be been being do
does did doing have has had i me my we our you your can could should would will shall may might must what which
who whom whose when where why how if then than also any some all each every no not there here this that these those
it its they them their he she his her one get gets got many much more most less very just only please tell
know want need""".split())


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOP and len(w) > 1]


def points_back(question: str) -> int:
    """+1 when the question's words point back at the conversation (a pronoun without its noun, "one" for a noun
    said before, or an opening that continues the last question), -1 when they announce a new topic, 0 otherwise."""
    if SHIFT.search(question):
        return -1
    if CONTINUE.match(question) or names_referent(question):
        return 1
    return 0


def topic_of(heading_path: Sequence[str], previous_question: str) -> str:
    """What the last answer was about, as a noun phrase: the heading of its section without its numbering
    ("3.1 Annual leave" -> "annual leave"), else the content words of the last question."""
    for heading in reversed(heading_path):
        title = re.sub(r"^\s*[\dA-Z]+(?:\.\d+)*[.)]?\s+(?=\S)", "", heading).strip(" :-")
        if content_words(title):
            return title[:1].lower() + title[1:] if not title[:2].isupper() else title
    return " ".join(content_words(previous_question))


def rewrite(question: str, previous_question: str, topic: str) -> str:
    """The follow-up with its referent filled in: the leading "thanks - and" dropped; the first pronoun that
    stands for the last topic replaced by ``topic``; a bare fragment ("and in Berlin?", "what about part-time
    staff?") completed by the last question it continues."""
    core = LEAD.sub("", question).strip()
    core = re.sub(r"^(?:what|how) about\s+", "", core, flags=re.I) if re.match(r"^(?:what|how) about\b", core,
                                                                                 re.I) else core
    if not core:
        return previous_question
    ws = words(core)
    if topic and any(w in ("it", "this", "that", "them", "these", "those", "they") for w in ws):
        swapped = re.sub(r"\b(it|this|that|them|these|those|they)\b(?!\s+(?:is|are|was)\b\s*\?)",
                         topic, core, count=1, flags=re.I)
        if swapped != core:
            return swapped[:1].upper() + swapped[1:]
    if len(content_words(core)) <= 3 and not re.match(r"^(?:who|what|when|where|why|how|which|can|do|does|is|are)"
                                                      r"\b", core, re.I):
        return f"{previous_question.rstrip()} {core}"
    if topic and not set(content_words(topic)) & set(content_words(core)):
        return f"{core.rstrip()} ({topic})"
    return core


def own_words(question: str) -> list[str]:
    """What the question asks in its own words: its content words once a leading "thanks - and" is dropped, as the
    extractive answer's matcher compares them with a text (:func:`shelfwise.core.answers.extractive.question_keys`:
    words of any script, truncated to their first letters; a run of Chinese or Japanese gives its bigrams)."""
    return question_keys(LEAD.sub("", question))
