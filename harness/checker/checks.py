"""The conformance checks. Each takes the run's `Context`, returns a short note when it
passes and raises `CheckFailed` (message + exchange) when it does not."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..engine import Game, IllegalMove, Phase, action_from_json, find_lay
from ..engine.cards import Card, CardError
from ..players import GreedyStrategy
from ..referee import BotDied, BotStartError, BotTimeout, LineTooLong, MalformedMessage, decode, encode
from ..referee.codec import hello_message, parse_reply
from ..model import FaultKind
import harness.checker.scenarios as S
from .context import CheckFailed, Context, DirectFault, Played, first_play, reply_pairs
from .tap import Entry


@dataclass(frozen=True)
class Check:
    """A named check: `name` for --only, `title` for people, `run(ctx)` -> note."""

    name: str
    title: str
    run: Callable[[Context], str]


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


# ----- handshake -----------------------------------------------------------------------------


def check_handshake(ctx: Context) -> str:
    bot = ctx.bot
    start = len(ctx.tap)
    try:
        bot.start()
    except BotStartError as e:
        raise CheckFailed(f"{e}. Check the command: it is run as given, from the current directory "
                          "(`python` means the Python running p10-tourney)") from None
    hello = hello_message(ctx.name, ctx.tc.move_ms, ctx.tc.game_ms)
    t = time.monotonic()
    deadline = t + ctx.tc.startup_ms / 1000
    want = '{"type": "hello", "name": "my-bot", "version": "1.0"}'
    try:
        bot.send(encode(hello))
        while True:
            line = bot.read_line(deadline)
            if line.strip():
                break
    except BotTimeout:
        raise CheckFailed(f"no hello reply within the start-up time ({ctx.tc.startup_ms} ms). The first "
                          f"message on stdin is hello; answer it with {want} on one line and flush stdout",
                          ctx.tap[start:]) from None
    except BotDied:
        tail = ctx.stderr_tail()
        raise CheckFailed("the process ended before it answered hello"
                          + (f"; its stderr ends: {tail}" if tail else "")
                          + f". Read JSON lines from stdin and answer hello with {want}", ctx.tap[start:]) from None
    except LineTooLong as e:
        raise CheckFailed(f"{e}: the hello reply must be one short line", ctx.tap[start:]) from None
    ms = _ms(time.monotonic() - t)
    exchange = ctx.tap[start:]
    try:
        msg = decode(line)
    except MalformedMessage as e:
        raise CheckFailed(f"the first line on stdout is {e}. Write only protocol messages to stdout (one JSON "
                          f"object per line) and log to stderr; answer hello with {want}", exchange) from None
    if msg.get("type") != "hello":
        raise CheckFailed(f"the first reply must be the hello reply {want}, not a message of type "
                          f"{msg.get('type')!r}", exchange)
    problem = ctx.schemas.error("from_bot.hello", msg)
    if problem is None:  # the essentials, also without jsonschema
        if not isinstance(msg.get("name"), str) or not msg.get("name"):
            problem = "'name' must be a non-empty string"
        elif not isinstance(msg.get("version"), str):
            problem = "'version' is a required string"
        elif not isinstance(msg.get("options", True), bool):
            problem = "'options' must be true or false"
    if problem:
        raise CheckFailed(f"the hello reply does not match protocol/schemas/from_bot.hello.schema.json: {problem}. "
                          f"Answer with {want} (optionally \"options\": false)", exchange)
    bot.hello = msg
    bot.wants_options = msg.get("options", True) is not False
    ctx.handshake_ok = True
    opts = "" if bot.wants_options else ", without options"
    return f"answered in {ms} ms as {msg['name']!r} version {msg['version']!r}{opts}"


# ----- laying --------------------------------------------------------------------------------


def _phase_of(req: Entry) -> Phase:
    ph = req.msg["state"]["phase"]
    return Phase.custom(ph["number"], ph["melds"])


def _could_lay(req: Entry) -> list[list[str]] | None:
    """A lay of the request's phase from its cards, if there is one and the bot has not laid."""
    st = req.msg["state"]
    if st.get("laid"):
        return None
    offered = (req.msg.get("options") or {}).get("lay")
    if offered:
        return offered
    try:
        cards = [Card.parse(c) for c in st["cards"]]
    except CardError:
        return None
    found = find_lay(cards, _phase_of(req))
    return [[c.text for c in m] for m in found] if found else None


def _require_lays(ctx: Context, played: Played, hands: tuple[int, ...], answered_only: bool = False) -> None:
    """The bot laid on its first play of each of `hands` in which it held its phase
    (`answered_only`: judge only the plays it answered)."""
    entries = ctx.tap[played.start: played.end]
    for hand in hands:
        found = first_play(entries, hand)
        if found is None:
            raise CheckFailed(f"the bot was never asked to play in hand {hand} of game {played.scenario.label} "
                              "(was it forfeited?)", entries[-4:])
        req, rep = found
        lay = _could_lay(req)
        if lay is None:
            continue
        if rep is None:
            if answered_only:
                continue  # no reply: the fault says why
            raise CheckFailed(f"the bot never answered its first play request of hand {hand} in game "
                              f"{played.scenario.label}", [req])
        if not isinstance(rep.msg, dict) or not rep.msg.get("lay"):
            phase = _phase_of(req)
            how = ("options.lay offered " + _short(lay) + ": a play reply may carry \"lay\": options.lay as it is"
                   if req.msg.get("options") is not None else
                   "the bot said \"options\": false, so it must find a lay itself (in Python: harness.sdk.find_lay), "
                   f"e.g. {_short(lay)}")
            raise CheckFailed(
                f"in hand {hand} of game {played.scenario.label} the bot was dealt phase {phase.number} "
                f"({phase.describe()}) but its first play laid nothing; {how}",
                [req] + ([rep] if rep else []))


def _short(lay: Any) -> str:
    return " / ".join(" ".join(m) for m in lay)


def check_options_lay(ctx: Context) -> str:
    played = ctx.play("options-lay", S.OPTIONS_LAY)
    _require_lays(ctx, played, (1,), answered_only=True)  # a bot that does not lay hears that first
    ctx.require_clean(played, "while laying a phase it was dealt")
    _require_lays(ctx, played, (2,))
    how = "from options.lay or its own finder" if ctx.bot.wants_options else "with its own finder"
    return f"laid phase 1 and then phase 2 (a run with a Wild inside) on its first plays, {how}"


# ----- errors --------------------------------------------------------------------------------


class _Direct:
    """A game the checker referees itself, to send `error` messages at chosen moments."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.events: list[dict[str, Any]] = []
        self.after = ""  # what happened just before the open request, for messages
        self.start = len(ctx.tap)  # where this game's transcript begins

    def send(self, msg: dict[str, Any]) -> None:
        try:
            self.ctx.bot.send(encode(msg))
        except BotDied:
            self.died()

    def died(self) -> None:
        """Fail for a process that ended. Whether its end shows first as a closed stdin
        (while sending) or a closed stdout (while reading) is a race between two pipes:
        the message is built from how the process ended, so it is the same either way."""
        ctx = self.ctx
        how = ctx.ended_text()
        tail = ctx.stderr_tail()
        tail = f". Its stderr ends: {tail}" if tail and tail not in how else ""
        self.fail(FaultKind.CRASH, f"the process ended ({how})",
                  ". An error needs no answer and must not end the bot: log its reason to stderr and wait "
                  "for the next request" + tail)

    def route(self, events: list[dict[str, Any]]) -> None:
        for ev in events:
            if ev["e"] == "hand_end":
                msg = {k: v for k, v in ev.items() if k != "e"}
                self.send({"type": "hand_end", **msg})
            elif ev["e"] != "game_end":
                self.events.append(ev)

    def fail(self, kind: str, reason: str, advice: str) -> None:
        ctx = self.ctx
        if not self.after and kind in (FaultKind.TIMEOUT, FaultKind.MALFORMED, FaultKind.ILLEGAL, FaultKind.CRASH):
            reason, advice = ctx.advice(kind, reason), ""  # no error sent yet: the usual advice
        entries = ctx.tap[self.start:]
        idx = max((i for i, e in enumerate(entries) if e.dir == "to" and e.type in ("request", "error")), default=0)
        # Show from the error before the failing request, if there was one.
        first = max((i for i in range(idx) if entries[i].dir == "to" and entries[i].type == "error"), default=idx)
        if idx - first > 3:
            first = idx
        exchange = entries[first:]
        ctx.direct_faults.append(DirectFault(kind, reason, exchange))
        raise CheckFailed(f"{self.after}{reason}{advice}", exchange)

    def ask(self, game: Game) -> tuple[int, dict[str, Any]]:
        ctx, bot = self.ctx, self.ctx.bot
        decision = game.decision
        rid = bot.next_id
        bot.next_id += 1
        msg: dict[str, Any] = {"type": "request", "id": rid, "decision": decision, "events": list(self.events),
                               "state": game.view(0)}
        if decision == "play" and bot.wants_options:
            msg["options"] = game.options(0)
        self.events.clear()
        self.send(msg)
        deadline = time.monotonic() + ctx.tc.move_ms / 1000
        while True:
            try:
                line = bot.read_line(deadline)
            except BotTimeout:
                self.fail(FaultKind.TIMEOUT, f"no reply to request {rid} within {ctx.tc.move_ms} ms",
                          ". An error needs no answer: log its reason and answer the next request as usual")
            except BotDied:
                self.died()
            except LineTooLong as e:
                self.fail(FaultKind.MALFORMED, str(e), "")
            if not line.strip():
                continue
            try:
                reply = decode(line)
            except MalformedMessage as e:
                self.fail(FaultKind.MALFORMED, f"the reply to request {rid} is {e}", "")
            if "id" not in reply:
                self.fail(FaultKind.MALFORMED, f"the reply to request {rid} has no id: {line[:200].decode('utf-8', 'replace')}",
                          ". Nothing but requests is answered; every reply carries the id of the request")
            if reply["id"] != rid or type(reply["id"]) is not int:
                typed = (f" (a {type(reply['id']).__name__}: send the id back exactly as received, a JSON number)"
                         if str(reply["id"]) == str(rid) else "")
                self.fail("stale", f"the bot sent a reply with id {reply['id']!r}{typed} while request {rid} was open",
                          ". Answer each request once, with its own id (an error is not answered, and after "
                          "an error with retry true the new request has a new id)")
            return rid, reply

    def play(self) -> str:
        ctx = self.ctx
        sc = S.ERRORS
        ctx.ensure_bot()
        self.start = len(ctx.tap)
        ctx.bot.note(f"game {sc.label}: 2 players, the bot in seat 0; check-bot sends errors itself")
        rules = sc.make_rules()
        game = Game(rules, 2, sc.seed, sc.make_deck(), game_id=sc.label, names=[ctx.name, "greedy"])
        opp = GreedyStrategy()
        opp.new_game(sc.label, 1)
        self.send({"type": "game_start", "game": sc.label, "seat": 0,
                   "players": [{"seat": 0, "name": ctx.name}, {"seat": 1, "name": "greedy"}],
                   "rules": rules.to_dict(), "time": {"move_ms": ctx.tc.move_ms, "game_ms": None}})
        self.route(game.start())
        stage = 0  # 0: none sent; 1: retry error sent; 2: answered it; 3: final error sent; 4: answered it
        notes: list[str] = []
        while game.decision is not None:
            decision = game.decision
            if game.current != 0:
                reply = opp.decide(game.view(1), decision, game.options(1) if decision == "play" else None)
                self.route(game.apply(action_from_json(reply, decision)))
                continue
            rid, reply = self.ask(game)
            if stage == 0 and decision == "draw":
                self.send({"type": "error", "id": rid, "fault": "illegal", "strikes": 1, "retry": True,
                           "reason": "check-bot: a test error (the reply was fine); answer the new request that follows"})
                self.after = "after an error with \"retry\": true, "
                stage = 1
                continue
            if stage == 2 and decision == "play":
                self.send({"type": "error", "id": rid, "fault": "illegal", "strikes": 2, "retry": False,
                           "reason": "check-bot: a test error (the reply was fine); the fallback move is played for you"})
                self.after = "after an error with \"retry\": false (the fallback move was played), "
                self.route(game.apply(game.fallback()))
                stage = 3
                continue
            try:
                self.route(game.apply(parse_reply(reply, decision)))
            except (MalformedMessage, IllegalMove) as e:
                kind = FaultKind.ILLEGAL if isinstance(e, IllegalMove) else FaultKind.MALFORMED
                self.fail(kind, f"the reply to request {rid} was {kind}: {e}", "")
            if stage in (1, 3):
                notes.append(f"request {rid}")
                stage += 1
                self.after = ""
        end = game._game_end_event()
        self.send({"type": "game_end", "game": sc.label, **{k: v for k, v in end.items() if k != "e"},
                   "faults": [0, 0]})
        if stage < 4:
            raise CheckFailed(f"check-bot could not finish this scenario (stage {stage}); the game ended early",
                              ctx.tap[self.start:][-6:])
        return (f"after an error with retry true it answered the new {notes[0]}, and after one with retry false "
                f"its next {notes[1]}")


def check_errors(ctx: Context) -> str:
    direct = _Direct(ctx)
    try:
        return direct.play()
    except CheckFailed:
        # A process that ended after the previous game (several-games judges that) gets
        # one fresh start here.
        last = ctx.direct_faults[-1] if ctx.direct_faults else None
        if last is None or last.kind != FaultKind.CRASH or ctx.answered(direct.start):
            raise
        ctx.direct_faults.pop()
        ctx.bot.note("the process had ended before this game: started again, the game is played once more")
        return _Direct(ctx).play()


# ----- Skips, reshuffles, table sizes, variants -------------------------------------------------


def check_skips(ctx: Context) -> str:
    played = ctx.play("skips", S.SKIPS)
    ctx.require_clean(played, "in the Skip scenario (R2.4, R3.2, R6)")
    pairs = reply_pairs(ctx.tap[played.start: played.end])
    faced = any(r.msg["decision"] == "draw" and r.msg["state"]["discard_top"] == "S" for r, _ in pairs)
    skipped = any(ev.get("e") == "skipped" and ev.get("seat") == played.seat
                  for r, _ in pairs for ev in r.msg.get("events", []))
    named = [rep.msg.get("skip") for _, rep in pairs
             if rep is not None and isinstance(rep.msg, dict) and rep.msg.get("discard") == "S"]
    if not (faced and skipped):
        raise CheckFailed("check-bot's Skip scenario did not happen as staged (was the bot forfeited?)",
                          ctx.tap[played.start: played.end][-4:])
    note = "did not take a Skip from the discard pile (R3.2), went on after losing a turn (R2.4)"
    if named:
        note += f", discarded a Skip naming seat {named[0]}"
    else:
        note += "; it never discarded a Skip here, so naming a target was not exercised"
    return note


def check_reshuffle(ctx: Context) -> str:
    played = ctx.play("reshuffle", S.RESHUFFLE)
    ctx.require_clean(played, "in the reshuffle scenario (R3.7, 6 players)")
    pairs = reply_pairs(ctx.tap[played.start: played.end])
    seen = [(r, rep) for r, rep in pairs if any(ev.get("e") == "reshuffle" for ev in r.msg.get("events", []))]
    after = [rep for r, rep in pairs if seen and r.t >= seen[0][0].t and rep is not None]
    if not seen or not after:
        raise CheckFailed("the draw pile never ran out in check-bot's reshuffle scenario, so the bot never saw a "
                          "reshuffle; does it take the discard on every turn?", ctx.tap[played.start: played.end][-4:])
    size = next(ev["draw_size"] for ev in seen[0][0].msg["events"] if ev.get("e") == "reshuffle")
    return f"saw the discard pile reshuffled into a draw pile of {size} cards and answered {len(after)} requests after it"


def check_players(ctx: Context) -> str:
    notes = []
    for sc in S.PLAYERS:
        played = ctx.play("players", sc)
        ctx.require_clean(played, f"at a table of {sc.players} (seat {sc.seat})")
        notes.append(f"{sc.players} players: {played.result.decisions} decisions, {played.result.hands} hands")
    return "; ".join(notes)


def check_variants(ctx: Context) -> str:
    fixed, first_to, phases = S.VARIANTS
    what = {fixed.label: "fixed hands (R10.1)", first_to.label: "first to 2 phases (R10.2)",
            phases.label: "phases 11 and 14 and a custom phase (R10.3, R10.4)"}
    for sc, lay_hands in ((fixed, (1, 2)), (first_to, ()), (phases, (1, 2, 3))):
        played = ctx.play("variants", sc)
        ctx.require_clean(played, f"in the variant {what[sc.label]}")
        if lay_hands:
            _require_lays(ctx, played, lay_hands)
    return "played " + ", ".join(what.values()) + ", laying every phase it was dealt"


def _bot_replies(ctx: Context, played: Played) -> list[tuple[Entry, Entry]]:
    """The bot's answered requests in `played`, with their replies."""
    return [(r, rep) for r, rep in reply_pairs(ctx.tap[played.start: played.end])
            if rep is not None and isinstance(rep.msg, dict)]


def check_wild_end(ctx: Context) -> str:
    played = ctx.play("wild-end", S.WILD_END)
    ctx.require_clean(played, "hitting a Wild on a run open at both ends (R7.3)")
    both_open = 0
    for req, rep in _bot_replies(ctx, played):
        table = {m["id"]: m for m in req.msg["state"].get("table", [])}
        for h in rep.msg.get("hits") or []:
            m = table.get(h.get("meld")) if isinstance(h, dict) else None
            if m and h.get("card") == "W" and m["kind"] == "run" and m["low"] > 1 and m["high"] < 12:
                both_open += 1
    if both_open:
        return f"hit {both_open} Wild{'s' if both_open > 1 else ''} on a run open at both ends, saying which end"
    return ("played the scenario cleanly; it never hit a Wild on a run open at both ends, so \"end\" was not "
            "exercised")


def check_skip_pending(ctx: Context) -> str:
    played = ctx.play("skip-pending", S.SKIP_PENDING)
    ctx.require_clean(played, "discarding a Skip while seat 1 has a skip pending (R6.2)")
    pending = [(req, rep) for req, rep in _bot_replies(ctx, played)
               if req.msg["decision"] == "play" and any(p["skip_pending"] for p in req.msg["state"]["players"])]
    if not pending:
        raise CheckFailed("check-bot's scenario did not happen as staged: no seat had a skip pending when the bot "
                          "played (was the bot forfeited?)", ctx.tap[played.start: played.end][-4:])
    named = [rep.msg.get("skip") for _, rep in pending if rep.msg.get("discard") == "S"]
    if named:
        return f"with seat 1's skip pending it discarded a Skip naming seat {named[0]} (R6.2)"
    return "played cleanly with a skip pending on seat 1; it never discarded its Skip then, so R6.2 was not exercised"


def check_tie_break(ctx: Context) -> str:
    played = ctx.play("tie-break", S.TIE_BREAK)
    ctx.require_clean(played, "in a tie-break hand where seat 2 is not playing (R9.3, R10.6)")
    inactive = [(req, rep) for req, rep in _bot_replies(ctx, played)
                if any(p.get("active") is False for p in req.msg["state"]["players"])]
    if not inactive:
        raise CheckFailed("check-bot's tie-break scenario did not happen as staged: the bot and seat 0 were to tie "
                          "in hand 1 by laying phase 1 on their first turns (the bot holds it); did the bot lay?",
                          ctx.tap[played.start: played.end][-6:])
    named = [rep.msg.get("skip") for req, rep in inactive if rep.msg.get("discard") == "S"]
    note = f"played {len({r.msg['state']['hand'] for r, _ in inactive})} tie-break hand(s) with seat 2 left out"
    if named:
        return note + f", naming seat {named[0]} with its Skip (only seats in the hand may be named)"
    return note + "; it never discarded a Skip there, so whom a Skip may name was not exercised"


BYE_GRACE_S = 0.5  # what tournaments give a bot to exit after bye (protocol/LIMITS.md)
BYE_WAIT_S = 2.0  # how long check-bot waits, for a busy machine


def check_bye(ctx: Context) -> str:
    ctx.ensure_bot()
    bot = ctx.bot
    proc = bot.proc
    assert proc is not None
    start = len(ctx.tap)
    bot.send(encode({"type": "bye"}))  # stdin stays open: the bot must exit on bye itself
    t = time.monotonic()
    code = None
    while time.monotonic() - t < BYE_WAIT_S:
        code = proc.poll()
        if code is not None:
            break
        time.sleep(0.01)
    ms = _ms(time.monotonic() - t)
    if code is None:
        bot.note(f"still running {ms} ms after bye")
        bot.stop()
        raise CheckFailed(
            f"the process was still running {ms} ms after bye (its stdin still open); tournaments end a bot "
            f"{_ms(BYE_GRACE_S)} ms after bye with SIGTERM. On {{\"type\": \"bye\"}} stop reading and exit "
            "with code 0 (do not wait for the end of input)", ctx.tap[start:])
    bot.stop()
    if code != 0:
        raise CheckFailed(f"the process exited with {ctx.ended_text(proc)} after bye; exit with code 0",
                          ctx.tap[start:])
    note = f"exited with code 0 {ms} ms after bye"
    if ms > _ms(BYE_GRACE_S):
        note += f"; tournaments allow {_ms(BYE_GRACE_S)} ms, exit sooner"
    return note


# ----- several games ---------------------------------------------------------------------------


def check_several(ctx: Context) -> str:
    bot = ctx.bot
    if _wait_gone(bot, 0.3):  # it may be ending after the previous check's game
        bot.note("the process had ended after the previous game: started again for this check")
    ctx.ensure_bot()
    starts, pid = bot.starts, bot.pid
    mine: list[Played] = []  # the games of this check
    for i, sc in enumerate(S.SEVERAL):
        proc = bot.proc
        gone = bool(i) and _wait_gone(bot, 0.3)
        played = None if gone else ctx._play("several-games", sc)
        if i and played is not None and (bot.starts != starts or (
                any(f.kind == FaultKind.CRASH for f in played.faults) and not ctx.answered(played.start, played.end))):
            gone = True  # it ended after the last game, seen only now (a slow exit on a busy machine)
        if gone:
            how = ctx.ended_text(proc)
            bot.note(f"the process ended after game {i} ({how})")
            entries = ctx.tap[mine[-1].start:]
            last = max((j for j, e in enumerate(entries) if e.dir == "to" and e.type == "game_end"), default=0)
            raise CheckFailed(
                f"the process ended after game {i} ({how}); one process plays many games: after "
                "game_end wait for the next game_start, and exit only on bye or at the end of input",
                entries[last:])
        assert played is not None
        mine.append(played)
        ctx.require_clean(played, f"in game {i + 1} of {len(S.SEVERAL)} in one process")
        if bot.starts != starts:
            raise CheckFailed(f"the bot had to be started again for game {i + 1}; one process plays many games",
                              ctx.tap[played.start:played.start + 4])
    return f"played {len(S.SEVERAL)} games in one process (pid {pid})"


def _wait_gone(bot: Any, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if bot.proc is None or bot.proc.poll() is not None:
            return True
        time.sleep(0.02)
    return False


# ----- over every game: valid replies, time, late replies ----------------------------------------


def _scan_replies(ctx: Context) -> tuple[int, tuple[str, list[Entry]] | None]:
    """Validate every line the bot wrote against the schema of what it answered. Returns
    how many were checked and the first problem (message, exchange)."""
    open_req: Entry | None = None
    awaiting_hello = False
    checked = 0
    for e in ctx.tap:
        if e.dir == "to":
            if e.type == "hello":
                awaiting_hello, open_req = True, e
            elif e.type == "request":
                open_req = e
            continue
        if e.dir != "from" or not e.text.strip():
            continue
        checked += 1
        ex = [open_req, e] if open_req is not None else [e]
        if not isinstance(e.msg, dict):
            what = "not JSON" if e.msg is None else f"JSON but not an object ({type(e.msg).__name__})"
            return checked, (f"a line the bot wrote is {what}: {e.text[:120]!r}. Write only protocol messages to "
                             "stdout, one JSON object per line; log to stderr", ex)
        if awaiting_hello:
            awaiting_hello = False
            name = "from_bot.hello"
        elif open_req is not None and open_req.type == "request":
            name = f"from_bot.{open_req.msg['decision']}"
        else:
            continue
        problem = ctx.schemas.error(name, e.msg)
        if problem:
            hint = ""
            if "'id'" in problem or problem.startswith("id:"):
                hint = " Send back the request's id exactly as received: a JSON number."
            what = "the hello reply" if name == "from_bot.hello" else f"a {name.split('.')[1]} reply"
            return checked, (f"{what} does not match protocol/schemas/{name}.schema.json: {problem}.{hint}", ex)
    return checked, None


def _all_faults(ctx: Context, kinds: tuple[str, ...]) -> tuple[str, str, list[Entry]] | None:
    """The first fault of one of `kinds` in every game so far: (kind, reason, exchange)."""
    first: tuple[float, str, str, list[Entry]] | None = None
    for p in ctx.games:
        for f in p.faults:
            if f.kind in kinds:
                ex = ctx.fault_exchange(p, f)
                t = ex[0].t if ex else 0.0
                if first is None or t < first[0]:
                    first = (t, f.kind, f.reason, ex)
                break
    for d in ctx.direct_faults:
        if d.kind in kinds:
            t = d.exchange[0].t if d.exchange else 0.0
            if first is None or t < first[0]:
                first = (t, d.kind, d.reason, d.exchange)
            break
    return None if first is None else first[1:]


def _games_note(ctx: Context) -> str:
    n = len(ctx.games) + (1 if any(e.text.startswith("game errors") for e in ctx.tap if e.dir == "note") else 0)
    return f"{n} game{'s' if n != 1 else ''}"


def check_valid(ctx: Context) -> str:
    ctx.full_game("valid-replies")
    checked, problem = _scan_replies(ctx)
    if problem:
        raise CheckFailed(*problem)
    fault = _all_faults(ctx, (FaultKind.MALFORMED, FaultKind.ILLEGAL))
    if fault:
        kind, reason, ex = fault
        raise CheckFailed(ctx.advice(kind, reason), ex)
    schemas = ("against the schemas and by the referee" if ctx.schemas.available
               else f"by the referee (schemas not checked: {ctx.schemas.why_not})")
    return f"{checked} replies in {_games_note(ctx)} checked {schemas}"


def check_time(ctx: Context) -> str:
    ctx.full_game("in-time")
    fault = _all_faults(ctx, (FaultKind.TIMEOUT,))
    if fault:
        kind, reason, ex = fault
        raise CheckFailed(ctx.advice(kind, reason), ex)
    times = [rep.t - req.t for req, rep in reply_pairs(ctx.tap) if rep is not None]
    if not times:
        raise CheckFailed("the bot answered no request in time", ctx.tap[-4:])
    slowest = max(times)
    note = (f"{len(times)} replies: median {_ms(statistics.median(times))} ms, slowest {_ms(slowest)} ms "
            f"of the {ctx.tc.move_ms} ms allowed (move_ms)")
    if slowest > ctx.tc.move_ms / 1000 / 2:
        note += "; the slowest used more than half of move_ms, leave a margin for a busy machine"
    return note


def check_late(ctx: Context) -> str:
    ctx.full_game("late-replies")
    stale = sum(p.result.stale_replies for p in ctx.games)
    direct = [d for d in ctx.direct_faults if d.kind == "stale"]
    if stale or direct:
        ex: list[Entry] = direct[0].exchange if direct else []
        example = ""
        open_req: Entry | None = None
        answered = False
        for e in ctx.tap:
            if e.dir == "to" and e.type == "request":
                open_req, answered = e, False
            elif e.dir == "from" and isinstance(e.msg, dict) and "id" in e.msg and e.msg.get("type") != "hello":
                ok = open_req is not None and not answered and e.msg["id"] == open_req.msg["id"] \
                    and type(e.msg["id"]) is int
                if ok:
                    answered = True
                    continue
                if not ex:
                    ex = [x for x in (open_req, e) if x is not None]
                if open_req is not None and str(e.msg["id"]) == str(open_req.msg["id"]):
                    example = (f" Its id {e.msg['id']!r} is a {type(e.msg['id']).__name__} where the request's id was "
                               f"{open_req.msg['id']!r}: send the id back exactly as received, a JSON number.")
                elif open_req is not None:
                    example = (f" For example, a reply with id {e.msg['id']!r} came while request "
                               f"{open_req.msg['id']} was open{' (and already answered)' if answered else ''}.")
                break
        n = stale + len(direct)
        raise CheckFailed(
            f"the bot sent {n} repl{'y' if n == 1 else 'ies'} whose id was not that of the open request; the referee "
            "drops such replies (a late reply to an old request, a second reply, or a reply to an error)."
            f"{example} Answer each request exactly once, with its id, within move_ms", ex)
    return f"no reply to an old or unknown id in {_games_note(ctx)}"


CHECKS: tuple[Check, ...] = (
    Check("handshake", "handshake: a hello reply with name and version, within the start-up time", check_handshake),
    Check("options-lay", "takes options.lay when given one (or finds a lay itself)", check_options_lay),
    Check("errors", "survives an error and answers the next request", check_errors),
    Check("skips", "handles Skips: a Skip up-card, losing a turn, discarding a Skip with a target", check_skips),
    Check("skip-pending", "names no seat that has a skip pending (R6.2)", check_skip_pending),
    Check("wild-end", "says \"end\" for a Wild hit on a run open at both ends (R7.3)", check_wild_end),
    Check("tie-break", "plays a tie-break hand with a seat left out, naming only seats in the hand (R10.6)",
          check_tie_break),
    Check("reshuffle", "handles a reshuffle of the discard pile (R3.7) at a table of 6", check_reshuffle),
    Check("players", "plays at tables of 2 and of 6 players", check_players),
    Check("variants", "plays the variants: fixed hands, first_to, phases 11-20, a custom phase", check_variants),
    Check("several-games", "plays several games in one process", check_several),
    Check("valid-replies", "valid replies to every decision (schemas and rules)", check_valid),
    Check("in-time", "answers within time (move_ms)", check_time),
    Check("late-replies", "never sends a late reply or a reply to an old id", check_late),
    Check("bye", "exits on bye within the grace time, with exit code 0", check_bye),
)
"""Every check, in the order they run. valid-replies, in-time and late-replies look at every
game played in the run, and play one whole standard game of their own; bye comes last: it
ends the process."""
