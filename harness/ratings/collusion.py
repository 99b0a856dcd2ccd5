"""The collusion report: for every pair of entrants that met, what each one's discards
gave the other, and how each one's results change with the other at the table.

Read from the games alone: each record's `passes` (`referee.passes`: per pair of seats,
the discards one offered the other, those taken, the Wilds among them, the Skips aimed),
its seats and places. Summed per ordered pair of entrants (`PassTally`, fed record by
record, a few numbers per pair).

A pair is *flagged* on the Wilds one passes the other. An honest player's Wild discards
do not depend on who draws next: given the discards an entrant A offered (to whoever
drew next) and how many of them were Wilds, which of A's discards were the Wilds is
exchangeable, so the Wilds that reached B follow the hypergeometric law (A's offered
discards, A's Wilds, those offered to B). The pair is flagged when that upper tail is
below `ALPHA` / m, m the ordered pairs that met (Bonferroni): the chance that an honest
field flags any pair is at most `ALPHA` by construction, and measured by simulating
honest fields (tools/calibrate_collusion.py). The rest is evidence, not a test: the
discards B took of A's against A's discards the others took and B's takes of the
others' discards, the Skips A aimed at B against an even share, and the results.

An entrant's result in a game is the share of the others it placed ahead of (a tie half):
`with` (games with the other at the table), `without` (its other games), `after` (the
games the other sat just before it, so that it was offered the other's discards) and
`not_after` (its other games with the other).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

ALPHA = 0.01  # the chance that a field of honest entrants gets any pair flagged, at most
# per ordered pair (a, b): a's discards offered to b, taken by b, a's Wilds offered to b, a's
# Skips at b, a's Skips in games with b; b's games with a and its results there, b's games
# just after a and its results there
_F = ("offered", "taken", "wilds", "skips", "skips_with", "with_n", "with_sum", "after_n", "after_sum")
OFF, TAKEN, WILDS, SKIPS, SKIPS_WITH, WITH_N, WITH_SUM, AFTER_N, AFTER_SUM = range(len(_F))


class PassTally:
    """The per-pair sums of the games' `passes` and results (records without `passes`,
    or not played, are left out): nine numbers per ordered pair that met, and per entrant
    its games, results and totals."""

    def __init__(self, entrants: Sequence[str]) -> None:
        self.entrants = list(entrants)
        self.pairs: dict[tuple[str, str], list[float]] = {}
        self.games: dict[str, int] = {}
        self.score: dict[str, float] = {}
        self.seated: dict[str, int] = {}  # the others at an entrant's tables, over its games
        self.offered: dict[str, int] = {}  # an entrant's discards offered to anyone
        self.wilds: dict[str, int] = {}
        self.taken: dict[str, int] = {}  # an entrant's discards taken by anyone
        self.drawn: dict[str, tuple[int, int]] = {}  # discards offered to an entrant, and those it took

    def add(self, rec: Mapping[str, Any]) -> None:
        """Count one game's record."""
        p = rec.get("passes")
        seats = rec.get("seats") or []
        if not isinstance(p, list) or rec.get("reason") == "not_played" or len(seats) < 2:
            return
        n = len(seats)
        places = rec["places"]
        share = [(sum(q > x for q in places) + 0.5 * (places.count(x) - 1)) / (n - 1) for x in places]
        skips = [0] * n
        for i, j, off, took, wild, skip in p:
            a, b = seats[i], seats[j]
            row = self._row(a, b)
            row[OFF] += off
            row[TAKEN] += took
            row[WILDS] += wild
            row[SKIPS] += skip
            skips[i] += skip
            self.offered[a] = self.offered.get(a, 0) + off
            self.wilds[a] = self.wilds.get(a, 0) + wild
            self.taken[a] = self.taken.get(a, 0) + took
            d = self.drawn.get(b, (0, 0))
            self.drawn[b] = (d[0] + off, d[1] + took)
        for j, b in enumerate(seats):
            self.games[b] = self.games.get(b, 0) + 1
            self.seated[b] = self.seated.get(b, 0) + n - 1
            self.score[b] = self.score.get(b, 0.0) + share[j]
            for i, a in enumerate(seats):
                if i != j:
                    row = self._row(a, b)
                    row[SKIPS_WITH] += skips[i]
                    row[WITH_N] += 1
                    row[WITH_SUM] += share[j]
            row = self._row(seats[j - 1], b)  # the seat just before b's
            row[AFTER_N] += 1
            row[AFTER_SUM] += share[j]

    def _row(self, a: str, b: str) -> list[float]:
        row = self.pairs.get((a, b))
        if row is None:
            row = self.pairs[a, b] = [0] * len(_F)
        return row

    def get(self, a: str, b: str) -> list[float]:
        """The sums of the ordered pair (a, b) (zeros if they never met)."""
        return self.pairs.get((a, b)) or [0] * len(_F)


def _rate(x: float, n: float) -> float | None:
    return round(x / n, 4) if n else None


def _feeds(t: PassTally, a: str, b: str, p: float) -> dict[str, Any]:
    """What a's discards gave b (the evidence one way round; `p`: the upper tail of a's
    Wilds offered to b, given a's offered discards and Wilds)."""
    row = t.get(a, b)
    off, took, wild = row[OFF], row[TAKEN], row[WILDS]
    total, wilds = t.offered.get(a, 0), t.wilds.get(a, 0)
    drawn, takes = t.drawn.get(b, (0, 0))
    return {
        "offered": int(off), "taken": int(took), "taken_rate": _rate(took, off),
        "others_take_rate": _rate(t.taken.get(a, 0) - took, total - off),  # a's discards, others drawing
        "takes_from_others_rate": _rate(takes - took, drawn - off),  # b's takes of the others' discards
        "wilds": int(wild), "wilds_expected": round(wilds * off / total, 3) if total else 0.0,
        "p_wilds": float(f"{p:.4g}"),
        "skips_at": int(row[SKIPS]), "skips_with": int(row[SKIPS_WITH]),
        "skips_even_share": round(row[SKIPS_WITH] * _share_of_targets(t, a), 3),
    }


def _share_of_targets(t: PassTally, a: str) -> float:
    """The share of a's Skips one other seat would get if a named every other seat alike:
    1 / (the mean number of others at a's tables)."""
    return t.games.get(a, 0) / max(1, t.seated.get(a, 0))


def _results(t: PassTally, a: str, b: str) -> dict[str, Any]:
    """How b's results change with a: with a at the table, without, just after a, not."""
    row = t.get(a, b)
    wn, ws, an, asum = row[WITH_N], row[WITH_SUM], row[AFTER_N], row[AFTER_SUM]
    return {"games_with": int(wn), "with": _rate(ws, wn),
            "without": _rate(t.score.get(b, 0.0) - ws, t.games.get(b, 0) - wn),
            "games_after": int(an), "after": _rate(asum, an), "not_after": _rate(ws - asum, wn - an)}


LISTED = 500
"""Pairs a report lists at most (every pair that met in a field of up to 32 entrants): the
flagged ones first, then those with the smallest p; the others are only counted."""


def _boost_hypergeom_sf() -> Any:
    """SciPy's ufunc of Boost's hypergeometric tail, where `scipy.special` has it (imported
    here, where first needed, not when the tally is)."""
    from scipy import special
    return getattr(getattr(special, "_ufuncs", None), "_hypergeom_sf", None)


def hypergeom_sf(k: np.ndarray, total: np.ndarray, good: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """P(X > k) for X hypergeometric (`drawn` of `total`, `good` of them marked): what
    `scipy.stats.hypergeom.sf(k, total, good, drawn)` gives, from the same Boost function
    through `scipy.special`, without importing `scipy.stats` (half a second at every
    start). Outside the support the tail is 1 or 0, as scipy.stats says."""
    sf = _boost_hypergeom_sf()
    if sf is None:  # a SciPy that does not export it: the public, slower import
        from scipy.stats import hypergeom
        return np.asarray(hypergeom.sf(k, total, good, drawn), dtype=float)
    lo, hi = np.maximum(0, good + drawn - total), np.minimum(good, drawn)
    with np.errstate(invalid="ignore"):
        inside = np.clip(sf(k, good, drawn, total), 0.0, 1.0)
    return np.where(k < lo, 1.0, np.where(k >= hi, 0.0, inside))


@dataclass(frozen=True)
class CollusionReport:
    """The pairs listed (`collusion_report`) and how many pairs met in all."""

    listed: list[dict[str, Any]]
    pairs: int


def collusion_report(t: PassTally, alpha: float = ALPHA, limit: int = LISTED) -> CollusionReport:
    """Every pair that met, judged: `{"pair": [A, B], "flagged", "p", "feeds": {"A>B",
    "B>A"}, "results": {A, B}}` (each result: that entrant's, with the other), flagged
    pairs first, then by `p` (the smaller of the two ways' Wild tests, Bonferroni-
    adjusted); the first `limit` of them (and every flagged one) listed."""
    order = {e: i for i, e in enumerate(t.entrants)}
    pairs = sorted({(a, b) if order.get(a, -1) < order.get(b, -1) else (b, a) for a, b in t.pairs
                    if t.get(a, b)[WITH_N]}, key=lambda p: (order.get(p[0], -1), order.get(p[1], -1), p))
    ways = [w for a, b in pairs for w in ((a, b), (b, a))]
    x = np.array([t.get(a, b)[WILDS] for a, b in ways], dtype=np.int64)
    k = np.array([t.get(a, b)[OFF] for a, b in ways], dtype=np.int64)
    total = np.array([t.offered.get(a, 0) for a, _ in ways], dtype=np.int64)
    wilds = np.array([t.wilds.get(a, 0) for a, _ in ways], dtype=np.int64)
    p = np.ones(len(ways))
    some = x > 0
    if some.any():
        p[some] = hypergeom_sf(x[some] - 1, total[some], wilds[some], k[some])
    adj = np.minimum(1.0, max(1, len(ways)) * np.minimum(p[0::2], p[1::2])) if pairs else p
    rank = sorted(range(len(pairs)), key=lambda i: (not adj[i] < alpha, float(f"{adj[i]:.4g}"), pairs[i]))
    keep = [i for n, i in enumerate(rank) if n < limit or adj[i] < alpha]
    listed = []
    for i in keep:
        a, b = pairs[i]
        listed.append({"pair": [a, b], "flagged": bool(adj[i] < alpha), "p": float(f"{adj[i]:.4g}"),
                       "feeds": {f"{a}>{b}": _feeds(t, a, b, p[2 * i]), f"{b}>{a}": _feeds(t, b, a, p[2 * i + 1])},
                       "results": {a: _results(t, b, a), b: _results(t, a, b)}})
    return CollusionReport(listed, len(pairs))


def flagged(report: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The flagged pairs of a report."""
    return [list(r["pair"]) for r in report if r["flagged"]]


METHOD = (f"a pair is flagged when the Wilds one entrant passed the other (discarded with the other next to "
          f"draw) are more than its Wild discards to whoever drew next explain: the hypergeometric upper tail, "
          f"Bonferroni-adjusted over both ways of every pair that met, below {ALPHA:g}, so an honest field gets a "
          f"flag with a chance of at most {ALPHA:g}")
