"""Running aggregates of a tournament's games, fed one record at a time: everything the
leaderboards, the statistics, the digest and disqualification need, in memory that does
not grow with a game's record.

A `GameTally` is what the runner keeps while games finish (instead of every record) and
what publishing builds from a streamed games.jsonl (`tally_journal`). Per game it keeps
only compact arrays for the statistics (the game's index, deal group, seats and places:
about 30 bytes for a game of two, `stats.GameArrays`), in files once they are long
(`spill`: the memory the run needs does not grow with its games); per entrant the sums of the
standings; per pair of entrants the head-to-head counts; TrueSkill rated in game-index
order as the games arrive (a game that finishes early waits, as a few bytes, for the ones
before it); the digest of the records in game order likewise; and, for the few games
that have them, forfeits and failed starts, and each entrant's failed build
(disqualification reads those).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from .disqualify import Disqualification, earlier, failed_builds
from ..ledger.journal import JournalError, JournalState, digest_bytes, iter_chain
from .ratings import Ratings
from .spill import Column, empty
from .stats import CHUNK, GameArrays, rows_where


_BITMAP_LIMIT = 1 << 30  # game indices below this are marked in a bitmap (at most 128 MB, 125 KB a million)


class GameTally:
    """The running aggregates of the games added so far (any order; each game once).

    `ratings`: rate TrueSkill as games arrive (with `draw_probability`); without it the
    board's ratings must be given (a checkpoint, see `ratings_checkpoint`)."""

    def __init__(self, entrants: Sequence[str], draw_probability: float | None = None, ratings: bool = True,
                 leader_every_s: float = 0.5) -> None:
        self.entrants = list(entrants)
        self.index = {e: i for i, e in enumerate(self.entrants)}
        n = len(self.entrants)
        self.count = 0  # records added, not_played ones too
        self.top = -1  # the highest game index added
        self.played = 0  # records that were played (reason not "not_played")
        self._seen = bytearray()  # bit per game index: added
        self._seen_far: set[int] = set()  # indices past the bitmap's reach
        self.sums = {k: [0] * n for k in ("games", "wins", "place", "score", "phases", "faults")}
        self.place_counts: list[Counter[int]] = [Counter() for _ in range(n)]
        self.fault_kinds: list[Counter[str]] = [Counter() for _ in range(n)]
        self.ahead = np.zeros((n, n), dtype=np.int64)  # row placed ahead of column, games
        self.tied = np.zeros((n, n), dtype=np.int64)
        # the statistics' games: index, deal group key, seats at the table, then seats and places
        self._ids, self._keys = Column(np.int64), Column(np.int64)
        self._size = Column(np.int8)
        self._seats, self._places = Column(np.int32), Column(np.int16)
        self._codes: dict[Any, int] = {}
        # what disqualification reads, for the games that have it (and the games it counts
        # but the statistics do not: a seat outside the field, or a table of one)
        self.forfeits: dict[int, list[int]] = {}
        self.startups: dict[int, list[dict[str, Any]]] = {}
        self.others: dict[int, tuple[str, ...]] = {}
        self.unplayed: dict[int, tuple[str, ...]] = {}  # games not played (every seat but one disqualified)
        # entrant -> (the lowest game index whose record carries its failed build, the failure)
        self.builds: dict[str, tuple[int, Disqualification]] = {}
        # TrueSkill and the digest, in game-index order
        self.ratings: Ratings | None = None
        if ratings:
            self.ratings = Ratings(self.entrants) if draw_probability is None else Ratings(self.entrants, draw_probability)
        self._rate_next = 0
        self._leader_every_s = leader_every_s
        self._asked = -math.inf
        self._leader: str | None = None
        self._rate_wait: dict[int, tuple[tuple[str, ...], tuple[int, ...]] | None] = {}
        self._digest = hashlib.sha256()
        self._digest_next = 0
        self._digest_wait: dict[int, bytes] = {}

    # ----- the runner's questions ------------------------------------------------------------

    def __len__(self) -> int:
        return self.count

    def __contains__(self, index: object) -> bool:
        if not isinstance(index, int) or index < 0:
            return False
        if index >= _BITMAP_LIMIT:
            return index in self._seen_far
        byte = index >> 3
        return byte < len(self._seen) and bool(self._seen[byte] >> (index & 7) & 1)

    def leader(self) -> str | None:
        """The entrant with the highest TrueSkill μ − 3σ over the games rated so far (looked
        up again at most every `leader_every_s` seconds)."""
        now = time.monotonic()
        if now - self._asked >= self._leader_every_s:
            self._asked = now
            self._leader = self.ratings.leader() if self.ratings is not None and self._rate_next else None
        return self._leader

    # ----- adding ----------------------------------------------------------------------------

    def add(self, rec: Mapping[str, Any]) -> None:
        """Count one finished game's record (a game already added is ignored)."""
        i = rec["id"]
        if i in self:
            return
        if i >= _BITMAP_LIMIT or i < 0:
            self._seen_far.add(i)
        else:
            self._mark(i)
        self.count += 1
        self.top = max(self.top, i)
        self._add_digest(i, digest_bytes(rec))
        for d in failed_builds(rec):
            old = self.builds.get(d.entrant)
            self.builds[d.entrant] = (i, d) if old is None else (min(i, old[0]), earlier(old[1], d))
        if rec.get("reason") == "not_played":
            self._add_rating(i, None)
            self.unplayed[i] = tuple(rec.get("seats", ()))
            return
        self.played += 1
        seats, places = rec["seats"], rec["places"]
        self._add_rating(i, (tuple(seats), tuple(places)))
        idx = [self.index[s] for s in seats]
        s = self.sums
        for k, e in enumerate(idx):
            p = places[k]
            s["games"][e] += 1
            s["wins"][e] += p == 1
            s["place"][e] += p
            s["score"][e] += rec["scores"][k]
            s["phases"][e] += rec["phases"][k]
            self.place_counts[e][p] += 1
            for m, o in enumerate(idx):
                if o != e:
                    if p < places[m]:
                        self.ahead[e, o] += 1
                    elif p == places[m]:
                        self.tied[e, o] += 1
        startups = []
        for f in rec.get("faults", []):
            e = self.index[f["entrant"]]
            s["faults"][e] += 1
            self.fault_kinds[e][f["kind"]] += 1
            if f.get("kind") == "startup":
                startups.append({"entrant": f["entrant"], "kind": "startup", "reason": str(f.get("reason", ""))})
        if startups:
            self.startups[i] = startups
        if rec.get("forfeits"):
            self.forfeits[i] = list(rec["forfeits"])
        if len(seats) < 2:
            self.others[i] = tuple(seats)
            return
        key = rec.get("group")
        self._ids.append(i)
        self._keys.append(key if isinstance(key, int) and not isinstance(key, bool) and key >= 0
                          else -1 - i if key is None else -(1 << 62) + self._codes.setdefault(key, len(self._codes)))
        self._size.append(len(idx))
        self._seats.extend(idx)
        self._places.extend(places)

    def _mark(self, i: int) -> None:
        byte = i >> 3
        if byte >= len(self._seen):
            self._seen.extend(bytes(max(byte + 1 - len(self._seen), len(self._seen))))
        self._seen[byte] |= 1 << (i & 7)

    def rated_before(self, ratings: Ratings, games: int) -> None:
        """Take `ratings` as TrueSkill over the games of index 0..`games` - 1 (the runner's
        checkpoint of the published games, `read_checkpoint`): those games, when added,
        are not rated again. Only before any game is added."""
        if self.count:
            raise ValueError("ratings of the games before can only be taken before any game is added")
        self.ratings, self._rate_next = ratings, games

    def _add_rating(self, i: int, game: tuple[tuple[str, ...], tuple[int, ...]] | None) -> None:
        if self.ratings is None or i < self._rate_next:  # (rated already: `rated_before`)
            return
        self._rate_wait[i] = game
        while self._rate_next in self._rate_wait:
            g = self._rate_wait.pop(self._rate_next)
            if g is not None:
                self.ratings.update(self._rate_next, g[0], g[1])
            self._rate_next += 1

    def _add_digest(self, i: int, line: bytes) -> None:
        self._digest_wait[i] = line
        while self._digest_next in self._digest_wait:
            self._digest.update(self._digest_wait.pop(self._digest_next))
            self._digest_next += 1

    # ----- what the boards read --------------------------------------------------------------

    def final_ratings(self) -> Ratings | None:
        """TrueSkill over every game added, in game-index order (games after a gap rated
        in order after those before it, as rating the records sorted by index does)."""
        if self.ratings is None or not self._rate_wait:
            return self.ratings
        r = copy.deepcopy(self.ratings)
        for i in sorted(self._rate_wait):
            g = self._rate_wait[i]
            if g is not None:
                r.update(i, g[0], g[1])
        return r

    def complete(self) -> bool:
        """Whether every game added is rated (none waits behind a gap)."""
        return not self._rate_wait

    def digest(self) -> str:
        """`journal.results_digest` of the records added."""
        h = self._digest.copy()
        for i in sorted(self._digest_wait):
            h.update(self._digest_wait[i])
        return h.hexdigest()

    def arrays(self, upto: Sequence[int] | None = None, below: int | None = None,
               among: Sequence[str] | None = None) -> GameArrays:
        """The games for the statistics (`stats.GameArrays`); with `upto`, only the games
        whose index is in it; with `below`, only those with a lower index; with `among`,
        only the games whose seats are all of those entrants, as games of them
        (`GameArrays.restrict`)."""
        ids, keys, size = self._ids.view(), self._keys.view(), self._size.view()
        width = int(size.max()) if len(size) else 2
        if len(ids) and int(size.min()) == width:  # every table the same size: the flat columns reshaped, not copied
            seats = self._seats.view().reshape(len(ids), width)
            places = self._places.view().reshape(len(ids), width)
        else:  # widths differ: each game's seats spread over the widest table's, a chunk at a time
            seats = empty((len(ids), width), np.int32)
            places = empty((len(ids), width), np.int16)
            flat_seats, flat_places = self._seats.view(), self._places.view()
            col = np.arange(width)
            at0 = 0
            for lo in range(0, len(ids), CHUNK):
                sz = size[lo:lo + CHUNK].astype(np.int64)
                starts = at0 + np.cumsum(sz) - sz
                inside = col[None, :] < sz[:, None]
                at = (starts[:, None] + col[None, :])[inside]
                s_chunk = np.full((len(sz), width), -1, dtype=np.int32)
                p_chunk = np.zeros((len(sz), width), dtype=np.int16)
                s_chunk[inside] = flat_seats[at]
                p_chunk[inside] = flat_places[at]
                seats[lo:lo + len(sz)] = s_chunk
                places[lo:lo + len(sz)] = p_chunk
                at0 += int(sz.sum())
        del size
        if upto is not None or below is not None:
            wanted = None if upto is None else np.asarray(sorted(set(upto)), dtype=np.int64)
            m = empty(len(ids), bool)
            for lo in range(0, len(ids), CHUNK):
                part = ids[lo:lo + CHUNK]
                m[lo:lo + CHUNK] = (np.isin(part, wanted) if wanted is not None else True) & (
                    part < below if below is not None else True)
            ids, keys, seats, places = rows_where(ids, m), rows_where(keys, m), rows_where(seats, m), rows_where(places, m)
        arr = GameArrays.build(self.entrants, ids, keys, seats, places)
        return arr if among is None or list(among) == self.entrants else arr.restrict(among)

    def met(self) -> np.ndarray:
        """n×n: games each pair played at the same table."""
        behind = self.ahead.T
        return self.ahead + behind + self.tied

    def head_to_head(self, sparse: bool = False) -> dict[str, dict[str, dict[str, int]]]:
        """entrant → opponent → games, ahead, behind, tied: every pair, or with `sparse`
        only the pairs that met."""
        names = self.entrants
        ahead, behind, tied = self.ahead.tolist(), self.ahead.T.tolist(), self.tied.tolist()
        out: dict[str, dict[str, dict[str, int]]] = {}
        for i, a in enumerate(names):
            row: dict[str, dict[str, int]] = {}
            for j, b in enumerate(names):
                if i == j:
                    continue
                g = ahead[i][j] + behind[i][j] + tied[i][j]
                if g or not sparse:
                    row[b] = {"games": g, "ahead": ahead[i][j], "behind": behind[i][j], "tied": tied[i][j]}
            out[a] = row
        return out

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
        rows = ((i, seats, size) for lo in range(0, arr.games, CHUNK)  # a chunk of games as Python values at a time
                for i, seats, size in zip(arr.ids[lo:lo + CHUNK].tolist(), arr.seats[lo:lo + CHUNK].tolist(),
                                          arr.size[lo:lo + CHUNK].tolist()))
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
            return {"id": i, "seats": list(seats), "reason": "not_played", "forfeits": [], "faults": []}
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
