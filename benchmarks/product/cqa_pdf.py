"""The ConditionalQA guides as files a user would have: PDFs without bookmarks, and the same guides as Markdown.

    .venv/bin/python benchmarks/product/cqa_pdf.py OUT [--split test]

Writes ``OUT/pdf/<guide>.pdf`` (laid out from the guide's HTML by PyMuPDF's Story: h1/h2/h3 as headings, no
outline; the guide's title in the metadata), ``OUT/md/<guide>.md`` (the same items as Markdown headings, lists and
paragraphs, the title in front matter), and ``OUT/questions-<split>-{pdf,md}.jsonl``: each answerable question of the
split (scenario and question, as ``shelfwise eval conditionalqa`` asks them) with its file, its first gold evidence
sentence and that evidence's innermost heading. Then, for each format:

    shelfwise --db OUT/pdf.db ingest OUT/pdf && shelfwise --db OUT/pdf.db index
    shelfwise --db OUT/pdf.db eval OUT/questions-test-pdf.jsonl --json

Figures: docs/eval/tree-quality.md.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path

import pymupdf

from shelfwise.evaluation.datasets import conditionalqa_split

ROOT = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "conditionalqa_dev" / "derived"
_TAG = re.compile(r"^<(\w+)>(.*)</\1>$", re.DOTALL)
CSS = "body {font-family: sans-serif; font-size: 10pt;} h1 {font-size: 17pt;} h2 {font-size: 14pt;} " \
      "h3 {font-size: 12pt;} p, li {margin-bottom: 4pt;}"


def _item(raw: str) -> tuple[str, str]:
    m = _TAG.match(raw.strip())
    tag, inner = (m.group(1), m.group(2)) if m else ("p", raw)
    if tag == "tr":
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.split(r"</t[dh]>", inner)]
        return "p", " | ".join(c for c in cells if c)
    return tag, " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inner)).split())


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]


def write_pdf(path: Path, title: str, contents: list[str]) -> None:
    parts = []
    for raw in contents:
        tag, text = _item(raw)
        if not text:
            continue
        tag = tag if tag in ("h1", "h2", "h3") else "p"
        text = html.escape(text)
        parts.append(f"<ul><li>{text}</li></ul>" if _item(raw)[0] == "li" else f"<{tag}>{text}</{tag}>")
    story = pymupdf.Story(html="".join(parts), user_css=CSS)
    tmp = path.with_suffix(".tmp.pdf")
    writer = pymupdf.DocumentWriter(str(tmp))
    box = pymupdf.paper_rect("a4")
    where = pymupdf.Rect(box.x0 + 56, box.y0 + 56, box.x1 - 56, box.y1 - 56)
    more = True
    while more:
        dev = writer.begin_page(box)
        more, _ = story.place(where)
        story.draw(dev)
        writer.end_page()
    writer.close()
    with pymupdf.open(str(tmp)) as doc:
        doc.set_metadata({"title": title})
        doc.save(str(path))
    tmp.unlink()


def write_md(path: Path, title: str, contents: list[str]) -> None:
    lines = ["---", f"title: {title}", "---", ""]
    for raw in contents:
        tag, text = _item(raw)
        if not text:
            continue
        if tag in ("h1", "h2", "h3"):
            lines += ["#" * int(tag[1]) + " " + text, ""]
        elif tag == "li":
            lines += [f"- {text}", ""]
        else:
            lines += [text, ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--split", default="test", choices=["tune", "test", "all"])
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    docs = json.loads((args.root / "documents_dev.json").read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for fmt in ("pdf", "md"):
        (args.out / fmt).mkdir(parents=True, exist_ok=True)
    for d in docs:
        name = names[d["url"]] = slug(d["title"])
        write_pdf(args.out / "pdf" / f"{name}.pdf", d["title"], d["contents"])
        write_md(args.out / "md" / f"{name}.md", d["title"], d["contents"])
    rows = []
    with (args.root / "dev_gold.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["not_answerable"] or not q["evidences"]:
                continue
            if args.split != "all" and conditionalqa_split(q["url"]) != args.split:
                continue
            ev = q["evidences"][0]
            rows.append({"id": q["id"], "question": f"{q['scenario'].strip()} {q['question'].strip()}".strip(),
                         "name": names[q["url"]], "evidence": _item(ev["text"])[1],
                         "heading": _item("<h1>" + ev["section_path"][-1] + "</h1>")[1] if ev["section_path"]
                         else ""})
    for fmt in ("pdf", "md"):
        with (args.out / f"questions-{args.split}-{fmt}.jsonl").open("w", encoding="utf-8") as fh:
            for r in rows:
                obj = {"id": r["id"], "question": r["question"], "file": f"{r['name']}.{fmt}",
                       "evidence": r["evidence"]}
                if r["heading"]:
                    obj["location"] = {"heading": r["heading"]}
                fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    print(f"{len(docs)} guides, {len(rows)} questions ({args.split}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
