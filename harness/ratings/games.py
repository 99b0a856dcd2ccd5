"""The played games as compact arrays (`GameArrays`), what every statistic reads of them.

A game record is a dict of games.jsonl (``id``, ``group``, ``seats``, ``places``, ...);
records whose ``reason`` is ``not_played`` and games of fewer than two seats are left out.
Records are taken in game-index order. Long arrays are made by `harness.spill` and worked
on `CHUNK` games at a time, so the working memory does not grow with the games.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import spill
from ..model import played as was_played

CHUNK = 1 << 16
"""Games taken at a time where a sum over games is worked out in chunks."""


def played(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that count for statistics, in game-index order."""
    return sorted((r for r in records if was_played(r) and len(r["seats"]) >= 2),
                  key=lambda r: r["id"])


@dataclass
class GameArrays:
    """The played games as compact arrays, what the statistics read of them, in game-index
    order: about 30 bytes a game where a record in memory is some 2 KB. Built from records
    (`from_records`) or kept up as games finish (`tally.Tally`)."""

    entrants: list[str]
    ids: np.ndarray  # int64, ascending
    group: np.ndarray  # int64: ordinal of the game's deal group, by the group's first game
    size: np.ndarray  # int8: seats at the table (2 or more)
    seats: np.ndarray  # int32 (games × widest table): entrant index by seat, −1 past `size`
    places: np.ndarray  # int16, the same shape: place by seat, 0 past `size`

    @property
    def games(self) -> int:
        """The number of games."""
        return len(self.ids)

    @property
    def groups(self) -> int:
        """The number of deal groups."""
        return int(self.group.max()) + 1 if len(self.group) else 0

    def groups_in_order(self) -> bool:
        """Whether each deal group's games are consecutive (the group ordinals never go
        down), as a schedule deals them."""
        return _never_down(self.group)

    @classmethod
    def build(cls, entrants: Sequence[str], ids: Any, keys: Any, seats: Any, places: Any) -> "GameArrays":
        """From parallel arrays in any order: game indices, deal group keys (int64: games
        with the same key are one deal group; a game's key −1 − its index marks a game of
        its own group), seats and places (−1 / 0 past the table). Arrays already in index
        order are taken as they are (not copied)."""
        ids = np.asarray(ids, dtype=np.int64)
        keys = np.asarray(keys, dtype=np.int64)
        seats, places = np.asarray(seats, dtype=np.int32), np.asarray(places, dtype=np.int16)
        width = seats.shape[-1] if seats.ndim == 2 else 2
        seats, places = seats.reshape(len(ids), width), places.reshape(len(ids), width)
        if len(ids) > 1 and not _never_down(ids):  # games as they finished: put in index order
            order = _index_order(ids)
            ids, keys, seats, places = (_gathered(a, order) for a in (ids, keys, seats, places))
            del order
        group = _group_ordinals(ids, keys)
        size = spill.empty(len(ids), np.int8)
        for lo in range(0, len(ids), CHUNK):
            size[lo:lo + CHUNK] = (seats[lo:lo + CHUNK] >= 0).sum(axis=1)
        return cls(list(entrants), ids, group, size, seats, places)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], entrants: Sequence[str]) -> "GameArrays":
        """The played games of `records` (`played`) whose seats are all entrants."""
        index = {e: i for i, e in enumerate(entrants)}
        recs = [r for r in played(records) if all(s in index for s in r["seats"])]
        width = max((len(r["seats"]) for r in recs), default=2)
        seats = np.full((len(recs), width), -1, dtype=np.int32)
        places = np.zeros((len(recs), width), dtype=np.int16)
        codes: dict[Any, int] = {}
        keys = np.empty(len(recs), dtype=np.int64)
        for k, r in enumerate(recs):
            key = r.get("group")
            keys[k] = -1 - r["id"] if key is None and r["id"] >= 0 else codes.setdefault(
                ("game", r["id"]) if key is None else key, len(codes))
            seats[k, : len(r["seats"])] = [index[s] for s in r["seats"]]
            places[k, : len(r["places"])] = r["places"]
        return cls.build(entrants, [r["id"] for r in recs], keys, seats, places)

    def select(self, mask: Any) -> "GameArrays":
        """The games where `mask` (a boolean array over the games) holds."""
        m = np.asarray(mask, dtype=bool)
        return GameArrays.build(self.entrants, rows_where(self.ids, m), rows_where(self.group, m),
                                rows_where(self.seats, m), rows_where(self.places, m))

    def restrict(self, entrants: Sequence[str]) -> "GameArrays":
        """The games whose seats are all of `entrants`, as games of them (entrant indices
        into `entrants`): what `from_records(records, entrants)` gives of the same games.
        A chunk of games at a time."""
        names = list(entrants)
        where = {e: i for i, e in enumerate(self.entrants)}
        to = np.full(len(self.entrants) + 1, -1, dtype=np.int32)  # old index -> new (-1: not among them)
        for k, e in enumerate(names):
            if e in where:
                to[where[e]] = k
        keep = spill.empty(self.games, bool)
        new = spill.empty(self.seats.shape, np.int32)
        for lo in range(0, self.games, CHUNK):
            s = self.seats[lo:lo + CHUNK]
            inside = s >= 0
            n = np.where(inside, to[np.where(inside, s, len(self.entrants))], -1)
            keep[lo:lo + CHUNK] = ((n >= 0) | ~inside).all(axis=1)
            new[lo:lo + CHUNK] = n
        return GameArrays.build(names, rows_where(self.ids, keep), rows_where(self.group, keep),
                                rows_where(new, keep), rows_where(self.places, keep))

    def games_of(self) -> list[int]:
        """The games each entrant played."""
        s = self.seats[self.seats >= 0]
        return np.bincount(s, minlength=len(self.entrants)).tolist()


def _index_order(ids: np.ndarray) -> np.ndarray:
    """The positions of `ids` in ascending order, stable (`np.argsort(ids, kind="stable")`),
    made by `spill.empty`. Distinct indices from 0 (a run's games) are placed by index in a
    slot array, a chunk at a time, with no sort and no private array of a game's size;
    anything else is sorted."""
    n = len(ids)
    lo_id = min(int(ids[a:a + CHUNK].min()) for a in range(0, n, CHUNK))
    top = max(int(ids[a:a + CHUNK].max()) for a in range(0, n, CHUNK))
    if lo_id >= 0 and top < 4 * n + CHUNK:
        slot = spill.empty(top + 1, np.int64)
        slot -= 1  # −1: no game with this index
        for a in range(0, n, CHUNK):
            part = ids[a:a + CHUNK]
            if bool((slot[part] >= 0).any()) or len(np.unique(part)) < len(part):
                break  # an index twice: sorted below
            slot[part] = np.arange(a, a + len(part))
        else:
            order = spill.empty(n, np.int64)
            at = 0
            for a in range(0, top + 1, CHUNK):
                s = slot[a:a + CHUNK]
                s = s[s >= 0]
                order[at:at + len(s)] = s
                at += len(s)
            return order
    return copied(np.argsort(ids, kind="stable"))


def _gathered(a: np.ndarray, order: np.ndarray) -> np.ndarray:
    """`a[order]`, made by `spill.empty` a chunk at a time."""
    out = spill.empty(a.shape, a.dtype)
    for lo in range(0, len(order), CHUNK):
        out[lo:lo + CHUNK] = a[order[lo:lo + CHUNK]]
    return out


def rows_where(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The rows of `a` where `mask` holds (`a[mask]`), made by `spill.empty` a chunk at a time."""
    if len(mask) != len(a):
        raise IndexError(f"a mask of {len(mask)} for {len(a)} rows")
    out = spill.empty((int(np.count_nonzero(mask)),) + a.shape[1:], a.dtype)
    at = 0
    for lo in range(0, len(a), CHUNK):
        part = a[lo:lo + CHUNK][mask[lo:lo + CHUNK]]
        out[at:at + len(part)] = part
        at += len(part)
    return out


def as_arrays(records: "Iterable[Mapping[str, Any]] | GameArrays", entrants: Sequence[str]) -> GameArrays:
    """`records` as `GameArrays` of `entrants` (already arrays: as they are)."""
    if isinstance(records, GameArrays):
        if list(records.entrants) != list(entrants):
            raise ValueError(f"games of entrants {records.entrants[:5]}… asked for as entrants {list(entrants)[:5]}…")
        return records
    return GameArrays.from_records(records, entrants)


def _group_ordinals(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Each game's deal group numbered in the order of the groups' first games (`ids` in
    ascending order). A game whose key is −1 − its index is a group of its own: with plain
    deals that is every game, and no sort is needed."""
    n = len(ids)
    if not n:
        return np.zeros(0, dtype=np.int64)
    own = spill.empty(n, bool)
    for lo in range(0, n, CHUNK):  # a chunk at a time: no temporary of 8 bytes a game
        i = ids[lo:lo + CHUNK]
        own[lo:lo + CHUNK] = (keys[lo:lo + CHUNK] == -1 - i) & (i >= 0)
    if own.all():
        return spill.arange(n)
    if not own.any() and _never_down(keys):
        # keys that never go down (a schedule's deal groups, numbered as dealt): a group's
        # games are consecutive and groups come in the order of their keys, no sort needed
        group = spill.empty(n, np.int64)
        last = 0
        for lo in range(1, n, CHUNK):
            hi = min(n, lo + CHUNK)
            np.cumsum(keys[lo:hi] != keys[lo - 1:hi - 1], out=group[lo:hi])
            group[lo:hi] += last
            last = int(group[hi - 1])
        return group
    shared = np.flatnonzero(~own)
    kind, first = _ordinal_first(keys[shared])
    is_first = own
    is_first[shared[first]] = True
    number = np.cumsum(is_first, dtype=np.int64) - 1
    group = number  # a game of its own group: its own number
    group[shared] = number[shared[first]][kind]
    return group


def changes(a: np.ndarray) -> np.ndarray:
    """The positions k ≥ 1 where a[k] != a[k − 1], found a chunk at a time."""
    parts = [np.zeros(0, dtype=np.int64)]
    for lo in range(1, len(a), 4 * CHUNK):
        hi = min(len(a), lo + 4 * CHUNK)
        parts.append(lo + np.flatnonzero(a[lo:hi] != a[lo - 1:hi - 1]))
    return np.concatenate(parts)


def _never_down(a: np.ndarray) -> bool:
    """Whether `a` never goes down, read a chunk at a time."""
    n = len(a)
    for lo in range(0, n - 1, CHUNK):
        hi = min(n - 1, lo + CHUNK)
        if not bool((a[lo + 1:hi + 1] >= a[lo:hi]).all()):
            return False
    return True


def _ordinal_first(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key's number in the order keys first occur (0, 1, …), and where each number
    first occurs."""
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[by_first] = np.arange(len(first))
    return rank[inv.ravel()], first[by_first]


def ordinal(keys: np.ndarray) -> np.ndarray:
    """Each key's number in the order keys first occur (0, 1, …)."""
    return _ordinal_first(keys)[0]


def deal_groups(records: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The records grouped by deal (``group``; a record without one is its own group), in
    the order of each group's first game."""
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r in played(records):
        key = r.get("group")
        groups.setdefault(("game", r["id"]) if key is None else key, []).append(r)
    return list(groups.values())


def game_kinds(arr: GameArrays) -> tuple[np.ndarray, np.ndarray]:
    """Games of the same kind (seats and places) numbered in the order kinds first occur,
    and each kind's first game. A game's row is packed into one int64 where it fits (every
    table of up to 6 seats and up to ~1,000 entrants), so the sort is of 8 bytes a game."""
    if not arr.games:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    bits = _kind_bits(arr)
    if bits is None:
        return _ordinal_first(np.unique(np.hstack([arr.seats, arr.places]), axis=0, return_inverse=True)[1].ravel())
    return _ordinal_first(_packed_kinds(arr, 0, arr.games, *bits))


def _kind_bits(arr: GameArrays) -> tuple[int, int] | None:
    """Bits a seat and a place take in a game's packed row, or None where a row does not fit
    in an int64."""
    seat_bits = max(1, int(arr.seats.max()) + 2).bit_length()
    place_bits = max(1, int(arr.places.max()) + 1).bit_length()
    if arr.seats.shape[1] * (seat_bits + place_bits) > 62 or int(arr.places.min()) < 0:
        return None
    return seat_bits, place_bits


def _packed_kinds(arr: GameArrays, lo: int, hi: int, seat_bits: int, place_bits: int) -> np.ndarray:
    """The rows of games lo…hi − 1, seats and places, each packed into one int64."""
    packed = np.zeros(hi - lo, dtype=np.int64)
    for c in range(arr.seats.shape[1]):
        packed <<= seat_bits
        packed |= arr.seats[lo:hi, c] + 1
        packed <<= place_bits
        packed |= arr.places[lo:hi, c]
    return packed


def kind_counts(arr: GameArrays, limit: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Each kind of game's first game and how many games are of it, kinds in the order they
    first occur (`game_kinds` without the kind of every game), or None if the games are of
    more than `limit` kinds: worked out a chunk of games at a time, with the kinds seen so
    far as the only state, and given up as soon as the limit is passed (so the working
    memory is bounded by the limit, not by the games)."""
    bits = _kind_bits(arr) if arr.games else None
    if bits is None:
        kind, first = game_kinds(arr)
        return None if limit is not None and len(first) > limit else (
            first, np.bincount(kind, minlength=len(first)).astype(np.int64))
    keys, first, count = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    for lo in range(0, arr.games, CHUNK):
        u, at, c = np.unique(_packed_kinds(arr, lo, min(lo + CHUNK, arr.games), *bits),
                             return_index=True, return_counts=True)
        keys, where = np.unique(np.concatenate([keys, u]), return_inverse=True)
        if limit is not None and len(keys) > limit:
            return None
        where = where.ravel()
        old, new = where[: len(first)], where[len(first):]
        f = np.full(len(keys), np.iinfo(np.int64).max, dtype=np.int64)
        f[old] = first
        np.minimum.at(f, new, at + lo)
        n_ = np.zeros(len(keys), dtype=np.int64)
        n_[old] = count
        np.add.at(n_, new, c)
        first, count = f, n_
    order = np.argsort(first, kind="stable")
    return first[order], count[order]


def copied(a: np.ndarray) -> np.ndarray:
    """A copy of `a` (made by `spill.empty`), a chunk at a time."""
    out = spill.empty(a.shape, a.dtype)
    for lo in range(0, len(a), 4 * CHUNK):
        out[lo:lo + 4 * CHUNK] = a[lo:lo + 4 * CHUNK]
    return out
