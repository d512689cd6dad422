"""Ingest bookkeeping for the window, without Qt: the ingest worker reports a job's outcome (done with a report,
cancelled, or an error) and then that it finished; :class:`IngestLedger` pairs the two and says what to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shelfwise.core.api.indexing import IngestReport

Kind = Literal["done", "cancelled", "error"]


@dataclass(frozen=True)
class IngestOutcome:
    kind: Kind
    report: IngestReport | None = None
    message: str = ""

    def status(self) -> tuple[str, int]:
        """The status-bar text and how long it stays (ms)."""
        if self.kind == "cancelled":
            return "Ingest cancelled; what was read so far is kept", 8000
        if self.kind == "error":
            return f"Ingest failed: {self.message}", 15000
        if self.report is None:
            return "Library updated", 8000
        r = self.report
        summary = ", ".join(f"{v} {k}" for k, v in r.counts.items() if v)
        failed = len(r.failed)
        text = f"{r.collection}: {summary or 'nothing to do'}" + (f" · {failed} need attention" if failed else "")
        return text + f" · {r.seconds:.1f} s", 15000


class IngestLedger:
    """Outcomes by job until the job's ``finished`` arrives. An error raised outside any job (the worker could
    not even start) is kept under no job and given to the next job that finishes."""

    def __init__(self) -> None:
        self._outcomes: dict[int | None, IngestOutcome] = {}

    def done(self, job: object, report: object) -> None:
        # a removal job reports no IngestReport: the library changed, nothing to summarise
        self._outcomes[id(job)] = IngestOutcome("done", report if isinstance(report, IngestReport) else None)

    def cancelled(self, job: object) -> None:
        self._outcomes[id(job)] = IngestOutcome("cancelled")

    def error(self, message: str) -> None:
        self._outcomes[None] = IngestOutcome("error", message=message)

    def finished(self, job: object) -> IngestOutcome:
        return self._outcomes.pop(id(job), None) or self._outcomes.pop(None, None) or IngestOutcome("error",
                                                                                                  message="stopped")
