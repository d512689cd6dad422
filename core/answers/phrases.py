"""Candidate spans for the questions that ask for a thing (what, which, who; was, welche, wer; que, quel, qui): the
phrases of a sentence that are not words of the question, and the number words of English, German and French.

A question's answer is, most of the time, a stretch of the sentence the question's own words leave over ("Who
defeated the Steelers?" over "The Broncos defeated the Pittsburgh Steelers in the Divisional Round" leaves "The
Broncos" and "Pittsburgh" and "in the Divisional Round"). :func:`phrase_spans` cuts the sentence at the question's
content words, at punctuation and before a word that opens a clause ("that", "which", "qui"), trims function words
from the ends (an article that opens a phrase is kept: "die Pittsburgh Steelers" is what a German gold holds), drops
what holds no content word, and also offers the shorter phrase that starts at an article, a capitalised word or a
number inside a longer one (a verb left before the noun phrase: "besiegten die Pittsburgh Steelers" also gives "die
Pittsburgh Steelers"); a quoted title is a phrase of its own. ``core/answers/short.py``'s ``nominal_features``
describes each for the ranker, whose weights ``benchmarks/research/short_tune.py`` chose on the training data. Pure
functions over strings, no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from shelfwise.core.answers.facts import STOPWORDS, TENS, UNITS
from shelfwise.core.languages import lazy

# German and French words of no content (English's are facts.STOPWORDS): never the edge of a phrase
FUNCTION_WORDS = frozenset("""ich du er sie es wir ihr das der die den dem des ein eine einen einem einer eines und
oder aber für mit von vom auf ist sind war waren wurde wurden worden wird werden wie was wer wann wo welche welcher
welches welchen welchem sich man bei beim nach zum zur aus dass als auch noch nur sehr im am an in um zu bis durch
gegen ohne über unter vor hinter neben zwischen nicht kein keine hat haben hatte hatten kann können konnte muss
soll dies diese dieser dieses diesem diesen jene sein seine seiner seinem seinen seines ihre ihrem ihren ihrer
ihres deren dessen so dann da denn wenn ob le la les un une des du de d l est sont était étaient a ont avait été que
qui quoi quel quelle quels quelles pour avec dans sur par pas ne ce cet cette ces son sa ses leur leurs au aux et
ou où en y il elle ils elles on nous vous se qu lui plus très aussi comme""".split())
ARTICLES = frozenset("""the a an der die das den dem des ein eine einen einem einer eines le la les l un une""".split())
# possessives open a phrase as an article does ("your local council", "Ihre Krankenkasse", "votre mairie"): the
# asker's own thing is named with them ("her" is left out: as often "to her" as "her form")
POSSESSIVES = frozenset("""your their his its our my mein meine meinen meinem meiner dein deine deinen deinem deiner
sein seine seinen seinem seiner ihr ihre ihren ihrem ihrer unser unsere unseren unserem unserer euer eure euren
eurem eurer mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs""".split())
_OPENERS = ARTICLES | POSSESSIVES

# number words: English (facts.UNITS/TENS), German, French
_DE_FR_NUMBERS = """zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig dreißig vierzig fünfzig hundert
tausend million millionen milliarde milliarden deux trois quatre cinq six sept huit neuf dix onze douze vingt trente
quarante cinquante cent cents mille millions milliards""".split()
_NUMBER_WORDS = sorted({*(w for w in UNITS if w != "one"), *TENS, "hundred", "thousand", "million", "millions",
                        "billion", "billions", "dozen", *_DE_FR_NUMBERS}, key=len, reverse=True)
NUMBER_WORD = lazy(rf"(?<![\w-])(?:{'|'.join(_NUMBER_WORDS)})(?:[\s-]+(?:and[\s-]+|und)?"
                   rf"(?:{'|'.join(_NUMBER_WORDS)}))*(?![\w-])", re.I)

_TOKEN = lazy(r"(?:[^\s,;:()\[\]\"“”„«»‚‘’]|[,:](?=\d))+")
_BREAK = lazy(r"[,;:](?=\s|$)|[()\[\]\"“”„«»]|\s[-–—]\s|[.!?](?=\s|$)")  # "08:00", "1,500" go on
_QUOTED = lazy(r"[\"“„«‚]([^\"“”„«»‚‘]{2,80})[\"”“»‘]")
_DE_MARKS = lazy(r"\b(?:der|die|das|den|dem|des|und|ist|sind|ein|eine|einen|von|vom|zu|zum|zur|mit|im|"
                 r"wurde|wurden|hat|haben|sich|nach|für|auf|nicht|auch)\b", re.I)
_EN_MARKS = lazy(r"\b(?:the|of|a|an|to|in|for|and|on|with|by|it|that|this|is|was|are|were)\b", re.I)
MAX_WORDS = 8  # a phrase longer than this is no short answer: a longer stretch gives its first words
# words that open a clause: a phrase ends before them (English and French; German's relative pronouns are its
# articles, which open phrases too)
CLAUSE_WORDS = frozenset("""that which who whom whose where when while because although though whereas unless
qui dont lorsque quand parce puisque bien""".split())


@dataclass(frozen=True)
class Phrase:
    start: int
    end: int
    words: int  # how many words it has
    content: int  # how many of them are content words
    capitals: int  # capitalised words past the sentence's first word (names, German nouns)
    digits: bool  # it holds a number
    quoted: bool  # a quoted title


def _word(token: str) -> str:
    return token.lower().strip(".!?'’-")


def _is_function(token: str) -> bool:
    w = _word(token)
    return not w or w in STOPWORDS or w in FUNCTION_WORDS


def phrase_spans(text: str, question_stems: set[str], stem: Callable[[str], str]) -> list[Phrase]:
    """The phrases of ``text`` that hold none of the question's content words (``question_stems``, compared
    through ``stem``: a callable giving a word's comparable form), cut at punctuation, each at most
    :data:`MAX_WORDS` words, in order of position."""
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    breaks = [m.start() for m in _BREAK.finditer(text)]
    runs: list[list[tuple[int, int]]] = [[]]
    prev_end = 0
    for a, b in tokens:
        word = text[a:b]
        if any(prev_end <= x < a for x in breaks) and runs[-1]:
            runs.append([])
        trimmed = word.rstrip(".!?") if re.search(r"[.!?]$", word) and not re.fullmatch(r"(?:\w\.)+", word) else word
        if not _is_function(trimmed) and stem(_word(trimmed)) in question_stems:
            if runs[-1]:
                runs.append([])
        elif _word(trimmed) in CLAUSE_WORDS:  # "a transcription factor | that can be induced by ..."
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((a, a + len(trimmed)))
        prev_end = b if trimmed == word else a + len(trimmed)
    out: dict[tuple[int, int], Phrase] = {}
    for run in runs:
        for start in _starts(run, text):
            piece = _trim(run[start:], text)
            if piece:
                phrase = _phrase(text, piece)
                if phrase is not None:
                    out[(phrase.start, phrase.end)] = phrase
    for m in _QUOTED.finditer(text):
        inner = m.group(1).strip()
        if inner and not all(stem(_word(w)) in question_stems for w in inner.split()):
            a = m.start(1) + m.group(1).find(inner)
            out[(a, a + len(inner))] = Phrase(a, a + len(inner), len(inner.split()), len(inner.split()), 0,
                                               bool(re.search(r"\d", inner)), True)
    for joined in _joined(text, sorted(out.values(), key=lambda p: (p.start, p.end)), question_stems, stem):
        out.setdefault((joined.start, joined.end), joined)
    return sorted(out.values(), key=lambda p: (p.start, p.end))


# what joins two phrases into one answer: a series ("single-stranded, linear, and nonsegmented RNA", "parents,
# brothers and sisters"), or a parenthesis between them ("bonerestricted IFITM-like (BRIL) protein")
_SERIES_JOIN = lazy(r"(?:\s*,\s*(?:(?:and|or|und|oder|et|ou)\s+)?|\s+(?:and|or|und|oder|et|ou)\s+)")
_PARENTHESIS = lazy(r"\s*\(([^()\n]{1,40})\)")
MAX_JOINED_WORDS = 12
_HEAD_WORD = lazy(r"\s+([^\W\d_][\w'’-]*)")


def _joined(text: str, phrases: list[Phrase], question_stems: set[str], stem: Callable[[str], str]) -> list[Phrase]:
    """Longer phrases that answer whole where the cuts of :func:`phrase_spans` split an answer: a
    phrase with the parenthesis after it ("2-bromopalmitic acid (2BP)"), two or three phrases of a series joined by
    commas or "and"/"or", two phrases with a parenthesis between them, and a phrase with the question's own word
    right after it ("a part 8 claim [form]" for "What form ...?", "~ 65% [similarity]"); at most
    :data:`MAX_JOINED_WORDS` words."""
    by_start: dict[int, list[Phrase]] = {}
    for p in phrases:
        by_start.setdefault(p.start, []).append(p)
    out: list[Phrase] = []

    def add(first: Phrase, end: int) -> Phrase | None:
        piece = text[first.start:end]
        words = piece.split()
        if len(words) > MAX_JOINED_WORDS:
            return None
        joined = Phrase(first.start, end, len(words), sum(not _is_function(w) for w in words),
                        first.capitals + sum(w[:1].isupper() for w in words[first.words:]),
                        bool(re.search(r"\d", piece)), False)
        out.append(joined)
        return joined

    def follow(p: Phrase, depth: int) -> None:
        tail = text[p.end:]
        paren = _PARENTHESIS.match(tail)
        if paren:
            nxt_at = p.end + paren.end()
            add(p, nxt_at)  # "2-bromopalmitic acid (2BP)"
            gap = re.match(r"\s+", text[nxt_at:])
            for q in by_start.get(nxt_at + gap.end(), []) if gap else []:
                add(p, q.end)  # "bonerestricted IFITM-like (BRIL) protein"
        series = _SERIES_JOIN.match(tail)
        if series and depth < 2:
            for q in by_start.get(p.end + series.end(), []):
                joined = add(p, q.end)
                if joined is not None:
                    follow(Phrase(p.start, q.end, joined.words, joined.content, joined.capitals, joined.digits,
                                  False), depth + 1)
        head = _HEAD_WORD.match(tail)
        if head and depth == 0 and not _is_function(head.group(1)) and stem(_word(head.group(1))) in question_stems:
            joined = add(p, p.end + head.end())  # the question's noun right after: "a part 8 claim form"
            if joined is not None:
                follow(joined, 2)  # and a parenthesis after it: "bonerestricted IFITM-like (BRIL) protein"

    for p in phrases:
        if not p.quoted:
            follow(p, 0)
    return out


def _starts(run: list[tuple[int, int]], text: str) -> list[int]:
    """Where a phrase may start in a run: its first word, and each later article, capitalised word or number
    that follows a lower-case word (the noun phrase after a verb)."""
    out = [0]
    for i in range(1, len(run)):
        word = text[run[i][0]:run[i][1]]
        before = text[run[i - 1][0]:run[i - 1][1]]
        opens = _word(word) in _OPENERS or word[:1].isupper() or word[:1].isdigit()
        if opens and before[:1].islower() and _word(before) not in _OPENERS:
            out.append(i)
    return out


def _trim(run: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """``run`` without function words at its ends (an opening article kept when content follows), its first
    :data:`MAX_WORDS` words when longer."""
    i, j = 0, len(run)
    while i < j and _is_function(text[run[i][0]:run[i][1]]) and _word(text[run[i][0]:run[i][1]]) not in _OPENERS:
        i += 1
    while j > i and _is_function(text[run[j - 1][0]:run[j - 1][1]]):
        j -= 1
    piece = run[i:j]
    if piece and _word(text[piece[0][0]:piece[0][1]]) in _OPENERS and len(piece) == 1:
        return []
    if len(piece) > MAX_WORDS:  # a long stretch: its first words, to the last content word among them
        piece = piece[:MAX_WORDS]
        while piece and _is_function(text[piece[-1][0]:piece[-1][1]]):
            piece.pop()
    return piece


def _phrase(text: str, piece: list[tuple[int, int]]) -> Phrase | None:
    words = [text[a:b] for a, b in piece]
    content = sum(not _is_function(w) for w in words)
    if not content:
        return None
    first_of_sentence = piece[0][0] == 0 or bool(re.search(r"[.!?]\s*$", text[: piece[0][0]]))
    german = len(_DE_MARKS.findall(text)) > len(_EN_MARKS.findall(text))
    capitals = 0
    for k, w in enumerate(words):
        if not w[:1].isupper() or (not k and first_of_sentence):
            continue
        # German capitalises every noun: there a lone capitalised word after a lower-case one ("zum Sieg", "den
        # Titel") is a noun, not a name; a run of them ("Wilhelm Eisenarm"), a code ("NFL", "XXXIII") is a name
        before = words[k - 1] if k else text[: piece[0][0]].split()[-1] if text[: piece[0][0]].split() else ""
        after = words[k + 1] if k + 1 < len(words) else ""
        lone = not before[:1].isupper() and not after[:1].isupper()
        if german and lone and before[:1].islower() and not re.search(r"[A-Z0-9].*[A-Z0-9]", w[1:]):
            continue
        capitals += 1
    return Phrase(piece[0][0], piece[-1][1], len(words), content, capitals,
                  any(re.search(r"\d", w) for w in words), False)


def number_word_spans(text: str) -> list[tuple[int, int]]:
    """Numbers written as words ("four", "vier", "quatre", "twenty-five", "zwei Millionen")."""
    return [(m.start(), m.end()) for m in NUMBER_WORD.finditer(text)]


# a finite verb's auxiliary or copula: inside a phrase (not at its edge), it makes the phrase a clause ("ROS
# accumulation was detected in ..."), which answers "what" less often than a noun phrase does
_FINITE = lazy(r"\b(?:is|are|was|were|be|been|being|has|have|had|can|could|may|might|will|would|should|shall|must|"
               r"do|does|did|ist|sind|war|waren|wurde|wurden|wird|werden|hat|haben|hatte|kann|können|muss|est|sont|"
               r"était|étaient|sera|ont|peut|peuvent|doit)\b", re.I)


def is_clause(phrase: str) -> bool:
    """Whether ``phrase`` holds an auxiliary or a copula between its first and its last word."""
    return _FINITE.search(" ".join(phrase.split()[1:-1])) is not None


# where one main clause of a sentence ends and the next begins: "; " or a comma before a conjunction
_CLAUSE_JOIN = lazy(r";\s+|,\s+(?:and|but|while|whereas|und|aber|sondern|während|et|mais|tandis que)\s+", re.I)


def bearing_clauses(text: str, held: Callable[[str], int]) -> list[tuple[int, int]]:
    """The main clauses of ``text`` that bear on the question (``held``: how many of its words a stretch holds),
    as (start, end); every clause where none or only one does. A comma before "and" that closes a series ("A, B,
    and C": a comma stands earlier in the same clause) cuts nothing. A phrase for a thing is taken from one of
    these: "First-aid kits are kept at reception and in the hardware lab, and a defibrillator hangs next to the
    reception desk" answers where the kits are from its first clause only."""
    cuts, start = [], 0
    for m in _CLAUSE_JOIN.finditer(text):
        if m.group(0)[0] == "," and "," in text[start:m.start()]:
            continue
        cuts.append((start, m.start()))
        start = m.end()
    cuts.append((start, len(text)))
    bearing = [c for c in cuts if held(text[c[0]:c[1]])]
    return bearing if len(cuts) > 1 and bearing else [(0, len(text))]


# a preposition of place (English, German, French) opening where something is: "at reception and in the lab"
_PLACE_PP = lazy(r"\b(?:at|in|on|inside|within|behind|beside|near|next to|under|above|opposite|"
                 r"im|am|in der|in den|auf|bei|neben|hinter|unter|über|à|au|aux|dans|chez|sur|près de|à côté de)"
                 r"\s+[^,;:.!?()\[\]\n]+", re.I)


def place_phrases(text: str, question_stems: set[str], stem: Callable[[str], str]) -> list[Phrase]:
    """Where something is, as the sentence says it: a preposition of place and what follows it to the end of its
    clause, the places joined by "and" / "or" kept together ("at reception and in the hardware lab"), cut before a
    word that opens a clause or is one of the question's (as :func:`phrase_spans`); at most :data:`MAX_WORDS`
    words."""
    out = []
    for m in _PLACE_PP.finditer(text):
        words = [(w.start(), w.end()) for w in _TOKEN.finditer(text, m.start(), m.end())]
        cut = next((i for i, (a, b) in enumerate(words) if i and (_word(text[a:b]) in CLAUSE_WORDS or (
            not _is_function(text[a:b]) and stem(_word(text[a:b])) in question_stems))), len(words))
        words = words[:cut]
        while words and _is_function(text[words[-1][0]:words[-1][1]]):
            words.pop()
        if 2 <= len(words) <= MAX_WORDS:
            phrase = _phrase(text, words)
            if phrase is not None:
                out.append(phrase)
    return out
