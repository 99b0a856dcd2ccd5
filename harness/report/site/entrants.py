"""One page per entrant (`entrants/<slug>.html`, a URL that stays the same from one
publication to the next): its rank and interval over the publications, its results
against each opponent, its faults and their reasons, its versions, and its games (the
games list of `pages`, newest first). Also the versions of the field (`version:` and
`replaces:` of the configuration) and which entrants are out of the ranking."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..files import read_json, write_whole
from .data import Entrant, SiteData
from .pages import slug
from .values import fmt, num, script_json

HISTORY_FILE = "rank_history.json"
"""In site/: the board of each publication (rank and deciding value of every entrant)."""

MAX_PUBLICATIONS = 120
"""Publications kept in the rank history at most (the older ones thinned)."""


def decides(data: SiteData) -> tuple[str, str]:
    """The board's deciding column: (key in a leaderboard row, label)."""
    rows = [e.row for e in data.entrants.values()]
    if any(r.get("pl_strength") is not None for r in rows):
        return "pl_strength", "PL"
    return "conservative", "μ − 3σ"


def lineage(data: SiteData) -> dict[str, dict[str, str]]:
    """name -> {"version", "replaces"} as the configuration gives them."""
    cfg = data.config if isinstance(data.config, dict) else {}
    out: dict[str, dict[str, str]] = {}
    for b in cfg.get("bots") or cfg.get("entrants") or []:
        if isinstance(b, dict) and isinstance(b.get("name"), str):
            got = {k: str(b[k]) for k in ("version", "replaces") if isinstance(b.get(k), (str, int, float))}
            if got:
                out[b["name"]] = got
    return out


def versions(data: SiteData) -> dict[str, list[str]]:
    """Each entrant's line of versions, oldest first (entrants linked by `replaces:`)."""
    lin = lineage(data)
    before = {n: v["replaces"] for n, v in lin.items() if "replaces" in v}
    after = {old: new for new, old in before.items()}
    lines: dict[str, list[str]] = {}
    for name in set(before) | set(after):
        first, seen = name, {name}
        while first in before and before[first] not in seen:
            first = before[first]
            seen.add(first)
        line, seen = [first], {first}
        while line[-1] in after and after[line[-1]] not in seen:
            line.append(after[line[-1]])
            seen.add(line[-1])
        lines[name] = line
    return lines


def out_of_ranking(data: SiteData) -> dict[str, str]:
    """The entrants the leaderboard's table leaves out, and why: retired from the field, or
    an earlier version of another."""
    replaced = {v["replaces"]: n for n, v in lineage(data).items() if "replaces" in v}
    out = {}
    for name, e in data.entrants.items():
        if name in replaced:
            out[name] = f"earlier version of {replaced[name]}"
        elif e.row.get("retired"):
            out[name] = "retired"
    return out


def record_history(data: SiteData, site: Path) -> list[dict[str, Any]]:
    """The publications' boards, this one added (when it has more games than the last)."""
    path = site / HISTORY_FILE
    try:
        got = read_json(path)
        hist = got if isinstance(got, list) else []
    except (OSError, ValueError):
        hist = []
    games = data.leaderboard.get("games")
    if isinstance(games, int) and data.leaderboard.get("entrants") and (not hist or hist[-1].get("games", -1) < games):
        key, _ = decides(data)
        hist.append({"games": games, "e": {n: [e.row.get("rank"), e.row.get(key), e.row.get("ci_low"),
                                               e.row.get("ci_high")] for n, e in data.entrants.items()}})
        if len(hist) > MAX_PUBLICATIONS:
            hist = hist[:1] + hist[1:-1][1::2] + hist[-1:]  # every other older one
        write_whole(path, script_json(hist))
    elif hist and isinstance(games, int) and hist[-1].get("games", -1) > games:
        hist = [h for h in hist if isinstance(h.get("games"), int) and h["games"] <= games]  # run again from less
        write_whole(path, script_json(hist))
    return hist


@dataclass(slots=True)
class EntrantPage:
    """What an entrant's page shows."""

    e: Entrant
    slug: str
    status: str
    value: str  # the deciding value and its interval
    versions: list[tuple[str, str, str, bool]]  # name, version label, slug, this one?
    opponents: list[list[Any]]  # `_opponents`
    kinds: list[tuple[str, int]]
    reasons: list[tuple[str, int, str]]  # reason, count, first game
    other_reasons: int
    history: list[tuple[int, Any, str, str]]  # games, rank, value, interval
    chart: dict[str, Any] | None = None
    facts: list[tuple[str, str]] = field(default_factory=list)


def _opponents(data: SiteData, name: str, slugs: Mapping[str, str]) -> list[list[Any]]:
    """[opponent, its slug, games, ahead, behind, tied] for every opponent met, the most met first."""
    row = data.head_to_head.get(name) or {}
    met: list[list[Any]] = [[b, slugs.get(b) or slug(b), c.get("games") or 0, c.get("ahead") or 0,
                             c.get("behind") or 0, c.get("tied") or 0]
                            for b, c in row.items() if isinstance(c, dict) and c.get("games")]
    met.sort(key=lambda m: (-m[2], m[0]))
    return met


def _chart(points: list[tuple[int, float, float | None, float | None]]) -> dict[str, Any] | None:
    """The deciding value over the publications with its interval: an SVG's paths."""
    if len(points) < 2:
        return None
    w, h, pad = 600, 160, 30
    xs = [p[0] for p in points]
    ys = [v for p in points for v in p[1:] if v is not None]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    y0, y1 = min(ys), max(max(ys), min(ys) + 1e-9)

    def sx(x: float) -> float:
        return pad + (x - x0) / (x1 - x0) * (w - 2 * pad)

    def sy(y: float) -> float:
        return h - pad + (y - y0) / (y1 - y0 + 1e-12) * -(h - 2 * pad)

    line = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(v):.1f}" for i, (x, v, _, _) in enumerate(points))
    band = [(x, lo, hi) for x, _, lo, hi in points if lo is not None and hi is not None]
    area = ""
    if len(band) >= 2:
        area = ("M" + " L".join(f"{sx(x):.1f},{sy(hi):.1f}" for x, _, hi in band)
                + " L" + " L".join(f"{sx(x):.1f},{sy(lo):.1f}" for x, lo, _ in reversed(band)) + " Z")
    return {"width": w, "height": h, "line": line, "band": area, "x0": x0, "x1": x1,
            "y0": fmt(y0), "y1": fmt(y1), "left": pad, "right": w - pad, "top": pad, "bottom": h - pad}


def entrant_pages(data: SiteData, hist: list[dict[str, Any]], out: Mapping[str, str]) -> list[EntrantPage]:
    """Every entrant's page, in the leaderboard's order."""
    key, label = decides(data)
    lines = versions(data)
    lin = lineage(data)
    slugs = {n: slug(n) for n in data.entrants}
    pages = []
    for name, e in data.entrants.items():
        r = e.row
        status = out.get(name) or ("disqualified: " + str(r["disqualified"]) if r.get("disqualified") else "in the field")
        value = fmt(r.get(key))
        if r.get("ci_low") is not None and key == "pl_strength":
            value += f" [{fmt(r.get('ci_low'))}, {fmt(r.get('ci_high'))}]"
        line = lines.get(name, [name])
        series = [(h["games"], *h["e"][name]) for h in hist if isinstance(h.get("e"), dict) and name in h["e"]]
        top = sorted(e.reasons.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:20]
        page = EntrantPage(
            e, slug(name), status, f"{label} {value}",
            [(n, (lin.get(n) or {}).get("version", ""), slug(n), n == name) for n in line], _opponents(data, name, slugs),
            sorted(e.fault_kinds.items()), [(reason, c, g) for reason, (c, _, g) in top],
            len(e.reasons) - len(top) + (1 if e.other_reasons else 0),
            [(g, rk, fmt(v), f"[{fmt(lo)}, {fmt(hi)}]" if lo is not None else "") for g, rk, v, lo, hi in series][::-1],
            _chart([(g, num(v), num(lo), num(hi)) for g, _, v, lo, hi in series if num(v) is not None]))  # type: ignore[misc]
        mean_place = sum(p * k for p, k in e.places.items()) / e.n_games if e.n_games else None
        page.facts = [("Rank", str(r.get("rank", "—"))), (label, value), ("Games", str(e.n_games)),
                      ("Wins", f"{e.wins}" + (f" ({100 * e.wins / e.n_games:.0f}%)" if e.n_games else "")),
                      ("Mean place", fmt(mean_place)), ("Faults", f"{e.faults} in {e.fault_games} games"),
                      ("Status", status)]
        pages.append(page)
    return pages
