"""games.jsonl: one line per finished game, appended and flushed as each game ends.

A line is written whole with one `write` and flushed with fsync, so a killed harness leaves
at worst one torn last line; `read_journal` drops it (and truncates it away), and the next
run plays that game again. A game is never recorded twice.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson


class JournalError(ValueError):
    """A games.jsonl that does not belong to this tournament or cannot be read."""


def read_journal(path: Path, repair: bool = True) -> dict[int, dict[str, Any]]:
    """Finished games by index. A torn last line is dropped (and cut off if `repair`);
    a damaged line elsewhere is an error, since that is not how this file is written."""
    if not path.exists():
        return {}
    data = path.read_bytes()
    games: dict[int, dict[str, Any]] = {}
    good_end = 0
    pos = 0
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        if not line.strip():
            pos += len(line) + 1
            if not last:
                good_end = pos
            continue
        try:
            rec = orjson.loads(line)
            if not isinstance(rec, dict) or not isinstance(rec.get("id"), int):
                raise ValueError("not a game record")
            if last and not data.endswith(b"\n"):
                raise ValueError("torn")  # written without its newline: incomplete
        except (orjson.JSONDecodeError, ValueError) as e:
            if last or (i == len(lines) - 2 and not lines[-1]):
                break  # the torn tail of an interrupted write
            raise JournalError(f"{path}: line {i + 1} is not a game record ({e}); the file was changed by hand?") from None
        if rec["id"] in games:
            raise JournalError(f"{path}: game {rec['id']} is recorded twice (line {i + 1})")
        games[rec["id"]] = rec
        pos += len(line) + 1
        good_end = pos
    if repair and good_end < len(data):
        with open(path, "r+b") as f:
            f.truncate(good_end)
    return games


class Journal:
    """Appends game records to games.jsonl durably."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._f = open(path, "ab")

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line and make it durable."""
        self._f.write(orjson.dumps(record) + b"\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        """Close the file."""
        self._f.close()
