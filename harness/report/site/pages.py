"""The games of a results folder as pages of data the site's scripts load on demand, so a
page never holds them all (at a thousand entrants, index.html held 6 MB of one table).

Every game goes into the stream ``all``; a game with a fault into ``faults``; each
entrant's games into ``e-<slug>`` (`slug`). A stream is cut, in the order of games.jsonl
(the order games finished), into chunks of `CHUNK` games: ``data/<stream>-<k>.js``, each
``P10.data("<stream>-<k>", [game, …]);`` — a script, so the site works from file:// as on a
host. ``data/index.js`` says how many games each stream holds (and which games' replays
the viewer holds); the games list reads a
stream from its last chunk back, newest first. A chunk once full never changes, so a page
open while the site is published again reads consistent data.

A game is a list: [id, name, seats, places, scores, phases, faults, replay, seconds,
forfeits], a fault [entrant, kind, reason].
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Mapping

import orjson

from ..files import write_whole
from .data import game_name
from .values import script_json

CHUNK = 500
"""Games per data file."""

DATA = "data"
"""The site's folder of data files."""

_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,48}")
_REASON_MAX = 200


def slug(name: str) -> str:
    """An entrant's name as a file name that stays the same from one publication to the
    next: the name itself if it is plain (letters, digits, _ and -), else its plain
    letters and a hash of the whole name."""
    if _PLAIN.fullmatch(name):
        return name
    plain = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:32]
    return f"{plain or 'x'}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def _faults(g: Mapping[str, Any], seats: list[str]) -> list[list[Any]]:
    out = []
    for f in g.get("faults") or []:
        if not isinstance(f, Mapping):
            continue
        seat, who = f.get("seat"), f.get("entrant")
        if who is None:
            who = seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats) else "?"
        reason = str(f.get("reason") or "")
        out.append([str(who), str(f.get("kind") or "?"),
                    reason if len(reason) <= _REASON_MAX else reason[:_REASON_MAX - 1] + "…"])
    return out


def game_row(g: Mapping[str, Any], seats: list[str]) -> list[Any]:
    """Game `g` as the games list shows it (the module's shape; replay: 1 if one was kept)."""
    return [g.get("id"), game_name(g), seats, list(g.get("places") or []), list(g.get("scores") or []),
            list(g.get("phases") or []), _faults(g, seats), 1 if g.get("replay") else 0, g.get("duration_s"),
            list(g.get("forfeits") or [])]


class GamePages:
    """Writes the games' data files into `site/data/` as games are read (`add`), keeping
    only the chunks not yet full in memory; `close` writes the last chunks and index.js,
    and removes the data files of an earlier build that this one did not write."""

    def __init__(self, site: Path) -> None:
        self.folder = Path(site) / DATA
        self.folder.mkdir(parents=True, exist_ok=True)
        self.counts: dict[str, int] = {}
        self.open: dict[str, list[bytes]] = {}
        self.written: set[str] = set()
        self.slugs: dict[str, str] = {}

    def _slug(self, name: str) -> str:
        s = self.slugs.get(name)
        if s is None:
            s = self.slugs[name] = slug(name)
        return s

    def _put(self, stream: str, row: bytes) -> None:
        buf = self.open.setdefault(stream, [])
        buf.append(row)
        self.counts[stream] = self.counts.get(stream, 0) + 1
        if len(buf) >= CHUNK:
            self._flush(stream)

    def _flush(self, stream: str) -> None:
        buf = self.open.pop(stream, [])
        k = (self.counts[stream] - 1) // CHUNK
        key = f"{stream}-{k}"
        body = b"P10.data(" + script_json(key).encode() + b",[" + b",".join(buf) + b"]);\n"
        write_whole(self.folder / f"{key}.js", body)
        self.written.add(f"{key}.js")

    def add(self, g: Mapping[str, Any]) -> None:
        """Game `g`, a record of games.jsonl, into its streams."""
        seats = [str(s) for s in g.get("seats") or []]
        row = game_row(g, seats)
        data = script_json(row).encode()
        self._put("all", data)
        if row[6]:
            self._put("faults", data)
        for name in dict.fromkeys(seats):
            self._put("e-" + self._slug(name), data)

    def close(self, entrants: list[str], replays: list[str]) -> dict[str, Any]:
        """Write what is left and data/index.js (with the games whose replay the viewer
        holds, `replays`); return the index."""
        for stream in list(self.open):
            self._flush(stream)
        index = {"chunk": CHUNK, "streams": self.counts, "replays": replays,
                 "entrants": [[name, self._slug(name)] for name in entrants]}
        write_whole(self.folder / "index.js", "P10.data(\"index\"," + script_json(index) + ");\n")
        self.written.add("index.js")
        for old in self.folder.iterdir():
            if old.name not in self.written and old.name.endswith(".js") and old.is_file() and not old.is_symlink():
                old.unlink()
        return index


def parse_chunk(text: str) -> tuple[str, list[Any]]:
    """A data file's key and games (for tests and tools)."""
    m = re.fullmatch(r'P10\.data\("([^"]*)",(.*)\);\s*', text, re.S)
    if not m:
        raise ValueError("not a data file of the site")
    return m.group(1), orjson.loads(m.group(2))
