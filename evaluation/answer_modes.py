"""The answer modes side by side: extractive, generated (unchecked), grounded-generated, and what the user is shown.

``shelfwise eval conditionalqa --answers`` (and ``eval FILE.jsonl --answers`` for a user's labelled questions such as
``resources/sample_questions.jsonl``) answers every question once with
:func:`~shelfwise.core.answers.ask.answer_question` and reads four texts off the one :class:`Answer`:

* ``short``: the value asked for, shown first (``Answer.short``; "" when none was found);
* ``extractive``: the extracted sentence(s) (``Answer.text``);
* ``generated``: what the model wrote, before the grounding check (``Answer.generated_raw``);
* ``grounded_generated``: the model's answer when it passed the check, else the extractive one;
* ``shown``: what the CLI and the window show: the short answer and the extracted sentence(s)
  (``Answer.shown_first``), and the model's answer when it passed.

Per mode: ``contains_gold`` over the span-answer questions (gold not yes/no; a gold answer contained as whole words
after SQuAD normalisation, :func:`~shelfwise.core.answers.matching.answer_matches`; ``contains_gold_facts``, the
looser :func:`fact_match` for free-text gold answers like the sample's), ``facts_not_in_cited``: answers
holding a number, date or time that is not in the passages they cite (all shown passages when they cite none),
and ``abstained_unanswerable``: the share of ConditionalQA's ``not_answerable`` questions answered "not found". Plus
the share of generated answers the check rejected, yes/no questions (marked: the shown answer is the evidence
sentence, not a yes/no verdict), and the median seconds from the question to the first answer text and to the end.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shelfwise.core.answers.answer import NOT_FOUND_TEXT, passage_cosines
from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.facts import content_words
from shelfwise.core.answers.grounding import unsupported_facts
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.answers.types import Answer
from shelfwise.core.json_types import JSONObject
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.evaluation.datasets import EvalQuestion

MODES = ("short", "extractive", "generated", "grounded_generated", "shown")


def is_yes_no(answer: str) -> bool:
    """A ConditionalQA yes/no gold answer (as opposed to a span)."""
    return answer.strip().lower() in {"yes", "no"}


def mode_texts(ans: Answer) -> dict[str, str]:
    extractive = "" if not ans.found else ans.text
    shown = " ".join(x for x in (ans.shown_first() if ans.found else "", ans.generated) if x)
    short = ans.short.text if ans.found and ans.short is not None else ""
    return {"short": short, "extractive": extractive, "generated": ans.generated_raw if ans.found else "",
            "grounded_generated": ans.generated or extractive, "shown": shown}


def fact_match(prediction: str, golds: Sequence[str]) -> bool:
    """Looser than :func:`answer_matches`, for free-text gold answers such as the sample's ("09:00 at reception"
    against "Come to reception at 09:00"): every number, date and time of a gold answer is in the prediction, and
    at least half of its other content words are."""
    words = content_words(prediction)
    for gold in golds:
        if answer_matches(prediction, [gold]):
            return True
        if fact_violations(gold, [prediction]):
            continue
        rest = content_words(gold)
        if rest and len(rest & words) / len(rest) >= 0.5:
            return True
    return False


def cited_texts(ans: Answer) -> list[str]:
    if ans.citations:
        return [c.hit.text for c in ans.citations]
    return [h.text for h in (ans.search.hits[:5] if ans.search else [])]


def fact_violations(text: str, sources: Sequence[str]) -> list[str]:
    """The numbers, dates and times of ``text`` not in ``sources`` (names are the check's too, but not counted
    here: the done-when line is about numbers and dates)."""
    return [f.text for f in unsupported_facts(text, sources) if f.kind in ("number", "date", "time")]


def evidence(library: LibraryWalk, ans: Answer) -> JSONObject:
    """What the value shown first was read from, so that it can be re-chosen later on the same walk
    (``benchmarks/research/short_replay.py``): the sentences found with the scorer's reads, each passage's cosine
    (the passages shown, in citation order) and the value's confidence."""
    hits = ans.search.hits[: max(1, library.settings.answer_passages)] if ans.search is not None else []
    cosines = passage_cosines(ans.search, hits)
    return {"sentences": [{"text": s.text, "number": s.number, "start": s.start, "end": s.end, "score": s.score,
                           "header": s.header, "cosine": s.cosine, "lead": s.lead} for s in ans.sentences],
            "passages": [cosines.get(h.node_id) for h in hits],
            "confidence": ans.short.confidence if ans.short is not None else None}


@dataclass
class ModeReport:
    questions: int
    metrics: JSONObject
    rows: list[JSONObject] = field(default_factory=list)


def run_mode_eval(library: LibraryWalk, questions: Sequence[EvalQuestion], *, collection: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> ModeReport:
    """Answer each question (query, answers, not_answerable) once and score the four modes."""
    rows: list[JSONObject] = []
    for i, q in enumerate(questions):
        ans = answer_question(library, q.query, collection=collection)
        texts = mode_texts(ans)
        sources = cited_texts(ans)
        kind = ("unanswerable" if q.not_answerable else
                "yes_no" if q.answers and all(is_yes_no(a) for a in q.answers) else
                "span" if q.answers else "unlabelled")
        rows.append({
            "qid": q.qid, "kind": kind, "gold": list(q.answers), "found": ans.found, "texts": texts,
            "contains": {m: bool(t) and answer_matches(t, q.answers) for m, t in texts.items()} if kind == "span"
            else {},
            "contains_facts": {m: bool(t) and fact_match(t, q.answers) for m, t in texts.items()}
            if kind == "span" else {},
            "violations": {m: fact_violations(t, sources) for m, t in texts.items()},
            "generated_offered": bool(ans.found and ans.generated_raw and ans.generated_raw != NOT_FOUND_TEXT),
            "rejected": bool(ans.found and ans.generated_raw and not ans.generated),
            "note": ans.generation_note, "first_seconds": ans.first_seconds, "seconds": ans.seconds,
            "evidence": evidence(library, ans),
        })
        if progress is not None:
            progress(i + 1, len(questions))
    return ModeReport(len(rows), summarise_modes(rows), rows)


def summarise_modes(rows: Sequence[JSONObject]) -> JSONObject:
    span = [r for r in rows if r["kind"] == "span"]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    offered = [r for r in rows if r["generated_offered"]]
    out: JSONObject = {"questions": len(rows), "span_questions": len(span),
                           "yes_no_questions_marked": sum(r["kind"] == "yes_no" for r in rows),
                           "unanswerable_questions": len(unanswerable)}
    for m in MODES:
        out[m] = {
            "contains_gold": round(statistics.fmean(r["contains"][m] for r in span), 3) if span else None,
            "contains_gold_facts": (round(statistics.fmean(r["contains_facts"][m] for r in span), 3)
                                    if span else None),
            "answers_with_facts_not_in_cited": sum(bool(r["violations"][m]) for r in rows if r["texts"][m]),
            "abstained_unanswerable": (round(statistics.fmean(not r["texts"][m] for r in unanswerable), 3)
                                       if unanswerable else None),
        }
    out["generated_rejected_share"] = (round(statistics.fmean(r["rejected"] for r in offered), 3)
                                       if offered else None)
    out["median_first_answer_seconds"] = round(statistics.median(r["first_seconds"] for r in rows), 2) if rows else 0
    out["median_seconds"] = round(statistics.median(r["seconds"] for r in rows), 2) if rows else 0
    return out


def markdown(report: ModeReport) -> str:
    m = report.metrics
    lines = [f"## Answer modes ({m['questions']} questions: {m['span_questions']} span, "
             f"{m['yes_no_questions_marked']} yes/no (marked), {m['unanswerable_questions']} not answerable)", "",
             "| mode | contains gold (span) | gold's facts (span) | answers with a number/date not in cited | "
             "abstained (not answerable) |", "|---|---|---|---|---|"]
    for mode in MODES:
        x = m[mode]
        lines.append(f"| {mode} | {x['contains_gold']} | {x['contains_gold_facts']} | "
                     f"{x['answers_with_facts_not_in_cited']} | "
                     f"{x['abstained_unanswerable']} |")
    lines += ["", f"Generated answers rejected by the grounding check: {m['generated_rejected_share']}; "
              f"median seconds to the first answer text {m['median_first_answer_seconds']}, to the end "
              f"{m['median_seconds']}."]
    return "\n".join(lines) + "\n"
