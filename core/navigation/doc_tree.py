"""One document's stored tree, read for structural answers: its headings, the lead of each, and the names that
identify it. The answers layer reads the store through this module (its row types are re-exported here).

Read straight from the store (sections only, and passage ids), so a 500-page document costs a few queries, not a
snapshot of the whole collection. Node ids are reading order inside a document (``core/store/db.py``), so the
first passage of a section's subtree is the first passage id after the section's own id.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from shelfwise.core.navigation.trace import Hit, Outline, OutlineEntry
from shelfwise.core.store.db import NodeRow, Store
from shelfwise.core.store.textutil import lead_sentence
from shelfwise.core.store.types import DocumentRow
from shelfwise.ingest.model import Location

OUTLINE_DEPTH = 3  # headings this deep below the document are shown in an outline
OUTLINE_ENTRIES = 400


@dataclass
class DocTree:
    """The sections of one document in reading order and where each one's passages start."""

    doc: DocumentRow
    root: NodeRow  # the document node
    sections: list[NodeRow]
    passage_ids: list[int]  # every passage of the document, in reading order
    children: dict[int, list[NodeRow]] = field(default_factory=dict)  # node id -> child sections
    _text: dict[int, str] = field(default_factory=dict)

    @classmethod
    def load(cls, store: Store, doc: DocumentRow) -> DocTree | None:
        nodes = list(store.iter_nodes(("document", "section"), document_id=doc.id))
        roots = [n for n in nodes if n.kind == "document"]
        if not roots:
            return None
        ids = [int(r[0]) for r in store.conn.execute(
            "SELECT id FROM nodes WHERE document_id = ? AND kind = 'passage' ORDER BY id", (doc.id,))]
        tree = cls(doc=doc, root=roots[0], sections=[n for n in nodes if n.kind == "section"], passage_ids=ids)
        for n in tree.sections:
            if n.parent_id is not None:
                tree.children.setdefault(n.parent_id, []).append(n)
        for kids in tree.children.values():
            kids.sort(key=lambda n: (n.ordinal, n.id))
        return tree

    # -- shape --------------------------------------------------------------------------------------------------
    def kids(self, node: NodeRow) -> list[NodeRow]:
        return self.children.get(node.id, [])

    def top_level(self) -> list[NodeRow]:
        """The document's own top-level headings (the children of its node)."""
        return self.kids(self.root)

    def outline_level(self, node: NodeRow | None = None) -> tuple[NodeRow, list[NodeRow]]:
        """The headings an outline or a summary lists under ``node`` (the document by default): its child
        sections, going down while there is a single one (a title heading that holds the whole document)."""
        node = node or self.root
        kids = self.kids(node)
        while len(kids) == 1 and self.kids(kids[0]):
            node, kids = kids[0], self.kids(kids[0])
        return node, kids

    def depth_of(self, node: NodeRow) -> int:
        return node.depth - self.root.depth

    def span_end(self, node: NodeRow) -> int:
        """The first node id after ``node``'s subtree (its next sibling or an ancestor's next sibling)."""
        later = [s.id for s in self.sections if s.id > node.id and self.depth_of(s) <= self.depth_of(node)]
        return min(later) if later else 1 << 62

    def passages_in(self, node: NodeRow) -> list[int]:
        if node.kind == "document":
            return list(self.passage_ids)
        lo = bisect.bisect_right(self.passage_ids, node.id)
        hi = bisect.bisect_left(self.passage_ids, self.span_end(node))
        return self.passage_ids[lo:hi]

    # -- text ---------------------------------------------------------------------------------------------------
    def texts(self, store: Store, ids: list[int]) -> dict[int, str]:
        need = [i for i in ids if i not in self._text]
        for k in range(0, len(need), 500):
            part = need[k:k + 500]
            for nid, text in store.conn.execute(
                    f"SELECT id, text FROM nodes WHERE id IN ({','.join('?' * len(part))})", part):
                self._text[int(nid)] = text or ""
        return {i: self._text.get(i, "") for i in ids}

    def lead(self, store: Store, node: NodeRow, max_chars: int = 220) -> tuple[int, str] | None:
        """(passage id, lead sentence) of the first passage of ``node``'s subtree that reads as prose (a heading
        line alone is skipped), or None when it has no text."""
        ids = self.passages_in(node)[:6]
        texts = self.texts(store, ids)
        fallback = None
        for pid in ids:
            text = " ".join(texts[pid].split())
            if not text:
                continue
            sentence = lead_sentence(text, max_chars=max_chars)
            if len(sentence) >= 40 and (" " in sentence) and not _same(sentence, node.title):
                return pid, sentence
            fallback = fallback or (pid, sentence)
        return fallback

    # -- what answers cite --------------------------------------------------------------------------------------
    def hit(self, store: Store, node: NodeRow, passage_id: int | None = None) -> Hit:
        """A citation of ``node`` (a heading or the document): its first passage (``passage_id`` if given) with the
        heading path down to the node and the node's own location."""
        ids = self.passages_in(node)
        pid = passage_id if passage_id is not None else (ids[0] if ids else node.id)
        text = self.texts(store, [pid]).get(pid, "") if ids else ""
        path = list(node.heading_path) if node.kind == "section" else []
        if node.kind == "section" and (not path or path[-1] != node.title):
            path.append(node.title)
        loc = node.location if _has_place(node.location) else self._first_location(store, pid)
        return Hit(node_id=pid, document_id=self.doc.id, text=text, score=1.0, path=self.doc.path,
                   title=self.doc.title, heading_path=path, location=loc)

    def _first_location(self, store: Store, pid: int) -> Location:
        n = store.node(pid)
        return n.location if n is not None else Location()

    def outline(self, highlighted: set[int] = frozenset(), depth: int = OUTLINE_DEPTH) -> Outline:  # type: ignore[assignment]
        entries = [OutlineEntry(self.root.id, self.doc.title, 0, self.root.location, self.root.id in highlighted)]
        for s in self.sections:
            d = self.depth_of(s)
            if d <= depth and len(entries) < OUTLINE_ENTRIES:
                entries.append(OutlineEntry(s.id, s.title, d, s.location, s.id in highlighted))
        return Outline(title=self.doc.title, path=self.doc.path, entries=entries)


def _has_place(loc: Location) -> bool:
    return any(v is not None for v in (loc.page, loc.slide, loc.sheet, loc.line))


def _same(a: str, b: str) -> bool:
    norm = lambda s: re.sub(r"\W+", " ", s).strip().casefold()  # noqa: E731
    return norm(a) == norm(b)


def document_nodes(store: Store, doc_ids: list[int]) -> dict[int, int]:
    """Document id -> the id of its document node."""
    out: dict[int, int] = {}
    for k in range(0, len(doc_ids), 500):
        part = doc_ids[k:k + 500]
        for nid, did in store.conn.execute(
                f"SELECT id, document_id FROM nodes WHERE kind = 'document' AND document_id IN "
                f"({','.join('?' * len(part))})", part):
            out[int(did)] = int(nid)
    return out


# -- naming a document --------------------------------------------------------------------------------------------
STOP = frozenset("""a an the of in on for and to my our your this that these those does do did is are was be have has
it its with about from by me us i please all any called named titled file document doc version""".split())
GENERIC = frozenset("""handbook policy guide manual deck presentation slides slide spreadsheet workbook sheet report pdf
docx pptx xlsx notes booklet paper faq section chapter part""".split())
AMBIGUOUS_MARGIN = 0.1  # two documents scoring within this of each other: the question names neither
HINTS = {"pptx": {"deck", "presentation", "slides", "slide", "powerpoint", "pptx"},
         "xlsx": {"spreadsheet", "workbook", "sheet", "sheets", "excel", "xlsx", "tabs"},
         "pdf": {"pdf"}, "docx": {"word", "docx"}, "md": {"markdown"}}
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text.casefold()):
        if w in STOP:
            continue
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _match(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def name_words(doc: DocumentRow) -> set[str]:
    stem = re.sub(r"[-_.]+", " ", doc.path.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    return set(words(doc.title)) | set(words(stem))


def document_score(subject: list[str], doc: DocumentRow) -> float:
    """How well the subject's words name ``doc`` (0 = not at all): the share of the subject's distinctive words
    found in its title or file name, plus the share of the name they cover; a word for a kind of document
    ("deck", "spreadsheet") counts when the document is of that kind."""
    if not subject:
        return 0.0
    names = name_words(doc)
    distinct = [w for w in subject if w not in GENERIC]
    hits = sum(1 for w in distinct if any(_match(w, n) for n in names))
    generic_hits = sum(1 for w in subject if w in GENERIC and (any(_match(w, n) for n in names)
                                                               or w in HINTS.get(doc.format, ())))
    if hits == 0 and not (not distinct and generic_hits):
        return 0.0
    share = (hits + 0.5 * generic_hits) / (len(distinct) + 0.5 * (len(subject) - len(distinct)))
    cover = hits / max(1, len(names))
    return share + 0.25 * cover


def named_documents(docs: list[DocumentRow], subject: str, min_share: float = 0.5) -> list[DocumentRow]:
    """The documents ``subject`` ("the employee handbook", "the IT security onboarding") may name: the best one,
    and any other scoring within AMBIGUOUS_MARGIN of it ("the handbook" in a library of two handbooks)."""
    ws = words(subject)
    scored = sorted(((document_score(ws, d), i) for i, d in enumerate(docs)), reverse=True)
    if not scored or scored[0][0] < min_share:
        return []
    best = scored[0][0]
    return [docs[i] for s, i in scored if s >= min_share and s >= best - AMBIGUOUS_MARGIN]


def find_document(docs: list[DocumentRow], subject: str, min_share: float = 0.5) -> DocumentRow | None:
    """The one document ``subject`` names, or None (none, or several alike)."""
    found = named_documents(docs, subject, min_share)
    return found[0] if len(found) == 1 else None


__all__ = ["DocTree", "DocumentRow", "NodeRow", "Store", "document_nodes", "document_score", "find_document",
           "lead_sentence", "name_words", "named_documents", "words"]
