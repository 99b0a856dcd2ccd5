"""A bot's stderr as the host reads it: its bytes with every control character made
visible (`text.printable_lines`; bytes that are not UTF-8 as `\\xNN`), each of its lines
after `BOT`, so that a line of the harness's own (after `NOTE`, at the start of a line)
is one no bot can write."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from ..text import printable, printable_lines, utf8_decoder

BOT = "| "
"""What starts every line a bot wrote."""
NOTE = "[p10-tourney] "
"""What starts every line of the harness's own in a bot's log."""
CAP_NOTE = "stderr log cap reached; the rest is dropped"
NOTES_CAP = 64 << 10
"""Bytes of the harness's own notes a log takes, apart from the bot's cap."""


class BotLines:
    """A bot's stderr, a piece at a time, as printable text whose every line starts with
    `prefix` (its lines may be cut anywhere: what `feed` returns carries on the line where
    the last piece stopped)."""

    def __init__(self, prefix: str = BOT) -> None:
        self.prefix = prefix
        self._decode = utf8_decoder()
        self.mid_line = False  # what was returned last did not end a line

    def feed(self, chunk: bytes, final: bool = False) -> str:
        """The printable text of `chunk` (with `final`, also of the end of a character
        an earlier piece began)."""
        text = printable_lines(self._decode(chunk, final))
        if not text:
            return ""
        out = text.replace("\n", "\n" + self.prefix)
        if not self.mid_line:
            out = self.prefix + out
        self.mid_line = not text.endswith("\n")
        return out if self.mid_line else out[: -len(self.prefix)]

    def end_line(self) -> str:
        """What ends the line the bot's text stopped in ("\\n", or nothing at a line's start)."""
        if not self.mid_line:
            return ""
        self.mid_line = False
        return "\n"


class StderrLog:
    """A bot's stderr log file: `write` the bot's bytes (as `BotLines`), `note` a line of
    the harness's own. At most `cap` bytes of the bot's are written (counted as written,
    made printable), then one note says the rest is dropped; the harness's notes go on
    (up to `NOTES_CAP` of their own). The file is opened (for appending) at the first line, and again after `close`."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self.cap = cap
        self.written = 0
        self.noted = 0  # bytes of the harness's notes (`NOTES_CAP`)
        self.lines = BotLines()
        self._file: IO[bytes] | None = None

    def _open(self) -> IO[bytes]:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a+b")
            if self._file.tell() and not self.lines.mid_line:
                self._file.seek(-1, 2)  # a file whose last line a run killed mid-line left open
                self.lines.mid_line = self._file.read(1) != b"\n"
        return self._file

    @property
    def full(self) -> bool:
        """The cap is reached: nothing more is written."""
        return self.written >= self.cap

    def write(self, chunk: bytes) -> None:
        """Add what the bot wrote to stderr (up to the cap)."""
        if not self.full:
            self._put(self.lines.feed(chunk))

    def note(self, text: str) -> None:
        """Add a line of the harness's own, on a line of its own (a character the bot's
        last piece began is ended first, as not UTF-8). Notes have a budget of their own
        (`NOTES_CAP`): a bot that fills its cap cannot keep the harness's later notes (a
        watchdog's reason, how it ended) out of its log."""
        self._put(self.lines.feed(b"", final=True))
        if self.noted < NOTES_CAP:
            self.noted += len(text) + 1
            self._note(text)

    def _note(self, text: str) -> None:
        f = self._open()
        f.write((self.lines.end_line() + NOTE + printable(text) + "\n").encode())
        f.flush()

    def _put(self, text: str) -> None:
        if not text or self.full:
            return
        data = text.encode()
        f = self._open()
        room = self.cap - self.written
        if len(data) < room:
            f.write(data)
            f.flush()
            self.written += len(data)
            return
        cut = data[:room].decode("utf-8", "ignore")  # (only a character cut in two is left out)
        if cut:
            f.write(cut.encode())
            self.lines.mid_line = not cut.endswith("\n")
        self._note(CAP_NOTE)
        self.written = self.cap

    def close(self) -> None:
        """Close the file (a later line opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None
