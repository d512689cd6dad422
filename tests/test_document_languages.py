"""Each document's languages, detected at indexing (``core/indexing/languages.py``), shown by ``status``; where the
encoder does not read a document's language, the walk judges its passages by their words and the trace says why
(``core/navigation/features.py``: ``words_only``, ``lean_on_words``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.indexing.languages import detect_document_languages, detect_languages
from shelfwise.core.models.encoders.embedder import MINILM
from shelfwise.core.navigation.features import QueryEvidence, words_only
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store import fts
from shelfwise.core.store.db import Store
from shelfwise.core.store.migrations import MIGRATIONS, migrate
from tests.fakes import HashEmbedder

DE = ("Vollzeitbeschäftigte erhalten 27 Tage bezahlten Jahresurlaub pro Kalenderjahr. Nicht genommene Tage "
      "können bis zum 31. März des Folgejahres übertragen werden.")
EN = "Full-time employees receive 27 days of paid annual leave per calendar year, and may carry five days over."
FR = "Les heures de travail principales sont de 10 heures à 15 heures, du lundi au vendredi, pour tout le monde."
ZH = "全职员工每个日历年享有二十七天带薪年假，未使用的天数可以结转到下一年。"
JA = "正社員は暦年ごとに二十七日の有給休暇を受け取ります。使わなかった日は翌年に繰り越せます。"
RU = "Сотрудники, работающие полный день, получают двадцать семь дней оплачиваемого отпуска в год."


def test_detect_languages_by_script_and_identifier() -> None:
    assert detect_languages([DE]) == ["de"] and detect_languages([EN]) == ["en"] and detect_languages([FR]) == ["fr"]
    assert detect_languages([ZH]) == ["zh"] and detect_languages([JA]) == ["ja"] and detect_languages([RU]) == ["ru"]
    assert detect_languages(["27", "| 3 | 4 |", ""]) == []  # nothing to tell a language by
    assert detect_languages([DE, EN]) == ["de", "en"]  # each holds at least a quarter of the letters, main first
    assert detect_languages([DE] * 9 + [EN]) == ["de"]


class EnglishOnly(HashEmbedder):
    """A test double that says, as MiniLM does, that it reads English only."""

    profile = MINILM


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "urlaub.md").write_text(f"# Urlaub\n\n{DE}\n\n## Antrag\n\nUrlaub wird im Portal LeaveDesk beantragt, "
                                    "mindestens zehn Arbeitstage im Voraus, vom Vorgesetzten genehmigt.\n")
    (docs / "hours.md").write_text(f"# Working hours\n\n{EN}\n\n## Core hours\n\nCore hours are 10:00 to 15:00, "
                                   "Monday to Friday, when everyone is available for meetings.\n")
    return docs


def test_indexing_detects_languages_and_the_walk_leans_on_words_where_the_encoder_cannot_read(
        tmp_path: Path) -> None:
    with Shelf(Settings(db_path=tmp_path / "lib.db", use_calibration=False), embedder=EnglishOnly()) as shelf:
        shelf.ingest([_docs(tmp_path)], "default")
        langs = {Path(d.path).name: d.languages for d in shelf.store.documents()}
        assert langs == {"urlaub.md": ["de"], "hours.md": ["en"]}
        result = shelf.search("Wie viele Tage Jahresurlaub bekommen Vollzeitbeschäftigte?", "default")
        assert Path(result.hits[0].path).name == "urlaub.md"
        assert any("1 document(s) in de" in n and "BM25" in n for n in result.trace.notes), result.trace.notes
        # the German passages' cosine is their BM25 evidence on the cosine's scale; the English ones keep theirs
        coll = shelf.store.collection("default")
        snap = snapshot_for(shelf.store, coll.id, shelf.embedder.model_id)

        lean = words_only(snap, ("en",))
        assert lean is not None and lean.languages == ("de",) and lean.documents == 1
        q = shelf.embedder.embed_query("Jahresurlaub")
        plain = QueryEvidence.build(snap, q, {})
        leaned = QueryEvidence.build(snap, q, {}, None, lean)
        assert np.array_equal(plain.cos[~lean.passages], leaned.cos[~lean.passages])
        assert np.allclose(leaned.cos[lean.passages], np.median(plain.cos[~lean.passages]))  # no lexical hit
        assert words_only(snap, None) is None and words_only(snap, ("en", "de")) is None
    with Shelf(Settings(db_path=tmp_path / "lib.db", use_calibration=False), embedder=HashEmbedder()) as shelf:
        result = shelf.search("Wie viele Tage Jahresurlaub bekommen Vollzeitbeschäftigte?", "default")
        assert not any("BM25" in n for n in result.trace.notes)  # an encoder that reads every language: no note


def test_a_library_from_before_languages_gets_them_at_its_next_index(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    names = [n for n, _ in MIGRATIONS]
    conn = sqlite3.connect(str(db), isolation_level=None)
    fts.register(conn)  # an earlier migration builds the full-text index through this function
    migrate(conn, db, MIGRATIONS[: names.index("0009_document_languages")])  # as the previous version left it
    conn.execute("INSERT INTO collections(id, name, created_at, root_node_id) VALUES (1, 'old', 'x', 1)")
    conn.execute("INSERT INTO nodes(id, collection_id, kind, title) VALUES (1, 1, 'collection', 'old')")
    conn.execute("INSERT INTO documents(id, collection_id, path, status, ingested_at) "
                 "VALUES (1, 1, '/a.md', 'ok', 'x')")
    conn.close()
    with Store(db) as store:
        assert store.migrations_applied == names[names.index("0009_document_languages"):]
        assert store.backup_path is not None
        assert store.documents()[0].languages is None  # not detected yet
    with Shelf(Settings(db_path=db, use_calibration=False), embedder=HashEmbedder()) as shelf:
        shelf.ingest([_docs(tmp_path)], "default", index=False, embed=False)
        assert all(d.languages is None for d in shelf.store.documents())  # not detected yet
        cid = shelf.store.collection("default").id
        assert detect_document_languages(shelf.store, cid) == 2
        assert detect_document_languages(shelf.store, cid) == 0  # once
        assert sorted(d.languages[0] for d in shelf.store.documents() if d.languages) == ["de", "en"]


@pytest.mark.model
def test_status_shows_languages_and_a_minilm_library_answers_german_from_its_words(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from shelfwise.app.cli.main import main

    db = tmp_path / "lib.db"
    runner = CliRunner()
    r = runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "ingest", str(_docs(tmp_path))])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["--db", str(db), "status"])
    assert r.output.splitlines()[0].split()[-2:] == ["LANG", "PATH"]
    assert any(line.split()[-2:-1] == ["de"] and line.endswith("urlaub.md") for line in r.output.splitlines())
    r = runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "ask", "--no-generate", "--trace",
                             "Wie beantrage ich Urlaub im Portal?"])
    assert r.exit_code == 0, r.output
    assert "LeaveDesk" in r.output and "judged by their words (BM25)" in r.output
