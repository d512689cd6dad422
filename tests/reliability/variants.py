"""A generator of hostile inputs by kind: file names, text encodings, special files and deep trees.

Every run draws new variants from a seed (``SHELFWISE_FUZZ_SEED``, else the time) and prints it, so a failure
can be replayed: ``SHELFWISE_FUZZ_SEED=1234 pytest tests/reliability/test_variants.py``. The kinds:

- names: newlines, tabs, carriage returns, bidi controls (U+202E ...), zero-width and terminal escapes, bytes that
  are not UTF-8, very long names, spaces and dots at the ends, CJK and combining characters;
- encodings: UTF-8 (with and without a BOM), UTF-16/32 with and without a BOM, Windows-1252, Shift-JIS, GBK,
  KOI8-R, mixed UTF-8 and Windows-1252 lines, NUL bytes between words, random bytes;
- special files: FIFOs, sockets, symlinks to /dev/zero and /dev/null, loops, broken links, links that leave the
  folder, links to folders;
- deep trees: folders nested past what the system can name (``PATH_MAX``), made and removed through directory
  file descriptors.

Each generated entry comes with what a correct ingest must do with it (:class:`Variant.expect`): ``"ok"`` (stored
with its words findable), ``"refused"`` (a status line, not stored as ok) or ``"any"`` (either, with a status).
"""

from __future__ import annotations

import os
import random
import socket
import time
from dataclasses import dataclass
from pathlib import Path

WORDS = ("annual leave policy travel meals receipts approval manager week days office parking visitors "
         "password reset laptop security holiday claim expenses budget contract trustee").split()

NAME_TRICKS = (
    "\n", "\t", "\r", "\u202e", "\u202d", "\u2066", "\u2069", "\u200b", "\u200f", "\x1b[31m", "\x07",
    "\u2028", "\ufeff", "\x7f",
)


def seed_from_env() -> int:
    raw = os.environ.get("SHELFWISE_FUZZ_SEED", "")
    return int(raw) if raw.strip() else int(time.time()) % 1_000_000


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def hostile_name(rng: random.Random, ext: str = ".txt") -> str:
    """A file name with one or more tricks in it (always valid on Linux: no "/" and no NUL)."""
    stem = rng.choice(WORDS)
    for _ in range(rng.randint(1, 3)):
        trick = rng.choice((*NAME_TRICKS, "bytes", "long", "cjk", "combining", "ends"))
        if trick == "bytes":
            stem += bytes([rng.randint(0x80, 0xFF)]).decode("utf-8", "surrogateescape")
        elif trick == "long":
            stem += "x" * rng.randint(100, 200)
        elif trick == "cjk":
            stem += rng.choice(("年次休暇", "差旅报销", "휴가"))
        elif trick == "combining":
            stem += "e\u0301\u0308"
        elif trick == "ends":
            stem = f" {stem}. "
        else:
            stem += trick + rng.choice(WORDS)
    if "\u202e" in stem:
        ext = ".txt"  # the classic: "report\u202etxt.exe" shown as "reportexe.txt"
    name = stem + ext
    name = name if len(os.fsencode(name)) < 250 else name[:200] + ext
    # as a directory listing gives it back: two "bytes" tricks in a row can form a valid UTF-8 sequence
    # (0xC7 0xBD is "ǽ"), which the file system then reports decoded
    return os.fsdecode(os.fsencode(name))


# --------------------------------------------------------------------------- encodings
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "cp1252", "shift_jis", "gbk",
             "koi8-r", "mixed", "nul-words", "random")

_SAMPLES = {
    "shift_jis": "年次休暇は毎年二十日です。申請は上司の承認が必要です。",
    "gbk": "每日餐费上限为四十欧元。出差报销需要经理批准。",
    "koi8-r": "Ежегодный отпуск составляет двадцать дней. Заявление утверждает руководитель.",
    "cp1252": "Grüße aus Köln: très bien, naïve café, déjà vu, Straße und Übung.",
}


@dataclass
class Variant:
    path: Path
    kind: str  # "name" | "encoding:<enc>" | "special:<what>" | "deep"
    expect: str  # "ok" | "refused" | "any"
    words: tuple[str, ...] = ()  # words a search must find when it is stored ok


def encoded_file(path: Path, enc: str, rng: random.Random) -> Variant:
    """A text file in ``enc`` (one of :data:`ENCODINGS`), with what must come of it."""
    lines = [sentence(rng) for _ in range(rng.randint(3, 30))]
    text = "\n".join(lines) + "\n"
    words: tuple[str, ...] = ()
    expect = "ok"
    if enc in _SAMPLES:
        text = "\n".join([_SAMPLES[enc]] * rng.randint(3, 20)) + "\n"
        data = text.encode(enc)
        expect = "any"  # a legacy code page without a BOM: read with a warning, or refused; never garbage "ok"
    elif enc == "mixed":  # UTF-8 lines and Windows-1252 lines in one file
        data = b"".join((ln + " café\n").encode(rng.choice(("utf-8", "cp1252"))) for ln in lines)
        words = (lines[0].split()[1].lower(),)
    elif enc == "nul-words":
        data = b"\x00".join(text.encode().split(b" "))
        expect = "any"
        words = (lines[0].split()[1].lower(),)
    elif enc == "random":
        data = bytes(rng.randint(1, 255) for _ in range(rng.randint(200, 4000)))
        expect = "refused"
    else:
        data = text.encode(enc)
        words = (lines[0].split()[1].lower(),)
    path.write_bytes(data)
    return Variant(path, f"encoding:{enc}", expect, words)


# --------------------------------------------------------------------------- special files
SPECIALS = ("fifo", "socket", "dev-zero", "dev-null", "loop", "broken", "outside", "folder-link")


def special_file(folder: Path, what: str, rng: random.Random, outside: Path) -> tuple[Variant, object]:
    """A special entry in ``folder`` named like a document; returns it and what must be kept open (a socket)."""
    name = f"{rng.choice(WORDS)}-{what}-{rng.randint(0, 10**6)}.txt"
    p = folder / name
    keep: object = None
    if what == "fifo":
        os.mkfifo(p)
    elif what == "socket":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(str(p))
        except OSError:  # a path too long for AF_UNIX: a FIFO instead
            s.close()
            os.mkfifo(p)
        else:
            keep = s
    elif what == "dev-zero":
        p.symlink_to("/dev/zero")
    elif what == "dev-null":
        p.symlink_to("/dev/null")
    elif what == "loop":
        q = folder / (name + ".other.txt")
        p.symlink_to(q.name)
        q.symlink_to(p.name)
    elif what == "broken":
        p.symlink_to(folder / "does-not-exist.txt")
    elif what == "outside":
        target = outside / f"secret-{rng.randint(0, 10**6)}.txt"
        target.write_text("A file outside the folder given.\n")
        p.symlink_to(target)
    elif what == "folder-link":
        p = folder / f"link-{rng.randint(0, 10**6)}"
        p.symlink_to(folder)
    return Variant(p, f"special:{what}", "refused"), keep


# --------------------------------------------------------------------------- deep trees
def deep_tree(top: Path, depth: int, name: str = "d", every: int = 0, text: str = "") -> list[Path]:
    """Folders nested ``depth`` levels under ``top`` (made through directory file descriptors, so past PATH_MAX),
    a ``top.txt`` at the top, and a text file every ``every`` levels; returns the files whose paths the system
    can still name."""
    top.mkdir(parents=True, exist_ok=True)
    text = text or "Deep tree file about the annual leave policy.\n"
    made = [top / "top.txt"]
    made[0].write_text(text)
    fd = os.open(top, os.O_RDONLY)
    path = str(top)
    try:
        for level in range(1, depth + 1):
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
            path = f"{path}/{name}"
            if every and level % every == 0:
                fname = f"level{level}.txt"
                wfd = os.open(fname, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(wfd, text.encode())
                os.close(wfd)
                if len(os.fsencode(f"{path}/{fname}")) < os.pathconf("/", "PC_PATH_MAX"):
                    made.append(Path(path) / fname)
    finally:
        os.close(fd)
    return made


def remove_deep(top: Path, name: str = "d") -> None:
    """Remove what :func:`deep_tree` made, without recursion (``shutil.rmtree`` recurses per level)."""
    if not top.exists():
        return
    fds = [os.open(top, os.O_RDONLY)]
    try:
        while True:  # down to the bottom, holding each level open
            try:
                fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            except (FileNotFoundError, NotADirectoryError):
                break
        while fds:  # then up: each level's files, then the level itself
            fd = fds.pop()
            for entry in os.listdir(fd):
                try:
                    os.unlink(entry, dir_fd=fd)
                except (IsADirectoryError, PermissionError):
                    os.rmdir(entry, dir_fd=fd)
            os.close(fd)
            if fds:
                os.rmdir(name, dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)
    top.rmdir()


# --------------------------------------------------------------------------- one generated batch
@dataclass
class Batch:
    seed: int
    folder: Path
    variants: list[Variant]
    keep: list[object]

    def close(self) -> None:
        for k in self.keep:
            close = getattr(k, "close", None)
            if close is not None:
                close()


def batch(folder: Path, outside: Path, seed: int, n_names: int = 6, n_encodings: int = 8,
          n_specials: int = 5) -> Batch:
    """One folder of generated variants of every kind except deep trees (those take a folder of their own)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    out: list[Variant] = []
    keep: list[object] = []
    for _ in range(n_names):
        name = hostile_name(rng)
        p = folder / name
        if p.exists():
            continue
        line = sentence(rng)
        p.write_text(line + "\n" + sentence(rng) + "\n", encoding="utf-8")
        out.append(Variant(p, "name", "ok", (line.split()[1].lower(),)))
    for i in range(n_encodings):
        enc = rng.choice(ENCODINGS)
        out.append(encoded_file(folder / f"enc-{i}-{enc}.txt", enc, rng))
    for _ in range(n_specials):
        v, k = special_file(folder, rng.choice(SPECIALS), rng, outside)
        out.append(v)
        if k is not None:
            keep.append(k)
    return Batch(seed, folder, out, keep)
