"""What the site shows, read from a results folder in one pass over games.jsonl: the
leaderboard, the configuration, each entrant's games, places and faults, the head-to-head
counts, and the first games with a replay (each game is also handed on, to be written
into the site's data pages)."""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import orjson
import yaml

from ...ledger.journal import journal_lines
from ..files import MAX_META, load_yaml, open_plain, read_json, read_regular

MAX_REASONS = 50
"""Different fault reasons kept per entrant at most (the rest are counted together)."""

PALETTE = (
    "#2f63d8", "#e07b00", "#1f9e61", "#c2389b", "#7d5bd6",
    "#0f9bb5", "#d23c3c", "#8a6d1f", "#4d5b74", "#6aa800",
)
"""Each entrant's colour, in the leaderboard's order (repeating)."""

HeadToHead = dict[str, dict[str, dict[str, int]]]


@dataclass
class Entrant:
    """What the site shows of one entrant, gathered in one pass over games.jsonl (its
    size does not grow with the number of games)."""

    name: str
    color: str
    row: dict[str, Any]
    n_games: int = 0
    places: Counter = field(default_factory=Counter)
    faults: int = 0
    fault_games: int = 0
    fault_kinds: Counter = field(default_factory=Counter)
    reasons: dict[str, list[Any]] = field(default_factory=dict)  # reason → [count, first game id, game name]
    other_reasons: int = 0
    forfeits: int = 0
    wins: int = 0

    def add_fault(self, fault: Mapping[str, Any], game_id: int, game: str) -> None:
        """Count one fault of this entrant in game `game`."""
        self.faults += 1
        self.fault_kinds[str(fault.get("kind", "?"))] += 1
        reason = str(fault.get("reason") or fault.get("kind") or "?")
        reason = reason if len(reason) <= 200 else reason[:199] + "…"
        seen = self.reasons.get(reason)
        if seen is not None:
            seen[0] += 1
            if game_id < seen[1]:
                seen[1:] = [game_id, game]
        elif len(self.reasons) < MAX_REASONS:
            self.reasons[reason] = [1, game_id, game]
        else:
            self.other_reasons += 1


@dataclass
class SiteData:
    """Everything the pages are made from."""

    results_dir: Path
    name: str
    seed: Any
    leaderboard: dict[str, Any]
    config: Any
    config_text: str | None
    head_to_head: HeadToHead
    warnings: list[str]
    marker: dict[str, Any]  # tournament.json, if readable
    entrants: dict[str, Entrant] = field(default_factory=dict)
    n_games: int = 0
    replay_records: list[dict[str, Any]] = field(default_factory=list)  # the first games naming a replay

    def entrant(self, name: str, row: dict[str, Any] | None = None) -> Entrant:
        """The entrant `name`, added (with the next colour) if it is new."""
        e = self.entrants.get(name)
        if e is None:
            color = PALETTE[len(self.entrants) % len(PALETTE)]
            e = self.entrants[name] = Entrant(name=name, color=color, row=row or {"entrant": name})
        return e


def _read_json(path: Path) -> Any:
    """The JSON in a results folder's file `path` (a plain file of a bounded size), None if
    it is missing; ValueError if it is not JSON or not a plain file."""
    try:
        return read_json(path)
    except FileNotFoundError:
        return None


def game_id(g: Mapping[str, Any]) -> int:
    """A game's id (games without one sort last)."""
    return g["id"] if isinstance(g.get("id"), int) else 1 << 60


def game_name(g: Mapping[str, Any]) -> str:
    """A game's name: 'g000042'."""
    name = g.get("game")
    if name is None:
        name = f"g{g.get('id', 0):06d}" if isinstance(g.get("id"), int) else "?"
    return str(name)


class _First:
    """The `n` games with the lowest ids seen so far (games.jsonl is in the order games
    finished, not in game order)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.heap: list[tuple[int, int, dict[str, Any]]] = []  # (-id, -seq, game): the highest id on top
        self.seq = 0

    def add(self, g: dict[str, Any]) -> None:
        if self.n <= 0:
            return
        self.seq += 1
        item = (-game_id(g), -self.seq, g)
        if len(self.heap) < self.n:
            heapq.heappush(self.heap, item)
        elif item > self.heap[0]:
            heapq.heapreplace(self.heap, item)

    def sorted(self) -> list[dict[str, Any]]:
        return [g for _, _, g in sorted(self.heap, key=lambda x: (-x[0], str(game_name(x[2]))))]


def _games(path: Path, warnings: list[str], lines: int | None = None) -> Iterator[dict[str, Any]]:
    """The game records of games.jsonl, one at a time (unreadable lines are counted); of
    its first `lines` lines only, if given (the published ones: a line after them is not
    in the leaderboard, and no head published vouches for it)."""
    if not path.exists():
        return
    bad = 0
    with open_plain(path) as f:
        for line in itertools.islice(journal_lines(f), lines):  # (a torn last line is left out, as verify does)
            if not line.strip():
                continue
            try:
                g = orjson.loads(line)
            except orjson.JSONDecodeError:
                bad += 1
                continue
            if isinstance(g, dict) and isinstance(g.get("seats"), list):
                yield g
            else:
                bad += 1
    if bad:
        warnings.append(f"{bad} unreadable line(s) in games.jsonl were left out.")


def _count_pairs(h2h: HeadToHead, seats: list[str], places: list[Any]) -> None:
    for i, a in enumerate(seats):
        for j, b in enumerate(seats):
            if i == j or a == b or i >= len(places) or j >= len(places):
                continue
            c = h2h.setdefault(a, {}).setdefault(b, {"games": 0, "ahead": 0, "behind": 0, "tied": 0})
            c["games"] += 1
            pa, pb = places[i], places[j]
            c["ahead" if pa < pb else "behind" if pa > pb else "tied"] += 1


def _read_config(results_dir: Path, warnings: list[str]) -> tuple[str | None, Any]:
    """(text, parsed) of config.resolved.yaml; (None, None) if it is missing or unreadable."""
    cfg_path = results_dir / "config.resolved.yaml"
    if not cfg_path.exists():
        return None, None
    try:
        text = read_regular(cfg_path, MAX_META).decode("utf-8")
        return text, load_yaml(text)
    except (ValueError, OSError, RecursionError, yaml.YAMLError) as e:
        warnings.append(f"config.resolved.yaml could not be read: {e}")
        return None, None


def _published_lines(marker: Any) -> int | None:
    """The lines of games.jsonl tournament.json vouches for (None: all)."""
    published = marker.get("games") if isinstance(marker, dict) else None
    return published if isinstance(published, int) and not isinstance(published, bool) else None


def _add_game(data: SiteData, g: dict[str, Any], count_pairs: bool) -> None:
    """Count game `g` into its entrants and the head-to-head counts."""
    seats = [str(s) for s in g.get("seats") or []]
    places = g.get("places") or []
    n_seats, n_places, winner = len(seats), len(places), g.get("winner")
    forfeits = set(g.get("forfeits") or [])
    entrants = data.entrants
    for seat, n in enumerate(seats):
        ent = entrants.get(n) or data.entrant(n)
        ent.n_games += 1
        if seat < n_places:
            place = places[seat]
            if isinstance(place, int) and 1 <= place <= n_seats:
                ent.places[place] += 1
        if winner == seat:
            ent.wins += 1
        if seat in forfeits:
            ent.forfeits += 1
    if count_pairs:
        _count_pairs(data.head_to_head, seats, places)
    faults = g.get("faults")
    if not faults:
        return
    faulted: set[str] = set()
    for fault in faults:
        if not isinstance(fault, dict):
            continue
        fseat = fault.get("seat")
        who = fault.get("entrant")
        if who is None and isinstance(fseat, int) and 0 <= fseat < n_seats:
            who = seats[fseat]
        if who is not None and str(who) in entrants:
            entrants[str(who)].add_fault(fault, game_id(g), game_name(g))
            faulted.add(str(who))
    for who in faulted:
        entrants[who].fault_games += 1


def _read_games(data: SiteData, count_pairs: bool, max_replays: int,
                on_game: Callable[[dict[str, Any]], None] | None) -> None:
    """One pass over the published lines of games.jsonl (each game handed to `on_game` too)."""
    with_replay = _First(max_replays + 50)  # room for replays that cannot be read
    for g in _games(data.results_dir / "games.jsonl", data.warnings, _published_lines(data.marker)):
        data.n_games += 1
        if g.get("replay"):
            with_replay.add({k: g.get(k) for k in ("id", "game", "seats", "places", "faults", "replay")})
        _add_game(data, g, count_pairs)
        if on_game is not None:
            on_game(g)
    data.replay_records = with_replay.sorted()


def load(results_dir: Path, max_replays: int, on_game: Callable[[dict[str, Any]], None] | None = None) -> SiteData:
    """What the site shows of the results in `results_dir` (what cannot be read is left out
    with a warning); each game read is handed to `on_game` as well. FileNotFoundError if it holds neither leaderboard.json nor games.jsonl."""
    warnings: list[str] = []
    lb = _read_json(results_dir / "leaderboard.json")
    if lb is None and not (results_dir / "games.jsonl").exists():
        raise FileNotFoundError(
            f"{results_dir} holds neither leaderboard.json nor games.jsonl: run a tournament into it first"
        )
    if not isinstance(lb, dict):
        lb = {}
        warnings.append("leaderboard.json is missing: ratings are not shown.")
    contained = lb.get("sandbox")
    if isinstance(contained, dict) and contained.get("note"):
        warnings.append(f"Containment: {str(contained['note'])[:1].upper()}{str(contained['note'])[1:]}.")
    config_text, config = _read_config(results_dir, warnings)
    cfg = config if isinstance(config, dict) else {}
    name = lb.get("name") or cfg.get("name") or results_dir.name
    if lb.get("seed_mode"):  # the board says whether the seed is public yet
        seed = "secret" if lb.get("seed") is None else lb["seed"]
    else:
        seed = cfg.get("seed", lb.get("seed"))
    given = lb.get("head_to_head")
    h2h: HeadToHead = given if isinstance(given, dict) and given else {}  # else counted from the games
    try:
        marker = _read_json(results_dir / "tournament.json")
    except (OSError, ValueError):
        marker = None
    data = SiteData(results_dir, str(name), seed, lb, config, config_text, h2h, warnings,
                    marker if isinstance(marker, dict) else {})
    for r in lb.get("entrants") or []:
        if isinstance(r, dict) and r.get("entrant") is not None:
            data.entrant(str(r["entrant"]), r)
    _read_games(data, not h2h, max_replays, on_game)
    return data
