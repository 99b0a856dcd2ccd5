"""Stacked deals ("Test deals" of the protocol): a game dealt from given cards.

A deck is {"deals": [{"hands": [[10 cards], ...], "discard": "S", "draw": ["W", ...]}]};
cards not named are shuffled from the game's seed beneath the named draw cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .cards import Card, CardError, check_copies


class DeckError(ValueError):
    """A deck description that cannot be dealt."""


@dataclass(frozen=True, slots=True)
class Deal:
    """One hand's stacked cards: per-seat hands, the first up-card, the top of the draw pile."""

    hands: tuple[tuple[Card, ...], ...]
    discard: Card | None
    draw: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Deck:
    """Stacked deals for the first hands of a game; later hands are shuffled as usual."""

    deals: tuple[Deal, ...]

    @staticmethod
    def from_dict(d: Any) -> "Deck":
        """Parse and check a deck description; raises `DeckError` with the place of the fault."""
        if not isinstance(d, Mapping) or not isinstance(d.get("deals"), list):
            raise DeckError('a deck is {"deals": [{"hands": [[...], ...], "discard": "S", "draw": [...]}]}')
        deals = []
        for i, deal in enumerate(d["deals"]):
            where = f"deal {i + 1}"
            if not isinstance(deal, Mapping):
                raise DeckError(f"{where} must be an object with hands, discard and draw")
            unknown = set(deal) - {"hands", "discard", "draw"}
            if unknown:
                raise DeckError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
            hands = deal.get("hands")
            if not isinstance(hands, list) or not hands or not all(isinstance(h, list) for h in hands):
                raise DeckError(f"{where}: 'hands' must be a list with one list of 10 cards per seat")
            try:
                parsed_hands = []
                for s, h in enumerate(hands):
                    if len(h) != 10:
                        raise DeckError(f"{where}: seat {s}'s hand has {len(h)} cards; R2.2 deals 10")
                    parsed_hands.append(tuple(Card.parse(c) for c in h))
                disc = deal.get("discard")
                discard = None if disc is None else Card.parse(disc)
                draw_list = deal.get("draw", [])
                if not isinstance(draw_list, list):
                    raise DeckError(f"{where}: 'draw' must be a list of cards, top first")
                draw = tuple(Card.parse(c) for c in draw_list)
                named = [c for h in parsed_hands for c in h] + ([discard] if discard else []) + list(draw)
                check_copies(named, f"{where}'s cards")
            except CardError as e:
                raise DeckError(f"{where}: {e}") from None
            deals.append(Deal(tuple(parsed_hands), discard, draw))
        return Deck(tuple(deals))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, which `from_dict` reads back."""
        return {
            "deals": [
                {
                    "hands": [[c.text for c in h] for h in deal.hands],
                    "discard": deal.discard.text if deal.discard else None,
                    "draw": [c.text for c in deal.draw],
                }
                for deal in self.deals
            ]
        }
