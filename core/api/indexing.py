"""Ingest, the index and the sentence encoder: ``ingest`` (parsing with embedding alongside), ``index`` (the
library's one indexer), ``before_question`` (what a question does with an unfinished index), removal,
calibration, and what switching the library's encoder costs."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.answers.adaptive import MAX_SUB
from shelfwise.core.answers.adaptive_search import (
    MAX_EXPANSIONS,
    CalibrationReport,
    QAItem,
    QuestionOutcome,
    load_qa,
)
from shelfwise.core.answers.types import AnswerEvents
from shelfwise.core.api.opened import OpenLibrary
from shelfwise.core.indexing.encoder import (
    LABELS,
    NOTES,
    SwitchEstimate,
    canonical,
    describe,
    label,
    record_encoder,
)
from shelfwise.core.indexing.finish import IndexProgress
from shelfwise.core.indexing.state import CollectionIndex, IndexState
from shelfwise.core.ingestion.runner import IngestProgress, IngestReport, document_key, under
from shelfwise.core.ingestion.worker import Cancelled as IngestCancelled
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.store.types import DocumentRow

# This part's calls, their progress reports and results, and the encoders' names as the front ends show them.
__all__ = [
    "INDEX_WAIT_SECONDS",
    "LABELS",
    "NOTES",
    "BeforeQuestion",
    "CollectionIndex",
    "IndexProgress",
    "IndexState",
    "Indexing",
    "IngestCancelled",
    "IngestProgress",
    "IngestReport",
    "QuestionEvents",
    "SwitchEstimate",
    "canonical",
    "describe",
    "label",
    "load_qa",
]

IndexCallback = Callable[[IndexProgress], None]
#: How long an ingest's index step waits for another indexer of the library (its index covers the files just
#: stored too; what is left is finished after it).
INDEX_WAIT_SECONDS = 3600.0


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
class QuestionEvents(AnswerEvents):
    """The events of a question asked as typed (:meth:`~shelfwise.core.shelf.Shelf.ask_typed`): what it does with
    the index first (``on_before``: the decision, before any work, unless the index is current; ``on_index``: the
    progress of finishing it), then the answer's own (:class:`AnswerEvents`)."""

    on_before: Callable[[BeforeQuestion], None] | None = None
    on_index: IndexCallback | None = None


def disk_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL (or the I/O error a full disk gives while the WAL index grows)."""
    code = exc.sqlite_errorcode if isinstance(exc, sqlite3.Error) else None
    return (code is not None and code & 0xFF == sqlite3.SQLITE_FULL) or "disk is full" in str(exc)


class Indexing(OpenLibrary):
    """The ingest, index and encoder calls of :class:`~shelfwise.core.shelf.Shelf`."""

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

    def remove_documents(self, document_ids: Sequence[int], collection: str = "default", *, index: bool = True,
                         cancel: CancelCheck | None = None) -> None:
        """Remove documents from the library, then bring the collection's index up to date as the library's only
        indexer (:meth:`index`, waiting up to :data:`INDEX_WAIT_SECONDS` for another one, as :meth:`ingest` does),
        so a removal never races an ingest's or a background indexer's index. ``cancel`` ends the wait or the
        indexing (the documents are removed already; the next refresh finishes the index). ``index=False``: the
        index is left marked unfinished for the next ingest, index run or question to finish."""
        for doc_id in document_ids:
            self.store.remove_document(doc_id)
        if index:
            self.index(collection, cancel=cancel, wait=INDEX_WAIT_SECONDS)

    def remove_paths(self, paths: Sequence[Path], collection: str = "default", *, index: bool = True,
                     cancel: CancelCheck | None = None) -> list[DocumentRow]:
        """Remove the stored documents at or under each path (a file or a folder, on disk or not) from
        ``collection`` as :meth:`remove_documents` does; returns them (none: nothing was stored there). KeyError
        when there is no such collection."""
        coll = self.store.find_collection(collection)
        if coll is None:
            raise KeyError(collection)
        keys = [document_key(p) for p in paths]
        found = [d for d in self.store.documents(coll.id) if any(under(d.path, k) for k in keys)]
        if found:
            self.remove_documents([d.id for d in found], collection, index=index, cancel=cancel)
        return found

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
