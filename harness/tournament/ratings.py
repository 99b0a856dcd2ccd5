"""TrueSkill ratings: one update per game, in game-index order, from the places of R9.4."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import trueskill

MU = 25.0
SIGMA = MU / 3
HISTORY_POINTS = 200
"""Points of rating history kept per entrant at most (plus its latest point)."""


def make_env() -> trueskill.TrueSkill:
    """The rating environment (TrueSkill's defaults; a small draw probability since shared
    places are rare)."""
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=0.02)


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

    def __init__(self, entrants: Iterable[str], history_points: int = HISTORY_POINTS) -> None:
        self.env = make_env()
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
