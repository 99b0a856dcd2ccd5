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

from .config import SAMPLE_PER_ENTRANT, TournamentConfig


@dataclass(frozen=True)
class GameSpec:
    """One scheduled game: index, id, entrants by seat, seed, deal group, and whether its
    replay is kept though it is clean (`replays: sample`)."""

    index: int
    game: str
    seats: tuple[str, ...]
    seed: int
    group: int
    sample: bool = False  # one of the first games of one of its entrants (replays: sample)


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
    assert cfg.seed is not None
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
    """Every game of the tournament, in index order.

    A game's seed depends on its table (the entrants, whatever other entrants the
    tournament has) and its number at that table, so the games between the same entrants
    are the same games in any field. With duplicate deals, the games of one group share
    one seed, and so one deal, in every seat rotation. With early stopping (`stop_when`)
    the round-robin and gauntlet schedules take the tables in turn, one block of
    table_size games at a time, instead of one table after another.
    """
    if cfg.seed is None:
        raise ValueError(f"tournament {cfg.name!r}: the secret seed is not drawn yet (the runner draws it)")
    n = cfg.table_size
    plan: list[tuple[tuple[str, ...], str]] = []  # (seats, seed label)
    if cfg.format == "random":
        assert cfg.games is not None
        if cfg.duplicate:
            for g, table in enumerate(_random_tables(cfg, cfg.games // n)):
                plan += [(rot, f"deal:{g}") for rot in _rotations(table, n)]
        else:
            plan = [(t, f"game:{i}") for i, t in enumerate(_random_tables(cfg, cfg.games))]
    else:
        blocks: list[tuple[int, int, list[tuple[tuple[str, ...], str]]]] = []
        for t, table in enumerate(tables_for(cfg)):
            key = ",".join(sorted(table))
            for k, rot in enumerate(_rotations(table, cfg.games_per_table)):
                label = f"deal:{key}:{k // n}" if cfg.duplicate else f"game:{key}:{k}"
                if k % n == 0:
                    blocks.append((k // n, t, []))
                blocks[-1][2].append((rot, label))
        if getattr(cfg, "stop_when", None):
            # Played in rounds that may be the last: every table plays its first block of
            # table_size games (one deal group), then every table its second, and so on,
            # so any prefix of the schedule is balanced. The games are the same games.
            blocks.sort(key=lambda b: (b[0], b[1]))
        for _, _, games in blocks:
            plan += games
    specs = []
    groups: dict[str, int] = {}
    sampling = getattr(cfg, "replays", None) == "sample"
    seen: dict[str, int] = {}
    for i, (seats, label) in enumerate(plan):
        group = groups.setdefault(label, len(groups)) if label.startswith("deal:") else len(groups) + i
        sample = sampling and any(seen.get(x, 0) < SAMPLE_PER_ENTRANT for x in seats)
        if sample:
            for x in seats:
                seen[x] = seen.get(x, 0) + 1
        specs.append(GameSpec(i, game_id(i), seats, derive_seed(cfg.seed, label), group, sample))
    return specs
