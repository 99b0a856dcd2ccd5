"""The luck share: the part of the variance of place that a duplicate deal cancels."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import games
from .games import GameArrays, as_arrays, ordinal


def luck_share(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str]) -> dict[str, Any]:
    """The share of the variance of place that a duplicate deal cancels.

    For an entrant, its games are taken table by table (a table = the same set of
    entrants, so the same opponents) and deal group by deal group, using the groups that
    hold its usual number k ≥ 2 of games. V_game is the variance of its place in one game
    around its mean at that table; V_deal the variance of its group-averaged place around
    the same mean (both pooled over tables, each with its own degrees of freedom). If the
    k games of a deal were independent, V_deal would be V_game / k; a shared deal makes the
    good and the bad hand take turns, so the group average varies less. The luck share is
    1 − k · V_deal / V_game: the part of the per-game variance that cancels within a deal
    (0 = none, 1 = all; below 0 when the games of a deal go the same way). 1 / (1 − share)
    is how many plain-deal games one duplicate game is worth for the precision of a mean
    place. With plain deals (k = 1) nothing is replayed and the share is None.
    """
    names = list(entrants)
    arr = as_arrays(records, names)
    per: dict[str, Any] = {e: None for e in names}
    if arr.groups == arr.games:  # no deal was replayed (plain deals): k = 1 for everyone
        return {"share": None, "efficiency": None, "by_entrant": per}
    n = len(names)
    width = arr.seats.shape[1]
    k_of = np.zeros(n, dtype=np.int64)
    e_ss_game, e_ss_deal = np.zeros(n), np.zeros(n)
    e_df_game, e_df_deal, e_tables = (np.zeros(n, dtype=np.int64) for _ in range(3))
    for ent, at in _seats_by_entrant(arr, n):  # an entrant at a time: working memory of its games only
        k_of[ent], e_ss_game[ent], e_ss_deal[ent], e_df_game[ent], e_df_deal[ent], e_tables[ent] = \
            _luck_of(arr, at // width, at % width)
    num = den = 0.0
    for i, name in enumerate(names):
        k = int(k_of[i])
        if k < 2 or not e_df_deal[i] or not e_ss_game[i]:
            continue
        v_game, v_deal = e_ss_game[i] / e_df_game[i], e_ss_deal[i] / e_df_deal[i]
        share = 1 - k * v_deal / v_game
        per[name] = {"k": k, "games": int(e_df_game[i] + e_tables[i]), "v_game": round(float(v_game), 5),
                     "v_deal": round(float(v_deal), 5), "share": round(float(share), 4)}
        num += e_df_game[i] * k * v_deal
        den += e_df_game[i] * v_game
    total = None if not den else float(1 - num / den)
    return {
        "share": None if total is None else round(total, 4),
        "efficiency": None if total is None or total >= 1 else round(1 / (1 - total), 3),
        "by_entrant": per,
    }


def _seats_by_entrant(arr: GameArrays, n: int) -> Iterator[tuple[int, np.ndarray]]:
    """(entrant, the positions of its seats in `arr.seats` flattened, in game order) for
    every entrant with games. Entrants are taken in blocks holding about `4 · games.CHUNK` seats,
    each block found by one pass over the seats a chunk at a time: working memory of a
    block's seats, not of every game's."""
    flat = arr.seats.reshape(-1)
    per = np.zeros(n, dtype=np.int64)
    for lo in range(0, len(flat), 4 * games.CHUNK):
        s = flat[lo:lo + 4 * games.CHUNK]
        per += np.bincount(s[s >= 0], minlength=n)
    a = 0
    while a < n:
        b, held = a, 0
        while b < n and (b == a or held + per[b] <= 4 * games.CHUNK):
            held += int(per[b])
            b += 1
        parts = []
        for lo in range(0, len(flat), 4 * games.CHUNK):
            s = flat[lo:lo + 4 * games.CHUNK]
            hit = np.flatnonzero((s >= a) & (s < b))
            parts.append(np.stack([s[hit].astype(np.int64), hit + lo]))
        both = np.concatenate(parts, axis=1)
        del parts
        both = both[:, np.argsort(both[0], kind="stable")]
        ends = np.searchsorted(both[0], np.arange(a, b + 1), side="left")
        for ent in range(a, b):
            if ends[ent - a + 1] > ends[ent - a]:
                yield ent, both[1, ends[ent - a]:ends[ent - a + 1]]
        a = b


def _luck_of(arr: GameArrays, gi: np.ndarray, si: np.ndarray) -> tuple[int, float, float, int, int, int]:
    """`luck_share`'s sums for one entrant, from its seats (games `gi`, seats `si`, in game
    order): its usual group size k, the sums of squares per game and per deal, their
    degrees of freedom, and its number of tables."""
    p = arr.places[gi, si].astype(float)
    big = np.iinfo(np.int32).max
    seats = arr.seats[gi]
    table = np.unique(np.sort(np.where(seats >= 0, seats, big), axis=1), axis=0, return_inverse=True)[1].ravel()
    del seats
    # cells: tables (the same opponents); groups: (table, deal group); numbered in order of first row
    cell = ordinal(table)
    grp = ordinal(cell * (arr.groups + 1) + arr.group[gi])
    n_grp, n_cell = int(grp.max()) + 1, int(cell.max()) + 1
    g_first = np.full(n_grp, len(grp))
    np.minimum.at(g_first, grp, np.arange(len(grp)))
    g_size = np.bincount(grp)
    g_cell = cell[g_first]
    # k: the most usual group size (ties: the size met first, by table then group)
    c_first = np.full(n_cell, len(cell))
    np.minimum.at(c_first, cell, np.arange(len(cell)))
    k = Counter(g_size[np.lexsort((g_first, c_first[g_cell]))].tolist()).most_common(1)[0][0]
    full_g = g_size == k
    n_full = np.bincount(g_cell[full_g], minlength=n_cell)
    use = full_g[grp] & (n_full[cell] >= 2)  # rows in the full groups of cells with 2 or more of them
    cnt = np.bincount(cell[use], minlength=n_cell)
    mean = np.bincount(cell[use], weights=p[use], minlength=n_cell) / np.maximum(cnt, 1)
    ss_game = np.bincount(cell[use], weights=(p[use] - mean[cell[use]]) ** 2, minlength=n_cell)
    gmean = np.bincount(grp[use], weights=p[use], minlength=n_grp) / np.maximum(g_size, 1)
    ug = full_g & (n_full[g_cell] >= 2)
    ss_deal = np.bincount(g_cell[ug], weights=(gmean[ug] - mean[g_cell[ug]]) ** 2, minlength=n_cell)
    used = n_full >= 2
    one = np.zeros(int(used.sum()), dtype=np.int64)  # sums in cell order, as one bin of bincount adds them

    def total(x: np.ndarray) -> float:
        return float(np.bincount(one, weights=x[used], minlength=1)[0])

    return (int(k), total(ss_game), total(ss_deal), int(total((cnt - 1).astype(float))),
            int(total((n_full - 1).astype(float))), n_cell)
