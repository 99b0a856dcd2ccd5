"""games.jsonl: one line per finished game, appended and flushed as each game ends, each
line chained by hash to the line before.

A line is written whole with one `write` and flushed with fsync, so a killed harness leaves
at worst one torn last line (one without its newline); `read_journal` drops it (and
truncates it away), and the next run plays that game again. A game is never recorded twice.

The hash chain (format `p10-chain/2`): a line is the game record as compact JSON with one
more key at its end, `"chain"`, the SHA-256 (hex) of the previous link, a newline, and the
line's bytes up to that key (the record as written, with `}` in place of
`,"chain":"…"}`):

    chain(line k) = sha256(chain(line k-1) + "\\n" + record bytes of line k)

The link before line 1, the *genesis*, binds the chain to its tournament:
`sha256("p10-chain/2\\n" + config_sha256 + "\\n" + seed_sha256 + "\\n" + settings_sha256)`,
from tournament.json: the first config (`chain_config_sha256` once it changed), the
seed's commitment, and the settings (`chain_settings_sha256`: everything in the config
but the bots and a random or league tournament's budget, which may not change between
runs over a folder). A folder of format `p10-chain/1` (written
before the settings were bound) has `sha256("p10-chain/1\\n" + config_sha256 + "\\n" +
seed_sha256)`. Editing, deleting, inserting or reordering lines, or appending one not
written by the runner, breaks the chain at the first line changed. The hash covers
everything in the line, the game's duration and the order games finished in too, so
two runs of one tournament have different chains; `results_digest` is the hash of what
is the same in both (the records in game order, without durations and chain).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping

import orjson

from ..report.files import MAX_LINE, NotAFileError, open_plain
from ..spill import IndexSet

CHAIN_FORMAT = "p10-chain/2"
CHAIN_FORMATS = ("p10-chain/1", CHAIN_FORMAT)
"""The chain formats read: /1 did not bind the settings."""
_TAIL = re.compile(rb',"chain":"([0-9a-f]{64})"\}$')


class JournalError(ValueError):
    """A games.jsonl that does not belong to this tournament or cannot be read."""


class ChainError(JournalError):
    """A games.jsonl whose hash chain is broken: it was changed after it was written."""


def genesis(config_sha256: str, seed_sha256: str, settings_sha256: str | None = None) -> str:
    """The link before the first line: the config's hash, the seed's commitment and the
    settings' hash (without them: the genesis of format `p10-chain/1`)."""
    if settings_sha256 is None:
        return hashlib.sha256(f"p10-chain/1\n{config_sha256}\n{seed_sha256}".encode()).hexdigest()
    return hashlib.sha256(f"{CHAIN_FORMAT}\n{config_sha256}\n{seed_sha256}\n{settings_sha256}".encode()).hexdigest()


def link(prev: str, body: bytes) -> str:
    """The chain hash of a line whose record bytes are `body`, after link `prev`."""
    return hashlib.sha256(prev.encode() + b"\n" + body).hexdigest()


def chained_line(prev: str, record: Mapping[str, Any]) -> tuple[bytes, str]:
    """(the line to write without its newline, its chain hash) of `record` after `prev`."""
    body = orjson.dumps({k: v for k, v in record.items() if k != "chain"})
    h = link(prev, body)
    return body[:-1] + b',"chain":"' + h.encode() + b'"}', h


UNDIGESTED = ("duration_s", "replay_sha256", "chain")
"""A record's fields that depend on timing (the replay records its messages' times), or
on the lines before it: left out of `results_digest`."""


def digest_bytes(record: Mapping[str, Any]) -> bytes:
    """What `results_digest` hashes of one record: it without the `UNDIGESTED` fields."""
    return orjson.dumps({k: v for k, v in record.items() if k not in UNDIGESTED}) + b"\n"


def results_digest(records: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 of the game records in game order, without `duration_s`, `replay_sha256`
    and `chain`: the same for every run of one tournament with deterministic bots,
    whatever `parallel`."""
    h = hashlib.sha256()
    for r in sorted(records, key=lambda r: r["id"]):
        h.update(digest_bytes(r))
    return h.hexdigest()


class JournalState:
    """What reading games.jsonl found: the records by game index (without `chain`), the
    chain's last link, and the link after each line (`links[k-1]`: after line k)."""

    def __init__(self, games: dict[int, dict[str, Any]], head: str | None, links: list[str],
                 lines: int | None = None, marks: dict[int, str] | None = None, top: int | None = None,
                 torn: int = 0) -> None:
        self.games = games
        self.head = head
        self.links = links
        self.lines = len(links) if lines is None else lines  # whole lines read
        self.marks = marks or {}  # without `links`: the link after some lines, by line number
        self.top = max(games, default=-1) if top is None else top  # the highest game index read
        self.torn = torn  # bytes left after the last whole line (not cut off)

    def link_after(self, line: int) -> str | None:
        """The chain link after line `line` (1-based), if it was kept."""
        if self.links:
            return self.links[line - 1] if 0 < line <= len(self.links) else None
        return self.marks.get(line)


MAX_GAMES = 1 << 30  # game indices are below this (the sets of games done are bitmaps of it: 128 MB at most)


def _checked(line: bytes, n: int, prev: str | None, path: Path) -> tuple[dict[str, Any], str]:
    """The record of line `n` (without `chain`) and its link, checked against `prev`
    (None: not checked); raises `JournalError` / `ChainError` as `read_chain` does."""
    try:
        rec = orjson.loads(line)
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), int) or isinstance(rec["id"], bool):
            raise ValueError("not a game record")
        if not 0 <= rec["id"] < MAX_GAMES:
            raise ValueError(f"game index {rec['id']} is outside 0..{MAX_GAMES - 1}")
    except (orjson.JSONDecodeError, ValueError) as e:
        raise JournalError(f"{path}: line {n} is not a game record ({e}); the file was changed by hand?") from None
    m = _TAIL.search(line)
    if m is None:
        raise ChainError(f"{path}: line {n} (game {rec['id']}) has no chain hash at its end: it was not "
                         "written by p10-tourney (edited, or appended by hand)")
    h = m.group(1).decode()
    if prev is not None and h != link(prev, line[: m.start()] + b"}"):
        raise ChainError(f"{path}: line {n} (game {rec['id']}) breaks the hash chain: it, or a line before it, was "
                         "edited, removed, inserted or moved after it was written")
    del rec["chain"]
    return rec, h


def journal_lines(f: BinaryIO, skip_long: bool = False) -> Iterator[bytes]:
    """The one reader of games.jsonl's lines: each whole line from `f`'s position, with
    its newline, no line held longer than `MAX_LINE`. It stops at the torn tail (a last
    line without its newline) and at a line longer than any record (one a forged file
    holds: read as a torn tail); with `skip_long`, such a line is read through to its
    newline, never held, and handed over as a bare newline (a reader that follows a
    growing file goes on past it)."""
    while True:
        raw = f.readline(MAX_LINE + 1)
        if raw.endswith(b"\n"):
            yield raw
        elif not skip_long or len(raw) <= MAX_LINE:
            return
        else:
            while raw and not raw.endswith(b"\n"):
                raw = f.readline(MAX_LINE + 1)
            if not raw:
                return
            yield b"\n"


def open_journal(path: Path) -> BinaryIO | None:
    """games.jsonl opened to read (`open_plain`), or None if it is missing; a link, a pipe
    or a device raises `JournalError`."""
    try:
        return open_plain(path)
    except FileNotFoundError:
        return None
    except NotAFileError as e:
        raise JournalError(str(e)) from None


def read_chain(path: Path, start: str | None, repair: bool = True) -> JournalState:
    """Read games.jsonl, checking every line's chain link from `start` (the genesis; None:
    links are not checked, only read), keeping every record and link. A torn last line is
    dropped (and cut off if `repair`); any other damage raises `JournalError` naming the
    first bad line."""
    games: dict[int, dict[str, Any]] = {}
    links: list[str] = []

    def keep(rec: dict[str, Any], h: str) -> None:
        games[rec["id"]] = rec
        links.append(h)

    state = _walk(path, start, 0, keep, repair)
    return JournalState(games, state.head, links, torn=state.torn)


def iter_chain(path: Path, start: str | None, each: Callable[[dict[str, Any]], None]) -> JournalState:
    """`read_chain` one line at a time, nothing repaired: each record is handed to `each`
    and not kept (the state's `games` and `links` are empty; `head` and `lines` are
    set). A game recorded twice raises `JournalError` (`scan_chain`)."""
    return scan_chain(path, start, each=each, repair=False)


def scan_chain(path: Path, start: str | None, mark: int = 0, each: Callable[[dict[str, Any]], None] | None = None,
               repair: bool = True) -> JournalState:
    """`read_chain` without keeping the records: every line is checked (its chain link
    from `start`; a game recorded twice raises `JournalError`), handed to `each` if given,
    and dropped; a torn last line is cut off if `repair`. The state has the head, the
    number of lines, the highest game index (`top`) and the link after line `mark`
    (`link_after(mark)`), and no records or links. Memory: a bit per game index."""
    return _walk(path, start, mark, None if each is None else lambda rec, h: each(rec), repair)


def _walk(path: Path, start: str | None, mark: int, each: Callable[[dict[str, Any], str], None] | None,
          repair: bool) -> JournalState:
    """Check every whole line of games.jsonl from `start`, handing each record and its
    link to `each`; cut a torn tail off if `repair` (see `scan_chain`)."""
    seen = IndexSet()
    prev = start
    n = good_end = 0
    top = -1
    marks: dict[int, str] = {}
    f = open_journal(path)
    if f is None:
        return JournalState({}, start, [], lines=0)
    with f:
        for raw in journal_lines(f):
            rec, prev = _checked(raw[:-1], n + 1, prev, path)
            n += 1
            i = rec["id"]
            if i in seen:
                raise JournalError(f"{path}: game {i} is recorded twice (line {n})")
            seen.add(i)
            top = max(top, i)
            if n == mark:
                marks[n] = prev
            good_end += len(raw)
            if each is not None:
                each(rec, prev)
        torn = os.fstat(f.fileno()).st_size - good_end
    if repair and torn > 0:
        with open(path, "r+b") as f:
            f.truncate(good_end)
        torn = 0
    return JournalState({}, prev, [], lines=n, marks=marks, top=top, torn=max(0, torn))


def read_journal(path: Path, repair: bool = True, start: str | None = None) -> dict[int, dict[str, Any]]:
    """Finished games by index (see `read_chain`; links checked from `start` if given)."""
    return read_chain(path, start, repair).games


class Journal:
    """Appends game records to games.jsonl durably, each chained to the one before."""

    def __init__(self, path: Path, head: str) -> None:
        self.path = path
        self.head = head
        self._f = open(path, "ab")

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record as one chained line and make it durable."""
        line, h = chained_line(self.head, record)
        self._f.write(line + b"\n")
        self._f.flush()
        os.fsync(self._f.fileno())
        self.head = h

    def close(self) -> None:
        """Close the file."""
        self._f.close()
