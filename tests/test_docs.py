"""The docs and the code's comments stay what they claim to be (issue 26).

* Comments and docstrings in ``core/``, ``ingest/``, ``app/`` and ``evaluation/`` state rules and point at docs;
  measured figures and session history live in ``docs/`` with the command that measured them. The patterns below
  are the clear cases (a figure after "measured", "session 3", "1.36 s idle", "MRR 0.710", "26 -> 31", "2.5x
  faster", a month and a year); a rule such as "256 tokens" or a syntax example such as ``since:2025-01-01`` is
  not flagged.
* A path or module a comment points at exists (pointers to things that moved are how comments rot).
* The README is a user's guide: under ~150 lines, the screenshot and the two commands on its first screen, the
  EmbeddingGemma attribution and its licence kept; every relative link in README.md and docs/ resolves, and every
  repository path they name exists.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("core", "ingest", "app", "evaluation")

_FIGURE = r"(\b\d+(\.\d+)?\s?(s|ms|%|x|MB|GB|MiB|GiB)\b|\b\d+\.\d+\b|\b\d+/\d+\b|\b\d+ of \d+\b)"
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
HISTORY = {
    "session history": re.compile(r"\bsessions? \d"),
    "a measured figure": re.compile(r"\bmeasured\b[^.;\n]*" + _FIGURE),
    "seconds idle/loaded": re.compile(r"\d+(\.\d+)? ?s (idle|loaded)\b"),
    "a date": re.compile(rf"\b({_MONTHS}) 20\d\d\b|\b\d{{1,2}} ({_MONTHS}) 20\d\d\b"),
    "a metric's value": re.compile(r"\b(MRR|Hit@\d+|Recall@\d+)\b[^.\n]{0,40}?\b[01]\.\d{2,3}\b"),
    "a before -> after figure": re.compile(r"\b\d+(\.\d+)?(%| ?s| ?x)? ?-> ?\d+(\.\d+)?\b"),
    "a speed-up": re.compile(r"\b\d+(\.\d+)?x (faster|slower)\b"),
    "a peak memory figure": re.compile(r"\bpeak(ed|s)?\b[^.\n]{0,30}\d+ ?(MB|GB|MiB|GiB)\b"),
}


def _modules() -> Iterator[Path]:
    for pkg in CODE:
        yield from sorted((ROOT / pkg).rglob("*.py"))


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring line (module, class, function and attribute docstrings)."""
    src = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            docstring = i == 0 and isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            after_assign = i > 0 and isinstance(body[i - 1], (ast.Assign, ast.AnnAssign))
            if (docstring or after_assign) and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                for k, line in enumerate(stmt.value.value.split("\n")):
                    yield stmt.lineno + k, line


def test_comments_carry_no_figures_or_history() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {kind}: {text.strip()[:120]}"
        for path in _modules()
        for line, text in _prose(path)
        for kind, rx in HISTORY.items()
        if rx.search(text)
    ]
    assert not found, "move the figure to docs/ (with what measured it) and point there:\n" + "\n".join(found)


def test_history_patterns_are_precise() -> None:
    flagged = ["(measured: 6 of 30 runs lost one)", "session 3's weights", "1.36 s idle took 27-86 s",
               "MRR 0.710 -> 0.642", "26 -> 31 whose", "~2.5x faster than", "December 2026", "peaked at 790 MB"]
    rules = ["Passages are embedded up to 256 tokens", "since:2025-01-01", "``Level 2 · documents · 31 -> kept 4``",
             "(rotating, 2 x 2 MB)", "which measured better than bare text for both the embedder and BM25",
             '"27 days" -> (27, "day")', "Hit@1, Recall@5, Recall@10, MRR", "(>= 1.3x the body size)"]
    assert all(any(rx.search(t) for rx in HISTORY.values()) for t in flagged)
    assert not [t for t in rules if any(rx.search(t) for rx in HISTORY.values())]


_TOPS = "core|ingest|app|evaluation|benchmarks|tests|docs|training|packaging|resources"
_PATH = re.compile(rf"(?<![\w/.~-])((?:{_TOPS})/[\w./-]*\w)")


def _exists(ref: str) -> bool:
    p = ROOT / ref
    if p.exists():
        return True
    stem, _, _attr = ref.rpartition(".")  # core/languages.word_count: a module and a name in it
    if stem and (ROOT / (stem + ".py")).exists():
        return True
    return any(p.parent.glob(p.name + "*"))  # a prefix of file names (resources/models/shelfwise-judge...)


def test_paths_in_comments_exist() -> None:
    stale = []
    for path in _modules():
        src = path.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                stale += [f"{path.relative_to(ROOT)}:{tok.start[0]}: {m}" for m in _PATH.findall(tok.string)
                          if not _exists(m)]
    assert not stale, "comments point at paths that do not exist:\n" + "\n".join(stale)


SHELF_AND_PARTS = ("Shelf", "OpenLibrary", "Reads", "Asking", "Indexing", "HoldsModels")


def test_shelf_methods_named_in_comments_exist() -> None:
    names: set[str] = set()
    for path in [ROOT / "core" / "shelf.py", *sorted((ROOT / "core" / "api").glob("*.py")),  # Shelf and its parts
                 ROOT / "core" / "models" / "loaded.py"]:  # HoldsModels: its backend, embedder, judge
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in SHELF_AND_PARTS):
            names |= {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            names |= {t.id for n in cls.body if isinstance(n, ast.AnnAssign) for t in [n.target]
                      if isinstance(t, ast.Name)}
    missing = [f"{path.relative_to(ROOT)}: Shelf.{m}" for path in _modules()
               for m in re.findall(r"\bShelf\.(\w+)", path.read_text(encoding="utf-8")) if m not in names]
    assert not missing, missing


def test_readme_is_a_users_guide() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 160
    first_screen = "\n".join(lines[:40])
    assert "docs/screenshots/main.png" in first_screen
    assert "bash packaging/run_sample.sh" in first_screen and "bash packaging/test.sh" in first_screen
    assert (ROOT / "docs/screenshots/main.png").exists()
    for kept in ("EmbeddingGemma", "Google DeepMind", "Gemma Terms of Use", "https://ai.google.dev/gemma/terms"):
        assert kept in text
    assert "packaging/test.sh" in (ROOT / ".ci/run").read_text(encoding="utf-8")


def test_relative_links_resolve() -> None:
    broken = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", md.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not (md.parent / target).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_paths_in_docs_exist() -> None:
    tops = {"core", "ingest", "app", "evaluation", "benchmarks", "tests", "training", "packaging", "resources"}
    stale = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for ref in _PATH.findall(md.read_text(encoding="utf-8")):
            if set(ref.split("/")) <= tops:  # "app/core/ingest": a list of folders, not a path
                continue
            if not _exists(ref):
                stale.append(f"{md.relative_to(ROOT)}: {ref}")
    assert not stale, "docs point at paths that do not exist:\n" + "\n".join(stale)


def test_every_benchmark_is_listed_in_its_folder() -> None:
    """benchmarks/ holds two folders, product/ (the product's speed and behaviour checks) and research/ (choices
    tried, tuned or not shipped); each file there has its one line in docs/benchmarks.md."""
    loose = sorted(p.name for p in (ROOT / "benchmarks").iterdir() if p.is_file())
    assert not loose, f"put these in benchmarks/product or benchmarks/research: {loose}"
    listed = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    missing = [f"benchmarks/{d}/{p.name}" for d in ("product", "research")
               for p in sorted((ROOT / "benchmarks" / d).iterdir())
               if p.is_file() and f"- `benchmarks/{d}/{p.name}`" not in listed]
    assert not missing, f"give these a line in docs/benchmarks.md: {missing}"
