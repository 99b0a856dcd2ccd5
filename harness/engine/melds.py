"""Melds (R4): checking a laid group against a requirement, and hits on the table (R7)."""

from __future__ import annotations

from itertools import permutations
from typing import Any, Sequence

from .cards import COLOR_NAMES, Card
from .errors import IllegalMove
from .phases import MeldReq, Phase


def _names(cards: Sequence[Card]) -> str:
    return "[" + " ".join(c.text for c in cards) + "]"


class Meld:
    """A meld on the table. Hits give a new `Meld`; a laid meld's cards never move (R4.7).

    Set: `number`. Run: `low`, `high` (cards listed low to high, Wilds where they
    stand). Colour: `color` (a letter R/B/G/Y).
    """

    __slots__ = ("id", "owner", "kind", "number", "color", "low", "high", "cards", "_dict")

    def __init__(
        self,
        id: int,
        owner: int,
        kind: str,
        cards: tuple[Card, ...],
        number: int = 0,
        color: str | None = None,
        low: int = 0,
        high: int = 0,
    ) -> None:
        self.id = id
        self.owner = owner
        self.kind = kind
        self.cards = cards
        self.number = number
        self.color = color
        self.low = low
        self.high = high
        self._dict: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The protocol form of a table meld (built once: a meld never changes)."""
        if self._dict is not None:
            return self._dict
        d: dict[str, Any] = {"id": self.id, "owner": self.owner, "kind": self.kind}
        if self.kind == "set":
            d["number"] = self.number
        elif self.kind == "run":
            d["low"] = self.low
            d["high"] = self.high
        else:
            d["color"] = COLOR_NAMES[self.color]  # type: ignore[index]
        d["cards"] = [c.text for c in self.cards]
        self._dict = d
        return d

    def describe(self) -> str:
        """E.g. 'run 3..6 [W R4 B5 G6]'."""
        if self.kind == "set":
            what = f"set of {self.number}s"
        elif self.kind == "run":
            what = f"run {self.low}..{self.high}"
        else:
            what = f"{COLOR_NAMES[self.color]} colour"  # type: ignore[index]
        return f"meld {self.id} ({what} {_names(self.cards)})"

    def hit(self, card: Card, end: str | None = None) -> tuple["Meld", str | None]:
        """The meld after hitting `card` on it (R7.1, R7.3), and the end used for runs.

        Raises `IllegalMove` if the card does not fit.
        """
        if card.is_skip:
            raise IllegalMove("R4.6", f"a Skip can never be hit; {self.describe()}")
        if end is not None and self.kind != "run":
            raise IllegalMove("R7.3", f"'end' applies only to runs, not {self.describe()}")
        kind = self.kind
        if kind == "set":
            if not card.is_wild and card.number != self.number:
                raise IllegalMove("R7.1", f"{card} does not fit {self.describe()}: a set takes its number or a Wild")
            return Meld(self.id, self.owner, kind, self.cards + (card,), number=self.number), None
        if kind == "color":
            if not card.is_wild and card.color != self.color:
                raise IllegalMove("R7.1", f"{card} does not fit {self.describe()}: a colour meld takes its colour or a Wild")
            return Meld(self.id, self.owner, kind, self.cards + (card,), color=self.color), None
        low_open = self.low > 1
        high_open = self.high < 12
        if card.is_wild:
            if end is None:
                if low_open and high_open:
                    raise IllegalMove(
                        "R7.3", f"a Wild hit on {self.describe()} must say which end: both are open; add "
                                '"end": "low" or "end": "high" to the hit'
                    )
                if not (low_open or high_open):
                    raise IllegalMove("R4.2", f"{self.describe()} spans 1..12 and takes no more cards")
                end = "low" if low_open else "high"
        else:
            fits = "low" if (low_open and card.number == self.low - 1) else (
                "high" if (high_open and card.number == self.high + 1) else None
            )
            if fits is None:
                takes = " or ".join(
                    [str(n) for n, ok in ((self.low - 1, low_open), (self.high + 1, high_open)) if ok]
                    or ["nothing more"]
                )
                at = card.number - self.low if card.number is not None else -1
                if 0 <= at < len(self.cards) and self.cards[at].is_wild:
                    raise IllegalMove(
                        "R4.7",
                        f"the Wild that stands for {card.number} in {self.describe()} stays where it is: {card} "
                        f"cannot take its place; the run takes {takes}",
                    )
                raise IllegalMove(
                    "R7.1",
                    f"{card} does not fit {self.describe()}: a run takes "
                    + " or ".join(
                        [str(n) for n, ok in ((self.low - 1, low_open), (self.high + 1, high_open)) if ok]
                        or ["nothing more"]
                    ),
                )
            if end is not None and end != fits:
                raise IllegalMove("R7.3", f"{card} fits the {fits} end of {self.describe()}, not the {end} end")
            end = fits
        if end == "low":
            if not low_open:
                raise IllegalMove("R4.2", f"{self.describe()} starts at 1: its low end is closed")
            return Meld(self.id, self.owner, kind, (card,) + self.cards, low=self.low - 1, high=self.high), "low"
        if end == "high":
            if not high_open:
                raise IllegalMove("R4.2", f"{self.describe()} ends at 12: its high end is closed")
            return Meld(self.id, self.owner, kind, self.cards + (card,), low=self.low, high=self.high + 1), "high"
        raise IllegalMove("R7.3", f"'end' must be 'low' or 'high', not {end!r}")

    def can_hit(self, card: Card) -> list[str | None]:
        """The ends a card can be hit on: [] if it does not fit; [None] for sets and colours."""
        if card.is_skip:
            return []
        if self.kind == "set":
            return [None] if card.is_wild or card.number == self.number else []
        if self.kind == "color":
            return [None] if card.is_wild or card.color == self.color else []
        ends: list[str | None] = []
        if card.is_wild:
            if self.low > 1:
                ends.append("low")
            if self.high < 12:
                ends.append("high")
            return ends
        if self.low > 1 and card.number == self.low - 1:
            return ["low"]
        if self.high < 12 and card.number == self.high + 1:
            return ["high"]
        return []


def check_group(cards: Sequence[Card], req: MeldReq) -> tuple[str, int, str | None, int, int]:
    """Check one laid group against one requirement (R4). Returns (kind, number, color, low, high).

    Raises `IllegalMove` naming the rule that the group breaks.
    """
    kind, size = req.kind, req.size
    if len(cards) < size:
        raise IllegalMove("R5.2", f"{_names(cards)} has {len(cards)} cards; the {kind} needs at least {size}")
    naturals = [c for c in cards if c.number]
    if any(c.is_skip for c in cards):
        raise IllegalMove("R4.6", f"a Skip can never be part of a meld: {_names(cards)}")
    if not naturals:
        raise IllegalMove("R4.5", f"a meld must hold at least one natural card: {_names(cards)}")
    if kind == "set":
        number = naturals[0].number
        if any(c.number != number for c in naturals):
            raise IllegalMove("R4.1", f"a set is cards of one number: {_names(cards)}")
        return kind, number, None, 0, 0
    if kind == "color":
        color = naturals[0].color
        if any(c.color != color for c in naturals):
            raise IllegalMove("R4.3", f"a colour meld is cards of one colour: {_names(cards)}")
        return kind, 0, color, 0, 0
    first = next(i for i, c in enumerate(cards) if c.number)
    low = cards[first].number - first
    high = low + len(cards) - 1
    if low < 1 or high > 12:
        raise IllegalMove(
            "R4.2", f"a run stays within 1..12; {_names(cards)} (listed low to high) would span {low}..{high}"
        )
    for i, c in enumerate(cards):
        if c.number and c.number != low + i:
            raise IllegalMove(
                "R4.2",
                f"a run is consecutive numbers listed low to high with Wilds where they stand: "
                f"{_names(cards)} has {c} where {low + i} belongs",
            )
    return kind, 0, None, low, high


def match_lay(groups: Sequence[Sequence[Card]], phase: Phase) -> list[tuple[str, int, str | None, int, int]]:
    """Match laid groups to the phase's melds in any order (R5.2, R5.4).

    Returns, per group in the order given, the meld it forms. Raises `IllegalMove`.
    """
    reqs = phase.melds
    if len(groups) != len(reqs):
        raise IllegalMove(
            "R5.4" if len(groups) > len(reqs) else "R5.2",
            f"phase {phase.number} ({phase.describe()}) names {len(reqs)} meld"
            f"{'s' if len(reqs) != 1 else ''}, {len(groups)} were laid",
        )
    # checked[g, r]: the meld group g forms for requirement r, or the error it raises;
    # worked out when first needed (groups laid in the phase's order match at once).
    checked: dict[tuple[int, int], Any] = {}

    def fit(g: int, r: int) -> Any:
        got = checked.get((g, r))
        if got is None:
            try:
                got = check_group(groups[g], reqs[r])
            except IllegalMove as e:
                got = e
            checked[g, r] = got
        return got

    for perm in permutations(range(len(reqs))):
        if all(not isinstance(fit(g, r), IllegalMove) for g, r in enumerate(perm)):
            return [fit(g, r) for g, r in enumerate(perm)]
    fits = [[fit(g, r) for r in range(len(reqs))] for g in range(len(groups))]
    # Name the fault of the meld a group is left to stand for once the other groups have
    # taken the melds they fit (a 3-card run beside a good set breaks R5.2, not R4.1).
    best = max(
        permutations(range(len(reqs))),
        key=lambda perm: sum(not isinstance(fits[g][r], IllegalMove) for g, r in enumerate(perm)),
    )
    for gi, row in enumerate(fits):
        if all(isinstance(x, IllegalMove) for x in row):
            err = row[best[gi]]
            raise err if len(row) == 1 else IllegalMove(
                err.rule,
                f"{_names(groups[gi])} fits none of phase {phase.number}'s melds ({phase.describe()}): {err}",
            )
    raise IllegalMove(
        "R5.2",
        f"the melds {' '.join(_names(g) for g in groups)} do not make phase {phase.number} "
        f"({phase.describe()}) as a whole",
    )
