"""Text in other languages through ingestion's sentence splitter, the extractive answer and the grounding check
(core/languages.py, core/answers/cues.py): sentences end at the marks of each script, questions are recognised by
their cues and words in any script, and the grounding check finds numbers, dates and names outside Latin text."""

from __future__ import annotations

import numpy as np
import pytest

from shelfwise.core.answers.extractive import (
    candidates,
    extract_answer,
    focus_question,
    passage_sentences,
    type_cue,
    word_overlap,
)
from shelfwise.core.answers.facts import dates_in, names_in, numbers_in
from shelfwise.core.answers.facts import split_sentences as grounding_sentences
from shelfwise.core.answers.grounding import check_grounding
from shelfwise.core.languages import SENTENCE_END_CHARS, split_sentences, word_count, word_units
from shelfwise.core.navigation.trace import Hit
from shelfwise.ingest.model import Location
from shelfwise.ingest.passages import split_passages
from shelfwise.ingest.passages import split_sentences as ingest_sentences

ZH = ("北京大学创建于1898年，初名京师大学堂。学校位于北京市海淀区，占地面积约274公顷。"
      "目前共有在校学生四万余人！")
JA = "東京タワーは1958年に完成した。高さは333メートルである。多くの観光客が訪れる。"
HI = "ताजमहल आगरा में स्थित है। इसे शाहजहाँ ने बनवाया था। यह सफेद संगमरमर से बना है।"
AR = "هل تعرف القاهرة؟ القاهرة هي عاصمة مصر. يعيش فيها ملايين الناس."
RU = "Московский университет был основан в 1755 году. Сейчас в нём учатся около 50 000 студентов."
DE = "Die Universität wurde 1386 gegründet. Heute studieren dort etwa 30.000 Studenten."


def hit(text: str, n: int = 1) -> Hit:
    return Hit(node_id=n, document_id=1, text=text, score=1.0, path="/doc.txt", title="doc", heading_path=[],
               location=Location())


def zero_scorer(question: str, texts: list[str]) -> np.ndarray:
    """No model: the cues and the word overlap alone decide (a logic test of those)."""
    return np.zeros(len(texts), dtype=np.float32)


@pytest.mark.parametrize(("text", "n"), [(ZH, 3), (JA, 3), (HI, 3), (AR, 3), (RU, 2), (DE, 2)])
def test_sentences_end_at_each_scripts_marks(text: str, n: int) -> None:
    assert len(ingest_sentences(text)) == n
    assert len(split_sentences(text)) == n
    assert len(passage_sentences(text)) == n
    assert len(grounding_sentences(text)) == n


def test_ingest_keeps_english_abbreviations_and_agrees_with_core_on_the_ends() -> None:
    assert ingest_sentences("See e.g. the handbook. Then ask.") == ["See e.g. the handbook.", "Then ask."]
    for end in SENTENCE_END_CHARS:
        assert len(ingest_sentences(f"Erste Zeile{end} Zweite Zeile")) == 2, repr(end)


def test_cjk_passages_split_between_sentences() -> None:
    text = ZH * 12  # one long paragraph without a single space
    parts = split_passages(text, max_tokens=60)
    assert len(parts) > 1 and "".join(parts) == text
    assert all(p.endswith(("。", "！")) for p in parts[:-1])  # cut after a sentence, not inside one


def test_words_of_unsegmented_scripts_count_and_overlap() -> None:
    assert word_count("目前共有在校学生") == 8 and word_count("Hello world") == 2
    assert "海淀" in word_units("学校位于北京市海淀区")
    q = "北京大学位于哪个区？"
    overlap = word_overlap(q, ["学校位于北京市海淀区。", "目前共有在校学生四万余人！"], prefix=5)
    assert overlap[0] > overlap[1]


def test_chinese_sentences_are_candidates_and_a_when_question_finds_the_year() -> None:
    h = hit(ZH)
    texts = [c.text for c in candidates([h])]
    assert len(texts) == 3  # not dropped for having "one word"
    answer = extract_answer("北京大学是什么时候创建的？", [h], zero_scorer)
    assert answer and "1898" in answer[0].text
    answer = extract_answer("北京大学占地面积有多少公顷？", [h], zero_scorer)
    assert answer and "274" in answer[0].text


RU_CUES = "Университет был основан в 1955 году. Он стоит на берегу реки. Там учатся около 50 000 студентов."
DE_CUES = "Die Universität wurde 1886 gegründet. Sie liegt am Fluss. Heute studieren dort etwa 30.000 Studenten."


@pytest.mark.parametrize(("question", "text", "want"), [
    ("Когда был основан университет?", RU_CUES, "1955"),
    ("Сколько студентов там учатся?", RU_CUES[RU_CUES.index("Он"):], "50 000"),
    ("Wann wurde die Universität gegründet?", DE_CUES, "1886"),
    ("Wie viele Studenten studieren dort?", DE_CUES[DE_CUES.index("Sie"):], "30.000"),
    ("東京タワーはいつ完成しましたか？", JA, "1958"),
    ("北京大学占地面积有多少公顷？", "学校位于北京市海淀区。占地面积约274公顷。", "274"),
])
def test_question_cues_in_other_languages(question: str, text: str, want: str) -> None:
    sentences = [text[s:e] for s, e in passage_sentences(text)]
    cue = type_cue(question, sentences)
    assert want in sentences[int(np.argmax(cue))] and cue.max() > cue.min()


def test_the_question_of_a_scene_is_found_in_other_scripts() -> None:
    assert focus_question("我今年67岁，住在北京。我可以申请养老金吗？") == "我可以申请养老金吗？"
    assert focus_question("أعيش في القاهرة. هل يمكنني التقديم؟") == "هل يمكنني التقديم؟"


def test_numbers_and_dates_beside_cjk_characters_are_found() -> None:
    assert {1898.0, 274.0} <= numbers_in(ZH)
    assert [d for _, d in dates_in("该法于2019年3月31日生效。")] == [{(31, 3, 2019)}]
    assert numbers_in("٢٠١٩") == {2019.0}  # Arabic-Indic digits


def test_grounding_accepts_supported_chinese_and_rejects_a_changed_number() -> None:
    sources = [ZH]
    assert check_grounding("北京大学创建于1898年[1]。", sources).ok
    bad = check_grounding("北京大学创建于1900年[1]。", sources)
    assert not bad.ok and any(f.text == "1900" for f in bad.unsupported)
    unsupported = check_grounding("苹果手机非常昂贵。", sources)  # no word of it in the sources
    assert not unsupported.ok


def test_grounding_checks_cjk_dates() -> None:
    src = ["新规定自3月31日起实施。"]
    assert check_grounding("新规定自2025年3月31日起实施。", src).ok
    assert not check_grounding("新规定自4月1日起实施。", src).ok


def test_grounding_checks_cyrillic_names_allowing_their_case_forms() -> None:
    src = ["Московский университет находится в Москве. Его основал Ломоносов."]
    assert "Ломоносов" in names_in("Университет основал Ломоносов.")
    assert check_grounding("Университет основал Ломоносов.", src).ok
    assert check_grounding("Университет находится в Москве.", src).ok
    rejected = check_grounding("Университет основал Менделеев в Москве.", src)
    assert not rejected.ok and any(f.text == "Менделеев" for f in rejected.unsupported)


def test_grounding_in_english_is_unchanged_by_the_new_rules() -> None:
    src = ["Employees receive 27 days of annual leave. Claims go to Northwind Labs."]
    assert check_grounding("You get 27 days of leave from Northwind Labs [1].", src).ok
    assert not check_grounding("You get 30 days of leave [1].", src).ok
    assert not check_grounding("Ask Contoso about leave [1].", src).ok


def test_topic_terms_of_cjk_documents_are_words_not_clauses() -> None:
    from shelfwise.core.indexing.topics import distinctive_terms

    terms = distinctive_terms(["软件包管理系统可以安装软件。软件包很多。", "网络配置和防火墙设置。网络很快。",
                               "The package manager installs software packages."], [[0], [1], [2]], n=2)
    assert terms[0][0] in ("软件", "件包") and terms[1][0] == "网络"
    assert all(len(t) <= 2 for t in terms[0] + terms[1])
    assert terms[2] and all(t.isascii() and len(t) >= 3 for t in terms[2])


def test_sources_for_the_model_clip_unspaced_text_too() -> None:
    from shelfwise.core.answers.answer import clip_words

    clipped = clip_words(ZH * 5, 30)
    assert clipped.endswith(" ...") and len(clipped) <= 34
    assert clip_words("one two three four", 2) == "one two ..."
    assert clip_words("短い文です。", 70) == "短い文です。"
