"""What each part of the leaderboard page shows, worked out for its template: the summary,
the notices, the leaderboard, the entrant cards, the games table and the settings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from ..fairplay import collusion_notes, team_cell
from ..leaderboard import MARKS, ORDER_KEY, order_line, promise, seed_note, stop_line
from .charts import Domain, Whisker, whisker, whisker_axis, whisker_domain, whisker_frame
from .data import MAX_GAME_ROWS, Entrant, SiteData, game_name
from .replays import rules_summary
from .values import fmt, num
from ...model import FAULT_KINDS

LEADERBOARD_PAGE = 50
"""Leaderboard rows shown per page at first."""

_COLUMNS: list[tuple[str, str, str]] = [  # (label, type, css class)
    ("#", "num", "num"), ("Entrant", "text", ""), ("μ", "num", "num"), ("σ", "num", "num"),
    ("μ − 3σ", "num", "num"), ("μ ± 3σ", "num", ""), ("Games", "num", "num"), ("Wins", "num", "num"),
    ("Win rate", "num", "num"), ("Place", "num", "num"), ("Points", "num", "num"),
    ("Phases", "num", "num"), ("Faults", "num", "num"),
]
_PL_COLUMNS = [("PL [95 %]", "num", "num"), ("Next", "text", "")]
_TITLES = {
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
_ASCENDING_FIRST = {"#", "Entrant", "Place", "Points", "Faults"}


def notices(data: SiteData) -> list[str]:
    """The page's notices: what could not be shown, containment, trusted entrants."""
    notes = list(data.warnings)
    flagged = [" and ".join(r["pair"]) for r in data.leaderboard.get("collusion") or [] if r.get("flagged")]
    if flagged:
        notes.append(f"Collusion flagged: {'; '.join(flagged)} (see the collusion report below the leaderboard).")
    trusted = data.leaderboard.get("trusted")
    if trusted:
        notes.append(f"Trusted: {', '.join(map(str, trusted))}. Their processes were kept across the seat "
                     "rotations of a deal, so they could remember the hands of an earlier rotation.")
    return notes


def summary(data: SiteData, n_replays: int) -> dict[str, Any]:
    """The figures at the top of the page, and the note on the seed."""
    faults = sum(e.faults for e in data.entrants.values())
    return {
        "stats": [
            (data.n_games or data.leaderboard.get("games", 0), "games"),
            (len(data.entrants), "entrants"),
            (faults, "faults"),
            (n_replays, "replays"),
            (data.seed if data.seed is not None else "—", "seed"),
        ],
        "seed_note": seed_note(data.leaderboard),
    }


@dataclass(slots=True)
class BoardRow:
    """One entrant's row of the leaderboard table: the values its cells show and sort by."""

    name: str
    color: str
    retired: bool
    rank: Any
    mu: Any
    sigma: Any
    conservative: Any
    whisker: Whisker | None
    games: Any
    wins: Any
    win_rate: Any
    mean_place: Any
    mean_score: Any
    mean_phases: Any
    faults: Any
    pl: Any = None
    band: str = ""  # "[low, high]" of PL's interval
    next: str = ""  # the verdict against the next row ("" for none), and its mark
    mark: str = ""
    disqualified: str | None = None  # the reason, for an entrant taken out of the tournament
    team: str = ""  # its team, if it has one (entrants of one team never share a table)


def _board_row(e: Entrant, i: int, dom: Domain | None) -> BoardRow:
    """The row of `e`, the `i`-th entrant."""
    r = e.row
    cons = r.get("conservative")
    if cons is None and num(r.get("mu")) is not None:
        cons = num(r.get("mu")) - 3 * (num(r.get("sigma")) or 0.0)  # type: ignore[operator]
    row = BoardRow(e.name, e.color, bool(r.get("retired")), r.get("rank", i + 1), r.get("mu"), r.get("sigma"), cons,
                   whisker(e, dom) if dom else None, r.get("games", e.n_games), r.get("wins", e.wins),
                   r.get("win_rate"), r.get("mean_place"), r.get("mean_score"), r.get("mean_phases"),
                   r.get("faults", e.faults), r.get("pl_strength"))
    row.disqualified = r.get("disqualified") or None
    row.team = team_cell(r)
    lo, hi, settled = r.get("ci_low"), r.get("ci_high"), r.get("settled_above")
    if lo is not None and hi is not None:
        row.band = f"[{fmt(lo)}, {fmt(hi)}]"
    if settled is not None:
        row.next = r.get("next") or ("settled" if settled else "open")
        row.mark = MARKS.get(r.get("next") or "", "✓" if settled else "≈")
    return row


def leaderboard(data: SiteData) -> dict[str, Any]:
    """The leaderboard table: its columns, one row per entrant, and the notes on the order
    (with statistics)."""
    ents = list(data.entrants.values())
    dom = whisker_domain(ents)
    has_pl = any(e.row.get("pl_strength") is not None for e in ents)
    cols = _COLUMNS[:6] + (_PL_COLUMNS if has_pl else []) + _COLUMNS[6:]
    columns = [{"label": label, "type": typ, "cls": cls, "title": _TITLES.get(label),
                "first": "ascending" if label in _ASCENDING_FIRST else "descending",
                "axis": whisker_axis(dom) if label == "μ ± 3σ" and dom else None}
               for label, typ, cls in cols]
    notes: dict[str, str | None] = {"order": None, "promise": None, "stop": None}
    if has_pl and data.leaderboard.get("statistics"):
        line = order_line(data.leaderboard)
        notes = {"order": f"{line} {ORDER_KEY}" if line else None, "promise": promise(data.leaderboard),
                 "stop": stop_line(data.leaderboard)}
    return {
        "ranked": ("ranked by PL, the Plackett–Luce strength of all games at once; TrueSkill μ, σ, μ − 3σ beside it"
                   if has_pl else "ranked by the conservative rating μ − 3σ"),
        "games": data.leaderboard.get("games", data.n_games),
        "page_size": LEADERBOARD_PAGE,
        "columns": columns,
        "has_pl": has_pl,
        "whiskers": dom is not None,
        "rows": [_board_row(e, i, dom) for i, e in enumerate(ents)],
        "frame": whisker_frame(dom),
        "notes": notes,
        "collusion": collusion_notes(data.leaderboard),
    }


def _fault_order(kind: str) -> tuple[int, str]:
    return (FAULT_KINDS.index(kind) if kind in FAULT_KINDS else 99, kind)


@dataclass(slots=True)
class Card:
    """One entrant's card: games, wins, rating, faults and their commonest reasons, the
    replays it played in."""

    e: Entrant
    rank: Any
    games: Any
    win_share: str  # " (40%)"
    rating: str
    kinds: list[tuple[str, int]]  # fault kind, count
    reasons: list[tuple[str, int, str, bool]]  # reason, count, its first game, whether that has a replay
    other_reasons: int
    replays: list[str]


def entrant_cards(data: SiteData, replay_index: list[dict[str, Any]]) -> list[Card]:
    """One card per entrant, in the leaderboard's order."""
    replay_games = {r["game"] for r in replay_index}
    cards = []
    for e in data.entrants.values():
        r = e.row
        top = sorted(e.reasons.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:6]
        mu = num(r.get("mu"))
        cards.append(Card(
            e, r.get("rank"), e.n_games or r.get("games", 0),
            f" ({100 * e.wins / e.n_games:.0f}%)" if e.n_games else "",
            f"μ {fmt(r.get('mu'))} ± {fmt(3 * (num(r.get('sigma')) or 0.0))}" if mu is not None else "—",
            sorted(e.fault_kinds.items(), key=lambda kv: _fault_order(kv[0])),
            [(reason, count, game, game in replay_games) for reason, (count, _, game) in top],
            len(e.reasons) - len(top) + (1 if e.other_reasons else 0),
            [x["game"] for x in replay_index if e.name in (x.get("players") or [])],
        ))
    return cards


@dataclass(slots=True)
class GameFault:
    """A fault in the games table: whose, its kind and reason."""

    who: Any
    kind: Any
    reason: Any


@dataclass(slots=True)
class GameRow:
    """One game of the games table: the record's values as they are, for their cells."""

    id: Any
    name: str
    seed: Any
    group: Any
    hands: Any
    stalled_hands: Any
    duration_s: Any
    duration: str
    entrants: str  # the seats' entrants as JSON, for the filter
    seats: list[tuple[int, bool, str, str]]  # seat, first?, "2. name", "105 · ph 3 · forfeit": by place
    faults: list[GameFault]
    replay: bool


def _seats(g: Mapping[str, Any]) -> list[tuple[int, bool, str, str]]:
    """A game's seats in the order of their places."""
    seats = [str(s) for s in g.get("seats") or []]
    places = list(g.get("places") or [])
    scores = list(g.get("scores") or [])
    phases = list(g.get("phases") or [])
    forfeits = set(g.get("forfeits") or [])

    def by_place(s: int) -> tuple[int, int]:
        p = places[s] if s < len(places) and isinstance(places[s], int) else 99
        return (p, s)

    out = []
    for s in sorted(range(len(seats)), key=by_place):
        place = places[s] if s < len(places) else "?"
        score = scores[s] if s < len(scores) else ""
        extra = "" if score is None else str(score)
        if s < len(phases):
            extra += " · ph " + ("" if phases[s] is None else str(phases[s]))
        if s in forfeits:
            extra += " · forfeit"
        out.append((s, place == 1, f"{'' if place is None else place}. {seats[s]}", extra))
    return out


def _game_faults(g: Mapping[str, Any], seats: list[str]) -> list[GameFault]:
    out = []
    for f in g.get("faults") or []:
        if not isinstance(f, Mapping):
            continue
        seat, who = f.get("seat"), f.get("entrant")
        if who is None:
            who = seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats) else "?"
        out.append(GameFault(who, f.get("kind"), f.get("reason")))
    return out


def games(data: SiteData, replay_games: set[str]) -> dict[str, Any]:
    """The games table: the first MAX_GAME_ROWS games, in game order."""
    rows = []
    for g in data.games[:MAX_GAME_ROWS]:
        seats = [str(s) for s in g.get("seats") or []]
        name = game_name(g)
        rows.append(GameRow(g.get("id", ""), name, g.get("seed", ""), g.get("group", ""), g.get("hands", ""),
                            g.get("stalled_hands"), g.get("duration_s", ""), fmt(g.get("duration_s"), 2),
                            json.dumps(seats), _seats(g), _game_faults(g, seats), name in replay_games))
    return {"rows": rows, "total": data.n_games, "entrants": list(data.entrants)}


def settings(data: SiteData) -> dict[str, Any]:
    """The tournament's settings, and its resolved configuration's text."""
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
        facts += [(str(k), v) for k, v in cfg.items() if k not in ("name", "seed") and not isinstance(v, (dict, list))]
        rules = cfg.get("rules")
        if isinstance(rules, dict):
            facts.append(("Rules", rules_summary(rules) or "default"))
        ents = cfg.get("entrants", cfg.get("bots"))
        if isinstance(ents, list):
            facts.append(("Entrants", len(ents)))
    else:
        facts.append(("Games", lb.get("games", data.n_games)))
        facts.append(("Entrants", len(data.entrants)))
    return {"facts": [(k, v if isinstance(v, str) else json.dumps(v, default=str)) for k, v in facts],
            "config_text": data.config_text}
