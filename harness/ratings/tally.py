"""Running aggregates of a tournament's games, fed one record at a time: what the standings
and the statistics read of them, in memory that does not grow with a game's record.

Per game only compact arrays for the statistics (the game's index, deal group, seats and
places: about 30 bytes for a game of two, `games.GameArrays`), in files once they are long
(`harness.spill`: the memory a run needs does not grow with its games); per entrant the
sums of the standings; per pair of entrants the head-to-head counts; TrueSkill rated in
game-index order as the games arrive (a game that finishes early waits, as a few bytes,
for the ones before it).
"""

from __future__ import annotations

import copy
import math
import time
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from ..spill import Column, empty
from . import games
from .collusion import PassTally
from .games import GameArrays, rows_where
from .trueskill import Ratings
from ..model import played

_BITMAP_LIMIT = 1 << 30  # game indices below this are marked in a bitmap (at most 128 MB, 125 KB a million)


FIRST_REASON = 300
"""Characters kept of an entrant's first fault's reason (the board shows it)."""


class Tally:
    """The running aggregates of the games added so far (any order; each game once: a game
    already added is ignored).

    `ratings`: rate TrueSkill as games arrive (with `draw_probability`); without it the
    board's ratings must be given."""

    def __init__(self, entrants: Sequence[str], draw_probability: float | None = None, ratings: bool = True,
                 leader_every_s: float = 0.5) -> None:
        self.entrants = list(entrants)
        self.index = {e: i for i, e in enumerate(self.entrants)}
        n = len(self.entrants)
        self.count = 0  # records added, not_played ones too
        self.top = -1  # the highest game index added
        self.played = 0  # records that were played (`model.played`)
        self._seen = bytearray()  # bit per game index: added
        self._seen_far: set[int] = set()  # indices past the bitmap's reach
        self.sums = {k: [0] * n for k in ("games", "wins", "place", "score", "phases", "faults")}
        self.place_counts: list[Counter[int]] = [Counter() for _ in range(n)]
        self.fault_kinds: list[Counter[str]] = [Counter() for _ in range(n)]
        # each entrant's first fault in game order: (game index, game, kind, reason)
        self.first_fault: list[tuple[int, str, str, str] | None] = [None] * n
        self.ahead = np.zeros((n, n), dtype=np.int64)  # row placed ahead of column, games
        self.tied = np.zeros((n, n), dtype=np.int64)
        self.passes = PassTally(self.entrants)  # what each one's discards gave the others (the collusion report)
        # the statistics' games: index, deal group key, seats at the table, then seats and places
        self._ids, self._keys = Column(np.int64), Column(np.int64)
        self._size = Column(np.int8)
        self._seats, self._places = Column(np.int32), Column(np.int16)
        self._codes: dict[Any, int] = {}
        # TrueSkill, in game-index order
        self.ratings: Ratings | None = None
        if ratings:
            self.ratings = Ratings(self.entrants) if draw_probability is None else Ratings(self.entrants, draw_probability)
        self._rate_next = 0
        self._leader_every_s = leader_every_s
        self._asked = -math.inf
        self._leader: str | None = None
        self._rate_wait: dict[int, tuple[tuple[str, ...], tuple[int, ...]] | None] = {}

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
        if not played(rec):
            self._add_rating(i, None)
            return
        self.played += 1
        self.passes.add(rec)
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
        for f in rec.get("faults", []):
            e = self.index[f["entrant"]]
            s["faults"][e] += 1
            self.fault_kinds[e][f["kind"]] += 1
            first = self.first_fault[e]
            if first is None or i < first[0]:
                self.first_fault[e] = (i, str(rec.get("game", i)), str(f["kind"]), str(f.get("reason", ""))[:FIRST_REASON])
        if len(seats) < 2:
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
        checkpoint of the published games): those games, when added, are not rated again.
        Only before any game is added."""
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

    def arrays(self, upto: Sequence[int] | None = None, below: int | None = None,
               among: Sequence[str] | None = None) -> GameArrays:
        """The games for the statistics (`GameArrays`); with `upto`, only the games
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
            for lo in range(0, len(ids), games.CHUNK):
                sz = size[lo:lo + games.CHUNK].astype(np.int64)
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
            for lo in range(0, len(ids), games.CHUNK):
                part = ids[lo:lo + games.CHUNK]
                m[lo:lo + games.CHUNK] = (np.isin(part, wanted) if wanted is not None else True) & (
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
