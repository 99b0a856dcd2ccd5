"""Random: random legal choices; lays and hits when it happens to hold them."""

from __future__ import annotations

import random
import zlib
from typing import Any

from ..engine import find_lay
from .base import Strategy, TableModel, cards_of, phase_from_view
from .greedy import skip_targets


class RandomStrategy(Strategy):
    """The random player. Its choices come from `seed`, the game id and the seat, so a
    game's moves do not depend on which games the same process played before."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def new_game(self, game: str, seat: int) -> None:
        self.rng = random.Random(zlib.crc32(f"{self.seed}:{game}:{seat}".encode()))

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        rng = self.rng
        if decision == "draw":
            piles = ["deck"] + (["discard"] if state["can_take_discard"] else [])
            return {"draw": rng.choice(piles)}
        hand = cards_of(state["cards"])
        reply: dict[str, Any] = {}
        laid = state["laid"]
        if not laid:
            lay = find_lay(hand, phase_from_view(state["phase"]))
            if lay:
                reply["lay"] = [[c.text for c in m] for m in lay]
                for m in lay:
                    for c in m:
                        hand.remove(c)
                laid = True
        if laid and state["table"]:
            model = TableModel(state["table"])
            hits = []
            for card in list(hand):
                places = model.fits(card)
                if places and rng.random() < 0.5:
                    i, end = rng.choice(places)
                    hits.append(model.hit(i, card, end))
                    hand.remove(card)
            if hits:
                reply["hits"] = hits
        if hand:
            card = rng.choice(hand)
            reply["discard"] = card.text
            if card.is_skip:
                targets = skip_targets(state)
                reply["skip"] = rng.choice(targets) if targets else None
        return reply
