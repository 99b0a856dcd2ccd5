"""The numbers behind the site's charts, for the templates to draw: the μ ± 3σ whiskers,
the rating history, the head-to-head heat map and table, and the places chart."""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any, Iterable

from .data import Entrant, HeadToHead, SiteData
from .values import RGB, fmt, hex_color, ink_on, lerp_color, nice_ticks, num, ordinal, tick_label

Domain = tuple[float, float]

WHISKER_W, WHISKER_H, WHISKER_PAD = 190, 24, 8
"""A whisker's width and height, and its margin left and right (px)."""

CHART_W, CHART_H, CHART_LEFT, CHART_RIGHT, CHART_TOP_MARGIN, CHART_BOTTOM = 1000, 320, 46, 18, 14, 36
"""The rating history's size and margins (index.js draws with the same)."""

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

_HEAT: tuple[RGB, ...] = ((178, 24, 43), (240, 226, 160), (33, 102, 172))  # 50 %: sand, seen on white
_PLACE_STOPS: tuple[RGB, ...] = ((46, 125, 50), (139, 195, 74), (243, 156, 18), (198, 40, 40))


# --------------------------------------------------------------------------- whiskers

def whisker_domain(entrants: Iterable[Entrant]) -> Domain | None:
    """The μ range the whiskers share: every entrant's μ ± 3σ, padded."""
    lows, highs = [], []
    for e in entrants:
        mu, sigma = num(e.row.get("mu")), num(e.row.get("sigma"))
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


def _wx(v: float, dom: Domain) -> float:
    lo, hi = dom
    return WHISKER_PAD + (v - lo) / (hi - lo) * (WHISKER_W - 2 * WHISKER_PAD)


def whisker_axis(dom: Domain) -> list[tuple[float, str]]:
    """(x, label) of the ticks above the whiskers' column."""
    ticks = ((_wx(t, dom), tick_label(t)) for t in nice_ticks(dom[0], dom[1], 4))
    return [(x, label) for x, label in ticks if WHISKER_PAD - 1 <= x <= WHISKER_W - WHISKER_PAD + 1]


def whisker_frame(dom: Domain | None) -> dict[str, Any]:
    """What every whisker shares: its size, its middle, and the x of its grid lines."""
    grid = [f"{_wx(t, dom):.1f}" for t in nice_ticks(dom[0], dom[1], 4)] if dom else []
    return {"width": WHISKER_W, "height": WHISKER_H, "y": WHISKER_H / 2, "grid": grid}


@dataclass(slots=True)
class Whisker:
    """Where one entrant's whisker (μ ± 3σ) lies: its ends and its middle (x, as written)."""

    x0: str
    x1: str
    xm: str
    width: str
    color: str
    title: str


def whisker(e: Entrant, dom: Domain) -> Whisker | None:
    """The whisker of `e`; None without a rating."""
    mu, sigma = num(e.row.get("mu")), num(e.row.get("sigma")) or 0.0
    if mu is None:
        return None
    lo, hi = mu - 3 * sigma, mu + 3 * sigma
    x0, x1 = _wx(lo, dom), _wx(hi, dom)
    return Whisker(f"{x0:.1f}", f"{x1:.1f}", f"{_wx(mu, dom):.1f}", f"{max(x1 - x0, 1):.1f}", e.color,
                   f"{e.name}: μ {mu:.2f} ± {3 * sigma:.2f} (3σ) → {lo:.2f} … {hi:.2f}")


# --------------------------------------------------------------------------- rating history

def _history_points(item_list: Any) -> list[tuple[int, float]]:
    """(games played, μ) of one entrant's history in leaderboard.json, thinned to at most
    SITE_HISTORY_POINTS evenly spaced points (the first and the last kept)."""
    pts: list[tuple[int, float]] = []
    isfinite = math.isfinite
    for i, item in enumerate(item_list or []):
        if not isinstance(item, (list, tuple)) or len(item) < 2:
            continue
        mu = item[1]
        if isinstance(mu, (int, float)) and not isinstance(mu, bool) and isfinite(mu):  # as `num`, inline: 200k points
            pts.append((item[2] if len(item) >= 3 and isinstance(item[2], int) else i + 1, float(mu)))
    if len(pts) > SITE_HISTORY_POINTS:
        last = len(pts) - 1
        pts = [pts[round(k * last / (SITE_HISTORY_POINTS - 1))] for k in range(SITE_HISTORY_POINTS)]
    return pts


def _history_chart(series: list[tuple[str, str, list[tuple[int, float]]]]) -> dict[str, Any]:
    """The rating chart of `series` (name, colour, points) in the chart's coordinates."""
    W, H, ml, mr, mt, mb = CHART_W, CHART_H, CHART_LEFT, CHART_RIGHT, CHART_TOP_MARGIN, CHART_BOTTOM
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

    lines = []
    for name, color, pts in series:
        last_x, last_y = pts[-1]
        lines.append({
            "d": " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(pts)),
            "color": color, "cx": sx(last_x), "cy": sy(last_y), "title": f"{name}: μ {last_y:.2f} after {last_x} games",
        })
    return {
        "width": W, "height": H, "left": ml, "right": W - mr, "top": mt, "bottom": H - mb,
        "y_ticks": [(sy(t), tick_label(t)) for t in nice_ticks(y_lo, y_hi, 5)],
        "x_ticks": [(sx(t), tick_label(t)) for t in nice_ticks(x_lo, x_hi, 8) if t == int(t)],
        "series": lines,
    }


def _flat(points: list[tuple[int, float]]) -> list[float]:
    """[x0, y0, x1, y1, …], μ to 2 decimals."""
    out: list[float] = []
    for x, y in points:
        out += (x, round(y, 2))
    return out


def history(data: SiteData) -> dict[str, Any] | None:
    """The rating history: the chart of the top entrants, and every entrant's points for
    index.js; None if no history was recorded."""
    hist = data.leaderboard.get("history") or {}
    points = {e: _history_points(hist.get(e)) for e in data.entrants}
    names = [e for e in data.entrants if points[e]]
    if not names:
        return None
    series = [(e, LINE_COLORS[i], points[e]) for i, e in enumerate(names[:CHART_TOP])]
    payload = {"names": names, "colors": LINE_COLORS, "top": CHART_TOP,
               "points": [_flat(points[e]) for e in names]}
    return {"names": names, "legend": [(name, color) for name, color, _ in series], "chart": _history_chart(series),
            "payload": payload, "top": CHART_TOP, "max_lines": MAX_LINES}


# --------------------------------------------------------------------------- head to head

def _varints(out: bytearray, *values: int) -> None:
    for v in values:
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)


def _pair_counts(names: list[str], h2h: HeadToHead) -> bytes:
    """The pairs i < j (row i, in the order of `names`) that met, in order, each as unsigned
    LEB128 varints (7 bits a byte, low bits first): the pairs skipped since the last one
    (that never met), then ahead, behind and tied of i against j. A thousand entrants have
    500,000 pairs, of which a long tournament has met a fraction."""
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    out = bytearray()
    last = -1
    for i, a in enumerate(names):
        row = h2h.get(a) or {}
        for j, b in sorted((j, b) for b in row if (j := index.get(b, -1)) > i):
            c = row[b] or {}
            k = i * n - i * (i + 1) // 2 + (j - i - 1)
            _varints(out, k - last - 1, int(c.get("ahead", 0) or 0), int(c.get("behind", 0) or 0),
                     int(c.get("tied", 0) or 0))
            last = k
    return bytes(out)


def _heat_payload(data: SiteData) -> dict[str, Any]:
    """The heat map's data: the entrants in rank order with what the map sorts by, and
    the pairs' counts (`_pair_counts`) in base64 (a few bytes a pair that met, whatever
    the number of games)."""
    names = list(data.entrants)
    rows = [data.entrants[n].row for n in names]
    return {
        "names": names,
        "rank": [r.get("rank", i + 1) for i, r in enumerate(rows)],
        "rating": [num(r.get("conservative")) for r in rows],
        "pl": [num(r.get("pl_strength")) for r in rows],
        "pairs": base64.b64encode(_pair_counts(names, data.head_to_head)).decode(),
    }


def _h2h_cell(a: str, b: str, c: dict[str, int]) -> dict[str, Any]:
    """One cell of the head-to-head table: row `a` against column `b`."""
    if a == b:
        return {"kind": "self"}
    n = c.get("games", 0) or 0
    if not n:
        return {"kind": "never", "title": f"{a} never met {b}"}
    ahead, behind, tied = c.get("ahead", 0), c.get("behind", 0), c.get("tied", 0)
    share = ahead / n
    rgb = lerp_color(_HEAT, share)
    return {"kind": "met", "title": f"{a} placed ahead of {b} in {ahead} of {n} games ({behind} behind, {tied} tied)",
            "share": f"{share:.3f}", "background": hex_color(rgb), "ink": ink_on(rgb),
            "percent": f"{share * 100:.0f}%", "count": f"{ahead}/{n}"}


def head_to_head(data: SiteData) -> dict[str, Any]:
    """The heat map's data, and the table of cells for a small field (None beyond)."""
    names = list(data.entrants)
    table = None
    if len(names) <= TABLE_H2H_MAX:
        h2h = data.head_to_head
        table = [(a, [_h2h_cell(a, b, (h2h.get(a) or {}).get(b) or {}) for b in names]) for a in names]
    return {"names": names, "table": table, "payload": _heat_payload(data)}


# --------------------------------------------------------------------------- places

def places(data: SiteData) -> dict[str, Any] | None:
    """How often the first PLACES_ROWS entrants finished in each place; None before any game."""
    max_place = max((p for e in data.entrants.values() for p in e.places), default=0)
    if not max_place:
        return None
    colors = [lerp_color(_PLACE_STOPS, (i / (max_place - 1)) if max_place > 1 else 0.0) for i in range(max_place)]
    rows = []
    shown = list(data.entrants.values())[:PLACES_ROWS]
    for e in shown:
        total = sum(e.places.values())
        segments = []
        for p in range(1, max_place + 1):
            k = e.places.get(p, 0)
            if not k or not total:
                continue
            pct = 100 * k / total
            rgb = colors[p - 1]
            segments.append({
                "width": f"{pct:.2f}", "background": hex_color(rgb), "ink": ink_on(rgb),
                "title": f"{e.name}: {ordinal(p)} place in {k} of {total} games ({pct:.0f}%)",
                "label": f"{ordinal(p)}: {k}" if pct >= 14 else (str(k) if pct >= 5 else ""),
            })
        mean = sum(p * k for p, k in e.places.items()) / total if total else None
        rows.append({"name": e.name, "segments": segments, "total": total, "mean": fmt(mean)})
    return {"rows": rows, "entrants": len(data.entrants),
            "legend": [(hex_color(c), ordinal(i + 1)) for i, c in enumerate(colors)]}
