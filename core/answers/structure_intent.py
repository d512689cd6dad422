"""Which questions are about a document's structure, by rules measured on a question set.

A structural question asks for the outline of a document or section, a summary, a count (pages, slides, sheets,
sections), an inventory of documents, the documents that mention something, or where something is described.
:func:`recognise` returns its :class:`Intent` (the kind and the words naming what it is about), or None for an
ordinary question, which the walk answers from passages. The rules and the question set they were tuned on (and
the held-out part they are reported on) are in ``benchmarks/product/structure_questions.jsonl``,
``benchmarks/product/structure_recognition.py`` and docs/eval/structure.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("outline", "section", "summary", "count", "inventory", "mentions", "where")

PARTS = r"(?:chapters|sections|subsections|headings|headers|parts|topics|slides|sheets|tabs|worksheets|pages)"
UNITS = r"(?P<unit>pages|slides|sheets|tabs|worksheets|sections|subsections|chapters|headings|parts)"
DOCS = (r"(?P<docs>documents|docs|files|pdfs?|pdf files|word (?:documents|files|docs)|docx files|spreadsheets|"
        r"excel (?:files|workbooks|sheets)|workbooks|presentations|slide ?decks|decks|powerpoints?|"
        r"powerpoint (?:files|presentations|decks)|markdown (?:files|documents|notes)|notes|text files|txt files)")
DOC_NOUN = (r"(?:document|doc|file|handbook|policy|guide|manual|report|deck|presentation|slides|spreadsheet|"
            r"workbook|pdf|faq|onboarding|book|paper|booklet|brochure|form|notes)")
VERB_COVER = r"(?:cover|covers|contain|contains|include|includes|discuss|discusses|say|says|describe|describes)"
DESCRIBED = (r"(?:described|documented|covered|explained|discussed|mentioned|defined|specified|detailed|"
             r"written (?:up|down)|addressed|set out|laid out|stated|treated|dealt with|talked about)")
SECTION_REF = r"(?:section|chapter|part|slide|sheet|clause|heading)\s+(?P<num>\d+(?:\.\d+)*|[ivx]+\b|[A-Z]\b)"
SECTION_TOPIC = (r"(?:the )?(?:section|chapter|part|slide|sheet|heading)s? "
                 r"(?:on|about|for|covering|called|titled|named)\s+(?P<topic>.+?)")
POLITE = r"^(?:please |can you |could you |would you |kindly |i'd like you to |i want you to |help me )*"

_F = re.IGNORECASE


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _F)


@dataclass(frozen=True)
class Intent:
    """``kind`` from KINDS; ``document`` the words naming the document (or folder) asked about, ``topic`` what is
    looked for (mentions, where), ``unit`` what is counted or listed (pages, slides, sections, or a kind of
    documents), ``section`` a section number ("3.2") or topic ("leave") the question points into. Each may be
    empty."""

    kind: str
    document: str = ""
    topic: str = ""
    unit: str = ""
    section: str = ""


RULES: list[tuple[str, re.Pattern[str]]] = [
    # mentions: a list of documents, each with its best passage
    ("mentions", _c(POLITE + r"(?:which|what) (?:of (?:my|the|our) )?" + DOCS +
                    r" (?:(?:do|does) )?(?:mention|mentions|talk about|talks about|refer to|refers to|reference|"
                    r"references|discuss|discusses|deal with|deals with|say anything about|says anything about|"
                    r"have anything (?:on|about)|contain the (?:word|term|phrase)s?|contain|contains|"
                    r"use the (?:word|term|phrase)s?) (?P<subject>.+)")),
    ("mentions", _c(POLITE + r"in (?:which|what) " + DOCS + r" (?:is|are|do i find|can i find|does it say)?\s*"
                    r"(?P<subject>.+?) (?:mentioned|discussed|referred to|referenced|talked about|brought up)\b")),
    ("mentions", _c(POLITE + r"(?:list|show|find|name|give me)(?: me)? (?:all |every |each |any )?(?:the )?(?:of )?"
                    r"(?:my )?(?:" + DOCS[9:-1].replace("documents|docs|files", "documents?|docs?|files?", 1) + r")"
                    r" (?:that|which|where|mentioning|referring to|about|talking about|discussing)"
                    r"(?: (?:mention|mentions|talk about|refer to|discuss|cover|say anything about))? "
                    r"(?P<subject>.+)")),
    ("mentions", _c(POLITE + r"(?:is|are) (?P<subject>.+?) (?:mentioned|discussed|referred to|talked about) "
                    r"(?:in|by) (?:any|some|several|multiple|which|other) " + DOCS)),
    ("mentions", _c(r"\b(?:does|do) any (?:of (?:my|the) )?" + DOCS +
                    r" (?:mention|talk about|refer to|discuss) (?P<subject>.+)")),
    # where is X described: the section path
    ("where", _c(POLITE + r"where (?:exactly )?(?:is|are|'s) (?P<subject>.+?) " + DESCRIBED + r"\b")),
    ("where", _c(POLITE + r"where (?:in (?P<doc>.+?) )?(?:does|do|did) (?:it|they|.+?) (?:talk|speak|say anything|"
                          r"say something|go into detail) (?:about|on) (?P<subject>.+)")),
    ("where", _c(POLITE + r"where (?:in (?P<doc>.+?) )?(?:does|do) (?:it|they|the (?:[\w&'-]+ ){0,4}?"
                          + DOC_NOUN + r"s?|my documents|the documents) (?:say|explain|describe|tell me|cover|"
                          r"mention) (?P<subject>(?:how|what|when|who|which|whether|that|where)\b.+)")),
    ("where", _c(POLITE + r"where (?:can|do|could|would|should|might) (?:i|we|one|you) (?:find|read|look up|look for|"
                          r"see|get|learn|read more|learn more) (?:some |more |the )?(?:(?:information|info|details|"
                          r"guidance|documentation|the (?:section|part|chapter|page|rules|text|policy|passage|"
                          r"paragraph)) )?"
                          r"(?:about|on|regarding|for|of|concerning|covering) (?P<subject>.+)")),
    ("where", _c(POLITE + r"(?:which|what) (?:section|chapter|part|page|slide|sheet|heading|paragraph)s? "
                          r"(?:of (?P<doc>.+?) )?(?:covers?|describes?|explains?|discuss(?:es)?|talks? about|"
                          r"deals? with|is about|mentions?|contains?|has the|has|tells me about|addresses|"
                          r"documents?|defines?|sets out) (?P<subject>.+)")),
    ("where", _c(POLITE + r"(?:which|what) (?:section|chapter|part|page|slide|sheet|heading|paragraph)s? "
                          r"(?:is|are|has|holds) (?P<subject>.+?) (?:on|in|under)\s*[?.!]?$")),
    ("where", _c(POLITE + r"in (?:which|what) (?:section|chapter|part|page|slide|sheet|heading|document|file)s? "
                          r"(?:of (?P<doc>.+?) )?(?:is|are|can i find|do i find|will i find|would i find|"
                          r"does it (?:say|talk about|describe|explain|cover)|do they (?:talk about|describe)) "
                          r"(?P<subject>.+)")),
    ("where", _c(POLITE + r"(?:point me to|show me|take me to|find) (?:the )?(?:section|chapter|part|page|place|"
                          r"passage|paragraph) (?:that |which |where )?(?:covers?|describes?|explains?|"
                          r"talks? about|discuss(?:es)?|is about|about|on|for|deals? with) (?P<subject>.+)")),
    # counts of parts of a document
    ("count", _c(POLITE + r"how many " + UNITS + r" (?:long )?(?:are|is|does|do|has|have|in|are in|are there in|"
                          r"there are in|make up|does it take|are there|of)\b(?P<subject>.*)")),
    ("count", _c(POLITE + r"count (?:the |all the |up the )?" + UNITS + r" (?:of|in) (?P<subject>.+)")),
    ("count", _c(POLITE + r"(?:what is |what's |tell me |give me )?(?:the )?(?:number|count|total number) of "
                 + UNITS + r" (?:in|of|for) (?P<subject>.+)")),
    ("count", _c(POLITE + r"(?:what is |what's )?(?:the )?(?P<unit>page|slide|sheet|section) count (?:of|for|in) "
                          r"(?P<subject>.+)")),
    ("count", _c(POLITE + r"how (?:long|big) is (?P<subject>(?:the |this |that |my |our )?(?:[\w&'-]+ ){0,6}?"
                 + DOC_NOUN + r"s?)\s*(?:in pages)?\??$")),
    # inventory of the library
    ("inventory", _c(POLITE + r"how many " + DOCS + r" (?:are there|are in|are stored|are indexed|"
                              r"do i have|have i (?:got|added|ingested)|does the library|are in the library|"
                              r"in (?:the|my|this)|of (?:type|format)|are (?:pdfs?|word|excel|powerpoint)|"
                              r"does shelfwise|did i)\b(?P<subject>.*)")),
    ("inventory", _c(POLITE + r"(?:what|which) " + DOCS + r" (?:are there|are in|are stored|are available|"
                              r"do i have|have i (?:got|added|ingested)|does the library (?:have|hold|contain)|"
                              r"are in the library|does shelfwise (?:have|know)|are (?:pdfs?|word|excel|powerpoint)|"
                              r"are (?:of type|in the folder|in folder|in my)|did i add)\b(?P<subject>.*)")),
    ("inventory", _c(POLITE + r"(?:list|show|name|enumerate|give me)(?: me)?(?: a list of)? (?:all |every )?"
                              r"(?:the |my )?" + DOCS + r"(?: (?:in|of|under|from) (?P<subject>.+?))?\s*[?.!]?$")),
    ("inventory", _c(POLITE + r"(?:what|which) " + DOCS + r"\s*[?.!]?$")),
    ("inventory", _c(POLITE + r"(?:do i have|have i got|have i added|are there|is there|does the library (?:have|"
                              r"hold|contain)) (?:any|some) " + DOCS + r"(?: (?:in|of|under) (?P<subject>.+?))?"
                              r"\s*[?.!]?$")),
    ("inventory", _c(POLITE + r"what(?:'s| is) (?:in|inside) (?:the |my )?(?:library|collection|folder (?P<subject>.+))"
                              r"\s*[?.!]?$")),
    # outline of a section, then of a document
    ("section", _c(POLITE + r"what (?:does|do|did) (?:the )?" + SECTION_REF + r"(?: of (?P<subject>.+?))? "
                 + VERB_COVER + r"(?!\s+(?:about|on|regarding)\b)")),
    ("section", _c(POLITE + r"what (?:does|do|did) " + SECTION_TOPIC + r"(?: (?:of|in) (?P<subject>.+?))? "
                 + VERB_COVER + r"\s*(?:[?.!]|$)")),
    ("section", _c(POLITE + r"what(?:'s| is| are)? (?:in|inside|under|covered in|covered by) (?:the )?(?:"
                 + SECTION_REF + r"|" + SECTION_TOPIC + r")(?: (?:of|in) (?P<subject>.+?))?\s*[?.!]?$")),
    ("section", _c(POLITE + r"(?:what is|what's|what are) (?:the )?" + SECTION_REF +
                   r"(?: (?:of|in) (?P<subject>.+?))? about\s*[?.!]?$")),
    ("section", _c(POLITE + r"(?:what are|list|show me|give me|name) (?:the )?(?:sub-?sections|parts|headings) "
                            r"(?:of|in|under) (?:the )?(?:" + SECTION_REF + r"|" + SECTION_TOPIC + r")"
                            r"(?: (?:of|in) (?P<subject>.+?))?\s*[?.!]?$")),
    ("outline", _c(POLITE + r"(?:what|which) (?:are|were|'re) (?:all )?(?:the )?(?:main |top-level |major |key |"
                            r"different |various )?" + PARTS + r" (?:of|in|within|inside|for|covered in|covered by)"
                            r" (?P<subject>.+)")),
    ("outline", _c(POLITE + r"(?:list|show|give|name|enumerate|tell)(?: me| us)? (?:all )?(?:of )?(?:the )?"
                            r"(?:main |top-level |major |key )?" + PARTS +
                            r"(?: (?:of|in|within|for) (?P<subject>.+?))?\s*[?.!]?$")),
    ("outline", _c(POLITE + r"(?:what|which) (?:main |top-level |major |key )?" + PARTS +
                            r" (?:does|do|did) (?P<subject>.+?) (?:have|contain|include|cover|consist of|"
                            r"comprise|break down into|discuss)\b")),
    ("outline", _c(POLITE + r"(?:what|which) (?:main |top-level |major |key )?" + PARTS +
                            r" (?:are|is) (?:there )?(?:in|inside|within) (?P<subject>.+)")),
    ("outline", _c(POLITE + r"(?:what is |what's |show me |give me |print |display )?(?:the |an? )?"
                            r"(?:table of contents|toc|outline|contents page|list of (?:chapters|sections)) "
                            r"(?:of|for|in) (?P<subject>.+)")),
    ("outline", _c(POLITE + r"(?:what is |what's |show me |give me |describe )?(?:the |an? )?"
                            r"(?:structure|layout|organi[sz]ation) (?:of|for|in) (?P<subject>(?:the |this |that |my )?"
                            r"(?:[\w&'-]+ ){0,6}?" + DOC_NOUN + r"s?)\s*[?.!]?$")),
    ("outline", _c(POLITE + r"(?:(?:show|tell|explain to) (?:me|us) )?how (?:is|are) (?P<subject>.+?) "
                            r"(?:organi[sz]ed|structured|laid out|arranged|broken down|divided|split up|set out)\b")),
    ("outline", _c(POLITE + r"(?:show|tell|explain to) (?:me|us) how (?P<subject>.+?) (?:is|are) "
                            r"(?:organi[sz]ed|structured|laid out|arranged|broken down|divided|split up|set out)\b")),
    ("outline", _c(POLITE + r"(?:what does|how does) (?:the )?(?:table of contents|toc|outline|structure) "
                            r"(?:of|for|in) (?P<subject>.+?) (?:look like|say|show|contain)\b")),
    ("outline", _c(POLITE + r"(?:what|which) (?:main |top-level |major |key )?" + PARTS +
                            r" (?:make up|are covered in|are covered by|are included in) (?P<subject>.+)")),
    # summaries of a document or a section
    ("summary", _c(POLITE + r"(?:summari[sz]e|sum up|recap|condense|digest|skim|abstract|tl;?dr)(?: for me)?:? "
                            r"(?P<subject>.+)")),
    ("summary", _c(POLITE + r"(?:give|write|make|provide|show|get)(?: me| us)? (?:a |an )?(?:short |brief |quick |"
                            r"one-paragraph |high-level |executive |general )?(?:summary|overview|recap|synopsis|"
                            r"rundown|gist|digest|abstract|precis|tl;?dr) (?:of|for|on) (?P<subject>.+)")),
    ("summary", _c(POLITE + r"(?:a |an )?(?:short |brief |quick )?(?:summary|overview|synopsis|gist|tl;?dr) "
                            r"(?:of|for) (?P<subject>.+)")),
    ("summary", _c(POLITE + r"what(?:'s| is| are) (?:the )?(?:gist|summary|main points?|key points?|highlights|"
                            r"key takeaways|main takeaways|takeaways|main ideas?|essence|overview) (?:of|in|from) "
                            r"(?P<subject>.+)")),
    ("summary", _c(POLITE + r"(?:what(?:'s| is)|whats) (?P<subject>(?:the |this |that |my |our )?(?:[\w&'.-]+ ){0,6}?"
                            r"[\w&'.-]+) (?:all )?about\s*[?.!]?$")),
    ("summary", _c(POLITE + r"(?:what does|what do) (?P<subject>(?:the |this |that )(?:[\w&'.-]+ ){0,5}?"
                 + DOC_NOUN + r"s?) (?:say|cover|contain|talk about)(?: overall| in general| in short)?\s*[?.!]?$")),
    ("summary", _c(POLITE + r"brief me on (?P<subject>.+)")),
    ("summary", _c(r"^(?:.*?\b(?:read|go through|get through|look at|open) )?(?P<subject>(?:the |this |that |my )"
                   r"(?:[\w&'.-]+ ){0,6}?" + DOC_NOUN + r"s?)\b.*?[,;.]?\s*(?:can|could|would) you "
                   r"(?:please )?(?:summari[sz]e|sum up|recap|give me (?:a summary|an overview|the gist) of) "
                   r"(?:it|them|that|this)\b")),
    ("summary", _c(POLITE + r"(?:give|show|tell|list)(?: me| us)? (?:the )?(?:main |key )?(?:highlights|main points|"
                            r"key points|takeaways|essentials) (?:of|from|in) (?P<subject>.+)")),
]

_SECTION_IN = re.compile(SECTION_REF + r"|" + SECTION_TOPIC + r"(?= of| in|\s*[?.!]?$)", _F)


def recognise(question: str) -> Intent | None:
    """The structural intent of ``question`` (its inline filters already taken out), or None."""
    q = " ".join(question.strip().split())
    q = re.sub(r"^(?:hey|hi|ok|okay|so|and|now)[,]?\s+", "", q, flags=_F)
    for kind, rule in RULES:
        m = rule.search(q) if kind == "mentions" else rule.match(q)
        if m is None:
            continue
        groups = m.groupdict()
        subject = _clean(groups.get("subject") or "")
        unit = (groups.get("unit") or groups.get("docs") or "").lower()
        unit = {"page": "pages", "slide": "slides", "sheet": "sheets", "section": "sections"}.get(unit, unit)
        section = _clean(groups.get("num") or groups.get("topic") or "")
        if kind in ("mentions", "where"):
            return Intent(kind, document=_clean(groups.get("doc") or ""), topic=subject)
        if kind == "summary":
            sm = _SECTION_IN.search(subject)
            if sm is not None:
                section = _clean(sm.group("num") or sm.group("topic") or "")
                subject = _clean(re.sub(r"^\s*(?:of|in)\s+", "", subject[sm.end():]))
        return Intent(kind, document=subject, unit=unit, section=section)
    return None


def _clean(text: str) -> str:
    text = re.sub(r"\s*[?.!]+$", "", text.strip())
    text = re.sub(r"\s+(?:have|has|contain|contains|consist of|in total|altogether|overall|in all|for me|please)$",
                  "", text, flags=_F)
    return text.strip(" ,;:'\"")
