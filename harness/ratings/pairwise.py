"""Heads-up results pair by pair: each pair's own games, its win shares with their Wilson
interval, and the board's mark for the pair (the paired deal test of `standings`, on that
pair's games alone)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Sequence

from .significance import CONFIDENCE
from .standings import build_leaderboard


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a share `k`/`n` (95 % with the default `z`)."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


@dataclass(frozen=True)
class PairResult:
    """One pair's heads-up games: `upper` is the one the board puts first."""

    upper: str
    lower: str
    games: int
    upper_wins: float  # first places, a shared first split
    low: float  # the Wilson interval of the upper's win share
    high: float
    settled: bool  # the board's mark: the upper's place above the lower is settled
    verdict: str  # the board's word for it ("settled", "open", "too few deals", ...)

    @property
    def share(self) -> float:
        """The upper's share of the wins."""
        return self.upper_wins / self.games if self.games else 0.0


def _wins(records: Sequence[Mapping[str, Any]], who: str) -> float:
    total = 0.0
    for r in records:
        firsts = [s for s, p in zip(r["seats"], r["places"]) if p == 1]
        if firsts:
            total += firsts.count(who) / len(firsts)
    return total


def heads_up(records: Iterable[Mapping[str, Any]], entrants: Sequence[str],
             confidence: float = CONFIDENCE) -> list[PairResult]:
    """Every pair of `entrants` that met at 2-player tables, each judged on its own games
    as a board of those two would be (its order, its mark), in the order of `entrants`."""
    by_pair: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    rank = {e: i for i, e in enumerate(entrants)}
    for r in records:
        seats = r["seats"]
        if len(seats) != 2 or seats[0] == seats[1] or any(s not in rank for s in seats):
            continue
        key = tuple(sorted(seats, key=rank.__getitem__))
        by_pair.setdefault((key[0], key[1]), []).append(r)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    out = []
    for (a, b), recs in sorted(by_pair.items(), key=lambda kv: (rank[kv[0][0]], rank[kv[0][1]])):
        board = build_leaderboard(recs, [a, b], confidence=confidence)
        top = board["entrants"][0]
        upper, lower = top["entrant"], board["entrants"][1]["entrant"]
        wins = _wins(recs, upper)
        low, high = wilson(wins, len(recs), z)
        out.append(PairResult(upper, lower, len(recs), wins, low, high, bool(top["settled_above"]),
                              top["next"] or "too few deals"))
    return out

