"""Where a question looks: the files and folders, file types and modification dates it is limited to.

One parser for both doors: the CLI's ``--in`` / ``--type`` / ``--since`` / ``--until`` build a :class:`Scope` with
:func:`make_scope`, the question box's inline syntax is read by :func:`parse_question`::

    in:handbook.pdf  in:"~/My Reports"  type:pptx  since:2025-01-01  until:2025-06  "annual leave"  -contractor

Filters of one kind are alternatives (``type:pdf type:docx``), different kinds all apply. In the lexical (BM25)
match a quoted phrase must occur (``shelfwise search``) or ranks first (a question's evidence), and ``-word`` must
not occur; a passage holding an excluded word is outside the scope. A malformed filter raises
:class:`ScopeError` naming the filter and what it accepts: it is never dropped.

:func:`resolve_scope` turns a scope into the documents of one collection it admits (:class:`ResolvedScope`); the
navigator walks only their branches (``ResolvedScope.allowed_nodes``), and a scope that admits nothing is said so
(:meth:`ResolvedScope.no_match_message`) instead of answering from elsewhere.
"""

from __future__ import annotations

import calendar
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shelfwise.core.languages import phrase_tokens, query_terms, tokens

if TYPE_CHECKING:
    from shelfwise.core.store.db import Store
    from shelfwise.core.store.snapshot import Snapshot
    from shelfwise.core.store.types import DocumentRow

FORMATS = ("pdf", "docx", "pptx", "xlsx", "md", "txt")
TYPE_ALIASES = {
    "word": "docx", "doc": "docx", "powerpoint": "pptx", "ppt": "pptx", "slides": "pptx", "excel": "xlsx",
    "xls": "xlsx", "xlsm": "xlsx", "spreadsheet": "xlsx", "markdown": "md", "text": "txt",
}
KEYS = ("in", "type", "since", "until")
TYPE_ACCEPTS = "accepts " + ", ".join(FORMATS) + " (or word, powerpoint, excel, markdown, text)"
DATE_ACCEPTS = "accepts a date as YYYY-MM-DD, YYYY-MM or YYYY, today, yesterday, or an age such as 7d, 4w, 6m, 1y"
IN_ACCEPTS = ("accepts a file or folder that exists, or the name of a document or folder in the library "
              "(e.g. in:handbook.pdf)")

# key:value or key:"quoted value", at the start or after whitespace
_FILTER = re.compile(r'(?<!\S)(in|type|since|until):(?:"([^"]*)"|(\S+)|(?=\s|$))', re.IGNORECASE)
_PHRASE = re.compile(r'"([^"]+)"')
_EXCLUDE = re.compile(r"(?<!\S)-([^\W\d_][\w'-]*)")
_TERM = re.compile(r"[^\W_]+", re.UNICODE)
_AGE = re.compile(r"^(\d{1,4})([dwmy])$")


class ScopeError(ValueError):
    """A filter that cannot be read: ``filter`` (e.g. ``since:yesterdayish``), what is wrong, what it accepts."""

    def __init__(self, key: str, value: str, problem: str, accepts: str) -> None:
        self.key, self.value, self.problem, self.accepts = key, value, problem, accepts
        self.filter = f"{key}:{value}"
        super().__init__(f"{self.filter}: {problem}; {key}: {accepts}")


@dataclass(frozen=True)
class DateBound:
    """A day, month, year or age as written, and the interval of time it names (epoch seconds, local time)."""

    text: str
    start: float
    end: float  # exclusive


@dataclass(frozen=True)
class Scope:
    """What a question is limited to. Empty: the whole collection."""

    paths: tuple[str, ...] = ()  # as written: files, folders, or names of documents in the library
    types: tuple[str, ...] = ()  # formats from FORMATS
    since: DateBound | None = None  # file modified on or after the start of this
    until: DateBound | None = None  # file modified before the end of this

    def is_empty(self) -> bool:
        return not (self.paths or self.types or self.since or self.until)

    def merged(self, other: Scope) -> Scope:
        """Both scopes' paths and types; ``other``'s dates where it has them."""
        return Scope(
            paths=tuple(dict.fromkeys([*self.paths, *other.paths])),
            types=tuple(dict.fromkeys([*self.types, *other.types])),
            since=other.since or self.since, until=other.until or self.until,
        )

    def label(self) -> str:
        """The scope in the inline syntax: ``type:pptx in:~/Reports since:2025-01-01``."""
        parts = [f"type:{t}" for t in self.types]
        parts += [f'in:"{p}"' if " " in p else f"in:{p}" for p in self.paths]
        if self.since:
            parts.append(f"since:{self.since.text}")
        if self.until:
            parts.append(f"until:{self.until.text}")
        return " ".join(parts)


@dataclass(frozen=True)
class ParsedQuestion:
    """A question with its inline filters and excluded words taken out: ``text`` is what the models read (the
    question as asked when it has neither); ``phrases`` and ``excluded`` shape the lexical match."""

    raw: str
    text: str
    scope: Scope
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def lexical_match(self, require_phrases: bool = True) -> str | None:
        """The FTS5 expression for the lexical match, or None for the store's default (every word OR-ed). With
        ``require_phrases`` (``shelfwise search``) a phrase must occur; without (a question's lexical evidence) a
        passage holding it ranks higher and the others stay: questions quote terms ("right to rent") that
        passages may word otherwise."""
        if not self.phrases and not self.excluded:
            return None
        return match_expression(self.text, self.phrases, self.excluded, require_phrases)


def _quote(words: Iterable[str]) -> str:
    return '"' + " ".join(words) + '"'


def match_expression(text: str, phrases: Sequence[str] = (), excluded: Sequence[str] = (),
                     require_phrases: bool = True) -> str | None:
    """``(w1 OR w2 ...) AND "a phrase" NOT "word"``: any word ranks, every phrase must be there (or, without
    ``require_phrases``, ranks higher: ``OR "a phrase"``), no excluded word may be. None when nothing positive is
    left to match (FTS5 has no pure NOT)."""
    # words as the full-text index sees them (core/languages.py: CJK runs as bigrams, marks inside words)
    terms = list(dict.fromkeys(t.casefold() for t in query_terms(text)))[:64]
    positive = " OR ".join(_quote([t]) for t in terms)
    parts = [f"({positive})"] if positive else []
    parts += [_quote(ws) for p in phrases if (ws := phrase_tokens(p))]
    if not parts:
        return None
    expr = " AND ".join(parts) if require_phrases else " OR ".join(parts)
    for word in excluded:
        for w in tokens(word):
            expr = f"({expr}) NOT {_quote(phrase_tokens(w))}"
    return expr


# -- parsing ------------------------------------------------------------------------------------------------------
def parse_type(value: str) -> str:
    v = value.strip().lower().lstrip(".")
    v = TYPE_ALIASES.get(v, v)
    if v not in FORMATS:
        raise ScopeError("type", value, "not a file type Shelfwise reads", TYPE_ACCEPTS)
    return v


def _day_start(d: date) -> float:
    return time.mktime(datetime(d.year, d.month, d.day).timetuple())


def parse_date(value: str, key: str = "since", today: date | None = None) -> DateBound:
    """``2025-01-31``, ``2025-01``, ``2025``, ``today``, ``yesterday``, or an age (``7d``, ``4w``, ``6m``, ``1y``)."""
    v = value.strip().lower()
    today = today or date.today()
    try:
        if v in ("today", "yesterday"):
            d = today - timedelta(days=1 if v == "yesterday" else 0)
            return DateBound(value, _day_start(d), _day_start(d + timedelta(days=1)))
        if m := _AGE.match(v):
            n, unit = int(m.group(1)), m.group(2)
            days = n * {"d": 1, "w": 7, "m": 30, "y": 365}[unit]
            d = today - timedelta(days=days)
            return DateBound(value, _day_start(d), _day_start(d + timedelta(days=1)))
        if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", v):
            y, mo, dd = (int(x) for x in v.split("-"))
            d = date(y, mo, dd)
            return DateBound(value, _day_start(d), _day_start(d + timedelta(days=1)))
        if re.fullmatch(r"\d{4}-\d{1,2}", v):
            y, mo = (int(x) for x in v.split("-"))
            last = calendar.monthrange(y, mo)[1]
            return DateBound(value, _day_start(date(y, mo, 1)), _day_start(date(y, mo, last) + timedelta(days=1)))
        if re.fullmatch(r"\d{4}", v):
            y = int(v)
            return DateBound(value, _day_start(date(y, 1, 1)), _day_start(date(y + 1, 1, 1)))
    except (ValueError, OverflowError, calendar.IllegalMonthError):
        raise ScopeError(key, value, "not a real date", DATE_ACCEPTS) from None
    raise ScopeError(key, value, "not a date", DATE_ACCEPTS)


def make_scope(paths: Sequence[str] = (), types: Sequence[str] = (), since: str | None = None,
               until: str | None = None) -> Scope:
    """A scope from the CLI's options (each checked like its inline form)."""
    for p in paths:
        if not str(p).strip():
            raise ScopeError("in", "", "no path given", IN_ACCEPTS)
    scope = Scope(
        paths=tuple(str(p) for p in paths), types=tuple(dict.fromkeys(parse_type(t) for t in types)),
        since=parse_date(since, "since") if since else None, until=parse_date(until, "until") if until else None,
    )
    _check_order(scope)
    return scope


def _check_order(scope: Scope) -> None:
    if scope.since and scope.until and scope.since.start >= scope.until.end:
        raise ScopeError("until", scope.until.text, f"ends before since:{scope.since.text} begins",
                         "accepts a date on or after the since: date")


def parse_question(question: str) -> ParsedQuestion:
    """Take the inline filters, phrases and excluded words out of ``question`` (see the module doc)."""
    paths: list[str] = []
    types: list[str] = []
    since = until = None
    taken = 0

    def take(m: re.Match[str]) -> str:
        nonlocal since, until, taken
        key = m.group(1).lower()
        value = m.group(2) if m.group(2) is not None else m.group(3) or ""  # "in:" with nothing after it: ""
        if m.group(2) is None and m.group(3) is None and key == "in" and m.start() > 0 and \
                question[m.end():].strip(" ?.!,;"):
            return m.group(0)  # "log in: from home" is English; an empty in: is a filter at the start or the end
        taken += 1
        tail = ""
        if m.group(2) is None:  # a bare value: the question's own punctuation is not part of it
            stripped = value.rstrip("?,;!" if key == "in" else "?,;!.")
            value, tail = stripped, value[len(stripped):]
        if not value.strip():
            raise ScopeError(key, value, "no value given", IN_ACCEPTS if key == "in" else
                             TYPE_ACCEPTS if key == "type" else DATE_ACCEPTS)
        if key == "in":
            paths.append(value)
        elif key == "type":
            types.append(parse_type(value))
        elif key == "since":
            since = parse_date(value, "since")
        else:
            until = parse_date(value, "until")
        return " " + tail

    rest = _FILTER.sub(take, question)
    phrases = tuple(p.strip() for p in _PHRASE.findall(rest) if p.strip())
    excluded = tuple(_EXCLUDE.findall(rest))
    if taken or excluded:  # phrases keep their quotes: what the models read is changed only where it must be
        text = _EXCLUDE.sub(" ", rest)
        text = " ".join(text.split())
        text = re.sub(r"\s+([?.,;!])", r"\1", text)
    else:  # nothing to take out: the question goes on exactly as asked
        text = question
    scope = Scope(paths=tuple(paths), types=tuple(dict.fromkeys(types)), since=since, until=until)
    _check_order(scope)
    return ParsedQuestion(raw=question, text=text, scope=scope, phrases=phrases, excluded=excluded)


def in_filter(path: str, known: Sequence[str] = ()) -> str:
    """The inline filter that limits a question to ``path`` (a document or folder): its name when no other of
    the ``known`` paths (the library's documents) shares it, else the whole path; quoted when it has spaces."""
    p = Path(path)
    name = p.name
    same = [k for k in known if Path(k).name == name or name in Path(k).parent.parts]
    is_doc = any(k == path for k in known)
    unique = (len(same) == 1 and is_doc) or (not is_doc and all(Path(k).is_relative_to(p) for k in same) and same)
    value = name if unique and name else str(p)
    return f'in:"{value}"' if any(c.isspace() for c in value) else f"in:{value}"


# -- resolving against a collection -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResolvedScope:
    """The documents (and passages) of one collection a scope admits."""

    scope: Scope
    document_ids: frozenset[int]
    total: int  # documents in the collection
    excluded_passages: frozenset[int] = frozenset()
    excluded_words: tuple[str, ...] = ()
    lexical: str | None = None  # the FTS5 match expression (phrases, excluded words), None for the default
    names: dict[int, str] = field(default_factory=dict, compare=False)  # document id -> file name

    @property
    def restricted(self) -> bool:
        """Whether the walk must leave anything out (some documents or some passages)."""
        return len(self.document_ids) < self.total or bool(self.excluded_passages)

    @property
    def empty(self) -> bool:
        return not self.document_ids

    def label(self) -> str:
        """``type:pptx in:~/Reports: 2 of 6 documents`` (what the trace and the window show)."""
        words = " ".join(f"-{w}" for w in self.excluded_words)
        text = " ".join(x for x in (self.scope.label(), words) if x)
        return f"{text}: {len(self.document_ids)} of {self.total} documents" if text else ""

    def no_match_message(self) -> str:
        types = " ".join(f"type:{t}" for t in self.scope.types)
        where = " or ".join(self.scope.paths)
        dates = " ".join(x for x in (f"since:{self.scope.since.text}" if self.scope.since else "",
                                     f"until:{self.scope.until.text}" if self.scope.until else "") if x)
        what = " ".join(x for x in (types, dates) if x)
        if what and where:
            return f"No documents match {what} in {where}."
        if where:
            return f"No documents in {where} are in this collection."
        return f"No documents match {what or self.scope.label()}."

    def allowed_nodes(self, snap: Snapshot) -> set[int] | None:
        """The node ids of ``snap`` the walk may judge: the admitted documents' nodes (less excluded passages)
        and their ancestors. None when nothing is left out."""
        if not self.restricted:
            return None
        import numpy as np

        from shelfwise.core.store.snapshot import KINDS

        data = snap.data
        inside = np.isin(data.document_id, np.fromiter(self.document_ids, np.int64, len(self.document_ids)))
        out = set(data.ids[inside].tolist()) - set(self.excluded_passages)
        for doc in data.ids[inside & (data.kind == KINDS.index("document"))].tolist():
            p = snap.parent_of(doc)
            while p is not None and p not in out:
                out.add(p)
                p = snap.parent_of(p)
        return out


def _matches_path(doc_path: str, target: Path, is_dir: bool) -> bool:
    # realpath, not Path.resolve(): a document's file replaced by a symlink loop since it was read raises
    # RuntimeError there (Python < 3.13); realpath leaves the looping part as it is
    p = Path(os.path.realpath(doc_path))
    return p.is_relative_to(target) if is_dir else p == target


def _by_name(docs: Sequence[DocumentRow], value: str) -> list[DocumentRow]:
    """Documents named ``value``: the file name, its stem, the end of its path, or a folder on its path."""
    v = value.strip().rstrip("/").casefold()
    if not v:
        return []
    out = []
    for d in docs:
        p = Path(d.path)
        full = str(p).casefold()
        if p.name.casefold() == v or p.stem.casefold() == v or full.endswith("/" + v) or \
                v in (part.casefold() for part in p.parent.parts):
            out.append(d)
    return out


def documents_in(docs: Sequence[DocumentRow], value: str, cwd: str | Path | None = None) -> list[DocumentRow]:
    """The documents ``in:value`` admits; ScopeError when it names neither a path nor anything in the library."""
    raw = Path(os.path.expanduser(value))
    candidate = raw if raw.is_absolute() else Path(cwd or os.getcwd()) / raw
    if candidate.exists():
        target = Path(os.path.realpath(candidate))
        found = [d for d in docs if _matches_path(d.path, target, target.is_dir())]
        if found or raw.is_absolute():
            return found  # an existing path that holds no document of the library: the scope is empty
        return _by_name(docs, value)  # a relative name that happens to exist here: the library's own name wins
    found = _by_name(docs, value)
    if not found:
        raise ScopeError("in", value, "no such file or folder, and no document or folder of that name in the "
                         "library", IN_ACCEPTS)
    return found


def resolve_scope(store: Store, collection_id: int, scope: Scope, *, cwd: str | Path | None = None,
                  excluded: Sequence[str] = (), lexical: str | None = None) -> ResolvedScope:
    """The documents of the collection that ``scope`` admits (only those that were read: status ok), and the
    passages that hold an ``excluded`` word."""
    docs = [d for d in store.documents(collection_id) if d.status == "ok"]
    chosen = list(docs)
    if scope.paths:
        ids: set[int] = set()
        for value in scope.paths:
            ids.update(d.id for d in documents_in(docs, value, cwd))
        chosen = [d for d in chosen if d.id in ids]
    if scope.types:
        chosen = [d for d in chosen if d.format in scope.types]
    if scope.since:
        chosen = [d for d in chosen if d.mtime >= scope.since.start]
    if scope.until:
        chosen = [d for d in chosen if d.mtime < scope.until.end]
    doc_ids = frozenset(d.id for d in chosen)
    gone: set[int] = set()
    words = tuple(dict.fromkeys(w for x in excluded for w in _TERM.findall(x)))
    for w in words:
        gone.update(nid for nid, _ in store.search_ids(w, limit=1_000_000, collection_id=collection_id,
                                                       document_ids=doc_ids))
    return ResolvedScope(scope=scope, document_ids=doc_ids, total=len(docs), excluded_passages=frozenset(gone),
                         excluded_words=words, lexical=lexical, names={d.id: Path(d.path).name for d in docs})


@dataclass(frozen=True)
class Prepared:
    """A question read once for every door: its text for the models, its inline filters and phrases, and the
    scope they resolve to in the collection (None when the question is not limited at all). Nothing downstream
    parses it again: :func:`~shelfwise.core.navigation.request.prepared_request` clips its text once and hands
    the walk what was read here."""

    parsed: ParsedQuestion
    resolved: ResolvedScope | None

    @property
    def text(self) -> str:
        return self.parsed.text

    @property
    def question(self) -> str:
        """What the models read: the text without its filters, or the question as asked when it is only filters."""
        return self.parsed.text or self.parsed.raw

    @property
    def matches_nothing(self) -> bool:
        return self.resolved is not None and self.resolved.empty


def prepare_question(store: Store, collection: str | None, question: str, given: Scope | None = None,
                     cwd: str | Path | None = None) -> Prepared:
    """Parse ``question`` (ScopeError for a malformed filter), add the ``given`` scope (the CLI's options) and
    resolve both against the collection."""
    parsed = parse_question(question)
    scope = (given or Scope()).merged(parsed.scope)
    if scope.is_empty() and not parsed.excluded and not parsed.phrases:
        return Prepared(parsed, None)
    coll = store.find_collection(collection or "default")
    if coll is None:
        return Prepared(parsed, None)
    resolved = resolve_scope(store, coll.id, scope, cwd=cwd, excluded=parsed.excluded,
                             lexical=parsed.lexical_match(require_phrases=False))
    return Prepared(parsed, resolved)


__all__ = ["FORMATS", "DateBound", "ParsedQuestion", "Prepared", "ResolvedScope", "Scope", "ScopeError", "documents_in",
           "in_filter", "make_scope", "match_expression", "parse_date", "parse_question", "parse_type",
           "prepare_question", "resolve_scope"]
