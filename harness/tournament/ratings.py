"""TrueSkill ratings: one update per game, in game-index order, from the places of R9.4."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import trueskill

MU = 25.0
SIGMA = MU / 3


def make_env() -> trueskill.TrueSkill:
    """The rating environment (TrueSkill's defaults; a small draw probability since shared
    places are rare)."""
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=0.02)


class Ratings:
    """Ratings of every entrant and each one's μ after every game it played."""

    def __init__(self, entrants: Iterable[str]) -> None:
        self.env = make_env()
        self.ratings = {e: self.env.create_rating() for e in entrants}
        self.history: dict[str, list[tuple[int, float]]] = {e: [] for e in self.ratings}

    def update(self, game_index: int, seats: Sequence[str], places: Sequence[int]) -> None:
        """Apply one game: lower place is better; equal places are ties."""
        if len(seats) < 2:
            return
        groups = [(self.ratings[s],) for s in seats]
        new = self.env.rate(groups, ranks=[p - 1 for p in places])
        for s, (r,) in zip(seats, new):
            self.ratings[s] = r
            self.history[s].append((game_index, round(r.mu, 4)))

    def table(self) -> Mapping[str, tuple[float, float]]:
        """entrant → (mu, sigma)."""
        return {e: (r.mu, r.sigma) for e, r in self.ratings.items()}

    def leader(self) -> str | None:
        """The entrant with the highest μ − 3σ."""
        if not self.ratings:
            return None
        return max(self.ratings, key=lambda e: (self.ratings[e].mu - 3 * self.ratings[e].sigma, e))
