"""The package structure, checked statically: every module's imports (ast, so function-level and TYPE_CHECKING
imports count too) form no cycle; core/ and ingest/ never import a front end or Qt; Qt lives in app/gui only; each
core subpackage imports only what its ``__init__`` docstring allows.

The rules are the table :data:`MAY_IMPORT` below; ``test_docstrings_state_the_rules`` keeps the docstrings and the
table saying the same thing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"core": "shelfwise.core", "ingest": "shelfwise.ingest", "app": "shelfwise.app",
           "resources": "shelfwise.resources", "evaluation": "shelfwise.evaluation"}
QT = ("PySide6", "shiboken6", "PyQt5", "PyQt6")

# What each part of the core may import from Shelfwise besides itself. ``shelfwise.resources`` (packaged files)
# and the shared leaf modules ``shelfwise.core.paths``, ``shelfwise.core.settings``, ``shelfwise.core.languages``
# and ``shelfwise.core.json_types`` are open to all of the core.
SHARED = ("shelfwise.resources", "shelfwise.core.paths", "shelfwise.core.settings", "shelfwise.core.languages",
          "shelfwise.core.json_types", "shelfwise.core.environment")
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "shelfwise.core.paths": (),
    "shelfwise.core.environment": (),
    "shelfwise.core.json_types": (),
    "shelfwise.core.settings": (),
    "shelfwise.core.languages": (),
    "shelfwise.core.store": ("shelfwise.ingest.model",),
    "shelfwise.core.models": (),
    "shelfwise.core.navigation": ("shelfwise.core.store", "shelfwise.core.models", "shelfwise.ingest.model"),
    "shelfwise.core.answers": ("shelfwise.core.models", "shelfwise.core.navigation", "shelfwise.core.store"),
    "shelfwise.core.indexing": ("shelfwise.core.store", "shelfwise.core.models", "shelfwise.core.navigation",
                                "shelfwise.core.answers"),
    "shelfwise.core.ingestion": ("shelfwise.ingest", "shelfwise.core.store"),
    "shelfwise.core.conversation": ("shelfwise.core.store", "shelfwise.core.models", "shelfwise.core.navigation",
                                    "shelfwise.core.answers", "shelfwise.ingest.model"),
    "shelfwise.core.api": ("shelfwise.core.store", "shelfwise.core.models", "shelfwise.core.navigation",
                           "shelfwise.core.answers", "shelfwise.core.indexing", "shelfwise.core.ingestion",
                           "shelfwise.core.conversation"),
    "shelfwise.core.shelf": ("shelfwise.core.api", "shelfwise.core.store", "shelfwise.core.models",
                             "shelfwise.core.navigation", "shelfwise.core.indexing", "shelfwise.core.answers"),
    "shelfwise.ingest": (),
    # beside the app, a client of the core (issue 51: it was core/evaluation, imported by the facade)
    "shelfwise.evaluation": ("shelfwise.core", "shelfwise.ingest.model"),
}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


def _modules() -> dict[str, Module]:
    out: dict[str, Module] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            name = ".".join([package, *parts])
            out[name] = Module(name, path, is_package)
    return out


MODULES = _modules()


def imports_of(module: Module, known: dict[str, Module] = MODULES) -> set[str]:
    """Every module ``module`` imports anywhere in its body: ``from pkg import name`` counts as ``pkg.name`` when
    that is a module, else as ``pkg``; relative imports are resolved."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    found.discard(module.name)
    return found


GRAPH = {name: {i for i in imports_of(m) if i in MODULES} for name, m in MODULES.items()}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walk_sees_every_package_and_function_level_imports() -> None:
    # the checks below are only as good as this walk: it must find the modules and the imports inside functions
    assert {"shelfwise.core.shelf", "shelfwise.core.store.db", "shelfwise.ingest.pdf", "shelfwise.app.gui.window",
            "shelfwise.app.cli.main"} <= set(MODULES)
    assert "shelfwise.app.gui.main" in GRAPH["shelfwise.app.cli.app"]  # imported inside the `app` command


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles (break each by moving what both need into a lower module):\n" + "\n".join(
        " <-> ".join(c) for c in found)


@pytest.mark.parametrize("top", ["shelfwise.core", "shelfwise.ingest", "shelfwise.evaluation"])
def test_core_and_ingest_import_no_front_end_and_no_qt(top: str) -> None:
    bad = sorted(f"{name} imports {i}" for name, m in MODULES.items() if _within(name, top)
                 for i in imports_of(m) if _within(i, "shelfwise.app") or i.split(".")[0] in QT)
    assert not bad, "\n".join(bad)


def test_qt_only_in_the_gui() -> None:
    bad = sorted(f"{name} imports {i}" for name, m in MODULES.items() if not _within(name, "shelfwise.app.gui")
                 for i in imports_of(m) if i.split(".")[0] in QT)
    assert not bad, "\n".join(bad)


def _rule_for(name: str) -> str | None:
    matches = [k for k in MAY_IMPORT if _within(name, k)]
    return max(matches, key=len) if matches else None


def test_every_core_module_has_a_rule() -> None:
    orphans = [n for n in MODULES if _within(n, "shelfwise.core") and n != "shelfwise.core" and _rule_for(n) is None]
    assert not orphans, f"add these to MAY_IMPORT (and say what they may import in a docstring): {orphans}"


def test_core_subpackages_import_only_what_they_may() -> None:
    bad = []
    for name, targets in GRAPH.items():
        rule = _rule_for(name)
        if rule is None:
            continue
        allowed = (rule, *MAY_IMPORT[rule], *(SHARED if _within(rule, "shelfwise.core") else ()))
        for t in sorted(targets):
            if not any(_within(t, a) for a in allowed):
                bad.append(f"{name} imports {t} ({rule} may import only {', '.join(MAY_IMPORT[rule]) or 'itself'})")
    assert not bad, "\n".join(bad)


def evaluation_imports(graph: dict[str, set[str]] = GRAPH) -> list[str]:
    """Where the core (the facade included) or ingest imports the evaluation, and where a front end imports more
    of it than ``evaluation.command`` (``shelfwise eval``'s one call)."""
    bad = [f"{n} imports {t}" for n, ts in graph.items() for t in ts if _within(t, "shelfwise.evaluation")
           and (_within(n, "shelfwise.core") or _within(n, "shelfwise.ingest")
                or (_within(n, "shelfwise.app") and t != "shelfwise.evaluation.command"))]
    return sorted(bad)


def test_nothing_in_the_core_imports_evaluation() -> None:
    """The evaluation sits beside the app as a client of the core; the facade (``core/shelf.py``, ``core/api``)
    and everything under it import nothing of it (until issue 51 the facade imported ``core/evaluation``)."""
    bad = evaluation_imports()
    assert not bad, "\n".join(bad)


def test_the_evaluation_check_finds_an_import() -> None:
    graph = {"shelfwise.core.api.x": {"shelfwise.evaluation.command"},
             "shelfwise.app.cli.eval": {"shelfwise.evaluation.command"},
             "shelfwise.app.cli.y": {"shelfwise.evaluation.run"},
             "shelfwise.evaluation.run": {"shelfwise.core.shelf"}}
    assert evaluation_imports(graph) == ["shelfwise.app.cli.y imports shelfwise.evaluation.run",
                                         "shelfwise.core.api.x imports shelfwise.evaluation.command"]


@pytest.mark.parametrize("package", [k for k in MAY_IMPORT if MODULES.get(k, Module(k, ROOT, False)).is_package])
def test_docstrings_state_the_rules(package: str) -> None:
    """Each core subpackage's docstring names every part of Shelfwise it may import (the table above is the
    checked form of what the docstrings say)."""
    doc = ast.get_docstring(ast.parse(MODULES[package].path.read_text(encoding="utf-8"))) or ""
    assert "import" in doc, f"{package}'s docstring does not say what it may import"
    for allowed in MAY_IMPORT[package]:
        short = allowed.removeprefix("shelfwise.")
        assert f"`{allowed}`" in doc or f"`{short}`" in doc, f"{package}'s docstring does not name {allowed}"


def test_rule_violations_are_reported() -> None:
    """The subpackage check fails where it should: a store module importing navigation breaks the rule."""
    rule = _rule_for("shelfwise.core.store.db")
    assert rule == "shelfwise.core.store"
    allowed = (rule, *MAY_IMPORT[rule], *SHARED)
    assert not any(_within("shelfwise.core.navigation.navigator", a) for a in allowed)
    assert any(_within("shelfwise.ingest.model", a) for a in allowed)


QT_FREE_GUI = ("shelfwise.app.gui.jobs", "shelfwise.app.gui.query_session", "shelfwise.app.gui.ingest_ledger")


@pytest.mark.parametrize("module", QT_FREE_GUI)
def test_the_windows_logic_needs_no_qt(module: str) -> None:
    """The classes the window delegates to are tested without Qt: nothing they import, even indirectly, is Qt."""
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        qt = sorted(i for i in imports_of(MODULES[name]) if i.split(".")[0] in QT)
        assert not qt, f"{module} reaches Qt through {name}: {qt}"
        todo.extend(GRAPH[name])


def test_pyproject_lists_every_package() -> None:
    """pyproject's ``packages`` are exactly the folders with an ``__init__.py`` (a name listed that is not a package
    fails ``pip install``; a package left out is missing from a built wheel)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {m.name for m in MODULES.values() if m.is_package}
    assert listed == found, f"listed, not packages: {sorted(listed - found)}; not listed: {sorted(found - listed)}"



def _package(name: str) -> str:
    """The unit a seam is drawn between: a core subpackage (``shelfwise.core.answers``), a core leaf module
    (``shelfwise.core.shelf``), ``shelfwise.ingest`` or a front end."""
    parts = name.split(".")
    return ".".join(parts[:3]) if parts[1] == "core" else ".".join(parts[:2])


def _imported_across_packages(modules: dict[str, Module]) -> set[tuple[str, str]]:
    """(module, name) for every name some module of another package imports from it."""
    out: set[tuple[str, str]] = set()
    for name, m in modules.items():
        for node in ast.walk(ast.parse(m.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules \
                    and _package(node.module) != _package(name):
                out.update((node.module, a.name) for a in node.names)
    return out


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a quoted annotation
        return "Any" in re.findall(r"\w+", annotation.value)
    return any(isinstance(x, ast.Name) and x.id == "Any" for x in ast.walk(annotation))


def any_at_seams(modules: dict[str, Module] = MODULES) -> list[str]:
    """Functions of core/ and ingest/ (and public methods of their classes) that another package imports and whose
    signature names ``Any``."""
    crossing = _imported_across_packages(modules)
    found = []
    for name, m in modules.items():
        if not (_within(name, "shelfwise.core") or _within(name, "shelfwise.ingest")):
            continue
        for node in ast.parse(m.path.read_text(encoding="utf-8")).body:
            if (name, getattr(node, "name", "")) not in crossing:
                continue
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                funcs, prefix = [node], f"{name}."
            elif isinstance(node, ast.ClassDef):
                funcs = [f for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                         and (not f.name.startswith("_") or f.name == "__init__")]
                prefix = f"{name}.{node.name}."
            else:
                continue
            for f in funcs:
                a = f.args
                annotations = [x.annotation for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
                annotations += [a.vararg.annotation if a.vararg else None, a.kwarg.annotation if a.kwarg else None,
                                f.returns]
                if any(_mentions_any(x) for x in annotations):
                    found.append(prefix + f.name)
    return sorted(found)


# JSON-shaped data (stored meta, serialised rows and reports) is honestly dict[str, Any]: allowed by name.
JSON_SHAPED = ("to_dict", "from_dict", "trace_from_dict", "get_meta", "set_meta", "markdown", "run_answer_eval_cli",
               "run_dialogue_eval")
# Seams still typed Any, each to be given its real type; the list may only shrink.
NOT_YET_TYPED: set[str] = set()  # seams allowed an Any for now (none left)


def test_no_any_in_a_signature_that_crosses_a_package() -> None:
    found = [f for f in any_at_seams() if f.rsplit(".", 1)[1] not in JSON_SHAPED]
    new = sorted(set(found) - NOT_YET_TYPED)
    assert not new, "give these a real type (a Protocol from core/models/backend.py, or a class: LibraryWalk):\n" \
        + "\n".join(new)
    typed_since = sorted(NOT_YET_TYPED - set(found))
    assert not typed_since, f"typed now: remove from NOT_YET_TYPED: {typed_since}"


def test_the_seam_check_finds_any(tmp_path: Path) -> None:
    """The check sees an ``Any`` in a signature another package imports, and only there."""
    (tmp_path / "a.py").write_text("from typing import Any\n\ndef f(x: Any) -> int: ...\ndef g(x: int) -> int: ...\n")
    (tmp_path / "b.py").write_text("from shelfwise.core.zz.a import f, g\n")
    fake = {"shelfwise.core.zz.a": Module("shelfwise.core.zz.a", tmp_path / "a.py", False),
            "shelfwise.core.yy.b": Module("shelfwise.core.yy.b", tmp_path / "b.py", False)}
    assert any_at_seams(fake) == ["shelfwise.core.zz.a.f"]


# ``getattr``/``hasattr`` in core/ that probe no backend, store, library, embedder or judge: (file, object).
PROBES_ALLOWED = {
    ("core/navigation/trace.py", "obj"): "a dataclass's fields, iterated",
    ("core/store/types.py", "loc"): "a dataclass's fields, iterated",
    ("core/settings.py", "cls()"): "a dataclass's fields, iterated",
    ("core/settings.py", "base"): "the settings' persisted fields, by name",
    ("core/settings.py", "settings"): "the settings' persisted fields, by name",
    ("core/ingestion/files.py", "os"): "open flags one platform lacks",
    ("core/ingestion/worker.py", "importlib.import_module(module)"): "a parser function by its module name",
    ("core/ingestion/worker.py", "model"): "a class of ingest.model by name",
    ("core/ingestion/lock.py", "exc"): "an exception's attributes (sqlite3 error code)",
    ("core/models/llama/logs.py", "h"): "a logging handler Shelfwise marked",
    ("core/models/llama/engine.py", "self"): "close() of a half-built instance",
    ("core/models/encoders/llama_encoder.py", "self"): "close() of a half-built instance",
}
def attribute_probes(root: Path = ROOT, folder: str = "core") -> list[tuple[str, str, int]]:
    """Every ``getattr(x, ...)``/``hasattr(x, ...)`` under ``folder``: (file, the source of ``x``, line)."""
    found = []
    for path in sorted((root / folder).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and node.args:
                found.append((rel, ast.unparse(node.args[0]), node.lineno))
    return found


def test_capabilities_are_declared_not_probed() -> None:
    """No ``getattr``/``hasattr`` on a backend, store, library, embedder or judge in core/: what a model can do is
    declared on its protocol with a default in ``BackendBase``/``EmbedderBase`` (core/models/backend.py). Each
    other probe is allowed by name with the reason it is legitimate."""
    bad = [f"{rel}:{line}: getattr on {obj}" for rel, obj, line in attribute_probes()
           if (rel, obj) not in PROBES_ALLOWED]
    assert not bad, "declare the capability on the protocol (core/models/backend.py) instead, or allow a " \
        "legitimate probe in PROBES_ALLOWED:\n" + "\n".join(bad)


def test_the_probe_check_finds_a_probe(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text("def f(backend, os):\n    n = getattr(backend, 'n_ctx', None)\n"
                                             "    return hasattr(os, 'O_BINARY') and n\n")
    assert attribute_probes(tmp_path) == [("core/x.py", "backend", 2), ("core/x.py", "os", 3)]


# -- the front ends go through the door ---------------------------------------------------------------------------
# app/ may import from the core only the facade (``Shelf`` and its parts, ``core/api/``) and the dataclass modules
# it renders: the walk's trace, the answer types, the conversation model, the settings, the data paths. Everything
# else a front end needs is a method of ``Shelf``, a plain function of ``core/api/`` or a name a part exports (its
# ``__all__``: the types of its job).
FACADE = ("shelfwise.core.shelf", "shelfwise.core.api")
APP_RENDERS = ("shelfwise.core.navigation.trace", "shelfwise.core.answers.types", "shelfwise.core.conversation.model",
               "shelfwise.core.settings", "shelfwise.core.paths", "shelfwise.core.environment")


def app_reaches_past_the_door(graph: dict[str, set[str]] = GRAPH) -> set[tuple[str, str]]:
    return {(n, t) for n, ts in graph.items() if _within(n, "shelfwise.app") for t in ts
            if (_within(t, "shelfwise.core") or _within(t, "shelfwise.ingest"))
            and not any(_within(t, ok) for ok in (*FACADE, *APP_RENDERS))}


def test_the_front_ends_go_through_the_facade() -> None:
    found = sorted(app_reaches_past_the_door())
    assert not found, ("a front end imports past the facade: add a call to a part of it (core/api/) or export the "
                       "name there:\n" + "\n".join(f"{a} imports {b}" for a, b in found))


def _all_of(module: Module) -> list[str]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def test_the_front_ends_use_only_what_the_facade_exports() -> None:
    """A name app/ imports from the facade is in that module's ``__all__`` (what it defines, and the types of its
    job), so the door is the list, not whatever a module happens to import."""
    bad = []
    for name, m in MODULES.items():
        if not _within(name, "shelfwise.app"):
            continue
        for node in ast.walk(ast.parse(m.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and any(_within(node.module, f) for f in FACADE):
                exported = _all_of(MODULES[node.module])
                bad += [f"{name} imports {a.name} from {node.module}" for a in node.names if a.name not in exported]
    assert not bad, "\n".join(bad)


def _defined(module: Module) -> set[str]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    return names | {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}


def test_the_facade_exports_only_what_it_defines() -> None:
    """``core/shelf.py`` relays nothing: its ``__all__`` is ``Shelf`` (what the front ends hold); the parts'
    names live in the parts (``core/api/``), each exported where its job is."""
    shelf = MODULES["shelfwise.core.shelf"]
    assert _all_of(shelf) == ["Shelf"]
    assert set(_all_of(shelf)) <= _defined(shelf)


def test_the_facade_is_small() -> None:
    """The facade composes its parts; the parts hold the calls (issue 51: ``core/shelf.py`` was 835 lines)."""
    assert len(MODULES["shelfwise.core.shelf"].path.read_text(encoding="utf-8").splitlines()) <= 300


def test_the_door_check_finds_a_deep_import() -> None:
    graph = {"shelfwise.app.cli.x": {"shelfwise.core.store.db", "shelfwise.core.shelf", "shelfwise.core.settings"}}
    assert app_reaches_past_the_door(graph) == {("shelfwise.app.cli.x", "shelfwise.core.store.db")}


# -- ... and not past it through its attribute ----------------------------------------------------------------------
def store_reaches(root: Path = ROOT) -> list[tuple[str, int]]:
    """Where app/ touches ``.store`` (an attribute read or write, or ``getattr``/``hasattr`` with "store"): the
    facade's store, or anything's, read from the parsed code (comments and strings do not count)."""
    found = []
    for path in sorted((root / "app").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "store":
                found.append((rel, node.lineno))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) > 1 \
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value == "store":
                found.append((rel, node.lineno))
    return sorted(found)


def test_the_front_ends_do_not_reach_the_store() -> None:
    """app/ reads the library through ``Shelf``'s calls (``state``, ``collections()``, ``find_collection()``,
    ``documents()``, ``status()``, ``tree()``, ...), never through ``shelf.store``."""
    found = store_reaches()
    assert not found, ("a front end reaches past the facade through .store: add a read call to the facade "
                       "(core/api/reads.py) instead:\n" + "\n".join(f"{rel}:{line}" for rel, line in found))


def test_the_store_check_finds_a_reach(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "x.py").write_text(
        "# shelf.store in a comment does not count\n"
        "def f(shelf):\n"
        "    note = 'nor shelf.store in a string'\n"
        "    n = shelf.store.collections()\n"
        "    return getattr(shelf, 'store', None), n, note\n")
    assert store_reaches(tmp_path) == [("app/x.py", 4), ("app/x.py", 5)]


# -- the walk is written once ---------------------------------------------------------------------------------------
def classes_defining_search(root: Path = ROOT) -> list[str]:
    """Every class (in the product, its tests, benchmarks and training scripts) with a method
    ``search(self, request, ...)``: searching a library for a ``SearchRequest``."""
    found = []
    for folder in ("core", "app", "ingest", "tests", "benchmarks", "training"):
        for path in sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ClassDef):
                    continue
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "search" and len(f.args.args) > 1 \
                            and f.args.args[1].arg == "request":
                        found.append(f"{path.relative_to(root).as_posix()}:{node.name}")
    return found


def test_search_is_written_once() -> None:
    """``LibraryWalk.search`` (``core/navigation/walk.py``) is the one implementation: the facade hands it to the
    answer path, and the evaluation's and the tests' doubles subclass it and fill in only ``walk`` (four classes
    wrote it before issue 51: the ``Library`` protocol, ``LibraryWalk``, the evaluation's ``ShelfParts`` and the
    navigator)."""
    assert classes_defining_search() == ["core/navigation/walk.py:LibraryWalk"]


def test_the_search_count_finds_a_second_one(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text("class A:\n    def search(self, request, cancel=None):\n        pass\n"
                                             "class B:\n    def search(self, text):\n        pass\n")
    assert classes_defining_search(tmp_path) == ["core/x.py:A"]


# -- environment variables: read in one place -------------------------------------------------------------------------
def environment_reads(root: Path = ROOT) -> list[str]:
    """Where core/ or app/ reads the environment (``os.environ``, ``os.getenv``) outside ``core/environment.py``."""
    found = []
    for folder in ("core", "app"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == "core/environment.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                        and node.attr in ("environ", "getenv", "putenv"):
                    found.append(f"{rel}:{node.lineno}")
    return found


def test_environment_variables_are_read_in_one_place() -> None:
    """Every variable Shelfwise reads is in ``core/environment.py``'s table and read through it."""
    assert environment_reads() == []


def test_the_environment_check_finds_a_read(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text("import os\nHOME = os.environ.get('HOME')\n")
    assert environment_reads(tmp_path) == ["core/x.py:2"]


# -- an answer's events: one object ---------------------------------------------------------------------------------
ANSWER_CALLBACKS = ("on_search", "on_extract", "on_token", "on_generated", "on_reading")


def signatures_with_loose_callbacks(root: Path = ROOT) -> list[str]:
    """Every function (in the product, its tests, the evaluation, benchmarks and training scripts) whose parameters
    spell out more than one of an answer's events: those travel as one ``AnswerEvents`` (``TurnEvents`` for a
    conversation's turn), so a new event is a field, not a parameter added to every signature on the path."""
    found = []
    for folder in ("core", "app", "ingest", "evaluation", "tests", "benchmarks", "training"):
        for path in sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    continue
                a = node.args
                names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                loose = [n for n in names if n in ANSWER_CALLBACKS]
                if len(loose) > 1:
                    name = node.name if not isinstance(node, ast.Lambda) else "lambda"
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {name}({', '.join(loose)})")
    return found


def test_an_answers_events_travel_as_one_object() -> None:
    """The four answer callbacks (and a turn's ``on_reading``) were spelled out in eight signatures on the answer
    path (issue 51); now each takes one ``events`` (``core/answers/types.py``'s ``AnswerEvents``)."""
    found = signatures_with_loose_callbacks()
    assert not found, "pass one AnswerEvents instead of the callbacks:\n" + "\n".join(found)


def test_the_events_check_finds_loose_callbacks(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text(
        "def stream(prompt, *, on_token=None):\n    pass\n"
        "def ask(question, *, on_search=None, on_token=None):\n    pass\n"
        "class A:\n    def ask(self, q, on_extract, *, events=None, on_generated=None):\n        pass\n")
    assert signatures_with_loose_callbacks(tmp_path) == ["core/x.py:3 ask(on_search, on_token)",
                                                         "core/x.py:6 ask(on_extract, on_generated)"]


# -- sizes: modules and functions short enough to read; getattr( and Any few (issue 51) --------------------------------
MODULE_LINES = 600  # no module of core/ longer
FUNCTION_LINES = 80  # no function of app/, core/, ingest/ longer (from its def line to its last line)
GETATTR_LINES = 8  # lines of core/ and app/ holding ``getattr(`` (as `grep -rn 'getattr(' core app` counts)
ANY_LINES = 40  # lines of core/ and app/ holding the word ``Any`` (as `grep -rnw Any app core` counts)


def long_modules(root: Path = ROOT) -> list[str]:
    return [f"{p.relative_to(root).as_posix()}: {n} lines" for p in sorted((root / "core").rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES]


def long_functions(root: Path = ROOT) -> dict[str, int]:
    """``path:name`` -> lines, for every function (methods and nested ones too) over :data:`FUNCTION_LINES`."""
    found = {}
    for folder in ("app", "core", "ingest"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                    lines = node.end_lineno - node.lineno + 1
                    if lines > FUNCTION_LINES:
                        found[f"{path.relative_to(root).as_posix()}:{node.name}"] = lines
    return found


def lines_holding(pattern: str, root: Path = ROOT) -> list[str]:
    """``path:line`` of every line of core/ and app/ that ``pattern`` matches (grep's count of matching lines)."""
    rx = re.compile(pattern)
    return [f"{p.relative_to(root).as_posix()}:{i}" for folder in ("core", "app")
            for p in sorted((root / folder).rglob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if rx.search(line)]


GETATTR = r"getattr\("
ANY_WORD = r"(?<!\w)Any(?!\w)"


def test_no_core_module_is_long() -> None:
    """A module of the core reads in one sitting (``core/store/db.py`` and ``core/answers/grounding.py`` were split
    by job: ``ranking.py``, ``facts.py``)."""
    assert long_modules() == []


def test_no_function_is_long() -> None:
    """Eleven were over it at the start of session 20 (``ask_cmd`` 117, ``tables.compute`` 126 ...), split by step
    since."""
    assert long_functions() == {}


def test_getattr_and_any_are_few() -> None:
    """What is left reads by name on purpose: a parser named "module:function" for the parse worker, an exception
    attribute SQLite sets only on its own errors; ``Any`` where keyword arguments of ``replace`` are gathered by
    name, JSON payloads, and click's and Qt's own signatures."""
    getattrs, anys = lines_holding(GETATTR), lines_holding(ANY_WORD)
    assert len(getattrs) <= GETATTR_LINES, getattrs
    assert len(anys) <= ANY_LINES, anys


def test_the_size_checks_find_what_they_count(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "ingest").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LINES))
    (tmp_path / "core" / "big.py").write_text("def long():\n" + body + "\n" * (MODULE_LINES - FUNCTION_LINES))
    (tmp_path / "app" / "x.py").write_text("from typing import Any\nv = getattr(o, 'a')\nAnyThing = 1  # not Any\n")
    assert long_modules(tmp_path) == [f"core/big.py: {MODULE_LINES + 1} lines"]
    assert long_functions(tmp_path) == {"core/big.py:long": FUNCTION_LINES + 1}
    assert lines_holding(GETATTR, tmp_path) == ["app/x.py:2"]
    assert lines_holding(ANY_WORD, tmp_path) == ["app/x.py:1", "app/x.py:3"]
