"""Paired deal outcomes: for two entrants and one deal group where both played, who did better.

The sum over the group's games (where both sat) of +1 when the first placed ahead of the
second, −1 when behind, 0 when level: a positive sum is a deal the first did better on, a
negative one a deal the second did better on, zero a level deal (it says nothing about
which is stronger). `significance` tests them.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import spill
from . import games
from .games import GameArrays, as_arrays, copied

SPARSE_ABOVE = 20
"""With more entrants than this, per-pair tables list only the pairs that met."""


@dataclass
class PairedDeals:
    """Every (deal group, pair of entrants) where both played: who did better. Compact
    arrays, one row per pair and group (about 9 bytes), sorted by pair then group (game
    order)."""

    entrants: list[str]
    games: int
    groups: int
    pair: np.ndarray  # lo · n + hi for the pair's entrant indices lo < hi (int32 below 46,341 entrants)
    group: np.ndarray  # int32: ordinal of the deal group (by its first game)
    sign: np.ndarray  # int8: +1: lo did better, −1: hi did better, 0: level

    @property
    def lo(self) -> np.ndarray:
        """The lower entrant index of each row's pair."""
        return self.pair // len(self.entrants)

    @property
    def hi(self) -> np.ndarray:
        """The higher entrant index of each row's pair."""
        return self.pair % len(self.entrants)

    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n×n matrices: deals row did better than column, deals level, deals both played."""
        n = len(self.entrants)
        sums = np.zeros((3, n * n), dtype=np.int64)  # lo better, hi better, level
        for lo in range(0, len(self.pair), 4 * games.CHUNK):  # a chunk of rows at a time
            p, s = self.pair[lo:lo + 4 * games.CHUNK], self.sign[lo:lo + 4 * games.CHUNK]
            sums[0] += np.bincount(p[s > 0], minlength=n * n)
            sums[1] += np.bincount(p[s < 0], minlength=n * n)
            sums[2] += np.bincount(p[s == 0], minlength=n * n)
        plus, minus, level = (x.reshape(n, n) for x in sums)
        better = plus + minus.T
        level = level + level.T
        return better, level, better + better.T + level


def paired_deals(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str]) -> PairedDeals:
    """The paired deal outcomes of `records` (see the module doc). Where the deal groups come in
    game order (a schedule's) rows are placed by counting (`_paired_in_order`); otherwise
    each (pair, deal group) row is one int64 key with the game's sign in its lowest bits,
    made a chunk of games at a time and sorted in place: the working memory is some 10
    bytes a row beyond the result."""
    names = list(entrants)
    arr = as_arrays(records, names)
    n = len(names)
    if n * n <= PAIRS_COUNTED and arr.groups_in_order():
        return PairedDeals(names, arr.games, arr.groups, *_paired_in_order(arr, n))
    span = arr.groups + 1
    sizes = np.bincount(arr.size.astype(np.int64)).tolist() if arr.games else []
    keys = np.empty(sum(c * t * (t - 1) // 2 for t, c in enumerate(sizes)), dtype=np.int64)
    at = 0
    for lo in range(0, arr.games, games.CHUNK):
        hi = min(lo + games.CHUNK, arr.games)
        size = arr.size[lo:hi]
        for t in np.unique(size).tolist():
            rows = np.flatnonzero(size == t) + lo
            for i, j in combinations(range(t), 2):
                a, b = arr.seats[rows, i].astype(np.int64), arr.seats[rows, j].astype(np.int64)
                key = (np.minimum(a, b) * n + np.maximum(a, b)) * span + arr.group[rows]
                # sign + 1 (0, 1, 2: lo behind, level, lo ahead); seat i is lo when a < b
                ahead = np.sign(arr.places[rows, j].astype(np.int64) - arr.places[rows, i])
                ahead[a > b] *= -1
                keys[at:at + len(rows)] = (key << 2) + ahead + 1
                at += len(rows)
    keys.sort()
    sign = (keys & 3).astype(np.int8)
    sign -= 1
    keys >>= 2  # (pair, group)
    if len(keys) > 1 and bool((keys[1:] == keys[:-1]).any()):  # a deal group's games at one table: signs added up
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        sign = np.sign(np.add.reduceat(sign, starts, dtype=np.int64)).astype(np.int8)
        keys = keys[starts]
        del starts
    group = np.empty(len(keys), dtype=np.int32)
    pair = np.empty(len(keys), dtype=np.int32 if n * n < 2 ** 31 else np.int64)
    for lo in range(0, len(keys), games.CHUNK):
        group[lo:lo + games.CHUNK] = keys[lo:lo + games.CHUNK] % span
        pair[lo:lo + games.CHUNK] = keys[lo:lo + games.CHUNK] // span
    return PairedDeals(names, arr.games, arr.groups, pair, group, sign)


PAIRS_COUNTED = 1 << 22
"""Pairs of entrants (n²) up to which `paired_deals` places each row by counting (no sort
of every row): fields of up to 2,048 entrants."""


def _pair_rows(arr: GameArrays, lo: int, hi: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (pair, game, sign) rows of the games lo…hi − 1: every pair of seats at a table,
    sorted by pair and then game."""
    size = arr.size[lo:hi]
    ps, gs, ss = [], [], []
    for t in np.unique(size).tolist():
        rows = np.flatnonzero(size == t) + lo
        for i, j in combinations(range(t), 2):
            a, b = arr.seats[rows, i].astype(np.int64), arr.seats[rows, j].astype(np.int64)
            ahead = np.sign(arr.places[rows, j].astype(np.int64) - arr.places[rows, i])  # +1: seat i ahead
            ahead[a > b] *= -1  # as the lower entrant of the pair sees it
            ps.append(np.minimum(a, b) * n + np.maximum(a, b))
            gs.append(rows)
            ss.append(ahead.astype(np.int8))
    p, g, sg = np.concatenate(ps), np.concatenate(gs), np.concatenate(ss)
    order = np.lexsort((g, p))
    return p[order], g[order], sg[order]


def _paired_in_order(arr: GameArrays, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`paired_deals`' rows (pair, group, sign) where the games' deal groups never go down
    in game order: each row is put in its place by counting the rows of each pair first,
    a chunk of games at a time, so that no sort key is held beside the rows (one per game
    and pair until the rows of one pair and group, a deal's games at one table, are added
    up in place; then one per group and pair)."""
    width = arr.seats.shape[1]
    step = max(1, games.CHUNK // max(1, width * (width - 1) // 2))  # games whose rows make about a games.CHUNK
    per = np.zeros(n * n, dtype=np.int64)
    for lo in range(0, arr.games, step):
        per += np.bincount(_pair_rows(arr, lo, min(lo + step, arr.games), n)[0], minlength=n * n)
    total = int(per.sum())
    cursor = np.cumsum(per) - per
    del per
    pair = spill.empty(total, np.int32 if n * n < 2 ** 31 else np.int64)
    group = spill.empty(total, np.int32)
    sign = spill.empty(total, np.int8)
    for lo in range(0, arr.games, step):
        p, g, sg = _pair_rows(arr, lo, min(lo + step, arr.games), n)
        if not len(p):
            continue
        first = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
        count = np.diff(np.r_[first, len(p)])
        at = cursor[p] + np.arange(len(p)) - np.repeat(first, count)
        pair[at], group[at], sign[at] = p, arr.group[g], sg
        cursor[p[first]] += count
    del cursor
    w = lo = 0
    while lo < total:  # one row per (pair, group): a chunk at a time, never splitting a run
        hi = min(lo + 4 * games.CHUNK, total)
        while hi < total and pair[hi] == pair[hi - 1] and group[hi] == group[hi - 1]:
            hi += 1
        p, g = pair[lo:hi], group[lo:hi]
        starts = np.flatnonzero(np.r_[True, (p[1:] != p[:-1]) | (g[1:] != g[:-1])])
        k = len(starts)
        if k < hi - lo or w < lo:
            merged = np.sign(np.add.reduceat(sign[lo:hi], starts, dtype=np.int64)).astype(np.int8)
            pair[w:w + k], group[w:w + k], sign[w:w + k] = p[starts], g[starts], merged
        w, lo = w + k, hi
    if w < total:
        pair, group, sign = copied(pair[:w]), copied(group[:w]), copied(sign[:w])
    return pair, group, sign


def met_matrix(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str]) -> np.ndarray:
    """n×n (symmetric): how many games each pair of entrants played at the same table."""
    arr = as_arrays(records, entrants)
    n = len(entrants)
    out = np.zeros(n * n, dtype=np.int64)
    for at in range(0, arr.games, games.CHUNK):  # a chunk of games at a time: bounded working memory
        seats = arr.seats[at:at + games.CHUNK]
        for i, j in combinations(range(seats.shape[1]), 2):
            a, b = seats[:, i].astype(np.int64), seats[:, j].astype(np.int64)
            ok = (a >= 0) & (b >= 0) & (a != b)
            out += np.bincount(a[ok] * n + b[ok], minlength=n * n)
    m = out.reshape(n, n)
    return m + m.T


def pairs_met(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
              sparse: bool = False) -> dict[str, dict[str, int]]:
    """How many games each pair of entrants played at the same table: every pair, or with
    `sparse` only the pairs that met (≥ 1 game)."""
    names = list(entrants)
    m = met_matrix(records, names).tolist()
    return {a: {b: m[i][j] for j, b in enumerate(names) if j != i and (m[i][j] or not sparse)}
            for i, a in enumerate(names)}
