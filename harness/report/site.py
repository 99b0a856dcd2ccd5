"""The results site: a static leaderboard and replay viewer for one tournament.

`build_site(results_dir)` reads what a tournament wrote into `results_dir`
(leaderboard.json, games.jsonl, config.resolved.yaml, replays/*.jsonl) and writes
`results_dir/site/`:

- `index.html`: the leaderboard (sortable, with μ ± 3σ per entrant), the rating history,
  the head-to-head heat map, the place distribution, one card per entrant (games, faults
  and their reasons, links to its replays), every game, and the tournament's settings;
- `replay.html`: the replay viewer, which steps through a game hand by hand and turn by
  turn (buttons, or the arrow keys);
- `replays/<game>.js`: the frames of one replayed game, loaded by the viewer on demand;
- `config.resolved.yaml`: a copy of the configuration, to reproduce the tournament.

Everything is local (no fonts, scripts or images from the network), so the folder works
opened straight from disk (file://) and on any static host.
"""

from __future__ import annotations

import base64
import heapq
import html
import json
import logging
import math
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence
from urllib.parse import quote

import orjson
import yaml

from .leaderboard import MARKS as _MARKS, ORDER_KEY, order_line, promise, stop_line
from .leaderboard import seed_note
from .files import MAX_LINE, MAX_META, load_yaml, open_plain, read_json, read_regular, safe_folder, write_whole

__all__ = ["build_site", "replay_file_html", "MAX_REPLAYS", "MAX_GAME_ROWS"]

log = logging.getLogger(__name__)

MAX_REPLAYS = 50
"""Replays embedded in the viewer at most (the first ones, in game order)."""

MAX_REPLAY_BYTES = 25_000_000
"""Replay data embedded at most, in bytes (the viewer stops taking replays past it)."""

MAX_REPLAY_FILE = 64 << 20
"""Bytes of one replay file at most, as the site and `verify` read it."""

_REPLAY_NAME = re.compile(r"replays/[A-Za-z0-9_.-]+\.jsonl")

MAX_GAME_ROWS = 2000
"""Games listed in the games table at most."""

LEADERBOARD_PAGE = 50
"""Leaderboard rows shown per page at first."""

ASSETS = Path(__file__).with_name("assets")

PALETTE = (
    "#2f63d8", "#e07b00", "#1f9e61", "#c2389b", "#7d5bd6",
    "#0f9bb5", "#d23c3c", "#8a6d1f", "#4d5b74", "#6aa800",
)
FAULT_KINDS = ("timeout", "malformed", "illegal", "crash", "startup")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


# --------------------------------------------------------------------------- helpers

def _esc(value: Any) -> str:
    """Text for HTML content or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _finite(obj: Any) -> Any:
    """`obj` with NaN and infinities replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _json(obj: Any) -> str:
    """Compact JSON that is safe inside a <script> element and in a .js file."""
    text = json.dumps(_finite(obj), ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _fmt(value: Any, digits: int = 2, pct: bool = False) -> str:
    v = _num(value)
    if v is None:
        return "—"
    if pct:
        return f"{v * 100:.{max(digits - 2, 0)}f}%" if digits > 2 else f"{v * 100:.0f}%"
    if digits == 0:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


def _nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks: list[float] = []
    v = start
    while v <= hi + 1e-9 and len(ticks) < 50:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _tick_label(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1 or v == 0 else f"{v:.2g}"


def _lerp_color(stops: Sequence[tuple[int, int, int]], t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0)
    if len(stops) == 1:
        return stops[0]
    pos = t * (len(stops) - 1)
    i = min(int(pos), len(stops) - 2)
    f = pos - i
    a, b = stops[i], stops[i + 1]
    return tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))  # type: ignore[return-value]


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb


def _ink_on(rgb: tuple[int, int, int]) -> str:
    """Black or white text, whichever reads better on `rgb`."""
    r, g, b = rgb
    return "#1d2330" if (0.299 * r + 0.587 * g + 0.114 * b) > 150 else "#ffffff"


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _replay_href(game: str) -> str:
    return "replay.html#game=" + quote(str(game), safe="")


# --------------------------------------------------------------------------- inputs

MAX_REASONS = 50
"""Different fault reasons kept per entrant at most (the rest are counted together)."""


@dataclass
class _Entrant:
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
class _Data:
    results_dir: Path
    name: str
    seed: Any
    leaderboard: dict[str, Any]
    games: list[dict[str, Any]]  # the first MAX_GAME_ROWS games, in game order
    n_games: int
    replay_records: list[dict[str, Any]]  # the first games that name a replay, in game order
    config: Any
    config_text: str | None
    entrants: dict[str, _Entrant]
    head_to_head: dict[str, dict[str, dict[str, int]]]
    warnings: list[str] = field(default_factory=list)
    marker: dict[str, Any] = field(default_factory=dict)  # tournament.json, if readable


def _read_json(path: Path) -> Any:
    """The JSON in a results folder's file `path` (a plain file of a bounded size), None if
    it is missing; ValueError if it is not JSON or not a plain file."""
    try:
        return read_json(path)
    except FileNotFoundError:
        return None


def _game_id(g: Mapping[str, Any]) -> int:
    return g["id"] if isinstance(g.get("id"), int) else 1 << 60


def _game_name(g: Mapping[str, Any]) -> str:
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
        item = (-_game_id(g), -self.seq, g)
        if len(self.heap) < self.n:
            heapq.heappush(self.heap, item)
        elif item > self.heap[0]:
            heapq.heapreplace(self.heap, item)

    def sorted(self) -> list[dict[str, Any]]:
        return [g for _, _, g in sorted(self.heap, key=lambda x: (-x[0], str(_game_name(x[2]))))]


def _games(path: Path, warnings: list[str], lines: int | None = None) -> Iterator[dict[str, Any]]:
    """The game records of games.jsonl, one at a time (unreadable lines are counted); of
    its first `lines` lines only, if given (the published ones: a line after them is not
    in the leaderboard, and no head published vouches for it)."""
    if not path.exists():
        return
    bad = 0
    read = 0
    with open_plain(path) as f:
        while lines is None or read < lines:
            line = f.readline(MAX_LINE + 1)
            if not line.endswith(b"\n"):
                break  # a torn last line, as `verify` and the leaderboard leave it out
            read += 1
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


def _count_pairs(h2h: dict[str, dict[str, dict[str, int]]], seats: list[str], places: list[Any]) -> None:
    for i, a in enumerate(seats):
        for j, b in enumerate(seats):
            if i == j or a == b or i >= len(places) or j >= len(places):
                continue
            c = h2h.setdefault(a, {}).setdefault(b, {"games": 0, "ahead": 0, "behind": 0, "tied": 0})
            c["games"] += 1
            pa, pb = places[i], places[j]
            c["ahead" if pa < pb else "behind" if pa > pb else "tied"] += 1


def _load(results_dir: Path, max_replays: int = MAX_REPLAYS) -> _Data:
    warnings: list[str] = []
    lb = _read_json(results_dir / "leaderboard.json")
    games_path = results_dir / "games.jsonl"
    if lb is None and not games_path.exists():
        raise FileNotFoundError(
            f"{results_dir} holds neither leaderboard.json nor games.jsonl: run a tournament into it first"
        )
    if not isinstance(lb, dict):
        lb = {}
        warnings.append("leaderboard.json is missing: ratings are not shown.")
    contained = lb.get("sandbox")
    if isinstance(contained, dict) and contained.get("note"):
        warnings.append(f"Containment: {str(contained['note'])[:1].upper()}{str(contained['note'])[1:]}.")

    config_text: str | None = None
    config: Any = None
    cfg_path = results_dir / "config.resolved.yaml"
    if cfg_path.exists():
        try:
            config_text = read_regular(cfg_path, MAX_META).decode("utf-8")
            config = load_yaml(config_text)
        except (ValueError, OSError, RecursionError, yaml.YAMLError) as e:
            config_text = None
            warnings.append(f"config.resolved.yaml could not be read: {e}")
    cfg = config if isinstance(config, dict) else {}

    name = lb.get("name") or cfg.get("name") or results_dir.name
    if lb.get("seed_mode"):  # the board says whether the seed is public yet
        seed = "secret" if lb.get("seed") is None else lb["seed"]
    else:
        seed = cfg.get("seed", lb.get("seed"))

    rows = [r for r in lb.get("entrants") or [] if isinstance(r, dict) and r.get("entrant") is not None]
    entrants: dict[str, _Entrant] = {}

    def entrant(n: str, row: dict[str, Any] | None = None) -> _Entrant:
        e = entrants.get(n)
        if e is None:
            e = entrants[n] = _Entrant(name=n, color=PALETTE[len(entrants) % len(PALETTE)], row=row or {"entrant": n})
        return e

    for r in rows:
        entrant(str(r["entrant"]), r)
    given = lb.get("head_to_head")
    count_pairs = not (isinstance(given, dict) and given)
    h2h: dict[str, dict[str, dict[str, int]]] = given if isinstance(given, dict) and given else {}
    first = _First(MAX_GAME_ROWS)
    with_replay = _First(max_replays + 50)  # room for replays that cannot be read
    n_games = 0
    try:
        marker = _read_json(results_dir / "tournament.json")
    except (OSError, ValueError):
        marker = None
    published = marker.get("games") if isinstance(marker, dict) else None
    published = published if isinstance(published, int) and not isinstance(published, bool) else None
    for g in _games(games_path, warnings, published):
        n_games += 1
        first.add(g)
        if g.get("replay"):
            with_replay.add({k: g.get(k) for k in ("id", "game", "seats", "places", "faults", "replay")})
        seats = [str(s) for s in g.get("seats") or []]
        places = g.get("places") or []
        forfeits = set(g.get("forfeits") or [])
        for seat, n in enumerate(seats):
            ent = entrant(n)
            ent.n_games += 1
            if seat < len(places) and isinstance(places[seat], int) and 1 <= places[seat] <= len(seats):
                ent.places[places[seat]] += 1
            if g.get("winner") == seat:
                ent.wins += 1
            if seat in forfeits:
                ent.forfeits += 1
        if count_pairs:
            _count_pairs(h2h, seats, places)
        faulted: set[str] = set()
        for fault in g.get("faults") or []:
            if not isinstance(fault, dict):
                continue
            fseat = fault.get("seat")
            who = fault.get("entrant")
            if who is None and isinstance(fseat, int) and 0 <= fseat < len(seats):
                who = seats[fseat]
            if who is not None and str(who) in entrants:
                entrants[str(who)].add_fault(fault, _game_id(g), _game_name(g))
                faulted.add(str(who))
        for who in faulted:
            entrants[who].fault_games += 1
    return _Data(results_dir, str(name), seed, lb, first.sorted(), n_games, with_replay.sorted(), config, config_text,
                 entrants, h2h, warnings, marker if isinstance(marker, dict) else {})


# --------------------------------------------------------------------------- replays

@dataclass
class _Replay:
    game: str
    path: Path
    record: dict[str, Any] | None


def _collect_replays(data: _Data) -> list[_Replay]:
    """The replay files games.jsonl names, in game order (a file in replays/ that no record
    names is not shown: `verify` vouches for none such)."""
    found: list[_Replay] = []
    seen: set[str] = set()
    if (data.results_dir / "replays").is_symlink():  # another folder's replays (deal seeds and all)
        data.warnings.append("No replay is shown: replays/ is a link (a results folder's replays are its own files).")
        return found
    for g in data.replay_records:
        rel = g.get("replay")
        if not rel:
            continue
        if not _REPLAY_NAME.fullmatch(str(rel)):
            data.warnings.append(f"The replay of {_game_name(g)} is not shown: {str(rel)[:80]!r} is no file of replays/.")
            continue
        path = data.results_dir / str(rel)  # not resolved: a link is refused when it is read
        if str(rel) in seen:
            continue
        if path.is_file() or path.is_symlink():
            seen.add(str(rel))
            found.append(_Replay(_game_name(g), path, g))
        else:
            data.warnings.append(f"The replay of {_game_name(g)} ({rel}) is missing.")
    return found


def read_replay(path: Path, data: bytes | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, action lines, result line or None) of a replay file (JSON lines), or of
    `data`, its bytes already read (named `path` in errors)."""
    header: dict[str, Any] | None = None
    actions: list[dict[str, Any]] = []
    result: dict[str, Any] | None = None
    # Lines end at \n only: a replay written before bot lines were escaped may hold a raw
    # \r (JSON whitespace), which universal newlines would take for the end of a line.
    if data is None:
        data = Path(path).read_bytes()
    for n, line in enumerate(data.decode("utf-8").split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        try:
            item = json.loads(line)
        except ValueError as e:
            raise ValueError(f"{path}: line {n} is not JSON ({e})") from None
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "header" and header is None:
            header = item
        elif kind == "action":
            actions.append(item)
        elif kind == "result":
            result = item
    if header is None:
        raise ValueError(f"{path}: no header line (is this a p10 replay file?)")
    return header, actions, result


def replay_frames(path: Path, data: bytes | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, frames, result) of a replay file (or of `data`, its bytes already read),
    frames made by the engine."""
    from harness.engine.replay import frames as make_frames  # the engine re-simulates the game

    header, actions, result = read_replay(path, data)
    return header, list(make_frames(header, actions)), result


def _cards(cards: Iterable[Any] | None) -> str:
    return " ".join(str(c) for c in cards or [])


def _meld_label(m: Mapping[str, Any]) -> str:
    kind = m.get("kind")
    cards = [str(c) for c in m.get("cards") or []]
    if kind == "set":
        num = m.get("number")
        return f"set of {num}s" if num is not None else "set"
    if kind == "run":
        low, high = m.get("low"), m.get("high")
        if low is None or high is None:
            nums = [int(c[1:]) for c in cards if len(c) > 1 and c[1:].isdigit()]
            if nums:
                low, high = min(nums), max(nums)
        return f"run {low}–{high}" if low is not None else "run"
    if kind in ("color", "colour"):
        col = m.get("color") or m.get("colour")
        return f"{col} colour" if col else "colour"
    return str(kind or "meld")


def _player_row(p: Mapping[str, Any]) -> list[Any]:
    return [p.get("phase"), bool(p.get("laid")), p.get("cards"), p.get("score"), bool(p.get("skip_pending"))]


def _compact_frames(frames: Sequence[Mapping[str, Any]], keep_discard: int = 12) -> list[dict[str, Any]]:
    """Frames with what did not change since the previous frame left out.

    Keys: h hand, t turn, s seat, x text; and only when changed: H hands (one string per
    seat, null = unchanged), P players ([phase, laid, cards, score, skip] per seat, null =
    unchanged), d draw size, D [discard size, top cards], T table melds [id, owner, label,
    cards].
    """
    out: list[dict[str, Any]] = []
    prev_hands: list[str] | None = None
    prev_players: list[list[Any]] | None = None
    prev: dict[str, Any] = {}
    for f in frames:
        c: dict[str, Any] = {"h": f.get("hand"), "t": f.get("turn"), "s": f.get("seat"), "x": str(f.get("text") or "")}
        hands = [_cards(h) for h in f.get("hands") or []]
        if prev_hands is None or len(hands) != len(prev_hands):
            c["H"] = hands
        elif hands != prev_hands:
            c["H"] = [h if h != p else None for h, p in zip(hands, prev_hands)]
        prev_hands = hands
        players = [_player_row(p) for p in f.get("players") or [] if isinstance(p, Mapping)]
        if prev_players is None or len(players) != len(prev_players):
            c["P"] = players
        elif players != prev_players:
            c["P"] = [p if p != q else None for p, q in zip(players, prev_players)]
        prev_players = players
        discard = [str(x) for x in f.get("discard") or []]
        values = {
            "d": f.get("draw_size"),
            "D": [len(discard), " ".join(discard[-keep_discard:])],
            "T": [
                [m.get("id"), m.get("owner"), _meld_label(m), _cards(m.get("cards"))]
                for m in f.get("table") or [] if isinstance(m, Mapping)
            ],
        }
        for key, val in values.items():
            if key not in prev or prev[key] != val:
                c[key] = val
            prev[key] = val
        out.append(c)
    return out


def _hand_ends(frames: Sequence[Mapping[str, Any]], result: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Scores and phases at the end of each hand."""
    first: dict[Any, int] = {}
    last: dict[Any, int] = {}
    order: list[Any] = []
    for i, f in enumerate(frames):
        h = f.get("hand")
        if h not in first:
            first[h] = i
            order.append(h)
        last[h] = i
    ends: list[dict[str, Any]] = []
    before: list[Any] | None = None
    for k, h in enumerate(order):
        end_info = next(
            (frames[i]["hand_end"] for i in range(first[h], last[h] + 1)
             if isinstance(frames[i].get("hand_end"), Mapping)),
            None,
        )
        after = frames[first[order[k + 1]]] if k + 1 < len(order) else frames[last[h]]
        players = [p for p in after.get("players") or [] if isinstance(p, Mapping)]
        scores = [p.get("score") for p in players]
        phases = [p.get("phase") for p in players]
        if k + 1 == len(order) and result and isinstance(result.get("scores"), list):
            scores = list(result["scores"])
        laid = [bool(p.get("laid")) for p in frames[last[h]].get("players") or [] if isinstance(p, Mapping)]
        if end_info is not None:  # the engine's own account of the hand's end
            if isinstance(end_info.get("scores"), list):
                scores = list(end_info["scores"])
            if isinstance(end_info.get("phases"), list):
                phases = list(end_info["phases"])
            if isinstance(end_info.get("completed"), list):
                laid = [s in end_info["completed"] for s in range(len(scores))]
        base = before or [0] * len(scores)
        points = [
            (s - b) if isinstance(s, (int, float)) and isinstance(b, (int, float)) else None
            for s, b in zip(scores, base)
        ]
        if end_info is not None and isinstance(end_info.get("points"), list):
            points = list(end_info["points"])
        ends.append({"hand": h, "start": first[h], "end": last[h], "scores": scores,
                     "points": points, "phases": phases, "laid": laid,
                     "stalled": bool(end_info.get("stalled")) if end_info else False,
                     "winner": end_info.get("winner") if end_info else None})
        before = scores
    return ends


def _replay_payload(rep: _Replay) -> dict[str, Any]:
    header, frames, result = replay_frames(rep.path, read_regular(rep.path, MAX_REPLAY_FILE))
    if not frames:
        raise ValueError("the replay holds no frames")
    players = header.get("players") or []
    names = [str(p.get("name", f"seat {i}")) if isinstance(p, Mapping) else str(p) for i, p in enumerate(players)]
    if not names and rep.record:
        names = [str(s) for s in rep.record.get("seats") or []]
    rules = header.get("rules") if isinstance(header.get("rules"), Mapping) else {}
    return {
        "game": rep.game,
        "seed": None if header.get("seed") is None else str(header.get("seed")),  # 64-bit: keep exact
        "players": names,
        "rules": _rules_summary(rules),
        "result": {k: result.get(k) for k in ("places", "scores", "phases_completed", "winner")} if result else None,
        "faults": [
            {"seat": f.get("seat"), "kind": f.get("kind"), "reason": str(f.get("reason", ""))[:300]}
            for f in (rep.record or {}).get("faults") or [] if isinstance(f, Mapping)
        ],
        "hand_ends": _hand_ends(frames, result),
        "frames": _compact_frames(frames),
    }


def _rules_summary(rules: Mapping[str, Any] | None) -> str:
    if not rules:
        return ""
    parts = [str(rules.get("variant", "standard"))]
    phases = rules.get("phases")
    if isinstance(phases, list):
        nums = [p.get("number", "?") if isinstance(p, Mapping) else p for p in phases]
        parts.append("phases " + _ranges(nums))
    if rules.get("first_to"):
        parts.append(f"first to {rules['first_to']} phases")
    return " · ".join(parts)


def _ranges(nums: Sequence[Any]) -> str:
    """1, 2, 3, 4, 7 → "1–4, 7"."""
    out: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while (j + 1 < len(nums) and isinstance(nums[j], int) and isinstance(nums[j + 1], int)
               and nums[j + 1] == nums[j] + 1):
            j += 1
        out.append(f"{nums[i]}–{nums[j]}" if j - i >= 2 else ", ".join(str(n) for n in nums[i:j + 1]))
        i = j + 1
    return ", ".join(out)


def _write_replays(data: _Data, site: Path, max_replays: int) -> list[dict[str, Any]]:
    """Write site/replays/<game>.js for the first `max_replays` replays; the viewer's index."""
    out_dir = site / "replays"
    if out_dir.is_symlink():
        out_dir.unlink()  # the link, never what it leads to
    elif out_dir.exists():
        shutil.rmtree(out_dir)
    found = _collect_replays(data)
    if not found:
        return []
    try:
        import harness.engine.replay  # noqa: F401
    except ImportError as e:
        data.warnings.append(f"Replays are not shown: the engine's replay module could not be loaded ({e}).")
        return []
    out_dir.mkdir(parents=True)
    index: list[dict[str, Any]] = []
    used: set[str] = set()
    failed = 0
    written = 0
    for rep in found:
        if len(index) >= max_replays or written >= MAX_REPLAY_BYTES:
            break
        try:
            payload = _replay_payload(rep)
        except Exception as e:  # a bad replay must not stop the site
            failed += 1
            log.warning("replay %s skipped: %s", rep.path, e)
            data.warnings.append(f"The replay of {rep.game} could not be read: {type(e).__name__}: {e}")
            continue
        stem = _SAFE_NAME.sub("_", rep.game)[:80] or "game"
        fname, n = stem, 1
        while fname.lower() in used:
            n += 1
            fname = f"{stem}-{n}"
        used.add(fname.lower())
        script = (
            "window.P10_REPLAYS=window.P10_REPLAYS||{};\n"
            f"window.P10_REPLAYS[{_json(rep.game)}]={_json(payload)};\n"
        )
        write_whole(out_dir / f"{fname}.js", script)
        written += len(script)
        rec = rep.record or {}
        index.append({
            "game": rep.game,
            "file": f"replays/{fname}.js",
            "players": payload["players"],
            "places": (payload["result"] or {}).get("places") or rec.get("places"),
            "faults": [f.get("kind") for f in rec.get("faults") or [] if isinstance(f, Mapping)],
            "hands": len(payload["hand_ends"]),
        })
    not_embedded = len(found) - len(index) - failed
    if not_embedded > 0:
        data.warnings.append(
            f"{len(index)} replays are in the viewer; {not_embedded} more in {data.results_dir.name}/replays/ "
            f"are not (the viewer holds at most {max_replays}, and {MAX_REPLAY_BYTES // 1_000_000} MB). "
            "Print any replay in a terminal with: p10-tourney replay FILE"
        )
    return index


# --------------------------------------------------------------------------- page parts

_CURRENT = ' class="current"'


def _page(title: str, current: str, data: _Data, body: str, script: str) -> str:
    nav = [("index.html", "Leaderboard"), ("index.html#history", "Ratings"), ("index.html#h2h", "Head to head"),
           ("index.html#entrants", "Entrants"), ("index.html#games", "Games"), ("index.html#settings", "Settings"),
           ("replay.html", "Replays")]
    links = "".join(
        f'<a href="{href}"{_CURRENT if label == current else ""}>{label}</a>' for href, label in nav
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{_esc(title)}</title>
<script>{_asset("errors.js")}</script>
<style>{_asset("site.css")}</style>
</head>
<body>
<header class="topbar">
<div class="brand">Phase 10 tournament<small>{_esc(data.name)}</small></div>
<nav>{links}</nav>
</header>
<main>
{body}
</main>
<footer>Made by p10-tourney. This site is a folder of static files: it works offline and on any static host.</footer>
<div id="js-errors" class="hidden" data-count="0"></div>
<script>{script}</script>
</body>
</html>
"""


def _notices(data: _Data) -> str:
    notes = list(data.warnings)
    trusted = data.leaderboard.get("trusted")
    if trusted:
        notes.append(f"Trusted: {', '.join(map(str, trusted))}. Their processes were kept across the seat "
                     "rotations of a deal, so they could remember the hands of an earlier rotation.")
    return "".join(f'<div class="notice">{_esc(w)}</div>' for w in notes)


def _summary(data: _Data, n_replays: int) -> str:
    faults = sum(e.faults for e in data.entrants.values())
    stats = [
        (data.n_games or data.leaderboard.get("games", 0), "games"),
        (len(data.entrants), "entrants"),
        (faults, "faults"),
        (n_replays, "replays"),
        (data.seed if data.seed is not None else "—", "seed"),
    ]
    items = "".join(f'<div class="stat"><b>{_esc(v)}</b><span>{_esc(k)}</span></div>' for v, k in stats)
    note = seed_note(data.leaderboard)
    more = f'<p class="small muted" id="seed-note">{_esc(note)}</p>' if note else ""
    return f'<div class="summary" id="summary">{items}</div>{more}'


def _whisker_domain(entrants: Iterable[_Entrant]) -> tuple[float, float] | None:
    lows, highs = [], []
    for e in entrants:
        mu, sigma = _num(e.row.get("mu")), _num(e.row.get("sigma"))
        if mu is None:
            continue
        s = sigma or 0.0
        lows.append(mu - 3 * s)
        highs.append(mu + 3 * s)
    if not lows:
        return None
    lo, hi = min(lows), max(highs)
    pad = max((hi - lo) * 0.04, 0.5)
    return lo - pad, hi + pad


_WH_W, _WH_H, _WH_PAD = 190, 24, 8


def _wx(v: float, dom: tuple[float, float]) -> float:
    lo, hi = dom
    return _WH_PAD + (v - lo) / (hi - lo) * (_WH_W - 2 * _WH_PAD)


def _whisker_axis(dom: tuple[float, float]) -> str:
    ticks = _nice_ticks(dom[0], dom[1], 4)
    parts = [f'<svg class="axis-svg" width="{_WH_W}" height="16" viewBox="0 0 {_WH_W} 16" aria-hidden="true">']
    for t in ticks:
        x = _wx(t, dom)
        if _WH_PAD - 1 <= x <= _WH_W - _WH_PAD + 1:
            parts.append(f'<text x="{x:.1f}" y="12" text-anchor="middle" font-size="10" fill="#5d6678">{_tick_label(t)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _whisker(e: _Entrant, dom: tuple[float, float]) -> str:
    mu, sigma = _num(e.row.get("mu")), _num(e.row.get("sigma")) or 0.0
    if mu is None:
        return '<span class="muted">—</span>'
    lo, hi = mu - 3 * sigma, mu + 3 * sigma
    x0, x1, xm = _wx(lo, dom), _wx(hi, dom), _wx(mu, dom)
    y = _WH_H / 2
    grid = "".join(
        f'<line x1="{_wx(t, dom):.1f}" x2="{_wx(t, dom):.1f}" y1="2" y2="{_WH_H - 2}" stroke="#eceff4"/>'
        for t in _nice_ticks(dom[0], dom[1], 4)
    )
    title = f"{e.name}: μ {mu:.2f} ± {3 * sigma:.2f} (3σ) → {lo:.2f} … {hi:.2f}"
    return (
        f'<svg class="whisker" width="{_WH_W}" height="{_WH_H}" viewBox="0 0 {_WH_W} {_WH_H}" role="img" '
        f'aria-label="{_esc(title)}"><title>{_esc(title)}</title>{grid}'
        f'<rect x="{x0:.1f}" y="{y - 4:.1f}" width="{max(x1 - x0, 1):.1f}" height="8" rx="4" fill="{e.color}" opacity=".22"/>'
        f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y}" y2="{y}" stroke="{e.color}" stroke-width="2"/>'
        f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{y - 6}" y2="{y + 6}" stroke="{e.color}" stroke-width="2"/>'
        f'<line x1="{x1:.1f}" x2="{x1:.1f}" y1="{y - 6}" y2="{y + 6}" stroke="{e.color}" stroke-width="2"/>'
        f'<circle cx="{xm:.1f}" cy="{y}" r="4.5" fill="{e.color}" stroke="#fff" stroke-width="1.5"/></svg>'
    )


def _leaderboard_section(data: _Data) -> str:
    ents = list(data.entrants.values())
    dom = _whisker_domain(ents)
    cols: list[tuple[str, str, str]] = [  # (label, type, css class)
        ("#", "num", "num"), ("Entrant", "text", ""), ("μ", "num", "num"), ("σ", "num", "num"),
        ("μ − 3σ", "num", "num"), ("μ ± 3σ", "num", ""), ("Games", "num", "num"), ("Wins", "num", "num"),
        ("Win rate", "num", "num"), ("Place", "num", "num"), ("Points", "num", "num"),
        ("Phases", "num", "num"), ("Faults", "num", "num"),
    ]
    has_pl = any(e.row.get("pl_strength") is not None for e in ents)
    if has_pl:
        cols[6:6] = [("PL [95 %]", "num", "num"), ("Next", "text", "")]
    titles = {
        "PL [95 %]": "Batch Plackett–Luce strength of all games at once (the leaderboard's order), with its 95 % "
                     "bootstrap interval over deals",
        "Next": "Against the next row on the deals both played — ✓: settled (a two-sided test rejects "
                "'equally strong', Holm-corrected over every pair); ≈: not settled (open, or no evidence of a "
                "difference); ·: too few informative deals to tell",
        "μ": "TrueSkill mean (the other rating, shown beside PL)", "σ": "TrueSkill uncertainty",
        "μ − 3σ": "TrueSkill's conservative rating (μ − 3σ)",
        "μ ± 3σ": "Where the true skill very likely lies", "Place": "Mean place per game; lower is better",
        "Points": "Mean penalty points per game; lower is better", "Phases": "Mean phases completed per game",
        "Faults": "Timeouts, malformed or illegal replies, crashes", "Wins": "Games won",
    }
    ascending_first = {"#", "Entrant", "Place", "Points", "Faults"}
    head = []
    for label, typ, cls in cols:
        extra = _whisker_axis(dom) if label == "μ ± 3σ" and dom else ""
        attrs = f' data-type="{typ}" class="{cls}"'
        if label in titles:
            attrs += f' title="{_esc(titles[label])}"'
        attrs += f' data-first="{"ascending" if label in ascending_first else "descending"}"'
        head.append(f'<th{attrs}><span class="lbl">{_esc(label)}</span>{extra}</th>')
    body: list[str] = []
    for i, e in enumerate(ents):
        r = e.row
        n_games = r.get("games", e.n_games)
        wins = r.get("wins", e.wins)
        faults = r.get("faults", e.faults)
        rank = r.get("rank", i + 1)
        cons = r.get("conservative")
        if cons is None and _num(r.get("mu")) is not None:
            cons = _num(r.get("mu")) - 3 * (_num(r.get("sigma")) or 0.0)  # type: ignore[operator]
        cells = [
            (rank, _esc(rank), "num rank"),
            (e.name, f'<span class="swatch" style="background:{e.color}"></span> '
                     f'<a class="entrant" href="#entrant-{len(body)}">{_esc(e.name)}</a>'
                     + (' <span class="hint retired">(retired)</span>' if r.get("retired") else "")
                     + (f' <span class="hint bad" title="{_esc(r["disqualified"])}">(disqualified)</span>'
                        if r.get("disqualified") else ""), "name-cell"),
            (r.get("mu"), _fmt(r.get("mu")), "num"),
            (r.get("sigma"), _fmt(r.get("sigma")), "num"),
            (cons, f"<b>{_fmt(cons)}</b>", "num"),
            (r.get("mu"), _whisker(e, dom) if dom else "—", ""),
        ]
        if has_pl:
            pl, lo, hi = r.get("pl_strength"), r.get("ci_low"), r.get("ci_high")
            band = f' <span class="hint">[{_fmt(lo)}, {_fmt(hi)}]</span>' if lo is not None and hi is not None else ""
            settled = r.get("settled_above")
            cells += [
                (pl, f'<span style="white-space:nowrap">{_fmt(pl)}{band}</span>', "num"),
                ("" if settled is None else (r.get("next") or ("settled" if settled else "open")),
                 "" if settled is None else _esc(_MARKS.get(r.get("next") or "", "✓" if settled else "≈")), ""),
            ]
        cells += [
            (n_games, _fmt(n_games, 0), "num"),
            (wins, _fmt(wins, 0), "num"),
            (r.get("win_rate"), _fmt(r.get("win_rate"), 3, pct=True), "num"),
            (r.get("mean_place"), _fmt(r.get("mean_place")), "num"),
            (r.get("mean_score"), _fmt(r.get("mean_score"), 1), "num"),
            (r.get("mean_phases"), _fmt(r.get("mean_phases")), "num"),
            (faults, f'<span class="{"bad" if (_num(faults) or 0) > 0 else ""}">{_fmt(faults, 0)}</span>', "num"),
        ]
        tds = "".join(
            f'<td class="{cls}" data-v="{_esc(v if _num(v) is not None else (str(v) if v is not None else ""))}">{content}</td>'
            for v, content, cls in cells
        )
        body.append(f'<tr data-entrant="{_esc(e.name)}">{tds}</tr>')
    games_n = data.leaderboard.get("games", data.n_games)
    ranked = ("ranked by PL, the Plackett–Luce strength of all games at once; TrueSkill μ, σ, μ − 3σ beside it"
              if has_pl else "ranked by the conservative rating μ − 3σ")
    notes = ""
    if has_pl and data.leaderboard.get("statistics"):
        line = order_line(data.leaderboard)
        stop = stop_line(data.leaderboard)
        notes = (f'\n<p class="hint" id="order-line">Order: {_esc(line)} {_esc(ORDER_KEY)}</p>' if line else "")
        notes += f'\n<p class="hint" id="promise">{_esc(promise(data.leaderboard))}</p>'
        if stop:
            notes += f'\n<p class="hint" id="stopping">{_esc(stop)}</p>'
    return f"""<section class="panel" id="leaderboard">
<h2>Leaderboard<span class="hint">{_esc(ranked)} after {_esc(games_n)} games · place, points and phases are means per game · click a column to sort</span></h2>
<div class="filters">
<label>Find <input type="search" id="lb-search" placeholder="entrant name" autocomplete="off"></label>
<span class="pager" id="lb-pager"><button type="button" id="lb-prev">‹ Prev</button> <span id="lb-page"></span> <button type="button" id="lb-next">Next ›</button></span>
<label>Rows <select id="lb-size"><option>25</option><option selected>{LEADERBOARD_PAGE}</option><option>100</option><option value="0">all</option></select></label>
<span class="muted small" id="lb-count">{len(ents)} entrants</span>
</div>
<div class="table-wrap"><table class="sortable" id="leaderboard-table">
<thead><tr>{"".join(head)}</tr></thead>
<tbody>{"".join(body)}</tbody>
</table></div>{notes}
</section>"""


LINE_COLORS = (
    "#2f63d8", "#e07b00", "#1f9e61", "#c2389b", "#7d5bd6", "#0f9bb5", "#d23c3c", "#8a6d1f",
    "#4d5b74", "#6aa800", "#f2a7c3", "#00429d", "#ffb000", "#7a0403", "#53d3c2", "#a06cff",
    "#ff6f4f", "#2b2b2b", "#9ab973", "#b07aa1",
)
"""Colours of the rating history's lines, one per line shown (at most MAX_LINES)."""

CHART_TOP = 10
"""The rating history shows the top CHART_TOP entrants (by rank) until others are chosen."""

MAX_LINES = len(LINE_COLORS)
"""Lines in the rating history at most."""

SITE_HISTORY_POINTS = 60
"""Points per entrant of the rating history embedded in the site at most."""

PLACES_ROWS = 30
"""Entrants in the places chart at most (the first ones by rank)."""

TABLE_H2H_MAX = 12
"""Up to this many entrants, the head-to-head counts are also shown as a table of cells."""


def _history_points(item_list: Any) -> list[tuple[int, float]]:
    """(games played, μ) of one entrant's history in leaderboard.json, thinned to at most
    SITE_HISTORY_POINTS evenly spaced points (the first and the last kept)."""
    pts: list[tuple[int, float]] = []
    for i, item in enumerate(item_list or []):
        if isinstance(item, (list, tuple)) and len(item) >= 2 and _num(item[1]) is not None:
            n = item[2] if len(item) >= 3 and isinstance(item[2], int) else i + 1
            pts.append((n, float(item[1])))
    if len(pts) > SITE_HISTORY_POINTS:
        last = len(pts) - 1
        pts = [pts[round(k * last / (SITE_HISTORY_POINTS - 1))] for k in range(SITE_HISTORY_POINTS)]
    return pts


_CW, _CH, _CML, _CMR, _CMT, _CMB = 1000, 320, 46, 18, 14, 36  # the chart's size and margins


def _history_svg(series: list[tuple[str, str, list[tuple[int, float]]]]) -> str:
    """The rating chart of `series` (name, colour, points); index.js draws the same."""
    W, H, ml, mr, mt, mb = _CW, _CH, _CML, _CMR, _CMT, _CMB
    max_x = max(p[-1][0] for _, _, p in series)
    ys = [y for _, _, p in series for _, y in p]
    y_lo, y_hi = min(ys), max(ys)
    if y_hi - y_lo < 1:
        y_lo, y_hi = y_lo - 1, y_hi + 1
    pad = (y_hi - y_lo) * 0.06
    y_lo, y_hi = y_lo - pad, y_hi + pad
    x_lo = 1 if max_x > 1 else 0
    x_hi = max(max_x, x_lo + 1)

    def sx(x: float) -> float:
        return ml + (x - x_lo) / (x_hi - x_lo) * (W - ml - mr)

    def sy(y: float) -> float:
        return mt + (y_hi - y) / (y_hi - y_lo) * (H - mt - mb)

    parts = []
    for t in _nice_ticks(y_lo, y_hi, 5):
        y = sy(t)
        parts.append(f'<line class="grid" x1="{ml}" x2="{W - mr}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end">{_tick_label(t)}</text>')
    for t in _nice_ticks(x_lo, x_hi, 8):
        if t != int(t):
            continue
        x = sx(t)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{mt}" y2="{H - mb}"/>'
                     f'<text x="{x:.1f}" y="{H - mb + 15}" text-anchor="middle">{_tick_label(t)}</text>')
    parts.append(f'<line class="axis" x1="{ml}" x2="{W - mr}" y1="{H - mb}" y2="{H - mb}"/>'
                 f'<line class="axis" x1="{ml}" x2="{ml}" y1="{mt}" y2="{H - mb}"/>'
                 f'<text x="{(ml + W - mr) / 2:.0f}" y="{H - 4}" text-anchor="middle">games played</text>'
                 f'<text x="12" y="{(mt + H - mb) / 2:.0f}" text-anchor="middle" '
                 f'transform="rotate(-90 12 {(mt + H - mb) / 2:.0f})">rating μ</text>')
    for idx, (name, color, pts) in enumerate(series):
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(pts))
        last_x, last_y = pts[-1]
        title = _esc(f"{name}: μ {last_y:.2f} after {last_x} games")
        parts.append(f'<path class="series" data-i="{idx}" d="{d}" stroke="{color}"><title>{title}</title></path>'
                     f'<circle class="series-dot" data-i="{idx}" cx="{sx(last_x):.1f}" cy="{sy(last_y):.1f}" r="3.5" '
                     f'fill="{color}"><title>{title}</title></circle>')
    return "".join(parts)


def _history_section(data: _Data) -> str:
    hist = data.leaderboard.get("history") or {}
    names = list(data.entrants)
    points = {e: _history_points(hist.get(e)) for e in names}
    names = [e for e in names if points[e]]
    if not names:
        return """<section class="panel" id="history"><h2>Rating history</h2>
<p class="empty">No rating history was recorded.</p></section>"""
    top = names[:CHART_TOP]
    series = [(e, LINE_COLORS[i], points[e]) for i, e in enumerate(top)]
    legend = "".join(
        f'<span class="item" data-i="{i}"><span class="swatch" style="background:{c}"></span>{_esc(e)}</span>'
        for i, (e, c, _) in enumerate(series)
    )
    payload = {"names": names, "colors": LINE_COLORS, "top": CHART_TOP,
               "points": [[v for x, y in points[e] for v in (x, round(y, 2))] for e in names]}
    options = "".join(f'<option value="{_esc(e)}"></option>' for e in names)
    controls = ""
    if len(names) > CHART_TOP:
        controls = f"""<div class="filters" id="history-controls">
<label>Top <input type="number" id="history-top" min="0" max="{MAX_LINES}" value="{CHART_TOP}" style="width:4em"> by rank</label>
<label>and <input type="text" id="history-add" list="history-names" placeholder="add an entrant" autocomplete="off"></label>
<datalist id="history-names">{options}</datalist>
<span id="history-chosen"></span>
<span class="muted small">at most {MAX_LINES} lines</span>
</div>"""
    return f"""<section class="panel" id="history">
<h2>Rating history<span class="hint">μ after the games an entrant played · hover a name to pick out its line</span></h2>
{controls}<svg class="chart" id="history-chart" viewBox="0 0 {_CW} {_CH}" role="img" aria-label="Each entrant's rating μ over the games it played">{_history_svg(series)}</svg>
<div class="legend" id="history-legend">{legend}</div>
<script type="application/json" id="history-data">{_json(payload)}</script>
</section>"""


def _varints(values: Iterable[int]) -> bytes:
    """Unsigned LEB128: 7 bits a byte, low bits first."""
    out = bytearray()
    for v in values:
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


def _heat_payload(data: _Data) -> dict[str, Any]:
    """The heat map's data: the entrants in rank order with what the map sorts by, and
    for each pair i < j (row i, in that order) ahead, behind and tied of i against j, as
    base64 varints (a few bytes a pair whatever the number of games)."""
    names = list(data.entrants)
    h2h = data.head_to_head

    def counts() -> Iterator[int]:
        for i, a in enumerate(names):
            row = h2h.get(a) or {}
            for b in names[i + 1:]:
                c = row.get(b) or {}
                yield int(c.get("ahead", 0) or 0)
                yield int(c.get("behind", 0) or 0)
                yield int(c.get("tied", 0) or 0)

    rows = [data.entrants[n].row for n in names]
    return {
        "names": names,
        "rank": [r.get("rank", i + 1) for i, r in enumerate(rows)],
        "rating": [_num(r.get("conservative")) for r in rows],
        "pl": [_num(r.get("pl_strength")) for r in rows],
        "pairs": base64.b64encode(_varints(counts())).decode(),
    }


_HEAT = ((178, 24, 43), (247, 247, 247), (33, 102, 172))


def _h2h_table(data: _Data) -> str:
    h2h = data.head_to_head
    names = list(data.entrants)
    head = "".join(f'<th scope="col">{_esc(n)}</th>' for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append('<td class="self"><div class="cell">—</div></td>')
                continue
            c = (h2h.get(a) or {}).get(b) or {}
            n = c.get("games", 0) or 0
            if not n:
                cells.append(f'<td title="{_esc(a)} never met {_esc(b)}"><div class="cell muted">·</div></td>')
                continue
            ahead, behind, tied = c.get("ahead", 0), c.get("behind", 0), c.get("tied", 0)
            share = ahead / n
            rgb = _lerp_color(_HEAT, share)
            title = f"{a} placed ahead of {b} in {ahead} of {n} games ({behind} behind, {tied} tied)"
            cells.append(
                f'<td title="{_esc(title)}" data-share="{share:.3f}"><div class="cell" style="background:{_hex(rgb)};'
                f'color:{_ink_on(rgb)}">{share * 100:.0f}%<small>{ahead}/{n}</small></div></td>'
            )
        rows.append(f'<tr><th scope="row" class="rowhead">{_esc(a)}</th>{"".join(cells)}</tr>')
    return (f'<div class="table-wrap"><table class="heat" id="h2h-table"><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _h2h_section(data: _Data) -> str:
    names = list(data.entrants)
    if len(names) < 2:
        return '<section class="panel" id="h2h"><h2>Head to head</h2><p class="empty">Needs two entrants or more.</p></section>'
    table = _h2h_table(data) if len(names) <= TABLE_H2H_MAX else ""
    return f"""<section class="panel" id="h2h">
<h2>Head to head<span class="hint">share of meetings where the row entrant placed ahead · one cell per pair · point at a cell for the counts</span></h2>
<div class="filters">
<label>Order <select id="h2h-sort"><option value="rank">by rank (μ − 3σ)</option><option value="pl">by PL strength</option><option value="name">by name</option></select></label>
<label>Show <input type="text" id="h2h-filter" placeholder="all, or ranks 1-20, names…" autocomplete="off" size="28"></label>
<span class="muted small" id="h2h-shown"></span>
</div>
<div class="heatmap-wrap"><canvas id="h2h-canvas" width="1" height="1" aria-label="Head-to-head heat map"></canvas><div id="h2h-tip" class="tip hidden"></div></div>
<div class="heat-scale"><span>0%</span><span class="bar"></span><span>100%</span><span>· grey: never met · dark: the diagonal · ties count as not ahead</span></div>
{table}<script type="application/json" id="h2h-data">{_json(_heat_payload(data))}</script>
</section>"""


_PLACE_STOPS = ((46, 125, 50), (139, 195, 74), (243, 156, 18), (198, 40, 40))


def _place_colors(n: int) -> list[tuple[int, int, int]]:
    return [_lerp_color(_PLACE_STOPS, (i / (n - 1)) if n > 1 else 0.0) for i in range(n)]


def _places_section(data: _Data) -> str:
    max_place = max((p for e in data.entrants.values() for p in e.places), default=0)
    if not max_place:
        return '<section class="panel" id="places"><h2>Places</h2><p class="empty">No games yet.</p></section>'
    colors = _place_colors(max_place)
    rows = []
    shown = list(data.entrants.values())[:PLACES_ROWS]
    for e in shown:
        total = sum(e.places.values())
        segs = []
        for p in range(1, max_place + 1):
            k = e.places.get(p, 0)
            if not k or not total:
                continue
            pct = 100 * k / total
            rgb = colors[p - 1]
            label = f"{_ordinal(p)}: {k}" if pct >= 14 else (str(k) if pct >= 5 else "")
            segs.append(
                f'<span style="width:{pct:.2f}%;background:{_hex(rgb)};color:{_ink_on(rgb)}" '
                f'title="{_esc(f"{e.name}: {_ordinal(p)} place in {k} of {total} games ({pct:.0f}%)")}">{label}</span>'
            )
        mean = sum(p * k for p, k in e.places.items()) / total if total else None
        rows.append(
            f'<div class="entrant">{_esc(e.name)}</div><div class="stack">{"".join(segs)}</div>'
            f'<div class="small muted">{total} games · mean {_fmt(mean)}</div>'
        )
    legend = "".join(
        f'<span class="item"><span class="swatch" style="background:{_hex(c)}"></span>{_ordinal(i + 1)}</span>'
        for i, c in enumerate(colors)
    )
    return f"""<section class="panel" id="places">
<h2>Places<span class="hint">how often each entrant finished 1st, 2nd, …</span></h2>
{f'<p class="small muted">The first {len(shown)} of {len(data.entrants)} entrants by rank; leaderboard.json has the place counts of all.</p>' if len(data.entrants) > len(shown) else ""}<div class="places">{"".join(rows)}</div>
<div class="legend">{legend}</div>
</section>"""


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _entrants_section(data: _Data, replay_index: list[dict[str, Any]]) -> str:
    replay_games = {r["game"] for r in replay_index}
    cards = []
    for i, e in enumerate(data.entrants.values()):
        r = e.row
        n = e.n_games or r.get("games", 0)
        kind_tags = "".join(
            f'<span class="tag {_esc(k)}">{_esc(k)} × {v}</span>'
            for k, v in sorted(e.fault_kinds.items(), key=lambda kv: (FAULT_KINDS.index(kv[0]) if kv[0] in FAULT_KINDS else 99, kv[0]))
        )
        top = sorted(e.reasons.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:6]
        reason_items = "".join(
            f'<li>{_esc(reason)} <span class="muted">× {count} — {_game_link(game, replay_games)}</span></li>'
            for reason, (count, _, game) in top
        )
        others = len(e.reasons) - len(top) + (1 if e.other_reasons else 0)
        if others > 0:
            reason_items += f'<li class="muted">… and {others} other reasons</li>'
        replays = [x["game"] for x in replay_index if e.name in (x.get("players") or [])]
        replay_links = ", ".join(_game_link(gname, replay_games) for gname in replays[:12])
        if len(replays) > 12:
            replay_links += f' <span class="muted">and {len(replays) - 12} more</span>'
        rank = r.get("rank")
        fault_html = (
            f'<dd><span class="bad">{e.faults}</span> in {e.fault_games} game{"s" if e.fault_games != 1 else ""}</dd>'
            if e.faults else '<dd class="good">none</dd>'
        )
        cards.append(f"""<div class="entrant-card" id="entrant-{i}" data-entrant="{_esc(e.name)}">
<h3><span class="swatch" style="background:{e.color}"></span>{_esc(e.name)}{f' <span class="tag">rank {_esc(rank)}</span>' if rank is not None else ''}</h3>
<dl><dt>Games</dt><dd>{_esc(n)}</dd><dt>Wins</dt><dd>{e.wins}{f" ({100 * e.wins / e.n_games:.0f}%)" if e.n_games else ""}</dd>
<dt>Rating</dt><dd>{f"μ {_fmt(r.get('mu'))} ± {_fmt(3 * (_num(r.get('sigma')) or 0.0))}" if _num(r.get("mu")) is not None else "—"}</dd>
<dt>Faults</dt>{fault_html}{f"<dt>Forfeits</dt><dd class=bad>{e.forfeits}</dd>" if e.forfeits else ""}{
    f'<dt>Disqualified</dt><dd class="bad">{_esc(r["disqualified"])}</dd>' if r.get("disqualified") else ""}</dl>
{f"<div>{kind_tags}</div>" if kind_tags else ""}
{f'<ul class="reasons">{reason_items}</ul>' if reason_items else ""}
{f'<div class="small"><b>Replays:</b> {replay_links}</div>' if replay_links else ""}
<p class="small" style="margin:8px 0 0"><button type="button" class="linkbtn show-games" data-entrant="{_esc(e.name)}">Show its games</button></p>
</div>""")
    return f"""<section class="panel" id="entrants">
<h2>Entrants<span class="hint">games, faults and their reasons, replays</span></h2>
<div class="cards-grid">{"".join(cards)}</div>
</section>"""


def _game_link(game: str, replay_games: set[str]) -> str:
    if game in replay_games:
        return f'<a href="{_esc(_replay_href(game))}" title="Watch the replay">{_esc(game)}</a>'
    return f'<span class="mono">{_esc(game)}</span>'


def _seat_html(s: int, seats: list[str], places: list[Any], scores: list[Any], phases: list[Any],
               forfeits: set[Any]) -> str:
    place = places[s] if s < len(places) else "?"
    extra = _esc(scores[s] if s < len(scores) else "")
    if s < len(phases):
        extra += " · ph " + _esc(phases[s])
    if s in forfeits:
        extra += " · forfeit"
    cls = "p1" if place == 1 else ""
    return (f'<span class="{cls}" title="seat {s}">{_esc(place)}. {_esc(seats[s])} '
            f'<span class="muted">{extra}</span></span>')


def _fault_tag(f: Mapping[str, Any], seats: list[str]) -> str:
    seat = f.get("seat")
    who = f.get("entrant")
    if who is None:
        who = seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats) else "?"
    kind = f.get("kind")
    return f'<span class="tag {_esc(kind)}" title="{_esc(f.get("reason"))}">{_esc(who)}: {_esc(kind)}</span>'


def _game_row(g: Mapping[str, Any], replay_games: set[str]) -> str:
    gname = _game_name(g)
    seats = [str(s) for s in g.get("seats") or []]
    places = list(g.get("places") or [])
    scores = list(g.get("scores") or [])
    phases = list(g.get("phases") or [])
    forfeits = set(g.get("forfeits") or [])

    def by_place(s: int) -> tuple[int, int]:
        p = places[s] if s < len(places) and isinstance(places[s], int) else 99
        return (p, s)

    seat_html = "".join(_seat_html(s, seats, places, scores, phases, forfeits) for s in sorted(range(len(seats)), key=by_place))
    faults = [f for f in g.get("faults") or [] if isinstance(f, Mapping)]
    fault_html = " ".join(_fault_tag(f, seats) for f in faults)
    has_replay = gname in replay_games
    replay = f'<a href="{_esc(_replay_href(gname))}">watch</a>' if has_replay else ""
    hands = _esc(g.get("hands", ""))
    if g.get("stalled_hands"):
        hands += f' <span class="muted">({_esc(g.get("stalled_hands"))} stalled)</span>'

    def v(key: str) -> str:
        return _esc(g.get(key, ""))

    return (
        f'<tr data-entrants="{_esc(json.dumps(seats))}" data-faults="{len(faults)}" data-replay="{int(has_replay)}">'
        f'<td data-v="{v("id")}">{_game_link(gname, replay_games)}</td>'
        f'<td class="num mono" data-v="{v("seed")}">{v("seed")}</td>'
        f'<td class="num" data-v="{v("group")}">{v("group")}</td>'
        f'<td><div class="seatlist">{seat_html}</div></td>'
        f'<td class="num" data-v="{v("hands")}">{hands}</td>'
        f'<td data-v="{len(faults)}">{fault_html}</td>'
        f'<td class="num" data-v="{v("duration_s")}">{_fmt(g.get("duration_s"), 2)}</td>'
        f"<td>{replay}</td></tr>"
    )


def _games_section(data: _Data, replay_games: set[str]) -> str:
    games = data.games[:MAX_GAME_ROWS]
    rows = "".join(_game_row(g, replay_games) for g in games)
    note = ""
    if data.n_games > len(games):
        note = (f'<div class="notice">The first {len(games)} of {data.n_games} games are listed; '
                f"games.jsonl holds them all.</div>")
    options = "".join(f'<option value="{_esc(n)}">{_esc(n)}</option>' for n in data.entrants)
    return f"""<section class="panel" id="games">
<h2>Games<span class="hint">place, penalty points and phases completed per seat · a linked game has a replay</span></h2>
{note}<div class="filters">
<label>Entrant <select id="filter-entrant"><option value="">all</option>{options}</select></label>
<label><input type="checkbox" id="filter-faults"> only games with faults</label>
<label><input type="checkbox" id="filter-replays"> only games with a replay</label>
<span class="muted" id="games-count">{len(games)} games</span>
</div>
<div class="table-wrap"><table class="sortable" id="games-table">
<thead><tr><th data-type="num" data-first="ascending"><span class="lbl">Game</span></th>
<th data-type="num" class="num"><span class="lbl">Seed</span></th>
<th data-type="num" class="num" data-first="ascending"><span class="lbl">Group</span></th>
<th>Result (place. entrant points · phases)</th><th data-type="num" class="num"><span class="lbl">Hands</span></th>
<th data-type="num"><span class="lbl">Faults</span></th><th data-type="num" class="num"><span class="lbl">Time (s)</span></th>
<th>Replay</th></tr></thead>
<tbody>{rows}</tbody></table></div>
</section>"""


def _settings_section(data: _Data) -> str:
    cfg = data.config if isinstance(data.config, dict) else {}
    facts: list[tuple[str, Any]] = [("Tournament", data.name), ("Seed", str(data.seed))]
    lb = data.leaderboard
    note = seed_note(lb)
    if note:
        facts += [("Seed SHA-256", lb.get("seed_sha256")), ("Deals", note)]
    if lb.get("results_sha256"):
        facts.append(("Games digest", lb["results_sha256"]))
    marker = data.marker
    if marker.get("journal_head"):
        facts.append(("Journal head", f"{marker['journal_head']} (the hash chain of games.jsonl after "
                                      f"{marker.get('games')} games; p10-tourney verify checks it)"))
    if cfg:
        for k, v in cfg.items():
            if k in ("name", "seed") or isinstance(v, (dict, list)):
                continue
            facts.append((str(k), v))
        rules = cfg.get("rules")
        if isinstance(rules, dict):
            facts.append(("Rules", _rules_summary(rules) or "default"))
        ents = cfg.get("entrants", cfg.get("bots"))
        if isinstance(ents, list):
            facts.append(("Entrants", len(ents)))
    else:
        facts.append(("Games", data.leaderboard.get("games", data.n_games)))
        facts.append(("Entrants", len(data.entrants)))
    dl = "".join(
        f"<dt>{_esc(k)}</dt><dd>{_esc(json.dumps(v, default=str) if not isinstance(v, str) else v)}</dd>"
        for k, v in facts
    )
    if data.config_text is not None:
        body = (f'<p class="small">The resolved configuration, every default filled in. A tournament run with it '
                f'(same seed, same entrants) plays the same games. '
                f'<a href="config.resolved.yaml" download>Download config.resolved.yaml</a></p>'
                f'<pre class="config" id="config">{_esc(data.config_text)}</pre>')
    else:
        body = ('<p class="small muted">config.resolved.yaml was not found next to the results; '
                'the settings above come from leaderboard.json.</p>')
    return f"""<section class="panel" id="settings">
<h2>Settings<span class="hint">everything needed to reproduce this tournament</span></h2>
<dl class="settings">{dl}</dl>
{body}
</section>"""


def _index_html(data: _Data, replay_index: list[dict[str, Any]]) -> str:
    replay_games = {r["game"] for r in replay_index}
    body = "\n".join([
        f'<h1 id="title">{_esc(data.name)}</h1>',
        _summary(data, len(replay_index)),
        _notices(data),
        _leaderboard_section(data),
        _history_section(data),
        _h2h_section(data),
        _places_section(data),
        _entrants_section(data, replay_index),
        _games_section(data, replay_games),
        _settings_section(data),
    ])
    return _page(f"{data.name} · Phase 10 tournament", "Leaderboard", data, body, _asset("index.js"))


def _replay_html(data: _Data, replay_index: list[dict[str, Any]]) -> str:
    notes = _notices(data) if replay_index else ""
    if replay_index:
        intro = ""
    else:
        intro = ('<div class="notice">No replays in this tournament. Games that went wrong (a bot timed out, '
                 'crashed, or broke a rule) and the first clean games of every entrant are recorded by default; '
                 'set the tournament\'s replay option to "all" to record every game.</div>')
    body = f"""{notes}{intro}
{_viewer(replay_index)}"""
    return _page(f"Replays · {data.name}", "Replays", data, body, _asset("replay.js"))


def replay_file_html(path: Path) -> str:
    """One replay file (p10-replay/1, as `play --replay` writes it) as a self-contained HTML
    page: the site's replay viewer with the game, its styles and its script inline. Raises
    ValueError (or OSError) for a file that is not a replay."""
    rep = _Replay(Path(path).stem, Path(path), None)
    payload = _replay_payload(rep)
    index = [{"game": rep.game, "file": "", "players": payload["players"],
              "places": (payload["result"] or {}).get("places"), "faults": [], "hands": len(payload["hand_ends"])}]
    game = f"window.P10_REPLAYS={{{_json(rep.game)}:{_json(payload)}}};\n"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{_esc(rep.game)} · replay</title>
<script>{_asset("errors.js")}</script>
<style>{_asset("site.css")}</style>
</head>
<body>
<header class="topbar">
<div class="brand">Phase 10 replay<small>{_esc(rep.game)} · {_esc(" vs ".join(payload["players"]))}</small></div>
</header>
<main>
{_viewer(index)}
</main>
<footer>Made by p10-tourney from {_esc(Path(path).name)}. This page holds everything it shows: it works offline.</footer>
<div id="js-errors" class="hidden" data-count="0"></div>
<script>{game}</script>
<script>{_asset("replay.js")}</script>
</body>
</html>
"""


def _viewer(replay_index: list[dict[str, Any]]) -> str:
    """The replay viewer's panel, with the index of the games it can show."""
    return f"""<section class="panel" id="viewer" data-frame="-1">
<div class="viewer-top">
<label>Game <select id="game-select" aria-label="Game"></select></label>
<div class="controls" role="toolbar" aria-label="Step through the game">
<button type="button" id="btn-first" title="First frame (Home)">|‹ First</button>
<button type="button" id="btn-prev-hand" title="Previous hand (↑ or Page Up)">« Hand</button>
<button type="button" id="btn-prev" title="Previous turn (←)">‹ Prev</button>
<button type="button" id="btn-next" title="Next turn (→)">Next ›</button>
<button type="button" id="btn-next-hand" title="Next hand (↓ or Page Down)">Hand »</button>
<button type="button" id="btn-last" title="Last frame (End)">Last ›|</button>
</div>
<div class="position" id="position" aria-live="polite"></div>
</div>
<input type="range" id="scrub" min="0" max="0" value="0" aria-label="Frame">
<div class="action" id="action-text">Pick a game.</div>
<div class="board">
<div>
<div class="piles">
<div class="pile"><h3>Draw pile</h3><div class="cardrow" id="draw-pile"></div></div>
<div class="pile"><h3 id="discard-title">Discard pile</h3><div class="cardrow" id="discard-pile"></div></div>
</div>
<div class="melds"><h3>On the table</h3><div id="table-melds"></div></div>
<div class="players" id="players"></div>
</div>
<div>
<h3>This hand</h3>
<ol class="log" id="hand-log"></ol>
<h3 style="margin-top:14px">Scores at each hand's end</h3>
<div class="table-wrap"><table class="scores" id="score-table"></table></div>
<div class="small muted" id="game-info" style="margin-top:10px"></div>
</div>
</div>
<div class="keys"><kbd>←</kbd> <kbd>→</kbd> turn · <kbd>↑</kbd> <kbd>↓</kbd> or <kbd>Page Up</kbd> <kbd>Page Down</kbd> hand ·
<kbd>Home</kbd> <kbd>End</kbd> first and last · every card of every hand is shown</div>
<noscript><div class="notice">The replay viewer needs JavaScript.</div></noscript>
</section>
<script type="application/json" id="replay-index">{_json(replay_index)}</script>"""


# --------------------------------------------------------------------------- entry point

def build_site(results_dir: Path, *, max_replays: int = MAX_REPLAYS) -> Path:
    """Write the results site into `results_dir/site/` and return that folder.

    Reads leaderboard.json, games.jsonl, config.resolved.yaml (optional) and the replay
    files the games name (and any others in replays/); embeds the first `max_replays`
    replays in the viewer. A replay that cannot be read is left out with a notice on the
    page; it never stops the build. Raises FileNotFoundError if `results_dir` holds
    neither leaderboard.json nor games.jsonl.
    """
    results_dir = Path(results_dir)
    data = _load(results_dir, max(0, int(max_replays)))
    site = results_dir / "site"
    safe_folder(site)  # a link there would take the site's files elsewhere
    replay_index = _write_replays(data, site, max(0, int(max_replays)))
    if data.config_text is not None:
        write_whole(site / "config.resolved.yaml", data.config_text)
    write_whole(site / "index.html", _index_html(data, replay_index))
    write_whole(site / "replay.html", _replay_html(data, replay_index))
    return site
