"""Print a replay file in a terminal, turn by turn, with coloured cards.

`print_replay(path)` re-simulates the game from its replay file with the engine and
prints each hand: the deal (every player's cards, the up-card), then every move with the
mover's hand after it, the melds on the table when they change, and the scores at the
hand's end; last, the result.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..text import printable
from .site.replays import fault_text, hand_ends, meld_label, replay_frames, rules_summary

__all__ = ["print_replay", "card_text", "CARD_STYLES"]

CARD_STYLES = {
    "R": "bold white on red3",
    "B": "bold white on blue3",
    "G": "bold white on green4",
    "Y": "bold black on gold1",
    "W": "bold white on dark_violet",
    "S": "bold white on grey30",
}
"""The rich style of each card's colour letter (W = Wild, S = Skip)."""

_CARD = re.compile(r"\b((?:[RBGY](?:1[0-2]|[1-9]))|W|S)\b")


def card_text(card: str) -> Text:
    """One card, coloured: ` R5 `."""
    style = CARD_STYLES.get(card[:1], "reverse") if _CARD.fullmatch(card) else "reverse"
    return Text(f" {card} ", style=style)


def _cards(cards: Iterable[Any]) -> Text:
    out = Text()
    for i, c in enumerate(cards):
        if i:
            out.append(" ")
        out.append_text(card_text(str(c)))
    return out if out.plain else Text("(none)", style="dim")


def _rich(text: str) -> Text:
    """Engine text with the cards in it coloured (and a replay file's names in it without
    their control characters)."""
    text = printable(text)
    out = Text()
    pos = 0
    for m in _CARD.finditer(text):
        out.append(text[pos:m.start()])
        out.append_text(card_text(m.group(1)))
        pos = m.end()
    out.append(text[pos:])
    return out


def _name(names: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and 0 <= seat < len(names):
        return names[seat]
    return f"seat {seat}"


def _players_table(frame: Mapping[str, Any], names: Sequence[str]) -> Table:
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
    table.add_column("player")
    table.add_column("phase", justify="right")
    table.add_column("points", justify="right")
    table.add_column("cards")
    players = [p for p in frame.get("players") or [] if isinstance(p, Mapping)]
    hands = frame.get("hands") or []
    for seat in range(max(len(players), len(hands))):
        p = players[seat] if seat < len(players) else {}
        name = Text(_name(names, seat), style="bold")
        if p.get("skip_pending"):
            name.append(" (skip pending)", style="red")
        table.add_row(name, str(p.get("phase", "")), str(p.get("score", "")),
                      _cards(hands[seat] if seat < len(hands) else []))
    return table


def _print_table(console: Console, frame: Mapping[str, Any], before: Sequence[Any], names: Sequence[str]) -> None:
    """The melds laid or hit since `before` (the previous frame's table)."""
    old = {m.get("id"): m.get("cards") for m in before if isinstance(m, Mapping)}
    for m in frame.get("table") or []:
        if not isinstance(m, Mapping) or old.get(m.get("id")) == m.get("cards"):
            continue
        line = Text()
        line.append(f"      table #{m.get('id')} {_name(names, m.get('owner'))}, {meld_label(m)}: ", style="dim")
        line.append_text(_cards(m.get("cards") or []))
        console.print(line)


def _print_hand_end(console: Console, end: Mapping[str, Any], names: Sequence[str]) -> None:
    table = Table(title=f"End of hand {end.get('hand')}", title_justify="left", title_style="bold",
                  show_header=True, header_style="dim")
    table.add_column("player")
    table.add_column("this hand", justify="right")
    table.add_column("total", justify="right")
    table.add_column("laid phase", justify="center")
    scores = end.get("scores") or []
    points = end.get("points") or []
    laid = end.get("laid") or []
    for seat in range(len(scores)):
        table.add_row(
            _name(names, seat),
            "" if seat >= len(points) or points[seat] is None else f"+{points[seat]}",
            str(scores[seat]),
            Text("yes", style="green") if seat < len(laid) and laid[seat] else Text("no", style="dim"),
        )
    console.print(table)


def print_replay(path: Path, console: Console | None = None) -> None:
    """Print the game in the replay file `path` turn by turn, cards in their colours."""
    console = console or Console(highlight=False)
    header, frames, result = replay_frames(Path(path))
    players = header.get("players") or []
    # A replay file may come from anywhere: what it says is printed without its control characters.
    names = [printable(str(p.get("name", f"seat {i}")) if isinstance(p, Mapping) else str(p))
             for i, p in enumerate(players)]
    if not names and frames:
        names = [f"seat {i}" for i in range(len(frames[0].get("hands") or []))]
    rules = header.get("rules") if isinstance(header.get("rules"), Mapping) else {}

    title = Text()
    title.append(printable(f"Game {header.get('game', '?')}"), style="bold")
    title.append(printable(f"  seed {header.get('seed')}"), style="dim")
    summary = printable(rules_summary(rules))
    if summary:
        title.append(f"  {summary}", style="dim")
    console.print(title)
    console.print(Text("Players: " + ", ".join(f"{i} {n}" for i, n in enumerate(names))))
    if not frames:
        console.print(Text("The replay holds no moves.", style="yellow"))
        return

    ends = {e["start"]: e for e in hand_ends(frames, result)}
    ends_by_last = {e["end"]: e for e in ends.values()}
    prev_table: Any = None
    prev_hands: list[Any] = []
    for i, f in enumerate(frames):
        if i in ends:
            console.rule(Text(f"Hand {f.get('hand')}", style="bold"))
            console.print(_players_table(f, names))
            discard = f.get("discard") or []
            line = Text()
            line.append(f"draw pile {f.get('draw_size', '?')} cards · up-card ", style="dim")
            line.append_text(card_text(str(discard[-1])) if discard else Text("none", style="dim"))
            console.print(line)
            prev_table = None
        seat = f.get("seat")
        text = str(f.get("text") or "")
        for fault in f.get("faults") or []:
            console.print(Text(f"{f.get('turn', ''):>5}  " + printable(fault_text(fault, _name(names, fault.get("seat")))),
                               style="bold red"))
        if f.get("fallback"):
            text = f"{text} (played instead, by the referee)"
        if seat is not None or (text and i not in ends):
            line = Text()
            line.append(f"{f.get('turn', ''):>5}  ", style="dim")
            who = _name(names, seat) if seat is not None else ""
            if who and not text.startswith(who):
                line.append(f"{who}: ", style="bold")
            line.append_text(_rich(text))
            console.print(line)
            hands = f.get("hands") or []
            if isinstance(seat, int) and seat < len(hands) and (seat >= len(prev_hands) or hands[seat] != prev_hands[seat]):
                hand_line = Text()
                hand_line.append("      hand: ", style="dim")
                hand_line.append_text(_cards(hands[seat]))
                console.print(hand_line)
        elif text:
            console.print(_rich(text), style="dim")
        table = f.get("table") or []
        if table != prev_table and prev_table is not None:
            _print_table(console, f, prev_table, names)
        prev_table = table
        prev_hands = list(f.get("hands") or [])
        if i in ends_by_last:
            _print_hand_end(console, ends_by_last[i], names)

    if result:
        places = result.get("places") or []
        scores = result.get("scores") or []
        order = sorted(range(len(places)), key=lambda s: (places[s], s))
        line = Text()
        line.append("Result: ", style="bold")
        line.append(", ".join(
            f"{places[s]}. {_name(names, s)}" + (f" ({scores[s]} points)" if s < len(scores) else "") for s in order
        ))
        console.print(line)
