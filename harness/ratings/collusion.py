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

from typing import Any, Mapping, Sequence

import numpy as np
from scipy.stats import hypergeom

ALPHA = 0.01  # the chance that a field of honest entrants gets any pair flagged, at most
_FEEDS = ("offered", "taken", "wilds", "skips", "skips_with")
_RESULTS = ("with_n", "with_sum", "after_n", "after_sum")


class PassTally:
    """The per-pair sums of the games' `passes` and results (records without `passes`,
    or not played, are left out)."""

    def __init__(self, entrants: Sequence[str]) -> None:
        self.entrants = list(entrants)
        self.index = {e: i for i, e in enumerate(self.entrants)}
        n = len(self.entrants)
        # [a, b]: a's discards offered to / taken by b, a's Wilds offered to b, a's Skips at b,
        # a's Skips in games with b; b's games with a (and its results), b's games just after a
        self.m = {k: np.zeros((n, n), dtype=np.int64) for k in _FEEDS + ("with_n", "after_n")}
        self.m |= {k: np.zeros((n, n), dtype=np.float64) for k in ("with_sum", "after_sum")}
        self.games = np.zeros(n, dtype=np.int64)
        self.score = np.zeros(n, dtype=np.float64)

    def add(self, rec: Mapping[str, Any]) -> None:
        """Count one game's record."""
        p = rec.get("passes")
        seats = rec.get("seats") or []
        if not isinstance(p, list) or rec.get("reason") == "not_played" or len(seats) < 2:
            return
        n = len(seats)
        idx = np.array([self.index[e] for e in seats])
        places = np.asarray(rec["places"])
        share = ((places[:, None] < places[None, :]).sum(1) + 0.5 * ((places[:, None] == places[None, :]).sum(1) - 1)) / (n - 1)
        self.games[idx] += 1
        self.score[idx] += share
        rows, cols = np.ix_(idx, idx)
        m = self.m
        skips = np.zeros(n, dtype=np.int64)
        for i, j, *counts in p:
            for k, v in zip(("offered", "taken", "wilds", "skips"), counts):
                m[k][idx[i], idx[j]] += v
            skips[i] += counts[3]
        off = ~np.eye(n, dtype=bool)
        m["skips_with"][rows, cols] += skips[:, None] * off
        m["with_n"][rows, cols] += off
        m["with_sum"][rows, cols] += share[None, :] * off  # [a, b]: b's result with a
        before = np.roll(np.arange(n), 1)  # the seat just before each seat
        m["after_n"][idx[before], idx] += 1
        m["after_sum"][idx[before], idx] += share


def _p_wilds(t: PassTally, a: int, b: int) -> float:
    """The upper tail of a's Wilds offered to b, given a's offered discards and Wilds."""
    m = t.m
    total, wilds = int(m["offered"][a].sum()), int(m["wilds"][a].sum())
    x, k = int(m["wilds"][a, b]), int(m["offered"][a, b])
    if not x:
        return 1.0
    return float(hypergeom.sf(x - 1, total, wilds, k))


def _rate(x: float, n: float) -> float | None:
    return round(x / n, 4) if n else None


def _feeds(t: PassTally, a: int, b: int, p: float) -> dict[str, Any]:
    """What a's discards gave b (the evidence one way round)."""
    m = t.m
    off, took, wild = m["offered"], m["taken"], m["wilds"]
    total, wilds = int(off[a].sum()), int(wild[a].sum())
    skips_with = int(m["skips_with"][a, b])
    n_at = m["with_n"][a, b]
    return {
        "offered": int(off[a, b]), "taken": int(took[a, b]), "taken_rate": _rate(took[a, b], off[a, b]),
        "others_take_rate": _rate(took[a].sum() - took[a, b], total - off[a, b]),  # a's discards, others drawing
        "takes_from_others_rate": _rate(took[:, b].sum() - took[a, b], off[:, b].sum() - off[a, b]),  # b's takes
        "wilds": int(wild[a, b]), "wilds_expected": round(wilds * off[a, b] / total, 3) if total else 0.0,
        "p_wilds": float(f"{p:.4g}"),
        "skips_at": int(m["skips"][a, b]), "skips_with": skips_with,
        "skips_even_share": round(skips_with * _share_of_targets(t, a, b), 3) if n_at else 0.0,
    }


def _share_of_targets(t: PassTally, a: int, b: int) -> float:
    """The share of a's Skips b would get if a named every other seat alike: 1 / (the
    mean number of others at a's tables with b)."""
    others = t.m["with_n"][:, a].sum() / max(1, t.games[a])
    return 1.0 / max(1.0, float(others))


def _results(t: PassTally, a: int, b: int) -> dict[str, Any]:
    """How b's results change with a: with a at the table, without, just after a, not."""
    m = t.m
    wn, ws, an, asum = m["with_n"][a, b], m["with_sum"][a, b], m["after_n"][a, b], m["after_sum"][a, b]
    return {"games_with": int(wn), "with": _rate(ws, wn), "without": _rate(t.score[b] - ws, t.games[b] - wn),
            "games_after": int(an), "after": _rate(asum, an), "not_after": _rate(ws - asum, wn - an)}


def collusion_report(t: PassTally, alpha: float = ALPHA) -> list[dict[str, Any]]:
    """Every pair that met: `{"pair": [A, B], "flagged", "p", "feeds": {"A>B", "B>A"},
    "results": {A, B}}` (each result: that entrant's, with the other), flagged pairs first,
    then by `p` (the smaller of the two ways' Wild tests, Bonferroni-adjusted)."""
    met = t.m["with_n"]
    n = len(t.entrants)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if met[a, b]]
    tests = max(1, 2 * len(pairs))
    out = []
    for a, b in pairs:
        pa, pb = _p_wilds(t, a, b), _p_wilds(t, b, a)
        adj = min(1.0, tests * min(pa, pb))
        ea, eb = t.entrants[a], t.entrants[b]
        out.append({"pair": [ea, eb], "flagged": adj < alpha, "p": float(f"{adj:.4g}"),
                    "feeds": {f"{ea}>{eb}": _feeds(t, a, b, pa), f"{eb}>{ea}": _feeds(t, b, a, pb)},
                    "results": {ea: _results(t, b, a), eb: _results(t, a, b)}})
    out.sort(key=lambda r: (not r["flagged"], r["p"], r["pair"]))
    return out


def flagged(report: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The flagged pairs of a report."""
    return [list(r["pair"]) for r in report if r["flagged"]]


METHOD = (f"a pair is flagged when the Wilds one entrant passed the other (discarded with the other next to "
          f"draw) are more than its Wild discards to whoever drew next explain: the hypergeometric upper tail, "
          f"Bonferroni-adjusted over both ways of every pair that met, below {ALPHA:g}, so an honest field gets a "
          f"flag with a chance of at most {ALPHA:g}")
