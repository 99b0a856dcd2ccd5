"""A person at the terminal as a seat of the referee (`p10-tourney play --human`).

`HumanSeat` looks like a `BotProcess` to the referee: the referee `send`s it p10/1 lines,
which it shows on the terminal (the hand, the table, the piles, what the others did), and
`read_line` asks the person for a move with short typed commands until one is legal, then
returns it as a p10/1 reply line. It reads with `input()`, so it works at a terminal and
with piped stdin alike. Moves are checked locally with the engine first, so a mistake gets
a helpful message and another try rather than a strike.

Commands (type `help` at the prompt):

    d                        draw from the deck
    t                        take the top discard
    lay R3 B3 W / G7 Y7 R7   lay your whole phase; melds separated by "/", runs low to high
    lay                      lay the phase shown as a hint
    hit R8 4                 add R8 to table meld 4;  hit W 2 low  (a Wild on a run: which end)
    disc R5                  discard R5, ending your turn;  disc S 2  (a Skip: the seat to skip)
    undo                     take back this turn's lay and hits
    hand, table, help, quit
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable

import click
import orjson

from .engine import Card, CardError, IllegalMove, Phase, find_lay
from .engine.melds import match_lay
from .players.base import TableModel
from .referee import BotDied, BotSpec, BotTimeout

HELP = """\
commands (case does not matter; several at once with ";", e.g.  lay R3 B3 G3 / R7 B7 G7; disc B1):
  d                          draw from the deck
  t                          take the top discard (never a Skip)
  lay R3 B3 W / G7 Y7 R7     lay your whole phase: melds separated by "/", runs low to high
                             with each Wild where it stands (W R4 B5 G6 is the run 3..6)
  lay                        lay the phase shown as a hint
  hit R8 4                   add R8 to table meld 4 (once your phase is down)
  hit W 2 low                a Wild on a run open at both ends: say which end, low or high
  disc R5                    discard R5 and end your turn
  disc S 2                   discard a Skip: seat 2 loses its next turn
  undo                       take back this turn's lay and hits
  hand, table                show your hand, or the table and piles, again
  help                       this text
  quit                       leave the game (the referee plays for your seat to the end)
cards: R5 B12 G1 Y7 (red, blue, green, yellow 1-12), W (Wild), S (Skip)"""

_FG = {"R": "red", "B": "blue", "G": "green", "Y": "yellow"}


class HumanError(ValueError):
    """A typed command that cannot be played; the text says why and what to type."""


def parse_card(token: str) -> Card:
    """A card from what a person typed ('r5', 'W', 'b12')."""
    try:
        return Card.parse(token.strip().upper())
    except CardError:
        raise HumanError(f"{token!r} is not a card: write R5, B12, G1, Y7 (colour letter and number), "
                         "W (Wild) or S (Skip)") from None


def _sort_key(c: Card) -> tuple[int, int]:
    if c.is_wild:
        return (5, 0)
    if c.is_skip:
        return (6, 0)
    return ("RBGY".index(c.color or "R"), c.number)


def show_cards(cards: list[Card] | list[str], sort: bool = True) -> str:
    """Cards as coloured text (colours only on a terminal)."""
    cs = [c if isinstance(c, Card) else Card.parse(c) for c in cards]
    if sort:
        cs = sorted(cs, key=_sort_key)
    out = []
    for c in cs:
        if c.is_wild:
            out.append(click.style("W", fg="magenta", bold=True))
        elif c.is_skip:
            out.append(click.style("S", bold=True, reverse=True))
        else:
            out.append(click.style(c.text, fg=_FG[c.color or "R"]))
    return " ".join(out) if out else "(none)"


class Turn:
    """The play part of one turn: the lay and hits staged so far, checked as they are typed."""

    def __init__(self, msg: dict[str, Any]) -> None:
        st = msg["state"]
        self.seat: int = st["seat"]
        self.cards: list[Card] = [Card.parse(c) for c in st["cards"]]
        ph = st["phase"]
        self.phase = Phase.custom(ph["number"], ph["melds"])
        self.was_laid: bool = st["laid"]
        self.raw_table: list[dict[str, Any]] = st["table"]
        self.players: list[dict[str, Any]] = st["players"]
        self.options: dict[str, Any] | None = msg.get("options")
        self.reset()

    def reset(self) -> None:
        """Forget the staged lay and hits."""
        self.hand = list(self.cards)
        self.table = TableModel(self.raw_table)
        self.lay: list[list[Card]] | None = None
        self.hits: list[dict[str, Any]] = []

    @property
    def laid(self) -> bool:
        """Is the phase down (before this turn, or staged in it)?"""
        return self.was_laid or self.lay is not None

    def suggestion(self) -> list[list[Card]] | None:
        """A lay of the phase from the hand, if there is one and nothing is laid yet."""
        if self.laid:
            return None
        offered = (self.options or {}).get("lay")
        if offered:
            return [[Card.parse(c) for c in m] for m in offered]
        return find_lay(self.hand, self.phase)

    def _take(self, cards: list[Card], what: str) -> None:
        need = Counter(cards)
        have = Counter(self.hand)
        short = [f"{c} (you have {have[c]}, {what} uses {k})" for c, k in need.items() if have[c] < k]
        if short:
            raise HumanError(f"not in your hand: {', '.join(short)}. Your hand: {show_cards(self.hand)}")
        for c in cards:
            self.hand.remove(c)

    def do_lay(self, text: str) -> None:
        """`lay R3 B3 W / G7 Y7 R7`, or `lay` for the suggestion."""
        if self.was_laid:
            raise HumanError(f"your phase {self.phase.number} is already on the table this hand (R3.3): "
                             "hit (hit R8 4) or discard (disc R5)")
        if self.lay is not None:
            raise HumanError("you have laid your phase this turn already; type undo to start the turn again")
        if not text.strip():
            found = self.suggestion()
            if not found:
                raise HumanError(f"you cannot lay phase {self.phase.number} ({self.phase.describe()}) from "
                                 f"your hand {show_cards(self.hand)}")
            groups = found
        else:
            parts = [p for p in text.replace("|", "/").replace(",", "/").split("/")]
            groups = [[parse_card(t) for t in p.split()] for p in parts]
            if any(not g for g in groups):
                raise HumanError("an empty meld: separate melds with \"/\", e.g. lay R3 B3 W / G7 Y7 R7")
        try:
            match_lay(groups, self.phase)
        except IllegalMove as e:
            raise HumanError(f"that does not lay phase {self.phase.number} ({self.phase.describe()}): {e}"
                             ". Runs go low to high with each Wild where it stands") from None
        self._take([c for g in groups for c in g], "the lay")
        self.lay = groups

    def do_hit(self, args: list[str]) -> None:
        """`hit CARD MELD [low|high]`."""
        if len(args) not in (2, 3):
            raise HumanError("write hit CARD MELD, e.g. hit R8 4, or hit W 2 low for a Wild on a run")
        card = parse_card(args[0])
        try:
            meld_id = int(args[1])
        except ValueError:
            raise HumanError(f"{args[1]!r} is not a meld number: the table shows each meld as [N]") from None
        end = args[2].lower() if len(args) == 3 else None
        if end is not None and end not in ("low", "high"):
            raise HumanError(f"the end of a run is low or high, not {args[2]!r}")
        if not self.laid:
            raise HumanError(f"you may hit only once your phase {self.phase.number} is on the table (R7.2): "
                             "lay it first")
        index = next((i for i, m in enumerate(self.table.melds) if m.id == meld_id), None)
        if index is None:
            ids = ", ".join(str(m.id) for m in self.table.melds) or "none yet"
            extra = (" Melds you lay this turn cannot be hit in the same turn: lay them longer instead."
                     if self.lay is not None else "")
            raise HumanError(f"there is no meld {meld_id} on the table (melds: {ids}).{extra}")
        if card not in self.hand:
            raise HumanError(f"{card} is not in your hand: {show_cards(self.hand)}")
        try:
            hit = self.table.hit(index, card, end)
        except IllegalMove as e:
            raise HumanError(str(e)) from None
        self.hand.remove(card)
        self.hits.append(hit)

    def targets(self) -> list[int]:
        """Seats a Skip may name (R6.2)."""
        n = len(self.players)
        out = []
        for k in range(1, n):
            p = self.players[(self.seat + k) % n]
            if not p["skip_pending"] and p.get("active", True):
                out.append(p["seat"])
        return out

    def do_discard(self, args: list[str]) -> dict[str, Any]:
        """`disc CARD [SEAT]`: the reply that ends the turn."""
        if not args or len(args) > 2:
            raise HumanError("write disc CARD, e.g. disc R5, or disc S 2 to skip seat 2")
        card = parse_card(args[0])
        if card not in self.hand:
            raise HumanError(f"{card} is not in your hand: {show_cards(self.hand)}")
        skip = None
        if len(args) == 2:
            if not card.is_skip:
                raise HumanError(f"only a Skip names a seat (R6.1); to discard {card} write disc {card}")
            try:
                skip = int(args[1])
            except ValueError:
                raise HumanError(f"{args[1]!r} is not a seat number") from None
        if card.is_skip:
            targets = self.targets()
            if skip is None:
                if len(targets) == 1:
                    skip = targets[0]
                elif targets:
                    raise HumanError(f"name the seat to skip: disc S {targets[0]} (seats {_seats(targets)} may be named)")
            elif skip not in targets:
                why = "yourself" if skip == self.seat else (
                    "no such seat" if not 0 <= skip < len(self.players) else "a seat with a skip pending (R6.2)")
                raise HumanError(f"you cannot skip {why}; seats {_seats(targets) or 'none'} may be named")
        self.hand.remove(card)
        return self.reply(card, skip)

    def reply(self, discard: Card | None = None, skip: int | None = None) -> dict[str, Any]:
        """The play reply (without the id)."""
        out: dict[str, Any] = {}
        if self.lay is not None:
            out["lay"] = [[c.text for c in m] for m in self.lay]
        if self.hits:
            out["hits"] = list(self.hits)
        if discard is not None:
            out["discard"] = discard.text
            if discard.is_skip:
                out["skip"] = skip
        return out


def _seats(seats: list[int]) -> str:
    return ", ".join(map(str, seats))


def _default_input(prompt: str) -> str:
    return input(prompt)


class HumanSeat:
    """A person at the terminal, in the shape of a `BotProcess` (see the module docstring)."""

    def __init__(self, name: str, read: Callable[[str], str] | None = None,
                 echo: Callable[[str], None] | None = None) -> None:
        self.spec = BotSpec(name, ())
        self.name = name
        self.starts = 0
        self.hello: dict[str, Any] = {}
        self.wants_options = True
        self.untimed = True  # a person thinks as long as they like; the bots keep their limit
        self.next_id = 1
        self.stderr_tail = b""
        self.log_path = None
        self._read = read or _default_input
        self._echo = echo or click.echo
        self._running = False
        self._out: list[bytes] = []
        self._request: dict[str, Any] | None = None
        self._names: list[str] = []
        self._last_draw_hand: list[str] | None = None
        self._state: dict[str, Any] | None = None

    # ----- what the referee calls ----------------------------------------------------------

    @property
    def alive(self) -> bool:
        """True while the person is seated."""
        return self._running

    @property
    def pid(self) -> int | None:
        """No process."""
        return None

    def start(self) -> None:
        """Take the seat."""
        if sys.stdin is not None and sys.stdin.isatty():
            try:
                import readline  # noqa: F401 - line editing for input()
            except ImportError:  # pragma: no cover
                pass
        self._running = True
        self.starts += 1
        self.next_id = 1
        self._out.clear()

    def stop(self, grace: float = 0.5) -> int | None:
        """Leave the seat."""
        was = self._running
        self._running = False
        return 0 if was else None

    def exit_code(self) -> int | None:
        """0 once the seat is left."""
        return None if self._running else 0

    def drain_stderr(self) -> None:
        """Nothing to drain."""

    def pause(self, confirm: bool = True) -> None:
        """A person is not stopped between turns."""

    def confirm_stopped(self) -> None:
        """Nothing to wait for."""

    def resume(self, check: bool = False) -> None:
        """Nothing to let run."""

    def close_log(self) -> None:
        """No log."""

    def send(self, data: bytes) -> None:
        """Show a referee message."""
        if not self._running:
            raise BotDied(f"{self.name} has left the game")
        msg = orjson.loads(data)
        kind = msg.get("type")
        if kind == "hello":
            self._out.append(orjson.dumps({"type": "hello", "name": self.name, "version": "human"}))
        elif kind == "game_start":
            self._game_start(msg)
        elif kind == "request":
            self._request = msg
            self._show_request(msg)
        elif kind == "error":
            self._echo(click.style(f"the referee refused your move: {msg.get('reason')}", fg="red"))
        elif kind == "hand_end":
            self._hand_end(msg)
        elif kind == "game_end":
            self._echo(click.style("── the game is over ──", bold=True))

    def read_line(self, deadline: float) -> bytes:
        """The person's reply to the open request (or the hello reply)."""
        if self._out:
            return self._out.pop(0)
        if not self._running:
            raise BotDied(f"{self.name} has left the game")
        msg = self._request
        if msg is None:
            raise BotTimeout("nothing to answer")
        reply = self._ask(msg)
        self._request = None
        reply["id"] = msg["id"]
        return orjson.dumps(reply)

    # ----- showing ----------------------------------------------------------------------------

    def _who(self, seat: int | None, me: int) -> str:
        if seat is None:
            return "nobody"
        if seat == me:
            return "you"
        name = self._names[seat] if seat < len(self._names) else f"seat {seat}"
        return f"{name} (seat {seat})"

    def _game_start(self, msg: dict[str, Any]) -> None:
        self._names = [p["name"] for p in msg.get("players", [])]
        seat = msg.get("seat", 0)
        others = ", ".join(self._who(p["seat"], seat) for p in msg.get("players", []) if p["seat"] != seat)
        phases = [p["number"] for p in msg.get("rules", {}).get("phases", [])]
        self._echo(click.style(f"── a new game: you ({self.name}) are seat {seat}, against {others} ──", bold=True))
        self._echo(f"phases: {', '.join(map(str, phases))} · type help for the commands")

    def _event(self, ev: dict[str, Any], me: int) -> str | None:
        e = ev.get("e")
        who = self._who(ev.get("seat"), me)
        if e == "deal":
            return click.style(f"── hand {ev['hand']} is dealt; the dealer is {self._who(ev['dealer'], me)}; "
                               f"the up-card is {ev['discard_top']}", bold=True)
        if e == "skipped":
            return f"{who} lost a turn (skipped)"
        if e == "draw":
            return f"{who} took {ev['card']} from the discard pile" if ev["from"] == "discard" else f"{who} drew from the deck"
        if e == "lay":
            melds = " / ".join(show_cards(m, sort=False) for m in ev.get("cards", []))
            return f"{who} laid {'your' if ev.get('seat') == me else 'their'} phase: {melds}"
        if e == "hit":
            return f"{who} hit {ev['card']} on meld {ev['meld']}"
        if e == "discard":
            skip = f", skipping {self._who(ev['skip'], me)}" if ev.get("skip") is not None else ""
            return f"{who} discarded {ev['card']}{skip}"
        if e == "reshuffle":
            return f"the discard pile was shuffled into a new draw pile of {ev['draw_size']} cards"
        if e == "out":
            return click.style(f"{who} went out", bold=True)
        return None

    def _show_request(self, msg: dict[str, Any]) -> None:
        st = msg["state"]
        me = st["seat"]
        for ev in msg.get("events", []):
            line = self._event(ev, me)
            if line:
                self._echo("  " + line)
        self._state = st
        if msg["decision"] == "draw":
            self._last_draw_hand = list(st["cards"])
            self._show_table(st)
            self._show_hand(st)
            top = st["discard_top"]
            if st["can_take_discard"]:
                self._echo(f"your turn: draw — d (from the deck) or t (take {top})")
            else:
                why = "a Skip is never taken" if top == "S" else "the discard pile is empty"
                self._echo(f"your turn: draw — d (from the deck; {why})")
        else:
            drawn = Counter(st["cards"]) - Counter(self._last_draw_hand or [])
            if drawn:
                self._echo(f"you drew {show_cards(list(drawn.elements()))}")
            self._show_hand(st)
            turn = Turn(msg)
            hint = turn.suggestion()
            if hint:
                self._echo(click.style("you hold your phase: lay " + " / ".join(show_cards(m, sort=False) for m in hint)
                                       + "   (type lay to lay it)", fg="cyan"))
            if st["laid"] and (msg.get("options") or {}).get("hits"):
                hits = ", ".join(f"{h['card']}→{h['meld']}" for h in msg["options"]["hits"])
                self._echo(click.style(f"hits you could make: {hits}", fg="cyan"))
            self._echo("now lay (lay ...), hit (hit CARD MELD) and discard (disc CARD) to end your turn")

    def _show_table(self, st: dict[str, Any]) -> None:
        me = st["seat"]
        self._echo(click.style(f"── hand {st['hand']} · turn {st['turn']} · you are seat {me} · "
                               f"your phase {st['phase']['number']}: {_describe(st['phase'])}", bold=True))
        for p in st["players"]:
            name = "you" if p["seat"] == me else self._names[p["seat"]] if p["seat"] < len(self._names) else p["name"]
            flags = []
            if p["laid"]:
                flags.append("laid")
            if p["skip_pending"]:
                flags.append("skip pending")
            if not p.get("active", True):
                flags.append("out of the tiebreak")
            self._echo(f"  seat {p['seat']}  {name:<16} phase {p['phase']:<3} {p['cards']:>2} cards "
                       f"{p['score']:>4} points  {', '.join(flags)}")
        if st["table"]:
            self._echo("table:")
            for m in st["table"]:
                owner = "you" if m["owner"] == me else self._names[m["owner"]] if m["owner"] < len(self._names) else m["owner"]
                what = (f"set of {m['number']}s" if m["kind"] == "set" else
                        f"run {m['low']}..{m['high']}" if m["kind"] == "run" else f"{m['color']} colour")
                self._echo(f"  [{m['id']}] {str(owner):<12} {what:<14} {show_cards(m['cards'], sort=False)}")
        else:
            self._echo("table: (empty)")
        top = st["discard_top"]
        self._echo(f"piles: draw {st['draw_size']} cards · discard top {show_cards([top]) if top else '(empty)'}")

    def _show_hand(self, st: dict[str, Any], cards: list[Card] | None = None) -> None:
        hand = cards if cards is not None else [Card.parse(c) for c in st["cards"]]
        self._echo(f"your hand ({len(hand)}): {show_cards(hand)}")

    def _hand_end(self, msg: dict[str, Any]) -> None:
        me = self._state["seat"] if self._state else 0
        if msg.get("stalled"):
            head = f"hand {msg['hand']} is over: stalled at the turn limit"
        else:
            head = f"hand {msg['hand']} is over: {self._who(msg.get('winner'), me)} went out"
        self._echo(click.style(f"── {head}", bold=True))
        for seat, cards in enumerate(msg.get("hands", [])):
            if cards:
                self._echo(f"  {self._who(seat, me)} kept {show_cards(cards)} (+{msg['points'][seat]})")

    # ----- asking ------------------------------------------------------------------------------

    def _input(self, prompt: str) -> str:
        try:
            return self._read(prompt)
        except EOFError:
            self._running = False
            self._echo("")
            raise BotDied(f"{self.name} left the game (end of input)") from None

    def _ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        st = msg["state"]
        decision = msg["decision"]
        turn = Turn(msg) if decision == "play" else None
        while True:
            line = self._input("draw> " if decision == "draw" else "play> ")
            for command in [c.strip() for c in line.split(";") if c.strip()]:
                try:
                    reply = self._command(command, decision, st, turn)
                except HumanError as e:
                    self._echo(click.style(f"  {e}", fg="red"))
                    break
                if reply is not None:
                    return reply
            else:
                if turn is not None and (turn.lay is not None or turn.hits):
                    if not turn.hand:
                        self._echo("you have no cards left: you go out")
                        return turn.reply()
                    self._echo(f"  staged: {_staged(turn)} · left in hand: {show_cards(turn.hand)}"
                               " · disc CARD ends the turn, undo takes it back")

    def _command(self, command: str, decision: str, st: dict[str, Any], turn: Turn | None) -> dict[str, Any] | None:
        words = command.split()
        verb, args = words[0].lower(), words[1:]
        if verb in ("help", "h", "?"):
            self._echo(HELP)
            return None
        if verb in ("hand",):
            self._show_hand(st, turn.hand if turn else None)
            return None
        if verb in ("table", "tb", "look"):
            self._show_table(st)
            return None
        if verb in ("quit", "exit"):
            self._running = False
            raise BotDied(f"{self.name} left the game")
        if decision == "draw":
            if verb in ("d", "deck", "draw"):
                return {"draw": "deck"}
            if verb in ("t", "take", "discard"):
                if not st["can_take_discard"]:
                    why = ("the top discard is a Skip, which can never be taken (R3.2)" if st["discard_top"] == "S"
                           else "the discard pile is empty")
                    raise HumanError(f"you cannot take it: {why}; type d to draw from the deck")
                return {"draw": "discard"}
            if verb in ("lay", "hit", "disc", "x", "undo"):
                raise HumanError("first draw a card: d (from the deck) or t (take the top discard)")
            raise HumanError(f"unknown command {words[0]!r}: draw with d (deck) or t (take the discard); help lists all")
        assert turn is not None
        if verb in ("d", "t", "deck", "take", "draw"):
            raise HumanError("you have drawn already: now lay, hit or discard (disc CARD)")
        if verb == "lay":
            turn.do_lay(command[len(words[0]):])
            return None
        if verb == "hit":
            turn.do_hit(args)
            return None
        if verb in ("disc", "discard", "x"):
            if not turn.hand:
                return turn.reply()
            return turn.do_discard(args)
        if verb == "undo":
            turn.reset()
            self._echo(f"  taken back: your hand is {show_cards(turn.hand)}")
            return None
        raise HumanError(f"unknown command {words[0]!r}: lay ..., hit CARD MELD, disc CARD; help lists all")


def _describe(phase: dict[str, Any]) -> str:
    return Phase.custom(phase["number"], phase["melds"]).describe()


def _staged(turn: Turn) -> str:
    parts = []
    if turn.lay is not None:
        parts.append("lay " + " / ".join(show_cards(m, sort=False) for m in turn.lay))
    for h in turn.hits:
        parts.append(f"hit {h['card']} on {h['meld']}")
    return ", ".join(parts)


__all__ = ["HumanSeat", "HumanError", "Turn", "parse_card", "show_cards", "HELP"]
