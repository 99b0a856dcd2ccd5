"""Greedy: lays as soon as it can, hits whenever it can, keeps the cards that help its
phase, discards the least useful one, and uses Skips on the leader."""

from __future__ import annotations

from typing import Any, Sequence

from ..engine import Card, find_lay, missing, plan
from .base import Strategy, TableModel, cards_of, phase_from_view


def leader(state: dict[str, Any], targets: Sequence[int]) -> int | None:
    """The most dangerous seat among `targets`: most phases, laid, fewest cards, lowest score."""
    if not targets:
        return None
    players = {p["seat"]: p for p in state["players"]}
    return max(
        targets,
        key=lambda s: (players[s].get("completed", 0), players[s]["laid"], -players[s]["cards"], -players[s]["score"], -s),
    )


def skip_targets(state: dict[str, Any]) -> list[int]:
    """Seats a Skip may name now (R6.2), in seat order after this one."""
    me = state["seat"]
    n = len(state["players"])
    by_seat = {p["seat"]: p for p in state["players"]}
    out = []
    for k in range(1, n):
        p = by_seat[(me + k) % n]
        if not p["skip_pending"] and p.get("active", True):
            out.append(p["seat"])
    return out


def hit_all(hand: list[Card], table: TableModel) -> list[dict[str, Any]]:
    """Hit every card that fits, in rounds (a hit may open a place for the next); removes
    the hit cards from `hand`."""
    hits: list[dict[str, Any]] = []
    changed = True
    while changed and hand:
        changed = False
        for card in sorted(set(hand), key=lambda c: (c.is_wild, -c.points, c.index)):
            if card.is_skip:
                continue
            places = table.fits(card)
            if not places:
                continue
            i, end = places[-1] if card.is_wild else places[0]
            hits.append(table.hit(i, card, end))
            hand.remove(card)
            changed = True
            break
    return hits


def _partners(card: Card, hand: Sequence[Card]) -> int:
    """How many other cards could share a meld with `card` (same number, near number, colour)."""
    n = 0
    for c in hand:
        if c is card or not c.number:
            continue
        if c.number == card.number:
            n += 3
        elif abs(c.number - card.number) <= 2:
            n += 1
        if c.color == card.color:
            n += 1
    return n


class GreedyStrategy(Strategy):
    """The greedy player (deterministic)."""

    name = "greedy"

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        hand = cards_of(state["cards"])
        phase = phase_from_view(state["phase"])
        if decision == "draw":
            return {"draw": "discard" if self._wants_discard(state, hand, phase) else "deck"}
        lay = None
        laid = state["laid"]
        if not laid:
            if options is not None:
                lay = options.get("lay")
                lay_cards = [cards_of(m) for m in lay] if lay else None
            else:
                lay_cards = find_lay(hand, phase)
                lay = [[c.text for c in m] for m in lay_cards] if lay_cards else None
            if lay_cards:
                for m in lay_cards:
                    for c in m:
                        hand.remove(c)
                laid = True
        reply: dict[str, Any] = {}
        if lay:
            reply["lay"] = lay
        if laid and state["table"]:
            hits = hit_all(hand, TableModel(state["table"]))
            if hits:
                reply["hits"] = hits
        if hand:
            card = self._discard(state, hand, phase, laid)
            reply["discard"] = card.text
            if card.is_skip:
                reply["skip"] = leader(state, skip_targets(state))
        return reply

    def _wants_discard(self, state: dict[str, Any], hand: list[Card], phase: Any) -> bool:
        if not state["can_take_discard"] or state["discard_top"] is None:
            return False
        top = Card.parse(state["discard_top"])
        if top.is_wild:
            return True
        if state["laid"]:
            return bool(TableModel(state["table"]).fits(top))
        return missing(hand + [top], phase) < missing(hand, phase)

    def _discard(self, state: dict[str, Any], hand: list[Card], phase: Any, laid: bool) -> Card:
        for c in hand:
            if c.is_skip:
                return c
        naturals = [c for c in hand if not c.is_wild]
        if not naturals:
            return hand[0]
        if laid:
            model = TableModel(state["table"])
            useless = [c for c in naturals if not model.fits(c)] or naturals
            return max(useless, key=lambda c: (c.points, -_partners(c, hand), c.index))
        _, used = plan(hand, phase)
        spare = [c for i, c in enumerate(hand) if i not in used and not c.is_wild] or naturals
        return min(spare, key=lambda c: (_partners(c, hand), -c.points, c.index))
