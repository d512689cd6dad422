"""The state of the window's questions, without Qt: which job is current, the branches forced open with "look
here too", and the last search and answer (what the walk, replay and export show).

A result from a job that is no longer current (the user asked something else meanwhile) is ignored: every
``on_*`` method returns whether the window should show what it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shelfwise.app.gui.jobs import QueryJob
from shelfwise.core.answers.types import Answer
from shelfwise.core.api.asking import answer_to_markdown, trace_to_markdown
from shelfwise.core.navigation.trace import Candidate, SearchResult, Trace


@dataclass(frozen=True)
class AnswerUpdate:
    """What an answer changes on screen: ``trace`` is set when the answer's search differs from the one shown."""

    answer: Answer
    trace: Trace | None


class QuerySession:
    def __init__(self) -> None:
        self.job: QueryJob | None = None
        self.forced: set[int] = set()
        self.last_search: SearchResult | None = None
        self.last_answer: Answer | None = None
        self.closed = False

    def start(self, question: str, collection: str, keep: Sequence[int] = (), answer: bool = True) -> QueryJob:
        """A new job for ``question``. Forced branches carry over while the question stays the same."""
        question = question.strip()
        if self.job is not None and question != self.job.question:
            self.forced = set()
        self.forced |= set(keep)
        self.job = QueryJob(question, collection or None, sorted(self.forced), answer=answer)
        self.last_answer = None
        self.last_search = None
        return self.job

    def look_here(self, candidate: Candidate) -> tuple[str, str, list[int]] | None:
        """(question, collection, keep) to ask again with ``candidate``'s branch forced open, or None."""
        if self.job is None:
            return None
        return self.job.question, self.job.collection or "", [candidate.node_id]

    def is_current(self, job: object) -> bool:
        return job is self.job and not self.closed

    def on_searched(self, job: object, result: SearchResult) -> bool:
        if not self.is_current(job):
            return False
        self.last_search = result
        return True

    def on_answered(self, job: object, answer: Answer) -> AnswerUpdate | None:
        if not self.is_current(job):
            return None
        self.last_answer = answer
        trace = None
        if answer.search is not None and answer.search is not self.last_search:
            self.last_search = answer.search
            trace = answer.search.trace
        return AnswerUpdate(answer, trace)

    def replay_trace(self) -> Trace | None:
        """The last walk, if it has levels to replay."""
        trace = self.last_search.trace if self.last_search else None
        return trace if trace is not None and trace.levels else None

    def can_export(self) -> bool:
        return self.last_answer is not None or self.last_search is not None

    def export_markdown(self) -> str:
        """The last answer (or, before it is written, the last walk) as Markdown; ValueError when there is none."""
        if self.last_answer is not None:
            return answer_to_markdown(self.last_answer)
        if self.last_search is not None:
            return f"# {self.last_search.query}\n\n" + trace_to_markdown(self.last_search)
        raise ValueError("nothing to export yet")
