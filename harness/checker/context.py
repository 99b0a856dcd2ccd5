"""What the checks share: the bot under test (one process for the whole suite, tapped),
greedy opponents, the games played so far, and how a fault becomes a message for the
bot's author with the exchange that failed."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..bots import GREEDY_ARGV
from ..referee import (
    BotProcess, BotSpec, BotStartError, Fault, FaultPolicy, GameResult, TimeControl, handshake, play_game,
)
from ..referee.process import describe_exit
from ..sandbox.box import Sandbox
from ..model import FaultKind
from .scenarios import Scenario
from .schemas import Schemas
from .tap import Entry, TappedProcess

SPEC_REPLIES = "protocol/SPEC.md (Replies)"


class CheckFailed(Exception):
    """A check failed: `message` tells the author what to fix; `exchange` is the part of the
    transcript that shows it."""

    def __init__(self, message: str, exchange: Sequence[Entry] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.exchange = list(exchange)


@dataclass
class Played:
    """One game the bot under test played: which check, the result, its seat and the
    transcript range [start, end)."""

    check: str
    scenario: Scenario
    result: GameResult
    seat: int
    start: int
    end: int

    @property
    def faults(self) -> list[Fault]:
        """The bot's own faults in this game."""
        return [f for f in self.result.faults if f.seat == self.seat]


@dataclass
class DirectFault:
    """A fault in a game the checker played itself (not through the referee)."""

    kind: str
    reason: str
    exchange: list[Entry] = field(default_factory=list)


class Context:
    """The state of one check-bot run."""

    def __init__(
        self,
        argv: Sequence[str],
        move_ms: int = 1000,
        startup_ms: int = 10000,
        cwd: str | None = None,
        name: str = "candidate",
        sandbox: Sandbox | None = None,
    ) -> None:
        self.tap: list[Entry] = []
        self.box = sandbox or Sandbox()
        self.spec = BotSpec(name, tuple(argv), cwd=cwd, sandbox=self.box)
        self.bot = TappedProcess(self.spec, self.tap)
        self.tc = TimeControl(move_ms=move_ms, startup_ms=startup_ms)
        # Strict: any fault fails a check; few strikes keep a broken bot's games short.
        self.policy = FaultPolicy(retries=1, max_strikes=3)
        self.schemas = Schemas()
        self.games: list[Played] = []
        self.direct_faults: list[DirectFault] = []
        self.handshake_ok = False
        self.t0 = time.monotonic()
        self._opponents: list[BotProcess] = []
        self._full: Played | None = None

    @property
    def name(self) -> str:
        """The entrant name the bot is given in hello."""
        return self.spec.name

    # ----- processes ------------------------------------------------------------------------

    def ensure_bot(self) -> None:
        """Start the bot again (with a handshake) if its process has ended."""
        if self.bot.alive:
            return
        try:
            handshake(self.bot, self.name, self.tc)
        except BotStartError as e:
            raise CheckFailed(
                f"the bot had to be started again (its process had ended) and failed: {e}",
                self.tap[-6:],
            ) from None

    def opponents(self, k: int) -> list[BotProcess]:
        """`k` started greedy opponents (started once, reused for every game)."""
        tc = TimeControl(move_ms=self.tc.move_ms, startup_ms=max(20000, self.tc.startup_ms))
        while len(self._opponents) < k:
            i = len(self._opponents) + 1
            self._opponents.append(BotProcess(BotSpec(f"greedy-{i}", GREEDY_ARGV, sandbox=Sandbox(mode=self.box.mode))))
        for opp in self._opponents[:k]:
            if not opp.alive:
                handshake(opp, opp.spec.name, tc)  # BotStartError: check-bot itself is broken
        return self._opponents[:k]

    def close(self) -> None:
        """Say bye and end every process."""
        from ..referee import encode

        for p in [self.bot, *self._opponents]:
            if p.alive:
                try:
                    p.send(encode({"type": "bye"}))
                except Exception:  # noqa: BLE001 - it may be gone already
                    pass
            p.stop()

    # ----- games ----------------------------------------------------------------------------

    def play(self, check: str, sc: Scenario) -> Played:
        """Play scenario `sc` with the bot in `sc.seat` and greedy opponents elsewhere.

        If the bot's process turns out to have ended before it answered anything in this
        game (it exits after each game), it is started again and the game played once more:
        only the several-games check judges that."""
        played = self._play(check, sc)
        if any(f.kind == FaultKind.CRASH for f in played.faults) and not self.answered(played.start, played.end):
            self.bot.note("the process had ended before this game: started again, the game is played once more")
            self.games.remove(played)
            played = self._play(check, sc)
        return played

    def answered(self, start: int, end: int | None = None) -> bool:
        """Did the bot write a line in the transcript range?"""
        return any(e.dir == "from" for e in self.tap[start:end])

    def _play(self, check: str, sc: Scenario) -> Played:
        self.ensure_bot()
        opps = self.opponents(sc.players - 1)
        bots: list[BotProcess] = list(opps[: sc.seat]) + [self.bot] + list(opps[sc.seat:])
        names = [b.spec.name for b in bots]
        names[sc.seat] = self.name
        start = len(self.tap)
        self.bot.note(f"game {sc.label}: {sc.players} players, the bot in seat {sc.seat}")
        result = play_game(bots, names, sc.make_rules(), sc.seed, sc.label, sc.make_deck(), self.tc,
                           self.policy, record=True)
        # The referee stops a bot between its turns; here the bot runs on after the game, to
        # read game_end now, so that what it does then is seen as it happens (an exit).
        self.bot.resume()
        played = Played(check, sc, result, sc.seat, start, len(self.tap))
        self.games.append(played)
        return played

    def full_game(self, check: str) -> Played:
        """A whole standard game at a table of 4, played once per run."""
        from .scenarios import FULL

        if self._full is None:
            self._full = self.play(check, FULL)
        return self._full

    # ----- turning faults into advice ---------------------------------------------------------

    def require_clean(self, played: Played, doing: str) -> None:
        """Fail with the bot's first fault in `played`, if it has one."""
        faults = played.faults
        if faults:
            f = faults[0]
            more = f" ({len(faults)} faults in this game)" if len(faults) > 1 else ""
            raise CheckFailed(f"{doing}{more}: " + self.advice(f.kind, f.reason),
                              self.fault_exchange(played, f))

    def advice(self, kind: str, reason: str) -> str:
        """What a fault means and what to fix."""
        ms = self.tc.move_ms
        if kind == FaultKind.TIMEOUT:
            text = (f"{reason}. Answer every request within move_ms ({ms} ms here; the bot is told it in "
                    f"hello.time.move_ms), write the reply as one line and flush stdout after it")
            hint = self._id_hint()
            return text + (f". {hint}" if hint else ".")
        if kind == FaultKind.MALFORMED:
            return (f"a reply was malformed: {reason}. Each reply is one JSON object on one line, e.g. "
                    f'{{"id": 58, "discard": "R5"}}, with the id of the request it answers; see {SPEC_REPLIES} '
                    "and protocol/schemas/")
        if kind == FaultKind.ILLEGAL:
            fix = what_to_change(reason)
            return (f"the referee refused a reply: {reason}. " + (f"To fix it: {fix}. " if fix else "")
                    + "The rule named is in RULES.md; build each reply from the state of the request it answers "
                    "(state.cards, state.table, state.players)")
        if kind == FaultKind.CRASH:
            tail = self.stderr_tail()
            return (f"{reason}. A bot keeps reading stdin until bye or the end of input; an exception "
                    "in it ends the process" + (f". Its stderr ends: {tail}" if tail and tail not in reason else ""))
        return f"{kind}: {reason}"

    def ended_text(self, proc: subprocess.Popen[bytes] | None = None, wait_s: float = 5.0) -> str:
        """How the bot's process (or `proc`, an earlier one) ended ("exit code 1", "killed
        by SIGSEGV", ...), once it has: a closed pipe may be seen a moment before the exit,
        so wait for it (up to `wait_s`) and read the rest of its stderr, to tell the same
        story every time."""
        proc = proc or self.bot.proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                pass
            if proc is self.bot.proc:
                self.bot.drain_stderr()
        if code is None:
            return "it closed its pipes but is still running"
        return describe_exit(code, self.spec.limits)

    def stderr_tail(self) -> str:
        """The last line the bot wrote to stderr."""
        lines = self.bot.stderr_tail.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else ""

    def _id_hint(self) -> str:
        """If the bot answered with an id of the wrong type, say so."""
        open_id = None
        for e in self.tap:
            if e.dir == "to" and e.type == "request":
                open_id = e.msg.get("id")
            elif e.dir == "from" and isinstance(e.msg, dict) and "id" in e.msg and e.msg.get("type") != "hello":
                rid = e.msg["id"]
                if rid != open_id and str(rid) == str(open_id):
                    return (f"The bot did answer, but with the id {rid!r} ({type(rid).__name__}) where the "
                            f"request's id was {open_id!r}: send the id back exactly as received, a JSON number")
        return ""

    def fault_exchange(self, played: Played, fault: Fault) -> list[Entry]:
        """The transcript lines that show `fault`: from the request that led to it to the
        `error` the referee sent (or the bot's end)."""
        entries = self.tap[played.start: played.end]
        if fault.kind in (FaultKind.TIMEOUT, FaultKind.MALFORMED, FaultKind.ILLEGAL):
            idx = next((i for i, e in enumerate(entries) if e.dir == "to" and e.type == "error"), None)
        else:
            idx = next((i for i, e in enumerate(entries) if e.dir == "note" and
                        (e.text.startswith("the bot is gone") or e.text.startswith("could not send")
                         or e.text.startswith("process had ended"))), None)
            if idx is None:
                return entries[-4:] + [Entry("note", entries[-1].t if entries else 0.0, f"forfeit: {fault.reason}")]
        if idx is None:
            return entries[-4:]
        start = next((i for i in range(idx, -1, -1) if entries[i].dir == "to" and entries[i].type == "request"),
                     max(0, idx - 3))
        return entries[start: idx + 1]


_SKIP_FIX = ('name in "skip" another seat whose state.players entry has "active" not false and "skip_pending" '
             'false; send null only if there is none (R6.3)')
_LAY_FIX = ("lay state.phase whole: one list of cards per meld, runs low to high with each Wild where it stands "
            "(options.lay shows one way)")
_FIXES = {
    "R3.1": 'answer a draw request with {"draw": "deck"} (or "discard" when state.can_take_discard is true), '
            "and a play request with a play reply",
    "R3.2": 'draw "deck": a Skip on the discard pile can never be taken (state.can_take_discard is false)',
    "R3.3": "lay only cards in state.cards, and only while state.laid is false",
    "R3.4": "hit only melds already in state.table; to add to a meld you lay in this reply, lay it longer",
    "R3.5": 'discard one card of state.cards that the lay and hits did not use; leave "discard" out only when '
            "they use up the hand",
    "R5.2": _LAY_FIX, "R5.3": _LAY_FIX, "R5.4": _LAY_FIX,
    "R4.1": _LAY_FIX, "R4.2": _LAY_FIX, "R4.3": _LAY_FIX, "R4.4": _LAY_FIX, "R4.5": _LAY_FIX, "R4.6": _LAY_FIX,
    "R4.7": "hit a run only at its ends: a card a Wild stands for cannot take its place (options.hits lists "
            "every legal hit)",
    "R6.1": _SKIP_FIX, "R6.2": _SKIP_FIX, "R6.3": _SKIP_FIX, "R10.6": _SKIP_FIX,
    "R7.1": "hit only cards that fit: a set takes its number, a run the next number at an end, a colour meld "
            "its colour, any meld a Wild (options.hits lists every legal hit)",
    "R7.2": "hit only when state.laid is true or the same reply lays the phase",
    "R7.3": 'give "end": "low" or "high" for a Wild on a run open at both ends, an "end" a natural card fits, '
            'and no "end" on a set or colour meld',
}


def what_to_change(reason: str) -> str:
    """What to change in a reply the referee refused for `reason` ("R6.2: ..."), or ""."""
    rule = reason.split(":", 1)[0].strip()
    return _FIXES.get(rule, "")


def reply_pairs(entries: Sequence[Entry]) -> list[tuple[Entry, Entry | None]]:
    """Each request sent to the bot with the reply that carried its id (None if none did)."""
    out: list[tuple[Entry, Entry | None]] = []
    open_req: Entry | None = None
    for e in entries:
        if e.dir == "to" and e.type == "request":
            if open_req is not None:
                out.append((open_req, None))
            open_req = e
        elif e.dir == "from" and open_req is not None and isinstance(e.msg, dict) and e.msg.get("id") == open_req.msg["id"] \
                and type(e.msg.get("id")) is type(open_req.msg["id"]):
            out.append((open_req, e))
            open_req = None
    if open_req is not None:
        out.append((open_req, None))
    return out


def first_play(entries: Sequence[Entry], hand: int) -> tuple[Entry, Entry | None] | None:
    """The bot's first play request of hand `hand` and its reply."""
    for req, rep in reply_pairs(entries):
        if req.msg.get("decision") == "play" and req.msg["state"].get("hand") == hand:
            return req, rep
    return None


def brief(msg: Any) -> Any:
    """A request without the parts that rarely matter to a failure (events, players, table
    are summarised), for the text report."""
    if not isinstance(msg, dict) or msg.get("type") != "request":
        return msg
    out = {k: v for k, v in msg.items() if k not in ("events", "state")}
    st = msg.get("state") or {}
    keep = ("hand", "turn", "seat", "cards", "phase", "laid", "discard_top", "can_take_discard", "draw_size")
    s = {k: st[k] for k in keep if k in st}
    if st.get("table"):
        s["table"] = st["table"]
    if "players" in st:
        s["players"] = f"<{len(st['players'])} players>"
    if msg.get("events"):
        out["events"] = f"<{len(msg['events'])} events: {', '.join(ev.get('e', '?') for ev in msg['events'][:8])}" \
                        f"{', ...' if len(msg['events']) > 8 else ''}>"
    out["state"] = s
    order = ["type", "id", "decision", "events", "state", "options"]
    return {k: out[k] for k in order if k in out} | {k: v for k, v in out.items() if k not in order}


__all__ = ["CheckFailed", "Context", "Played", "DirectFault", "reply_pairs", "first_play", "brief"]
