"""The facade's read calls the front ends render (issue 36: app/ never reaches ``shelf.store``): the library's
state, its collections and documents, ``shelfwise status``'s rows and ``shelfwise tree``'s tree."""

from __future__ import annotations

from pathlib import Path

from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from tests.fakes import HashEmbedder


def test_the_read_calls_show_what_the_library_holds(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    files = {}
    for name in ("cats", "dogs", "memo"):
        files[name] = tmp_path / f"{name}.md"
        files[name].write_text(f"# {name.title()}\n\n## Habits\n\nThe {name} sleep all day long.\n")
    with Shelf(Settings(db_path=db), backend=FakeBackend(), embedder=HashEmbedder()) as shelf:
        shelf.ingest([files["cats"], files["dogs"]], "pets", embed=False, index=False)
        shelf.ingest([files["memo"]], "work", embed=False, index=False)
        files["dogs"].unlink()

        state = shelf.state
        assert (state.path, state.read_only, state.reason, state.damage, state.why_read_only) == (db, False, "", "",
                                                                                                  "")
        assert [c.name for c in shelf.collections()] == ["pets", "work"]
        pets = shelf.find_collection("pets")
        assert pets is not None and shelf.find_collection("nope") is None
        assert [Path(d.path).name for d in shelf.documents("pets")] == ["cats.md", "dogs.md"]
        assert len(shelf.documents()) == 3 and shelf.documents("nope") == []

        status = shelf.status("pets")
        assert [(Path(r.document.path).name, r.collection, r.on_disk) for r in status.documents] == [
            ("cats.md", "pets", ""), ("dogs.md", "pets", "missing")]
        assert status.by_status == {"ok": 3}  # the whole library's
        assert [i.collection for i in status.indexes] == ["pets", "work"] and status.damage == ""
        assert status.encoder == shelf.library_encoder

        tree = shelf.tree("pets", depth=1)
        assert [r.kind for r in tree.roots] == ["collection"] and tree.roots[0].id == pets.root_node_id
        assert sorted(n.title for n in tree.kids(tree.roots[0])) == ["Cats", "Dogs"]  # documents, depth 1
        assert all(not tree.kids(n) for n in tree.kids(tree.roots[0]))  # nothing below the depth asked
        assert len(shelf.tree().roots) == 2 and shelf.tree("nope").roots == []
