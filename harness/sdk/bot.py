"""The SDK's bot base class and message loop."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import IO, Any, Sequence

from ..engine import Card, Meld, Phase
from ..players.base import Strategy, TableModel, cards_of, phase_from_view


@dataclass(frozen=True)
class PlayerInfo:
    """What everyone knows of a seat."""

    seat: int
    name: str
    phase: int
    laid: bool
    cards: int
    score: int
    skip_pending: bool
    completed: int = 0
    active: bool = True


@dataclass(frozen=True)
class Options:
    """The referee's help for a play decision: one legal lay (or None) and the legal hits."""

    lay: list[list[Card]] | None
    hits: list[dict[str, Any]]


class State:
    """A typed view of the `state` of a request (everything this seat may know)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.game: str = raw.get("game", "")
        self.hand: int = raw["hand"]
        self.turn: int = raw["turn"]
        self.seat: int = raw["seat"]
        self.dealer: int = raw["dealer"]
        self.cards: list[Card] = cards_of(raw["cards"])
        self.phase: Phase = phase_from_view(raw["phase"])
        self.laid: bool = raw["laid"]
        top = raw.get("discard_top")
        self.discard_top: Card | None = Card.parse(top) if top else None
        self.can_take_discard: bool = raw["can_take_discard"]
        self.draw_size: int = raw["draw_size"]
        self.players: list[PlayerInfo] = [
            PlayerInfo(
                seat=p["seat"], name=p.get("name", ""), phase=p["phase"], laid=p["laid"], cards=p["cards"],
                score=p["score"], skip_pending=p["skip_pending"], completed=p.get("completed", 0),
                active=p.get("active", True),
            )
            for p in raw["players"]
        ]
        self.table: list[Meld] = TableModel(raw["table"]).melds

    def skip_targets(self) -> list[int]:
        """Seats a Skip may name now (R6.2), in seat order after this one."""
        n = len(self.players)
        return [
            p.seat
            for k in range(1, n)
            for p in [self.players[(self.seat + k) % n]]
            if not p.skip_pending and p.active
        ]

    def skip_target(self, discard: Card | None) -> int | None:
        """A seat to name if `discard` is a Skip (the first that may be named), else None."""
        if discard is None or not discard.is_skip:
            return None
        targets = self.skip_targets()
        return targets[0] if targets else None


def _text(cards: Sequence[Card] | None) -> list[str]:
    return [str(c) for c in cards or []]


class Bot:
    """Subclass and implement `draw` and `play`; `run(bot)` does the rest."""

    name = "python-bot"
    version = "1.0"
    wants_options = True

    def reply(
        self,
        lay: Sequence[Sequence[Card]] | None = None,
        hits: Sequence[dict[str, Any]] = (),
        discard: Card | None = None,
        skip: int | None = None,
    ) -> dict[str, Any]:
        """Build a play reply from cards (the `id` is added by the loop)."""
        out: dict[str, Any] = {}
        if lay:
            out["lay"] = [_text(m) for m in lay]
        if hits:
            out["hits"] = [dict(h, card=str(h["card"])) for h in hits]
        if discard is not None:
            out["discard"] = str(discard)
            if discard.is_skip:
                out["skip"] = skip
        return out

    def draw(self, state: State) -> str:
        """Return "deck" or "discard"."""
        return "deck"

    def play(self, state: State, options: Options | None) -> dict[str, Any]:
        """Return a play reply (use `self.reply(...)`)."""
        raise NotImplementedError

    def on_game_start(self, msg: dict[str, Any]) -> None:
        """A game begins (msg has seat, players, rules)."""

    def on_hand_end(self, msg: dict[str, Any]) -> None:
        """A hand is over."""

    def on_game_end(self, msg: dict[str, Any]) -> None:
        """The game is over."""

    def on_error(self, msg: dict[str, Any]) -> None:
        """The last reply was refused; the reason goes to stderr by default."""
        print(f"refused: {msg.get('reason')}", file=sys.stderr)

    def on_request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Answer a request (override for full control over the raw message)."""
        state = State(msg["state"])
        if msg["decision"] == "draw":
            return {"draw": self.draw(state)}
        raw = msg.get("options")
        options = None
        if raw is not None:
            lay = raw.get("lay")
            options = Options([cards_of(m) for m in lay] if lay else None, raw.get("hits", []))
        return self.play(state, options)


class StrategyBot(Bot):
    """A bot that plays an in-process strategy of `harness.players` behind the protocol."""

    def __init__(self, strategy: Strategy, name: str | None = None) -> None:
        self.strategy = strategy
        self.name = name or strategy.name

    def on_game_start(self, msg: dict[str, Any]) -> None:
        self.strategy.new_game(msg.get("game", ""), msg.get("seat", 0))

    def on_request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.strategy.observe(msg.get("events") or [])
        return self.strategy.decide(msg["state"], msg["decision"], msg.get("options"))


try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the standard library will do
    _orjson = None  # type: ignore[assignment]


def _dumps(obj: Any) -> bytes:
    if _orjson is not None:
        return _orjson.dumps(obj, option=_orjson.OPT_APPEND_NEWLINE)
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()  # pragma: no cover


def _loads(line: bytes) -> Any:
    if _orjson is not None:
        return _orjson.loads(line)
    return json.loads(line)  # pragma: no cover


def run(bot: Bot, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The message loop: read requests, answer them, until `bye` or end of input.

    An exception inside the bot is logged to stderr and answered with a safe move, so a
    bug costs a poor move rather than a forfeit.
    """
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    for line in inp:
        if not line.strip():
            continue
        msg = _loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply: dict[str, Any] = {"type": "hello", "name": bot.name, "version": bot.version}
            if not bot.wants_options:
                reply["options"] = False
            out.write(_dumps(reply))
            out.flush()
        elif kind == "request":
            try:
                reply = bot.on_request(msg)
            except Exception as e:  # noqa: BLE001 - a bot's bug must not end its process
                print(f"bot error: {type(e).__name__}: {e}", file=sys.stderr)
                reply = _safe_reply(msg)
            reply["id"] = msg["id"]
            out.write(_dumps(reply))
            out.flush()
        elif kind == "game_start":
            bot.on_game_start(msg)
        elif kind == "hand_end":
            bot.on_hand_end(msg)
        elif kind == "game_end":
            bot.on_game_end(msg)
        elif kind == "error":
            bot.on_error(msg)
        elif kind == "bye":
            break


def _safe_reply(msg: dict[str, Any]) -> dict[str, Any]:
    if msg.get("decision") == "draw":
        return {"draw": "deck"}
    state = State(msg["state"])
    card = max(state.cards, key=lambda c: c.points)
    return {"discard": str(card), "skip": state.skip_target(card)} if card.is_skip else {"discard": str(card)}
