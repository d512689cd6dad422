"""The tree Shelfwise detects in a PDF without bookmarks, compared with the outline its author wrote.

    .venv/bin/python benchmarks/tree_quality.py [PDF ...] [--corpus ../shared/corpus] [--out FILE.json] [-v]

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pdfs", nargs="*", type=Path, help="PDFs with an outline (default: every one in --corpus)")
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true", help="list missed, extra and misplaced headings")
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
    if args.out:
        args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
