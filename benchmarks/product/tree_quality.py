"""The tree Shelfwise detects in a PDF without bookmarks, compared with the outline its author wrote.

    .venv/bin/python benchmarks/product/tree_quality.py [PDF ...] [--corpus ../shared/corpus] [--out FILE.json] [-v]

For each PDF that has an outline (all of ``--corpus`` by default, or the files named): a copy with the outline
removed (``doc.set_toc([])``) is parsed as a new user's file would be, and its sections are compared with the
removed outline (nested by numbering where the outline is flat, as the parser does when it reads one):

* recall: the share of outline entries matched by a detected section (same title after folding case, spacing,
  punctuation and a leading number such as ``1.2``, ``Chapter 4`` or ``第 1 章``; on the outline page or the next);
* precision: the share of detected sections that match an outline entry;
* level: of the matches, the share whose depth in the detected tree equals the outline level (depths relative to
  the shallowest level of each);
* placed: the share of passages whose nearest matched section is the outline entry the passage lies under when
  the same file is parsed with its outline (passages found in both parses by their text).

Also reported: stored section titles and passage lines that are printed contents lines (an outline title followed
by dot leaders or its page number), and stored passage lines that are page furniture (a line found in the top or
bottom tenth of 3 pages or more of the original, as PyMuPDF reads it). Figures and commands: docs/eval/tree-quality.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from shelfwise.ingest.model import ParsedDocument, ParsedNode
from shelfwise.ingest.normalize import is_garbled_line
from shelfwise.ingest.pdf import outline_entries
from shelfwise.ingest.registry import parse

_LEAD_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|appendix|part|section|exhibit)\s+[\dA-Z]+(?:[.\-]\d+)*[.:]?|"
    r"第\s*[\d０-９一二三四五六七八九十]+\s*[章節部]|[\dA-Z]{1,3}(?:[.\-]\d+)+\.?|\d+\.?|[A-Z]\.?)"
    r"(?:\s+|(?=[^\x00-\x7f]))",
    re.IGNORECASE,
)
_PAGE_TAIL = re.compile(r"(?:(?:\s*\.){3,}|\s*…|\s)\s*(?:\d{1,4}|[ivxlc]{1,6})$", re.IGNORECASE)


def _is_toc_line(line: str, entry_keys: set[str]) -> bool:
    """A printed contents line: an outline title followed by dot leaders and/or its page number."""
    line = line.strip()
    m = _PAGE_TAIL.search(line)
    return bool(m) and bool(keys(line[: m.start()]) & entry_keys)


def _furniture_lines(pdf: Path, band: float = 0.1) -> set[str]:
    """Lines of text found in the top or bottom tenth of 3 pages or more of the original (running headers and
    footers, as a reader sees them; page numbers are left aside)."""
    seen: dict[str, set[int]] = {}
    with pymupdf.open(str(pdf)) as doc:
        for page in doc:
            h = page.rect.height
            for _x0, y0, _x1, y1, text, _n, kind in page.get_text("blocks"):
                if kind != 0 or (y1 > h * band and y0 < h * (1 - band)):
                    continue
                for ln in text.split("\n"):
                    ln = " ".join(unicodedata.normalize("NFKC", ln).split())
                    if sum(ch.isalpha() for ch in ln) >= 4:
                        seen.setdefault(ln, set()).add(page.number)
    return {ln for ln, pages in seen.items() if len(pages) >= 3}


def keys(title: str) -> set[str]:
    """A title folded for matching: compatibility forms, case, punctuation and spacing, with none, one or two
    leading labels taken off ("Appendix A A sample session" and "A A sample session"; "1段目" is not a label)."""
    text = unicodedata.normalize("NFKC", title).strip()
    out = {re.sub(r"[\W_]+", "", text).lower()}
    for _ in range(2):
        text = _LEAD_NUMBER.sub("", text, count=1)
        out.add(re.sub(r"[\W_]+", "", text).lower())
    return {k for k in out if k}


@dataclass
class Found:
    title: str
    depth: int
    page: int


def sections(doc: ParsedDocument) -> tuple[list[Found], list[tuple[str, int, list[str]]]]:
    """Detected sections (title, depth from 1, first page) and passages (text, page, titles of the sections
    above it, innermost last), in document order."""
    found: list[Found] = []
    passages: list[tuple[str, int, list[str]]] = []

    def walk(nodes: list[ParsedNode], depth: int, path: list[str]) -> None:
        for n in nodes:
            if n.kind == "section":
                found.append(Found(n.title, depth, n.location.page or 0))
                walk(n.children, depth + 1, [*path, n.title])
            else:
                passages.append((n.text, n.location.page or 0, path))

    walk(doc.children, 1, [])
    return found, passages


def hidden_copy(pdf: Path, folder: Path) -> Path:
    out = folder / pdf.name
    with pymupdf.open(str(pdf)) as doc:
        doc.set_toc([])
        doc.save(str(out), garbage=1)
    return out


def _match(entries: list[tuple[int, str, int]], found: list[Found]) -> dict[int, int]:
    """Outline entry index -> detected section index: same key, on the entry's page or the next, in order."""
    found_keys = [keys(f.title) for f in found]
    used: set[int] = set()
    out: dict[int, int] = {}
    for i, (_level, title, page) in enumerate(entries):
        k = keys(title)
        for j, f in enumerate(found):
            if j not in used and page <= f.page <= page + 1 and k & found_keys[j]:
                out[i] = j
                used.add(j)
                break
    return out


def _text_key(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text)).lower()[:80]


def evaluate(pdf: Path, verbose: bool = False) -> dict:
    with pymupdf.open(str(pdf)) as doc:
        entries = [(lv, t, p) for lv, t, p, _y in outline_entries(doc, doc.page_count)]
    if not entries:
        return {"file": pdf.name, "outline": 0}
    with tempfile.TemporaryDirectory() as tmp:
        hidden = parse(hidden_copy(pdf, Path(tmp)))
    reference = parse(pdf)
    found, passages = sections(hidden)
    _ref_found, ref_passages = sections(reference)
    matches = _match(entries, found)
    base_o = min(lv for lv, _t, _p in entries)
    base_f = min((f.depth for f in found), default=1)
    level_ok = sum(
        1 for i, j in matches.items() if entries[i][0] - base_o == found[j].depth - base_f
    )
    # passages under the right heading
    matched_titles = {found[j].title: entries[i][1] for i, j in matches.items()}
    ref_under: dict[tuple[str, int], str] = {}  # by text and page: exhibits repeat the same rows
    for text, page, path in ref_passages:
        ref_under.setdefault((_text_key(text), page), path[-1] if path else "")
    placed = compared = 0
    misplaced: list[str] = []
    for text, page, path in passages:
        want = ref_under.get((_text_key(text), page))
        if want is None:
            continue
        compared += 1
        got = next((matched_titles[t] for t in reversed(path) if t in matched_titles), "")
        placed += got == want
        if got != want:
            misplaced.append(f"p{page} under {got!r}, outline {want!r}: {text[:60]!r}")
    entry_keys = set().union(*(keys(t) for _lv, t, _p in entries))
    toc_sections = [f.title for f in found if _is_toc_line(f.title, entry_keys)]
    toc_passages = [ln for t, _p, _path in passages for ln in t.splitlines() if _is_toc_line(ln, entry_keys)]
    furniture = _furniture_lines(pdf)
    stored_lines = {" ".join(ln.split()) for t, _p, _path in passages for ln in t.splitlines()}
    furniture_stored = sorted(furniture & stored_lines)
    row = {
        "file": pdf.name,
        "outline": len(entries),
        "detected": len(found),
        "matched": len(matches),
        "recall": round(len(matches) / len(entries), 3),
        "precision": round(len(matches) / len(found), 3) if found else 0.0,
        "level": round(level_ok / len(matches), 3) if matches else 0.0,
        "placed": round(placed / compared, 3) if compared else 0.0,
        "passages_compared": compared,
        "passages": len(passages),
        "toc_sections": len(toc_sections),
        "toc_passages": len(toc_passages),
        "furniture_stored": len(furniture_stored),
        "label_sections": sum(1 for f in found if _FIGURE_LABEL.match(f.title.strip())),
    }
    if verbose:
        hit = set(matches)
        row["missed"] = [f"{entries[i][0]} p{entries[i][2]} {entries[i][1]}" for i in range(len(entries))
                         if i not in hit][:60]
        got = set(matches.values())
        row["extra"] = [f"{f.depth} p{f.page} {f.title}" for j, f in enumerate(found) if j not in got][:60]
        row["wrong_level"] = [f"{entries[i][0]}->{found[j].depth} {entries[i][1]}" for i, j in matches.items()
                              if entries[i][0] - base_o != found[j].depth - base_f][:30]
        row["toc_lines"] = (toc_sections + toc_passages)[:10]
        row["furniture_lines"] = furniture_stored[:10]
        row["misplaced"] = misplaced[:15]
    return row


# --- the corpus checks: every bar of issue 37 that is measured on ../shared/corpus, in one run -------------------

_FIGURE_LABEL = re.compile(r"^(?i:figure|fig\.|table|tab\.|listing|chart|diagram|abbildung|tabelle)\s*"
                           r"(?:\d+|[A-Z]\b|[A-Z]?\d+)(?:[-.:]\d+)*|^[図表图]\s*\d")  # "Figure 3-1", "Table A", "図 2"
_SYNTAX_WORDS = {"FOR ROWS", "ENABLE", "DISABLE", "FOR EACH ROW", "ON", "AS"}  # the IBM redpaper's syntax diagram
BUILD_SIMILARITY = 0.9


def _compat_chars(text: str) -> list[str]:
    """Ligatures (U+FB00-FB06, FB13-FB17) and wide/narrow forms (decomposition ``<wide>``/``<narrow>``), read from
    the Unicode data, not from the parser's own table."""
    out = []
    for ch in set(text):
        if ch.isascii():
            continue
        code = ord(ch)
        if 0xFB00 <= code <= 0xFB06 or 0xFB13 <= code <= 0xFB17 or \
                unicodedata.decomposition(ch).split(" ", 1)[0] in ("<wide>", "<narrow>"):
            out.append(ch)
    return out


def _glyph_run(text: str) -> bool:
    """A passage that is mostly one repeated glyph on lines of its own (a diagram's "R R R ...")."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    short = [ln for ln in lines if len(ln) <= 2]
    return len(lines) >= 4 and len(short) >= 0.6 * len(lines) and len({ln for ln in short}) <= 2


def ingest_library(corpus: Path, db: Path) -> dict:
    """``shelfwise --db DB ingest --no-index --json CORPUS`` (the command a user runs; no vectors needed)."""
    import os
    import subprocess

    exe = Path(sys.executable).with_name("shelfwise")
    cmd = [str(exe), "--db", str(db), "ingest", "--no-index", "--json", str(corpus)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}") from None


def corpus_checks(corpus: Path, db: Path, verbose: bool = False) -> dict:
    """Ingest ``corpus`` into the library ``db`` and check the stored nodes (see docs/eval/tree-quality.md)."""
    import difflib
    import sqlite3

    report = ingest_library(corpus, db)
    conn = sqlite3.connect(str(db))
    rows = conn.execute(
        "SELECT d.path, n.kind, n.depth, n.parent_id, n.id, n.title, n.text, n.page FROM nodes n "
        "JOIN documents d ON d.id = n.document_id WHERE n.kind IN ('document', 'section', 'passage') "
        "ORDER BY d.path, n.id"
    ).fetchall()
    conn.close()
    by_doc: dict[str, list[tuple]] = {}
    for r in rows:
        by_doc.setdefault(Path(r[0]).name, []).append(r)
    out: dict = {"corpus": str(corpus), "files": len(report.get("results", [])),
                 "ingested": sum(1 for x in report.get("results", []) if x.get("status") == "ok"),
                 "passages": sum(1 for r in rows if r[1] == "passage")}

    # 1. page furniture: passage lines equal to a running header/footer line of the original PDF
    furniture_rows = []
    for name in sorted(by_doc):
        if not name.lower().endswith(".pdf"):
            continue
        try:
            furniture = _furniture_lines(corpus / name)
        except Exception:
            continue
        stored = [(r[7], " ".join(unicodedata.normalize("NFKC", ln).split()))
                  for r in by_doc[name] if r[1] == "passage" for ln in r[6].splitlines()]
        equal = sorted({f"p{pg} {ln}" for pg, ln in stored if ln in furniture})
        inside = sorted({f"p{pg} {ln[:120]}" for pg, ln in stored
                         if ln not in furniture and any(f in ln for f in furniture)})
        furniture_rows.append({"file": name, "furniture_texts": len(furniture), "lines_stored": len(equal),
                               "inside_longer_lines": len(inside), "examples": equal[:10],
                               "inside_examples": inside[:10] if verbose else inside[:3]})
    out["furniture"] = furniture_rows

    # 1b. printed contents lines stored in the library (PDFs with an outline, read with it, as a user's are)
    toc_rows = []
    for name in sorted(by_doc):
        if not name.lower().endswith(".pdf"):
            continue
        try:
            with pymupdf.open(str(corpus / name)) as doc:
                entries = [t for _lv, t, _p, _y in outline_entries(doc, doc.page_count)]
        except Exception:
            continue
        if not entries:
            continue
        entry_keys = set().union(*(keys(t) for t in entries))
        lines = [f"{r[1]} p{r[7]}: {ln.strip()[:100]}" for r in by_doc[name] if r[1] in ("section", "passage")
                 for ln in (r[5] if r[1] == "section" else r[6]).splitlines() if _is_toc_line(ln, entry_keys)]
        toc_rows.append({"file": name, "contents_lines": len(lines), "examples": lines[:5]})
    out["contents"] = toc_rows

    # 2. ligatures and wide/narrow forms in any stored title or text
    compat = []
    for name, nodes in by_doc.items():
        for r in nodes:
            chars = _compat_chars(r[5] + r[6])
            if chars:
                compat.append(f"{name} {r[1]} p{r[7]}: {''.join(sorted(chars))}")
    out["compat_nodes"] = len(compat)
    out["compat_examples"] = compat[:20]

    # 2b. mojibake (a font with a wrong character map) in any stored line
    garbled = [f"{name} {r[1]} p{r[7]}: {ln.strip()[:60]}" for name, nodes in by_doc.items() for r in nodes
               for ln in (r[5] + "\n" + r[6]).splitlines()
               if is_garbled_line(ln)]
    out["garbled_lines"] = len(garbled)
    out["garbled_examples"] = garbled[:20]

    # 3. animation builds of how-we-refactor.pptx: pairs of passages of >= 0.9 similarity, of consecutive slides
    deck = [r for r in by_doc.get("how-we-refactor.pptx", []) if r[1] == "passage"]
    pairs = []
    for i, a in enumerate(deck):
        for b in deck[i + 1:]:
            ratio = difflib.SequenceMatcher(None, a[6], b[6], autojunk=False).ratio()
            if ratio >= BUILD_SIMILARITY:
                pairs.append({"slides": [a[7], b[7]], "ratio": round(ratio, 3),
                              "consecutive": a[7] is not None and b[7] is not None and abs(a[7] - b[7]) == 1})
    out["deck"] = {"passages": len(deck), "similar_pairs": pairs,
                   "build_pairs": sum(1 for p in pairs if p["consecutive"]),
                   "glyph_run_passages": sum(1 for r in deck if _glyph_run(r[6]))}

    # 4. the IBM redpaper's chapters are siblings
    ibm = by_doc.get("ibm-redp5110-sampled.pdf", [])
    chapters = [(r[2], r[3], r[5]) for r in ibm if r[1] == "section" and re.match(r"chapter\s+\d", r[5], re.I)]
    out["ibm_chapters"] = {"titles": [c[2] for c in chapters], "depths": sorted({c[0] for c in chapters}),
                           "parents": len({c[1] for c in chapters}),
                           "siblings": len(chapters) >= 3 and len({(c[0], c[1]) for c in chapters}) == 1}

    # 5. figure and table labels (and the IBM syntax diagram's words) are not sections
    labels = [f"{name}: {r[5]}" for name, nodes in sorted(by_doc.items()) for r in nodes
              if r[1] == "section" and (_FIGURE_LABEL.match(r[5].strip()) or
                                        (name.startswith("ibm-") and r[5].strip() in _SYNTAX_WORDS))]
    out["label_sections"] = len(labels)
    out["label_examples"] = labels[:20]
    return out


def _bar(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def bars(outline_rows: list[dict], checks: dict) -> list[tuple[str, str, str]]:
    """(bar, figure, met?) for every corpus bar of issue 37."""
    out = []
    for r in outline_rows:
        worst = min(r["recall"], r["precision"], r["level"])
        out.append((f"{r['file']} hidden outline: recall, precision, level >= 0.90",
                    f"{r['recall']:.3f} / {r['precision']:.3f} / {r['level']:.3f}", _bar(worst >= 0.9)))
        out.append((f"{r['file']} printed contents lines stored (sections + passages) = 0",
                    str(r["toc_sections"] + r["toc_passages"]), _bar(r["toc_sections"] + r["toc_passages"] == 0)))
        out.append((f"{r['file']} hidden outline: passage lines holding a running header/footer line = 0",
                    str(r["furniture_stored"]), _bar(r["furniture_stored"] == 0)))
        out.append((f"{r['file']} hidden outline: figure/table labels detected as sections = 0",
                    str(r["label_sections"]), _bar(r["label_sections"] == 0)))
    furn = sum(r["lines_stored"] for r in checks["furniture"])
    out.append(("corpus PDFs: passage lines holding a running header/footer line = 0",
                f"{furn} (in {len(checks['furniture'])} PDFs)", _bar(furn == 0)))
    toc = sum(r["contents_lines"] for r in checks["contents"])
    per_file = ", ".join(f"{r['file']} {r['contents_lines']}" for r in checks["contents"])
    out.append(("library, PDFs with bookmarks: printed contents lines stored (sections + passages) = 0",
                f"{toc} ({per_file})",
                _bar(toc == 0)))
    out.append(("corpus: stored titles/passages with a ligature or wide/narrow form = 0",
                f"{checks['compat_nodes']} of {checks['passages']} passages + titles",
                _bar(checks["compat_nodes"] == 0)))
    out.append(("corpus: stored lines of mojibake (a font's wrong character map) = 0",
                str(checks["garbled_lines"]), _bar(checks["garbled_lines"] == 0)))
    deck = checks["deck"]
    out.append(("how-we-refactor.pptx: pairs of passages >= 0.9 similar from builds (consecutive slides) = 0",
                f"{deck['build_pairs']} (all pairs >= 0.9: {len(deck['similar_pairs'])})",
                _bar(deck["build_pairs"] == 0)))
    out.append(("how-we-refactor.pptx: passages of one repeated glyph = 0", str(deck["glyph_run_passages"]),
                _bar(deck["glyph_run_passages"] == 0)))
    ch = checks["ibm_chapters"]
    out.append(("ibm-redp5110-sampled.pdf: chapters are siblings",
                f"{len(ch['titles'])} chapters at depths {ch['depths']}, {ch['parents']} parent(s)",
                _bar(ch["siblings"])))
    out.append(("corpus library: figure/table labels (and the IBM syntax diagram's words) as sections = 0",
                str(checks["label_sections"]),
                _bar(checks["label_sections"] == 0)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pdfs", nargs="*", type=Path, help="PDFs with an outline (default: every one in --corpus)")
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "corpus")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true", help="list missed, extra and misplaced headings")
    ap.add_argument("--corpus-checks", action="store_true",
                    help="also ingest --corpus into a scratch library (--db) and check every corpus bar of issue 37")
    ap.add_argument("--db", type=Path, help="the scratch library for --corpus-checks (default: a temporary one)")
    args = ap.parse_args(argv)
    pdfs = args.pdfs or sorted(args.corpus.glob("*.pdf"))
    rows = []
    for pdf in pdfs:
        try:
            with pymupdf.open(str(pdf)) as doc:
                if not doc.get_toc():
                    continue
        except Exception:
            continue
        row = evaluate(pdf, args.verbose)
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False, indent=1 if args.verbose else None), flush=True)
    print("\n| PDF | outline | detected | recall | precision | level | placed | contents lines stored | "
          "furniture lines stored |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['file']} | {r['outline']} | {r['detected']} | {r['recall']:.3f} | {r['precision']:.3f} | "
              f"{r['level']:.3f} | {r['placed']:.3f} | {r['toc_sections'] + r['toc_passages']} | "
              f"{r['furniture_stored']} |")
    result: list | dict = rows
    if args.corpus_checks:
        with tempfile.TemporaryDirectory() as tmp:
            db = args.db or Path(tmp) / "library.db"
            checks = corpus_checks(args.corpus, db, args.verbose)
        table = bars(rows, checks)
        print("\n| bar | figure | |\n|---|---|---|")
        for name, figure, met in table:
            print(f"| {name} | {figure} | {met} |")
        print(json.dumps({k: v for k, v in checks.items() if k not in ("furniture", "contents")}, ensure_ascii=False,
                         indent=1))
        for r in checks["contents"]:
            print(json.dumps(r, ensure_ascii=False))
        for r in checks["furniture"]:
            print(json.dumps(r, ensure_ascii=False))
        result = {"outline": rows, "corpus": checks, "bars": [dict(zip(("bar", "figure", "met"), b, strict=True))
                                                               for b in table]}
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    return 0 if not args.corpus_checks or all(b[2] == "met" for b in table) else 1


if __name__ == "__main__":
    sys.exit(main())
