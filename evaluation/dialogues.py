"""Multi-turn evaluation: dialogues of 2-4 questions over a library, each turn with its gold passage.

A dialogue file is JSON Lines, one dialogue per line::

    {"id": "s01", "split": "test", "turns": [
        {"question": "How many days of annual leave do employees get?", "file": "handbook.pdf",
         "evidence": "Full-time employees receive 27 days", "kind": "first"},
        {"question": "and how do I request it?", "file": "handbook.pdf",
         "evidence": "All leave is requested in the LeaveDesk portal", "kind": "followup"}, ...]}

``kind`` is ``first``, ``followup`` (depends on the turns before) or ``shift`` (a new topic). Each turn's gold is
checked against the stored tree before anything runs: its ``evidence`` must be in exactly one passage of ``file``
(the gold passage; its section and document follow from the tree). A dialogue is played once per reading rule,
each turn read against that rule's own earlier answers (walk + extracted answer, no generation), and scored by
passage / section / document Hit@1 of the walk's top passage, per turn position and per kind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.types import Answer
from shelfwise.core.conversation.model import Conversation, Reading, Turn
from shelfwise.core.conversation.reading import ALONE, CONCATENATION, SHIPPED, ReadingRule, read
from shelfwise.core.conversation.turn import decision_for, lexical_search, turn_from
from shelfwise.core.json_types import JSONObject
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import Snapshot
from shelfwise.core.store.types import DocumentRow, NodeRow

KINDS = ("first", "followup", "shift")
LEVELS = ("passage", "section", "document")
DEFAULT_RULES: dict[str, ReadingRule] = {"alone": ALONE, "concatenation": CONCATENATION, "shipped": SHIPPED}


@dataclass
class DialogueTurn:
    question: str
    file: str
    evidence: str
    kind: str


@dataclass
class Dialogue:
    id: str
    split: str
    turns: list[DialogueTurn]


@dataclass(frozen=True)
class Gold:
    node_id: int
    section: tuple[str, ...]
    document_id: int


ReadFn = Callable[..., tuple[Reading, np.ndarray | None]]
DecideFn = Callable[[LibraryWalk, Snapshot | None, ReadingRule], DecisionModel | None]
AnswerFn = Callable[..., Answer]


@dataclass(frozen=True)
class Player:
    """How :func:`play` reads and answers each turn: the product's reading (``read``, ``decision_for``) and
    answer (``answer_question``) unless a caller brings its own (the research rules of
    benchmarks/research/reading_research.py, memoised walks in benchmarks/research/conversation_gate.py), so nothing
    replaces the
    functions of a module at run time."""

    read: ReadFn = read
    decision_for: DecideFn = decision_for
    answer: AnswerFn = answer_question


class GoldError(ValueError):
    """A turn's gold is not (or not uniquely) in the stored tree."""


def is_dialogue_file(path: str | Path) -> bool:
    """Whether a .jsonl file holds dialogues (its first object has ``turns``)."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return "turns" in json.loads(line)
    except (OSError, ValueError):
        return False
    return False


def load_dialogues(path: str | Path, split: str = "all") -> list[Dialogue]:
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        turns = [DialogueTurn(t["question"], t["file"], t["evidence"], t.get("kind", "followup" if i else "first"))
                 for i, t in enumerate(d["turns"])]
        bad = [t.kind for t in turns if t.kind not in KINDS]
        if bad or not turns:
            raise ValueError(f"{path}:{n}: turns need a kind of {', '.join(KINDS)} (got {bad or 'no turns'})")
        dlg = Dialogue(str(d.get("id", n)), str(d.get("split", "all")), turns)
        if split == "all" or dlg.split == split:
            out.append(dlg)
    return out


def resolve_golds(store: Store, collection_id: int, dialogues: Sequence[Dialogue]) -> dict[tuple[str, int], Gold]:
    """Each turn's gold passage in the stored tree (its evidence in exactly one passage of its file); raises
    :class:`GoldError` naming every turn that does not resolve."""
    docs: dict[str, DocumentRow] = {}
    for d in store.documents(collection_id):
        docs.setdefault(Path(d.path).name, d)
    passages: dict[int, list[NodeRow]] = {}
    out: dict[tuple[str, int], Gold] = {}
    errors = []
    for dlg in dialogues:
        for i, t in enumerate(dlg.turns):
            doc = docs.get(Path(t.file).name)
            if doc is None:
                errors.append(f"{dlg.id} turn {i + 1}: {t.file} is not in the library")
                continue
            if doc.id not in passages:
                passages[doc.id] = store.passages(document_id=doc.id)
            want = " ".join(t.evidence.split())
            found = [p for p in passages[doc.id] if want in " ".join(p.text.split())]
            if len(found) != 1:
                errors.append(f"{dlg.id} turn {i + 1}: evidence {t.evidence!r} is in {len(found)} passages of "
                              f"{t.file} (needs exactly 1)")
                continue
            p = found[0]
            out[(dlg.id, i)] = Gold(p.id, tuple(p.heading_path), doc.id)
    if errors:
        raise GoldError("gold not in the stored tree:\n  " + "\n  ".join(errors))
    return out


def score_hit(hits: Sequence[Hit], gold: Gold) -> dict[str, float]:
    if not hits:
        return dict.fromkeys(LEVELS, 0.0)
    top = hits[0]
    same_doc = top.document_id == gold.document_id
    return {"passage": float(top.node_id == gold.node_id),
            "section": float(same_doc and tuple(top.heading_path) == gold.section),
            "document": float(same_doc)}


@dataclass
class Played:
    """One dialogue played under one rule: per turn, its reading mode and its scores."""

    dialogue: str
    split: str
    rows: list[JSONObject] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)  # the turns as played (history of each next one)


def play(library: LibraryWalk, dialogue: Dialogue, golds: Mapping[tuple[str, int], Gold], rule: ReadingRule,
         collection: str, player: Player = Player()) -> Played:
    conv = Conversation(id=None, collection=collection)
    coll = library.store.find_collection(collection)
    if coll is None:
        raise ValueError(f"no collection {collection!r} in {library.store.path}")
    snap = snapshot_for(library.store, coll.id, library.embedder.model_id)
    played = Played(dialogue.id, dialogue.split)
    for i, t in enumerate(dialogue.turns):
        t0 = time.perf_counter()
        reading, q_vec = player.read(t.question, conv.turns, snap, library.embedder, rule,
                                     search=lexical_search(library.store, snap),
                                     decision=player.decision_for(library, snap, rule))
        answer = player.answer(library, reading.query, collection=collection, generate=False,
                                 prior=reading.prior or None, q_vec=q_vec)
        turn: Turn = turn_from(t.question, reading, answer)
        turn.position = i
        conv.turns.append(turn)
        hits = answer.search.hits if answer.search is not None else []
        played.rows.append({"position": i + 1, "kind": t.kind, "mode": reading.mode, "query": reading.query,
                            "scores": reading.scores, "seconds": round(time.perf_counter() - t0, 3),
                            **score_hit(hits, golds[(dialogue.id, i)])})
    played.turns = conv.turns
    return played


def summarise(played: Sequence[Played]) -> JSONObject:
    """Hit@1 per level by turn position, by kind, and over every non-first turn; with counts."""
    rows = [r for p in played for r in p.rows]

    def mean(sel: list[JSONObject]) -> JSONObject:
        out: JSONObject = {"n": len(sel)}
        for lv in LEVELS:
            out[lv] = round(sum(r[lv] for r in sel) / len(sel), 3) if sel else None
        return out

    by_pos = {str(p): mean([r for r in rows if r["position"] == p]) for p in sorted({r["position"] for r in rows})}
    by_kind = {k: mean([r for r in rows if r["kind"] == k]) for k in KINDS}
    shift_caught = [r for r in rows if r["kind"] == "shift"]
    follow_read = [r for r in rows if r["kind"] == "followup"]
    return {"by_position": by_pos, "by_kind": by_kind, "all": mean(rows),
            "shift_read_alone": round(sum(r["mode"] != "followup" for r in shift_caught) / len(shift_caught), 3)
            if shift_caught else None,
            "followup_read_as_followup": round(sum(r["mode"] == "followup" for r in follow_read) / len(follow_read),
                                               3) if follow_read else None,
            "seconds_per_turn": round(sum(r["seconds"] for r in rows) / len(rows), 3) if rows else None}


def run_dialogue_eval(library: LibraryWalk, path: str | Path, *, collection: str = "default", split: str = "all",
                      rules: Mapping[str, ReadingRule] | None = None,
                      log: Callable[[str], None] | None = None, player: Player = Player()) -> JSONObject:
    """Play every dialogue of ``path`` under each rule (default: alone, concatenation, shipped); the report."""
    rules = dict(rules or DEFAULT_RULES)
    dialogues = load_dialogues(path, split)
    coll = library.store.find_collection(collection)
    if coll is None:
        raise GoldError(f"no collection {collection!r} in this library")
    golds = resolve_golds(library.store, coll.id, dialogues)
    report: JSONObject = {"dataset": str(path), "split": split, "dialogues": len(dialogues),
                              "turns": sum(len(d.turns) for d in dialogues), "methods": {}, "rules": {}}
    for name, rule in rules.items():
        t0 = time.perf_counter()
        played = [play(library, d, golds, rule, collection, player) for d in dialogues]
        report["methods"][name] = summarise(played)
        report["rules"][name] = asdict(rule)
        report.setdefault("rows", {})[name] = [{"dialogue": p.dialogue, "split": p.split, **r}
                                               for p in played for r in p.rows]
        if log is not None:
            log(f"{name}: {time.perf_counter() - t0:.1f} s")
    return report


def markdown(report: JSONObject) -> str:
    """Per turn position and per kind, passage / section / document Hit@1 of each method."""
    names = list(report["methods"])
    lines = [f"Dialogues: {report['dialogues']} ({report['turns']} turns), split {report['split']}", "",
             "| turns | n | " + " | ".join(f"{n} P / S / D" for n in names) + " |",
             "|---|---|" + "---|" * len(names)]
    first = report["methods"][names[0]]
    groups = [(f"position {p}", "by_position", p) for p in first["by_position"]] + \
             [(k, "by_kind", k) for k in KINDS]
    for label, key, sub in groups:
        cells = []
        for n in names:
            m = report["methods"][n][key][sub]
            cells.append(" / ".join("-" if m[lv] is None else f"{m[lv]:.3f}" for lv in LEVELS))
        lines.append(f"| {label} | {first[key][sub]['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
