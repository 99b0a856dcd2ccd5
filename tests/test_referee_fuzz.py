"""The referee against random and malformed replies (hypothesis, a scripted transport).

Seat 0 answers each request with lines that hypothesis makes up: good replies, random
JSON, wrong types, random cards and meld ids, huge numbers, non-UTF-8 bytes, stale ids,
blank lines, timeouts and over-long lines. The other seats play greedy in process. The
referee must never raise, the game must end, and every line seat 0 sends must end in
one of: an applied action (replay `action` with `fallback: false`), an `error` to seat 0,
or — for a reply to an older request, or a blank line — being dropped.
"""

from __future__ import annotations

import random
from collections import deque
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.engine import Rules
from harness.engine.replay import frames
from harness.players import GreedyStrategy, RandomStrategy
from harness.referee import BotTimeout, FaultPolicy, LineTooLong, TimeControl, play_game

CARDS = [f"{c}{n}" for c in "RBGY" for n in range(1, 13)] + ["W", "S"]
JUNK_CARDS = ["R13", "R0", "X5", "", "w", "s", "RR", "B-1", "Y٣", "W ", 5, None, ["R5"], {"c": "R5"}]
KEYS = ["id", "draw", "lay", "hits", "discard", "skip", "type", "card", "meld", "end", "options"]

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
    st.text(max_size=8), st.sampled_from(CARDS), st.sampled_from(["deck", "discard", "low", "high"]),
)
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner, max_size=4),
                          max_leaves=12)
card = st.sampled_from(CARDS) | st.sampled_from(JUNK_CARDS)
meld_id = st.integers(-3, 8) | st.integers(-(2**70), 2**70) | st.sampled_from(["0", None, 1.5, True])
hit = st.fixed_dictionaries({"card": card, "meld": meld_id},
                            optional={"end": st.sampled_from(["low", "high", "middle", 1, None])})


def _dump(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:  # integers beyond 64 bits: written by hand, as some bots would
        import json

        return json.dumps(obj).encode()


class FakeBot:
    """What `Referee` uses of a `BotProcess`, with replies from a script."""

    def __init__(self, name: str, answer) -> None:
        self.spec = SimpleNamespace(name=name)
        self.answer = answer  # (request, bot) -> list of lines (bytes) or exceptions
        self.alive = True
        self.next_id = 1
        self.wants_options = True
        self.starts = 1
        self.stderr_tail = b""
        self.queue: deque = deque()
        self.sent: list[dict[str, Any]] = []
        self.raw: list[bytes] = []  # what was sent, byte for byte
        self.requests: list[dict[str, Any]] = []

    def send(self, data: bytes) -> None:
        msg = orjson.loads(data)
        self.raw.append(data)
        self.sent.append(msg)
        if msg.get("type") == "request":
            self.requests.append(msg)
            self.queue.clear()  # anything not read by now was dropped with its request
            self.queue.extend(self.answer(msg, self))

    def read_line(self, deadline: float) -> bytes:
        if not self.queue:
            raise BotTimeout(f"bot {self.spec.name!r} did not answer in time")
        item = self.queue.popleft()
        if isinstance(item, BaseException):
            raise item
        return item

    def stop(self, grace: float = 0.5) -> int | None:
        self.alive = False
        return 0

    def drain_stderr(self) -> None:
        pass

    def pause(self, confirm: bool = True) -> None:
        self.paused = True

    def confirm_stopped(self) -> None:
        pass

    def resume(self, check: bool = False) -> None:
        self.paused = False

    def exit_code(self) -> int | None:
        return None if self.alive else 0


def greedy_answer() -> Any:
    strategy = GreedyStrategy()

    def answer(msg: dict[str, Any], bot: FakeBot) -> list[Any]:
        reply = strategy.decide(msg["state"], msg["decision"], msg.get("options"))
        reply["id"] = msg["id"]
        return [orjson.dumps(reply)]

    return answer


def fuzz_answer(data: Any) -> Any:
    strategy = GreedyStrategy()

    def answer(msg: dict[str, Any], bot: FakeBot) -> list[Any]:
        rid = msg["id"]
        good = strategy.decide(msg["state"], msg["decision"], msg.get("options"))
        n = data.draw(st.integers(1, 3), label="lines")
        out: list[Any] = []
        for _ in range(n):
            kind = data.draw(st.sampled_from(
                ["good", "good", "mutated", "random_json", "random_obj", "bytes", "stale", "blank",
                 "timeout", "too_long", "wrong_decision", "cards"]), label="kind")
            if kind == "good":
                out.append(orjson.dumps({**good, "id": rid}))
            elif kind == "mutated":  # the good reply with one field replaced
                key = data.draw(st.sampled_from(KEYS), label="key")
                out.append(_dump({**good, "id": rid, key: data.draw(json_value, label="value")}))
            elif kind == "random_json":
                out.append(_dump(data.draw(json_value, label="json")))
            elif kind == "random_obj":
                obj = data.draw(st.dictionaries(st.sampled_from(KEYS), json_value, max_size=5), label="obj")
                if data.draw(st.booleans(), label="with_id"):
                    obj["id"] = rid
                out.append(_dump(obj))
            elif kind == "bytes":
                raw = data.draw(st.binary(max_size=40), label="bytes").replace(b"\n", b"")
                out.append(raw or b"\xff")
            elif kind == "stale":
                out.append(orjson.dumps({**good, "id": data.draw(st.integers(-5, rid - 1) | st.just(rid + 1000),
                                                                 label="stale_id")}))
            elif kind == "blank":
                out.append(data.draw(st.sampled_from([b"", b"   ", b"\t"]), label="blank"))
            elif kind == "timeout":
                out.append(BotTimeout(f"bot {bot.spec.name!r} did not answer in time"))
            elif kind == "too_long":
                out.append(LineTooLong("a line of 2000000 bytes is longer than the cap of 1048576"))
            elif kind == "wrong_decision":
                other = {"draw": "deck"} if msg["decision"] == "play" else {"discard": msg["state"]["cards"][0]}
                out.append(orjson.dumps({**other, "id": rid}))
            else:  # well-formed, random cards and melds: mostly illegal
                reply: dict[str, Any] = {"id": rid}
                if msg["decision"] == "draw":
                    reply["draw"] = data.draw(st.sampled_from(["deck", "discard"]), label="pile")
                else:
                    if data.draw(st.booleans(), label="has_lay"):
                        reply["lay"] = data.draw(st.lists(st.lists(card, max_size=5), max_size=3), label="lay")
                    if data.draw(st.booleans(), label="has_hits"):
                        reply["hits"] = data.draw(st.lists(hit, max_size=3), label="hits")
                    reply["discard"] = data.draw(card | st.sampled_from(msg["state"]["cards"]), label="discard")
                    if data.draw(st.booleans(), label="has_skip"):
                        reply["skip"] = data.draw(st.integers(-2, 4) | meld_id, label="skip")
                out.append(_dump(reply))
        return out

    return answer


RULES = Rules.from_dict({"phases": [1, 2], "turn_limit": 40, "hand_limit": 3})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), seats=st.integers(2, 4), seed=st.integers(0, 2**32), seat=st.integers(0, 3))
def test_random_replies_are_applied_or_answered_with_error(data, seats, seed, seat):
    fuzz_seat = seat % seats
    bots = [FakeBot(f"s{i}", fuzz_answer(data) if i == fuzz_seat else greedy_answer()) for i in range(seats)]
    # No forfeit by strikes: every decision gets its retry and then the fallback move.
    result = play_game(bots, [b.spec.name for b in bots], RULES, seed, "g-fuzz",
                       time_control=TimeControl(move_ms=50), policy=FaultPolicy(retries=1, max_strikes=10**6),
                       record=True)
    # The game ended, with a place for everyone, and no one forfeited.
    assert sorted(result.places)[0] == 1 and len(result.places) == seats
    assert result.forfeits == []
    lines = [orjson.loads(x) for x in result.replay]
    header, rest = lines[0], lines[1:]
    assert rest[-1]["type"] == "result"
    # Every action applied (a bot's or a fallback) replays legally in the engine.
    actions = [x for x in rest if x["type"] == "action"]
    frames(header, actions)

    # Each line from the fuzzed seat ends in an applied action, an error, or a drop.
    outcomes = {"applied": 0, "error": 0, "dropped": 0}
    pending = None  # the last line read from the fuzzed seat, not yet resolved
    for x in rest:
        mine = x.get("seat") == fuzz_seat
        if x["type"] == "msg" and x["dir"] == "from" and mine:
            assert pending is None, f"a reply was neither applied nor refused: {pending}"
            pending = x
            raw = x.get("raw")
            if raw is not None and not raw.strip():
                outcomes["dropped"] += 1  # a blank line is no reply
                pending = None
        elif x["type"] == "note" and mine and x["text"].startswith("dropped a late reply to request "):
            assert pending is not None
            outcomes["dropped"] += 1
            pending = None
        elif x["type"] == "action" and mine:
            if x["fallback"]:
                assert pending is None, f"a reply was neither applied nor refused: {pending}"
            else:
                assert pending is not None, "an action was applied that no reply asked for"
                outcomes["applied"] += 1
                pending = None
        elif x["type"] == "msg" and x["dir"] == "to" and mine and x["msg"].get("type") == "error":
            err = x["msg"]
            assert err["fault"] in ("malformed", "illegal", "timeout") and err["reason"]
            if pending is not None:
                outcomes["error"] += 1
                pending = None
            else:
                assert err["fault"] in ("timeout", "malformed")  # no line: a timeout or an over-long line
    assert pending is None
    # Every fault of the game is the fuzzed seat's, and each one was answered with an error.
    errors = [m for m in bots[fuzz_seat].sent if m.get("type") == "error"]
    assert all(f.seat == fuzz_seat for f in result.faults)
    assert len(errors) == len(result.faults)


def test_scripted_transport_plays_a_clean_game():
    """The fake transport itself: greedy everywhere gives a game without faults."""
    bots = [FakeBot(f"s{i}", greedy_answer()) for i in range(3)]
    result = play_game(bots, ["s0", "s1", "s2"], RULES, 7, "g-clean", record=True)
    assert result.faults == [] and result.forfeits == []


def _wobbly_answer(rng: random.Random, strategy: Any) -> Any:
    """Mostly `strategy`'s replies; now and then a refused line first (illegal, or a
    timeout), so that retries and fallbacks happen too."""

    def answer(msg: dict[str, Any], bot: FakeBot) -> list[Any]:
        good = strategy.decide(msg["state"], msg["decision"], msg.get("options"))
        out: list[Any] = []
        roll = rng.random()
        if roll < 0.05:
            out.append(orjson.dumps({"id": msg["id"], "draw": "sideways"}))
        elif roll < 0.08:
            out.append(BotTimeout(f"bot {bot.spec.name!r} did not answer in time"))
        return out + [orjson.dumps({**good, "id": msg["id"]})]

    return answer


@settings(max_examples=25, deadline=None)
@given(seats=st.integers(2, 5), seed=st.integers(0, 2**32), replies=st.integers(0, 2**32),
       options=st.booleans())
def test_work_ahead_changes_no_byte_sent(seats, seed, replies, options):
    """While a bot thinks, the referee works out the next hand's shuffle and the request
    that follows a draw from the deck. The game, and every byte sent, are the same as
    without that work: random and greedy players, refused replies, fallbacks."""
    def game(ahead: bool) -> tuple[list[list[bytes]], list[Any]]:
        rng = random.Random(replies)
        bots = [FakeBot(f"s{i}", _wobbly_answer(rng, GreedyStrategy() if i % 2 else RandomStrategy(i)))
                for i in range(seats)]
        for b in bots:
            b.wants_options = options
        result = play_game(bots, [b.spec.name for b in bots], RULES, seed, "g-ahead",
                           time_control=TimeControl(move_ms=50), work_ahead=ahead)
        return [b.raw for b in bots], [result.places, result.scores, [(f.seat, f.kind) for f in result.faults]]

    assert game(True) == game(False)

@pytest.mark.parametrize("line", [
    b'{"id": 1, "draw": "deck", "id": 2}',
    b'{"id": 18446744073709551616, "draw": "deck"}',
    b'{"id": 1, "draw": "deck"}' + b" " * 10,
    b'\xef\xbb\xbf{"id": 1, "draw": "deck"}',
    b'{"id": 1.0, "draw": "deck"}',
    b'{"id": true, "draw": "deck"}',
    b'{"id": 1, "draw": {"deck": 1}}',
    b'{"id": 1, "draw": "discard", "discard": "R5"}',
])
def test_odd_first_replies(line):
    """Odd but possible lines as the first reply of a game: never an exception."""
    sent = []

    def answer(msg, bot):
        first = not sent
        sent.append(msg["id"])
        return [line] if first else greedy_answer()(msg, bot)

    bots = [FakeBot("odd", answer), FakeBot("g", greedy_answer())]
    result = play_game(bots, ["odd", "g"], RULES, 3, "g-odd", time_control=TimeControl(move_ms=50),
                       policy=FaultPolicy(retries=1, max_strikes=10**6), record=True)
    assert len(result.places) == 2
