"""Ingest files and folders into the store: incremental, one transaction per file, never crashing the batch.

    >>> from shelfwise.core.store.db import Store
    >>> report = ingest(Store("library.db"), [Path("~/Documents/handbooks").expanduser()])  # doctest: +SKIP
    >>> report.counts, [(r.path, r.message) for r in report.failed]  # doctest: +SKIP

Planning (:func:`plan`: walk folders, compare size/mtime/sha256 with the store) is separate from execution, so the
decisions are testable without parsing anything. A file is parsed, then written in its own transaction, so killing
the process at any moment leaves a consistent database that a rerun completes.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shelfwise.core.ingestion.files import FileId, NotAFile, not_a_file, sha256_file, walk
from shelfwise.core.ingestion.lock import ingest_lock, refuse_while_rebuilt
from shelfwise.core.ingestion.worker import Cancelled, ParseWorker
from shelfwise.core.store.db import DocumentRow, FileMeta, Store
from shelfwise.ingest.model import IngestError, Limits, ParsedDocument
from shelfwise.ingest.progress import reporting

log = logging.getLogger(__name__)

ParseFn = Callable[[Path, Limits], ParsedDocument]
DEFAULT_LIMITS = Limits()
FOLDER = "folder"  # the format of a library row that stands for a folder that could not be read
CandidateFn = Callable[[Path], bool]


@dataclass
class IngestProgress:
    """Sent before each file (``status == "working"``) and after it (the file's result status)."""

    done: int  # files finished so far
    total: int  # files in this run (removals not included)
    path: str
    status: str  # 'working' | 'ok' | 'error' | 'needs_ocr'
    message: str  # while 'working': the parser's progress, e.g. "OCR page 3/12" (or "")
    eta_seconds: float | None  # None until there is something to extrapolate from
    elapsed: float
    ocr_pages: int = 0  # after a file: pages of it read by OCR


@dataclass
class FileResult:
    path: str
    # 'added' | 'updated' | 'skipped' | 'removed' | 'failed' | 'ignored' (not a file, in a folder) | 'duplicate' (a
    # file reached a second time: a hard link, a bind mount)
    action: str
    status: str  # 'ok' | 'error' | 'needs_ocr' | 'ignored' (for 'skipped': the stored status)
    message: str = ""
    sections: int = 0
    passages: int = 0
    pages: int = 0
    seconds: float = 0.0  # hash + parse + write
    document_id: int | None = None
    format: str = ""
    parse_seconds: float = 0.0
    ocr_pages: int = 0  # pages read by OCR (for 'skipped': as stored)
    retry: bool = False  # a failure that may pass: the next plain ingest tries the file again
    warnings: list[str] = field(default_factory=list)  # the parser's warnings (for 'skipped': as stored)


@dataclass
class IngestReport:
    collection: str
    results: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0
    cancelled: bool = False

    @property
    def counts(self) -> dict[str, int]:
        out = {a: 0 for a in ("added", "updated", "skipped", "removed", "failed", "ignored", "duplicate")}
        for r in self.results:
            out[r.action] += 1
        return out

    @property
    def failed(self) -> list[FileResult]:
        """Files without an OK tree from this run: failures now, and unchanged files that failed before."""
        return [r for r in self.results
                if r.action == "failed" or (r.action not in ("removed", "ignored", "duplicate") and r.status != "ok")]

    @property
    def ignored(self) -> list[FileResult]:
        """Entries of the folders given that are not regular files (pipes, devices, links out, loops)."""
        return [r for r in self.results if r.action == "ignored"]

    @property
    def warned(self) -> list[FileResult]:
        """Stored documents whose parser had something to say (a part not read, an encoding guessed)."""
        return [r for r in self.results if r.status == "ok" and r.warnings]

    @property
    def pages(self) -> int:
        """Pages (slides, sheets) parsed in this run."""
        return sum(r.pages for r in self.results if r.action in ("added", "updated"))

    @property
    def passages(self) -> int:
        return sum(r.passages for r in self.results if r.action in ("added", "updated"))


@dataclass
class WorkItem:
    path: Path
    size: int
    existing: DocumentRow | None
    skip: bool  # unchanged since the stored version
    meta: FileMeta | None = None  # known when the sha256 had to be computed during planning
    ident: FileId | None = None  # (device, inode) when listed: every later open must find this file


@dataclass
class Plan:
    items: list[WorkItem] = field(default_factory=list)
    remove: list[DocumentRow] = field(default_factory=list)
    problems: list[FileResult] = field(default_factory=list)  # unreadable folders, missing paths
    unreadable: list[FileResult] = field(default_factory=list)  # of the problems, those kept as rows of the library


def file_meta(path: Path, expect: FileId | None = None) -> FileMeta:
    st = path.stat()
    return FileMeta(st.st_size, st.st_mtime, sha256_file(path, st.st_size, expect=expect))


def _stamp(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


def document_key(raw: Path) -> str:
    """The key a file named ``raw`` is stored under (its absolute, resolved path), also for a path that is gone."""
    return str(_given(raw)[1])


def under(key: str, folder: str) -> bool:
    """Whether the stored key ``key`` is ``folder`` itself or a file below it."""
    return key == folder or key.startswith(folder.rstrip(os.sep) + os.sep)


def _given(raw: Path) -> tuple[Path, Path]:
    """(the path as given, expanded; its absolute, resolved form: the document's key). A symlink loop has no
    resolved form: its key is the absolute path of the link itself."""
    given = Path(raw).expanduser()
    try:
        return given, given.resolve()
    except (RuntimeError, OSError):  # "Symlink loop" (Python < 3.13 raises RuntimeError)
        return given, Path(os.path.abspath(given))


def _owners(files: Sequence[Path]) -> dict[tuple[int, int], str]:
    """For each file (device, inode), the path it is stored under when it is reached by several: the first that is
    not a symbolic link, else the first."""
    out: dict[tuple[int, int], str] = {}
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key not in out or (os.path.islink(out[key]) and not os.path.islink(f)):
            out[key] = str(f)
    return out


def unreadable_message(kind: str, code: int | None, why: str) -> str:
    """What ``status`` and ``ingest`` say about a folder (``kind`` "folder") or a file that cannot be read, with what
    to do: "cannot read folder: Permission denied; ..." (the start is the same for every error)."""
    if kind == "folder":
        head = f"cannot read folder: {why}; the files under it are left out (any read before are kept)"
    else:
        head = f"cannot read file: {why}"
    if code in (errno.EACCES, errno.EPERM):
        return f"{head}: fix its permissions, or leave it out of what you ingest, then ingest again"
    if code == errno.ENAMETOOLONG:
        return f"{head}: its path is longer than the system can name; move what is in it higher up"
    return f"{head}: check the {kind} (its disk or network share is there and healthy), then ingest again"


def _unreadable(path: Path, kind: str, exc: OSError) -> FileResult:
    """The result of a folder or file that cannot be read; :func:`_run` records it as a row of the library (a failure
    that may pass), so ``status`` shows it until it can be read."""
    return FileResult(str(path), "failed", "error", unreadable_message(kind, exc.errno, exc.strerror or str(exc)),
                      format=FOLDER if kind == "folder" else path.suffix.lower().lstrip("."), retry=True)


def _stat_meta(path: Path) -> FileMeta:
    """What ``stat`` still tells of a path that cannot be read (zeros when it tells nothing); no hash."""
    try:
        st = os.stat(path)
    except OSError:
        return FileMeta(0, 0.0, "")
    return FileMeta(st.st_size, st.st_mtime, "")


def plan(
    store: Store, paths: Sequence[Path], collection_id: int, is_candidate: CandidateFn, *, force: bool = False
) -> Plan:
    """Decide what to do with each file: parse (new or changed, or a failure that may pass), skip (unchanged),
    remove (gone). What is not a regular file (a pipe, a device, a socket, a link loop, a link out of the folder
    given) is refused from its ``stat`` before anything opens it, with the reason (:mod:`.files`)."""
    out = Plan()
    stored = {d.path: d for d in store.documents(collection_id)}
    files, ids, gone = _listed(paths, is_candidate, stored, out)
    _plan_files(files, ids, stored, gone, out, force)
    out.remove = list(gone.values())
    out.problems = out.unreadable + out.problems
    return out


def _listed(paths: Sequence[Path], is_candidate: CandidateFn, stored: dict[str, DocumentRow],
            out: Plan) -> tuple[list[Path], dict[Path, FileId], dict[str, DocumentRow]]:
    """The files the paths name or hold (folders walked), each walked file's identity as the walk saw it, and the
    stored documents gone from them; what cannot be read or is not a file goes into ``out`` with its reason."""
    files: list[Path] = []
    ids: dict[Path, FileId] = {}
    gone: dict[str, DocumentRow] = {}
    for raw in paths:
        given, p = _given(raw)
        try:
            is_dir = p.is_dir()
        except OSError as exc:  # a folder above it cannot be entered: what was read from it is kept
            below = any(under(k, str(p)) and k != str(p) for k in stored)
            out.unreadable.append(_unreadable(p, "folder" if below else "file", exc))
            continue
        if is_dir:
            walked = walk(p, is_candidate)
            out.unreadable.extend(_unreadable(f, "folder", exc) for f, exc in walked.unreadable)
            out.unreadable.extend(_unreadable(f, "file", exc) for f, exc in walked.unreadable_files)
            out.problems.extend(FileResult(str(f), "ignored", "ignored", why) for f, why in walked.refused)
            files.extend(walked.files)
            ids.update(walked.ids)
            present = {str(f) for f in walked.files}
            # what was read from a folder or file that cannot be read now is kept (status: cannot be read now)
            kept = [str(f) for f, _ in walked.unreadable + walked.unreadable_files]
            prefix = str(p).rstrip(os.sep) + os.sep
            gone.update({k: d for k, d in stored.items() if k.startswith(prefix) and k not in present
                         and not any(under(k, u) for u in kept)})
        elif os.path.lexists(given):
            why = not_a_file(given)
            if why:  # named as the user named it (a link's target may be /dev/zero)
                out.problems.append(FileResult(os.path.abspath(given), "failed", "error", why))
            else:
                files.append(p)
        else:
            missing = {k: d for k, d in stored.items() if under(k, str(p))}
            if missing:
                gone.update(missing)
            else:
                out.problems.append(FileResult(str(p), "failed", "error", "no such file or folder"))
    return files, ids, gone


def _plan_files(files: list[Path], ids: dict[Path, FileId], stored: dict[str, DocumentRow],
                gone: dict[str, DocumentRow], out: Plan, force: bool) -> None:
    """One work item per file listed (a second path to the same file is a duplicate, stored once); unchanged
    files (same size and mtime, or the same sha256) are marked to skip unless ``force``."""
    seen: set[str] = set()
    same = _owners(files)  # (device, inode) -> the one path a file reached several times is stored under
    for f in files:
        key = str(f)
        if key in seen:
            continue
        seen.add(key)
        gone.pop(key, None)
        try:
            st = f.stat()
        except OSError as exc:
            out.unreadable.append(_unreadable(f, "file", exc))
            continue
        first = same.get((st.st_dev, st.st_ino), key)
        if first != key:  # a hard link, a link inside the folder, the same folder mounted twice: stored once
            out.problems.append(FileResult(key, "duplicate", "ignored", f"the same file as {first} (a hard link, or "
                                           "a folder mounted twice): stored once"))
            if key in stored:
                gone[key] = stored[key]
            continue
        old = stored.get(key)
        item = WorkItem(f, st.st_size, old, skip=False, ident=ids.get(f, (st.st_dev, st.st_ino)))
        # a failure that may have passed, or a document to read again (one read before tables were stored)
        retry = old is not None and bool(old.retry)
        if old is not None and not force and not retry and old.size == st.st_size:
            if old.mtime == st.st_mtime:
                item.skip = True
            else:
                try:
                    item.meta = FileMeta(st.st_size, st.st_mtime, sha256_file(f, st.st_size, expect=item.ident))
                except OSError:
                    item.meta = None
                item.skip = item.meta is not None and item.meta.sha256 == old.sha256
        out.items.append(item)


def ingest(
    store: Store,
    paths: Sequence[Path],
    collection: str = "default",
    *,
    limits: Limits = DEFAULT_LIMITS,
    progress: Callable[[IngestProgress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    after_write: Callable[[int], None] | None = None,
    force: bool = False,
    isolate: bool = True,
    timeout: float | None = None,
    parse: ParseFn | None = None,
    is_candidate: CandidateFn | None = None,
) -> IngestReport:
    """Ingest files and folders into ``collection``. See the module doc.

    ``force`` re-parses unchanged files. By default each file is parsed by :mod:`shelfwise.ingest.registry` in a
    worker process (``isolate``), so a native crash, a hang longer than ``timeout`` seconds (default:
    ``limits.max_parse_seconds``) or memory past ``limits.max_worker_rss_bytes`` fails only that file
    and ``cancel`` also interrupts a long file. ``parse``/``is_candidate`` replace the registry's (stand-ins in
    tests; a given ``parse`` runs in-process).
    """
    from shelfwise.ingest import registry

    is_candidate = is_candidate or registry.is_candidate
    worker: ParseWorker | None = None
    if parse is None:
        if isolate:
            worker = ParseWorker(timeout=timeout)
            parse = worker.parse_fn(cancel)
        else:
            parse = registry.parse
    try:
        with ingest_lock(store.path):
            # checked with the ingest lock held: a rebuild starting now sees this ingest, or this ingest sees it
            refuse_while_rebuilt(store.path)
            return _run(store, paths, collection, limits, progress, cancel, after_write, force, parse,
                        is_candidate, worker)
    finally:
        if worker is not None:
            worker.close()


def _run(
    store: Store, paths: Sequence[Path], collection: str, limits: Limits,
    progress: Callable[[IngestProgress], None] | None, cancel: Callable[[], bool] | None,
    after_write: Callable[[int], None] | None, force: bool, parse: ParseFn, is_candidate: CandidateFn,
    worker: ParseWorker | None,
) -> IngestReport:
    t_start = time.perf_counter()
    coll = store.collection(collection)
    report = IngestReport(collection=coll.name)
    work = plan(store, paths, coll.id, is_candidate, force=force)
    for problem in work.unreadable:  # a folder or file that cannot be read: a row of the library (status)
        _record_unreadable(store, coll.id, problem)
    report.results.extend(work.problems)
    for doc in work.remove:
        store.remove_document(doc.id)
        if doc.format != FOLDER:  # a folder's row goes silently once the folder can be read (or is gone)
            report.results.append(FileResult(doc.path, "removed", doc.status, "file no longer exists",
                                              document_id=doc.id, format=doc.format))

    total = len(work.items)
    bytes_todo = sum(i.size for i in work.items if not i.skip)
    bytes_done = 0
    work_seconds = 0.0

    def tell(done: int, path: str, status: str, message: str, ocr_pages: int = 0) -> None:
        if progress is None:
            return
        eta = None
        if bytes_done > 0 and work_seconds > 0:
            eta = work_seconds * max(bytes_todo - bytes_done, 0) / bytes_done
        elif bytes_todo == 0:
            eta = 0.0
        progress(IngestProgress(done, total, path, status, message, eta, time.perf_counter() - t_start, ocr_pages))

    for n, item in enumerate(work.items):
        if cancel is not None and cancel():
            report.cancelled = True
            break
        key = str(item.path)
        if item.skip:
            old = item.existing
            assert old is not None
            if item.meta is not None and item.meta.mtime != old.mtime:
                store.mark_unchanged(old.id, item.meta)
            result = FileResult(key, "skipped", old.status, old.message, old.sections, old.passages, old.pages,
                                0.0, old.id, old.format, ocr_pages=old.ocr_pages, retry=old.retry,
                                warnings=list(old.warnings))
        else:
            tell(n, key, "working", "")
            t0 = time.perf_counter()
            # a parser's own progress ("OCR page 3/12") is shown as the working file's message
            def step(message: str, n: int = n, key: str = key) -> None:
                tell(n, key, "working", message)

            with reporting(step):
                done = _ingest_one(store, coll.id, item, limits, parse, after_write, worker, cancel)
            if done is None:  # cancelled while parsing: nothing was written for this file
                report.cancelled = True
                break
            result = done
            result.seconds = time.perf_counter() - t0
            work_seconds += result.seconds
            bytes_done += item.size
        report.results.append(result)
        tell(n + 1, key, result.status, result.message, result.ocr_pages)
    report.seconds = time.perf_counter() - t_start
    return report


def _record_unreadable(store: Store, collection_id: int, result: FileResult) -> None:
    """Keep ``result`` (a folder or file that cannot be read) as a row of the library; a version of the file read
    before keeps its tree, with the message. A library that cannot record it leaves the report's line alone."""
    try:
        result.document_id = store.record_failure(collection_id, result.path, _stat_meta(Path(result.path)),
                                                  "error", result.message, retry=True, fmt=result.format)
    except Exception:  # e.g. a full disk: the ingest's own line still says it
        log.debug("could not record %s", result.path, exc_info=True)


CHANGED = "the file changed while it was read (it is being written?); the next ingest reads it again"


def _ingest_one(
    store: Store, collection_id: int, item: WorkItem, limits: Limits, parse: ParseFn,
    after_write: Callable[[int], None] | None, worker: ParseWorker | None = None,
    cancel: Callable[[], bool] | None = None,
) -> FileResult | None:
    """Parse and store one file. A file that changes while it is read (its size, mtime or inode differ after the
    parse) is read once more; changed again, it fails as a failure that may pass, so a half-written or truncated
    file is never stored as "ok" with part of its text. Every open checks the file is the one listed
    (``item.ident``): a file replaced by a link to elsewhere meanwhile is refused (:data:`~.files.REPLACED`)."""
    key = str(item.path)
    fmt = item.path.suffix.lower().lstrip(".")
    status, message, retry = "error", "", False
    parsed: ParsedDocument | None = None
    meta: FileMeta | None = None
    t0 = time.perf_counter()
    for _attempt in range(2):
        parsed, status, message, retry = None, "error", "", False
        try:
            before = _stamp(item.path)
            meta = file_meta(item.path, item.ident)
        except NotAFile as exc:
            return FileResult(key, "failed", "error", f"{exc.strerror}: not read", format=fmt)
        except OSError as exc:  # e.g. no permission to read it: a row of the library that says so
            result = _unreadable(item.path, "file", exc)
            _record_unreadable(store, collection_id, result)
            return result
        t0 = time.perf_counter()
        log.debug("stage: parse %s", key)  # stage markers (``shelfwise -v``): the reliability runs aim kills by them
        try:
            # the worker parses the file it opened and checked itself (files.pinned), not whatever the name
            # leads to by then; a parse function handed in (tests, isolate=False) gets the path
            parsed = (worker(item.path, limits, cancel, identity=item.ident) if worker is not None
                      else parse(item.path, limits))
        except Cancelled:
            return None
        except IngestError as exc:
            status, message, retry = exc.status, str(exc) or exc.__class__.__name__, bool(exc.passing)
        except Exception as exc:  # a parser bug must not end the batch
            log.debug("unexpected parser failure on %s", key, exc_info=True)
            message = f"unexpected error: {exc.__class__.__name__}: {exc}"
        try:
            changed = _stamp(item.path) != before
        except OSError:
            changed = True
        if not changed:
            break
        parsed, status, message, retry = None, "error", CHANGED, True
    assert meta is not None
    parse_seconds = worker.last_parse_seconds if worker is not None else time.perf_counter() - t0
    if parsed is not None:
        log.debug("stage: write %s", key)
        try:
            doc_id = store.write_document(collection_id, key, meta, parsed)
        except Exception as exc:  # e.g. disk full: report it, go on with the next file; it may pass
            log.debug("write failed for %s", key, exc_info=True)
            message, retry = f"could not save to the library: {exc.__class__.__name__}: {exc}", True
        else:
            log.debug("stage: written %s", key)
            return _written(item, doc_id, parsed, parse_seconds, after_write)
    return _failed(store, collection_id, key, meta, (status, message, retry), fmt, parse_seconds)


def _written(item: WorkItem, doc_id: int, parsed: ParsedDocument, parse_seconds: float,
             after_write: Callable[[int], None] | None) -> FileResult:
    """The result of a file stored as ``doc_id``, after ``after_write`` (whose failure is a note: the document is
    stored)."""
    key = str(item.path)
    action = "updated" if item.existing is not None else "added"
    result = FileResult(key, action, "ok", "; ".join(parsed.warnings), parsed.count("section"),
                        parsed.count("passage"), parsed.pages, document_id=doc_id, format=parsed.format,
                        parse_seconds=parse_seconds, ocr_pages=parsed.ocr_pages, warnings=list(parsed.warnings))
    if after_write is not None:
        try:
            after_write(doc_id)
        except Exception as exc:  # e.g. the embedder failed; the document is stored
            log.debug("after_write failed for %s", key, exc_info=True)
            note = f"post-processing failed: {exc.__class__.__name__}: {exc}"
            result.message = f"{result.message}; {note}" if result.message else note
    return result


def _failed(store: Store, collection_id: int, key: str, meta: FileMeta, failure: tuple[str, str, bool], fmt: str,
            parse_seconds: float) -> FileResult:
    """A file that could not be stored, recorded as ``failure`` (status, message, may pass); an earlier version
    stays stored and is said."""
    status, message, retry = failure
    try:
        doc_id = store.record_failure(collection_id, key, meta, status, message, retry=retry)
    except Exception as exc:
        log.debug("record_failure failed for %s", key, exc_info=True)
        return FileResult(key, "failed", status, f"{message} (and could not record it: {exc})", format=fmt,
                          retry=True)
    doc = store.document(doc_id)
    if doc is not None and doc.status == "ok":  # an earlier version is kept
        return FileResult(key, "failed", status, doc.message, doc.sections, doc.passages, 0,
                          document_id=doc_id, format=fmt, parse_seconds=parse_seconds, retry=True)
    return FileResult(key, "failed", status, message, document_id=doc_id, format=fmt, parse_seconds=parse_seconds,
                      retry=retry)
