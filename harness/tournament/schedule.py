"""Which games a tournament plays: tables, seat rotations and per-game seeds.

Every game's seed comes from the tournament seed and the game's index (or, with duplicate
deals, its deal group), so the schedule is the same whatever runs it.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from .config import TournamentConfig


@dataclass(frozen=True)
class GameSpec:
    """One scheduled game: index, id, entrants by seat, seed, and deal group."""

    index: int
    game: str
    seats: tuple[str, ...]
    seed: int
    group: int


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed from the tournament seed and labels (stable across runs and machines)."""
    text = ":".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def game_id(index: int) -> str:
    """The id of game `index`: g000000, g000001, ..."""
    return f"g{index:06d}"


def _rotations(table: Sequence[str], games: int) -> list[tuple[str, ...]]:
    n = len(table)
    return [tuple(table[k % n:]) + tuple(table[: k % n]) for k in range(games)]


def tables_for(cfg: TournamentConfig) -> list[tuple[str, ...]]:
    """The tables (entrants, in base seat order) of a round-robin or gauntlet."""
    names = cfg.entrants
    n = cfg.table_size
    if cfg.format == "round-robin":
        return [tuple(t) for t in combinations(names, n)]
    if cfg.format == "gauntlet":
        field = [x for x in names if x not in cfg.challengers]
        return [(c,) + tuple(rest) for c in cfg.challengers for rest in combinations(field, n - 1)]
    raise ValueError(cfg.format)


def _random_tables(cfg: TournamentConfig, count: int) -> list[tuple[str, ...]]:
    """`count` tables where entrants play equally often and pairs meet as evenly as possible."""
    rng = random.Random(derive_seed(cfg.seed, "tables"))
    names = cfg.entrants
    played = {x: 0 for x in names}
    met = {(a, b): 0 for a in names for b in names}
    out = []
    for _ in range(count):
        table: list[str] = []
        while len(table) < cfg.table_size:
            candidates = [x for x in names if x not in table]
            rng.shuffle(candidates)
            best = min(candidates, key=lambda x: (played[x], sum(met[x, y] for y in table)))
            table.append(best)
        for x in table:
            played[x] += 1
            for y in table:
                if x != y:
                    met[x, y] += 1
        rng.shuffle(table)
        out.append(tuple(table))
    return out


def schedule(cfg: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, in index order."""
    n = cfg.table_size
    seatings: list[tuple[str, ...]] = []
    groups: list[int] = []
    if cfg.format == "random":
        assert cfg.games is not None
        if cfg.duplicate:
            for g, table in enumerate(_random_tables(cfg, cfg.games // n)):
                seatings += _rotations(table, n)
                groups += [g] * n
        else:
            seatings = _random_tables(cfg, cfg.games)
            groups = list(range(len(seatings)))
    else:
        g = 0
        for table in tables_for(cfg):
            rot = _rotations(table, cfg.games_per_table)
            seatings += rot
            if cfg.duplicate:
                # Each deal is replayed once per seat rotation.
                for k in range(0, cfg.games_per_table, n):
                    groups += [g] * n
                    g += 1
            else:
                groups += list(range(g, g + len(rot)))
                g += len(rot)
    specs = []
    for i, (seats, group) in enumerate(zip(seatings, groups)):
        seed = derive_seed(cfg.seed, "deal", group) if cfg.duplicate else derive_seed(cfg.seed, "game", i)
        specs.append(GameSpec(i, game_id(i), seats, seed, group))
    return specs
