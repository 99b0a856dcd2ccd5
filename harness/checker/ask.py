"""`p10-tourney ask`: send one request to a bot and judge its reply as the referee would.

The bot is started, greeted (hello), told of a game (a `game_start` made from the
request: its seat, the players, the rules) and sent the request. Its reply is checked
for shape (protocol/schemas and the referee's own reading), id and legality: the engine
judges it in a game rebuilt from the request's state (`Game.from_view`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..engine import Game, IllegalMove, Rules
from ..referee import (DEFAULT_MOVE_MS, BotDied, BotProcess, BotSpec, BotStartError, BotTimeout, LineTooLong,
                       TimeControl)
from ..referee import MalformedMessage, decode, encode, handshake
from ..referee.codec import as_int, parse_reply
from ..sandbox.box import Sandbox
from .context import what_to_change
from .schemas import Schemas


class RequestError(ValueError):
    """A request file that cannot be sent: not a p10/1 request."""


@dataclass
class Answer:
    """What the bot answered and the verdict. `verdict` is "legal", "illegal",
    "malformed", "timeout" or "crash"; `rule` names the rule an illegal reply broke."""

    request: dict[str, Any]
    reply_line: str | None
    verdict: str
    reason: str = ""
    rule: str | None = None
    fix: str = ""
    ms: int = 0
    stderr: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def legal(self) -> bool:
        """True if the referee would have applied the reply."""
        return self.verdict == "legal"

    def to_dict(self) -> dict[str, Any]:
        """The --json form."""
        return {"verdict": self.verdict, "legal": self.legal, "rule": self.rule, "reason": self.reason,
                "fix": self.fix, "reply": self.reply_line, "ms": self.ms, "events": self.events,
                "stderr": self.stderr}


def load_request(path: Path) -> dict[str, Any]:
    """A request from a file: one JSON object, either the request itself or a replay line
    that carries it ({"type": "msg", "dir": "to", "msg": {...}}). Raises RequestError."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RequestError(f"{path}: not one JSON object ({e})") from None
    if isinstance(obj, dict) and obj.get("type") == "msg" and isinstance(obj.get("msg"), dict):
        obj = obj["msg"]
    if not isinstance(obj, dict) or obj.get("type") != "request":
        raise RequestError(f"{path}: not a request (a JSON object with \"type\": \"request\"; see protocol/SPEC.md)")
    if obj.get("decision") not in ("draw", "play") or not isinstance(obj.get("state"), dict) \
            or type(obj.get("id")) is not int:
        raise RequestError(f"{path}: a request needs an integer \"id\", \"decision\": \"draw\" or \"play\", and a "
                           "\"state\"")
    return obj


def rules_for(request: dict[str, Any]) -> Rules:
    """The standard rules if the request's phase is a standard phase, else a game of that
    one phase (the state says no more about the rules)."""
    ph = request["state"].get("phase") or {}
    std = Rules()
    if any(p.to_dict() == ph for p in std.phases):
        return std
    try:
        return Rules.from_dict({"phases": [ph]})
    except ValueError as e:
        raise RequestError(f"the request's phase {ph!r} is not a phase: {e}") from None


def judge(request: dict[str, Any], line: bytes, rules: Rules | None = None,
          schemas: Schemas | None = None) -> Answer:
    """The verdict on one reply line to `request`, as the referee would give it."""
    text = line.decode("utf-8", "replace")
    decision, rid = request["decision"], request["id"]
    try:
        game = Game.from_view(request["state"], decision, rules or rules_for(request))
    except ValueError as e:
        raise RequestError(f"the request's state cannot be played: {e}") from None
    try:
        reply = decode(line)
        problem = (schemas or Schemas()).error(f"from_bot.{decision}", reply)
        if problem:
            raise MalformedMessage(f"the reply does not match protocol/schemas/from_bot.{decision}.schema.json: "
                                   f"{problem}")
        action = parse_reply(reply, decision)
        got = as_int(reply.get("id"))
        if got != rid or type(got) is not int:
            raise MalformedMessage(f"the reply's id is {json.dumps(reply.get('id'))}, not the request's id {rid}: "
                                   "send the id back as received")
        events = game.apply(action)
    except MalformedMessage as e:
        return Answer(request, text, "malformed", str(e),
                      fix="send one JSON object on one line with the fields of protocol/SPEC.md (Replies)")
    except IllegalMove as e:
        return Answer(request, text, "illegal", str(e), rule=e.rule, fix=what_to_change(str(e)))
    # Only what the reply did: a hand it ends is scored from made-up hidden cards.
    done = [ev for ev in events if ev.get("e") not in ("deal", "hand_end", "game_end")]
    return Answer(request, text, "legal", events=done)


def ask(argv: Sequence[str], request: dict[str, Any], rules: Rules | None = None, move_ms: int = DEFAULT_MOVE_MS,
        startup_ms: int = 10000, cwd: str | None = None, sandbox: Sandbox | None = None) -> Answer:
    """Start the bot `argv`, send it `request` (after hello and a game_start) and judge its
    reply. Raises BotStartError if the bot does not start or answer hello. Without
    `rules`: the standard rules, or a game of the request's own phase if it is not one of
    them. The bot runs in `sandbox` (default: auto), as in a tournament."""
    rules = rules or rules_for(request)
    state = request["state"]
    bot = BotProcess(BotSpec("candidate", tuple(argv), cwd=cwd, sandbox=sandbox or Sandbox()))
    tc = TimeControl(move_ms=move_ms, startup_ms=startup_ms)
    try:
        handshake(bot, "candidate", tc)
        players = [{"seat": p["seat"], "name": p.get("name", f"seat{p['seat']}")} for p in state["players"]]
        msg = dict(request)
        if not bot.wants_options:
            msg.pop("options", None)
        t = time.monotonic()
        try:  # a bot that exits after hello is a crash, whether it goes before or after these lines reach it
            bot.send(encode({"type": "game_start", "game": state.get("game", "g000000"), "seat": state["seat"],
                             "players": players, "rules": rules.to_dict(),
                             "time": {"move_ms": move_ms, "game_ms": None}}))
            t = time.monotonic()
            bot.send(encode(msg))
        except BotDied as e:
            return _with_stderr(bot, Answer(request, None, "crash", str(e)))
        deadline = t + move_ms / 1000
        try:
            while True:
                line = bot.read_line(deadline)
                if line.strip():
                    break
        except BotTimeout:
            return _with_stderr(bot, Answer(request, None, "timeout", f"no reply within {move_ms} ms",
                                            fix="answer every request within move_ms, on one line, and flush stdout"))
        except (BotDied, LineTooLong) as e:
            return _with_stderr(bot, Answer(request, None, "crash" if isinstance(e, BotDied) else "malformed", str(e)))
        answer = judge(request, line, rules)
        answer.ms = round((time.monotonic() - t) * 1000)
        return _with_stderr(bot, answer)
    finally:
        if bot.alive:
            try:
                bot.send(encode({"type": "bye"}))
            except (BotDied, BotStartError):
                pass
        bot.stop()


def _with_stderr(bot: BotProcess, answer: Answer) -> Answer:
    bot.drain_stderr()
    answer.stderr = bot.stderr_tail.decode("utf-8", "replace")
    return answer


__all__ = ["Answer", "RequestError", "ask", "judge", "load_request", "rules_for"]
