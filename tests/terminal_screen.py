"""What a terminal shows after a command's output: the few control sequences the command line writes (carriage
return, cursor up, erase to the end of the screen) acted on, long lines wrapped at the terminal's width. For the
tests of an answer streamed and then withdrawn (tests/test_cli_stream.py, tests/test_cli_terminal.py)."""

from __future__ import annotations


def screen(out: str, columns: int = 80) -> str:
    """What a terminal ``columns`` wide shows after ``out``: carriage return, cursor up (CSI n A) and erase to the
    end of the screen (CSI J) acted on, as StreamedAnswer uses them; long lines wrapped."""
    rows, r, col = [""], 0, 0

    def down() -> None:
        nonlocal r
        r += 1
        if r == len(rows):
            rows.append("")

    i = 0
    while i < len(out):
        if out.startswith("\x1b[", i):
            j = i + 2
            while out[j].isdigit():
                j += 1
            n, cmd = int(out[i + 2:j] or 1), out[j]
            if cmd == "A":
                r = max(0, r - n)
            elif cmd == "J":
                rows[r] = rows[r][:col]
                del rows[r + 1:]
            i = j + 1
            continue
        ch = out[i]
        if ch == "\n":
            down()
            col = 0
        elif ch == "\r":
            col = 0
        else:
            if col == columns:
                down()
                col = 0
            rows[r] = rows[r][:col].ljust(col) + ch + rows[r][col + 1:]
            col += 1
        i += 1
    return "\n".join(rows)
