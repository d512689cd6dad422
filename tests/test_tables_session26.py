"""The table questions added in session 26 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over small real workbooks written here and ingested once (real SQLite, the real bundled encoder,
MiniLM, generation off): "more or less than N" as a count set against N (English, German, French), a bound on a
named column of numbers written as text ("49.8 te") rather than on the one number column the question does not
name, "what was the least number of X" as the value (not the row's name), and the row after / before a series of
rows a key names ("who did they play after the Cardinals"), "who is the only X" as the row's name (a column
Name), "name one X not ..." as the first row the filters keep, and no lookup whose value the question itself
says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import ask_json, write_sheets

pytestmark = pytest.mark.model

SHEETS: dict[str, tuple[list[str], list[list[object]]]] = {
    "picks.xlsx": (["Pick", "Player", "Country"], [
        [1, "Danilo Ildefonso", "Philippines"], [2, "Noy Castillo", "United States"], [3, "Ali Peek", "United States"],
        [4, "Brixter Encarnacion", "Philippines"], [5, "William Antonio", "United States"],
        [6, "Yancy de Ocampo", "Philippines"], [7, "Mark Telan", "Philippines"],
        [8, "Chris Calaguio", "United States"]]),
    "designs.xlsx": (["Design code", "Electrical system", "Weight", "Route availability"], [
        ["08-0AV", "90 V", "49.8 te (496 kN)", 5], ["08-0BX", "110 V", "50.4 te (502 kN)", 5],
        ["08-0CA", "90 V", "44.6 te (444 kN)", 5], ["08-0DV", "90 V", "42.0 te (412 kN)", 4]]),
    "laps.xlsx": (["Driver", "Constructor", "Laps"], [
        ["Stirling Moss", "Lotus", 80], ["Roy Salvadori", "Cooper", 3], ["Jack Brabham", "Cooper", 80],
        ["Bruce McLaren", "Cooper", 45]]),
    "runden.xlsx": (["Fahrer", "Team", "Runden"], [
        ["Stirling Moss", "Lotus", 80], ["Roy Salvadori", "Cooper", 3], ["Jack Brabham", "Cooper", 80]]),
    "tours.xlsx": (["Pilote", "Équipe", "Tours"], [
        ["Stirling Moss", "Lotus", 80], ["Roy Salvadori", "Cooper", 3], ["Jack Brabham", "Cooper", 80]]),
    "games.xlsx": (["Game", "Date", "Opponent", "Score"], [
        [136, "September 1", "Cubs", "4 - 3"], [137, "September 2", "Cubs", "6 - 5"],
        [138, "September 3", "Cardinals", "9 - 7"], [139, "September 4", "Cardinals", "2 - 1"],
        [140, "September 5", "Cardinals", "3 - 8"], [141, "September 6", "Reds", "5 - 4"],
        [142, "September 7", "Pirates", "1 - 0"]]),
    "ranks.xlsx": (["Rank", "Name", "Nationality", "Time"], [
        [1, "Janelle Atkinson", "Jamaica", "4:08.79"], [2, "Kaitlin Sandeno", "United States", "4:09.11"],
        [3, "Hannah Stockbauer", "Germany", "4:10.32"], [4, "Nadezhda Chemezova", "Russia", "4:11.08"]]),
    "titles.xlsx": (["Title", "Developer", "Year"], [
        ["The Hobbit", "Melbourne House", 1982], ["Lord of the Rings Volume 1", "Beam Software", 1985],
        ["Sherlock", "Melbourne House", 1984], ["Shadows of Mordor", "Beam Software", 1987]]),
    "races.xlsx": (["Rd.", "Grand Prix", "Fastest Lap", "Winning Driver"], [
        [1, "Brazil", "Ayrton Senna", "Nigel Mansell"], [2, "Spain", "Nigel Mansell", "Ayrton Senna"],
        [3, "Monaco", "Alain Prost", "Alain Prost"], [4, "Canada", "Nigel Mansell", "Nigel Mansell"]]),
}


def _write(docs: Path) -> Path:
    write_sheets(docs, SHEETS)
    return docs / "picks.xlsx"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.table_workbooks import workbook_library

    return workbook_library(tmp_path_factory.mktemp("s26"), lambda p: _write(p.parent), "picks.xlsx")


@pytest.mark.parametrize(("question", "value"), [
    ("Were there more or less than 5 players picked from the United States? in:picks.xlsx", "less"),  # 4 rows
    ("Were there more or fewer than 3 players picked from the United States? in:picks.xlsx", "more"),
    ("Are there more or less than 10 players on the list? in:picks.xlsx", "less"),  # every row: 8
    ("Is the number of opponents more or less than 10? in:games.xlsx", "less"),  # 7 rows, the noun a column's
    ("Wurden mehr oder weniger als 5 Spieler aus United States gewählt? in:picks.xlsx", "weniger"),
    ("Y a-t-il plus ou moins de 3 joueurs de United States ? in:picks.xlsx", "plus"),
])
def test_more_or_less_than_a_number(library: Path, question: str, value: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"].lower(), short["operation"]) == (value, "compare"), question
    assert short["cells"], question  # the rows counted are cited


def test_more_or_less_than_a_tie_answers_nothing_from_the_table(library: Path) -> None:
    short = ask_json(library, "Were there more or less than 4 players picked from the United States? "
                              "in:picks.xlsx")["short_answer"]
    assert short is None or short.get("operation") not in ("compare", "count", "lookup")


def test_a_bound_on_a_named_column_of_numbers_as_text(library: Path) -> None:
    short = ask_json(library, "How many designs have a weight of at least 45? in:designs.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("2", "count")  # 49.8 and 50.4, not Route availability >= 45


@pytest.mark.parametrize(("question", "value", "op"), [
    ("What was the least number of laps made? in:laps.xlsx", "3", "min"),
    ("What is the highest number of laps? in:laps.xlsx", "80", "max"),
    ("Which driver made the least number of laps? in:laps.xlsx", "Roy Salvadori", "argmin"),  # a row asked for
    ("Was war die niedrigste Anzahl der Runden? in:runden.xlsx", "3", "min"),
    ("Quel est le plus petit nombre de tours ? in:tours.xlsx", "3", "min"),
])
def test_the_least_number_of_x_is_the_value(library: Path, question: str, value: str, op: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, op), question


@pytest.mark.parametrize(("question", "value", "op"), [
    ("Which team did they play next after the Cardinals? in:games.xlsx", "Reds", "next"),
    ("Which team did they play before the Cardinals? in:games.xlsx", "Cubs", "previous"),
    ("Welches Team spielten sie nach den Cardinals? in:games.xlsx", "Reds", "next"),
])
def test_the_row_after_a_series(library: Path, question: str, value: str, op: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, op), question


@pytest.mark.parametrize("question", [
    "Who is the only person to rank from Jamaica? in:ranks.xlsx",  # Name, not Rank ("rank" names a column)
    "Wer ist die einzige Person aus Jamaica? in:ranks.xlsx",
    "Qui est la seule personne de Jamaica ? in:ranks.xlsx",
])
def test_who_is_the_only_one_is_a_name(library: Path, question: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert short["text"] == "Janelle Atkinson", question


@pytest.mark.parametrize("question", [
    "Name one title not developed by Melbourne House. in:titles.xlsx",
    "Nenne einen Titel, der nicht von Melbourne House entwickelt wurde. in:titles.xlsx",
])
def test_name_one_row_the_filters_keep(library: Path, question: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == ("Lord of the Rings Volume 1", "lookup"), question


def test_a_lookup_is_not_the_question_s_own_words(library: Path) -> None:
    # "nigel mansell" keys Fastest Lap and Winning Driver: their one common row's Winning Driver is Mansell himself
    short = ask_json(library, "Who was the winning driver after Nigel Mansell? in:races.xlsx")["short_answer"]
    assert short is None or short["text"] != "Nigel Mansell"
