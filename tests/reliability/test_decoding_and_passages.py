"""Issue 27, case 6 and the decoding / passage kinds: text is never stored "ok" as garbage (a decoding whose letters
are not mostly of one script is rejected or the next reading is tried; UTF-8 mixed with Windows-1252 is read
character by character in the encoding each is valid in); no passage is longer than the embedder reads (one
spreadsheet cell of megabytes); a long unspaced CJK line parses about as fast as ASCII. Real parsers, real files."""

from __future__ import annotations

import math
import random
import time
import zipfile
from pathlib import Path

from openpyxl import Workbook

from shelfwise.ingest import registry
from shelfwise.ingest.model import Limits
from shelfwise.ingest.passages import _CJK, estimate_tokens

TEXT = ("The annual leave policy gives every employee twenty days of paid leave each year. Requests go to the "
        "line manager two weeks ahead. Unused days carry over to the first quarter of the next year.\n")


def _text(doc) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(n.text for n in doc.nodes() if n.kind == "passage")


def test_text_with_nul_bytes_between_words_is_read_as_words_not_utf16_garbage(tmp_path: Path) -> None:
    # Case 6: stored "ok" as CJK garbage (read as UTF-16BE), nothing in it findable
    f = tmp_path / "nul.txt"
    f.write_bytes(b"\x00".join((TEXT * 20).encode().split(b" ")))
    doc = registry.parse(f)
    text = _text(doc)
    assert "annual leave policy" in " ".join(text.split()), text[:200]
    assert not any("\u3400" <= ch <= "\u9fff" for ch in text)  # no "ideographs" made of ASCII pairs
    assert any("NUL" in w for w in doc.warnings), doc.warnings


def test_utf16_readings_of_ascii_pairs_are_rejected(tmp_path: Path) -> None:
    # ASCII read two bytes at a time is all ideographs ("an" = U+616E): not a reading to keep
    f = tmp_path / "pairs.txt"
    f.write_bytes(b"\x00" + (TEXT * 30).encode()[:-1])  # one NUL at the start: no parity pattern
    doc = registry.parse(f)
    assert "annual leave" in _text(doc)


def test_real_utf16_cjk_and_latin_still_read(tmp_path: Path) -> None:
    ja = "年次休暇は毎年二十日です。申請は二週間前までに上司へ提出してください。\n" * 40
    for enc in ("utf-16-le", "utf-16-be"):
        f = tmp_path / f"ja-{enc}.txt"
        f.write_bytes(ja.encode(enc))
        assert "年次休暇は毎年二十日です" in _text(registry.parse(f))
        g = tmp_path / f"en-{enc}.txt"
        g.write_bytes((TEXT * 10).encode(enc))
        assert "annual leave policy" in _text(registry.parse(g))


def test_mixed_utf8_and_windows_1252_lines_are_each_read_right(tmp_path: Path) -> None:
    f = tmp_path / "mixed.txt"
    f.write_bytes("Café crème au déjeuner, naïve façade.\n".encode() * 10
                  + "Grüße aus Köln, Straße und Übung.\n".encode("cp1252") * 10)
    doc = registry.parse(f)
    text = _text(doc)
    assert "Café crème" in text and "Grüße aus Köln" in text, text[:300]
    assert "Ã" not in text  # no mojibake of the UTF-8 lines
    assert any("mixed UTF-8 and Windows-1252" in w for w in doc.warnings), doc.warnings


def test_legacy_cjk_bytes_are_refused_with_advice_not_stored_as_latin_garbage(tmp_path: Path) -> None:
    f = tmp_path / "sjis.txt"
    f.write_bytes(("年次休暇は毎年二十日です。" * 50 + "\n").encode("shift_jis"))
    try:
        doc = registry.parse(f)
    except Exception as exc:
        assert "UTF-8" in str(exc), exc
    else:  # if read at all, it must read as Japanese
        assert "年次休暇" in _text(doc)


def big_cell_xlsx(path: Path, chars: int) -> Path:
    """A workbook whose one cell holds ``chars`` characters (Excel and openpyxl stop at 32,767 when writing; a
    file made elsewhere need not): saved with a placeholder, then the shared string replaced in the zip."""
    rng = random.Random(7)
    words = ("contractor shall deliver goods warehouse within thirty days invoice payment clause penalty "
             "delay notice written approval inspection quality standard").split()
    text = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + ". "
        text.append(sentence)
        size += len(sentence)
    wb = Workbook()
    wb.active["A1"] = "PLACEHOLDER"
    tmp = path.with_suffix(".tmp.xlsx")
    wb.save(tmp)
    with zipfile.ZipFile(tmp) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if b"PLACEHOLDER" in data:
                data = data.replace(b"PLACEHOLDER", "".join(text)[:chars].encode())
            dst.writestr(info, data)
    tmp.unlink()
    return path


def test_a_5_mb_spreadsheet_cell_is_split_into_passages_the_embedder_reads_whole(tmp_path: Path) -> None:
    # Weak case: one 5-million-character passage that `ask` could not find
    f = big_cell_xlsx(tmp_path / "cell.xlsx", 5_000_000)
    limits = Limits()
    doc = registry.parse(f, limits)
    passages = [n.text for n in doc.nodes() if n.kind == "passage"]
    assert len(passages) > 3000, len(passages)
    assert max(estimate_tokens(p) for p in passages) <= limits.passage_tokens
    assert max(len(p) for p in passages) < 2000
    assert all(p.rstrip().endswith(".") for p in passages[:-1][:200])  # cut at sentence ends


def test_a_long_unspaced_cjk_line_parses_about_as_fast_as_ascii(tmp_path: Path) -> None:
    # Weak case: a 10 MB CJK line was 20x slower than ASCII (the split searched the whole rest for each piece);
    # 1 MB each here, and the ratio, not a time, is asserted
    cjk = tmp_path / "cjk.txt"
    cjk.write_text("年次休暇申請書類提出期限上司承認必要" * (1_000_000 // 54) + "\n", encoding="utf-8")
    ascii_ = tmp_path / "ascii.txt"
    ascii_.write_text(("annual leave request form due " * (1_000_000 // 30)) + "\n")
    times = {}
    for f in (cjk, ascii_):
        t0 = time.perf_counter()
        doc = registry.parse(f)
        times[f.stem] = time.perf_counter() - t0
        assert doc.count("passage") > 100
    assert times["cjk"] < 3 * times["ascii"] + 0.5, times


def test_the_token_estimate_is_its_definition_on_mixed_text() -> None:
    # estimate_tokens replaces CJK runs whole (for speed); the definition replaces them one character at a time
    def by_definition(text: str) -> int:
        rest, cjk = _CJK.subn(" ", text)
        return cjk + max(math.ceil(len(rest.split()) * 1.3), math.ceil(len(rest.strip()) / 4))

    rng = random.Random(27)
    alphabet = ["a", "bc", " ", "\n", "\t", "\u3000", "\u2028", "\x1c", ".", "年", "次", "휴", "ア", "ｱ", "。", "、",
                "é"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert estimate_tokens(text) == by_definition(text), repr(text)
