"""A question asked while an index run is part of the way: the passages without a vector yet are judged by their
words (``core/navigation/features.py``: ``words_only``, ``lean_on_words``), so the walk finds a passage the encoder
has not reached. Before, such a passage had cosine 0, below every embedded one, and the walk missed it whatever its
words said (docs/scale.md, "Indexing a shelf")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.indexing.finish import IndexProgress
from shelfwise.core.ingestion.lock import ingest_lock
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf

TOPICS = {
    "annual-leave": ["Full-time employees receive 27 days of paid annual leave per calendar year.",
                     "Unused leave days may be carried over until the end of March of the following year.",
                     "Leave is requested in the HR portal at least ten working days in advance.",
                     "Part-time staff receive leave in proportion to their contracted hours."],
    "travel": ["Business travel is booked through the travel desk, never on a personal card.",
               "Meals on a business trip are reimbursed up to 40 euros a day with receipts.",
               "Rail is preferred to flights for journeys shorter than four hours.",
               "Hotels are booked in the company's contracted hotels where there is one."],
    "security": ["Passwords must be at least fourteen characters long and are never reused.",
                 "Laptops lock their screen after five minutes without input.",
                 "Report a lost phone or laptop to the service desk within one hour.",
                 "Two-factor sign-in is required for email and for the VPN."],
    "expenses": ["Expense claims are filed monthly with the receipts attached as scans.",
                 "Claims older than ninety days are not reimbursed.",
                 "Taxi rides are reimbursed only after 22:00 or with heavy luggage.",
                 "The finance team pays approved claims with the next salary."],
    "onboarding": ["New colleagues get their laptop and badge on the first morning.",
                   "Every newcomer is given a buddy from another team for the first month.",
                   "The onboarding checklist is signed off by the manager after four weeks.",
                   "Introductory courses on safety and privacy are completed in the first week."],
    "meetings": ["Meetings start five minutes after the hour and end five minutes before it.",
                 "Every meeting invitation names its goal and the decision it should reach.",
                 "Minutes are shared in the team channel on the same day.",
                 "Recurring meetings are reviewed every quarter and cancelled when idle."],
    "zz-facilities": ["The canteen serves a warm lunch between 11:30 and 14:00 on working days.",
                      "The bicycle shed behind building C opens with the badge reader from 06:30 to 21:15.",
                      "Parking spaces for visitors are reserved at reception a day ahead.",
                      "Lost property is kept at the front desk for three months."],
}
QUESTION = "When does the bicycle shed behind building C open?"


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    notes = {f"notes-{i:02d}": [f"Team {i} reviews its backlog on day {i + 1} of every month in room {100 + i}.",
                                f"The review of team {i} is chaired by its lead and lasts {20 + i} minutes.",
                                f"Team {i} keeps its decisions in the register numbered {i * 7 + 3}."]
             for i in range(12)}  # enough passages that the index run's first batch leaves the last files
    for name, paragraphs in {**notes, **TOPICS}.items():
        title = name.removeprefix("zz-").replace("-", " ").capitalize()
        (docs / f"{name}.md").write_text(f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n")
    return docs



def ingest_and_index_one_batch(shelf: Shelf, docs: Path) -> None:
    """``docs`` ingested into the collection "default", then its index run stopped after its first batch."""
    shelf.ingest([docs], "default", embed=False, index=False)
    batches: list[int] = []

    def progress(p: IndexProgress) -> None:
        if p.stage == "embedding" and p.done:
            batches.append(p.done)

    shelf.index("default", progress=progress, cancel=lambda: bool(batches))


@pytest.mark.model
def test_the_walk_finds_a_passage_the_index_run_has_not_embedded_yet(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Shelf(Settings(db_path=db, embedder_path="minilm")) as shelf:
        ingest_and_index_one_batch(shelf, _docs(tmp_path))
        store = shelf.store
        passages = store.conn.execute("SELECT count(*) FROM nodes WHERE kind = 'passage'").fetchone()[0]
        unembedded = store.conn.execute(
            "SELECT n.id, n.text FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id "
            "WHERE n.kind = 'passage' AND e.node_id IS NULL").fetchall()
        # part of the way: the first batch has vectors, the bicycle shed's passage (written last) has none
        assert 0 < len(unembedded) < passages
        assert any("bicycle shed" in text for _, text in unembedded)

    with ingest_lock(db):  # as while an ingest runs elsewhere: the question answers from what is indexed so far
        r = CliRunner().invoke(main, ["--db", str(db), "--embedder", "minilm", "ask", "--no-answer", "--json",
                                      QUESTION])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output[r.output.index("{"):])
    assert "bicycle shed" in out["passages"][0]["text"], [p["text"] for p in out["passages"][:3]]
    notes = out["notes"]
    assert any(f"{len(unembedded)} of {passages} passages have no vector yet" in n for n in notes), notes
