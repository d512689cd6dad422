"""The one object the CLI and the GUI drive: a library of documents, its models, and the ways to query it.

``Shelf`` owns a :class:`Store`, loads the decision model and the embedder lazily (on first need), and keeps the
embedding index and the topic hierarchy up to date after every ingest. Use one ``Shelf`` per thread (the GUI creates
it inside its worker thread). No Qt here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from shelfwise.core.answers.types import Answer
from shelfwise.core.conversation.model import Conversation, Reading, Turn
from shelfwise.core.indexing.encoder import canonical, encoder_for, record_encoder
from shelfwise.core.ingestion.runner import IngestReport
from shelfwise.core.models.backend import CancelCheck, DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.models.loaded import Models
from shelfwise.core.navigation.request import request_for
from shelfwise.core.navigation.scope import Scope
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import default_db
from shelfwise.core.settings import LoadedSettings, Settings
from shelfwise.core.settings import load_settings as load_settings_file
from shelfwise.core.settings import save_settings as save_settings_file
from shelfwise.core.store.db import Store
from shelfwise.core.store.export import LibraryExport, export_rows

ProgressCallback = Callable[[Any], None]


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
        progress: ProgressCallback | None = None,
        cancel: CancelCheck | None = None,
        force: bool = False,
        embed: bool = True,
        index: bool = True,
    ) -> IngestReport:
        """Ingest files/folders incrementally (``force`` re-parses unchanged files too), embedding the files parsed
        so far while the next ones parse (``embed``), then finish the embeddings, the topic hierarchy and the
        calibration of the collection (``index``; :meth:`refresh`). The one ingest sequence: the window runs it
        whole, the CLI with ``index=False`` (it prints the summary first, then indexes or starts a background
        indexer). ``progress`` gets the runner's ``IngestProgress`` per file, then :class:`IndexProgress` updates
        while indexing; ``cancel`` also stops the indexing between batches (the next refresh goes on from there)."""
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
            self.refresh(collection, progress=progress, cancel=cancel)
        return report

    def refresh(self, collection: str = "default", progress: ProgressCallback | None = None,
                cancel: CancelCheck | None = None) -> dict[str, int]:
        """Bring the collection's index up to date: embeddings, topic clusters, and self-calibration of the
        decision model (embedder and lexical evidence; ``shelfwise calibrate --lm`` also tries the generative
        model). Cheap when nothing changed; finishes indexing a kill interrupted (see
        :mod:`shelfwise.core.ingestion.lock`); ``progress`` gets :class:`IndexProgress` updates. A read-only
        library is searched as it is."""
        from shelfwise.core.indexing.finish import finish_index

        if self.store.read_only:
            return {"embedded": 0, "clusters": 0}
        cid = self.store.collection(collection).id
        self._record()
        return finish_index(self.store, cid, self.embedder, self.settings, progress, cancel)

    def _record(self) -> None:
        """The library is built with the settings' encoder from now on (one handed in, a test double, is not)."""
        if self._own_encoder and self.settings.embedder_path is not None:
            record_encoder(self.store, self.settings.embedder_path)

    # -- questions ----------------------------------------------------------------------------------------------
    def search(self, question: str, collection: str | None = None, *, keep: Sequence[int] = (),
               cancel: CancelCheck | None = None, scope: Scope | None = None) -> SearchResult:
        """Walk the tree level by level for ``question`` as typed: read once (its inline filters with ``scope``,
        the CLI's options; ScopeError for a malformed one), clipped once (``core/navigation/request.py``);
        ``keep`` forces branches (node ids) open ("look here too"). A scope that admits no document returns no
        passage and says so in the trace's notes."""
        request = request_for(self.store, self.backend, question, collection, scope=scope, keep=keep)
        return self.walk.search(request, cancel)

    def ask(
        self,
        question: str,
        collection: str | None = None,
        *,
        on_token: Callable[[str], None] | None = None,
        on_search: Callable[[SearchResult], None] | None = None,
        adaptive: bool | None = None,
        keep: Sequence[int] = (),
        cancel: CancelCheck | None = None,
        on_extract: Callable[[Answer], None] | None = None,
        scope: Scope | None = None,
        on_generated: Callable[[Answer], None] | None = None,
    ) -> Answer:
        """Find passages (``on_search``), give the sentence(s) that answer (``on_extract``), then stream the
        model's answer (``on_token``) and say whether it is kept (``on_generated``): ``core/answers/ask.py``."""
        from shelfwise.core.answers.ask import answer_question

        return answer_question(
            self.walk, question, collection=collection, on_token=on_token, on_search=on_search,
            adaptive=self.settings.adaptive if adaptive is None else adaptive, keep=keep, cancel=cancel,
            on_extract=on_extract, scope=scope, on_generated=on_generated,
        )

    def ask_in_conversation(
        self,
        conversation_id: int,
        question: str,
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
        window's "ask it alone instead"). See ``core/conversation/turn.py``."""
        from shelfwise.core.conversation.storage import ConversationStore
        from shelfwise.core.conversation.turn import ask_turn

        convs = ConversationStore(self.store)
        conv = convs.get(conversation_id) if conversation_id else convs.create(collection or "default")
        if replaces_turn is not None:
            convs.delete_turn(conv, replaces_turn)
        turn, answer = ask_turn(self.walk, conv, question, alone=alone, store=convs, cancel=cancel, keep=keep,
                                on_reading=on_reading, on_token=on_token, on_search=on_search,
                                on_extract=on_extract, on_generated=on_generated)
        return conv, turn, answer

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
