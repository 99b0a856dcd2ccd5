"""Cards (R1): immutable values with the short notation of R1.2.

>>> Card.parse("R5"), str(Card.parse("B12")), Card.parse("W").points
(Card('R5'), 'B12', 25)
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

COLOR_LETTERS = ("R", "B", "G", "Y")
COLOR_NAMES = {"R": "red", "B": "blue", "G": "green", "Y": "yellow"}
LETTER_OF_COLOR = {v: k for k, v in COLOR_NAMES.items()}


class CardError(ValueError):
    """A card string that is not in the notation of R1.2."""


class Card:
    """One card. Identical cards are the same object (R1.2), so `is` and `==` agree.

    `color` is one of R, B, G, Y (None for Wild and Skip); `number` is 1..12 (0 for Wild
    and Skip).
    """

    __slots__ = ("text", "color", "number", "is_wild", "is_skip", "points", "index")

    text: str
    color: str | None
    number: int
    is_wild: bool
    is_skip: bool
    points: int
    index: int

    def __init__(self, *_: object) -> None:  # pragma: no cover - guarded constructor
        raise TypeError("use Card.parse('R5') or the constants in harness.engine.cards")

    @classmethod
    def _make(cls, text: str, color: str | None, number: int, index: int) -> "Card":
        card = object.__new__(cls)
        object.__setattr__(card, "text", text)
        object.__setattr__(card, "color", color)
        object.__setattr__(card, "number", number)
        object.__setattr__(card, "is_wild", text == "W")
        object.__setattr__(card, "is_skip", text == "S")
        if text == "W":
            points = 25
        elif text == "S":
            points = 15
        else:
            points = 5 if number <= 9 else 10
        object.__setattr__(card, "points", points)
        object.__setattr__(card, "index", index)
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    @staticmethod
    def parse(text: str) -> "Card":
        """The card named by `text` (R1.2 notation), or `CardError`."""
        try:
            return _BY_TEXT[text]
        except (KeyError, TypeError):
            raise CardError(f"R1.2: {text!r} is not a card (expected e.g. R5, B12, W, S)") from None

    @property
    def is_natural(self) -> bool:
        """A numbered card (not Wild, not Skip)."""
        return self.number > 0

    @property
    def color_name(self) -> str | None:
        """'red', 'blue', 'green', 'yellow', or None."""
        return COLOR_NAMES.get(self.color) if self.color else None

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self.text!r})"

    def __reduce__(self) -> tuple:
        return (Card.parse, (self.text,))

    def __lt__(self, other: "Card") -> bool:
        return self.index < other.index

    def __hash__(self) -> int:
        # Stable across processes (unlike id()), so sets of cards iterate alike everywhere.
        return self.index

    # Equality is identity (object's own, in C: fast for `in` and `list.remove`), which is
    # right since identical cards are one object (R1.2).


_ALL: list[Card] = []
for _c in COLOR_LETTERS:
    for _n in range(1, 13):
        _ALL.append(Card._make(f"{_c}{_n}", _c, _n, len(_ALL)))
WILD = Card._make("W", None, 0, len(_ALL))
_ALL.append(WILD)
SKIP = Card._make("S", None, 0, len(_ALL))
_ALL.append(SKIP)
_BY_TEXT: dict[str, Card] = {c.text: c for c in _ALL}

CARD_TYPES: tuple[Card, ...] = tuple(_ALL)
"""The 50 distinct cards."""

COPIES: dict[Card, int] = {c: (8 if c is WILD else 4 if c is SKIP else 2) for c in _ALL}
"""How many copies of each card a deck holds (R1.1)."""

DECK: tuple[Card, ...] = tuple(c for c in _ALL for _ in range(COPIES[c]))
"""The 108-card deck (R1.1), in a fixed order."""

assert len(DECK) == 108


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Parse many cards; raises `CardError` naming the first bad one."""
    return [Card.parse(t) for t in texts]


def format_cards(cards: Iterable[Card]) -> list[str]:
    """The notation of each card."""
    return [c.text for c in cards]


def check_copies(cards: Sequence[Card], what: str = "cards") -> None:
    """Raise `CardError` if `cards` holds more copies of a card than R1.1 allows."""
    counts = Counter(cards)
    for card, n in counts.items():
        if n > COPIES[card]:
            raise CardError(
                f"R1.1: {what} name {n} copies of {card} but the deck has only {COPIES[card]}"
            )
