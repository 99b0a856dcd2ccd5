"""One game between bot processes, refereed over p10/1.

A bot's failure is a result, not an exception: timeouts, malformed lines and illegal
replies are strikes answered with `error`; after `max_strikes` strikes, or when the process
dies, the seat forfeits and the referee plays fallback moves for it to the end. Nothing a
bot does stops the game.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import orjson

from ..engine import Action, Deck, Game, IllegalMove, Rules
from .passes import count_passes
from .codec import MalformedMessage, as_int, decode, encode, hello_message, parse_hello, parse_reply
from .process import (
    BotDied, BotError, BotProcess, BotStartError, BotTimeout, LineTooLong, memory_limit_text, says_out_of_memory,
    printable, stderr_gist,
)
from ..model import FaultKind, FaultRecord, GameRecord


@dataclass(frozen=True)
class TimeControl:
    """Time limits in milliseconds: per decision, per game and bot (None = none), start-up.
    `move_ms`'s default (`DEFAULT_MOVE_MS`) is that of every command: run, check-bot, ask, play."""

    move_ms: int = 1000
    game_ms: int | None = None
    startup_ms: int = 10000


DEFAULT_MOVE_MS = TimeControl.move_ms
"""The time per decision when none is given: in a tournament file, check-bot, ask and play."""

REASON_CHARS = 500
"""The longest a fault's reason is kept (it may quote a whole reply of up to 1 MiB)."""


_TYPE = re.compile(rb'"type":"([a-z_]+)"')


def _short(reason: str) -> str:
    """`reason` printable and at most `REASON_CHARS` long."""
    reason = printable(reason)
    return reason if len(reason) <= REASON_CHARS else reason[:REASON_CHARS - 25] + f"... ({len(reason):,} characters)"


@dataclass(frozen=True)
class FaultPolicy:
    """How many times a decision is asked again after a strike, and strikes before forfeit."""

    retries: int = 1
    max_strikes: int = 5


@dataclass
class Fault:
    """One fault: the seat, its entrant, the kind and a reason for humans."""

    seat: int
    entrant: str
    kind: FaultKind
    reason: str

    def to_dict(self) -> FaultRecord:
        """JSON form."""
        return {"seat": self.seat, "entrant": self.entrant, "kind": self.kind.value, "reason": self.reason}


#: Lines a bot may send in answer to one request (or to `hello`) that are not the reply:
#: blank lines and replies to earlier requests. One more is a `malformed` strike.
MAX_EXTRA_LINES = 8
#: Bytes of a bot's lines that a game's replay keeps per seat; past that the recording of
#: that seat's lines is cut (a note says where) while its moves are still recorded.
RECORDING_CAP = 1 << 20
#: Bytes kept of one line that is recorded as a string (`raw`): not a plain JSON reply.
RAW_KEEP = 4096
#: A bot's JSON line is kept as it came only if it has at most this many brackets (so its
#: nesting is shallow enough for every JSON reader); otherwise it is kept as a string.
_MAX_BRACKETS = 64
_CR = b"\r"


def _plain_json(line: bytes) -> bool:
    """Whether a line already known to be one JSON object can go into a replay as it is:
    ASCII (no character that some reader takes for a line break), no carriage return, and
    shallow nesting."""
    return (line.isascii() and _CR not in line
            and line.count(b"[") + line.count(b"{") <= _MAX_BRACKETS)


def _ascii(line: bytes) -> bytes:
    """A JSON line of ours in ASCII: a reason may quote what a bot sent, and some readers
    take characters such as U+2028 for line breaks."""
    if line.isascii():
        return line
    return json.dumps(orjson.loads(line), separators=(",", ":")).encode()


class Recording:
    """A game's replay while it is played: what happened is kept as it comes (messages as
    the bytes sent or read, actions as values) and turned into replay lines only when
    asked.

    A bot's lines are kept escaped unless they are plain JSON (see `_plain_json`), at most
    `RAW_KEEP` bytes of one line and `RECORDING_CAP` bytes per seat, so whatever a bot
    sends, the replay stays small and every reader can load it."""

    __slots__ = ("_entries", "_lines", "_kept", "_cut", "cap")

    def __init__(self, cap: int = RECORDING_CAP) -> None:
        self._entries: list[tuple[Any, ...]] = []
        self._lines: list[bytes] | None = None
        self._kept: dict[int, int] = {}  # bytes of bot lines kept, by seat
        self._cut: set[int] = set()  # seats whose lines are no longer kept
        self.cap = cap

    def add(self, obj: dict[str, Any]) -> None:
        """A record as a JSON object (header, note, result)."""
        self._entries.append(("obj", obj))

    def msg(self, direction: str, seat: int, t: float, data: bytes, is_json: bool) -> None:
        """A message line sent or read at `t` seconds into the game; `is_json`: whether
        the line is one JSON object (ours are; a bot's line may be anything)."""
        if direction == "from":
            if seat in self._cut:
                return
            size = len(data)
            if not (is_json and _plain_json(data)):
                is_json = False
                if size > RAW_KEEP:
                    data = data[:RAW_KEEP]
            kept = self._kept.get(seat, 0) + len(data)
            if kept > self.cap:
                self._cut.add(seat)
                self.add({"type": "note", "seat": seat, "cut": True,
                          "text": f"the recording of seat {seat}'s lines is cut here: it kept {self.cap} bytes of "
                                  "them, the most a replay keeps per seat; its moves are still recorded"})
                return
            self._kept[seat] = kept
            self._entries.append(("msg", direction, seat, t, data, is_json, size))
            return
        self._entries.append(("msg", direction, seat, t, data, is_json, len(data)))

    def action(self, seat: int, action: Action, fallback: bool) -> None:
        """A move applied for `seat` (a fallback when the referee played it)."""
        self._entries.append(("action", seat, action, fallback))

    def lines(self) -> list[bytes]:
        """The replay, one JSON line per record (without newlines)."""
        if self._lines is None:
            self._lines = [self._line(e) for e in self._entries]
            self._entries = []  # the lines say it all now
        return self._lines

    @staticmethod
    def _line(e: tuple[Any, ...]) -> bytes:
        kind = e[0]
        if kind == "obj":
            return _ascii(orjson.dumps(e[1]))
        if kind == "action":
            _, seat, action, fallback = e
            return orjson.dumps({"type": "action", "seat": seat, "action": action.to_json(), "fallback": fallback})
        _, direction, seat, t, data, is_json, size = e
        line = data.rstrip(b"\n")
        head = b'{"type":"msg","dir":"%s","seat":%d,"t":%s,' % (direction.encode(), seat, repr(round(t, 5)).encode())
        if is_json:
            return head + b'"msg":' + (line if direction == "from" else _ascii(line)) + b"}"
        # Anything else as an escaped ASCII string: invalid UTF-8 as \\xNN, control
        # characters as \\uNNNN; `bytes` says how long the line was when it was cut.
        text = json.dumps(line.decode("utf-8", "backslashreplace"))
        cut = b',"bytes":%d' % size if size > len(data) else b""
        return head + b'"raw":' + text.encode() + cut + b"}"


@dataclass
class GameResult:
    """What one refereed game produced."""

    game: str
    seed: int
    seats: list[str]
    places: list[int]
    scores: list[int]
    phases: list[int]
    winner: int | None
    hands: int
    stalled_hands: int
    reason: str | None
    faults: list[Fault]
    forfeits: list[int]
    duration_s: float
    decisions: int
    think_s: list[float]
    stale_replies: int = 0
    recording: Recording | None = field(default=None, repr=False)
    passes: list[list[int]] | None = None  # what each seat's discards gave the others (`passes`)

    @property
    def replay(self) -> list[bytes] | None:
        """The replay lines (p10-replay/1) when the game was recorded, else None. They are
        formatted on first use: a tournament that keeps only failed games' replays never
        formats the others."""
        return self.recording.lines() if self.recording is not None else None

    def to_record(self) -> GameRecord:
        """The games.jsonl form (without tournament fields such as id and group)."""
        rec: GameRecord = {
            "game": self.game,
            "seed": self.seed,
            "seats": self.seats,
            "places": self.places,
            "scores": self.scores,
            "phases": self.phases,
            "winner": self.winner,
            "hands": self.hands,
            "stalled_hands": self.stalled_hands,
            "reason": self.reason,
            "faults": [f.to_dict() for f in self.faults],
            "forfeits": self.forfeits,
            "duration_s": round(self.duration_s, 4),
        }
        if self.passes is not None:
            rec["passes"] = self.passes
        return rec


_UNTIMED_S = 7 * 24 * 3600.0


def _winner(places: list[int]) -> int | None:
    """The seat alone in first place (forfeits already last), or None."""
    firsts = [s for s, p in enumerate(places) if p == 1]
    return firsts[0] if len(firsts) == 1 else None


def handshake(bot: BotProcess, entrant: str, time_control: TimeControl, started: bool = False) -> None:
    """Start `bot` if needed (not if the caller has just `started` it: one that died at
    once is reported, not started twice) and complete `hello` within the start-up limit;
    raises `BotStartError`."""
    if not bot.alive and not (started and bot.proc is not None):
        bot.start()
    hello = hello_message(entrant, time_control.move_ms, time_control.game_ms)
    deadline = time.monotonic() + time_control.startup_ms / 1000
    said: list[str] = []  # what it wrote on stdout that was no hello (a runtime's own words)
    try:
        bot.send(encode(hello))
        extra = 0
        while True:
            line = bot.read_line(deadline)
            if line.strip():
                said.append(printable(line[:300].decode("utf-8", "replace").strip()))
                try:
                    msg = decode(line)
                except MalformedMessage:
                    _read_more(bot, said, min(deadline, time.monotonic() + 0.5))
                    raise
                break
            extra += 1
            if extra > MAX_EXTRA_LINES:
                raise MalformedMessage(f"{extra} blank lines before its hello reply (at most {MAX_EXTRA_LINES} "
                                       "lines that are not the reply are allowed)")
        reply = parse_hello(msg)
    except (BotError, MalformedMessage) as e:
        bot.stop()
        why = "did not answer hello in time" if isinstance(e, BotTimeout) else str(e)
        gist = stderr_gist(bot.stderr_tail, bot.redact)
        if gist and gist not in why:  # a death's reason may quote it already
            why += f"; its stderr says: {gist}"
        oom = next((t for t in said if says_out_of_memory(t)), None)
        lim = bot.spec.limits
        if oom is not None and lim.memory_mb and "memory limit of" not in why:
            why = f"{memory_limit_text(lim)} (its runtime says on stdout: {oom}); {why}"
        raise BotStartError(f"bot {entrant!r} failed the handshake: {why}") from None
    bot.hello = reply
    bot.wants_options = reply.get("options", True) is not False
    bot.pause()  # it runs again when it is waited for (BotProcess.pause)


def _read_more(bot: BotProcess, said: list[str], until: float, most: int = 8) -> None:
    """After a line that is no message: up to `most` more lines the bot writes before
    `until` (a runtime that could not start says why over several lines, such as a JVM's
    "Error occurred during initialization of VM" / "Could not reserve enough space ...")."""
    try:
        while len(said) < most:
            line = bot.read_line(until)
            if line.strip():
                said.append(printable(line[:300].decode("utf-8", "replace").strip()))
    except BotError:
        pass


class _Seat:
    __slots__ = ("n", "bot", "entrant", "strikes", "forfeit", "seen", "think", "faults", "untimed", "ahead", "told")

    def __init__(self, n: int, bot: BotProcess, entrant: str) -> None:
        self.n = n
        self.bot = bot
        self.entrant = entrant
        self.strikes = 0
        self.forfeit = False
        self.seen = 0  # public events of the game's log already sent to this seat
        self.think = 0.0
        self.faults = 0
        # A person at the terminal (play --human) thinks as long as they like.
        self.untimed = bool(getattr(bot, "untimed", False))
        # Worked out while the seat decided its draw: the game's turn, then the events,
        # view and options that a draw from the deck brings (Game.preview_deck_draw).
        self.ahead: tuple[int, list[dict[str, Any]], dict[str, Any], dict[str, Any] | None] | None = None
        # The messages sent in this game since the bot last wrote a line (game_start, hand_end,
        # game_end, error...), so that a stray line is named with what it came after. Only this
        # game's: what a process was told in its earlier games depends on which games it
        # played, so on the parallelism, and a game's record must not.
        self.told: list[str] = []


class Referee:
    """Plays one game between started bots (one per seat)."""

    def __init__(
        self,
        bots: Sequence[BotProcess],
        entrants: Sequence[str],
        rules: Rules,
        seed: int,
        game_id: str,
        deck: Deck | None = None,
        time_control: TimeControl = TimeControl(),
        policy: FaultPolicy = FaultPolicy(),
        record: bool = False,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
        unavailable: dict[int, tuple[FaultKind, str]] | None = None,
        work_ahead: bool = True,
        progress: Callable[[], None] | None = None,
    ) -> None:
        self.unavailable = unavailable or {}
        self.progress = progress  # called before each request (a watchdog's heartbeat)
        # While a bot thinks, work out what the game needs next (the next hand's shuffle,
        # the request after a draw from the deck). It uses a CPU that would otherwise wait;
        # a draw from the discard pile (a sixth of the greedy players') throws it away.
        self.work_ahead = work_ahead
        self.seats = [_Seat(i, b, e) for i, (b, e) in enumerate(zip(bots, entrants))]
        self.rules = rules
        self.seed = seed
        self.game_id = game_id
        self.deck = deck
        self.tc = time_control
        self.policy = policy
        self.faults: list[Fault] = []
        self.record: Recording | None = Recording() if record else None
        self.on_event = on_event
        self.stale = 0
        self.decisions = 0
        self._t0 = 0.0
        self._stop_later: BotProcess | None = None  # the bot that answered last, still to be stopped
        self._unconfirmed: BotProcess | None = None  # stopped, not yet seen wholly stopped
        self._events: list[dict[str, Any]] = []  # the game's public events, in order

    # ----- recording ------------------------------------------------------------------

    def _rec(self, obj: dict[str, Any]) -> None:
        if self.record is not None:
            self.record.add(obj)

    def _rec_msg(self, direction: str, seat: int, data: bytes, is_json: bool) -> None:
        """Record one message line; `is_json`: whether it is known to be one JSON object."""
        if self.record is not None:
            self.record.msg(direction, seat, time.monotonic() - self._t0, data, is_json)

    def _rec_action(self, seat: int, action: Action, fallback: bool) -> None:
        if self.record is not None:
            self.record.action(seat, action, fallback)

    # ----- talking to seats -----------------------------------------------------------------

    def _send(self, seat: _Seat, data: bytes) -> None:
        if seat.forfeit:
            return
        self._rec_msg("to", seat.n, data, is_json=True)
        m = _TYPE.search(data)
        kind = m.group(1).decode() if m else "a message"
        seat.told = [kind] if kind == "game_start" else [*seat.told[-3:], kind]
        try:
            seat.bot.send(data)
        except BotError as e:
            self._forfeit(seat, FaultKind.CRASH, str(e))

    def _broadcast(self, build: Callable[[int], dict[str, Any]]) -> None:
        for seat in self.seats:
            if not seat.forfeit:
                self._send(seat, encode(build(seat.n)))

    def _fault(self, seat: _Seat, kind: FaultKind, reason: str, strike: bool = False) -> None:
        """Record a fault (in the replay too, where the turn it happened at is); `reason`
        made `_short` by the caller (it may quote the bot); `strike`: it counts as one."""
        self.faults.append(Fault(seat.n, seat.entrant, kind, reason))
        seat.faults += 1
        self._rec({"type": "fault", "seat": seat.n, "kind": kind, "reason": reason,
                   **({"strike": seat.strikes} if strike else {})})
        if self.on_event:
            self.on_event("fault", {"seat": seat.n, "entrant": seat.entrant, "kind": kind, "reason": reason})

    def _forfeit(self, seat: _Seat, kind: FaultKind, reason: str, counted: bool = False) -> None:
        """The seat forfeits; `counted`: its fault is already recorded (the last strike)."""
        if seat.forfeit:
            return
        reason = _short(reason)
        if not counted:
            self._fault(seat, kind, reason)
        else:
            self.faults[-1].reason += f"; forfeit: {reason}"
        seat.forfeit = True
        self._rec({"type": "note", "seat": seat.n, "text": f"seat {seat.n} forfeits: {reason}"})
        seat.bot.stop()

    # ----- the game -------------------------------------------------------------------

    def play(self) -> GameResult:
        """Play the game to its end and return the result."""
        self._t0 = t0 = time.monotonic()
        rules = self.rules
        game = Game(rules, len(self.seats), self.seed, self.deck, game_id=self.game_id,
                    names=[s.entrant for s in self.seats])
        self._rec(
            {"type": "header", "format": "p10-replay/1", "game": self.game_id, "seed": self.seed,
             "rules": rules.to_dict(), "players": [{"seat": s.n, "name": s.entrant} for s in self.seats],
             "deck": self.deck.to_dict() if self.deck else None}
        )
        for seat in self.seats:
            if seat.n in self.unavailable:
                self._forfeit(seat, *self.unavailable[seat.n])
            elif not seat.bot.alive:
                self._forfeit(seat, FaultKind.CRASH, f"bot {seat.entrant!r} is not running at the start of the game")
        players = [{"seat": s.n, "name": s.entrant} for s in self.seats]
        rules_d = rules.to_dict()
        time_d = {"move_ms": self.tc.move_ms, "game_ms": self.tc.game_ms}
        self._broadcast(lambda n: {"type": "game_start", "game": self.game_id, "seat": n,
                                   "players": players, "rules": rules_d, "time": time_d})
        self._route(game, game.start())
        while game.decision is not None:
            seat = self.seats[game.current]
            if seat.forfeit:
                action = game.fallback()
                self._rec_action(seat.n, action, True)
                self._route(game, game.apply(action))
            else:
                self._route(game, self._decide(game, seat))
        self._stop_bot()
        self._confirm_stopped()
        forfeits = [s.n for s in self.seats if s.forfeit]
        places = game.places(forfeits)
        scores = [p.score for p in game.players]
        phases = [p.completed for p in game.players]
        result = GameResult(
            game=self.game_id, seed=self.seed, seats=[s.entrant for s in self.seats], places=places,
            scores=scores, phases=phases, winner=_winner(places),
            hands=game.hand_no, stalled_hands=game.stalled_hands, reason=game.end_reason,
            faults=self.faults, forfeits=forfeits, duration_s=time.monotonic() - t0,
            decisions=self.decisions, think_s=[s.think for s in self.seats], stale_replies=self.stale,
            passes=count_passes(len(self.seats), self._events),
        )
        end = {"type": "game_end", "game": self.game_id, "places": places, "scores": scores,
               "phases_completed": phases, "winner": result.winner, "reason": game.end_reason,
               "faults": [s.faults for s in self.seats]}
        data = encode(end)
        for seat in self.seats:
            if seat.forfeit:
                continue
            self._rec_msg("to", seat.n, data, is_json=True)
            try:
                seat.bot.send(data)
            except BotError:
                pass  # the result is final: a bot gone by now is started afresh for its next game
        for seat in self.seats:
            seat.bot.drain_stderr()
        self._rec({"type": "result", **{k: v for k, v in end.items() if k != "type"}})
        result.recording = self.record
        return result

    def _stop_bot(self, unless: BotProcess | None = None) -> None:
        """Stop the bot that answered last (BotProcess.pause), unless it is `unless`, the
        one asked next (a turn's draw and play go to the same bot). Stopping it here rather
        than the moment its reply is read gives it the time the referee takes over the
        move to get back to reading its stdin, where it stops at once."""
        last = self._stop_later
        if last is not None and last is not unless:
            last.pause(confirm=False)  # confirmed before the next bot may run (_confirm_stopped)
            self._stop_later = None
            self._unconfirmed = last

    def _confirm_stopped(self) -> None:
        """Wait until the bot stopped last is wholly stopped (BotProcess.confirm_stopped)."""
        if self._unconfirmed is not None:
            self._unconfirmed.confirm_stopped()
            self._unconfirmed = None

    def _route(self, game: Game, events: list[dict[str, Any]]) -> None:
        """Log public events (each seat gets those it has not seen with its next request);
        send hand_end as its own message."""
        log = self._events
        for ev in events:
            kind = ev["e"]
            if kind == "hand_end":
                msg = dict(ev)
                del msg["e"]
                msg["type"] = "hand_end"
                data = encode(msg)
                for seat in self.seats:
                    self._send(seat, data)
                if self.on_event:
                    self.on_event("hand_end", msg)
            elif kind == "game_end":
                pass  # sent by play() with the faults and forfeits
            else:
                log.append(ev)

    def _request(self, game: Game, seat: _Seat, decision: str, rid: int, ahead: Any) -> bytes:
        """The request line asking `seat` for `decision`: the events it has not seen, its
        view and (a play, to a bot that wants them) its options; `ahead` is what was worked
        out while it thought, used when the game went as expected (it drew from the deck)."""
        n = seat.n
        log = self._events
        news = log[seat.seen:]
        seat.seen = len(log)
        if ahead is not None and ahead[0] == game.turn and news == ahead[1]:
            state, options = ahead[2], ahead[3]  # the seat drew from the deck, as worked out
        else:
            state = game.view(n)
            options = game.options(n) if decision == "play" and seat.bot.wants_options else None
        msg: dict[str, Any] = {"type": "request", "id": rid, "decision": decision, "events": news, "state": state}
        if options is not None:
            msg["options"] = options
        return encode(msg)

    def _budget(self, seat: _Seat) -> float:
        """The seconds `seat` has for this decision: the move time, or what is left of
        the game time if less."""
        if seat.untimed:
            return _UNTIMED_S
        budget = self.tc.move_ms / 1000
        if self.tc.game_ms is not None:
            budget = min(budget, max(0.0, self.tc.game_ms / 1000 - seat.think))
        return budget

    def _reply(self, bot: BotProcess, n: int, rid: int, deadline: float, decision: str = "") -> dict[str, Any]:
        """The reply to request `rid` (or a reply that is not to an earlier request), read
        by `deadline`: blank lines and late replies to earlier requests are passed over
        (recorded, and at most MAX_EXTRA_LINES of them)."""
        record = self.record
        extra = 0  # lines read that are not the reply: blank ones, late replies
        while True:
            line = bot.read_line(deadline)
            seat = self.seats[n]
            after, seat.told = seat.told, []
            try:
                reply = decode(line)
            except MalformedMessage as e:
                if record is not None:
                    self._rec_msg("from", n, line, is_json=False)
                if line.strip() and after:  # written, perhaps, on one of these: not the reply's fault alone
                    # the open request named by its decision, not its id: ids run on across a
                    # process's games, so would make the game's record depend on the parallelism
                    raise MalformedMessage(f"{e}; it came after {', '.join(after)} and the {decision} request "
                                           "then open (a "
                                           "message that needs no answer gets none: log to stderr)") from None
                if line.strip():
                    raise
                extra += 1  # a blank line: no reply, but it counts
            else:
                if record is not None:
                    self._rec_msg("from", n, line, is_json=True)
                got = as_int(reply.get("id"))
                if got == rid or type(got) is not int or reply.get("type") == "hello":
                    return reply
                self.stale += 1  # a late reply to an earlier request: dropped
                self._rec({"type": "note", "seat": n, "text": f"dropped a late reply to request {got!r} (it arrived "
                                                               f"while request {rid} was open)"})
                extra += 1
            if extra > MAX_EXTRA_LINES:
                raise MalformedMessage(
                    f"{extra} lines without a reply to request ({decision or 'the open one'}; blank lines and "
                    f"replies to earlier requests count; at most {MAX_EXTRA_LINES} are allowed)")

    def _decide(self, game: Game, seat: _Seat) -> list[dict[str, Any]]:
        """Ask `seat` for its decision, with retries; fall back when it cannot answer."""
        policy = self.policy
        decision = game.decision
        assert decision is not None
        bot = seat.bot
        self._stop_bot(bot)
        n = seat.n
        record = self.record
        ahead = seat.ahead
        seat.ahead = None
        for attempt in range(policy.retries + 1):
            rid = bot.next_id
            bot.next_id = rid + 1
            data = self._request(game, seat, decision, rid, ahead)
            if self.progress is not None:
                self.progress()
            if record is not None:
                self._rec_msg("to", n, data, is_json=True)
            self.decisions += 1
            budget = self._budget(seat)
            # No other bot runs while this one thinks; the wait for the last one to stop is
            # not this one's time.
            self._confirm_stopped()
            t_start = time.monotonic()
            deadline = t_start + budget
            kind = reason = None
            try:
                bot.send(data)
                bot.resume(check=True)  # it runs while the referee waits for it, and only then
                if attempt == 0 and self.work_ahead:  # while the bot thinks: work the game will need next
                    if decision == "play":
                        game.prepare_deal()
                    else:
                        preview = game.preview_deck_draw(bot.wants_options)
                        if preview is not None:
                            seat.ahead = (game.turn, *preview)
                reply = self._reply(bot, n, rid, deadline, decision)
                self._stop_later = bot
                seat.think += time.monotonic() - t_start
                action = parse_reply(reply, decision)
                _check_id(reply, rid)
                events = game.apply(action)
                if record is not None:
                    record.action(n, action, False)
                return events
            except BotTimeout:
                self._stop_later = bot
                seat.think += time.monotonic() - t_start
                kind = FaultKind.TIMEOUT
                if self.tc.game_ms is not None and seat.think >= self.tc.game_ms / 1000:
                    reason = f"game time of {self.tc.game_ms} ms used up"
                    self._send(seat, encode({"type": "error", "id": rid, "reason": reason, "fault": "timeout",
                                             "strikes": seat.strikes, "retry": False}))
                    self._forfeit(seat, FaultKind.TIMEOUT, reason)
                    break
                reason = f"no reply to request ({decision}) within {round(budget * 1000)} ms"  # not its id: see _reply
            except (BotDied, BotStartError) as e:
                self._forfeit(seat, FaultKind.CRASH, str(e))
                break
            except LineTooLong as e:
                self._stop_later = bot
                kind, reason = FaultKind.MALFORMED, f"protocol: {e}"
            except MalformedMessage as e:
                self._stop_later = bot
                kind, reason = FaultKind.MALFORMED, f"protocol: {e}"
            except IllegalMove as e:
                kind, reason = FaultKind.ILLEGAL, str(e)
            reason = _short(reason)  # it may quote the whole reply: kept out of the records
            seat.strikes += 1
            self._fault(seat, kind, reason, strike=True)
            retry = seat.strikes < policy.max_strikes and attempt < policy.retries
            self._send(seat, encode({"type": "error", "id": rid, "reason": reason, "fault": kind,
                                     "strikes": seat.strikes, "retry": retry}))
            if seat.strikes >= policy.max_strikes:
                self._forfeit(seat, kind, f"{seat.strikes} strikes (the limit is {policy.max_strikes})", counted=True)
                break
        action = game.fallback()
        self._rec_action(seat.n, action, True)
        return game.apply(action)


def _check_id(reply: Mapping[str, Any], rid: int) -> None:
    """A reply's id is request `rid`'s, an integer (true == 1 and 1.0 == 1 in Python; not
    in p10/1)."""
    if "id" not in reply:
        raise MalformedMessage(f"the reply has no 'id' (the request's id is {rid})")
    got = as_int(reply.get("id"))
    if type(got) is not int:
        raise MalformedMessage(f"the reply's 'id' must be an integer, the request's id {rid}; "
                               f"not {orjson.dumps(got).decode()[:40]}")


def play_game(
    bots: Sequence[BotProcess],
    entrants: Sequence[str],
    rules: Rules,
    seed: int,
    game_id: str,
    deck: Deck | None = None,
    time_control: TimeControl = TimeControl(),
    policy: FaultPolicy = FaultPolicy(),
    record: bool = False,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
    unavailable: dict[int, tuple[FaultKind, str]] | None = None,
    work_ahead: bool = True,
    progress: Callable[[], None] | None = None,
) -> GameResult:
    """Play one game between bots that have completed their handshake (see `handshake`).

    Bots that are not running forfeit from the start. Returns a `GameResult`; its `replay`
    holds the replay lines when `record` is true. `unavailable` maps seats that could not
    be started to (fault kind, reason); they forfeit from the start. `work_ahead`: use the
    time a bot thinks to work out what comes next (faster when a CPU is free for it; the
    same game either way). `progress`, if given, is called before each request.
    """
    return Referee(
        bots, entrants, rules, seed, game_id, deck, time_control, policy, record, on_event, unavailable,
        work_ahead, progress,
    ).play()
