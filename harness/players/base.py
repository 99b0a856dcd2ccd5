"""What every strategy shares: the decision interface, a model of the table for hits, and
an in-process game loop."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..engine import Card, Deck, Game, Meld, Phase, Rules, action_from_json
from ..engine.cards import LETTER_OF_COLOR

_PHASE_CACHE: dict[Any, Phase] = {}


def phase_from_view(d: Mapping[str, Any]) -> Phase:
    """The `Phase` of a view's `phase` field (cached)."""
    key = (d["number"], tuple((m["kind"], m["size"]) for m in d["melds"]))
    ph = _PHASE_CACHE.get(key)
    if ph is None:
        ph = _PHASE_CACHE[key] = Phase.custom(d["number"], d["melds"])
    return ph


def cards_of(texts: Sequence[str]) -> list[Card]:
    """Parse a list of card strings."""
    return [Card.parse(t) for t in texts]


class TableModel:
    """The table melds of a view, as engine melds, to plan hits that apply in order."""

    def __init__(self, table: Sequence[Mapping[str, Any]]) -> None:
        self.melds: list[Meld] = []
        for m in table:
            kind = m["kind"]
            self.melds.append(
                Meld(
                    m["id"], m["owner"], kind, tuple(cards_of(m["cards"])),
                    number=m.get("number", 0) or 0,
                    color=LETTER_OF_COLOR.get(m.get("color") or "", None),
                    low=m.get("low", 0) or 0, high=m.get("high", 0) or 0,
                )
            )

    def fits(self, card: Card) -> list[tuple[int, str | None]]:
        """(meld index, end) pairs where `card` can be hit now."""
        out = []
        for i, m in enumerate(self.melds):
            for end in m.can_hit(card):
                out.append((i, end))
        return out

    def hit(self, i: int, card: Card, end: str | None) -> dict[str, Any]:
        """Apply a hit to the model; returns the protocol form of the hit."""
        m = self.melds[i]
        self.melds[i], used_end = m.hit(card, end)
        h: dict[str, Any] = {"card": card.text, "meld": m.id}
        if m.kind == "run" and card.is_wild:
            h["end"] = used_end
        return h


class Strategy:
    """A player: `decide(state, decision, options)` returns a reply without its `id`."""

    name = "strategy"

    def new_game(self, game: str, seat: int) -> None:
        """Called at each `game_start`."""

    def observe(self, events: Sequence[dict[str, Any]]) -> None:
        """The public events since this seat's previous decision (a request's `events`),
        given just before `decide`. Strategies that keep no memory ignore them."""

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        """The reply to a request: {"draw": ...} or {"lay"?, "hits"?, "discard"?, "skip"?}."""
        raise NotImplementedError


def play_local(
    rules: Rules,
    strategies: Sequence[Strategy],
    seed: int,
    deck: Deck | None = None,
    game_id: str = "g0",
    on_events: Callable[[list[dict[str, Any]]], None] | None = None,
    with_options: bool = True,
    on_game: Callable[[Game], None] | None = None,
) -> Game:
    """Play one game in-process; returns the finished `Game`. Strategies' mistakes raise.

    Each strategy is given the public events since its previous decision (`observe`), as
    a request's `events` carry them (hand and game ends are messages of their own there,
    so not here either). `on_game` is given the game before it starts (for measuring
    tools that look at the whole of it; no strategy sees it)."""
    game = Game(rules, len(strategies), seed, deck, game_id=game_id, names=[s.name for s in strategies])
    if on_game:
        on_game(game)
    for seat, s in enumerate(strategies):
        s.new_game(game_id, seat)
    log: list[dict[str, Any]] = []
    seen = [0] * len(strategies)
    events = game.start()
    log.extend(e for e in events if e["e"] not in _OWN_MESSAGES)
    if on_events:
        on_events(events)
    while game.decision is not None:
        seat = game.current
        decision = game.decision
        strategies[seat].observe(log[seen[seat]:])
        seen[seat] = len(log)
        opts = game.options(seat) if decision == "play" and with_options else None
        reply = strategies[seat].decide(game.view(seat), decision, opts)
        events = game.apply(action_from_json(reply, decision), seat)
        log.extend(e for e in events if e["e"] not in _OWN_MESSAGES)
        if on_events:
            on_events(events)
    return game


_OWN_MESSAGES = ("hand_end", "game_end")
