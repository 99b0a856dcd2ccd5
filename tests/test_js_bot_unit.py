"""The JavaScript bots (bots/js/greedy.js and the JavaScript template) speak p10/1.

Each test starts the bot with `node` as a child process, feeds it hand-built protocol
messages and checks that every reply is legal under RULES.md. The checks here are
written out in the test on purpose: they do not use the harness, so a bug in the engine
cannot hide a bug in the bot (or the other way round).
"""

from __future__ import annotations

import itertools
import json
import queue
import random
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None, reason="node (Node.js) is not on PATH; the JavaScript bots need it to run"
)

ROOT = Path(__file__).resolve().parents[1]
GREEDY = ROOT / "bots" / "js" / "greedy.js"
TEMPLATE = ROOT / "bots" / "templates" / "javascript" / "bot.js"

REPLY_TIMEOUT = 10.0  # seconds; generous, Node's start-up is slow on a busy machine
COLOURS = {"R": "red", "B": "blue", "G": "green", "Y": "yellow"}

PHASES: dict[int, list[tuple[str, int]]] = {
    1: [("set", 3), ("set", 3)],
    2: [("set", 3), ("run", 4)],
    3: [("set", 4), ("run", 4)],
    4: [("run", 7)],
    5: [("run", 8)],
    6: [("run", 9)],
    7: [("set", 4), ("set", 4)],
    8: [("color", 7)],
    9: [("set", 5), ("set", 2)],
    10: [("set", 5), ("set", 3)],
    11: [("set", 2), ("set", 2), ("set", 2), ("set", 2)],
    12: [("set", 4), ("run", 5)],
    14: [("run", 4), ("color", 4)],
    15: [("set", 5), ("color", 4)],
}


# ---------------------------------------------------------------- a bot as a child process


class NodeBot:
    """One bot process: JSON lines in, JSON lines out, stderr kept apart."""

    def __init__(self, script: Path) -> None:
        assert NODE is not None
        self.proc = subprocess.Popen(
            [NODE, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
            cwd=ROOT,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send_raw(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def send(self, msg: dict[str, Any]) -> None:
        self.send_raw(json.dumps(msg))

    def read(self) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no reply within {REPLY_TIMEOUT}s; stderr: {''.join(self.stderr)}")
        assert line is not None, f"the bot closed stdout; stderr: {''.join(self.stderr)}"
        assert line.endswith("\n"), f"a reply must end with a newline: {line!r}"
        reply = json.loads(line)
        assert isinstance(reply, dict), line
        return reply

    def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.send(msg)
        return self.read()

    def bye(self) -> int:
        self.send({"type": "bye"})
        return self.proc.wait(timeout=5)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)


@pytest.fixture
def greedy():
    bot = NodeBot(GREEDY)
    yield bot
    bot.close()


@pytest.fixture
def template():
    bot = NodeBot(TEMPLATE)
    yield bot
    bot.close()


HELLO = {"type": "hello", "protocol": "p10/1", "name": "js", "time": {"move_ms": 1000, "game_ms": None}}


def game_start(seat: int = 0, n: int = 4) -> dict[str, Any]:
    return {
        "type": "game_start",
        "game": "g000001",
        "seat": seat,
        "players": [{"seat": i, "name": f"p{i}"} for i in range(n)],
        "rules": {"phases": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]},
    }


def players(n: int = 4, **overrides: dict[str, Any]) -> list[dict[str, Any]]:
    out = [
        {"seat": i, "name": f"p{i}", "phase": 1, "laid": False, "cards": 10, "score": 0, "skip_pending": False}
        for i in range(n)
    ]
    for seat, fields in overrides.items():
        out[int(seat[1:])].update(fields)
    return out


def phase_dict(number: int, reqs: list[tuple[str, int]] | None = None) -> dict[str, Any]:
    reqs = PHASES[number] if reqs is None else reqs
    return {"number": number, "melds": [{"kind": k, "size": s} for k, s in reqs]}


def request(
    rid: int,
    decision: str,
    cards: list[str],
    *,
    phase: int = 1,
    reqs: list[tuple[str, int]] | None = None,
    laid: bool = False,
    top: str | None = "R5",
    table: list[dict[str, Any]] | None = None,
    seat: int = 0,
    who: list[dict[str, Any]] | None = None,
    options: Any = "absent",
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "type": "request",
        "id": rid,
        "decision": decision,
        "events": [],
        "state": {
            "game": "g000001",
            "hand": 1,
            "turn": rid,
            "seat": seat,
            "dealer": 3,
            "cards": cards,
            "phase": phase_dict(phase, reqs),
            "laid": laid,
            "discard_top": top,
            "can_take_discard": top is not None and top != "S",
            "draw_size": 40,
            "players": who if who is not None else players(),
            "table": table or [],
        },
    }
    if options != "absent":
        msg["options"] = options
    return msg


# ---------------------------------------------------------------- the rules, written out


def parse(card: str) -> tuple[str, int]:
    assert card not in ("W", "S"), card
    assert card[0] in COLOURS and card[1:].isdigit() and 1 <= int(card[1:]) <= 12, card
    return card[0], int(card[1:])


def penalty(card: str) -> int:
    if card == "W":
        return 25
    if card == "S":
        return 15
    return 10 if parse(card)[1] >= 10 else 5


def take(hand: list[str], cards: list[str]) -> list[str]:
    """The hand without `cards`; fails if a card is not in it."""
    left = list(hand)
    for c in cards:
        assert c in left, f"{c} is not in the hand {hand}"
        left.remove(c)
    return left


def meld_from(kind: str, cards: list[str], size: int) -> dict[str, Any] | None:
    """The table meld these cards make as a `kind` of at least `size`, or None (R4)."""
    if len(cards) < size or "S" in cards:
        return None
    naturals = [parse(c) for c in cards if c != "W"]
    if not naturals:  # R4.5
        return None
    if kind == "set":
        if len({n for _, n in naturals}) != 1:
            return None
        return {"kind": "set", "number": naturals[0][1], "cards": list(cards)}
    if kind == "color":
        if len({c for c, _ in naturals}) != 1:
            return None
        return {"kind": "color", "color": COLOURS[naturals[0][0]], "cards": list(cards)}
    # A run is listed low to high, each Wild where it stands.
    lows = {parse(c)[1] - i for i, c in enumerate(cards) if c != "W"}
    if len(lows) != 1:
        return None
    low = lows.pop()
    high = low + len(cards) - 1
    if low < 1 or high > 12:
        return None
    return {"kind": "run", "low": low, "high": high, "cards": list(cards)}


def check_lay(lay: Any, reqs: list[tuple[str, int]], hand: list[str]) -> list[str]:
    """Assert `lay` lays the whole phase from `hand` (R5); return what is left."""
    assert isinstance(lay, list) and len(lay) == len(reqs), f"{lay} does not name {len(reqs)} melds"
    left = take(hand, [c for meld in lay for c in meld])  # disjoint, all from the hand
    for order in itertools.permutations(range(len(reqs))):
        if all(meld_from(*reqs[i][:1], meld, reqs[i][1]) for meld, i in zip(lay, order)):
            return left
    pytest.fail(f"{lay} does not lay {reqs}")


def apply_hit(meld: dict[str, Any], hit: dict[str, Any]) -> None:
    """Apply one hit to a table meld, asserting it is legal (R7)."""
    card = hit["card"]
    assert card != "S", "R4.6: a Skip is never hit"
    kind = meld["kind"]
    if card == "W":
        if kind == "run":
            assert hit.get("end") in ("low", "high"), f"R7.3: a Wild on a run names its end: {hit}"
            if hit["end"] == "low":
                assert meld["low"] > 1, hit
                meld["low"] -= 1
            else:
                assert meld["high"] < 12, hit
                meld["high"] += 1
        meld["cards"].append(card)
        return
    colour, number = parse(card)
    if kind == "set":
        assert number == meld["number"], f"{card} does not fit set of {meld['number']}"
    elif kind == "color":
        assert COLOURS[colour] == meld["color"], f"{card} does not fit {meld['color']} meld"
    else:
        if number == meld["low"] - 1:
            meld["low"] -= 1
        elif number == meld["high"] + 1:
            meld["high"] += 1
        else:
            pytest.fail(f"{card} does not fit run {meld['low']}..{meld['high']}")
    meld["cards"].append(card)


def check_play(
    reply: dict[str, Any],
    req: dict[str, Any],
    reqs: list[tuple[str, int]],
    *,
    no_wild_discard: bool = True,
) -> list[str]:
    """Assert a play reply is legal for `req` (R3..R7); return the hand after it."""
    state = req["state"]
    assert reply.get("id") == req["id"]
    hand = list(state["cards"])
    laid = state["laid"]
    if "lay" in reply:
        assert not laid, "R3.3: the phase is laid once per hand"
        hand = check_lay(reply["lay"], reqs, hand)
        laid = True
    table = {m["id"]: json.loads(json.dumps(m)) for m in state["table"]}
    for hit in reply.get("hits", []):
        assert laid, "R3.4: only a player whose phase is down may hit"
        assert hit["meld"] in table, f"a hit names a meld not on the table: {hit}"
        hand = take(hand, [hit["card"]])
        apply_hit(table[hit["meld"]], hit)
    if not hand:
        assert "discard" not in reply, "R3.5: a player who went out does not discard"
        return hand
    discard = reply.get("discard")
    assert discard in hand, f"discard {discard!r} is not in the hand left {hand}"
    if no_wild_discard and discard == "W":
        assert set(hand) == {"W"}, f"a Wild was discarded while holding {hand}"
    if discard == "S":
        assert "skip" in reply, "R6.1: a Skip names a player (or null, R6.3)"
        others = [p for p in state["players"] if p["seat"] != state["seat"] and not p["skip_pending"]]
        if others:
            assert reply["skip"] in {p["seat"] for p in others}, reply
        else:
            assert reply["skip"] is None, reply
    hand.remove(discard)
    return hand


# ---------------------------------------------------------------- greedy: protocol


def test_greedy_says_hello(greedy):
    reply = greedy.ask(HELLO)
    assert reply["type"] == "hello"
    assert reply["name"] == "js-greedy"
    assert isinstance(reply["version"], str) and reply["version"]


def test_greedy_hello_without_optional_fields(greedy):
    assert greedy.ask({"type": "hello"})["type"] == "hello"


def test_greedy_ignores_messages_that_need_no_reply(greedy):
    greedy.ask(HELLO)
    greedy.send(game_start())
    greedy.send({"type": "hand_end", "hand": 1, "winner": 2})
    greedy.send({"type": "no_such_message", "x": [1, 2]})
    greedy.send({"type": "error", "id": 3, "reason": "R5.4: ...", "fault": "illegal"})
    greedy.send_raw("this is not JSON")
    greedy.send_raw("[1, 2, 3]")
    # The next line out must be the answer to this request, nothing before it.
    reply = greedy.ask(request(7, "draw", ["R1", "B2"], top="G9"))
    assert reply == {"id": 7, "draw": "deck"} or reply == {"id": 7, "draw": "discard"}


def test_greedy_exits_on_bye(greedy):
    greedy.ask(HELLO)
    greedy.send(game_start())
    assert greedy.bye() == 0


def test_greedy_exits_on_end_of_input(greedy):
    greedy.ask(HELLO)
    assert greedy.proc.stdin is not None
    greedy.proc.stdin.close()
    assert greedy.proc.wait(timeout=5) == 0


def test_greedy_survives_broken_requests(greedy):
    greedy.ask(HELLO)
    assert greedy.ask({"type": "request", "id": 1, "decision": "draw", "state": None}) == {"id": 1, "draw": "deck"}
    reply = greedy.ask({"type": "request", "id": 2, "decision": "play", "state": {}})
    assert reply["id"] == 2
    reply = greedy.ask({"type": "request", "id": 3, "decision": "play", "state": {"cards": ["R4", "W"], "phase": 5}})
    assert reply["id"] == 3 and reply.get("discard") in ("R4", "W")
    # Still alive and answering.
    assert greedy.ask(request(4, "draw", ["R1"], top="W"))["id"] == 4
    assert greedy.bye() == 0


# ---------------------------------------------------------------- greedy: draw (R3.1, R3.2)

HAND_P1 = ["R3", "B3", "G7", "Y7", "B1", "G9", "Y11", "R12", "S", "B5"]


def test_greedy_takes_a_wild_from_the_discard(greedy):
    assert greedy.ask(request(1, "draw", HAND_P1, top="W"))["draw"] == "discard"


def test_greedy_takes_a_discard_that_helps_its_phase(greedy):
    assert greedy.ask(request(1, "draw", HAND_P1, top="R7"))["draw"] == "discard"


def test_greedy_draws_from_the_deck_when_the_discard_does_not_help(greedy):
    assert greedy.ask(request(1, "draw", HAND_P1, top="B10"))["draw"] == "deck"


def test_greedy_never_asks_for_a_skip(greedy):
    assert greedy.ask(request(1, "draw", HAND_P1, top="S"))["draw"] == "deck"


def test_greedy_once_laid_takes_a_discard_it_can_hit(greedy):
    table = [{"id": 0, "owner": 1, "kind": "set", "number": 8, "cards": ["R8", "B8", "W"]}]
    assert greedy.ask(request(1, "draw", ["R1", "Y4"], laid=True, top="G8", table=table))["draw"] == "discard"
    assert greedy.ask(request(2, "draw", ["R1", "Y4"], laid=True, top="G9", table=table))["draw"] == "deck"


# ---------------------------------------------------------------- greedy: play


def test_greedy_lays_two_sets_of_three_and_discards_the_skip(greedy):
    greedy.ask(HELLO)
    greedy.send(game_start())
    cards = ["R3", "B3", "W", "G7", "Y7", "R7", "B1", "G9", "Y11", "R12", "S"]
    who = players(p1={"phase": 2}, p2={"phase": 4, "skip_pending": True}, p3={"phase": 3})
    req = request(5, "play", cards, phase=1, laid=False, who=who)
    reply = greedy.ask(req)
    assert "lay" in reply, reply
    lay = reply["lay"]
    # Two disjoint sets of three or more from the hand, each with a natural card.
    assert len(lay) == 2
    take(cards, [c for meld in lay for c in meld])
    for meld in lay:
        assert len(meld) >= 3
        naturals = [c for c in meld if c != "W"]
        assert naturals and len({parse(c)[1] for c in naturals}) == 1
    left = check_play(reply, req, PHASES[1])
    assert "hits" not in reply  # the table was empty
    # The Skip goes first, at the leading player who may be named (p2 has one pending).
    assert reply["discard"] == "S"
    assert reply["skip"] == 3
    assert sorted(left) == sorted(["B1", "G9", "Y11", "R12"])


def test_greedy_uses_options_lay_when_it_cannot_find_one(greedy):
    # A meld kind it does not know (say, from a newer rule set): it falls back on the
    # lay the referee offers in `options`.
    req = request(1, "play", ["R3", "B3", "G3", "Y9"], reqs=[("pair-ish", 3)], options={"lay": [["R3", "B3", "G3"]], "hits": []})
    reply = greedy.ask(req)
    assert reply["lay"] == [["R3", "B3", "G3"]]
    assert reply["discard"] == "Y9"


def test_greedy_does_not_lay_without_a_phase(greedy):
    req = request(1, "play", HAND_P1 + ["G2"])
    reply = greedy.ask(req)
    assert "lay" not in reply and "hits" not in reply
    check_play(reply, req, PHASES[1])
    assert reply["discard"] == "S"


def test_greedy_discards_the_least_useful_card(greedy):
    # Phase 1, two 3s and two 7s are the best start; R12 (10 points) is the most useless.
    cards = ["R3", "B3", "G7", "Y7", "B1", "G9", "R12", "Y4", "G11", "B6", "R8"]
    req = request(1, "play", cards)
    reply = greedy.ask(req)
    check_play(reply, req, PHASES[1])
    assert reply["discard"] in ("R12", "G11")


def test_greedy_hits_in_order_and_tracks_run_ends(greedy):
    table = [
        {"id": 0, "owner": 1, "kind": "set", "number": 7, "cards": ["R7", "B7", "W"]},
        {"id": 1, "owner": 1, "kind": "run", "low": 3, "high": 6, "cards": ["W", "R4", "B5", "G6"]},
        {"id": 2, "owner": 2, "kind": "color", "color": "blue", "cards": ["B1", "B4", "W"]},
    ]
    cards = ["G7", "G2", "R1", "Y7", "R9", "Y12", "W"]
    req = request(1, "play", cards, laid=True, table=table)
    reply = greedy.ask(req)
    left = check_play(reply, req, PHASES[1])  # applies the hits in order: G2 before R1
    # G7 and Y7 join the set of 7s, G2 then R1 lengthen the run down to 1, the Wild goes
    # somewhere; R9 and Y12 fit nowhere, and the 10-point Y12 is thrown away.
    assert sorted(h["card"] for h in reply["hits"]) == ["G2", "G7", "R1", "W", "Y7"]
    assert reply["discard"] == "Y12"
    assert left == ["R9"]


def test_greedy_hits_a_wild_to_bridge_a_run_gap(greedy):
    table = [{"id": 4, "owner": 2, "kind": "run", "low": 3, "high": 6, "cards": ["R3", "R4", "B5", "G6"]}]
    req = request(1, "play", ["Y8", "W", "B11"], laid=True, table=table)
    reply = greedy.ask(req)
    check_play(reply, req, PHASES[1])
    assert reply["hits"] == [{"card": "W", "meld": 4, "end": "high"}, {"card": "Y8", "meld": 4}]
    assert reply["discard"] == "B11"


def test_greedy_goes_out_by_hitting(greedy):
    table = [{"id": 0, "owner": 1, "kind": "set", "number": 9, "cards": ["R9", "B9", "W"]}]
    req = request(1, "play", ["G9", "Y9"], laid=True, table=table)
    reply = greedy.ask(req)
    assert check_play(reply, req, PHASES[1]) == []
    assert "discard" not in reply


def test_greedy_never_hits_melds_laid_in_the_same_reply(greedy):
    # R3 would fit the set of 3s it lays now; with an empty table it may only lay it longer.
    cards = ["R3", "B3", "G3", "Y3", "R7", "B7", "W", "G12"]
    req = request(1, "play", cards)
    reply = greedy.ask(req)
    check_play(reply, req, PHASES[1])
    assert "hits" not in reply
    assert any(meld.count("R3") + meld.count("B3") + meld.count("G3") + meld.count("Y3") == 4 for meld in reply["lay"])


def test_greedy_skip_names_null_when_no_one_can_be_named(greedy):
    who = players(p1={"skip_pending": True}, p2={"skip_pending": True}, p3={"skip_pending": True})
    req = request(1, "play", ["S", "R1", "G5"], who=who)
    reply = greedy.ask(req)
    assert reply["discard"] == "S" and reply["skip"] is None


@pytest.mark.parametrize(
    ("phase", "cards"),
    [
        (2, ["R5", "B5", "G5", "Y8", "R9", "W", "B11", "G1", "S", "Y2", "R12"]),
        (3, ["R5", "B5", "W", "G5", "Y8", "R9", "G10", "W", "Y2", "R12", "B1"]),
        (4, ["R1", "B2", "W", "G4", "Y5", "R6", "B7", "G12", "G12", "S", "Y9"]),
        (6, ["R4", "B5", "G6", "W", "Y8", "W", "R10", "B11", "G12", "R1", "R1"]),
        (8, ["G1", "G4", "G5", "W", "G9", "G11", "G12", "R3", "B4", "Y12", "S"]),
        (9, ["R10", "B10", "W", "W", "G10", "Y2", "R2", "B7", "G8", "S", "Y1"]),
        (14, ["R2", "B3", "G4", "Y5", "B9", "B10", "B11", "W", "R12", "G7", "G8"]),
    ],
)
def test_greedy_lays_each_kind_of_phase(greedy, phase, cards):
    req = request(1, "play", cards, phase=phase)
    reply = greedy.ask(req)
    assert "lay" in reply, reply
    check_play(reply, req, PHASES[phase])


def test_greedy_replies_are_legal_on_random_hands(greedy):
    """Many random hands and tables: every reply must be legal (R3..R7)."""
    rng = random.Random(20240611)
    deck = [f"{c}{n}" for c in COLOURS for n in range(1, 13)] * 2 + ["W"] * 8 + ["S"] * 4
    laid_count = 0
    for rid in range(1, 301):
        phase = rng.choice(sorted(PHASES))
        reqs = PHASES[phase]
        pool = list(deck)
        rng.shuffle(pool)
        if rng.random() < 0.5:
            # Low numbers only: phases are laid far more often.
            pool = [c for c in pool if c in ("W", "S") or parse(c)[1] <= 6]
        laid = rng.random() < 0.3
        cards = pool[: rng.randint(1, 6) if laid else 11]
        table = [
            {"id": 10, "owner": 1, "kind": "set", "number": 6, "cards": ["R6", "W", "B6"]},
            {"id": 11, "owner": 2, "kind": "run", "low": 2, "high": 5, "cards": ["R2", "W", "Y4", "Y5"]},
            {"id": 12, "owner": 3, "kind": "color", "color": "yellow", "cards": ["Y1", "Y9", "W"]},
        ]
        if rng.random() < 0.3:
            table = []
        req = request(rid, rng.choice(["draw", "play"]), cards, phase=phase, laid=laid, table=table,
                      top=rng.choice(deck))
        reply = greedy.ask(req)
        if req["decision"] == "draw":
            assert reply["id"] == rid and reply["draw"] in ("deck", "discard")
            if reply["draw"] == "discard":
                assert req["state"]["can_take_discard"]
        else:
            check_play(reply, req, reqs)
            laid_count += "lay" in reply
    assert laid_count > 10  # the finder is exercised, not just skipped
    assert greedy.bye() == 0


# ---------------------------------------------------------------- template


def test_template_plays_a_legal_minimal_game_turn(template):
    reply = template.ask(HELLO)
    assert reply["type"] == "hello" and reply["name"] and isinstance(reply["version"], str)
    template.send(game_start(seat=1))
    assert template.ask(request(1, "draw", HAND_P1, top="W", seat=1)) == {"id": 1, "draw": "deck"}

    cards = ["R3", "B3", "W", "G7", "Y7", "R7", "B1", "G9", "Y11", "R12", "S"]
    lay = [["R3", "B3", "W"], ["G7", "Y7", "R7"]]
    req = request(2, "play", cards, seat=1, options={"lay": lay, "hits": []})
    reply = template.ask(req)
    assert reply["lay"] == lay
    check_play(reply, req, PHASES[1], no_wild_discard=False)
    assert reply["discard"] == "S"  # the highest penalty left (15)
    assert reply["skip"] == 0  # the first other seat without a skip pending

    # No lay offered: it discards its highest-penalty card, a Wild here.
    req = request(3, "play", ["R1", "W", "B12", "S"], seat=1,
                  who=players(p0={"skip_pending": True}), options={"lay": None, "hits": []})
    reply = template.ask(req)
    assert reply == {"id": 3, "discard": "W"}

    # Only a Skip and every other seat already skipped: it names no one.
    who = players(p0={"skip_pending": True}, p2={"skip_pending": True}, p3={"skip_pending": True})
    req = request(4, "play", ["S", "R2"], seat=1, who=who, options={"lay": None, "hits": []})
    assert template.ask(req) == {"id": 4, "discard": "S", "skip": None}

    assert template.bye() == 0


def test_template_goes_out_by_laying(template):
    template.ask(HELLO)
    lay = [["R3", "B3", "W"], ["G7", "Y7", "R7"]]
    req = request(1, "play", [c for m in lay for c in m], options={"lay": lay, "hits": []})
    reply = template.ask(req)
    assert reply == {"id": 1, "lay": lay}


def test_template_exits_on_end_of_input(template):
    template.ask(HELLO)
    assert template.proc.stdin is not None
    template.proc.stdin.close()
    assert template.proc.wait(timeout=5) == 0
