"""XQuAD (``../shared/evaldata/xquad``): the 240 SQuAD dev paragraphs and their 1,190 questions in several
languages, for evaluation only (never for tuning).

Built like SQuAD (:func:`shelfwise.evaluation.datasets.load_squad`): each paragraph is one document of a flat
collection, the gold is the question's paragraph. ``lang`` is the language of the paragraphs, ``query_lang`` that
of the questions (the same question ids in every file, so English questions can be asked over German paragraphs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from shelfwise.evaluation.datasets import EvalSet, spread, squad_paragraphs

_FILE = re.compile(r"^xquad\.([a-z]{2,3})\.json$")


def languages(root: Path) -> list[str]:
    """The languages whose file is present under ``root`` (the ``xquad`` folder), sorted."""
    folder = root / "original"
    if not folder.is_dir():
        return []
    return sorted(m.group(1) for p in folder.iterdir() if (m := _FILE.match(p.name)))


def _read(root: Path, lang: str) -> dict:
    path = root / "original" / f"xquad.{lang}.json"
    if not path.is_file():
        have = ", ".join(languages(root)) or "none"
        raise ValueError(f"no XQuAD file for language {lang!r} in {root / 'original'} (present: {have})")
    return json.loads(path.read_text(encoding="utf-8"))


def _title(text: str, chars: int = 60) -> str:
    """A short title: the first words (the first characters for text written without spaces)."""
    words = text.split()
    lead = " ".join(words[:8])
    if len(lead) > chars:
        lead = lead[:chars]
    return lead + ("..." if len(lead) < len(text) else "")


def load_xquad(root: Path, lang: str, *, query_lang: str | None = None, limit: int | None = None) -> EvalSet:
    """The XQuAD collection of ``lang``'s paragraphs with the questions of ``query_lang`` (default: ``lang``);
    ``limit`` caps the questions, spread over all articles as for SQuAD."""
    query_lang = query_lang or lang
    data = _read(root, lang)
    asked = {qa["id"]: qa["question"] for a in _read(root, query_lang)["data"] for p in a["paragraphs"]
             for qa in p["qas"]} if query_lang != lang else None

    def question_of(qa: dict) -> str | None:  # in query_lang; a question missing there is left out
        question = (asked.get(qa["id"]) if asked is not None else qa["question"]) or ""
        return question if question.strip() else None

    documents, questions = squad_paragraphs(data, "xquad", _title, question_of)
    questions = spread(questions, limit)
    name = f"xquad-{lang}" if query_lang == lang else f"xquad-{query_lang}-{lang}"
    return EvalSet(name, documents, questions, documents_key=f"xquad-{lang}")
