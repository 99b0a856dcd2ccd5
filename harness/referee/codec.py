"""The p10/1 codec: JSON lines in and out, and the checks a bot's reply must pass before the
engine sees it."""

from __future__ import annotations

import json
from typing import Any

import orjson

from ..engine import Action, MalformedAction, action_from_json

PROTOCOL = "p10/1"


class MalformedMessage(ValueError):
    """A line from a bot that is not a valid p10/1 message."""


def encode(msg: dict[str, Any]) -> bytes:
    """One message as a JSON line (UTF-8, ending in \\n)."""
    return orjson.dumps(msg, option=orjson.OPT_APPEND_NEWLINE)


def decode(line: bytes) -> dict[str, Any]:
    """A JSON object from one line; raises `MalformedMessage`."""
    try:
        msg = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        text = line[:80].decode("utf-8", "replace")
        raise MalformedMessage(f"not JSON ({e.args[0] if e.args else e}): {text!r}") from None
    if not isinstance(msg, dict):
        raise MalformedMessage(f"a message must be a JSON object, not {type(msg).__name__}")
    return msg


def as_int(x: Any) -> Any:
    """`x` as an int if it is a JSON integer: an int, or a number with no fraction (58.0,
    which JSON Schema's "integer" also accepts); anything else as it is. Booleans are not
    numbers in p10/1."""
    if type(x) is float and x.is_integer():
        return int(x)
    return x


def parse_reply(msg: dict[str, Any], decision: str) -> Action:
    """The engine action a reply asks for; raises `MalformedMessage` for a wrong shape,
    with what to change. The checks are those of protocol/schemas/from_bot.*: a reply the
    schema accepts is parsed, one it refuses is malformed."""
    keys = _REPLY_KEYS[decision]
    if not keys.issuperset(msg):
        unknown = [_quoted(str(k)) for k in sorted((k for k in msg if k not in keys), key=str)]
        if len(unknown) > 5:
            unknown[5:] = [f"and {len(unknown) - 5} more"]
        hint = ""
        if "type" in msg:
            hint = "; a reply to a request has no \"type\""
        elif decision == "play" and "hit" in msg:
            hint = "; did you mean \"hits\"?"
        raise MalformedMessage(
            f"unknown field(s) {', '.join(unknown)} in a {decision} reply: remove them (a {decision} reply "
            f"has only {', '.join(sorted(keys))}){hint}"
        )
    if decision == "play":
        msg = _integers(msg)
    try:
        return action_from_json(msg, decision)
    except MalformedAction as e:
        raise MalformedMessage(str(e)) from None


def _quoted(key: str) -> str:
    """A bot's field name as JSON (control characters escaped), at most 40 characters."""
    return json.dumps(key if len(key) <= 40 else key[:40] + "...")


def _integers(msg: dict[str, Any]) -> dict[str, Any]:
    """The play reply with whole numbers written as 2.0 read as 2 (skip, hit melds), and
    its hits checked for unknown fields."""
    hits = msg.get("hits")
    if isinstance(hits, list):
        fixed = []
        for h in hits:
            if isinstance(h, dict):
                unknown = [_quoted(str(k)) for k in sorted(set(h) - _HIT_KEYS, key=str)][:5]
                if unknown:
                    raise MalformedMessage(f"unknown field(s) {', '.join(unknown)} in a hit: remove them (a hit is "
                                           "{\"card\": \"R8\", \"meld\": 4} with \"end\": \"low\"|\"high\" where needed)")
                if type(h.get("meld")) is float:
                    h = {**h, "meld": as_int(h["meld"])}
            fixed.append(h)
        msg = {**msg, "hits": fixed}
    if type(msg.get("skip")) is float:
        msg = {**msg, "skip": as_int(msg["skip"])}
    return msg


_REPLY_KEYS = {
    "draw": {"id", "draw"},
    "play": {"id", "lay", "hits", "discard", "skip"},
}
_HIT_KEYS = {"card", "meld", "end"}


def hello_message(entrant: str, move_ms: int, game_ms: int | None) -> dict[str, Any]:
    """The referee's `hello`: the protocol, the entrant's name and its time limits."""
    return {"type": "hello", "protocol": PROTOCOL, "name": entrant, "time": {"move_ms": move_ms, "game_ms": game_ms}}


def parse_hello(msg: dict[str, Any]) -> dict[str, Any]:
    """Check a bot's `hello` reply; raises `MalformedMessage`."""
    if msg.get("type") != "hello":
        raise MalformedMessage(f"the first reply must be {{\"type\": \"hello\", ...}}, not {str(msg)[:80]}")
    name = msg.get("name")
    if name is not None and not isinstance(name, str):
        raise MalformedMessage("hello 'name' must be a string")
    opts = msg.get("options", True)
    if not isinstance(opts, bool):
        raise MalformedMessage("hello 'options' must be true or false")
    return msg
