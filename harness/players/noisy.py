"""Noisy greedy: the greedy player that, with probability `p`, hands a decision to the
random player instead. A field of them with increasing `p` has a known strength order,
which is what the statistics tests need."""

from __future__ import annotations

import random
import zlib
from typing import Any

from .base import Strategy
from .greedy import GreedyStrategy
from .random import RandomStrategy


class NoisyGreedyStrategy(Strategy):
    """Greedy, except that each decision is made by `RandomStrategy` with probability `p`
    (p = 0 is the greedy player, p = 1 the random one). Like the random player, its
    choices come from `seed`, the game id and the seat, so a game's moves do not depend on
    which games were played before."""

    def __init__(self, p: float, seed: int = 0) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be a probability in [0, 1], not {p!r}")
        self.p = p
        self.seed = seed
        self.name = f"noisy{p:g}"
        self.greedy = GreedyStrategy()
        self.random = RandomStrategy(seed)
        self.rng = random.Random(seed)

    def new_game(self, game: str, seat: int) -> None:
        self.greedy.new_game(game, seat)
        self.random.new_game(game, seat)
        self.rng = random.Random(zlib.crc32(f"noisy:{self.seed}:{game}:{seat}".encode()))

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        if self.p and self.rng.random() < self.p:
            return self.random.decide(state, decision, options)
        return self.greedy.decide(state, decision, options)
