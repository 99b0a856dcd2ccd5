"""TrueSkill ratings: one update per game, in game-index order, from the places of R9.4.

TrueSkill is the leaderboard's second rating, shown beside the batch Plackett–Luce one
that orders the board. Its draw probability (how often neighbouring places are shared) is
set from the variant (`rules_draw_probability`): short games share places far more often
(5.9 % of neighbouring places with ``phases: [1, 2]``, 1.0 % with the ten standard phases,
measured with the greedy and noisy greedy players).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import trueskill

MU = 25.0
SIGMA = MU / 3
HISTORY_POINTS = 200
"""Points of rating history kept per entrant at most (plus its latest point)."""


DRAWS_SHORT = 0.059  # shared neighbouring places, phases: [1, 2] (two phases)
DRAWS_STANDARD = 0.010  # the same with the ten standard phases


def draw_probability_for(goal: int) -> float:
    """The share of neighbouring places that are shared in games that end after `goal`
    phases: the two measured points (2 phases: 5.9 %, 10: 1.0 %), geometric in between and
    held beyond them."""
    g = min(max(goal, 2), 10)
    return round(DRAWS_SHORT * (DRAWS_STANDARD / DRAWS_SHORT) ** ((g - 2) / 8), 4)


def rules_draw_probability(rules: Any) -> float:
    """`draw_probability_for` the number of phases a game of `rules` is played to."""
    goal = rules.first_to or len(rules.phases)
    return draw_probability_for(goal)


def make_env(draw_probability: float = DRAWS_STANDARD) -> trueskill.TrueSkill:
    """The rating environment: TrueSkill's defaults with the given draw probability."""
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=draw_probability)


class Trail:
    """An entrant's μ after the games it played, thinned to at most `cap` points (and the
    latest): every game while there are fewer; then every 2nd game, every 4th, … (the
    stride doubles, and every other kept point goes, each time `cap` points are reached).
    Which points are kept depends only on how many games there were, so the same games
    in the same order always give the same trail."""

    __slots__ = ("cap", "stride", "count", "points", "last")

    def __init__(self, cap: int = HISTORY_POINTS) -> None:
        self.cap = max(2, cap)
        self.stride = 1
        self.count = 0
        self.points: list[tuple[int, float, int]] = []
        self.last: tuple[int, float, int] | None = None

    def add(self, game_index: int, mu: float) -> None:
        """The rating after one more game."""
        point = (game_index, mu, self.count + 1)
        if self.count % self.stride == 0:
            self.points.append(point)
            if len(self.points) >= self.cap:
                del self.points[1::2]
                self.stride *= 2
        self.count += 1
        self.last = point

    def state(self) -> dict[str, Any]:
        """The trail as JSON (`from_state` reads it back)."""
        return {"cap": self.cap, "stride": self.stride, "count": self.count,
                "points": [list(p) for p in self.points], "last": None if self.last is None else list(self.last)}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> "Trail":
        """The trail `state()` wrote."""
        t = cls(int(state["cap"]))
        t.stride, t.count = int(state["stride"]), int(state["count"])
        t.points = [(int(i), float(mu), int(n)) for i, mu, n in state["points"]]
        last = state["last"]
        t.last = None if last is None else (int(last[0]), float(last[1]), int(last[2]))
        return t

    def points_kept(self) -> list[tuple[int, float, int]]:
        """The kept points in game order, the latest always among them: (game index, μ
        after it, how many games the entrant had played then)."""
        if self.last is None or (self.points and self.points[-1] == self.last):
            return list(self.points)
        return self.points + [self.last]


class Ratings:
    """Ratings of every entrant and each one's μ after the games it played (`history`,
    thinned to at most `HISTORY_POINTS` + 1 points per entrant: memory and leaderboard.json
    stay the same size however many games are played)."""

    def __init__(self, entrants: Iterable[str], draw_probability: float = DRAWS_STANDARD,
                 history_points: int = HISTORY_POINTS) -> None:
        self.draw_probability = draw_probability
        self.env = make_env(draw_probability)
        self.ratings = {e: self.env.create_rating() for e in entrants}
        self.trails = {e: Trail(history_points) for e in self.ratings}

    def update(self, game_index: int, seats: Sequence[str], places: Sequence[int]) -> None:
        """Apply one game: lower place is better; equal places are ties."""
        if len(seats) < 2:
            return
        groups = [(self.ratings[s],) for s in seats]
        new = self.env.rate(groups, ranks=[p - 1 for p in places])
        for s, (r,) in zip(seats, new):
            self.ratings[s] = r
            self.trails[s].add(game_index, round(r.mu, 4))

    def state(self) -> dict[str, Any]:
        """Everything the ratings are, as JSON (`from_state` reads it back): the draw
        probability, each entrant's μ and σ, and its trail."""
        return {"draw_probability": self.draw_probability,
                "entrants": {e: {"mu": r.mu, "sigma": r.sigma, "trail": self.trails[e].state()}
                             for e, r in self.ratings.items()}}

    def widened(self, entrants: Sequence[str]) -> "Ratings | None":
        """These ratings over `entrants` (in that order), an entrant new to them unrated;
        None if they rate one that is not among `entrants`."""
        if not set(self.ratings) <= set(entrants):
            return None
        out = Ratings(entrants, self.draw_probability, self.trails[next(iter(self.trails))].cap if self.trails else
                      HISTORY_POINTS)
        for e in self.ratings:
            out.ratings[e], out.trails[e] = self.ratings[e], self.trails[e]
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> "Ratings":
        """The ratings `state()` wrote (ValueError if it is not such a state)."""
        try:
            ents = state["entrants"]
            out = cls(list(ents), float(state["draw_probability"]))
            for e, v in ents.items():
                out.ratings[e] = out.env.create_rating(mu=float(v["mu"]), sigma=float(v["sigma"]))
                out.trails[e] = Trail.from_state(v["trail"])
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"not a ratings state ({err!r})") from None
        return out

    @property
    def history(self) -> dict[str, list[tuple[int, float, int]]]:
        """entrant → [(game index, μ after it, games played by then)], thinned (see `Trail`)."""
        return {e: t.points_kept() for e, t in self.trails.items()}

    def table(self) -> Mapping[str, tuple[float, float]]:
        """entrant → (mu, sigma)."""
        return {e: (r.mu, r.sigma) for e, r in self.ratings.items()}

    def leader(self) -> str | None:
        """The entrant with the highest μ − 3σ."""
        if not self.ratings:
            return None
        return max(self.ratings, key=lambda e: (self.ratings[e].mu - 3 * self.ratings[e].sigma, e))
