"""Which games a tournament plays: tables, their orders round the table and seat
rotations, and per-game seeds.

Every game's seed comes from the tournament seed and the game's table and number there
(or, with duplicate deals, its deal group), so the schedule is the same whatever runs it.

A field that changes (entrants added or retired between runs over one results folder)
plays in *fields*: each `Field` starts at a game index. The games before it are history
(`Past`): they keep their ids, and a game of the new field's schedule that history
already holds (the same seats and deal seed) is not played again; the others are
numbered from the field's start.
"""

from __future__ import annotations

import hashlib
import random
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations, permutations
from typing import Any, Container, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .config import SAMPLE_PER_ENTRANT, Field, TournamentConfig
from ..seeds import derive_seed
from ..spill import Column
from ..model import played
from .teams import apart, fits

__all__ = ["CompactSchedule", "Field", "GameSpec", "Past", "PastReader", "PlayedGames", "full_schedule", "game_id", "iter_schedule", "plan_rounds", "schedule", "spec_of",
           "tables_for"]


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One scheduled game: index, id, entrants by seat, seed, deal group, and whether its
    replay is kept though it is clean (`replays: sample`)."""

    index: int
    game: str
    seats: tuple[str, ...]
    seed: int
    group: int
    sample: bool = False  # one of the first games of one of its entrants (replays: sample)

    def seats_without(self, excluded: Container[str]) -> tuple[list[str], list[str]]:
        """(the seats that play, the seats left out) when the entrants in `excluded`
        (disqualified) take no part: a game record's `seats` and `disqualified`."""
        return [e for e in self.seats if e not in excluded], [e for e in self.seats if e in excluded]


@dataclass(frozen=True)
class Past:
    """The games before a field's start, as far as its schedule needs them: the games
    already played (seats and seed), the deal group of every duplicate deal, the first
    free group number, and how often each entrant played and each pair met."""

    base: int = 0
    played: Container[tuple[tuple[str, ...], Any]] = frozenset()  # (seats, deal seed) of each game
    groups: Any = field(default_factory=dict)  # deal seed -> group (`.get`)
    next_group: int = 0
    games: Mapping[str, int] = field(default_factory=dict)
    met: Mapping[tuple[str, str], int] = field(default_factory=dict)
    ratings: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # (μ, σ), if rated

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]], base: int, rate: bool = False) -> "Past":
        """The history of the games with an index below `base` (with `rate`, TrueSkill
        over them too, in index order, as a random field's later tables need)."""
        reader = PastReader(base, rate)
        for r in records:
            reader.add(r)
        return reader.past()


_I64 = 1 << 63


def _int64(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and -_I64 <= x < _I64


class PlayedGames:
    """The (seats, deal seed) of the games before a field, and the deal group of each deal
    seed (that of the first game with the seed and a group), held as arrays: some 20 bytes
    a game where a set of them takes ~200. A game whose seed or group is not a 64-bit
    integer (never one the runner writes) is kept as it is."""

    def __init__(self) -> None:
        self._number: dict[Any, int] = {}  # entrant -> its number in `_seats`
        self._seed, self._group = array("q"), array("q")
        self._grouped = bytearray()
        self._at, self._width, self._seats = array("q"), array("b"), array("i")
        self._odd: set[tuple[tuple[Any, ...], Any]] = set()
        self._odd_groups: dict[Any, tuple[int, Any]] = {}  # seed -> (position, group)
        self._n = 0  # games added
        self._index: Any = None  # (seeds sorted, their positions), made when first asked

    def add(self, seats: tuple[Any, ...], seed: Any, group: Any) -> None:
        """One more game: its seats, its deal seed and its group (None: none)."""
        k = self._n
        self._n += 1
        self._index = None
        grouped = isinstance(group, int)
        odd = not _int64(seed) or grouped and not _int64(group)
        if odd:  # kept as it is; its row is a placeholder no lookup matches (width -1)
            self._odd.add((seats, seed))
            if grouped:
                self._odd_groups.setdefault(seed, (k, group))
            seed, grouped, group = -1, False, 0
        codes = () if odd else self.numbers(seats)
        self._seed.append(seed)
        self._group.append(group if grouped else 0)
        self._grouped.append(grouped)
        self._at.append(len(self._seats))
        self._width.append(-1 if odd else len(codes))
        self._seats.extend(codes)

    def numbers(self, seats: Iterable[Any]) -> tuple[int, ...]:
        """The entrants' numbers (a new entrant gets the next one)."""
        return tuple(self._number.setdefault(x, len(self._number)) for x in seats)

    def names(self) -> list[Any]:
        """The entrants by number."""
        return list(self._number)

    def _matches(self, seed: int) -> Iterator[int]:
        """The positions of the games with deal seed `seed`, in the order added."""

        if self._index is None:
            seeds = np.frombuffer(self._seed, dtype=np.int64) if self._n else np.zeros(0, dtype=np.int64)
            order = np.argsort(seeds, kind="stable")
            self._index = (seeds[order], order)
        seeds, order = self._index
        lo, hi = np.searchsorted(seeds, seed, "left"), np.searchsorted(seeds, seed, "right")
        return iter(order[lo:hi].tolist())

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        seats, seed = item
        if (seats, seed) in self._odd:
            return True
        if not _int64(seed):
            return False
        codes = tuple(self._number.get(x, -1) for x in seats)
        if -1 in codes:
            return False
        for k in self._matches(seed):
            at = self._at[k]
            if self._width[k] == len(codes) and tuple(self._seats[at:at + len(codes)]) == codes:
                return True
        return False

    def get(self, seed: Any, default: Any = None) -> Any:
        """The deal group of deal seed `seed` (`default`: no game with it has one)."""
        best = self._odd_groups.get(seed)
        if _int64(seed):
            for k in self._matches(seed):
                if self._grouped[k]:
                    if best is None or k < best[0]:
                        best = (k, self._group[k])
                    break
        return default if best is None else best[1]


class PastReader:
    """`Past.of` fed one record at a time (records of any index, in any order; those at
    `base` or beyond are left out), holding what it needs as arrays: the games played
    (`PlayedGames`), the counts of games and meetings, and with `rate` each game's seats
    and places until it is rated, in index order, by `past`."""

    def __init__(self, base: int, rate: bool = False) -> None:
        self.base, self.rate = base, rate
        self.count = 0  # games read below `base`
        self.played = PlayedGames()
        self.games: dict[str, int] = {}
        self.met: dict[tuple[str, str], int] = {}
        self.top = -1
        # with `rate`, the games to rate: index, seats (entrant numbers) and places, or the
        # record's own seats and places where a place is not a 64-bit integer
        self._ids, self._at, self._width = array("q"), array("q"), array("b")
        self._seats, self._places = array("i"), array("q")
        self._odd: dict[int, tuple[Any, Any]] = {}

    def add(self, r: Mapping[str, Any]) -> None:
        """Read one game's record."""
        i = r["id"]
        if i >= self.base:
            return
        self.count += 1
        seats = tuple(r["seats"])
        g = r.get("group")
        self.played.add(seats, r["seed"], g)
        if isinstance(g, int):
            self.top = max(self.top, g)
        for x in seats:
            self.games[x] = self.games.get(x, 0) + 1
            for y in seats:
                if x != y:
                    self.met[x, y] = self.met.get((x, y), 0) + 1
        if self.rate and played(r) and "places" in r:
            places = r["places"]
            k = len(self._ids)
            self._ids.append(i)
            self._at.append(len(self._seats))
            if isinstance(places, list) and len(places) == len(seats) < 128 and all(
                    isinstance(p, int) and -_I64 <= p < _I64 for p in places):
                self._width.append(len(seats))
                self._seats.extend(self.played.numbers(seats))
                self._places.extend(places)
            else:
                self._width.append(-1)
                self._odd[k] = (r["seats"], places)

    def past(self) -> Past:
        """The history read so far."""
        ratings: dict[str, tuple[float, float]] = {}
        if self.rate:
            from ..ratings.trueskill import Ratings

            rated = Ratings(sorted(self.games))
            names = self.played.names()
            for k in sorted(range(len(self._ids)), key=self._ids.__getitem__):
                at, w = self._at[k], self._width[k]
                if w < 0:
                    seats, places = self._odd[k]
                else:
                    seats = [names[x] for x in self._seats[at:at + w]]
                    places = self._places[at:at + w].tolist()
                rated.update(self._ids[k], seats, places)
            ratings = dict(rated.table())
        return Past(self.base, self.played, self.played, self.top + 1, dict(self.games), dict(self.met), ratings)


class CompactSchedule:
    """A field's schedule (games with consecutive indices from `start`) held as arrays:
    ~22 bytes a game (seats as entrant numbers, seed, deal group, sample flag) where a list
    of `GameSpec`s takes some 550, and a long schedule's arrays in files (`spill`). Read by
    position (`spec`, `span`) or in order."""

    def __init__(self, specs: Iterable[GameSpec], start: int = 0) -> None:
        self.start = start
        self.names: list[str] = []
        self._number: dict[str, int] = {}
        seats, width, seed, group, sample = (Column(np.int16), Column(np.int8), Column(np.int64), Column(np.int64),
                                             Column(np.uint8))
        at: Column | None = None  # where each game's seats begin in `seats`, once widths differ
        # a block of games in `array`s (appended at C speed), then into the columns
        b_seats, b_width, b_seed, b_group, b_sample, b_at = (array("h"), array("b"), array("q"), array("q"),
                                                             array("B"), array("q"))

        def flush() -> None:
            for col, blk in ((seats, b_seats), (width, b_width), (seed, b_seed), (group, b_group),
                             (sample, b_sample)) + (((at, b_at),) if at is not None else ()):
                col.extend(np.frombuffer(blk, dtype=col.view().dtype))
                del blk[:]

        number, names = self._number, self.names
        w0, total = 0, 0  # the first game's width; seats so far
        for k, s in enumerate(specs):
            if s.index != start + k:
                raise ValueError(f"game {s.game}: index {s.index}, expected {start + k} (not consecutive)")
            w = len(s.seats)
            if not k:
                w0 = w
            elif at is None and w != w0:  # widths differ: positions kept from now
                flush()
                at = Column(np.int64)
                at.extend(np.arange(0, k * w0, w0, dtype=np.int64))
            if at is not None:
                b_at.append(total)
            for e in s.seats:
                n = number.get(e)
                if n is None:
                    n = number[e] = len(names)
                    names.append(e)
                b_seats.append(n)
            total += w
            b_width.append(w)
            b_seed.append(s.seed)
            b_group.append(s.group)
            b_sample.append(s.sample)
            if len(b_seed) >= 1 << 14:
                flush()
        flush()
        # the columns as they stand (read-only; a long one lives in a file, see `spill`)
        self._seats, self._width, self._seed, self._group, self._sample = (
            seats.view(), width.view(), seed.view(), group.view(), sample.view())
        self._at = None if at is None else at.view()
        self._w0 = int(self._width[0]) if len(self._width) else 0

    def __len__(self) -> int:
        return len(self._seed)

    def __iter__(self) -> Iterator[GameSpec]:
        return self.specs(0, len(self))

    def specs(self, a: int, b: int) -> Iterator[GameSpec]:
        """The games at positions a..b-1 in order, read a block at a time."""
        names, step = self.names, 256  # a block of Python values: some 50 KB
        for lo in range(a, b, step):
            hi = min(b, lo + step)
            widths = self._width[lo:hi].tolist()
            if self._at is not None:
                first = int(self._at[lo])
                ats = [x - first for x in self._at[lo:hi].tolist()]
                flat = self._seats[first:first + sum(widths)].tolist()
            else:
                ats = list(range(0, (hi - lo) * self._w0, self._w0))
                flat = self._seats[lo * self._w0:hi * self._w0].tolist()
            for j, (w, at, sd, g, smp) in enumerate(zip(widths, ats, self._seed[lo:hi].tolist(),
                                                       self._group[lo:hi].tolist(), self._sample[lo:hi].tolist())):
                i = self.start + lo + j
                yield GameSpec(i, game_id(i), tuple(names[x] for x in flat[at:at + w]), sd, g, bool(smp))

    def spec(self, k: int) -> GameSpec:
        """The game at position `k` (index `start + k`; a negative `k` counts from the end)."""
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"position {k} of a schedule of {len(self)} games")
        at = int(self._at[k]) if self._at is not None else k * self._w0
        names = self.names
        seats = tuple(names[x] for x in self._seats[at:at + int(self._width[k])].tolist())
        i = self.start + k
        return GameSpec(i, game_id(i), seats, int(self._seed[k]), int(self._group[k]), bool(self._sample[k]))

    def seed(self, k: int) -> int:
        """The deal seed of the game at position `k`."""
        return int(self._seed[k])

    def span(self, a: int, b: int) -> "ScheduleSpan":
        """The games at positions a..b-1, as a sequence."""
        return ScheduleSpan(self, a, b)

    def rounds(self, round_games: int) -> list["ScheduleSpan"]:
        """`plan_rounds` of the schedule: consecutive games, at least `round_games` a
        round, never splitting a deal group; the last round takes what is left."""
        out: list[ScheduleSpan] = []
        a = 0
        g = self._group
        step = 1 << 16
        for lo in range(1, len(self), step):  # where a deal group begins, a block at a time
            hi = min(len(self), lo + step)
            for k in (lo + np.flatnonzero(g[lo:hi] != g[lo - 1:hi - 1])).tolist():
                if k - a >= round_games:
                    out.append(ScheduleSpan(self, a, k))
                    a = k
        if len(self):
            out.append(ScheduleSpan(self, a, len(self)))
        return out


class ScheduleSpan(Sequence[GameSpec]):
    """Consecutive games of a `CompactSchedule`, made into `GameSpec`s as they are read."""

    def __init__(self, sched: CompactSchedule, a: int, b: int) -> None:
        self.sched, self.a, self.b = sched, a, b

    def __len__(self) -> int:
        return self.b - self.a

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self.sched.spec(self.a + j) for j in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self.sched.spec(self.a + k)

    def __iter__(self) -> Iterator[GameSpec]:
        return self.sched.specs(self.a, self.b)


def plan_rounds(specs: Sequence[GameSpec], round_games: int) -> list[list[GameSpec]]:
    """The schedule cut into rounds: consecutive games, at least `round_games` of them per
    round, never splitting a deal group (a round ends only where the next game starts
    another ``group``); the last round takes what is left."""
    rounds: list[list[GameSpec]] = []
    cur: list[GameSpec] = []
    for spec in specs:
        if len(cur) >= round_games and spec.group != cur[-1].group:
            rounds.append(cur)
            cur = []
        cur.append(spec)
    if cur:
        rounds.append(cur)
    return rounds


def spec_of(rec: Mapping[str, Any]) -> "GameSpec":
    """The spec of a recorded game (history: the game as it was scheduled)."""
    return GameSpec(rec["id"], rec["game"], tuple(rec["seats"]), rec["seed"], rec.get("group", rec["id"]))


def played_as(spec: "GameSpec", rec: Mapping[str, Any]) -> bool:
    """Whether `rec` is the record of game `spec` as the runner plays it: its id, deal seed
    and seats, but the entrants it lists as disqualified (each of them at its table)."""
    out = rec.get("disqualified") or []
    return (isinstance(out, list) and all(isinstance(e, str) and e in spec.seats for e in out)
            and (rec.get("game"), rec.get("seed"), [rec.get("seats"), out]) == (
                spec.game, spec.seed, list(spec.seats_without(set(out)))))


def game_id(index: int) -> str:
    """The id of game `index`: g000000, g000001, ..."""
    return f"g{index:06d}"


def tables_for(cfg: TournamentConfig, entrants: Sequence[str] | None = None) -> list[tuple[str, ...]]:
    """The tables (entrants, in base seat order) of a round-robin or gauntlet of
    `entrants` (default: the config's); no table seats two entrants of one team."""
    names = list(cfg.entrants if entrants is None else entrants)
    n = cfg.table_size
    teams = cfg.team_map
    if cfg.format == "round-robin":
        return [tuple(t) for t in combinations(names, n) if apart(t, teams)]
    if cfg.format == "gauntlet":
        field = [x for x in names if x not in cfg.challengers]
        return [(c,) + tuple(rest) for c in cfg.challengers if c in names for rest in combinations(field, n - 1)
                if apart((c, *rest), teams)]
    raise ValueError(cfg.format)


def _random_tables(cfg: TournamentConfig, count: int, names: Sequence[str], past: Past) -> Iterator[tuple[str, ...]]:
    """`count` tables where entrants play equally often and pairs meet as evenly as
    possible, counting the games of `past` too (a new entrant plays first), one at a time;
    no table seats two entrants of one team."""
    assert cfg.seed is not None
    rng = random.Random(derive_seed(cfg.seed, "tables", *([past.base] if past.base else [])))
    teams = cfg.team_map
    played = {x: past.games.get(x, 0) for x in names}
    met = {(a, b): past.met.get((a, b), 0) for a in names for b in names}
    for _ in range(count):
        table: list[str] = []
        while len(table) < cfg.table_size:
            candidates = [x for x in names if x not in table and fits(x, table, teams)]
            rng.shuffle(candidates)
            best = min(candidates, key=lambda x: (played[x], sum(met[x, y] for y in table)))
            table.append(best)
        for x in table:
            played[x] += 1
            for y in table:
                if x != y:
                    met[x, y] += 1
        rng.shuffle(table)
        yield tuple(table)


def _matched_tables(cfg: TournamentConfig, count: int, names: Sequence[str], past: Past) -> Iterator[tuple[str, ...]]:
    """A later field of a random tournament: `count` tables matched where their results
    tell most from the ratings of the games before it (`league.match_tables`: an entrant
    short of the league's default `min_games` first, then close ratings and high
    uncertainty), seats in a random order."""
    from .config import LeaguePolicy
    from ..ratings.trueskill import MU, SIGMA
    from .matching import match_tables

    assert cfg.seed is not None
    rng = random.Random(derive_seed(cfg.seed, "tables", past.base))
    ratings = {e: past.ratings.get(e, (MU, SIGMA)) for e in names}
    for table in match_tables(list(names), ratings, past.games, count, cfg.table_size, LeaguePolicy().min_games, rng,
                              cfg.team_map):
        seats = list(table)
        rng.shuffle(seats)
        yield tuple(seats)


def schedule(cfg: TournamentConfig, entrants: Sequence[str] | None = None, past: Past | None = None) -> list[GameSpec]:
    """Every game of the tournament (of its field from `past.base` on), in index order:
    `iter_schedule` as a list."""
    return list(iter_schedule(cfg, entrants, past))


def iter_schedule(cfg: TournamentConfig, entrants: Sequence[str] | None = None,
                  past: Past | None = None) -> Iterator[GameSpec]:
    """Every game of the tournament (of its field from `past.base` on), in index order,
    one at a time (nothing of the schedule is held but the tables).

    A game's seed depends on its table (the entrants, whatever other entrants the
    tournament has) and its number at that table, so the games between the same entrants
    are the same games in any field. With duplicate deals, the games of one group share
    one seed, and so one deal, in every seat rotation. With early stopping (`stop_when`)
    the round-robin and gauntlet schedules take the tables in turn, one block of
    table_size games at a time, instead of one table after another.

    `entrants`: the field (default: the config's bots); `past`: the games before this
    field (`Past.of`): those its schedule holds are left out, and the rest are numbered
    from `past.base`. A random field plays `games` games of its own after `past`: the
    first field random tables, a later one tables matched from the games before it
    (`_matched_tables`).
    """
    if cfg.seed is None:
        raise ValueError(f"tournament {cfg.name!r}: the secret seed is not drawn yet (the runner draws it)")
    if cfg.format == "league":
        raise ValueError("a league has no schedule in advance: its rounds are matched as it goes (league.py)")
    names = list(cfg.entrants if entrants is None else entrants)
    past = past or Past()
    return _number(cfg, _plan(cfg, names, past), past)


def _plan(cfg: TournamentConfig, names: list[str], past: Past) -> Iterator[tuple[tuple[str, ...], str]]:
    """The (seats, seed label) of every game, in schedule order."""
    n = cfg.table_size
    if cfg.format == "random":
        assert cfg.games is not None
        at = f"{past.base}:" if past.base else ""
        draw = _random_tables if not past.base else _matched_tables
        if cfg.duplicate:
            for g, table in enumerate(draw(cfg, cfg.games // n, names, past)):
                for k in range(n):
                    yield _rotation(table, k), f"deal:{at}{g}"
        else:
            for i, one in enumerate(draw(cfg, cfg.games, names, past)):
                yield one, f"game:{past.base + i}"
        return
    tables = tables_for(cfg, names)
    keys = [",".join(sorted(t)) for t in tables]

    seating = getattr(cfg, "seating", "balanced")
    balanced = seating in ("seeded", "balanced")
    # "seeded": each table's sequence of orders is drawn from the tournament seed, so that
    # no entrant can choose its neighbours by its name (with a secret seed, nobody knows
    # them before the games); "balanced", the earlier schedule: fixed by the names.
    order_keys = [derive_seed(cfg.seed, "orders", k) if seating == "seeded" and cfg.seed is not None else None
                  for k in keys]

    def block(t: int, b: int) -> Iterator[tuple[tuple[str, ...], str]]:
        order = seat_order(tables[t], b, order_keys[t]) if balanced else tables[t]
        for k in range(b * n, min((b + 1) * n, cfg.games_per_table)):
            yield _rotation(order, k), f"deal:{keys[t]}:{k // n}" if cfg.duplicate else f"game:{keys[t]}:{k}"

    blocks = -(-cfg.games_per_table // n)
    if getattr(cfg, "stop_when", None):
        # Played in rounds that may be the last: every table plays its first block of
        # table_size games (one deal group), then every table its second, and so on,
        # so any prefix of the schedule is balanced. The games are the same games.
        for b in range(blocks):
            for t in range(len(tables)):
                yield from block(t, b)
    else:
        for t in range(len(tables)):
            for b in range(blocks):
                yield from block(t, b)


def seat_order(table: Sequence[str], block: int, key: int | None = None) -> tuple[str, ...]:
    """The order round the table of a table's `block`-th block of table_size games (one
    duplicate deal group), with `seating: balanced`: its first entrant first, then the
    others in one of their (n − 1)! orders. Each block is played in every seat rotation
    of its order, so every entrant still holds every seat once; the orders change from
    block to block so that who plays right after whom (whose discards a seat is offered,
    R3.1, R2.1) is balanced too: every order once in each (n − 1)! blocks (2 at 3
    players, 6 at 4), and each order followed by its reverse, so that in every two
    blocks no entrant plays after the same one twice. The sequence is shuffled, so that
    no entrant of the field's order sits after another more often in short runs either:
    by `key` (`seating: seeded`, drawn from the tournament seed: the orders of a run
    that stops before they even out are not known before its games, so no name can
    choose them), or, without one, by the table's entrants (`seating: balanced`, the same
    in every tournament: an entrant could pick its neighbours by trying names)."""
    orders = _orders(tuple(table), key)
    return orders[block % len(orders)]


@lru_cache(maxsize=1024)
def _orders(table: tuple[str, ...], key: int | None = None) -> tuple[tuple[str, ...], ...]:
    """A table's (n − 1)! orders with its first entrant first, in pairs (an order, then
    the same order reversed round the table), the pairs in a sequence shuffled by `key`,
    or without one by the table's entrants (the same in every tournament)."""
    if len(table) < 3:
        return (table,)
    head, rest = table[0], table[1:]
    pairs = [(o, o[::-1]) for o in permutations(rest) if o < o[::-1]]
    random.Random(key if key is not None else hashlib.sha256("\x1f".join(table).encode()).digest()).shuffle(pairs)
    return tuple((head,) + o for pair in pairs for o in pair)


def _rotation(table: Sequence[str], k: int) -> tuple[str, ...]:
    """Seat rotation `k` of a table: its entrants from seat k % n on, then the rest."""
    j = k % len(table)
    return tuple(table[j:]) + tuple(table[:j])


def _number(cfg: TournamentConfig, plan: Iterable[tuple[tuple[str, ...], str]], past: Past) -> Iterator[GameSpec]:
    """GameSpecs of (seats, seed label) pairs: the games `past` does not hold, numbered
    from `past.base`; the games of one duplicate deal share a group (the one `past` gave
    that deal, if any), every other game has its own."""
    assert cfg.seed is not None
    groups: dict[str, int] = {}
    sampling = getattr(cfg, "replays", None) == "sample"
    seen: dict[str, int] = dict(past.games)
    i = past.base
    fresh = past.next_group  # the next group number not taken
    for seats, label in plan:
        seed = derive_seed(cfg.seed, label)
        if (seats, seed) in past.played:
            continue
        if label.startswith("deal:"):
            group = groups.get(label)
            if group is None:
                group = past.groups.get(seed)
                if group is None:
                    group, fresh = fresh, fresh + 1
                groups[label] = group
        else:
            group, fresh = fresh, fresh + 1
        sample = sampling and any(seen.get(x, 0) < SAMPLE_PER_ENTRANT for x in seats)
        if sample:
            for x in seats:
                seen[x] = seen.get(x, 0) + 1
        yield GameSpec(i, game_id(i), seats, seed, group, sample)
        i += 1


def full_schedule(cfg: TournamentConfig, records: Mapping[int, Mapping[str, Any]]) -> list[GameSpec]:
    """Every game of the tournament as far as it is known: the games of the fields before
    the current one as they were played (`records`), then the current field's schedule
    (for a league, whose rounds are matched as it goes: the games played)."""
    base = cfg.base if cfg.format != "league" else max(records, default=-1) + 1
    past = [spec_of(records[i]) for i in sorted(records) if i < base]
    if cfg.format == "league":
        return past
    return past + schedule(cfg, past=Past.of(records.values(), base, rate=cfg.format == "random"))
