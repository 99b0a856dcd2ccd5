"""`format: league`: games matched where their result tells most, round by round.

A league plays in rounds of `league.round_games` games: tables of table_size entrants,
each table playing one game per seat rotation (with `duplicate: true` the rotations share
one deal). The tables of a round are matched from the games of the rounds before it
only, so they are the same whatever `parallel` is and in whatever order games finish:

- an active entrant (in the current field, not disqualified) short of
  `league.min_games` games (counting the round's tables so far) takes the first free seat
  of the next table;
- the other seats go to the entrants whose result against the table tells most, as
  ladder matchmaking does: for each pair, p(1 − p)·(σa² + σb²), where p is TrueSkill's
  chance that one places ahead of the other (largest when the ratings are close) and the
  σ² are how uncertain the ratings still are; a table with no entrant short of games
  starts with the pair that tells most; a pair matched k times already in the round
  counts 1 / (1 + k/4) as much;
- no entrant sits at more than twice its share of a round's tables;
- ties are broken by a random order drawn from the tournament seed and the round's
  first game index.

A plain run plays rounds until `games` games are played and every active entrant has
`league.min_games` games; `run --forever` plays until it is stopped. A league never
finishes, so a secret seed is never revealed (the deals of later entrants' games stay
unknown in advance).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Iterator, Mapping, Sequence

from .config import SAMPLE_PER_ENTRANT, TournamentConfig
from ..ratings.trueskill import Ratings, rules_draw_probability
from ..seeds import derive_seed
from .disqualify import BUILD_KEY, disqualifications, failed_builds, judges
from .matching import match_tables
from .schedule import GameSpec, game_id
from ..model import played

class Matchmaker:
    """The rounds of a league: fed the finished games, it matches the round that starts at
    a given index from the games before it (rated in index order).

    It keeps TrueSkill, games per entrant, and the games handed to it (`add`) not rated
    yet, a few bytes each (the runner hands it each game as it finishes, and a round is
    matched once the one before is whole, so that is one round's games). To judge
    disqualifications it reads `history` (the runner's `tally.GameTally`), or the records
    it is fed (`feed` with a mapping of records: `verify`)."""

    def __init__(self, cfg: TournamentConfig, history: Any = None) -> None:
        self.cfg = cfg
        self.ratings = Ratings(cfg.standing, rules_draw_probability(cfg.rules))
        self.games: Counter[str] = Counter()
        self.fed = 0  # games with an index below this are rated
        self.history = history
        self.records: dict[int, Mapping[str, Any]] = {}  # without `history`: the games fed, slim
        self.pending: dict[int, tuple[tuple[str, ...], tuple[int, ...]] | None] = {}
        self.faulty = False  # a game fed had a fault or a forfeit (else no one can be disqualified)

    def add(self, rec: Mapping[str, Any]) -> None:
        """Hand it a finished game (rated at the next `feed` whose `upto` is past it)."""
        i = rec["id"]
        if i < self.fed or i in self.pending:
            return
        was_played = played(rec)
        self.pending[i] = (tuple(rec["seats"]), tuple(rec["places"])) if was_played else None
        self.faulty = self.faulty or was_played and bool(rec.get("faults") or rec.get("forfeits"))
        if self.history is None:
            keep = ("id", "seats", "forfeits", "faults", "reason", BUILD_KEY)
            self.records[i] = {k: rec[k] for k in keep if k in rec}

    def feed(self, records: Any, upto: int) -> None:
        """Rate the games with an index below `upto` not rated yet: those handed to `add`,
        and those of `records` (if given)."""
        if isinstance(records, Mapping):  # else the runner's tally: its games were handed to `add`
            for i in sorted(k for k in records if self.fed <= k < upto):
                self.add(records[i])
        for i in sorted(k for k in self.pending if k < upto):
            g = self.pending.pop(i)
            if g is None:
                continue
            self.ratings.update(i, g[0], g[1])
            self.games.update(g[0])
        self.fed = max(self.fed, upto)

    def excluded(self, start: int) -> set[str]:
        """Entrants disqualified by the games before `start` (a failed build too, once a
        game before `start` carries it)."""
        pol = self.cfg.disqualify
        if self.history is not None:
            builds = self.history.build_failures(below=self.fed)
            recs: Any = self.history.disqualification_records(below=self.fed) if self.faulty and judges(pol) else ()
        else:
            recs = [self.records[i] for i in sorted(self.records) if i < self.fed]
            builds = [d for r in recs for d in failed_builds(r)]
        if not self.faulty or not judges(pol):
            return {d.entrant for d in builds if d.from_index <= start}
        recs = list(recs)
        specs = [GameSpec(r["id"], game_id(r["id"]), tuple(r["seats"]), 0, r["id"]) for r in recs]
        return {d.entrant for d in disqualifications(specs, self.cfg.standing, pol, recs, builds)
                if d.from_index <= start}

    def round(self, start: int, entrants: Sequence[str], records: Any) -> list[GameSpec]:
        """The round of the league starting at game index `start`, matched among
        `entrants` from the games before `start`: those of `records` (games by index), or
        those handed to `add` (the runner passes its tally)."""
        cfg = self.cfg
        assert cfg.seed is not None
        self.feed(records, start)
        n = cfg.table_size
        gone = self.excluded(start)
        out = [e for e in entrants if e not in gone]
        rng = random.Random(derive_seed(cfg.seed, "league", start))
        tables = match_tables(out, self.ratings.table(), self.games, cfg.league.round_games // n, n,
                              cfg.league.min_games, rng, cfg.team_map)
        specs = []
        seen = Counter(self.games)
        sampling = cfg.replays == "sample"
        i = start
        for t, table in enumerate(tables):
            base = list(table)
            rng.shuffle(base)
            for k in range(n):
                seats = tuple(base[k:] + base[:k])
                label = f"league:{start}:{t}" if cfg.duplicate else f"league:{start}:{t}:{k}"
                group = start + t * n if cfg.duplicate else i
                sample = sampling and any(seen[x] < SAMPLE_PER_ENTRANT for x in seats)
                if sample:
                    seen.update(seats)
                specs.append(GameSpec(i, game_id(i), seats, derive_seed(cfg.seed, label), group, sample))
                i += 1
        return specs


def budget_met(cfg: TournamentConfig, records: Any, mm: Matchmaker, start: int) -> bool:
    """A plain run's end: `games` games played before `start` and every active entrant
    (not disqualified) with `league.min_games` of them; never inside a round that has
    games played (one a run was stopped in: a stopped `--forever` run's last round is
    made whole). Those games do not count towards the budget: a resumed run ends where
    one uninterrupted run ends."""
    ahead = sum(1 for i in range(start, start + cfg.league.round_games) if i in records)
    if ahead or len(records) < (cfg.games or 0):
        return False
    mm.feed(records, start)
    out = mm.excluded(start)
    return all(mm.games[e] >= cfg.league.min_games for e in cfg.entrants if e not in out)


def next_start(cfg: TournamentConfig, records: Any) -> int:
    """The first game index of the round to play now in the current field: the round
    of the field's last game if it is not whole, else the one after it. `records`: the
    games by index, or the runner's tally (its `top`: the highest index)."""
    start = cfg.base
    size = cfg.league.round_games
    top = records.top if hasattr(records, "top") else max(records, default=-1)
    if top < start:
        return start
    r = (top - start) // size
    first = start + r * size
    whole = all(i in records for i in range(first, first + size))
    return first if not whole else first + size


def league_rounds(cfg: TournamentConfig, records: Mapping[int, Mapping[str, Any]]) -> Iterator[list[GameSpec]]:
    """Every round of the league that has games in `records`, field by field, each
    matched as the runner matched it (for `verify`)."""
    from .config import Field

    fields = cfg.fields or (Field(0, tuple(cfg.entrants)),)
    mm = Matchmaker(cfg)
    size = cfg.league.round_games
    top = max(records, default=-1)
    for k, f in enumerate(fields):
        end = fields[k + 1].start if k + 1 < len(fields) else top + 1
        start = f.start
        while start < end:
            yield mm.round(start, f.entrants, records)
            start += size


def league_finished(cfg: TournamentConfig, records: Mapping[int, Mapping[str, Any]]) -> bool:
    """A league never finishes (see the module)."""
    return False
