"""``shelfwise eval xquad``: the loader (every language present, cross-lingual questions over the same paragraphs)
and the CLI's checks of --lang / --query-lang. Needs ../shared/evaldata/xquad (skipped without it)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.evaluation.run import load_dataset, shared_dir
from shelfwise.evaluation.xquad import languages, load_xquad

ROOT = shared_dir() / "evaldata" / "xquad"
pytestmark = pytest.mark.skipif(not (ROOT / "original").is_dir(), reason="no ../shared/evaldata/xquad")


def test_every_language_present_loads_240_paragraphs_and_1190_questions() -> None:
    langs = languages(ROOT)
    assert {"en", "de", "zh", "ar", "hi"} <= set(langs)
    for lang in langs:
        ds = load_xquad(ROOT, lang)
        assert (len(ds.documents), len(ds.questions)) == (240, 1190), lang
        assert ds.name == ds.store_name == f"xquad-{lang}"


def test_cross_lingual_questions_keep_their_paragraphs() -> None:
    de = load_xquad(ROOT, "de")
    en_de = load_xquad(ROOT, "de", query_lang="en")
    en = load_xquad(ROOT, "en")
    assert en_de.name == "xquad-en-de" and en_de.store_name == "xquad-de"  # the German collection is reused
    assert [d.parsed.children[0].text for d in en_de.documents] == [d.parsed.children[0].text for d in de.documents]
    by_id = {q.qid: q for q in en.questions}
    for q in en_de.questions[:50]:
        assert q.query == by_id[q.qid].query  # the English question...
        assert q.gold[0].path == next(x.gold[0].path for x in de.questions if x.qid == q.qid)  # ...its German paragraph


def test_limit_spreads_over_the_articles() -> None:
    ds = load_dataset("xquad", limit=300, lang="zh")
    assert len(ds.questions) == 300
    assert len({q.gold[0].path.split("/")[2] for q in ds.questions}) == 48  # every article asked


def test_cli_rejects_languages_that_are_not_there() -> None:
    r = CliRunner().invoke(main, ["eval", "xquad", "--lang", "xx"])
    assert r.exit_code == 2 and "not one of the XQuAD languages present" in r.output
    r = CliRunner().invoke(main, ["eval", "squad", "--lang", "de"])
    assert r.exit_code == 2 and "only xquad has languages" in r.output
