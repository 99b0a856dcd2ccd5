"""Re-simulate a recorded game and check what each seat was told (R11).

`check_replay(lines)` rebuilds the game with the engine from the replay's header (rules,
seed, deck) and its action lines in order. At every message the referee sent to a seat it
checks, against the true state at that moment:

- a request's `state` is exactly the engine's view of that seat, its `cards` are the
  seat's real hand, its table is the real table, and its options only use the seat's
  own cards;
- events carry a card only where the card is public (a draw from the discard pile, a
  discard, a hit, a lay); a draw from the deck names no card; a lay's cards are on the
  table;
- an error's reason names no card lists but the seat's own hand;
- no list of cards anywhere in the message (hand_end excepted: every hand is public at
  the end of a hand, R11.1) holds another seat's hidden hand as a sub-multiset, unless
  the list is one that was just verified as public or as the seat's own hand;
- nothing is sent to a seat after it forfeited.

Returns a summary dict (messages checked per seat, the final engine game).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

import orjson

from harness.engine import Deck, Game, Rules, action_from_json

CARD_RE = re.compile(r"^(W|S|[RBGY](1[0-2]|[1-9]))$")
BRACKETED = re.compile(r"\[((?:(?:W|S|[RBGY](?:1[0-2]|[1-9]))\s*)+)\]")
EVENT_KEYS = {
    "deal": {"e", "hand", "dealer", "discard_top"},
    "skipped": {"e", "seat"},
    "draw": {"e", "seat", "from", "card"},
    "lay": {"e", "seat", "melds", "cards"},
    "hit": {"e", "seat", "card", "meld", "end"},
    "discard": {"e", "seat", "card", "skip"},
    "reshuffle": {"e", "draw_size"},
    "out": {"e", "seat"},
}


def _is_card_list(x: Any) -> bool:
    return isinstance(x, list) and bool(x) and all(isinstance(c, str) and CARD_RE.match(c) for c in x)


def _card_lists(obj: Any, path: tuple = ()) -> Iterable[tuple[tuple, list[str]]]:
    """Every non-empty list of card strings in `obj`, with its path."""
    if _is_card_list(obj):
        yield path, obj
    elif isinstance(obj, list):
        for i, x in enumerate(obj):
            yield from _card_lists(x, path + (i,))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _card_lists(v, path + (k,))


def _sub(small: Counter, big: Counter) -> bool:
    return all(big[c] >= k for c, k in small.items())


class LeakError(AssertionError):
    """A message told a seat something it may not know."""


def _fail(seat: int, msg: dict, why: str) -> None:
    text = orjson.dumps(msg).decode()[:600]
    raise LeakError(f"message to seat {seat}: {why}\n  {text}")


def check_message(
    game: Game, seat: int, msg: dict[str, Any], history: dict[tuple[int, int], list[str]] | None = None
) -> None:
    """Check one referee → seat message against the true state of `game`; `history` maps
    (hand, meld id) to the cards of every meld laid so far in the game."""
    kind = msg.get("type")
    if kind == "hand_end":
        return  # every hand is public at the end of a hand (R11.1)
    own = [c.text for c in game.players[seat].hand]
    own_c = Counter(own)
    table = [m.to_dict() for m in game.table]
    verified: set[tuple] = set()
    if kind == "request":
        state = msg["state"]
        if state["cards"] != own:
            _fail(seat, msg, f"state.cards {state['cards']} is not the seat's hand {own}")
        verified.add(("state", "cards"))
        if state != game.view(seat):
            _fail(seat, msg, "state differs from the engine's view of this seat")
        for i, m in enumerate(state["table"]):
            if m["cards"] != table[i]["cards"]:
                _fail(seat, msg, f"table meld {i} is not the real table")
            verified.add(("state", "table", i, "cards"))
        if "options" in msg:
            if msg["decision"] != "play":
                _fail(seat, msg, "options in a draw request")
            opts = msg["options"]
            if opts != game.options(seat):
                _fail(seat, msg, "options differ from the engine's options for this seat")
            lay_used = Counter(c for m in (opts["lay"] or []) for c in m)
            if not _sub(lay_used, own_c):
                _fail(seat, msg, "options.lay uses cards the seat does not hold")
            for i in range(len(opts["lay"] or [])):
                verified.add(("options", "lay", i))
            for h in opts["hits"]:
                if own_c[h["card"]] < 1:
                    _fail(seat, msg, f"options.hits names {h['card']}, not in the seat's hand")
        for k, ev in enumerate(msg["events"]):
            e = ev.get("e")
            if e not in EVENT_KEYS:
                _fail(seat, msg, f"unknown event {e!r}")
            extra = set(ev) - EVENT_KEYS[e]
            if extra:
                _fail(seat, msg, f"event {e} carries unexpected field(s) {sorted(extra)}")
            if e == "draw":
                if ev["from"] == "deck" and "card" in ev:
                    _fail(seat, msg, "a draw from the deck names its card")
                if ev["from"] == "discard" and "card" not in ev:
                    _fail(seat, msg, "a draw from the discard pile does not name its (public) card")
            if e == "lay":
                # The lay may be from an earlier hand when a deal came after it.
                hand_no = game.hand_no - sum(1 for x in msg["events"][k + 1 :] if x.get("e") == "deal")
                for j, (mid, cards) in enumerate(zip(ev["melds"], ev["cards"])):
                    on_table = (history or {}).get((hand_no, mid), table[mid]["cards"] if hand_no == game.hand_no else [])
                    if not _sub(Counter(cards), Counter(on_table)):
                        _fail(seat, msg, f"lay event meld {mid} holds cards that are not on the table")
                    verified.add(("events", k, "cards", j))
    elif kind == "error":
        for group in BRACKETED.findall(msg.get("reason", "")):
            if not _sub(Counter(group.split()), own_c):
                _fail(seat, msg, f"the error's reason names cards [{group}] beyond the seat's own hand")
    elif kind in ("game_start", "game_end"):
        if kind == "game_start" and msg["seat"] != seat:
            _fail(seat, msg, "game_start names another seat")
    else:
        _fail(seat, msg, f"unexpected message type {kind!r}")
    lists = [(path, cards) for path, cards in _card_lists(msg) if path not in verified]
    # No other seat's hidden hand inside any list that is not the verified own hand or public.
    for other in game.players:
        if other.seat == seat or len(other.hand) < 2:
            continue
        theirs = Counter(c.text for c in other.hand)
        for path, cards in lists:
            if _sub(theirs, Counter(cards)):
                _fail(seat, msg, f"seat {other.seat}'s hidden hand is inside the list at {path}")
    for path, cards in lists:
        _fail(seat, msg, f"an unverified card list at {path}: {cards}")


def check_replay(lines: list[bytes]) -> dict[str, Any]:
    """Re-simulate `lines` (a p10-replay/1 record) and check every message to a seat."""
    recs = [orjson.loads(line) for line in lines]
    header = recs[0]
    assert header["type"] == "header" and header["format"] == "p10-replay/1", header
    assert recs[-1]["type"] == "result", recs[-1]
    rules = Rules.from_dict(header["rules"])
    deck = Deck.from_dict(header["deck"]) if header["deck"] else None
    names = [p["name"] for p in header["players"]]
    game = Game(rules, len(names), header["seed"], deck, game_id=header["game"], names=names)
    game.start()
    checked = Counter()
    history: dict[tuple[int, int], list[str]] = {}
    hand_end: dict[str, Any] | None = None
    forfeited: set[int] = set()
    actions = 0
    for rec in recs[1:-1]:
        t = rec["type"]
        if t == "action":
            assert rec["seat"] == game.current, (rec, game.current)
            if rec["seat"] in forfeited:
                assert rec["fallback"], rec
            hand_no = game.hand_no
            for i, group in enumerate(rec["action"].get("lay") or []):
                history[(hand_no, len(game.table) + i)] = list(group)  # even if the lay ends the hand
            events = game.apply(action_from_json(rec["action"]), rec["seat"])
            actions += 1
            for ev in events:
                if ev["e"] == "hand_end":
                    hand_end = {k: v for k, v in ev.items() if k != "e"}
            if game.hand_no == hand_no:
                for m in game.table:
                    history[(hand_no, m.id)] = [c.text for c in m.cards]
        elif t == "msg":
            seat = rec["seat"]
            assert seat not in forfeited, f"a message to or from seat {seat} after it forfeited: {rec}"
            if rec["dir"] == "to":
                if rec["msg"].get("type") == "hand_end":
                    # Public at the end of a hand (R11.1); it must be the true end of the hand.
                    assert {k: v for k, v in rec["msg"].items() if k != "type"} == hand_end, rec
                check_message(game, seat, rec["msg"], history)
                checked[seat] += 1
        elif t == "note":
            if "forfeits" in rec["text"]:
                forfeited.add(rec["seat"])
        elif t == "fault":  # where it happened; its seat's next action is the one it led to
            assert isinstance(rec["seat"], int) and rec["kind"] and rec["reason"], rec
        else:
            raise AssertionError(f"unexpected replay line {rec}")
    assert game.over, "the replay's actions do not finish the game"
    result = recs[-1]
    assert result["scores"] == [p.score for p in game.players]
    assert result["places"] == game.places(sorted(forfeited))
    return {"checked": checked, "game": game, "actions": actions, "forfeited": forfeited}
