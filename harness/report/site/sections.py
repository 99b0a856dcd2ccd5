"""What each part of the leaderboard page shows, worked out for its template: the summary,
the notices, the leaderboard, the entrant cards, the games table and the settings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from ..fairplay import collusion_notes, team_cell
from ..leaderboard import MARKS, ORDER_KEY, order_line, promise, seed_note, stop_line
from .charts import Domain, Whisker, whisker, whisker_axis, whisker_domain, whisker_frame
from .data import Entrant, SiteData
from .pages import slug
from .replays import rules_summary
from .values import fmt, num

LEADERBOARD_PAGE = 50
"""Leaderboard rows shown per page at first."""

FOLD_ORDER = 20
"""Beyond this many entrants the order line is folded (a click shows it)."""

_COLUMNS: list[tuple[str, str, str]] = [  # (label, type, css classes: opt hidden on a narrow screen, opt2 on a phone)
    ("μ", "num", "num opt"), ("σ", "num", "num opt"), ("μ ± 3σ", "num", "whisker opt"), ("Games", "num", "num opt2"),
    ("Wins", "num", "num opt"), ("Win rate", "num", "num opt"), ("Place", "num", "num opt2"),
    ("Points", "num", "num opt"), ("Phases", "num", "num opt"), ("Faults", "num", "num opt2"),
]
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


def _cells(e: Entrant, i: int, has_pl: bool, dom: Domain | None) -> dict[str, Any]:
    """The row of `e`, the `i`-th entrant: [sort value, text] per column after the name (the
    deciding column first), its whisker, and the marks beside its name."""
    r = e.row
    cons = r.get("conservative")
    if cons is None and num(r.get("mu")) is not None:
        cons = num(r.get("mu")) - 3 * (num(r.get("sigma")) or 0.0)  # type: ignore[operator]
    cells: list[list[Any]] = [[r.get("rank", i + 1), str(r.get("rank", i + 1))]]
    if has_pl:
        lo, hi = r.get("ci_low"), r.get("ci_high")
        band = f"[{fmt(lo)}, {fmt(hi)}]" if lo is not None and hi is not None else ""
        settled = r.get("settled_above")
        mark = MARKS.get(r.get("next") or "", "✓" if settled else "≈") if settled is not None else ""
        cells += [[num(r.get("pl_strength")), fmt(r.get("pl_strength")), band],
                  [(r.get("next") or ("settled" if settled else "open")) if settled is not None else "", mark]]
    cells.append([num(cons), fmt(cons)])
    w = whisker(e, dom) if dom else None
    win_rate = r.get("win_rate")
    faults = r.get("faults", e.faults)
    for v, text in ((r.get("mu"), fmt(r.get("mu"))), (r.get("sigma"), fmt(r.get("sigma"))),
                    (r.get("mu"), "—" if w is None else ""), (r.get("games", e.n_games), fmt(r.get("games", e.n_games), 0)),
                    (r.get("wins", e.wins), fmt(r.get("wins", e.wins), 0)), (win_rate, fmt(win_rate, 3, pct=True)),
                    (r.get("mean_place"), fmt(r.get("mean_place"))), (r.get("mean_score"), fmt(r.get("mean_score"), 1)),
                    (r.get("mean_phases"), fmt(r.get("mean_phases")))):
        cells.append([num(v), text])
    kinds = r.get("fault_kinds") or dict(sorted(e.fault_kinds.items()))
    cells.append([num(faults), fmt(faults, 0), ", ".join(f"{k} × {n}" for k, n in kinds.items())
                  if isinstance(kinds, dict) else ""])  # the kinds beside the count
    tags = [["retired", "retired"]] if r.get("retired") else []
    if team_cell(r):  # shown as "(team NAME)"; a team's name is letters, digits and _.+-
        tags.append([f"team {team_cell(r)}", "entrants of one team never share a table"])
    if r.get("disqualified"):
        tags.append(["disqualified", str(r["disqualified"])])
    return {"n": e.name, "s": slug(e.name), "c": e.color, "tags": tags, "cells": cells,
            "w": [w.x0, w.x1, w.xm, w.title] if w else None}


def leaderboard(data: SiteData, out: Mapping[str, str]) -> dict[str, Any]:
    """The leaderboard table of the entrants in the ranking (not those of `out`): its
    columns, the deciding one first after the name and marked, and the rows (the first page
    in the page, every row in data/board.js for index.js), and the notes on the order."""
    ents = [e for e in data.entrants.values() if e.name not in out]
    dom = whisker_domain(ents)
    has_pl = any(e.row.get("pl_strength") is not None for e in ents)
    first = [("PL [95 %]", "num", "num decides"), ("Next", "text", "mark")] if has_pl else []
    cols = [("#", "num", "num"), ("Entrant", "text", "name")] + first + [
        ("μ − 3σ", "num", "num opt" if has_pl else "num decides")] + _COLUMNS
    columns = [{"label": label, "type": typ, "cls": cls, "title": _TITLES.get(label),
                "first": "ascending" if label in _ASCENDING_FIRST else "descending",
                "axis": whisker_axis(dom) if "whisker" in cls and dom else None}
               for label, typ, cls in cols]
    notes: dict[str, Any] = {"order": None, "promise": None, "stop": None, "order_items": 0}
    if has_pl and data.leaderboard.get("statistics"):
        line = order_line(data.leaderboard)
        notes = {"order": line or None, "key": ORDER_KEY, "promise": promise(data.leaderboard),
                 "stop": stop_line(data.leaderboard), "order_items": len(ents)}
    rows = [_cells(e, i, has_pl, dom) for i, e in enumerate(ents)]
    return {
        "ranked": ("ranked by PL, the Plackett–Luce strength of all games at once (the marked column); "
                   "TrueSkill μ − 3σ, μ and σ beside it" if has_pl else "ranked by the conservative rating μ − 3σ "
                   "(the marked column)"),
        "games": data.leaderboard.get("games", data.n_games),
        "page_size": LEADERBOARD_PAGE,
        "columns": columns,
        "rows": rows[:LEADERBOARD_PAGE],
        "all_rows": rows,
        "frame": whisker_frame(dom),
        "notes": notes,
        "folded": len(ents) > FOLD_ORDER,
        "collusion": collusion_notes(data.leaderboard),
    }


def out_section(data: SiteData, out: Mapping[str, str]) -> list[dict[str, Any]]:
    """The entrants out of the ranking (retired, earlier versions): name, why, their last
    rank and games."""
    return [{"name": n, "slug": slug(n), "why": why, "rank": data.entrants[n].row.get("rank"),
             "games": data.entrants[n].n_games} for n, why in out.items()]


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
        facts.append(("Games played", data.n_games))
        facts += [(str(k) if k != "games" else "games (the configuration's budget)", v) for k, v in cfg.items()
                  if k not in ("name", "seed") and not isinstance(v, (dict, list))]
        rules = cfg.get("rules")
        if isinstance(rules, dict):
            facts.append(("Rules", rules_summary(rules) or "default"))
        ents = cfg.get("entrants", cfg.get("bots"))
        if isinstance(ents, list):
            facts.append(("Entrants in the field now", len(ents)))
        facts.append(("Entrants with games", len(data.entrants)))
    else:
        facts.append(("Games", lb.get("games", data.n_games)))
        facts.append(("Entrants", len(data.entrants)))
    return {"facts": [(k, v if isinstance(v, str) else json.dumps(v, default=str)) for k, v in facts],
            "config_text": data.config_text}
