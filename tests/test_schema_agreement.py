"""The referee, the schemas and the engine agree (hypothesis).

Requests are recorded from games played in the engine (greedy players; one game is
steered into tie-break hands, where some seats are not playing and a Skip may name only
those who are). For a random reply to a recorded request, the referee — running the same
game over its real code path, with scripted in-process bots — accepts the reply exactly
when protocol/schemas/from_bot.<decision> accepts it, its id is the request's, and the
engine finds the move legal. Nothing of the referee's own checks is used to decide what
is expected: the schema is read by jsonschema, legality by `Game.apply` on a copy of the
recorded game.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.engine import Deck, Game, IllegalMove, MalformedAction, Rules, action_from_json
from harness.players import GreedyStrategy
from harness.referee import FaultPolicy, TimeControl, play_game

from test_referee_fuzz import FakeBot

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = Path(__file__).resolve().parent.parent / "protocol" / "schemas"
VALIDATORS = {d: jsonschema.Draft202012Validator(json.loads((SCHEMAS / f"from_bot.{d}.schema.json").read_text()))
              for d in ("draw", "play")}
CARDS = [f"{c}{n}" for c in "RBGY" for n in range(1, 13)] + ["W", "S"]


def _deal(hands: list[str], discard: str, draw: str = "") -> dict[str, Any]:
    return {"hands": [h.split() for h in hands], "discard": discard, "draw": draw.split()}


# Game "tie": hand 1 stalls after three scripted turns with seats 1 and 2 laid on 20
# points each, so hands 2.. are tie-break hands between them (seat 0 is left out).
TIE_DECK = {"deals": [
    _deal(["R9 B9 G9 R10 B10 G10 Y9 Y10 R11 B11", "R1 B1 G1 R2 B2 G2 Y5 Y6 Y7 Y8", "R3 B3 G3 R4 B4 G4 B5 B6 B7 B8"],
          "Y12", "R12 G12 B12"),
    _deal(["R9 B9 G9 R10 B10 G10 Y9 Y10 R11 B11", "R5 B5 G6 Y7 R8 W S Y1 Y3 G11", "R3 B7 G3 Y4 B4 G9 B5 S W B8"],
          "Y12", "S R12 G12 W"),
]}
TIE_SCRIPT = [{"draw": "deck"}, {"lay": [["R1", "B1", "G1"], ["R2", "B2", "G2"]], "discard": "R12"},
              {"draw": "deck"}, {"lay": [["R3", "B3", "G3"], ["R4", "B4", "G4"]], "discard": "G12"},
              {"draw": "deck"}, {"discard": "B12"}]

GAMES = {
    "short": (Rules.from_dict({"phases": [1, 2], "turn_limit": 40, "hand_limit": 2}), 3, 11, None, []),
    "runs": (Rules.from_dict({"phases": [4, 2], "turn_limit": 40, "hand_limit": 2}), 2, 12, None, []),
    "tie": (Rules.from_dict({"phases": [1], "turn_limit": 3, "hand_limit": 4}), 3, 13, TIE_DECK, TIE_SCRIPT),
}


@lru_cache(maxsize=None)
def recorded(name: str) -> list[tuple[Game, str, dict[str, Any], dict[str, Any] | None, dict[str, Any]]]:
    """Every decision of game `name`: the game before it, the decision, the state and the
    options the seat was sent, and the reply it gave (the script, then greedy)."""
    rules, n, seed, deck, script = GAMES[name]
    game = Game(rules, n, seed, Deck.from_dict(deck) if deck else None, game_id=name,
                names=[f"s{i}" for i in range(n)])
    game.start()
    greedy = GreedyStrategy()
    out = []
    while game.decision is not None:
        seat, decision = game.current, game.decision
        state = game.view(seat)
        options = game.options(seat) if decision == "play" else None
        k = len(out)
        reply = dict(script[k]) if k < len(script) else greedy.decide(state, decision, options)
        out.append((copy.deepcopy(game), decision, state, options, reply))
        game.apply(action_from_json(reply, decision))
    if name == "tie":
        assert game.end_reason in ("tiebreak", "hand_limit") and game.hand_no >= 2
    return out


def _integral(x: Any) -> Any:
    """JSON Schema's integer: 2.0 is 2."""
    if isinstance(x, dict):
        return {k: _integral(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_integral(v) for v in x]
    return int(x) if type(x) is float and x.is_integer() else x


def expected(game: Game, decision: str, rid: int, reply: dict[str, Any]) -> bool:
    """Schema, id, engine: what the referee must decide."""
    if any(True for _ in VALIDATORS[decision].iter_errors(reply)):
        return False
    if _integral(reply["id"]) != rid or type(reply["id"]) is bool:
        return False
    body = {k: v for k, v in _integral(reply).items() if k != "id"}
    try:
        action = action_from_json(body, decision)
    except MalformedAction as e:  # the schema took it: the engine must read it
        raise AssertionError(f"the schema accepts {reply} but the engine cannot read it: {e}") from None
    try:
        copy.deepcopy(game).apply(action)
    except IllegalMove:
        return False
    return True


card = st.sampled_from(CARDS) | st.sampled_from(["R13", "r5", "", "X"])
seat = st.integers(-1, 4) | st.sampled_from(["1", True, 1.0])


@st.composite
def replies(draw: Any, decision: str, state: dict[str, Any], options: dict[str, Any] | None,
            good: dict[str, Any]) -> dict[str, Any]:
    """A reply to the request: the recorded one, or one with parts changed."""
    if draw(st.integers(0, 5)) == 0:
        reply: dict[str, Any] = dict(good)
    elif decision == "draw":
        reply = {"draw": draw(st.sampled_from(["deck", "discard", "pile", None]))}
    else:
        hand = state["cards"]
        reply = {}
        lay = (options or {}).get("lay")
        lay_kind = draw(st.sampled_from(["none", "null", "offered", "offered", "short", "empty", "random"]))
        if lay_kind == "null":
            reply["lay"] = None
        elif lay_kind == "offered" and lay:
            reply["lay"] = lay
        elif lay_kind == "short" and lay:
            reply["lay"] = [m[:-1] for m in lay]
        elif lay_kind == "empty":
            reply["lay"] = []
        elif lay_kind == "random":
            reply["lay"] = draw(st.lists(st.lists(st.sampled_from(hand), min_size=1, max_size=5), max_size=3))
        used = [c for m in reply.get("lay") or [] for c in m] if reply.get("lay") == lay else []
        offered = (options or {}).get("hits") or []
        hit_kind = draw(st.sampled_from(["none", "none", "null", "empty", "offered", "changed", "random"]))
        if hit_kind == "null":
            reply["hits"] = None
        elif hit_kind == "empty":
            reply["hits"] = []
        elif hit_kind in ("offered", "changed") and offered:
            hits = [dict(h) for h in draw(st.lists(st.sampled_from(offered), min_size=1, max_size=3, unique_by=str))]
            if hit_kind == "changed":
                h = hits[draw(st.integers(0, len(hits) - 1))]
                what = draw(st.sampled_from(["drop_end", "end", "meld", "extra"]))
                if what == "drop_end":
                    h.pop("end", None)
                elif what == "end":
                    h["end"] = draw(st.sampled_from(["low", "high", None, "middle"]))
                elif what == "meld":
                    h["meld"] = draw(st.integers(-1, 9) | st.sampled_from([1.0, "1"]))
                else:
                    h["note"] = 1
            reply["hits"] = hits
            used += [h["card"] for h in hits]
        elif hit_kind == "random":
            reply["hits"] = [{"card": draw(st.sampled_from(hand) | card), "meld": draw(st.integers(0, 6)),
                              **({"end": draw(st.sampled_from(["low", "high"]))} if draw(st.booleans()) else {})}]
        left = list(hand)
        for c in used:
            if c in left:
                left.remove(c)
        disc = draw(st.sampled_from(["left", "left", "left", "skip", "none", "null", "random"]))
        if disc == "left" and left:
            reply["discard"] = draw(st.sampled_from(left))
        elif disc == "skip":
            reply["discard"] = "S"
        elif disc == "null":
            reply["discard"] = None
        elif disc == "random":
            reply["discard"] = draw(card)
        if reply.get("discard") == "S" or draw(st.integers(0, 4)) == 0:
            sk = draw(st.sampled_from(["absent", "null", "target", "any"]))
            if sk == "null":
                reply["skip"] = None
            elif sk == "target":
                targets = [p["seat"] for p in state["players"]
                           if p["seat"] != state["seat"] and p.get("active", True) and not p["skip_pending"]]
                reply["skip"] = draw(st.sampled_from(targets)) if targets else None
            elif sk == "any":
                reply["skip"] = draw(seat)
    extra = draw(st.sampled_from([None, None, None, "type", "hit", "draw"]))
    if extra == "type":
        reply["type"] = "reply"
    elif extra == "hit":
        reply["hit"] = []
    elif extra == "draw" and decision == "play":
        reply["draw"] = "deck"
    reply["id"] = draw(st.sampled_from(["RID"] * 12 + ["RID_FLOAT", "RID_STR", "RID_OTHER", "RID_BOOL"]))
    return reply


def with_id(reply: dict[str, Any], rid: int) -> dict[str, Any]:
    """The reply with its id written as the case says: the request's id, or not quite."""
    ids = {"RID": rid, "RID_FLOAT": float(rid), "RID_STR": str(rid), "RID_OTHER": rid + 1, "RID_BOOL": True}
    return {**reply, "id": ids[reply["id"]]}


def referee_accepts(name: str, target: int, reply: dict[str, Any]) -> tuple[bool, int, dict[str, Any]]:
    """Play game `name` through the referee with scripted bots: every decision as recorded,
    decision `target` answered with `reply` (its id marked as in `with_id`). Returns
    whether the referee accepted it, the request's id and the reply as sent."""
    rules, n, seed, deck, _ = GAMES[name]
    record = recorded(name)
    count: dict[str, Any] = {"k": 0, "rid": -1, "sent": None}

    def answer(msg: dict[str, Any], bot: FakeBot) -> list[bytes]:
        k = count["k"]
        count["k"] += 1
        if k == target:
            count["rid"] = msg["id"]
            count["sent"] = with_id(reply, msg["id"])
            return [orjson.dumps(count["sent"])]
        if k < target:
            assert msg["state"] == record[k][2], f"decision {k} was not asked as recorded"
            return [orjson.dumps({**record[k][4], "id": msg["id"]})]
        good = GreedyStrategy().decide(msg["state"], msg["decision"], msg.get("options"))
        return [orjson.dumps({**good, "id": msg["id"]})]

    bots = [FakeBot(f"s{i}", answer) for i in range(n)]
    play_game(bots, [f"s{i}" for i in range(n)], rules, seed, name, Deck.from_dict(deck) if deck else None,
              TimeControl(move_ms=50), FaultPolicy(retries=0, max_strikes=10**6))
    rid = count["rid"]
    assert rid >= 0, "the target decision was never asked"
    errors = [m for b in bots for m in b.sent if m.get("type") == "error" and m.get("id") == rid]
    return not errors, rid, count["sent"]


@st.composite
def cases(draw: Any) -> tuple[str, int, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(GAMES)))
    record = recorded(name)
    target = draw(st.integers(0, len(record) - 1))
    if name == "tie" and draw(st.booleans()):  # the tie-break hands: skips, inactive seats
        target = draw(st.integers(len(TIE_SCRIPT), len(record) - 1))
    _, decision, state, options, good = record[target]
    return name, target, draw(replies(decision, state, options, good))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_the_referee_accepts_exactly_the_replies_the_schemas_accept_and_the_engine_finds_legal(case):
    name, target, reply = case
    accepted, rid, sent = referee_accepts(name, target, reply)
    game, decision = recorded(name)[target][:2]
    assert accepted == expected(game, decision, rid, sent), (name, target, sent)


def test_the_tie_break_game_reaches_requests_where_a_seat_is_not_playing():
    record = recorded("tie")
    tiebreak = [state for _, _, state, _, _ in record if any(p["active"] is False for p in state["players"])]
    assert len(tiebreak) >= 4, "the tie-break game never reached a tie-break hand"
