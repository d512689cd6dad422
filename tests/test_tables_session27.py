"""The table questions added in session 27 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over small real workbooks written here and ingested once (real SQLite, the real bundled encoder,
MiniLM, generation off): a bound the question negates ("did not finish with a time less than 53": at least 53;
German and French too), "name a X that did not have Y over N" as the first row the negated bound keeps, "how many
more X did A than B" as A's rows less B's, and "what is the X with the most Y" shown as the row's name (it was
withheld as a value of another kind than the number asked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import ask_json, write_sheets

pytestmark = pytest.mark.model

SHEETS: dict[str, tuple[list[str], list[list[object]]]] = {
    "heats.xlsx": (["Rank", "Athlete", "Country", "Time"], [
        [1, "Anna Berg", "Norway", 52.1], [2, "Carla Diaz", "Spain", 52.8], [3, "Edith Falk", "Sweden", 53.4],
        [4, "Gina Holt", "Norway", 54.0], [5, "Ida Jensen", "Denmark", 55.2]]),
    "zeiten.xlsx": (["Platz", "Athletin", "Land", "Zeit"], [
        [1, "Anna Berg", "Norway", 52.1], [2, "Carla Diaz", "Spain", 52.8], [3, "Edith Falk", "Sweden", 53.4],
        [4, "Gina Holt", "Norway", 54.0], [5, "Ida Jensen", "Denmark", 55.2]]),
    "temps.xlsx": (["Rang", "Athlète", "Pays", "Temps"], [
        [1, "Anna Berg", "Norway", 52.1], [2, "Carla Diaz", "Spain", 52.8], [3, "Edith Falk", "Sweden", 53.4],
        [4, "Gina Holt", "Norway", 54.0], [5, "Ida Jensen", "Denmark", 55.2]]),
    "districts.xlsx": (["District", "Headquarters", "Population"], [
        ["Angul", "Angul", 1271703], ["Balangir", "Balangir", 1648574], ["Boudh", "Boudh", 439917],
        ["Cuttack", "Cuttack", 2618708], ["Deogarh", "Deogarh", 312164]]),
    "episodes.xlsx": (["No.", "Title", "Directed by"], [
        [1, "Pilot", "Shelley Jensen"], [2, "The Move", "Shelley Jensen"], [3, "Snow Day", "Madeline Cripe"],
        [4, "The Fair", "Shelley Jensen"], [5, "Finals", "Shelley Jensen"], [6, "The Trip", "Rob Schiller"]]),
}


def _write(docs: Path) -> Path:
    write_sheets(docs, SHEETS)
    return docs / "heats.xlsx"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.table_workbooks import workbook_library

    return workbook_library(tmp_path_factory.mktemp("s27"), lambda p: _write(p.parent), "heats.xlsx")


@pytest.mark.parametrize(("question", "value"), [
    ("How many athletes did not finish with a time less than 53? in:heats.xlsx", "3"),  # 53.4, 54.0, 55.2
    ("How many athletes finished with a time less than 53? in:heats.xlsx", "2"),  # the bound as said
    ("How many athletes did not run a time of more than 54? in:heats.xlsx", "4"),  # at most 54: 54.0 kept
    ("Wie viele Athletinnen hatten eine Zeit von nicht weniger als 53? in:zeiten.xlsx", "3"),
    ("Combien d'athlètes n'ont pas eu un temps de moins de 53 ? in:temps.xlsx", "3"),
])
def test_a_negated_bound_counts_the_other_rows(library: Path, question: str, value: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, "count"), question


def test_name_a_row_a_negated_bound_keeps(library: Path) -> None:
    short = ask_json(library, "Tell me a district that did not have a population over 600,000. "
                              "in:districts.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("Boudh", "lookup")  # the first row at most 600,000


def test_how_many_more_rows_of_one_than_another(library: Path) -> None:
    short = ask_json(library, "Shelley Jensen directed how many more episodes than Madeline Cripe? "
                              "in:episodes.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("3", "count_difference")  # 4 rows less 1
    assert "4 rows for Shelley Jensen minus 1 for Madeline Cripe" in short["explanation"]


@pytest.mark.parametrize("question", [
    "What is the district with the largest amount of population? in:districts.xlsx",  # asks a number's kind ...
    "What was the name of the district with the largest amount of population? in:districts.xlsx",
])
def test_what_is_the_x_with_the_most_names_a_row(library: Path, question: str) -> None:
    # ... but names a row: its name is shown (it was withheld as "of another kind than the one asked")
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == ("Cuttack", "argmax"), question


def test_what_is_the_most_is_still_the_number(library: Path) -> None:
    short = ask_json(library, "What is the largest amount of population? in:districts.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("2618708", "max")
