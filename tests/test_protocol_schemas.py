"""The p10/1 JSON Schemas in protocol/schemas/ and the examples of protocol/SPEC.md.

These tests read only files under protocol/: they check that every schema is a valid
draft 2020-12 schema, that the specification's example messages validate, that bad
replies are rejected, and that the minimal bot printed in SPEC.md answers with valid
replies.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")
from jsonschema import Draft202012Validator  # noqa: E402

PROTOCOL = Path(__file__).resolve().parent.parent / "protocol"
SCHEMAS = PROTOCOL / "schemas"
SPEC = PROTOCOL / "SPEC.md"

EXPECTED = [
    "to_bot.hello", "to_bot.game_start", "to_bot.request", "to_bot.error",
    "to_bot.hand_end", "to_bot.game_end", "to_bot.bye",
    "from_bot.hello", "from_bot.draw", "from_bot.play",
]


def load(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load(name))


def errors(name: str, message: object) -> list[str]:
    return [e.message for e in validator(name).iter_errors(message)]


# ---------------------------------------------------------------- the schemas themselves

@pytest.mark.parametrize("name", EXPECTED)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = load(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_index_lists_every_schema_file() -> None:
    index = json.loads((SCHEMAS / "index.json").read_text(encoding="utf-8"))
    assert index["protocol"] == "p10/1"
    listed = [entry["file"] for entry in index["schemas"]]
    on_disk = sorted(p.name for p in SCHEMAS.glob("*.schema.json"))
    assert sorted(listed) == on_disk == sorted(f"{n}.schema.json" for n in EXPECTED)
    for entry in index["schemas"]:
        assert load(entry["file"].removesuffix(".schema.json"))["$id"] == entry["$id"]


@pytest.mark.parametrize("name", [n for n in EXPECTED if n.startswith("to_bot.")])
def test_referee_messages_allow_unknown_fields(name: str) -> None:
    assert load(name)["additionalProperties"] is True


@pytest.mark.parametrize("name", [n for n in EXPECTED if n.startswith("from_bot.")])
def test_replies_reject_unknown_fields(name: str) -> None:
    assert load(name)["additionalProperties"] is False


# ---------------------------------------------------------------- example messages (as in SPEC.md)

TABLE = [
    {"id": 0, "owner": 1, "kind": "set", "number": 7, "cards": ["R7", "B7", "W"]},
    {"id": 1, "owner": 1, "kind": "run", "low": 3, "high": 7, "cards": ["W", "R4", "B5", "G6", "Y7"]},
    {"id": 2, "owner": 3, "kind": "color", "color": "yellow",
     "cards": ["Y1", "Y4", "Y8", "W", "Y10", "Y11", "Y2"]},
]
PHASE_3 = {"number": 3, "melds": [{"kind": "set", "size": 4}, {"kind": "run", "size": 4}]}


def players(my_cards: int) -> list[dict]:
    return [
        {"seat": 0, "name": "alice", "phase": 3, "completed": 2, "laid": False, "cards": 9, "score": 145,
         "skip_pending": False, "active": True},
        {"seat": 1, "name": "bob", "phase": 2, "completed": 1, "laid": True, "cards": 4, "score": 160,
         "skip_pending": False, "active": True},
        {"seat": 2, "name": "my-bot", "phase": 3, "completed": 2, "laid": False, "cards": my_cards, "score": 130,
         "skip_pending": False, "active": True},
        {"seat": 3, "name": "dana", "phase": 8, "completed": 7, "laid": True, "cards": 2, "score": 90,
         "skip_pending": False, "active": True},
    ]


HELLO = {"type": "hello", "protocol": "p10/1", "name": "my-bot", "time": {"move_ms": 1000, "game_ms": None}}
GAME_START = {
    "type": "game_start", "game": "g000017", "seat": 2,
    "players": [{"seat": 0, "name": "alice"}, {"seat": 1, "name": "bob"},
                {"seat": 2, "name": "my-bot"}, {"seat": 3, "name": "dana"}],
    "rules": {
        "variant": "standard",
        "phases": [
            {"number": 1, "melds": [{"kind": "set", "size": 3}, {"kind": "set", "size": 3}]},
            {"number": 2, "melds": [{"kind": "set", "size": 3}, {"kind": "run", "size": 4}]},
            PHASE_3,
            {"number": 4, "melds": [{"kind": "run", "size": 7}]},
            {"number": 5, "melds": [{"kind": "run", "size": 8}]},
            {"number": 6, "melds": [{"kind": "run", "size": 9}]},
            {"number": 7, "melds": [{"kind": "set", "size": 4}, {"kind": "set", "size": 4}]},
            {"number": 8, "melds": [{"kind": "color", "size": 7}]},
            {"number": 9, "melds": [{"kind": "set", "size": 5}, {"kind": "set", "size": 2}]},
            {"number": 10, "melds": [{"kind": "set", "size": 5}, {"kind": "set", "size": 3}]},
        ],
        "first_to": None, "turn_limit": 300, "hand_limit": 50, "first_dealer": 0,
    },
    "time": {"move_ms": 1000, "game_ms": None},
}
DRAW_REQUEST = {
    "type": "request", "id": 57, "decision": "draw",
    "events": [
        {"e": "draw", "seat": 3, "from": "discard", "card": "Y2"},
        {"e": "lay", "seat": 3, "melds": [2], "cards": [["Y1", "Y4", "Y8", "W", "Y10", "Y11", "Y2"]]},
        {"e": "discard", "seat": 3, "card": "S", "skip": 0},
        {"e": "skipped", "seat": 0},
        {"e": "draw", "seat": 1, "from": "deck"},
        {"e": "hit", "seat": 1, "card": "Y7", "meld": 1, "end": "high"},
        {"e": "discard", "seat": 1, "card": "G2", "skip": None},
    ],
    "state": {
        "game": "g000017", "hand": 9, "turn": 41, "seat": 2, "dealer": 1,
        "cards": ["G7", "Y7", "R7", "W", "Y3", "R4", "B5", "G6", "S", "Y9"],
        "phase": PHASE_3, "laid": False, "discard_top": "G2", "can_take_discard": True,
        "draw_size": 40, "players": players(10), "table": TABLE,
    },
}
PLAY_REQUEST = {
    "type": "request", "id": 58, "decision": "play",
    "events": [{"e": "draw", "seat": 2, "from": "deck"}],
    "state": {
        "game": "g000017", "hand": 9, "turn": 41, "seat": 2, "dealer": 1,
        "cards": ["G7", "Y7", "R7", "W", "Y3", "R4", "B5", "G6", "S", "Y9", "W"],
        "phase": PHASE_3, "laid": False, "discard_top": "G2", "can_take_discard": True,
        "draw_size": 39, "players": players(11), "table": TABLE,
    },
    "options": {"lay": [["G7", "Y7", "R7", "W"], ["Y3", "R4", "B5", "G6"]], "hits": []},
}
ERROR = {"type": "error", "id": 58, "reason": "R5.4: phase 3 names 2 melds, 3 were laid",
         "fault": "illegal", "strikes": 1, "retry": True}
HAND_END = {
    "type": "hand_end", "hand": 9, "winner": 2, "stalled": False,
    "hands": [["R1", "B3", "G9", "Y11", "R10", "B10", "G4", "Y6", "B2"], ["R2", "Y5", "G11", "W"], [], ["B8", "S"]],
    "points": [60, 45, 0, 20], "scores": [205, 205, 130, 110], "phases": [3, 3, 4, 9],
    "completed": [1, 2, 3],
}
HAND_END_LAST = {"type": "hand_end", "hand": 23, "winner": 0, "stalled": False,
                 "hands": [[], ["R2"], ["W", "S"], ["B8"]], "points": [0, 5, 40, 5],
                 "scores": [255, 230, 150, 240], "phases": [None, None, None, None], "completed": [0, 2]}
GAME_END = {"type": "game_end", "game": "g000017", "places": [2, 4, 1, 3], "scores": [255, 230, 150, 240],
            "phases_completed": [10, 8, 10, 9], "winner": 2, "faults": [0, 0, 1, 0], "reason": "finished"}
BYE = {"type": "bye"}

HELLO_REPLY = {"type": "hello", "name": "my-bot", "version": "1.2"}
HELLO_REPLY_NO_OPTIONS = {"type": "hello", "name": "my-bot", "version": "1.2", "options": False}
DRAW_REPLY = {"id": 57, "draw": "deck"}
PLAY_REPLY = {"id": 58, "lay": [["G7", "Y7", "R7", "W"], ["Y3", "R4", "B5", "G6"]],
              "hits": [{"card": "Y9", "meld": 2}, {"card": "W", "meld": 1, "end": "low"}],
              "discard": "S", "skip": 3}
PLAY_REPLY_DISCARD_ONLY = {"id": 58, "discard": "Y9"}

EXAMPLES = [
    ("to_bot.hello", HELLO),
    ("to_bot.game_start", GAME_START),
    ("to_bot.request", DRAW_REQUEST),
    ("to_bot.request", PLAY_REQUEST),
    ("to_bot.error", ERROR),
    ("to_bot.hand_end", HAND_END),
    ("to_bot.hand_end", HAND_END_LAST),
    ("to_bot.hand_end", {**HAND_END, "winner": None, "stalled": True, "completed": []}),
    ("to_bot.game_end", {**GAME_END, "winner": None, "reason": "hand_limit"}),
    ("to_bot.game_end", {**GAME_END, "reason": "tiebreak"}),
    ("to_bot.game_end", GAME_END),
    ("to_bot.bye", BYE),
    ("from_bot.hello", HELLO_REPLY),
    ("from_bot.hello", HELLO_REPLY_NO_OPTIONS),
    ("from_bot.draw", DRAW_REPLY),
    ("from_bot.draw", {"id": 57, "draw": "discard"}),
    ("from_bot.play", PLAY_REPLY),
    ("from_bot.play", PLAY_REPLY_DISCARD_ONLY),
    ("from_bot.play", {"id": 60, "lay": [["R1", "R2", "R3", "R4", "R5", "R6", "R7", "W", "R9", "R10", "R11"]]}),
    ("from_bot.play", {"id": 61, "hits": [], "discard": "S", "skip": None}),
    # An optional field sent as null counts as left out; so does "skip": null beside any discard.
    ("from_bot.play", {"id": 62, "discard": "R5", "skip": None}),
    ("from_bot.play", {"id": 63, "lay": None, "hits": None, "discard": "R5"}),
    ("from_bot.play", {"id": 64, "lay": [["R1", "B1", "G1", "Y1", "W"], ["R2", "B2", "G2", "Y2", "W"]],
                       "discard": None}),
    # (+) fields may be missing: a bot for any p10/1 referee treats them as optional.
    ("to_bot.game_start", {k: v for k, v in GAME_START.items() if k not in ("game", "time")}),
    ("to_bot.error", {k: v for k, v in ERROR.items() if k not in ("strikes", "retry")}),
    ("to_bot.game_end", {k: v for k, v in GAME_END.items() if k != "reason"}),
]


@pytest.mark.parametrize(("name", "message"), EXAMPLES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(EXAMPLES)])
def test_example_message_validates(name: str, message: dict) -> None:
    assert errors(name, message) == []


EVENTS = [
    {"e": "deal", "hand": 4, "dealer": 2, "discard_top": "B9"},
    {"e": "skipped", "seat": 0},
    {"e": "draw", "seat": 1, "from": "deck"},
    {"e": "draw", "seat": 3, "from": "discard", "card": "Y2"},
    {"e": "lay", "seat": 3, "melds": [2], "cards": [["Y1", "Y4", "Y8", "W", "Y10", "Y11", "Y2"]]},
    {"e": "hit", "seat": 1, "card": "W", "meld": 1, "end": "low"},
    {"e": "hit", "seat": 2, "card": "Y9", "meld": 2, "end": None},
    {"e": "discard", "seat": 2, "card": "S", "skip": 3},
    {"e": "discard", "seat": 1, "card": "G2", "skip": None},
    {"e": "reshuffle", "draw_size": 61},
    {"e": "out", "seat": 2},
]


def request_with_events(events: list) -> dict:
    message = copy.deepcopy(DRAW_REQUEST)
    message["events"] = events
    return message


@pytest.mark.parametrize("event", EVENTS, ids=[f"{e['e']}-{i}" for i, e in enumerate(EVENTS)])
def test_each_event_kind_validates(event: dict) -> None:
    assert errors("to_bot.request", request_with_events([event])) == []


def test_every_event_kind_has_a_schema_branch() -> None:
    branches = load("to_bot.request")["$defs"]["event"]["oneOf"]
    assert len(branches) == 8
    assert {e["e"] for e in EVENTS} == {"deal", "skipped", "draw", "lay", "hit", "discard", "reshuffle", "out"}


@pytest.mark.parametrize("event", [
    {"e": "draw", "seat": 1, "from": "deck", "card": "R5"},  # a deck draw never shows its card (R11.2)
    {"e": "draw", "seat": 1, "from": "discard"},  # a discard draw always does (R11.1)
    {"e": "draw", "seat": 1, "from": "pile"},
    {"e": "discard", "seat": 1, "card": "R13", "skip": None},
    {"e": "hit", "seat": 1, "card": "W"},
    {"e": "hit", "seat": 1, "card": "W", "meld": 1, "end": "middle"},
    {"e": "teleport", "seat": 1},
])
def test_bad_events_are_rejected(event: dict) -> None:
    assert errors("to_bot.request", request_with_events([event]))


def test_referee_messages_may_carry_new_fields() -> None:
    message = copy.deepcopy(PLAY_REQUEST)
    message["hint"] = "new in a later release"
    message["state"]["weather"] = "sunny"
    message["events"][0]["note"] = "extra"
    assert errors("to_bot.request", message) == []


def test_table_melds_need_their_kind_fields() -> None:
    for meld, missing in [({"id": 0, "owner": 1, "kind": "set", "cards": ["R7"]}, "number"),
                          ({"id": 0, "owner": 1, "kind": "run", "low": 3, "cards": ["R3"]}, "high"),
                          ({"id": 0, "owner": 1, "kind": "color", "cards": ["R3"]}, "color")]:
        message = copy.deepcopy(DRAW_REQUEST)
        message["state"]["table"] = [meld]
        assert any(missing in e for e in errors("to_bot.request", message)), missing


# ---------------------------------------------------------------- bad replies

BAD_REPLIES = [
    ("from_bot.draw", {"id": 57, "draw": "pile"}, "wrong draw value"),
    ("from_bot.draw", {"id": "57", "draw": "deck"}, "id as string"),
    ("from_bot.draw", {"draw": "deck"}, "no id"),
    ("from_bot.draw", {"id": 57, "draw": "deck", "discard": "R5"}, "play field in a draw reply"),
    ("from_bot.play", {"id": 58, "discard": "R13"}, "bad card R13"),
    ("from_bot.play", {"id": 58, "discard": "R0"}, "bad card R0"),
    ("from_bot.play", {"id": 58, "discard": "W1"}, "bad card W1"),
    ("from_bot.play", {"id": 58, "discard": "r5"}, "lower-case card"),
    ("from_bot.play", {"id": 58, "hits": [{"card": "R8"}], "discard": "R5"}, "hit without meld"),
    ("from_bot.play", {"id": 58, "hits": [{"card": "R8", "meld": "4"}], "discard": "R5"}, "meld id as string"),
    ("from_bot.play", {"id": 58, "hits": [{"card": "W", "meld": 1, "end": "middle"}], "discard": "R5"},
     "bad end"),
    ("from_bot.play", {"id": 58, "lay": ["R7", "B7", "G7", "W"], "discard": "R5"}, "lay not a list of melds"),
    ("from_bot.play", {"id": 58, "lay": [], "discard": "R5"}, "empty lay"),
    ("from_bot.play", {"id": 58, "hit": [{"card": "R8", "meld": 4}], "discard": "R5"}, "misspelt field"),
    ("from_bot.play", {"id": 58, "discard": "S"}, "Skip discard without skip"),
    ("from_bot.play", {"id": 58, "discard": "R5", "skip": 3}, "skip with a non-Skip discard"),
    ("from_bot.play", {"id": 58, "skip": 3}, "skip with no discard"),
    ("from_bot.play", {"id": 58, "discard": "R5", "type": "play"}, "a type in a reply"),
    ("from_bot.play", {"id": 58, "discard": "S", "skip": "3"}, "skip as string"),
    ("from_bot.play", {"id": 58, "discard": ["R5"]}, "discard as list"),
    ("from_bot.hello", {"type": "hello", "name": "my-bot"}, "hello without version"),
    ("from_bot.hello", {"type": "hello", "name": "my-bot", "version": "1", "options": "no"}, "options not bool"),
    ("from_bot.hello", {"type": "helo", "name": "my-bot", "version": "1"}, "wrong type"),
]


@pytest.mark.parametrize(("name", "reply", "why"), BAD_REPLIES, ids=[b[2] for b in BAD_REPLIES])
def test_bad_reply_is_rejected(name: str, reply: dict, why: str) -> None:
    assert errors(name, reply), why


# ---------------------------------------------------------------- SPEC.md stays in step

def spec_examples() -> list[tuple[str, dict]]:
    """Every ```json block in SPEC.md that follows a `<!-- schema: NAME -->` marker."""
    text = SPEC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- schema: ([\w.]+) -->\s*```json\n(.*?)```", text, flags=re.S)
    return [(name, json.loads(body)) for name, body in found]


def test_spec_has_an_example_for_every_schema() -> None:
    assert {name for name, _ in spec_examples()} == set(EXPECTED)


@pytest.mark.parametrize(("name", "message"), spec_examples(),
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(spec_examples())])
def test_spec_example_validates(name: str, message: dict) -> None:
    assert errors(name, message) == []


def test_spec_examples_match_the_test_examples() -> None:
    assert [m for _, m in spec_examples()] == [
        HELLO, GAME_START, DRAW_REQUEST, PLAY_REQUEST, ERROR, HAND_END, GAME_END, BYE,
        HELLO_REPLY, HELLO_REPLY_NO_OPTIONS, DRAW_REPLY, PLAY_REPLY, PLAY_REPLY_DISCARD_ONLY,
    ]


def test_spec_event_examples_validate() -> None:
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(r"Examples:\s*```\n(.*?)```", text, flags=re.S)
    assert block is not None
    events = [json.loads(line) for line in block.group(1).splitlines() if line.strip()]
    assert events == EVENTS


# ---------------------------------------------------------------- the minimal bot of SPEC.md

def minimal_bot_source() -> str:
    text = SPEC.read_text(encoding="utf-8")
    match = re.search(r"<!-- minimal-bot -->\s*```python\n(.*?)```", text, flags=re.S)
    assert match is not None
    return match.group(1)


def run_minimal_bot(tmp_path: Path, messages: list[dict]) -> list[dict]:
    bot = tmp_path / "minimal.py"
    bot.write_text(minimal_bot_source(), encoding="utf-8")
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([sys.executable, str(bot)], input=stdin, capture_output=True, text=True,
                          timeout=30, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_minimal_bot_is_short() -> None:
    lines = [ln for ln in minimal_bot_source().splitlines() if ln.strip()]
    assert len(lines) <= 45


def test_minimal_bot_answers_with_valid_replies(tmp_path: Path) -> None:
    no_options = copy.deepcopy(PLAY_REQUEST)
    no_options["id"] = 59
    del no_options["options"]
    skip_left = copy.deepcopy(PLAY_REQUEST)
    skip_left["id"] = 60
    skip_left["state"]["cards"] = ["R2", "S", "R8"]
    skip_left["state"]["laid"] = True
    skip_left["state"]["players"][3]["skip_pending"] = True  # seat 3 cannot be named (R6.2)
    skip_left["options"] = {"lay": None, "hits": [{"card": "R2", "meld": 1}, {"card": "R8", "meld": 1}]}
    hit_out = copy.deepcopy(skip_left)
    hit_out["id"] = 61
    hit_out["state"]["cards"] = ["Y5"]
    hit_out["options"] = {"lay": None, "hits": [{"card": "Y5", "meld": 2}]}

    replies = run_minimal_bot(tmp_path, [
        HELLO, GAME_START, DRAW_REQUEST, ERROR, PLAY_REQUEST, no_options, skip_left, hit_out,
        HAND_END, GAME_END, {"type": "something_new"}, BYE,
    ])
    schemas = ["from_bot.hello", "from_bot.draw", "from_bot.play", "from_bot.play", "from_bot.play",
               "from_bot.play"]
    assert len(replies) == len(schemas)
    for name, reply in zip(schemas, replies):
        assert errors(name, reply) == [], reply
    assert replies[1] == {"id": 57, "draw": "deck"}
    # it keeps its Wild: the highest-penalty card but a Wild is the Skip
    assert "W" in PLAY_REQUEST["state"]["cards"]
    assert replies[2] == {"id": 58, "lay": PLAY_REQUEST["options"]["lay"], "discard": "S", "skip": 3}
    assert replies[3]["discard"] == "S"
    assert replies[4] == {"id": 60, "hits": [{"card": "R2", "meld": 1}], "discard": "S", "skip": 0}
    assert replies[5] == {"id": 61, "hits": [{"card": "Y5", "meld": 2}]}
