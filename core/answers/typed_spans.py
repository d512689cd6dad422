"""Spans of a kind in a sentence, for the short answer (``core/answers/short.py``): numbers with what they count,
amounts, percentages and durations; dates and times joined across connectors; runs of capitalised words (names),
places after a preposition of place or an address, and series "A, B, C and D". Pure functions over strings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shelfwise.core.answers import cues
from shelfwise.core.answers.extractive import is_list_item
from shelfwise.core.answers.facts import STOPWORDS, TENS, UNITS, dates_in, times_in
from shelfwise.core.answers.phrases import FUNCTION_WORDS, number_word_spans
from shelfwise.core.languages import LazyPattern, lazy, word_units


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


_NUM = r"(?:\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
_CURRENCY = r"(?:EUR|USD|GBP|CHF|€|\$|£|Euro|euros?|dollars?|pounds?|Franken)"
_PERCENT = r"(?:%|percent|per cent|Prozent|pour ?cent)"
_PER = r"(?:\s+(?:per|a|each|every|pro|je|par)\s+(?:(?:calendar|working|business|full)\s+)?[^\W\d_]+)"
_PHONE = lazy(r"(?<![\w+])\+\d{1,3}(?:[ -]?\(?\d{1,4}\)?){2,5}(?![\w-])")  # an international phone number
_MONEY = lazy(rf"{_CURRENCY}\s?{_NUM}{_PER}?|{_NUM}\s?{_CURRENCY}(?![^\W\d_]){_PER}?", re.I)
_PERCENT_SPAN = lazy(rf"{_NUM}\s?{_PERCENT}(?![^\W\d_])", re.I)
_MODIFIERS = {"working", "calendar", "business", "consecutive", "full", "paid", "unpaid", "extra", "additional",
              "fully", "unused", "remaining", "further", "public", "bezahlte", "volle", "weitere", "zusätzliche"}
_UNIT_WORD = lazy(r"\s?([^\W\d_][\w'’-]*)(?:\s+([^\W\d_][\w'’-]*))?")
_WORD_NUM = "|".join(sorted([*(w for w in UNITS if w != "one"), *TENS, "hundred", "thousand"], key=len, reverse=True))
NUMBER_WORD_EN = lazy(rf"\b(?:{_WORD_NUM})(?:[\s-]+(?:and[\s-]+)?(?:{_WORD_NUM}))*\b", re.I)
# a fraction said in words: a share ("a two-thirds majority", "one quarter of the staff", "zwei Drittel", "deux tiers")
# ("a half-hourly train", "a third party" are none)
_FRACTION = lazy(r"\b(?:one|two|three|four|five|ein|zwei|drei|vier|un|deux|trois|quatre)[\s-]"
                 r"(?:half|halves|thirds?|quarters?|fifths?|drittel|viertel|fünftel|tiers|quarts?)(?![\w-])|"
                 r"\ba (?:half|third|quarter) of\b", re.I)
# a bare number right after a capitalised word that is not the sentence's first (a street's, a room's, a version's)
_NAME_BEFORE = lazy(r"[^\W\d_][\w'’-]*,?[ \t]+[A-Z][\w'’-]*[ \t]+$")
_NUMBER = lazy(rf"(?<![\w.,:/-]){_NUM}(?:st|nd|rd|th|\.)?(?![\w:/]|[.,]\d)")
_DURATION_UNITS = {"second", "minute", "hour", "day", "week", "fortnight", "month", "year", "sekunde", "stunde", "tag",
                   "woche", "monat", "jahr", "seconde", "heure", "jour", "semaine", "mois", "an",
                   "année", "tage", "wochen", "monate", "jahre", "stunden", "minuten", "jours", "semaines", "ans",
                   "années", "heures"}
WEEKDAY = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag|"
            r"freitag|samstag|sonntag|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)s?")
MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|januar|"
          r"februar|märz|mai|juni|juli|oktober|dezember|janvier|février|mars|avril|juin|juillet|août|septembre|"
          r"octobre|novembre|décembre)")
_SEASON = r"(?:spring|summer|autumn|fall|winter|frühling|frühjahr|sommer|herbst|printemps|été|automne|hiver)"
_ORDINAL = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d{1,2}(?:st|nd|rd|th)|"
            r"ersten|zweiten|dritten|vierten|fünften|premier|deuxième|troisième|quatrième|cinquième)")
_DAY_PIECES = lazy(rf"\b(?:from|on|by|ab|vom|am|à partir du|dès le)\s+(?:the\s+|dem\s+|le\s+)?{_ORDINAL}"
                   rf"(?:\s+[^\W\d_]+){{0,3}}?\s+(?:day|tag|jour)\b|"
                   rf"\b(?:(?:every|each|jeden|jede|chaque|tous les)\s+)?{WEEKDAY}\b|"
                   rf"{cues.DAY_OF_MONTH}|"
                   rf"\b(?:in\s+|im\s+|en\s+)?{MONTH}\b(?:\s+(?:19|20)\d\d)?|"
                   rf"\b(?:{_SEASON}\s+(?:of\s+)?)?(?:1\d|20)\d\d(?:s\b|er\b)?(?!\w)", re.I)
_JOIN = lazy(r"^(?:\s*(?:,|\||to|and|until|till|through|at|on|from|-|–|bis|und|um|ab|à|et|au|jusqu'à|de|du|"
             r"le|am|on the)\s*)+$|^\s+$", re.I)
_LEAD = lazy(r"(?:\b(?:every|each|from|between|by|before|until|on|at|with the|within|jeden|jede|ab|bis|"
             r"vom|von|zwischen|am|um|chaque|du|entre|dès|avant|le)\s+)$", re.I)


def _merge(spans: list[Span], text: str, join: re.Pattern[str] | LazyPattern = _JOIN) -> list[Span]:
    """Spans that follow each other with only a connector ("to", "and", ",", "at") between them, joined."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda x: (x.start, -x.end)):
        if out and s.start < out[-1].end:
            if s.end > out[-1].end:
                out[-1] = Span(out[-1].start, s.end, out[-1].kind)
            continue
        if out and join.match(text[out[-1].end:s.start]) and s.start - out[-1].end <= 12:
            out[-1] = Span(out[-1].start, s.end, out[-1].kind)
        else:
            out.append(s)
    return out


def _with_lead(span: Span, text: str) -> Span:
    m = _LEAD.search(text[: span.start])
    return Span(m.start(), span.end, span.kind) if m else span


def time_spans(text: str) -> list[Span]:
    """Clock times with the weekdays beside them, joined across connectors: "10:00 to 15:00, Monday to Friday"."""
    pieces = [Span(m.start(), m.end(), "time") for m in re.finditer(
        r"\b\d{1,2}(?::\d{2})?\s*[ap]\.?m\.?\b|\b\d{1,2}(?::|h)\d{2}\b(?:\s*(?:Uhr|h)\b)?|"
        r"\b\d{1,2}\.\d{2}\s*(?:Uhr|h)\b|\b\d{1,2}\s*Uhr\b", text, re.I)]
    if not pieces:
        return []
    days = [Span(m.start(), m.end(), "time") for m in re.finditer(WEEKDAY, text, re.I)]
    merged = _merge([*pieces, *days], text)
    return [_with_lead(s, text) for s in merged if any(p.start >= s.start and p.end <= s.end for p in pieces)]


_DAY_BEFORE = lazy(r"\b\d{1,2}(?:st|nd|rd|th|\.)?\s*(?:to|until|till|bis|au|-|–)\s*$", re.I)


# the word that ties a value to what it bounds, said before "how many / how long / when" in a question and before the
# value in a sentence: "within how many days" and "within 30 days", "by when" and "by 31 March"
_TIE = (r"(?:within|after|before|by|until|till|from|since|up to|at least|at most|innerhalb|nach|vor|bis|seit|dans|"
        r"après|avant|jusqu'à|depuis)")
_TIE_ASKED = lazy(rf"\b({_TIE})\s+(?:how|when|what|which|wie|wann|welche\w*|combien|quand|quel\w*)\b", re.I)


def tied_as_asked(text: str, span: Span, question: str) -> bool:
    """Whether the word that ties the asked value in ``question`` ("within how many days") stands right before
    ``span`` in ``text`` ("within 30 days"), or opens it."""
    asked = _TIE_ASKED.search(question)
    if asked is None:
        return False
    tie = asked.group(1).lower()
    before = text[max(0, span.start - 20): span.end].lower()
    return bool(re.search(rf"\b{re.escape(tie)}\s+(?:the\s+)?{re.escape(text[span.start:span.end].lower())}$", before)
                or text[span.start:span.end].lower().startswith(tie + " "))


# "after 26 weeks", "beyond the first 6 months": the question asks for what holds after a first period
_AFTER_PERIOD = lazy(r"\b(?:after|beyond|past)\s+(?:the\s+first\s+)?(\d+)\s+([^\W\d_]+)", re.I)


_TAKES = lazy(r"\bhow long (?:does|do|did|will|would|should|can)\b.*\b(?:take|last)\b", re.I)


def as_asked(text: str, span: Span, question: str) -> float:
    """1 where ``span`` is tied as the question ties the value (:func:`tied_as_asked`); -1 for a deadline ("within
    14 days") where the question asks how long something takes, and where the question asks what holds after a
    first period ("What percentage ... after 26 weeks of illness?") and ``span`` is the value for that first period
    ("100 percent of your salary for the first 26 weeks and 70 percent for the following 78 weeks"); 0 otherwise."""
    if tied_as_asked(text, span, question):
        return 1.0
    if _TAKES.search(question) and re.match(r"(?:within|by|before)\s", text[span.start:span.end], re.I):
        return -1.0  # "How long does the e-learning take?": its deadline, "within 14 days", ranks below a duration
    after = _AFTER_PERIOD.search(question)
    if after and re.match(rf"[^.;]{{0,40}}?\bfor the first {after.group(1)} {re.escape(after.group(2))}",
                          text[span.end:], re.I):
        return -1.0
    return 0.0


def restates(piece: str, question: str) -> bool:
    """Whether ``piece`` says nothing ``question`` does not: each of its words and numbers, short ones ("NW", "Wi")
    too, is one of the question's (a plural "s" and all past the fifth letter aside) or a function word. The
    question's own words or numbers are no answer to it ("30" for "... more than 30 days?")."""
    def stem(word: str) -> str:
        return word.removesuffix("s")[:5] if len(word) > 3 else word

    words = re.findall(r"[^\W_]+", piece.lower())
    asked = {stem(w) for w in re.findall(r"[^\W_]+", question.lower())}
    return bool(words) and all(w in STOPWORDS or w in FUNCTION_WORDS or stem(w) in asked for w in words)


def abbreviates(text: str, span: Span, question: str) -> bool:
    """Whether ``span`` is an abbreviation in brackets of what the question names: "a defibrillator (AED)" for
    "Where is the defibrillator?" (the initials of the words before, or the word before being the question's)."""
    piece, before = text[span.start:span.end], re.findall(r"[^\W_]+", text[max(0, span.start - 80):span.start])
    if not (piece.isupper() and 2 <= len(piece) <= 6 and text[:span.start].rstrip().endswith("(") and before):
        return False
    initials = "".join(w[0] for w in before[-len(piece):]).upper()
    return initials == piece or restates(before[-1], question)


# a phone number or an extension named as what is asked for (a question only mentioning a helpline may ask its name)
_NUMBER_NAMED = (r"\b(?:tele)?phone (?:number|no)\b|\bextension\b(?! of\b)|\btelefonnummer|\bdurchwahl\b|"
                 r"\bnuméro de (?:téléphone|poste)\b|\bnuméro (?:du|de la|de l['’])\s*(?:[\w'-]+ ){0,3}"
                 r"(?:desk|ligne|accueil|service|standard|réception)\b")
_NUMBER_Q = lazy(_NUMBER_NAMED, re.I)
# ... or a question that a phone number answers among others ("What is the number of the travel assistance line?")
_PHONE_Q = lazy(r"\b(?:tele)?phone\b|\b(?:hotline|helpline)\b|\bnumber (?:of|for) (?:the |our |a )?(?:[\w'-]+ ){0,3}"
               r"(?:line|desk|hotline|helpline|reception)\b|"
               r"\bnummer (?:des|der|vom) (?:[\w'-]+ ){0,3}\w*(?:desk|hotline|empfang|zentrale)\b|"
               + _NUMBER_NAMED, re.I)
# an internal extension ("extension 4300", "Durchwahl 12", "poste 4300")
_EXTENSION = lazy(r"\b(?:extension|ext\.|durchwahl|poste)\s+\d{2,6}\b", re.I)
_EXTENSION_Q = lazy(r"\b(?:extension|durchwahl|poste)\b", re.I)
_EITHER = lazy(r"\s+(?:or|oder|ou)\s+$", re.I)


def asks_phone(question: str) -> bool:
    """Whether ``question`` asks for a phone number or an extension ("What is the travel assistance phone
    number?", "Which extension do I call ...?", "Wie lautet die Durchwahl ...?"), not the extension of a term."""
    return bool(_NUMBER_Q.search(question))


def phone_spans(text: str, question: str) -> list[Span]:
    """The phone numbers and extensions of ``text`` ("+31 10 555 0199", "extension 4300") where the question asks
    for one ("What is the number of the travel assistance line?": not the "24" of "24-hour"); [] otherwise."""
    if not _PHONE_Q.search(question):
        return []
    phones, extensions = list(_PHONE.finditer(text)), list(_EXTENSION.finditer(text))
    # the kind named first: an extension asked for ("Which extension ...?") before a phone number, else the reverse;
    # the two given as one ("extension 4400 or +31 10 555 0144") answer either question whole
    found = (extensions or phones) if _EXTENSION_Q.search(question) else (phones or extensions)
    both = _merge([Span(m.start(), m.end(), "number") for m in [*phones, *extensions]], text, _EITHER)
    return [b for b in both if any(b.start <= m.start() and m.end() <= b.end for m in found)]


# a clock time asked for: a date is no answer to it ("What time does the canteen close?" is not "29 to 31 December")
_CLOCK_Q = lazy(r"\b(?:what|which|at what|by what|until what) time\b(?! of (?:the )?(?:year|month|week|day)\b)|"
                r"\bum wie ?viel uhr\b|\buhrzeit\b|\b(?:à )?quelle heure\b", re.I)


def asks_clock(question: str) -> bool:
    """Whether ``question`` asks for a clock time ("What time ...?", "Um wie viel Uhr ...?", "À quelle heure ...?"),
    not for opening hours or a time of year."""
    return bool(_CLOCK_Q.search(question))


# who to contact, write to or call: an address or a phone number of the sentence is the answer
_CONTACT_Q = lazy(r"\bwho(?:m)? (?:do|should|can|must|shall) (?:i|we|you) (?:contact|e-?mail|call|phone|ring|"
                  r"write to|reach|ask)\b|\b(?:an )?wen (?:kontaktiere|schreibe|rufe|frage|wende)|"
                  r"\bà qui (?:dois-je |faut-il )?(?:écrire|téléphoner|m'adresser|s'adresser)|"
                  r"\bqui (?:dois-je |faut-il )?(?:contacter|appeler)\b", re.I)
_EMAIL = r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"  # an e-mail address (a place's host too: ``_HOST``)
_ADDRESS = lazy(_EMAIL)


def contact_spans(text: str, question: str) -> list[Span]:
    """Where the question asks whom to contact ("Who do I contact about payroll?"): the e-mail addresses and phone
    numbers of ``text`` ("payroll@northwindlabs.example", not "team answers questions"); [] otherwise."""
    if not _CONTACT_Q.search(question):
        return []
    found = [*_ADDRESS.finditer(text), *_PHONE.finditer(text)]
    return [Span(m.start(), m.end(), "contact") for m in sorted(found, key=lambda m: m.start())]


_ARTICLE_BEFORE = lazy(r"(?<![\w'])(?:the|a|an|der|die|das|den|dem|des|ein|eine|einen|le|la|les|un|une)\s+$|"
                       r"(?<![\w'])l['’]$", re.I)


def typed_places(text: str, spans: Sequence[Span]) -> dict[tuple[int, int], Span]:
    """Each of ``spans`` by its place in ``text``, and, for each that follows an article, its place with the article
    ("the Deskbook app"), both to the span itself: a name with its article is still a name of the kind asked for,
    and is shown without it."""
    out = {(sp.start, sp.end): sp for sp in spans}
    for sp in spans:
        m = _ARTICLE_BEFORE.search(text, max(0, sp.start - 8), sp.start)
        if m:
            out.setdefault((m.start(), sp.end), sp)
    return out


def bare_value(phrase: str, who: bool = False) -> bool:
    """Whether ``phrase`` is nothing but a date or a clock time (or, ``who``: also a number with what it counts,
    "2 working days"), which answers no question asking what (it would ask when) or who."""
    spans = date_spans(phrase) + time_spans(phrase) + (quantity_spans(phrase) if who else [])
    body = len(phrase.strip(" .,;:()"))
    return any(s.end - s.start >= 0.8 * body for s in spans) if body else False


def date_spans(text: str) -> list[Span]:
    """Dates as written (``dates_in``: "31 March", "12.06.2026"), weekdays, months and years, joined across
    connectors, with a leading "every"/"by"/"from" kept ("every Monday at 11:00")."""
    pieces: list[Span] = []
    for written, _ in dates_in(text):
        at = text.find(written)
        if at >= 0:
            pieces.append(Span(at, at + len(written.rstrip(". ")), "date"))
    # the verb "may" is no month: lower case and alone (no day or year with it), it is left out
    pieces += [Span(m.start(), m.end(), "date") for m in _DAY_PIECES.finditer(text) if m.group(0) != "may"]
    pieces += [Span(m.start(), m.end(), "date") for m in cues.CJK_DATE.finditer(text)]
    pieces += [Span(text.find(w), text.find(w) + len(w), "date") for w, _ in times_in(text) if text.find(w) >= 0]
    # "with the May salary": a month word heads a noun phrase
    merged = _merge([p for p in pieces if not _in_name(text, p)], text)
    out = []
    for s in merged:
        day = _DAY_BEFORE.search(text[:s.start])  # "from 29 to 31 December": the range's first day, its month shared
        if day and text[s.start].isdigit():
            s = Span(day.start(), s.end, "date")
        s = _with_lead(s, text)
        tail = re.match(r"\s+(?:salary|payment|payroll|Gehalt|salaire)\b|\s*Uhr\b", text[s.end:], re.I)
        out.append(Span(s.start, s.end + tail.end(), "date") if tail else s)
    return out


def _in_name(text: str, piece: Span) -> bool:
    """Whether a year is part of a name, joined to a word by a hyphen ("2019-nCoV", "COVID-2019"; not
    "mid-2019")."""
    if not re.fullmatch(r"\d{4}", text[piece.start:piece.end]):
        return False
    before = re.search(r"([^\W\d_]+)-$", text[max(0, piece.start - 20):piece.start])
    return bool(re.match(r"-[^\W\d_]", text[piece.end:piece.end + 2])) or bool(
        before and before.group(1).lower() not in ("mid", "pre", "post", "early", "late", "end", "mitte", "ende"))


def _function(word: str) -> bool:
    return word.lower() in STOPWORDS or word.lower() in FUNCTION_WORDS


def _modifies(number: str, first: str, second: str) -> bool:
    """Whether ``first`` is a noun before the plural noun ``second`` that a number more than one counts ("12
    parking spaces", "3 meeting rooms", "2 company cars"): ``first`` singular and lower case, ``second`` a lower-case
    word ending in -s that is not a function word (English; a number of one is followed by a singular noun, and a
    verb then could end in -s: "1 person receives")."""
    digits = number.replace(",", "").replace(".", "")
    return (digits.isdigit() and int(digits) > 1 and first.isalpha() and first.islower() and not first.endswith("s")
            and first not in _DURATION_UNITS and second.isalpha() and second.islower() and second.endswith("s")
            and not _function(second) and len(second) > 3)


# the level of a confidence or credible interval ("95% CI", "95 % KI", "IC à 95 %"): never the value asked for
_INTERVAL_LEVEL = lazy(r"\b\d{2}(?:[.,]\d)?\s?%\s*(?:CIs?|CrIs?|UI|confidence|credible|uncertainty|KI|"
                       r"Konfidenzintervall|Vertrauensbereich)\b|\b(?:IC|CI|KI)\s?(?:à\s)?\d{2}(?:[.,]\d)?\s?%",
                       re.I)


# a question asking for a sum of money: "how much" (or "what amount", "combien", "wie viel") with what is paid
# ("paid" that describes leave or time, "how much paid annual leave", asks for days, not money)
_MONEY_Q = lazy(r"\b(?:how much|what (?:is the )?amount|wie ?viel|combien|quel(?:le)? est le montant)\b.*\b(?:"
                r"cost|costs|pay|paid(?!\s+(?:[\w-]+\s+){0,2}(?:leave|time|holidays?|vacation|days?|breaks?|"
                r"weeks?|hours?)\b)|fee|fees|charge|charged|price|penalty|fine|tax|allowance|pension|salary|wage|"
                r"spend|owe|repay|refund|deposit|grant|loan|worth|money|kostet|kosten|gebühr|preis|zahlen|bezahlen|"
                r"betrag|coûte|coût|prix|frais|payer|montant)\b|\b(?:was kostet|combien coûte)\b", re.I)


# how far something goes or reaches (a distance, a level), not how far in advance: a duration is no answer to it
_EXTENT_Q = lazy(r"\bhow far\b(?! (?:in advance|ahead|before|back)\b)|\bwie weit\b(?! im voraus\b)|"
                 r"\bà quelle distance\b|\bjusqu['’]où\b", re.I)


_WITHIN = lazy(r"(?:within|in|after|by|before|innerhalb|binnen|nach|vor|dans|sous|avant|après)\b", re.I)


def deadline_for_extent(piece: str, kind: str, question: str) -> bool:
    """Whether ``piece``, a duration, is a time limit ("within two months") given for a question asking how far
    something goes ("How far can my flexitime balance go below zero?"), not how far in advance: no answer to it
    ("minus 10 hours" is)."""
    return kind == "duration" and bool(_WITHIN.match(piece)) and bool(_EXTENT_Q.search(question))


def asks_money(question: str) -> bool:
    """Whether ``question`` asks for a sum of money ("How much does the application cost?"): answered by an amount
    or a share ("How much tax ...?" by "25%"), not by a count of weeks or items."""
    return bool(_MONEY_Q.search(question))


def quantity_spans(text: str) -> list[Span]:
    """Numbers with what they count: money ("EUR 600", "600 €"), percentages, a number and its unit word(s)
    ("27 days", "2 working days", "14 characters"), a bare number last; clock times and dates are left out."""
    taken: list[Span] = []
    excluded = [(s.start, s.end) for s in time_spans(text)]
    excluded += [(text.find(w), text.find(w) + len(w)) for w, _ in dates_in(text) if text.find(w) >= 0]
    excluded += [m.span() for m in _INTERVAL_LEVEL.finditer(text)]  # "95% CI": how sure, not a value of the text

    def free(a: int, b: int) -> bool:
        return not any(x < b and a < y for x, y in [*excluded, *((s.start, s.end) for s in taken)])

    for m in _PHONE.finditer(text):  # "+31 10 555 0199": one number, not four
        taken.append(Span(m.start(), m.end(), "number"))
    for m in _MONEY.finditer(text):
        if free(m.start(), m.end()):
            taken.append(Span(m.start(), m.end(), "money"))
    for m in [*_PERCENT_SPAN.finditer(text), *_FRACTION.finditer(text)]:  # "two-thirds" is a share, no count
        if free(m.start(), m.end()):
            taken.append(Span(m.start(), m.end(), "percent"))
    numbers = sorted([*_NUMBER.finditer(text), *NUMBER_WORD_EN.finditer(text)], key=lambda m: m.start())
    for m in numbers:
        a, b = m.start(), m.end()
        if not free(a, b) or (re.match(r"\d{4}$", m.group(0)) and 1900 <= int(m.group(0)) <= 2099):
            continue
        unit = _UNIT_WORD.match(text, b)
        kind = "number"
        if unit:
            first, second = unit.group(1), unit.group(2)
            if (first.lower() not in STOPWORDS and not first[0].isupper()) or first.lower() in _DURATION_UNITS:
                b = unit.start(1) + len(first)
                if second and first.lower() in _MODIFIERS and second.lower() not in STOPWORDS:
                    b = unit.end(2)
                elif second and _modifies(m.group(0), first, second):
                    b = unit.end(2)  # "12 parking spaces", "3 meeting rooms": not "12 parking"
                per = re.match(_PER, text[b:])
                if per:
                    b += per.end()
                words = text[m.end():b].lower().split()
                if any(w.rstrip("s") in _DURATION_UNITS or w in _DURATION_UNITS for w in words[:2]):
                    kind = "duration"
        if b == m.end() and _NAME_BEFORE.search(text, 0, a):
            continue  # "Lantern Quay 14", "Travessa do Barometro 7", "Version 2.1": a name's number, no count
        taken.append(Span(a, b, kind))
    for a, b in number_word_spans(text):  # "vier Pro Bowl-Selektionen", "two metropolitan areas"
        if free(a, b):
            unit = _UNIT_WORD.match(text, b)
            if unit and not _function(unit.group(1)):  # its unit word, as for a number in digits
                b = unit.start(1) + len(unit.group(1))
            taken.append(Span(a, b, "number"))
    return [_bounded(s, text) for s in _ranges(sorted(taken, key=lambda s: s.start), text)]


# the words that bound a quantity, said before it: "up to £9,000", "at least 30 days", "within 21 days", "bis zu 30
# %", "au moins 3 ans": the bound is part of the value ("£9,000" alone says more than the sentence does)
_BOUND = lazy(r"(?:\b(?:up to|at least|at most|no more than|not more than|no less than|more than|less than|fewer than|"
              r"(?:longer|shorter|older|younger|greater|higher|lower) than|"
              r"over|under|about|around|approximately|roughly|nearly|almost|within|in excess of|a maximum of|"
              r"a minimum of|as (?:much|many|little|few) as|bis zu|mindestens|höchstens|maximal|mehr als|"
              r"weniger als|über|unter|etwa|rund|circa|ca\.|ungefähr|innerhalb von|innerhalb|jusqu'à|jusqu’à|"
              r"au moins|au plus|plus de|moins de|environ|près de)\s+)$", re.I)
# two quantities joined as a range: "6 to 9 months", "£5-£10", "zwischen 6 und 9 Monaten", "de 6 à 9 mois"
_RANGE = lazy(r"^\s*(?:to|or|and|-|–|bis|und|oder|à|et|ou)\s*$", re.I)
# and after it: "75% or more", "21 or over", "£20 each", "3 Jahre oder länger"
_BOUND_AFTER = lazy(r"^\s+(?:or (?:more|less|over|above|under|fewer|longer)|and (?:over|above)|"
                    r"oder (?:mehr|weniger|länger|älter)|ou plus|au maximum|au minimum)\b", re.I)
_RANGE_LEAD = lazy(r"(?:\b(?:between|from|zwischen|von|entre|de)\s+)$", re.I)


def _ranges(spans: list[Span], text: str) -> list[Span]:
    """``spans`` with a quantity and the next one joined where they make a range ("6 to 9 months": the first a
    bare number or of the second's kind), "between"/"from" before it kept."""
    out: list[Span] = []
    for s in spans:
        prev = out[-1] if out else None
        if (prev is not None and _RANGE.match(text[prev.end:s.start])
                and (prev.kind == s.kind or not re.search(r"[^\W\d_]", text[prev.start:prev.end]))):
            lead = _RANGE_LEAD.search(text[max(0, prev.start - 12):prev.start])
            out[-1] = Span(prev.start - (len(lead.group(0)) if lead else 0), s.end, s.kind)
        else:
            out.append(s)
    return out


_UNIT = (r"(?:days?|weeks?|fortnights?|months?|quarters?|years?|hours?|tage?|wochen?|monate?|monats|jahre?|jahres|"
         r"jours?|semaines?|mois|ans?|années?)")
_CAL = r"(?:(?:calendar|working|business|financial|school)\s+)?"  # "once per calendar month"
_FREQUENCY = lazy(rf"\b(?:(?:every|each|jede[nrs]?|alle|chaque|tous les|toutes les)\s+(?:(?:\d+|other|two|three|four|"
                  rf"five|six|zwei|drei|vier|fünf|sechs|deux|trois|quatre|cinq|six)(?:\s+or\s+\d+)?\s+)?{_CAL}{_UNIT}|"
                  rf"(?:once|twice|\d+ times|einmal|zweimal|une fois|deux fois)\s+(?:a|per|every|pro|im|par)\s+{_CAL}"
                  rf"{_UNIT}|"
                  r"daily|weekly|fortnightly|monthly|quarterly|annually|yearly|twice|täglich|wöchentlich|monatlich|"
                  r"vierteljährlich|jährlich|quotidien(?:ne)?|hebdomadaire|mensuel(?:le)?|trimestriel(?:le)?|"
                  r"annuel(?:le)?)\b", re.I)


def frequency_spans(text: str) -> list[Span]:
    """How often: "every month", "every 6 or 12 months", "twice a year", "quarterly", "monatlich", "chaque année"."""
    return [Span(m.start(), m.end(), "frequency") for m in _FREQUENCY.finditer(text)]


def unbound_as_asked(span: Span, text: str, question: str) -> Span:
    """``span`` without the bound the question itself names ("Up to what value ...?" is answered "EUR 50", not "up
    to EUR 50"; "within how many days" by "30 days")."""
    asked = _TIE_ASKED.search(question)
    tie = asked.group(1).lower() if asked else ""
    piece = text[span.start:span.end]
    if tie and piece.lower().startswith(tie + " "):
        return Span(span.start + len(tie) + 1, span.end, span.kind)
    return span


# a comparison that a negation before it in its clause turns around: "No one may work more than 10 overtime hours"
# allows at most 10, so "more than 10" is not what it says (the bare quantity is shown; "no more than" is a bound)
_COMPARATIVE = lazy(r"^(?:more than|less than|fewer than|over|under|in excess of|mehr als|weniger als|über|unter|"
                    r"plus de|moins de)\s+$", re.I)
_CLAUSE_START = lazy(r"[.;:!?,]\s")


def _negated_clause(text: str, at: int) -> bool:
    """Whether the clause of ``text`` that runs up to ``at`` holds a negation word (:data:`cues.NEGATION`)."""
    starts = [m.end() for m in _CLAUSE_START.finditer(text, max(0, at - 120), at)]
    return bool(cues.NEGATION.search(text, starts[-1] if starts else max(0, at - 120), at))


def _bounded(span: Span, text: str) -> Span:
    """``span`` with the words that bound it before and after it (:data:`_BOUND`, :data:`_BOUND_AFTER`), not a
    comparison its clause negates (:data:`_COMPARATIVE`)."""
    bound = _BOUND.search(text[max(0, span.start - 24):span.start])
    if bound and _COMPARATIVE.match(bound.group(0)) and _negated_clause(text, span.start - len(bound.group(0))):
        bound = None
    after = _BOUND_AFTER.match(text[span.end:])
    return Span(span.start - (len(bound.group(0)) if bound else 0), span.end + (after.end() if after else 0),
                span.kind)


_CAP_WORD = r"(?:[A-ZÄÖÜÀ-Ý][\w'’&.-]*|[A-Z]+[A-Z0-9]*-?\d+[\w-]*)"
_CAP_RUN = lazy(rf"{_CAP_WORD}(?:\s+(?:(?:of|de|des|du|la|le|von|der|and|&|für|for)\s+)?{_CAP_WORD})*"
                r"(?:\s*\([A-Z0-9][\w-]*\))?")
_HOST = lazy(rf"(?:https?://|www\.)\S+[\w/]|{_EMAIL}|"
             r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+\.(?:com|org|net|example|io|de|fr|nl|uk|eu|gov|edu)\b",
             re.I)
_PLACE_PREP = lazy(r"\b(?:at|in|on|to|from|through|near|im|am|in der|in den|auf|bei|nach|à|au|aux|dans|"
                   r"chez|sur|en)\s+(?:the\s+|der\s+|die\s+|dem\s+|le\s+|la\s+|les\s+|l')?$", re.I)


_OPENER = lazy(r"(?:[QA]:|[-*•–])\s+")


def name_spans(text: str, question: str) -> list[Span]:
    """Runs of capitalised words or codes that the question does not already say (the first word of the sentence
    only when more follow), each with the question's head noun when it follows ("... form (OT-2)")."""
    q_words = {w.lower() for w in word_units(question)}
    head = _head_noun(question)
    opens = _OPENER.match(text)
    first = opens.end() if opens else 0  # where the sentence's first word stands, past an FAQ's "A:" or a bullet
    out = []
    for m in _CAP_RUN.finditer(text):
        a, b = m.start(), m.end()
        words = [w.lower().strip(".,()") for w in m.group(0).split()]
        if a <= first and len(words) == 1:
            continue
        if all(w in q_words or w in STOPWORDS for w in words):
            continue
        if re.search(r"[^\W\d_]{4,}\.$", m.group(0)) and not m.group(0).split()[-1][:-1].isupper():
            b -= 1  # the sentence's full stop ("the Security Team."), not an abbreviation's ("Ltd.", "St.")
        tail = re.match(r"\s+([a-z]+)(\s*\(?[A-Z]{1,4}-?\d+[\w-]*\)?)?", text[b:])
        if tail and head and tail.group(1).lower().startswith(head[:5]):
            b += tail.end()
        out.append(Span(a, b, "name"))
    return out


def place_spans(text: str, question: str) -> list[Span]:
    """An address or host, else a capitalised run after a preposition of place ("at Lantern Quay 14, Rotterdam")."""
    out = [Span(m.start(), m.end(), "place") for m in _HOST.finditer(text)]
    for s in name_spans(text, question):
        if _PLACE_PREP.search(text[: s.start]):
            b = s.end
            more = re.match(r"(?:\s*\d+[a-z]?)?(?:,\s*[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)?", text[b:])
            if more and more.group(0).strip():
                b += more.end()
            out.append(Span(s.start, b, "place"))
    return sorted(out, key=lambda s: s.start)


_ITEM = rf"{_CAP_WORD}(?:\s+{_CAP_WORD})*"
# "A, B, C and D", or two items "A and B" (no comma: "Rotterdam, and Levante" is no series)
_SERIES = lazy(rf"{_ITEM}(?:,\s+{_ITEM})+,?\s+(?:and|or|und|oder|et|ou)\s+{_ITEM}|"
               rf"{_ITEM}\s+(?:and|or|und|oder|et|ou)\s+{_ITEM}")


def list_spans(text: str) -> list[Span]:
    """A series "A, B, C and D" (or "A and B") of capitalised items, or the items of a list that a lead-in brings
    (one a line)."""
    out = [Span(m.start(), m.end(), "list") for m in _SERIES.finditer(text)]
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)]
    items = [(a, b) for a, b in lines[1:] if is_list_item(text[a:b])]
    if len(items) >= 2:
        out.append(Span(items[0][0], items[-1][1], "list"))
    return out


def _head_noun(question: str) -> str:
    """The noun a "which/what X" question asks about ("Which form do you use" -> "form")."""
    m = re.search(r"\b(?:which|what|welche[rsnm]?|quel(?:le)?s?)\s+(?:\w+\s+)??([a-zäöüéèà]+)\b", question, re.I)
    if not m:
        return ""
    word = m.group(1).lower()
    return "" if word in STOPWORDS or word in {"is", "are", "was", "were", "do", "does", "ist", "sind", "est"} \
        else word
