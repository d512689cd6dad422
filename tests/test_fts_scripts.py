"""The full-text index in every script (core/store/fts.py, core/languages.py): words inside Chinese, Japanese and
Thai sentences are found, Devanagari words are not cut at their vowel signs, English is searched as before, and a
library made before migration 0005 is re-indexed when it is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shelfwise.core.languages import FTS_SEPARATOR, fts_index_text, query_terms
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.migrations import MIGRATIONS, applied, migrate
from shelfwise.core.store.textutil import fts_query
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode

META = FileMeta(size=1, mtime=1.0, sha256="b" * 64)
TEXTS = {
    "zh": "北京大学位于北京市海淀区，是中国最早的国立综合性大学之一。",
    "ja": "パッケージ管理システムは、ソフトウェアのインストールと削除を自動化します。",
    "ja2": "東京タワーは一九五八年に完成した電波塔です。",
    "th": "ภาษาไทยเป็นภาษาราชการของประเทศไทย",
    "hi": "हिन्दी भारत की राजभाषा है और करोड़ों लोग इसे बोलते हैं।",
    "ar": "القاهرةُ هي عاصمةُ مصر وأكبر مدنها.",
    "en": "Employees may submit expense claims within thirty days.",
    "ko": "서울특별시는 대한민국의 수도이다.",
}


def library(store: Store) -> dict[str, int]:
    c = store.collection("default")
    doc = ParsedDocument(title="多言語 multilingual", format="txt", pages=1, children=[
        ParsedNode("passage", "", text, Location(line=i)) for i, text in enumerate(TEXTS.values())])
    store.write_document(c.id, "/multi.txt", META, doc)
    return {key: next(p.id for p in store.passages() if p.text == text) for key, text in TEXTS.items()}


@pytest.fixture
def store() -> Store:
    s = Store(":memory:")
    yield s
    s.close()


@pytest.mark.parametrize(("query", "key"), [
    ("大学", "zh"),  # a two-character word inside a sentence
    ("海淀区在哪里", "zh"),  # a question: its bigrams, not one 6-character token
    ("学", "zh"),  # a one-character query
    ("インストール", "ja"),  # katakana inside a sentence
    ("電波塔", "ja2"),
    ("東京", "ja2"),
    ("ราชการ", "th"),
    ("राजभाषा", "hi"),
    ("हिन्दी", "hi"),  # vowel signs are part of the word
    ("القاهرة", "ar"),  # written without the vowel marks the text has
    ("claim", "en"),  # English keeps its stemmer
    ("대한민국", "ko"),
])
def test_a_word_inside_a_sentence_is_found(store: Store, query: str, key: str) -> None:
    ids = library(store)
    hits = store.search(query, limit=3)
    assert hits and hits[0][0].id == ids[key], (query, [n.text[:20] for n, _ in hits])


def test_full_width_letters_match_ascii(store: Store) -> None:
    c = store.collection("default")
    store.write_document(c.id, "/fw.txt", META, ParsedDocument(title="fw", format="txt", children=[
        ParsedNode("passage", "", "ＰＤＦファイルを開きます。", Location(line=1))]))
    assert store.search("pdf") and store.search("ＰＤＦ")


def test_snippets_have_no_separators_and_mark_the_word(store: Store) -> None:
    library(store)
    hit = store.search_hits("大学", limit=1)[0]
    assert FTS_SEPARATOR not in hit.snippet
    assert "[大][学]" in hit.snippet or "[大学]" in hit.snippet


def test_english_queries_are_the_words_they_were() -> None:
    assert fts_query('what "is" the (annual) leave* NEAR/3 policy?') == (
        '"what" OR "is" OR "the" OR "annual" OR "leave" OR "NEAR" OR "3" OR "policy"')
    assert fts_query("???") is None
    assert fts_index_text("plain ascii text") == "plain ascii text"


def test_cjk_query_terms_are_bigrams_and_lone_characters() -> None:
    assert query_terms("北京大学") == ["北 京", "京 大", "大 学"]
    assert query_terms("猫 Python的") == ["猫", "Python", "的"]


def test_delete_and_update_keep_the_index_in_step(store: Store) -> None:
    ids = library(store)
    store.conn.execute("UPDATE nodes SET text = ? WHERE id = ?", ("上海交通大学在上海。", ids["zh"]))
    assert store.search("上海")[0][0].id == ids["zh"]
    assert all(n.id != ids["zh"] for n, _ in store.search("海淀"))
    assert store.integrity_check() == "ok"
    store.remove_document(store.documents(store.collection("default").id)[0].id)
    assert store.conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH '\"上 海\"'").fetchone()[0] == 0
    assert store.integrity_check() == "ok"


def test_a_connection_without_the_function_cannot_write_nodes(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    s = Store(db)
    library(s)
    s.close()
    raw = sqlite3.connect(str(db))
    with pytest.raises(sqlite3.OperationalError, match="no such function"):
        raw.execute("DELETE FROM nodes WHERE kind = 'passage'")
    raw.close()
    again = Store(db)
    assert again.search("大学") and again.integrity_check() == "ok"
    again.close()


def test_migration_from_the_previous_version_reindexes_cjk(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    names = [n for n, _ in MIGRATIONS]
    conn = sqlite3.connect(str(db), isolation_level=None)
    migrate(conn, db, MIGRATIONS[: names.index("0005_fts_scripts")])  # the library as the previous version left it
    conn.execute("INSERT INTO collections(id, name, created_at, root_node_id) VALUES (1, 'old', 'x', 1)")
    conn.execute("INSERT INTO nodes(id, collection_id, kind, title) VALUES (1, 1, 'collection', 'old')")
    conn.execute("INSERT INTO documents(id, collection_id, path, status, ingested_at) VALUES (1, 1, '/a', 'ok', 'x')")
    for i, text in enumerate(TEXTS.values(), start=2):
        conn.execute("INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, text) "
                     "VALUES (?, 1, 1, 1, 'passage', ?)", (i, text))
    # the old index: a word inside a Chinese sentence is not found, a Hindi word is cut at its vowel signs
    assert conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH '\"大学\"'").fetchone()[0] == 0
    conn.close()

    s = Store(db)
    assert s.migrations_applied[0] == "0005_fts_scripts" and s.backup_path is not None  # and any later ones
    zh = next(p.id for p in s.passages() if p.text == TEXTS["zh"])
    assert s.search("大学")[0][0].id == zh
    assert s.search("राजभाषा")[0][0].text == TEXTS["hi"]
    assert s.search("claims")[0][0].text == TEXTS["en"]
    assert s.integrity_check() == "ok"
    assert "0005_fts_scripts" in applied(s.conn)
    s.close()


def test_quoted_phrases_and_excluded_words_in_cjk_and_devanagari(store: Store) -> None:
    from shelfwise.core.navigation.scope import match_expression

    ids = library(store)
    only = store.search("", match=match_expression("大学", ["海淀区"], []))
    assert [n.id for n, _ in only] == [ids["zh"]]  # the quoted phrase inside a sentence must be there
    assert store.search("", match=match_expression("大学", ["区海淀"], [])) == []  # not the same characters in order
    assert [n.id for n, _ in store.search("", match=match_expression("", ["हिन्दी भारत"], []))] == [ids["hi"]]
    assert store.search("", match=match_expression("大学 राजभाषा", [], ["海淀"])) and all(
        n.id != ids["zh"] for n, _ in store.search("", match=match_expression("大学 राजभाषा", [], ["海淀"])))
