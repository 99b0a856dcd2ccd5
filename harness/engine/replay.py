"""Re-simulating a recorded game into frames for viewers (every hand visible).

A replay file's header holds the rules, seed and deck; its action lines hold every move
applied, so the engine can rebuild each state exactly.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from .actions import action_from_json
from .deals import Deck
from .game import Game
from .rules import Rules


def _describe(ev: Mapping[str, Any], names: Sequence[str]) -> str | None:
    e = ev["e"]
    who = names[ev["seat"]] if "seat" in ev and ev["seat"] is not None else ""
    if e == "deal":
        return f"hand {ev['hand']} dealt by {names[ev['dealer']]}; up-card {ev['discard_top']}"
    if e == "skipped":
        return f"{who} loses this turn (skipped)"
    if e == "draw":
        return f"{who} takes {ev['card']} from the discard pile" if ev["from"] == "discard" else f"{who} draws from the deck"
    if e == "lay":
        return f"{who} lays the phase: " + "  ".join(" ".join(m) for m in ev.get("cards", []))
    if e == "hit":
        end = f" ({ev['end']} end)" if ev.get("end") else ""
        return f"{who} hits {ev['card']} on meld {ev['meld']}{end}"
    if e == "discard":
        skip = f", skipping {names[ev['skip']]}" if ev.get("skip") is not None else ""
        return f"{who} discards {ev['card']}{skip}"
    if e == "reshuffle":
        return f"the discards are shuffled into a new draw pile of {ev['draw_size']}"
    if e == "out":
        return f"{who} goes out"
    if e == "hand_end":
        if ev["stalled"]:
            return f"hand {ev['hand']} is stalled (turn limit)"
        return f"hand {ev['hand']} ends"
    if e == "game_end":
        return "game over"
    return None


def frames(header: Mapping[str, Any], actions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One frame per step: the start, every action, and every hand's end (before the next
    deal). Each frame is the full state (all hands) plus `seat`, `text` and `events`; an
    action's frame also `fallback` (true: the referee played it for the bot) and `faults`
    (those that led to it) where its action line has them."""
    rules = Rules.from_dict(header["rules"])
    names = [p["name"] for p in header["players"]]
    deck = Deck.from_dict(header["deck"]) if header.get("deck") else None
    game = Game(rules, len(names), int(header["seed"]), deck, game_id=header.get("game", ""), names=names,
                hand_snapshots=True)
    out: list[dict[str, Any]] = []

    def add(snap: dict[str, Any], seat: int | None, events: list[dict[str, Any]],
            action: Mapping[str, Any] | None = None) -> None:
        texts = [t for t in (_describe(e, names) for e in events) if t]
        for p in snap["players"]:
            p["name"] = names[p["seat"]]
        # what the replay says of the action besides the move: played for the bot (a
        # fallback), and the faults that led to it
        said = {k: action[k] for k in ("fallback", "faults") if action is not None and action.get(k)}
        out.append({**snap, "seat": seat, "text": "; ".join(texts), "events": events, **said})

    evs = game.start()
    add(game.snapshot(), None, evs)
    for a in actions:
        if game.decision is None:
            break
        seat = game.current
        evs = game.apply(action_from_json(a["action"], game.decision))
        cut = next((i for i, e in enumerate(evs) if e["e"] == "hand_end"), None)
        if cut is None:
            add(game.snapshot(), seat, evs, a)
            continue
        end_snap = dict(game.last_hand_snapshot or game.snapshot())
        end_snap["hand_end"] = {k: v for k, v in evs[cut].items() if k != "e"}
        add(end_snap, seat, evs[: cut + 1], a)
        rest = evs[cut + 1 :]
        if rest:
            add(game.snapshot(), None, rest)
    return out


def replay_game(header: Mapping[str, Any], actions: Sequence[Mapping[str, Any]],
                on_events: Callable[[list[dict[str, Any]]], None] | None = None) -> Game:
    """The game of a replay file played again from its header (rules, seed, deck, players)
    through every recorded action, each checked by the rules (`IllegalMove`, and ValueError
    for an action by the wrong seat or after the end). The returned game may not be over,
    if the actions stop early. `on_events` is given the events of the deal and of each
    action, in order."""
    rules = Rules.from_dict(header["rules"])
    names = [p["name"] for p in header["players"]]
    deck = Deck.from_dict(header["deck"]) if header.get("deck") else None
    game = Game(rules, len(names), int(header["seed"]), deck, game_id=header.get("game", ""), names=names)
    events = game.start()
    if on_events:
        on_events(events)
    for n, a in enumerate(actions, 1):
        if game.decision is None:
            raise ValueError(f"action {n} comes after the end of the game")
        if a.get("seat") != game.current:
            raise ValueError(f"action {n} is recorded for seat {a.get('seat')!r}, but seat {game.current} was to move")
        events = game.apply(action_from_json(a["action"], game.decision))
        if on_events:
            on_events(events)
    return game
