"""Loaders for evaluation sets that no one on the team wrote, and for a user's own labelled questions.

Each loader returns an :class:`EvalSet`: documents as :class:`ParsedDocument` trees (written to a store by the
evaluation harness) and questions with their gold evidence, expressed so that any ranked list of passages can be
judged at three granularities: document, section (heading path), passage.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode


@dataclass(frozen=True)
class GoldPassage:
    """One gold evidence unit: its document path, its section heading path, and how to recognise the passage."""

    path: str
    heading_path: tuple[str, ...]
    item: int | None = None  # content-item index stored in Location.line (ConditionalQA), None = any in doc
    text: str = ""  # evidence text, for generic sets matched by containment


@dataclass
class EvalQuestion:
    qid: str
    query: str
    gold: list[GoldPassage]
    answers: list[str] = field(default_factory=list)
    question: str = ""  # the question alone (without scenario)
    scenario: str = ""
    not_answerable: bool = False  # ConditionalQA: the documents do not answer it (loaded with answerable_only=False)


@dataclass
class EvalDocument:
    path: str
    parsed: ParsedDocument


@dataclass
class EvalSet:
    name: str
    documents: list[EvalDocument]
    questions: list[EvalQuestion]
    documents_key: str = ""  # the collection (and evaluation database) the documents are stored in; "" = name

    @property
    def store_name(self) -> str:
        return self.documents_key or self.name


_TAG = re.compile(r"^<(h1|h2|h3|p|li|tr)>(.*)</\1>$", re.S)


def _strip(item: str) -> tuple[str, str]:
    m = _TAG.match(item.strip())
    if not m:
        return "p", html.unescape(re.sub(r"<[^>]+>", " ", item)).strip()
    tag, body = m.group(1), m.group(2)
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    text = re.sub(r"\s+", " ", text).strip()
    if tag == "li":
        text = "- " + text
    return tag, text


def conditionalqa_document(title: str, url: str, contents: list[str]) -> ParsedDocument:
    """A gov.uk guide as a tree: h1 -> h2 -> h3 sections; every p/li/tr content item one passage.

    ``Location.line`` of a passage is its content-item index in the guide, which is how gold evidence is matched.
    """
    doc = ParsedDocument(title=title, format="html")
    stack: list[tuple[int, ParsedNode]] = []  # (level, node)
    for idx, item in enumerate(contents):
        tag, text = _strip(item)
        if not text:
            continue
        if tag in ("h1", "h2", "h3"):
            level = int(tag[1])
            node = ParsedNode(kind="section", title=text, location=Location(line=idx))
            while stack and stack[-1][0] >= level:
                stack.pop()
            (stack[-1][1].children if stack else doc.children).append(node)
            stack.append((level, node))
        else:
            passage = ParsedNode(kind="passage", title="", text=text, location=Location(line=idx))
            (stack[-1][1].children if stack else doc.children).append(passage)
    doc.pages = 1
    return doc


SPLITS = ("tune", "test", "all")


def conditionalqa_split(url: str) -> str:
    """The half of ConditionalQA a guide belongs to, fixed by its URL: ``"test"`` when ``int(sha256(url), 16)`` is
    odd (30 guides, 140 answerable questions), ``"tune"`` otherwise (29 guides, 131 questions). Everything chosen by
    looking at results is chosen on the tune half; figures are reported on the test half. Retrieval always runs over
    all 59 guides: the split selects questions, never documents."""
    return "test" if int(hashlib.sha256(url.encode("utf-8")).hexdigest(), 16) % 2 else "tune"


def load_conditionalqa(root: Path, *, answerable_only: bool = True, split: str = "all") -> EvalSet:
    """ConditionalQA dev: every guide is a document; ``split`` (``tune`` | ``test`` | ``all``) selects the questions
    (see :func:`conditionalqa_split`), the documents are always all 59 guides."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    docs_raw = json.loads((root / "derived" / "documents_dev.json").read_text(encoding="utf-8"))
    documents = [
        EvalDocument(path=d["url"], parsed=conditionalqa_document(d["title"], d["url"], d["contents"]))
        for d in docs_raw
    ]
    questions: list[EvalQuestion] = []
    with (root / "derived" / "dev_gold.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if answerable_only and (q["not_answerable"] or not q["evidences"]):
                continue
            if split != "all" and conditionalqa_split(q["url"]) != split:
                continue
            gold = [
                GoldPassage(path=q["url"],
                            heading_path=tuple(_strip("<h1>" + h + "</h1>")[1] for h in e["section_path"]),
                            item=i, text=_strip(e["text"])[1])
                for e in q["evidences"]
                for i in e["content_indices"]
            ]
            answers = [a[0] for a in q.get("answers", []) if a and a[0]]
            questions.append(EvalQuestion(
                qid=q["id"], query=f"{q['scenario'].strip()} {q['question'].strip()}".strip(), gold=gold,
                answers=answers, question=q["question"].strip(), scenario=q["scenario"].strip(),
                not_answerable=bool(q["not_answerable"]),
            ))
    return EvalSet("conditionalqa", documents, questions)


def _lead(text: str, words: int = 8) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + ("..." if len(parts) > words else "")


def load_squad(root: Path, *, limit: int | None = None) -> EvalSet:
    """SQuAD v1.1 dev: every paragraph is one document of a flat collection (no article structure is given away);
    gold = the question's paragraph. ``limit`` caps the questions (spread over all articles), not the collection."""
    with zipfile.ZipFile(root / "original" / "dev-v1.1.json.zip") as zf:
        name = next(n for n in zf.namelist() if n.endswith(".json"))
        data = json.loads(zf.read(name))
    documents, questions = squad_paragraphs(data, "squad", _lead, lambda qa: qa["question"])
    return EvalSet("squad", documents, spread(questions, limit))


def squad_paragraphs(data: dict, scheme: str, title: Callable[[str], str],
                     question_of: Callable[[dict], str | None]) -> tuple[list[EvalDocument], list[EvalQuestion]]:
    """A SQuAD-format file (SQuAD, XQuAD) as a flat collection: each paragraph one document (``scheme://a/p``, its
    title ``title(text)``), each question (``question_of(qa)``; None: left out) gold on its paragraph."""
    documents: list[EvalDocument] = []
    questions: list[EvalQuestion] = []
    for a_idx, article in enumerate(data["data"]):
        for p_idx, para in enumerate(article["paragraphs"]):
            path = f"{scheme}://{a_idx}/{p_idx}"
            text = para["context"].strip()
            doc = ParsedDocument(title=title(text), format="txt", pages=1, children=[
                ParsedNode(kind="passage", title="", text=text, location=Location(line=1)),
            ])
            documents.append(EvalDocument(path=path, parsed=doc))
            for qa in para["qas"]:
                question = question_of(qa)
                if question is None:
                    continue
                questions.append(EvalQuestion(
                    qid=qa["id"], query=question.strip(), question=question.strip(),
                    gold=[GoldPassage(path=path, heading_path=())],
                    answers=[x["text"] for x in qa["answers"]],
                ))
    return documents, questions


def spread(questions: list[EvalQuestion], limit: int | None) -> list[EvalQuestion]:
    """At most ``limit`` of the questions, taken at even steps (so spread over all articles)."""
    if limit is not None and limit < len(questions):
        step = len(questions) / limit
        return [questions[int(i * step)] for i in range(limit)]
    return questions


def load_jsonl(path: Path) -> list[EvalQuestion]:
    """A user's own labelled questions: one JSON object per line with ``question``, ``file`` and optionally
    ``location`` ({"page": 4} | {"slide": 3} | {"sheet": "S"} | {"heading": "Meals"}), ``evidence`` (a sentence
    the gold passage contains) and ``answer``. Files are matched by name against ingested documents."""
    out: list[EvalQuestion] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        q = json.loads(line)
        loc = q.get("location") or {}
        heading: tuple[str, ...] = (str(loc["heading"]),) if loc.get("heading") else ()
        out.append(EvalQuestion(
            qid=str(q.get("id", n)), query=q["question"], question=q["question"],
            gold=[GoldPassage(path=q["file"], heading_path=heading, text=q.get("evidence", ""))],
            answers=[q["answer"]] if q.get("answer") else [],
        ))
    return out

