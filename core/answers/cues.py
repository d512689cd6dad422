"""Question-type cues beyond English: "how many / how much" and "when" in the languages Shelfwise is evaluated in
(German, Spanish, French, Russian, Chinese, Japanese, Korean, Arabic, Hindi, Vietnamese, Turkish), and dates as
those languages write them. Used by the extractive answer (``extractive.type_cue``) beside its English patterns.

Words of scripts written without spaces are matched anywhere (no word boundary exists there); the others at word
boundaries.
"""

from __future__ import annotations

import re

from shelfwise.core.languages import lazy

_SPACED_QUANTITY = (
    r"wie (?:viele?|lange|oft|alt|weit|groß|hoch)|wieviele?"  # de
    r"|cu[aá]nt[oa]s?|qu[eé] (?:cantidad|porcentaje|n[uú]mero)"  # es
    r"|combien"  # fr
    r"|сколько|какой (?:процент|возраст)"  # ru
    r"|كم"  # ar
    r"|कितन[ाीे]"  # hi
    r"|bao nhi[eê]u|mấy"  # vi
    r"|kaç|ne kadar"  # tr
)
_UNSPACED_QUANTITY = r"多少|几|幾|多大|多长|多久|多高|多远|いくつ|いくら|何人|何個|何回|何歳|何パーセント|얼마|몇"
_SPACED_WHEN = (
    r"wann|in welchem jahr|an welchem tag"  # de
    r"|cu[aá]ndo|en qu[eé] (?:a[nñ]o|fecha|d[ií]a|mes)"  # es
    r"|quand|en quelle ann[eé]e"  # fr
    r"|когда|в каком году|какого числа"  # ru
    r"|متى|في أي عام|في أي سنة"  # ar
    r"|कब|किस वर्ष|किस साल"  # hi
    r"|khi n[aà]o|bao gi[oờ]|n[aă]m n[aà]o|ng[aà]y n[aà]o"  # vi
    r"|ne zaman|hangi y[iı]l|hangi tarih"  # tr
)
_UNSPACED_WHEN = r"什么时候|何时|何時|哪一?年|哪一?天|几月|几号|几点|いつ|何年|何月|何日|何時|언제|몇 ?년"

QUANTITY = lazy(rf"(?<!\w)(?:{_SPACED_QUANTITY})(?!\w)|{_UNSPACED_QUANTITY}", re.IGNORECASE)
WHEN = lazy(rf"(?<!\w)(?:{_SPACED_WHEN})(?!\w)|{_UNSPACED_WHEN}", re.IGNORECASE)
# "2019年3月31日", "3月31日", "2019년 3월", "1958年": a date written with the CJK year / month / day signs
CJK_DATE = lazy(r"\d{1,4}\s*[年月日년월일]")
# month names of the evaluated languages (first letters: declined forms such as "марта" and "März" match)
MONTH_NAMES = lazy(
    r"(?<!\w)(?:januar|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|dezember"
    r"|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre"
    r"|janvier|février|mars|avril|juin|juillet|août|septembre|octobre|novembre|décembre"
    r"|январ|феврал|март|апрел|ма[йя]|июн|июл|август|сентябр|октябр|ноябр|декабр"
    r"|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|aralık"
    r"|يناير|فبراير|مارس|أبريل|مايو|يونيو|يوليو|أغسطس|سبتمبر|أكتوبر|نوفمبر|ديسمبر"
    r"|जनवरी|फ़रवरी|फरवरी|मार्च|अप्रैल|मई|जून|जुलाई|अगस्त|सितंबर|अक्टूबर|नवंबर|दिसंबर"
    r"|tháng)", re.IGNORECASE)


# a day of every month: "the 25th of each month", "am 25. jedes Monats", "le 25 de chaque mois" (the short answer's
# date too: ``typed_spans.date_spans``)
DAY_OF_MONTH = (r"\b(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\s+of\s+(?:each|every|the)\s+"
                r"(?:(?:following|next|previous|same|current)\s+)?month\b|"
                r"\b\d{1,2}\.\s+(?:(?:jede[ns]?|des)\s+(?:(?:folgenden|nächsten|laufenden)\s+)?Monats|des\s+Folgemonats)\b|"
                r"\b\d{1,2}\s+(?:de\s+chaque|du)\s+mois(?:\s+(?:suivant|prochain))?\b")
_DAY_OF_MONTH = lazy(DAY_OF_MONTH, re.IGNORECASE)


# "What happens to ...?", "Was passiert, wenn ...?", "Que se passe-t-il si ...?": an event or a consequence is asked
# for, said by a clause, not a value or a thing
EVENT = r"(?:what\s+(?:happens|happened|will\s+happen|would\s+happen)|was\s+(?:passiert|geschieht)|que\s+se\s+passe)"
_EVENT = lazy(rf"^\W*{EVENT}\b", re.IGNORECASE)


def asks_event(question: str) -> bool:
    return bool(_EVENT.match(question))


def asks_quantity(question: str) -> bool:
    return bool(QUANTITY.search(question))


def asks_when(question: str) -> bool:
    return bool(WHEN.search(question))


# a question led by another question word: a "when" later in it opens a clause ("Who do I tell when I'm ill?",
# "How many days off do I get when I move house?") and asks for no date
OTHER_WH = lazy(r"^\W*(?:what|which|how|who|whom|whose|where|why|wer|wen|wem|wo|was|wie|warum|welche[rsnm]?|qui|"
                r"où|que|quoi|quel(?:le)?s?|comment|pourquoi)\b", re.I)
WHEN_WORD = lazy(r"\bwhen\b", re.I)


def without_clause_when(question: str) -> str:
    """``question`` with an English "when" that opens a clause blanked (one led by another question word)."""
    return WHEN_WORD.sub(" ", question) if OTHER_WH.match(question) else question


def has_date(text: str) -> bool:
    """A date written the way one of the evaluated languages writes it (beyond English's), or a day of every
    month."""
    return bool(CJK_DATE.search(text) or MONTH_NAMES.search(text) or _DAY_OF_MONTH.search(text))

# negation words ("not", "n't", "no", "kein", "nicht", "pas", "jamais", ...): the yes/no polarity
# (``short.negations``) and a bound said under a negation (``typed_spans``) read the same list
NEGATION = lazy(
    r"\b(?:not|no|never|none|nobody|nothing|nowhere|neither|nor|cannot|without|nicht|kein|keine|keinen|keinem|"
    r"keiner|keines|nie|niemals|niemand|niemanden|niemandem|nirgends|nirgendwo|weder|ohne|nichts|pas|jamais|aucun|"
    r"aucune|rien|sans|ni|personne)\b|n't\b|n’t\b", re.I)


WORD = lazy(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
# words that stand for something said before ("how do I request it?", "who approves them?")
ANAPHORA = frozenset("it its they them their theirs this that these those there he she him her his same".split())
# "one" standing for a noun said before ("how do I order one?", "is there one in Lisbon?", "the ones left there"):
# "ones" always, "one" when no noun follows it (the end, punctuation, a relative word or a preposition)
PRO_ONE = lazy(r"\b(?:ones\b|one\b(?=\s*(?:[?.!,;:]|$|(?:that|which|who|at|in|on|for|of|there|too|from|"
               r"with|here)\b)))", re.I)


def words(text: str) -> list[str]:
    return [w.lower().strip("'’-") for w in WORD.findall(text)]


def names_referent(question: str) -> bool:
    """Whether the question stands a pronoun or "one" for something said before ("how do I request it?"), rather
    than pointing back only by its opening ("And ...") or not at all."""
    return any(w in ANAPHORA for w in words(question)) or bool(PRO_ONE.search(question))
