"""Every question of resources/sample_questions.jsonl answered through the CLI with the real bundled models and the
defaults a new user gets (no encoder named: EmbeddingGemma; ``SHELFWISE_EMBEDDER``, which the other tests set to
MiniLM, is removed here). The questions in German and French a new user asked are answered from the right passage.

The sample library is ingested by ``shelfwise ingest`` into a temporary database (once per session, copied here:
tests/conftest.py); ``shelfwise eval
resources/sample_questions.jsonl --answers --no-generate`` then answers each question with the real walk and the
real embedder, and writes every answer beside its report. Each shown answer must hold its gold answer: the gold
contained as whole words, or, for the sample's free-text golds ("09:00 at reception" against "Come to reception
at 09:00"), every number, date and time of the gold and half its other words (``fact_match``). No shown answer may
hold a number or date its cited passages lack. The window is checked in tests/test_gui_window.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.core.answers.short_confidence import SHOW
from shelfwise.evaluation.answer_modes import fact_match
from shelfwise.resources import path as resource_path

pytestmark = pytest.mark.model

QUESTIONS = [json.loads(line) for line in resource_path("sample_questions.jsonl").read_text().splitlines() if line]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=1800)



def _ask_json(library: tuple[Path, dict[str, str]], question: str) -> dict:  # type: ignore[type-arg]
    """``shelfwise ask QUESTION --no-generate --json`` over the library, in a subprocess, parsed."""
    db, env = library
    r = _run(["--db", str(db), "ask", question, "--no-generate", "--json"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def library(gemma_sample_copy) -> tuple[Path, dict[str, str]]:
    """The sample ingested with no encoder named, as a new user does it (a copy of the session's:
    tests/conftest.py), and the environment without ``SHELFWISE_EMBEDDER`` the commands run in."""
    env = {k: v for k, v in os.environ.items() if k != "SHELFWISE_EMBEDDER"}
    env.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    return gemma_sample_copy("sample-answers").db, env


@pytest.fixture(scope="module")
def rows(library: tuple[Path, dict[str, str]]) -> list[dict]:
    db, env = library
    folder = db.parent
    r = _run(["--db", str(db), "eval", str(resource_path("sample_questions.jsonl")), "--answers", "--no-generate",
              "--methods", "navigation", "--no-sweep", "--out", str(folder / "reports")], env)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads((folder / "reports" / "answers-sample_questions-all.json").read_text())["rows"]


# Each question of the sample, with EmbeddingGemma's own answer thresholds and weights (core/answers/tuning.py;
# with MiniLM's, three were shown wrong: docs/eval/embeddinggemma.md, "The sample with the defaults").
@pytest.mark.parametrize("n", [pytest.param(n, id=q["question"][:40]) for n, q in enumerate(QUESTIONS)])
def test_each_sample_question_is_answered_with_its_gold(rows: list[dict], n: int) -> None:
    row, q = rows[n], QUESTIONS[n]
    assert row["gold"] == [q["answer"]] and row["found"]
    shown = row["texts"]["shown"]
    assert fact_match(shown, [q["answer"]]), f"{q['question']!r}: gold {q['answer']!r}, shown {shown!r}"
    assert row["violations"]["shown"] == []  # no number or date that its cited passages lack


def test_a_new_library_is_built_with_embeddinggemma(library: tuple[Path, dict[str, str]]) -> None:
    from shelfwise.core.indexing.encoder import META_KEY, name_of_model_id
    from shelfwise.core.store.db import Store

    with Store(library[0]) as store:
        by_model = store.stats().embeddings_by_model
        assert {name_of_model_id(m) for m in by_model} == {"embeddinggemma"} and sum(by_model.values()) > 100
        assert store.get_meta(META_KEY) == "embeddinggemma"


# A new user's questions on the sample (issue 35): each must be answered from this passage (file, heading).
OTHER_LANGUAGES = [
    ("Wie viele Urlaubstage bekommen Mitarbeiter?", "handbook.pdf", "3.1 Annual leave", "27 days"),
    ("Quelles sont les heures de travail principales ?", "handbook.pdf", "2.1 Core hours", "10:00 to 15:00"),
    ("What is the expenses limit for hotels?", "travel-and-expenses.docx", "Hotels", "hotel cap"),
]


@pytest.mark.parametrize(("question", "file", "heading", "fact"), OTHER_LANGUAGES, ids=["de", "fr", "en-hotels"])
def test_questions_in_other_languages_are_answered_from_the_right_passage(
        library: tuple[Path, dict[str, str]], question: str, file: str, heading: str, fact: str) -> None:
    out = _ask_json(library, question)
    assert out["found"], out["answer"]
    first = out["citations"][0]
    assert Path(first["path"]).name == file and first["heading_path"][-1] == heading, first
    assert fact in out["answer"], out["answer"]


# German and French questions over the (English) sample get the value asked for, shown first (issue 48), where the
# confidence reaches its threshold (core/answers/short_confidence.py; since session 23 it reads the walk's evidence
# and gates a yes or no too: docs/eval/answers.md, "Session 23"). Withheld, the sentence holding it comes first:
# the VPN's "No" is read right but not shown (the training data's yes and no are right about half the time), and
# the headquarters' address for a French question is withheld (a question in another language shares no word with
# the sentence and the encoder reads it at a cross-language cosine).
SHORT_IN_OTHER_LANGUAGES = [
    ("Wie viele Urlaubstage bekommen Mitarbeiter?", "27 days", "27 days"),
    ("Wann wird der Feueralarm getestet?", "every Monday at 11:00", "every Monday at 11:00"),
    ("Quelles sont les heures de travail principales ?", "10:00 to 15:00, Monday to Friday", "10:00 to 15:00"),
    ("Où se trouve le siège à Rotterdam ?", None, "Lantern Quay 14, Rotterdam"),
    ("Muss ich im Büro-WLAN das VPN benutzen?", None, "does not need the VPN"),
    ("Faut-il utiliser le VPN sur le Wi-Fi du bureau ?", None, "does not need the VPN"),
]


@pytest.mark.parametrize(("question", "value", "sentence"), SHORT_IN_OTHER_LANGUAGES,
                         ids=["de", "de-when", "fr", "fr-where", "de-yes-no", "fr-yes-no"])
def test_questions_in_other_languages_get_the_value_first(library: tuple[Path, dict[str, str]], question: str,
                                                          value: str | None, sentence: str) -> None:
    out = _ask_json(library, question)
    if value is None:
        assert out["short_answer"] is None, out["answer"]
        assert sentence in out["answer"].splitlines()[0], out["answer"]  # the sentence holding it first
        return
    assert out["short_answer"] is not None and out["short_answer"]["text"] == value, out["answer"]
    assert out["answer"].startswith(value) and sentence in out["answer"]


# A German or French question over the (English) sample takes its value from the sentence that answers it (issue 48,
# session 24). Before, "Wann wird das Gehalt gezahlt?" was answered "1 April" (the salary review's row): sharing no
# word with the documents, the question left the extractive ranker's cheap pre-score only the passages' rank and the
# "when" cue, and "25th of each month" was read as no date, so the pay day's row and the FAQ's "Salaries are paid on
# the 25th of each month." were cut before the encoder read them. The value shown is the pay day, or none with the
# sentence holding it first; never the review's date.
SALARY_IN_OTHER_LANGUAGES = ["Wann wird das Gehalt gezahlt?", "Quand le salaire est-il versé ?"]


@pytest.mark.parametrize("question", SALARY_IN_OTHER_LANGUAGES, ids=["de", "fr"])
def test_a_question_in_another_language_takes_its_value_from_the_sentence_that_answers_it(
        library: tuple[Path, dict[str, str]], question: str) -> None:
    out = _ask_json(library, question)
    first = out["answer"].splitlines()[0]
    assert "25th of each month" in first and "1 April" not in first, out["answer"]
    short = out["short_answer"]
    assert short is None or short["text"] == "25th of each month", short


# Yes/no (issue 48, session 24): a plain policy sentence that settles the question shows its yes or no above it (the
# gate is a model of its own since, fitted with FAQ pages' yes/no questions answered by a policy statement:
# docs/eval/answers.md, "Session 24"); asked about home, the office's sentence would reverse the rule, and its "No"
# is never shown.
YES_NO = [
    ("Do I need the VPN on the office Wi-Fi?", "No", "does not need the VPN"),
    ("Are dogs allowed in the canteen?", "No", "not allowed in the hardware lab or the canteen"),
    ("Do I need the VPN at home?", None, ""),
]


@pytest.mark.parametrize(("question", "says", "sentence"), YES_NO, ids=["vpn-office", "dogs-canteen", "vpn-home"])
def test_a_policy_sentence_settles_a_yes_or_no_and_a_reversed_one_is_withheld(
        library: tuple[Path, dict[str, str]], question: str, says: str | None, sentence: str) -> None:
    out = _ask_json(library, question)
    short = out["short_answer"]
    if says is None:
        assert short is None or short["text"] != "No", out["answer"]  # the office's "does not need" is not for home
        return
    assert short is not None and short["kind"] == "yes_no" and short["text"] == says, out["answer"]
    assert out["answer"].startswith(f"{says}: ") and sentence in out["answer"].splitlines()[0], out["answer"]


# Questions that ask for a thing (issue 48, session 21): the value shown first is a name or a noun phrase of the
# sentence found. Before, a "what" question named no kind of value and got none, and a German "Was ...?" was read as
# an English yes/no question ("Was the ...?") and answered "No". Since session 22 a phrase is shown only when the
# ranker is sure enough of it (core/answers/short_confidence.py): "NorthGate" is right but withheld (a phrase among
# several, from a sentence the encoder reads no closer than the next), so for it the value is the right one or none;
# never another. "Service Desk" is shown since the confidence reads the walk's evidence: its sentence and passage are
# far the encoder's best.
THINGS = [
    ("What do you need to reach the wiki from outside the office?", "NorthGate", False),
    ("Who do I call if my laptop breaks?", "Service Desk", True),  # shown since session 23: the walk is sure of it
    ("Was ist das Budget für Weiterbildung?", "EUR 1,500", True),
]


@pytest.mark.parametrize(("question", "value", "shown"), THINGS, ids=["en-what", "en-who", "de-was"])
def test_a_question_asking_for_a_thing_gets_it_first_or_no_value(library: tuple[Path, dict[str, str]], question: str,
                                                                 value: str, shown: bool) -> None:
    db, env = library
    out = _ask_json(library, question)
    short = out["short_answer"]
    if short is None:
        assert not shown, out["answer"]
        assert out["answer"].startswith(out["sentences"][0]["text"].split()[0])  # the sentence first
        return
    assert value in short["text"] and short["kind"] != "yes_no", out["answer"]
    assert out["answer"].startswith(short["text"])
    text = _run(["--db", str(db), "ask", question, "--no-generate"], env)  # the terminal's "Answer:" line
    first = next(line for line in text.stdout.splitlines() if line.startswith("Answer:"))
    assert text.returncode == 0 and value in first, text.stdout


# Values that were shown first and wrong (issue 48, session 22), each for its own cause: each now gets the right
# value or none, with the sentence first.
# - "Europe" for who approves: the name stands in "trips outside Europe", which the sentence excludes; no document
#   sets a rule at EUR 2,000, so no value is right (the phrase left, "manager in the Voyager", is withheld);
# - Rotterdam's rooms for Lisbon's: "Levante and Nortada" (two items) was no series, and "which meeting rooms"
#   (a plural after a modifier) was not read as asking for a list;
# - a German question over English text got "in April and October", the fire drills' sentence of another passage:
#   a later sentence that shares none of the question's words no longer gives a value (its own sentence's does).
WRONG_BEFORE = [
    ("Who approves travel above EUR 2,000?", None, "Europe"),
    # "Levante and Nortada", right, is withheld since session 23 (its confidence under the threshold): the sentence
    # naming both cities' rooms comes first, never Rotterdam's as the value
    ("Which meeting rooms are there in Lisbon?", None, "Bora and Zephyr"),
    # session 26: a "when" is answered by a duration where its sentence names no date: "Bikes ... that stay in the
    # storage for more than 30 days without moving are labelled and then removed."
    ("Wann werden Fahrräder entfernt?", "more than 30 days", "in April and October"),
]


@pytest.mark.parametrize(("question", "value", "before"), WRONG_BEFORE, ids=["who-europe", "rooms-lisbon",
                                                                             "de-bikes"])
def test_a_value_shown_first_is_right_or_not_shown(library: tuple[Path, dict[str, str]], question: str,
                                                   value: str | None, before: str) -> None:
    out = _ask_json(library, question)
    short = out["short_answer"]
    assert out["found"], out["answer"]
    if value is None:
        assert short is None, short  # the sentence first, no value above it
        assert out["answer"].startswith(" ".join(out["sentences"][0]["text"].split())), out["answer"]
        assert not out["answer"].startswith(before)
    else:
        assert short is not None and short["text"] == value and short["confidence"] >= SHOW.threshold, out["answer"]
        assert out["answer"].startswith(value) and before not in out["answer"].splitlines()[0]


# Questions the sample's six documents do not answer (issue 48): what they ask about occurs nowhere in the library,
# so the answer is "Not found in your documents" with the nearest passages offered as related. Before the
# absent-subject rule (core/answers/coverage.py) each got the nearest sentence as its answer.
NOT_IN_THE_SAMPLE = ["What is the dress code at the office?",
                     "How much is the referral bonus for recommending a new hire?"]


@pytest.mark.parametrize("question", NOT_IN_THE_SAMPLE, ids=["dress-code", "referral-bonus"])
def test_a_question_the_sample_does_not_answer_is_not_found(library: tuple[Path, dict[str, str]],
                                                            question: str) -> None:
    db, env = library
    out = _ask_json(library, question)
    assert not out["found"] and out["answer"] == "Not found in your documents.", out["answer"]
    assert out["short_answer"] is None and 1 <= len(out["related"]) <= 3
    text = _run(["--db", str(db), "ask", question, "--no-generate"], env).stdout
    assert "Answer: Not found in your documents." in text and "Related passages" in text, text


def _fitted_rule_on(library: tuple[Path, dict[str, str]], out: dict) -> bool | None:  # type: ignore[type-arg]
    """The encoder's fitted not-found rule (core/answers/answerable.py, EmbeddingGemma's chosen weights) on what
    ``ask --json`` showed: its passages, their P(relevant) and the walk's last-level cosines."""
    from shelfwise.core.answers.answerable import unanswered
    from shelfwise.core.answers.tuning import EMBEDDINGGEMMA
    from shelfwise.core.navigation.trace import Hit, Location
    from shelfwise.core.store.db import Store

    db, _ = library
    cos = {c["node_id"]: c["features"]["cos_max"] for c in out["trace"][-1]["candidates"]}
    with Store(db) as store:
        shown = out["passages"] or out["related"]
        hits = [Hit(p["node_id"], store.node(p["node_id"]).document_id, p["text"], p["score"], p["path"],  # type: ignore[union-attr]
                    p["title"], p["heading_path"], Location()) for p in shown[:5]]
        return unanswered(store, out["question"], hits, cos, EMBEDDINGGEMMA)


# The fitted part of the not-found rule (session 27): where the walk found passages that hold some of the question's
# words but are far from it, "not found", the nearest passages offered as related; a passage that answers keeps its
# answer. Both through the CLI, and the fitted rule itself read on what the CLI showed.
def test_passages_far_from_the_question_are_not_an_answer_and_a_close_one_is(
        library: tuple[Path, dict[str, str]]) -> None:
    out = _ask_json(library, "Which football team does the company sponsor?")
    assert not out["found"] and out["answer"] == "Not found in your documents.", out["answer"]
    assert out["short_answer"] is None and 1 <= len(out["related"]) <= 3
    assert _fitted_rule_on(library, out) is True
    out = _ask_json(library, "How many weeks of fully paid parental leave does the non-birth parent receive?")
    assert out["found"] and out["short_answer"]["text"] == "8 weeks", out["answer"]
    assert _fitted_rule_on(library, out) is False


@pytest.mark.gui
def test_the_window_says_not_found_for_a_question_the_sample_does_not_answer(
        library: tuple[Path, dict[str, str]], qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same rule as the CLI above, seen in the window a new user opens on the library (its own encoder,
    # EmbeddingGemma): "Not found" first, the nearest passages offered as related, no value
    from PySide6.QtCore import QSettings, Qt

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    monkeypatch.delenv("SHELFWISE_EMBEDDER", raising=False)
    db, _ = library
    window = MainWindow(Settings(db_path=db), QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    window.resize(1200, 800)
    window.show()
    qtbot.addWidget(window)
    try:
        window.answer_view.question.setText(NOT_IN_THE_SAMPLE[0])
        with qtbot.waitSignal(window.query_finished, timeout=600_000):
            qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)
        answer = window.session.last_answer
        assert answer is not None and not answer.found and answer.short is None
        view = window.answer_view
        assert view.browser.toPlainText().startswith("Not found in your documents.")
        assert view.sources_title.text() == "Related passages (nearest; they do not answer it)"
        assert 1 <= view.sources.count()
    finally:
        window.shutdown()


# The walk's evidence in the confidence (issue 48, session 23): whether the sentence is the right one, as the encoder
# and the walk read it, decides with the value's own features whether a value (a yes or no too) is shown first.
# - a German question over English text whose first sentence is the wrong one (the parking booking, "by 16:00", not
#   the charging rule): the encoder reads the charging sentence far closer to the question than the booking one, so
#   the booking's time is not shown;
# - "Is there a company car policy?": the deciding sentence ("book a company pool car") holds the question's words
#   but is not about a policy, and the encoder reads another sentence closer: no "Yes" above it;
# - "Who do I call if my laptop breaks?": the sentence and its passage are the encoder's best by far: "Service Desk".
EVIDENCE = [
    ("Wann kann ich mein Elektroauto laden?", None, "by 16:00"),
    ("Is there a company car policy?", None, "Yes"),
    ("Who do I call if my laptop breaks?", "Service Desk", ""),
]


@pytest.mark.parametrize(("question", "value", "before"), EVIDENCE, ids=["de-wrong-sentence", "yes-no-unsure",
                                                                         "who-sure"])
def test_a_value_is_shown_first_only_where_the_walk_is_sure_of_its_sentence(
        library: tuple[Path, dict[str, str]], question: str, value: str | None, before: str) -> None:
    out = _ask_json(library, question)
    short = out["short_answer"]
    assert out["found"], out["answer"]
    if value is None:
        assert short is None, short  # the sentence first, no value (no "Yes:"/"No:") above it
        first = out["answer"].splitlines()[0]
        assert first.startswith(" ".join(out["sentences"][0]["text"].split())[:30]) and before not in first[:10]
        return
    threshold = SHOW.yes_no_threshold if short and short["kind"] == "yes_no" else SHOW.threshold
    assert short is not None and short["text"] == value and short["confidence"] >= threshold, out["answer"]
    assert out["answer"].startswith(value)
    assert all(s["cosine"] is not None for s in out["sentences"])  # the encoder's read of each sentence, in JSON
