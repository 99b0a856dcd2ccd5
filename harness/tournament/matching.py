"""Matching tables where their result tells most, as ladder matchmaking does (a league's
rounds, and the later fields of a random tournament): for each pair, p(1 − p)·(σa² + σb²),
p TrueSkill's chance that one places ahead of the other and σ² how uncertain the ratings
still are (see `league` for the whole rule)."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Mapping, Sequence

from ..ratings.trueskill import SIGMA
from .teams import fits, team_of

BETA = SIGMA / 2  # TrueSkill's performance spread (ratings.make_env)
SHARE = 2  # an entrant sits at most at this many times its share of a round's tables
REPEAT = 0.25  # a pair already matched k times in the round tells 1 / (1 + REPEAT·k) as much


def pair_information(a: tuple[float, float], b: tuple[float, float]) -> float:
    """How much a game between ratings `a` and `b` ((μ, σ) each) tells: p(1 − p)·(σa² + σb²),
    p the chance that `a` places ahead."""
    (ma, sa), (mb, sb) = a, b
    c = math.sqrt(2 * BETA * BETA + sa * sa + sb * sb)
    p = 0.5 * (1 + math.erf((ma - mb) / (c * math.sqrt(2))))
    return p * (1 - p) * (sa * sa + sb * sb)


def match_tables(entrants: Sequence[str], ratings: Mapping[str, tuple[float, float]], games: Mapping[str, int],
                 tables: int, size: int, min_games: int, rng: random.Random,
                 teams: Mapping[str, str] | None = None) -> list[tuple[str, ...]]:
    """`tables` tables of `size` of `entrants` (see the module): an entrant short of
    `min_games` (counting the round's tables so far) takes the first free seat, the other
    seats go to the entrants whose results tell most (the pair that tells most starts a
    table); each entrant sits at most at `SHARE` times its share of the round's tables;
    no table seats two entrants of one team (`teams`: entrant -> team; none when fewer
    than `size` teams are left)."""
    teams = teams or {}
    pool = list(entrants)

    def kinds(xs: Sequence[str]) -> int:
        return len({team_of(teams, e) for e in xs})

    if kinds(pool) < size:
        return []
    tie = {e: i for i, e in enumerate(rng.sample(pool, len(pool)))}
    cap = max(1, -(-SHARE * tables * size // len(pool)))
    used: Counter[str] = Counter()
    met: Counter[tuple[str, str]] = Counter()

    def gain(x: str, y: str) -> float:
        return pair_information(ratings[x], ratings[y]) / (1 + REPEAT * met[min(x, y), max(x, y)])

    out = []
    for _ in range(tables):
        avail = [e for e in pool if used[e] < cap]
        if kinds(avail) < size:
            avail = pool
        short = [e for e in avail if games.get(e, 0) + size * used[e] < min_games]
        if short:
            table = [min(short, key=lambda e: (games.get(e, 0) + size * used[e], tie[e]))]
        else:
            x, y = max(((x, y) for i, x in enumerate(avail) for y in avail[i + 1:] if fits(y, (x,), teams)),
                       key=lambda p: (gain(*p), -tie[p[0]] - tie[p[1]], -tie[p[0]]))
            table = [x, y]
        while len(table) < size:
            cands = ([e for e in avail if e not in table and fits(e, table, teams)]
                     or [e for e in pool if e not in table and fits(e, table, teams)])
            table.append(max(cands, key=lambda y: (sum(gain(x, y) for x in table), -used[y], -tie[y])))
        for x in table:
            used[x] += 1
            for y in table:
                if x < y:
                    met[x, y] += 1
        out.append(tuple(table))
    return out
