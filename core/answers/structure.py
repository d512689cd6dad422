"""Answers read from the tree: outlines, section contents, extractive summaries, counts, inventories, the documents
that mention something, and where something is described.

:func:`answer_structure` takes a recognised :class:`~shelfwise.core.answers.structure_intent.Intent` and returns an
:class:`~shelfwise.core.navigation.trace.Answer` whose citations point at the headings (each heading's first
passage, with the heading path and the heading's page, slide or sheet), with ``Answer.outline`` set to the outline
it was read from, the answering part highlighted. It returns None when the question names no document or section
it can find: the caller then answers it as an ordinary question. Nothing here is generated; a summary's model text
is added by the caller under the same grounding check as every other answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.answers.structure_intent import Intent
from shelfwise.core.answers.types import Answer, Citation
from shelfwise.core.navigation.doc_tree import (
    DocTree,
    DocumentRow,
    NodeRow,
    Store,
    document_nodes,
    lead_sentence,
    named_documents,
    words,
)
from shelfwise.core.navigation.scope import FORMATS, ResolvedScope, documents_in, match_expression
from shelfwise.core.navigation.trace import Hit, Outline, OutlineEntry, SearchResult, Trace

SUMMARY_SECTIONS = 10  # at most this many sections summarised, one lead sentence each
SUMMARY_CHARS = 1600
ALSO_SHARE = 0.8  # a "where" answer names another place when its passage scores at least this share of the best
LIST_LIMIT = 25  # documents or headings listed before "and n more"
UNIT_NAMES = {"pdf": "pages", "pptx": "slides", "xlsx": "sheets"}
FORMAT_NAMES = {"pdf": "PDF", "docx": "Word document", "pptx": "presentation", "xlsx": "spreadsheet",
                "md": "Markdown file", "txt": "text file"}
DOC_TYPES = [  # words of a question -> the format they ask for ("" = any)
    (r"pdf", "pdf"), (r"word|docx", "docx"), (r"presentation|deck|powerpoint|pptx|slide", "pptx"),
    (r"spreadsheet|excel|workbook|xlsx", "xlsx"), (r"markdown|\bmd\b|notes", "md"), (r"text file|txt", "txt"),
]


@dataclass
class Context:
    """What a structural answer reads: the store, the collection's documents the scope admits, the question."""

    store: Store
    docs: list[DocumentRow]
    question: str
    scope: ResolvedScope | None = None


def answer_structure(store: Store, collection_id: int, question: str, intent: Intent,
                     scope: ResolvedScope | None = None) -> Answer | None:
    """The answer to a structural question from the stored tree, or None when it cannot be read from it."""
    docs = [d for d in store.documents(collection_id) if d.status == "ok"]
    if scope is not None:
        docs = [d for d in docs if d.id in scope.document_ids]
    ctx = Context(store, docs, question, scope)
    handler = {"outline": _outline, "section": _section, "summary": _summary, "count": _count,
               "inventory": _inventory, "mentions": _mentions}.get(intent.kind)
    if handler is None or not docs:
        return None
    try:
        answer = handler(ctx, intent)
    except Ambiguous as many:
        answer = _which_one(ctx, intent, many.docs)
    if answer is not None:
        answer.kind = intent.kind
        answer.search = SearchResult(question, [c.hit for c in answer.citations],
                                     Trace(query=question, readout="structure",
                                           scope=scope.label() if scope is not None else ""))
    return answer


# -- finding what the question names ------------------------------------------------------------------------------
class Ambiguous(Exception):
    """The question's words name several documents alike."""

    def __init__(self, docs: list[DocumentRow]) -> None:
        super().__init__(", ".join(d.path for d in docs))
        self.docs = docs


def target_document(ctx: Context, intent: Intent) -> DocumentRow | None:
    """The document the question names; the only one in scope when it names none. Ambiguous when its words name
    several alike."""
    if intent.document:
        named = named_documents(ctx.docs, intent.document)
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            raise Ambiguous(named)
        try:  # a file or folder name typed as such ("handbook.pdf")
            named = documents_in(ctx.docs, intent.document)
        except ValueError:
            named = []
        if len(named) == 1:
            return named[0]
    if len(ctx.docs) == 1:
        return ctx.docs[0]
    return None


_NUMBER = re.compile(r"^\s*(?:section|chapter|part|§|slide|sheet)?\s*(\d+(?:\.\d+)*)(?=[.):\s]|$)", re.IGNORECASE)


def find_section(tree: DocTree, ref: str) -> NodeRow | None:
    """The section ``ref`` names: a number ("3.2": the heading numbered so, else the 3rd heading's 2nd), a slide or
    sheet number, or words of its title ("leave")."""
    ref = ref.strip()
    if re.fullmatch(r"\d+(?:\.\d+)*", ref):
        for s in tree.sections:
            m = _NUMBER.match(s.title)
            if m and m.group(1) == ref:
                return s
        if tree.doc.format in ("pptx", "xlsx") and ref.isdigit():
            top = tree.top_level()
            return top[int(ref) - 1] if 0 < int(ref) <= len(top) else None
        node: NodeRow | None = None
        _, kids = tree.outline_level()
        for part in ref.split("."):
            i = int(part)
            if not 0 < i <= len(kids):
                return None
            node = kids[i - 1]
            kids = tree.kids(node)
        return node
    want = words(ref)
    if not want:
        return None
    best, best_score = None, 0.0
    for s in tree.sections:
        title = words(s.title)
        hits = sum(1 for w in want if any(w == t or (min(len(w), len(t)) >= 4 and (w.startswith(t) or t.startswith(w)))
                                          for t in title))
        score = hits / len(want) + 0.1 * hits / max(1, len(title)) - 0.01 * tree.depth_of(s)
        if hits and score > best_score:
            best, best_score = s, score
    return best if best_score >= 0.5 else None


def _section_anywhere(ctx: Context, ref: str) -> tuple[DocTree, NodeRow] | None:
    """A section named ``ref`` in the only document of the scope that has one (for a question naming no
    document)."""
    found = []
    for d in ctx.docs[:50]:
        tree = DocTree.load(ctx.store, d)
        if tree is not None and (s := find_section(tree, ref)) is not None:
            found.append((tree, s))
    return found[0] if len(found) == 1 else None


def _tree_and_section(ctx: Context, intent: Intent) -> tuple[DocTree, NodeRow | None] | None:
    doc = target_document(ctx, intent)
    if doc is None:
        if intent.section and not intent.document:
            return _section_anywhere(ctx, intent.section)
        return None
    tree = DocTree.load(ctx.store, doc)
    if tree is None:
        return None
    if intent.section:
        section = find_section(tree, intent.section)
        return (tree, section) if section is not None else None
    return tree, None


# -- answers ------------------------------------------------------------------------------------------------------
def _which_one(ctx: Context, intent: Intent, docs: list[DocumentRow]) -> Answer:
    """Several documents fit the question's words: name them, and how to say which (nothing is guessed)."""
    lines = [f"“{intent.document}” could be about {len(docs)} documents; ask again with its name or limit the question "
             f"with in:FILE:"]
    hits = []
    for d in docs[:LIST_LIMIT]:
        tree = DocTree.load(ctx.store, d)
        if tree is not None:
            hits.append(tree.hit(ctx.store, tree.root))
            lines.append(f"- {_name(d)} [{len(hits)}]")
    answer = _finish(ctx.question, lines, hits, _documents_outline(ctx.store, docs, {d.id for d in docs}))
    answer.found = False
    return answer



def _name(doc: DocumentRow) -> str:
    file = Path(doc.path).name
    return f"{doc.title} ({file})" if doc.title and doc.title != Path(doc.path).stem else file


def _where(hit: Hit) -> str:
    loc = hit.location.label()
    return f" ({loc})" if loc else ""


def _finish(question: str, lines: list[str], hits: list[Hit], outline: Outline | None) -> Answer:
    citations = [Citation(i, h) for i, h in enumerate(hits, 1)]
    return Answer(question, "\n".join(lines), citations, True, outline=outline)


def _listing(ctx: Context, tree: DocTree, parent: NodeRow, kids: list[NodeRow], head: str) -> Answer:
    lines, hits = [head], []
    for s in kids[:LIST_LIMIT]:
        hit = tree.hit(ctx.store, s)
        hits.append(hit)
        sub = len(tree.kids(s))
        more = f", {sub} subsections" if sub else ""
        where = _where(hit) if hit.location.label() != s.title else ""  # a sheet's place is its name
        lines.append(f"- {s.title}{where}{more} [{len(hits)}]")
    if len(kids) > LIST_LIMIT:
        lines.append(f"... and {len(kids) - LIST_LIMIT} more.")
    return _finish(ctx.question, lines, hits, tree.outline({parent.id, *(s.id for s in kids)}))


def _unit(doc: DocumentRow, many: bool = True) -> str:
    if doc.format == "pptx":
        return "slides" if many else "slide"
    if doc.format == "xlsx":
        return "sheets" if many else "sheet"
    return "sections" if many else "section"


def _outline(ctx: Context, intent: Intent) -> Answer | None:
    found = _tree_and_section(ctx, intent)
    if found is None:
        return None
    tree, section = found
    parent, kids = tree.outline_level(section)
    if not kids:
        if section is not None:
            return _section_answer(ctx, tree, section)
        return _finish(ctx.question, [f"{_name(tree.doc)} has no headings: it is one run of "
                                      f"{len(tree.passage_ids)} passages."], [tree.hit(ctx.store, tree.root)],
                       tree.outline({tree.root.id}))
    asked = re.search(r"\b(chapters|sections|headings|parts|topics|slides|sheets|tabs)\b", ctx.question, re.I)
    what = _unit(tree.doc) if tree.doc.format in ("pptx", "xlsx") else \
        f"{asked.group(1).lower()} (top-level headings)" if asked and asked.group(1).lower() not in (
            "slides", "sheets", "tabs") else "top-level sections"
    within = f" under “{parent.title}”" if parent.kind == "section" and section is None else ""
    head = f"{_name(tree.doc)} has {len(kids)} {what}{within}:" if section is None else \
        f"“{section.title}” in {_name(tree.doc)} has {len(kids)} subsections:"
    return _listing(ctx, tree, parent, kids, head)


def _section_answer(ctx: Context, tree: DocTree, section: NodeRow) -> Answer:
    """What a section covers: its lead sentences (its subsections' when it has them), cited."""
    lines = [f"“{section.title}” in {_name(tree.doc)}{_where(tree.hit(ctx.store, section))} covers:"]
    hits: list[Hit] = []
    parts = tree.kids(section) or [section]
    for part in parts[:SUMMARY_SECTIONS]:
        lead = tree.lead(ctx.store, part)
        if lead is None:
            continue
        hits.append(tree.hit(ctx.store, part, lead[0]))
        label = f"{part.title}: " if part is not section else ""
        lines.append(f"- {label}{lead[1]} [{len(hits)}]")
    if parts is not None and len(parts) > SUMMARY_SECTIONS:
        lines.append(f"... and {len(parts) - SUMMARY_SECTIONS} more subsections.")
    if not hits:
        hits.append(tree.hit(ctx.store, section))
        lines.append(f"(no text under this heading) [{len(hits)}]")
    return _finish(ctx.question, lines, hits, tree.outline({section.id, *(p.id for p in parts)}))


def _section(ctx: Context, intent: Intent) -> Answer | None:
    found = _tree_and_section(ctx, intent)
    if found is None or found[1] is None:
        return None
    tree, section = found[0], found[1]
    if re.search(r"\b(?:sub-?sections|parts|headings)\b", ctx.question, re.IGNORECASE) and tree.kids(section):
        kids = tree.kids(section)
        return _listing(ctx, tree, section, kids, f"“{section.title}” in {_name(tree.doc)} has {len(kids)} "
                                                  f"subsections:")
    return _section_answer(ctx, tree, section)


def _summary(ctx: Context, intent: Intent) -> Answer | None:
    found = _tree_and_section(ctx, intent)
    if found is None:
        return None
    tree, section = found
    parent, kids = tree.outline_level(section)
    parts = kids or [parent]
    lines = [f"Summary of {'“' + section.title + '” in ' if section is not None else ''}{_name(tree.doc)}, "
             f"{'section by section' if kids else 'from its text'}:"]
    hits: list[Hit] = []
    used = len(lines[0])
    for part in parts[:SUMMARY_SECTIONS]:
        lead = tree.lead(ctx.store, part)
        if lead is None:
            continue
        line = f"- {part.title}: {lead[1]}" if part is not parent or kids else f"- {lead[1]}"
        if used + len(line) > SUMMARY_CHARS and hits:
            break
        hits.append(tree.hit(ctx.store, part, lead[0]))
        lines.append(f"{line} [{len(hits)}]")
        used += len(line)
    if not kids and len(hits) < 3:  # a document without headings: its first passages' leads
        for pid in tree.passage_ids[1:40]:
            if len(hits) >= 5:
                break
            text = " ".join(tree.texts(ctx.store, [pid])[pid].split())
            if len(text) < 40:
                continue
            hits.append(tree.hit(ctx.store, parent, pid))
            lines.append(f"- {lead_sentence(text)} [{len(hits)}]")
    if not hits:
        return None
    left = len(parts) - len(hits)
    if kids and left > 0:
        lines.append(f"({left} more {_unit(tree.doc)} not summarised here; ask about one of them by name.)")
    cited = {h.heading_path[-1] for h in hits if h.heading_path}
    return _finish(ctx.question, lines, hits, tree.outline({s.id for s in parts if s.title in cited}))


def _count(ctx: Context, intent: Intent) -> Answer | None:
    doc = target_document(ctx, intent)
    if doc is None:
        return None
    tree = DocTree.load(ctx.store, doc)
    if tree is None:
        return None
    unit = intent.unit or "pages"
    name, hit = _name(doc), tree.hit(ctx.store, tree.root)
    top = len(tree.outline_level()[1])
    if unit in ("pages", "slides", "sheets", "tabs", "worksheets"):
        asked = {"tabs": "sheets", "worksheets": "sheets"}.get(unit, unit)
        own = UNIT_NAMES.get(doc.format)
        if own is None:
            text = (f"{name} is a {FORMAT_NAMES.get(doc.format, doc.format)}, which has no fixed {asked}; it has "
                    f"{doc.sections} sections ({top} top-level) and {doc.passages} passages. [1]")
        elif own != asked and asked != "pages":
            text = f"{name} is a {FORMAT_NAMES[doc.format]}, not a {_kind_of(asked)}: it has {doc.pages} {own}. [1]"
        else:
            text = f"{name} has {doc.pages} {own}. [1]"
    elif unit in ("chapters", "parts"):
        text = f"{name} has {top} {unit} (top-level headings). [1]"
    else:
        text = f"{name} has {doc.sections} {unit if unit != 'subsections' else 'sections'} in all, {top} of them " \
               f"top-level. [1]"
    return _finish(ctx.question, [text], [hit], tree.outline({tree.root.id}))


def _kind_of(unit: str) -> str:
    return {"slides": "presentation", "sheets": "spreadsheet", "pages": "paged document"}.get(unit, unit)


def doc_type(text: str) -> str:
    """The format a question's words ask for ("presentations" -> pptx), "" for any document."""
    low = text.casefold()
    for pattern, fmt in DOC_TYPES:
        if re.search(pattern, low):
            return fmt
    return ""


def _doc_entry(doc: DocumentRow) -> str:
    own = UNIT_NAMES.get(doc.format)
    size = f"{doc.pages} {own}" if own else f"{doc.sections} sections"
    return f"{_name(doc)}, {size}"


def _inventory(ctx: Context, intent: Intent) -> Answer | None:
    fmt = doc_type(intent.unit)
    docs = [d for d in ctx.docs if not fmt or d.format == fmt]
    where = ""
    if intent.document:
        folder = re.sub(r"\b(?:the|my|our|folder|directory)\b", " ", intent.document, flags=re.IGNORECASE).strip()
        if folder and folder.casefold() not in ("library", "collection"):
            try:
                inside = {d.id for d in documents_in(ctx.docs, folder)}
            except ValueError:
                return _finish(ctx.question, [f"No folder or document named “{folder}” in the library."], [], None)
            docs = [d for d in docs if d.id in inside]
            where = f" in {folder}"
    what = FORMAT_NAMES.get(fmt, "document") + "s" if fmt else "documents"
    if not docs:
        return _finish(ctx.question, [f"No {what}{where} in the library."], [], None)
    lines = [f"{len(docs)} {what if len(docs) != 1 else what[:-1]}{where} in the library:"]
    hits = []
    for d in docs[:LIST_LIMIT]:
        tree = DocTree.load(ctx.store, d)
        if tree is None:
            continue
        hits.append(tree.hit(ctx.store, tree.root))
        lines.append(f"- {_doc_entry(d)} [{len(hits)}]")
    if len(docs) > LIST_LIMIT:
        lines.append(f"... and {len(docs) - LIST_LIMIT} more.")
    outline = _documents_outline(ctx.store, docs, {d.id for d in docs})
    return _finish(ctx.question, lines, hits, outline)


def _documents_outline(store: Store, docs: list[DocumentRow], marked: set[int]) -> Outline:
    """The documents of the scope as an outline (their document nodes), the ones that answered marked."""
    nodes = document_nodes(store, [d.id for d in docs])
    return Outline("Documents", "", [OutlineEntry(nodes[d.id], Path(d.path).name, 0, highlighted=d.id in marked)
                                     for d in docs if d.id in nodes])


def _mentions(ctx: Context, intent: Intent) -> Answer | None:
    topic = re.sub(r"^(?:the|a|an|any|some|my|our|this|that)\s+", "", intent.topic.strip(), flags=re.IGNORECASE)
    fmt = doc_type(intent.unit)
    docs = [d for d in ctx.docs if not fmt or d.format == fmt]
    if not topic.strip() or not docs:
        return None
    ids = {d.id for d in docs}
    best: dict[int, tuple[NodeRow, float, str]] = {}
    for match in (match_expression("", [topic]), match_expression(topic)):  # the words together, else any word
        if match is None:
            continue
        for h in ctx.store.search_hits(topic, limit=2000, document_ids=ids, match=match):
            did = h.node.document_id
            if did is not None and (did not in best or h.score > best[did][1]):
                best[did] = (h.node, h.score, h.snippet)
        if best:
            break
    if not best:
        return _finish(ctx.question, [f"No document mentions “{topic}”."], [], None)
    order = sorted(best, key=lambda d: -best[d][1])
    by_id = {d.id: d for d in docs}
    lines = [f"{len(order)} document{'s' if len(order) != 1 else ''} mention{'' if len(order) != 1 else 's'} "
             f"“{topic}”:"]
    hits: list[Hit] = []
    for did in order[:LIST_LIMIT]:
        node, score, snippet = best[did]
        d = by_id[did]
        hit = Hit(node_id=node.id, document_id=did, text=node.text, score=round(score, 4), path=d.path,
                  title=d.title, heading_path=list(node.heading_path), location=node.location)
        hits.append(hit)
        where = " > ".join(node.heading_path[-2:])
        lines.append(f"- {_name(d)}{' › ' + where if where else ''}{_where(hit)}: "
                     f"“{' '.join(snippet.replace('[', '').replace(']', '').split())}” [{len(hits)}]")
    if len(order) > LIST_LIMIT:
        lines.append(f"... and {len(order) - LIST_LIMIT} more.")
    outline = _documents_outline(ctx.store, docs, set(best))
    return _finish(ctx.question, lines, hits, outline)


def where_answer(store: Store, question: str, hits: Sequence[Hit], search: SearchResult) -> Answer:
    """"Where is X described": the section path of the best passage, and of the next ones in other sections."""
    seen: list[tuple[str, ...]] = []
    chosen: list[Hit] = []
    for h in hits:
        key = (h.path, *h.heading_path)
        if chosen and h.score < ALSO_SHARE * chosen[0].score:  # "also in" only for places nearly as good
            break
        if key not in seen:
            seen.append(key)
            chosen.append(h)
        if len(chosen) >= 3:
            break
    first = chosen[0]
    lines = [f"Described in {_path(first)}{_where(first)} [1]."]
    for i, h in enumerate(chosen[1:], 2):
        lines.append(f"Also in {_path(h)}{_where(h)} [{i}].")
    outline = None
    doc = store.document(first.document_id)
    if doc is not None and (tree := DocTree.load(store, doc)) is not None:
        marks = {s.id for s in tree.sections for h in chosen if h.document_id == doc.id
                 and h.heading_path and s.title == h.heading_path[-1]}
        outline = tree.outline(marks or {tree.root.id})
    answer = Answer(question, "\n".join(lines), [Citation(i, h) for i, h in enumerate(chosen, 1)], True,
                    search=search, tokens=search.trace.tokens, outline=outline, kind="where")
    return answer


def _path(hit: Hit) -> str:
    parts = [hit.title or Path(hit.path).name]
    for x in hit.heading_path:
        if x and x != parts[-1]:
            parts.append(x)
    return " › ".join(parts)


__all__ = ["FORMATS", "answer_structure", "doc_type", "find_section", "target_document", "where_answer"]
