"""How a question is read against the conversation before it.

Three decisions, each measured on the multi-turn set's tune split (``benchmarks/research/conversation_tune.py`` and
``benchmarks/research/conversation_gate.py``; figures and the data that chose each in docs/eval/conversation.md):

1. **Follow-up or new topic.** The words first: a question that announces a new subject ("OK, new question: ...")
   or says what it asks in its own words (no pronoun, "one" or continuing opening, at least ``own_words`` content
   words) is read alone. A shorter one with no word pointing back is read alone when the library is confident of
   its answer to the question alone (``confidence``, :func:`alone_confidence`), else as a follow-up. A question
   that points back is compared inside and outside the documents the last turn answered from: its best passage
   cosine inside minus elsewhere (``margin``), plus ``lexical_weight`` x the same for BM25 and ``cue_weight`` x the
   words' cue (:func:`shelfwise.core.conversation.cues.points_back`). Below ``threshold`` the question moved on and
   is read alone, with no preferred branches. A follow-up whose words name no referent is also checked for whether
   the conversation pulled its reading away from what it names (``coverage_gap``: the share of its own words in
   the best passage read alone against read with the conversation).
2. **The text read.** For a follow-up, the query the embedder, BM25, the judge and the extractive answer read is
   built by ``text`` (one of :data:`TEXTS`). A follow-up whose words name no referent and say what it asks in
   ``middle_words`` own words, and whose best passage alone lies in another section of the last answer's documents
   (``middle_gap``), is read in the middle: its own text and vector, the branches below still preferred.
3. **The branches preferred.** The last turn's cited passages' sections and documents (and the topic clusters
   above them) get a logit at every level of the walk (``document_bonus``, ``section_bonus``;
   :meth:`Navigator.navigate`'s ``prior``).

The variants tried and not shipped (``alone_gap``, ``gap_hits``, ``coverage_inside``, the middle reading's own text,
mix, bonuses and opening, ``passage_bonus``) live in ``benchmarks/research/reading_research.py``, which the benchmarks
use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from shelfwise.core.answers.extractive import share_held
from shelfwise.core.conversation.cues import (
    content_words,
    names_referent,
    own_words,
    points_back,
    rewrite,
    topic_of,
)
from shelfwise.core.conversation.model import Reading, Turn
from shelfwise.core.models.backend import Embedder
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.features import QueryEvidence, level_features, scan_ahead
from shelfwise.core.store.snapshot import Snapshot

TEXTS = ("alone", "previous", "all", "answer", "rewrite")
FEW_WORDS = 3  # a question that points back with at most this many content words counts its cue twice
CITE_MARK = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")


@dataclass(frozen=True)
class ReadingRule:
    text: str = "previous"
    document_bonus: float = 1.0
    section_bonus: float = 0.0
    threshold: float = -0.15
    cue_weight: float = 0.0
    gate: bool = True  # False: every question after the first is read as a follow-up (no topic-shift test)
    lexical_weight: float = 0.0  # the BM25 margin (best inside vs outside, as a share of the best) in the test
    mix: float = 0.0  # > 0: the embedder reads the question's own vector plus ``mix`` x the last turn's query's
    # vector (normalised) instead of the text's; BM25, the judge and the extractive answer still read ``text``
    own_words: int = 0  # > 0: a question with no word pointing back and at least this many content words of its own
    # says what it asks, and one whose words announce a new topic says so: both read alone, whatever the margins
    # (0: the margins decide)
    confidence: float = 0.0  # > 0: a question with no word pointing back and fewer own words is read alone when the
    # walk's passage model, for the question alone, gives its best passage at least this P(relevant)
    # (:func:`alone_confidence`), else as a follow-up; the margins decide only for questions that point back
    coverage_gap: float | None = None  # set: a follow-up by the tests above whose words hold no pronoun or "one"
    # (only a continuing opening, or nothing, points back) and that has at least ``coverage_words`` content words
    # of its own is read alone when the best passage for the question alone has a larger share of those words than
    # the follow-up reading's best passage by at least this (:func:`cues.own_words` against each passage's words
    # with the extractive answer's matcher, :func:`extractive.share_held`; both passages from the flat pool of
    # :func:`flat_best`): the conversation pulled the reading away from what the question names
    coverage_words: int = 2
    middle_words: int = 0  # > 0: a follow-up by the tests above whose words hold no pronoun or "one" (only a
    # continuing opening, or nothing, points back) and that has at least this many own words (:func:`cues.own_words`)
    # is read in the middle: its own text and vector, but still in the last answer's documents (the prior's
    # ``document_bonus``, no section bonus). A same-document shift then keeps its document and finds its section by
    # its own words (0: off)
    middle_gap: float | None = None  # set: the middle reading only when, for the question alone, the passage model's
    # best P(relevant) in the rest of the last answer's documents exceeds its best in the last answer's sections by
    # at least this (:func:`section_confidence`): its own words lead to another section of the same document

    # The steps :func:`read` leaves to its rule. These are the shipped reading's; a rule that tries another
    # (benchmarks/research/reading_research.py) overrides them, and :func:`read` stays written once.
    def wants_hits(self) -> bool:
        """Whether the topic-shift test reads the question's own BM25 hits."""
        return bool(self.lexical_weight or self.confidence)

    def prior(self, snap: Snapshot, turn: Turn) -> dict[int, float]:
        """The branches a follow-up's walk prefers (:func:`prior_for`)."""
        return prior_for(snap, turn, self)

    def compare_readings(self, asked: Asked, query: str, mixed: np.ndarray | None) -> None:
        """A further test of a follow-up against the question read alone, before the coverage test (none)."""

    def coverage_counts(self, asked: Asked) -> bool:
        """Whether the coverage test, when it finds the question's words better covered alone, reads it alone
        (always)."""
        return True

    def reads_middle(self, question: str) -> bool:
        """Whether a follow-up that passes the middle reading's word tests may be read in the middle (always)."""
        return True

    def middle(self, asked: Asked, snap: Snapshot, mine: np.ndarray) -> tuple[Reading, np.ndarray | None]:
        """The middle reading: the question's own text and vector ``mine``, the walk preferring the last answer's
        documents (no section bonus)."""
        prior = prior_for(snap, asked.last, replace(self, section_bonus=0.0))
        return Reading("followup", asked.question, asked.question, prior=prior, scores=asked.scores,
                       why="a follow-up in the last answer's documents, read in its own words: " + asked.why,
                       vector=mine, vector_model=asked.model), mine


@dataclass
class Asked:
    """One question being read after a conversation: what the steps of :func:`read` find and hand on (and the
    rule's steps read)."""

    question: str
    turns: Sequence[Turn]
    snap: Snapshot | None
    embedder: Embedder
    search: Callable[[str], dict[int, float]] | None  # BM25 of a text
    decision: DecisionModel | None
    model: str  # the embedder's model id
    cue: int  # :func:`cues.points_back`, 2 for a short question that points back
    scores: dict[str, float] = field(default_factory=dict)
    q_vec: np.ndarray | None = None  # the question's own vector, once the gate embeds it
    hits: dict[int, float] = field(default_factory=dict)  # its BM25 hits, when the gate reads them
    sure: float | None = None  # alone_confidence of the question alone, once computed
    alone_best: int | None = None  # the passage it is for
    followup: bool = True
    documents: set[int] = field(default_factory=set)  # the last answer's documents, once the gate reads them
    why: str = "read with the conversation (every question after the first is)"

    @property
    def last(self) -> Turn:
        return self.turns[-1]


# The reading that ships, each value chosen on the multi-turn set's tune split (benchmarks/research/conversation_tune.py
# and conversation_gate.py; the rounds that chose them, with their figures and the variants that lost, are in
# docs/eval/conversation.md; what each field does is said on ReadingRule)
SHIPPED = ReadingRule(text="previous", mix=0.5, document_bonus=1.0, threshold=-0.33, cue_weight=0.0,
                      lexical_weight=0.3, own_words=4, confidence=0.44, coverage_gap=0.5, coverage_words=2,
                      middle_words=4, middle_gap=0.1)
ALONE = ReadingRule(text="alone", document_bonus=0.0, gate=False)
CONCATENATION = ReadingRule(text="all", document_bonus=0.0, gate=False)


def compose(text: str, question: str, turns: Sequence[Turn]) -> str:
    """The query for ``question`` after ``turns`` built the way ``text`` says."""
    if not turns or text == "alone":
        return question
    last = turns[-1]
    if text == "previous":
        return f"{_sentence(last.reading.query or last.question)} {question}"
    if text == "all":
        return " ".join([*(_sentence(t.question) for t in turns), question])
    if text == "answer":
        said = CITE_MARK.sub("", last.answer).strip() if last.found else ""
        return f"{_sentence(said)} {question}" if said else f"{_sentence(last.question)} {question}"
    if text == "rewrite":
        heading = last.citations[0].heading_path if last.citations else []
        return rewrite(question, last.reading.query or last.question, topic_of(heading, last.question))
    raise ValueError(f"unknown reading {text!r} (one of {', '.join(TEXTS)})")


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text[-1] in ".?!" else text + "."


def history_nodes(turn: Turn) -> list[int]:
    """The passages the last turn answered from: its citations, else its top passage."""
    cited = [c.node_id for c in turn.citations if c.node_id]
    return cited or turn.hit_nodes[:1]


def prior_for(snap: Snapshot, turn: Turn, rule: ReadingRule) -> dict[int, float]:
    """Node id -> logit for the branches the last turn was in: its documents (and the topic clusters above them)
    and everything inside them get ``document_bonus``, its sections and what they hold ``section_bonus`` more.
    Nodes no longer in the tree are skipped."""
    prior: dict[int, float] = {}

    def add(node_id: int, bonus: float) -> None:
        if bonus:
            prior[node_id] = prior.get(node_id, 0.0) + bonus

    cited = [nid for nid in history_nodes(turn) if nid in snap.nodes]
    docs: dict[int, None] = {}
    sections: dict[int, None] = {}
    for nid in cited:
        for a in snap.ancestors(nid):
            if a.kind in ("document", "cluster"):
                docs.setdefault(a.id)
            elif a.kind == "section" and snap.section_of(nid) is a:
                sections.setdefault(a.id)
    for top, bonus in ((docs, rule.document_bonus), (sections, rule.section_bonus)):
        if not bonus:
            continue
        for nid in top:
            if snap.nodes[nid].kind == "cluster":
                add(nid, bonus)
                continue
            stack = [nid]
            while stack:
                n = stack.pop()
                add(n, bonus)
                stack.extend(snap.nodes[n].children)
    return prior


def history_documents(snap: Snapshot, turn: Turn) -> set[int]:
    docs = set()
    for nid in history_nodes(turn):
        node = snap.document_of(nid) if nid in snap.nodes else None
        if node is not None:
            docs.add(node.id)
    return docs


def shift_margin(snap: Snapshot, q_vec: np.ndarray, documents: set[int]) -> tuple[float, float]:
    """The question alone's best passage cosine inside ``documents`` (document node ids) and outside them."""
    if not len(snap.passage_ids) or snap.dim != q_vec.shape[0]:
        return 0.0, 0.0
    cos = snap.passage_cos(q_vec)
    inside = np.zeros(len(cos), bool)
    for d in documents:
        a, b = snap.nodes[d].span
        inside[a:b] = True
    cin = float(cos[inside].max()) if inside.any() else -1.0
    cout = float(cos[~inside].max()) if (~inside).any() else -1.0
    return cin, cout


def lexical_margin(snap: Snapshot, hits: dict[int, float], documents: set[int]) -> tuple[float, float]:
    """The question alone's best BM25 score inside ``documents`` and outside them, as shares of its best."""
    if not hits:
        return 0.0, 0.0
    best = max(hits.values()) or 1.0
    inside = {p for d in documents for p in snap.passage_ids[slice(*snap.nodes[d].span)].tolist()}
    lin = max((v for k, v in hits.items() if k in inside), default=0.0) / best
    lout = max((v for k, v in hits.items() if k not in inside), default=0.0) / best
    return float(lin), float(lout)


POOL = 50  # passages by cosine that :func:`alone_confidence` scores beside the question's BM25 hits


def alone_confidence(snap: Snapshot, q_vec: np.ndarray, hits: dict[int, float], decision: DecisionModel) -> float:
    """The decision model's P(relevant) of the best passage for the question alone, from the embedder's and BM25's
    evidence (no generative readout, no judge): the walk's passage level over a flat pool (the ``POOL`` passages
    nearest by cosine and the BM25 hits). How sure the library is that the question, read on its own, has its
    answer."""
    return flat_best(snap, q_vec, hits, decision)[0]


def flat_best(snap: Snapshot, q_vec: np.ndarray, hits: dict[int, float],
              decision: DecisionModel) -> tuple[float, int | None]:
    """:func:`alone_confidence` and the passage it is for (its node id; None in an empty or other-model
    snapshot)."""
    if not len(snap.passage_ids) or snap.dim != q_vec.shape[0]:
        return 0.0, None
    ev = QueryEvidence.build(snap, q_vec, hits)
    rows = set(np.argsort(-ev.cos)[:POOL].tolist()) | {snap.row_of[n] for n in hits if n in snap.row_of}
    cands = snap.nodes.many([int(snap.passage_ids[r]) for r in sorted(rows)])
    p = decision.model("passage").proba(level_features(snap, ev, cands))
    best = int(np.argmax(p))
    return float(p[best]), cands[best].id


def passage_words(snap: Snapshot, node_id: int | None) -> str:
    """A passage's heading path and text, the words the coverage test reads (:func:`extractive.share_held`)."""
    node = snap.nodes.get(node_id) if node_id is not None else None
    return " ".join([*node.heading_path, node.text]) if node is not None else ""


def read(question: str, turns: Sequence[Turn], snap: Snapshot | None, embedder: Embedder,
         rule: ReadingRule = SHIPPED, *, alone: bool = False,
         search: Callable[[str], dict[int, float]] | None = None,
         decision: DecisionModel | None = None) -> tuple[Reading, np.ndarray | None]:
    """How to read ``question`` after ``turns``; also the vector the walk's embedder evidence uses when it is not
    the query text's own (the question's, already embedded, when read alone; the mix of ``rule.mix``), else None.
    ``alone=True``: the person asked to read it alone; ``search``: BM25 of a text (the gate's lexical margin);
    ``decision``: the collection's decision model (:func:`alone_confidence`; the prior when None)."""
    model = embedder.model_id
    if not turns or alone:
        # the question's vector, kept with the turn for the next one's mix; the walk embeds what it reads itself
        # (the question without its inline filters), finding this in the embedder's kept vectors when that is the
        # same text
        its = query_vectors(embedder, [question])[0]
        mode, why = ("alone", "asked alone") if turns else ("first", "the first question of the conversation")
        return Reading(mode, question, question, why=why, vector=its, vector_model=model), None
    cue = points_back(question)
    if cue > 0 and len(content_words(question)) <= FEW_WORDS:  # "and how do I request it?": nothing of its own
        cue = 2
    asked = Asked(question, turns, snap, embedder, search, decision, model, cue, {"cue": float(cue)})
    if rule.gate and snap is not None:
        _gate(asked, snap, rule)
    query = compose(rule.text, question, turns)
    mixed = followup_vector(question, asked.q_vec, asked.last, embedder, model, rule) if asked.followup else None
    rule.compare_readings(asked, query, mixed)
    _coverage(asked, rule, query, mixed)
    if not asked.followup:
        q_vec = asked.q_vec
        return Reading("shift", question, question, why="a new topic: " + asked.why, scores=asked.scores,
                       vector=q_vec, vector_model=model if q_vec is not None else ""), q_vec
    middle = _middle(asked, rule)
    if middle is not None:
        return middle
    prior = rule.prior(snap, asked.last) if snap is not None else {}
    return Reading("followup", query, question, prior=prior, why="a follow-up: " + asked.why,
                   scores=asked.scores), mixed


def _gate(asked: Asked, snap: Snapshot, rule: ReadingRule) -> None:
    """The topic-shift test (the module doc's first decision): sets ``asked.followup`` and says why."""
    question, search, cue = asked.question, asked.search, asked.cue
    q_vec = asked.q_vec = query_vectors(asked.embedder, [question])[0]
    documents = asked.documents = history_documents(snap, asked.last)
    wants_hits = search is not None and rule.wants_hits()
    # on a large library the question's scan runs while its words are ranked (the same cosines: features.scan_ahead)
    scanned = scan_ahead(snap, q_vec, None) if wants_hits else (lambda: None)
    try:
        hits = asked.hits = search(question) if search is not None and wants_hits else {}
    finally:
        scanned()
    cin, cout = shift_margin(snap, q_vec, documents)
    margin = cin - cout
    score = margin + rule.cue_weight * cue
    if rule.lexical_weight and search is not None:
        lin, lout = lexical_margin(snap, hits, documents)
        asked.scores.update(lexical_inside=round(lin, 4), lexical_outside=round(lout, 4))
        score += rule.lexical_weight * (lin - lout)
    asked.scores.update(inside=round(cin, 4), outside=round(cout, 4), margin=round(margin, 4), score=round(score, 4))
    followup = score >= rule.threshold
    said = {2: "its words point back and it says little of its own", 1: "its words point back",
            -1: "its words announce a new topic", 0: "no pronoun or continuing word"}
    why = (f"{said[cue]}; alone it matches the last answer's documents {cin:.2f} vs elsewhere {cout:.2f}: "
           f"score {score:+.2f} {'>=' if followup else '<'} {rule.threshold:+.2f}")
    own = len(content_words(question))
    if rule.own_words and cue < 0:
        followup = False  # "OK, new question: ...": the person said so
    elif rule.own_words and cue == 0 and own >= rule.own_words:
        followup = False
        why = f"it says what it asks in {own} words of its own, none pointing back ({why})"
    elif rule.confidence and cue == 0:
        conf, asked.alone_best = flat_best(snap, q_vec, hits, asked.decision or DecisionModel())
        asked.sure = conf
        asked.scores["confidence"] = round(conf, 4)
        followup = conf < rule.confidence
        why = (f"no word points back; read alone, its best passage is {conf:.2f} sure "
               f"({'<' if followup else '>='} {rule.confidence:.2f})")
    asked.followup, asked.why = followup, why


def _coverage(asked: Asked, rule: ReadingRule, query: str, mixed: np.ndarray | None) -> None:
    """The coverage test (``coverage_gap``): a follow-up that names no referent is read alone when its own words
    are better covered by the best passage for it alone than by the follow-up reading's."""
    snap, q_vec, question = asked.snap, asked.q_vec, asked.question
    if (not asked.followup or rule.coverage_gap is None or snap is None or q_vec is None
            or names_referent(question)):
        return
    stems = own_words(question)
    if len(stems) < rule.coverage_words:
        return
    model_ = asked.decision or DecisionModel()
    f_vec = mixed if mixed is not None else query_vectors(asked.embedder, [query])[0]
    f_hits = asked.search(query) if asked.search is not None else {}
    if asked.sure is None:
        asked.sure, asked.alone_best = flat_best(snap, q_vec, asked.hits, model_)
    cov_a = share_held(stems, passage_words(snap, asked.alone_best))
    cov_f = share_held(stems, passage_words(snap, flat_best(snap, f_vec, f_hits, model_)[1]))
    asked.scores.update(coverage_alone=round(cov_a, 3), coverage_followup=round(cov_f, 3))
    if cov_a - cov_f >= rule.coverage_gap - 1e-9 and rule.coverage_counts(asked):
        asked.followup = False
        asked.why = (f"its own words are {cov_a:.0%} in the best passage read alone, {cov_f:.0%} in the best "
                     f"read with the conversation ({asked.why})")


def _middle(asked: Asked, rule: ReadingRule) -> tuple[Reading, np.ndarray | None] | None:
    """The middle reading (``middle_words``, ``middle_gap``) of a follow-up, or None when it does not apply."""
    snap, question = asked.snap, asked.question
    if (not rule.middle_words or snap is None or names_referent(question)
            or len(own_words(question)) < rule.middle_words or not rule.reads_middle(question)):
        return None
    mine = asked.q_vec if asked.q_vec is not None else query_vectors(asked.embedder, [question])[0]
    hits, search = asked.hits, asked.search
    own_hits = hits if hits or rule.middle_gap is None or search is None else search(question)
    if rule.middle_gap is None or _moves_section(snap, mine, own_hits, asked.last, rule.middle_gap, asked.decision,
                                                 asked.scores):
        return rule.middle(asked, snap, mine)
    return None


def section_confidence(snap: Snapshot, q_vec: np.ndarray, hits: dict[int, float], turn: Turn,
                       decision: DecisionModel) -> tuple[float, float]:
    """The passage model's best P(relevant) for a question (its vector and BM25 hits, every passage of the snapshot
    scored as one level) inside the sections ``turn`` answered from and in the rest of its documents."""
    if not len(snap.passage_ids) or snap.dim != q_vec.shape[0]:
        return 0.0, 0.0
    ev = QueryEvidence.build(snap, q_vec, hits)
    p = decision.model("passage").proba(level_features(snap, ev, snap.nodes.many(snap.passage_ids.tolist())))
    in_sec = np.zeros(len(p), bool)
    in_doc = np.zeros(len(p), bool)
    for nid in history_nodes(turn):
        sec = snap.section_of(nid) if nid in snap.nodes else None
        if sec is not None:
            in_sec[slice(*sec.span)] = True
    for d in history_documents(snap, turn):
        in_doc[slice(*snap.nodes[d].span)] = True
    rest = in_doc & ~in_sec
    return (float(p[in_sec].max()) if in_sec.any() else 0.0), (float(p[rest].max()) if rest.any() else 0.0)


def _moves_section(snap: Snapshot, q_vec: np.ndarray, hits: dict[int, float], last: Turn, gap: float,
                   decision: DecisionModel | None, scores: dict[str, float]) -> bool:
    """Whether the question alone (its vector and BM25 hits) leads to another section of the last answer's
    documents than the one it answered from, by at least ``gap`` in the passage model's P(relevant)
    (``middle_gap``)."""
    sec, rest = section_confidence(snap, q_vec, hits, last, decision or DecisionModel())
    scores.update(section_confidence=round(sec, 4), rest_confidence=round(rest, 4))
    return rest - sec >= gap - 1e-9


def followup_vector(question: str, q_vec: np.ndarray | None, last: Turn, embedder: Embedder, model: str,
                    rule: ReadingRule) -> np.ndarray | None:
    """The vector a follow-up's walk reads when it is not its text's own: the question's vector + ``rule.mix`` x
    the last query's, normalised (None when ``rule.mix`` is 0). The last query's vector only for a follow-up (a
    shift does not pay for it): the one the last turn kept (a first, alone or shifted question's, stored with the
    turn, so a restart does not embed it again), else from the embedder's kept vectors or embedded here. ``model``:
    the embedder's model id (a kept vector of another model is not mixed in)."""
    if rule.mix <= 0:
        return None
    before_text = last.reading.query or last.question
    mine = q_vec if q_vec is not None else query_vectors(embedder, [question])[0]
    before = kept_vector(last.reading, model, mine.shape[0])
    if before is None:
        before = query_vectors(embedder, [before_text])[0]
    return mix_vectors(mine, before, rule.mix)


def mix_vectors(mine: np.ndarray, before: np.ndarray, mix: float) -> np.ndarray:
    """The question's vector + ``mix`` x the last query's, L2-normalised: what a follow-up's walk reads."""
    v = mine + mix * before
    return (v / (float(np.linalg.norm(v)) or 1.0)).astype(np.float32)


def kept_vector(reading: Reading, model: str, dim: int) -> np.ndarray | None:
    """The vector a turn kept for its own query, when the same embedder made it."""
    v = reading.vector
    if v is None or not model or reading.vector_model != model or v.shape != (dim,):
        return None
    return np.asarray(v, np.float32)


def query_vectors(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """The questions' vectors in one embedder call where the embedder can (``embed_queries_kept``: the kept
    vectors reused; an encoder that keeps none embeds each with :meth:`Embedder.embed_query`)."""
    return [np.asarray(r, np.float32) for r in embedder.embed_queries_kept(list(texts))]

