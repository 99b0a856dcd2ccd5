"""The tally a run keeps of its games: the standings' running aggregates (`ratings.tally.Tally`)
and what the run and its records need besides, the digest of the records in game order and
what disqualification reads of the games; the tally of a streamed games.jsonl
(`tally_journal`); and the checkpoint of TrueSkill after the published games.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ..ratings import games
from ..ratings.tally import Tally
from ..ratings.trueskill import Ratings
from .disqualify import Disqualification, earlier, failed_builds
from ..ledger.journal import JournalError, JournalState, digest_bytes, iter_chain
from ..model import NOT_PLAYED, FaultKind, played


class GameTally(Tally):
    """A `Tally` that also keeps the digest of the records (`journal.results_digest`, the
    records in game order as they arrive: a game that finishes early waits, as a few bytes,
    for the ones before it) and, for the few games that have them, forfeits, failed starts
    and the games the statistics do not count, and each entrant's failed build
    (disqualification reads those)."""

    def __init__(self, entrants: Sequence[str], draw_probability: float | None = None, ratings: bool = True,
                 leader_every_s: float = 0.5) -> None:
        super().__init__(entrants, draw_probability, ratings, leader_every_s)
        self.forfeits: dict[int, list[int]] = {}
        self.startups: dict[int, list[dict[str, Any]]] = {}
        self.others: dict[int, tuple[str, ...]] = {}  # games of one seat
        self.unplayed: dict[int, tuple[str, ...]] = {}  # games not played (every seat but one disqualified)
        # entrant -> (the lowest game index whose record carries its failed build, the failure)
        self.builds: dict[str, tuple[int, Disqualification]] = {}
        self._digest = hashlib.sha256()
        self._digest_next = 0
        self._digest_wait: dict[int, bytes] = {}

    def add(self, rec: Mapping[str, Any]) -> None:
        """Count one finished game's record (a game already added is ignored)."""
        i = rec["id"]
        if i in self:
            return
        super().add(rec)
        self._add_digest(i, digest_bytes(rec))
        for d in failed_builds(rec):
            old = self.builds.get(d.entrant)
            self.builds[d.entrant] = (i, d) if old is None else (min(i, old[0]), earlier(old[1], d))
        if not played(rec):
            self.unplayed[i] = tuple(rec.get("seats", ()))
            return
        startups = [{"entrant": f["entrant"], "kind": FaultKind.STARTUP, "reason": str(f.get("reason", ""))}
                    for f in rec.get("faults", []) if f.get("kind") == FaultKind.STARTUP]
        if startups:
            self.startups[i] = startups
        if rec.get("forfeits"):
            self.forfeits[i] = list(rec["forfeits"])
        if len(rec["seats"]) < 2:
            self.others[i] = tuple(rec["seats"])

    def _add_digest(self, i: int, line: bytes) -> None:
        self._digest_wait[i] = line
        while self._digest_next in self._digest_wait:
            self._digest.update(self._digest_wait.pop(self._digest_next))
            self._digest_next += 1

    def digest(self) -> str:
        """`journal.results_digest` of the records added."""
        h = self._digest.copy()
        for i in sorted(self._digest_wait):
            h.update(self._digest_wait[i])
        return h.hexdigest()

    def build_failures(self, below: int | None = None) -> list[Disqualification]:
        """The failed builds the games carry (`disqualify.failed_builds`); with `below`,
        those carried by a game with a lower index."""
        return [d for i, d in self.builds.values() if below is None or i < below]

    def disqualification_records(self, upto: Sequence[int] | None = None,
                                 below: int | None = None) -> Iterator[dict[str, Any]]:
        """The games as disqualification reads them (index, seats, forfeits, failed starts;
        a game not played with its reason), in game-index order; with `upto`, only those
        games; with `below`, only those with a lower index."""
        arr = self.arrays(upto, below)
        keep = None if upto is None else set(upto)
        extra = sorted((i, s, k) for d, k in ((self.others, False), (self.unplayed, True)) for i, s in d.items()
                       if (keep is None or i in keep) and (below is None or i < below))
        names = self.entrants
        rows = ((i, seats, size) for lo in range(0, arr.games, games.CHUNK)  # a chunk of games as Python values at a time
                for i, seats, size in zip(arr.ids[lo:lo + games.CHUNK].tolist(), arr.seats[lo:lo + games.CHUNK].tolist(),
                                          arr.size[lo:lo + games.CHUNK].tolist()))
        k = 0
        for i, seats, size in rows:
            while k < len(extra) and extra[k][0] < i:
                yield self._slim(*extra[k])
                k += 1
            yield self._slim(i, tuple(names[s] for s in seats[:size]))
        for o in extra[k:]:
            yield self._slim(*o)

    def _slim(self, i: int, seats: tuple[str, ...], unplayed: bool = False) -> dict[str, Any]:
        if unplayed:
            return {"id": i, "seats": list(seats), "reason": NOT_PLAYED, "forfeits": [], "faults": []}
        return {"id": i, "seats": list(seats), "forfeits": self.forfeits.get(i, []), "faults": self.startups.get(i, [])}


def tally_journal(path: Path, entrants: Sequence[str], start: str | None, draw_probability: float | None = None,
                  ratings: bool = True) -> tuple[GameTally, JournalState]:
    """A `GameTally` of games.jsonl read one line at a time (its hash chain checked from
    `start`, as `journal.read_chain` does; nothing kept per line but the tally)."""
    tally = GameTally(entrants, draw_probability, ratings)

    def add(rec: dict[str, Any]) -> None:
        if rec["id"] in tally:
            raise JournalError(f"{path}: game {rec['id']} is recorded twice (line {tally.count + 1})")
        tally.add(rec)

    state = iter_chain(path, start, add)
    return tally, state


CHECKPOINT = "ratings.checkpoint.json"
"""TrueSkill as it stood after the published games, so that publishing them again need not
rate every game again (a million games take half an hour)."""


def checkpoint_bytes(ratings: Ratings, head: str, games: int) -> bytes:
    """OUT/ratings.checkpoint.json for `ratings`: TrueSkill after exactly the `games` lines
    of games.jsonl whose chain ends in `head`, rated in game-index order. Its SHA-256 goes
    into tournament.json (`ratings_sha256`)."""
    return (json.dumps({"journal_head": head, "games": games, "ratings": ratings.state()}) + "\n").encode()


def read_checkpoint(out: Path, head: str | None, games: int, sha256: str | None,
                    draw_probability: float | None = None, entrants: Sequence[str] | None = None) -> Ratings | None:
    """The checkpointed ratings if they are those of the journal just read: the file hashes
    to `sha256` (tournament.json's `ratings_sha256`, written with it), and its chain head
    and line count are `head` and `games` of the journal as read (links checked);
    otherwise (none, stale, edited, another journal) None, and the games are rated again.
    With `entrants` (the standings' entrants now), they are rated over those (a newcomer
    unrated; None if the checkpoint rates one that is not among them). `p10-tourney
    verify` never reads it: it rates every game."""
    try:
        raw = (out / CHECKPOINT).read_bytes()
        if not sha256 or hashlib.sha256(raw).hexdigest() != sha256:
            return None
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("journal_head") != head or data.get("games") != games or not head:
            return None
        ratings = Ratings.from_state(data["ratings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if draw_probability is not None and ratings.draw_probability != draw_probability:
        return None
    return ratings if entrants is None else ratings.widened(entrants)
