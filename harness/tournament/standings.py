"""Standings: ratings, per-entrant statistics and head-to-head from game records."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..report.leaderboard import COLUMNS
from .ratings import Ratings


def build_leaderboard(
    records: Iterable[Mapping[str, Any]], entrants: Sequence[str], name: str = "", seed: int | None = None,
    disqualified: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The leaderboard of `records` (any order; they are rated in game-index order)."""
    recs = sorted(records, key=lambda r: r["id"])
    ratings = Ratings(entrants)
    stats = {e: {"games": 0, "wins": 0, "place": 0, "score": 0, "phases": 0, "faults": 0,
                 "fault_kinds": {}, "places": {}} for e in entrants}
    h2h: dict[str, dict[str, dict[str, int]]] = {
        a: {b: {"games": 0, "ahead": 0, "behind": 0, "tied": 0} for b in entrants if b != a} for a in entrants
    }
    for r in recs:
        seats, places = r["seats"], r["places"]
        if r.get("reason") == "not_played":
            continue
        ratings.update(r["id"], seats, places)
        for i, e in enumerate(seats):
            s = stats[e]
            s["games"] += 1
            s["wins"] += places[i] == 1
            s["place"] += places[i]
            s["score"] += r["scores"][i]
            s["phases"] += r["phases"][i]
            s["places"][places[i]] = s["places"].get(places[i], 0) + 1
            for j, o in enumerate(seats):
                if o == e:
                    continue
                h = h2h[e][o]
                h["games"] += 1
                h["ahead" if places[i] < places[j] else "behind" if places[i] > places[j] else "tied"] += 1
        for f in r.get("faults", []):
            s = stats[f["entrant"]]
            s["faults"] += 1
            s["fault_kinds"][f["kind"]] = s["fault_kinds"].get(f["kind"], 0) + 1
    rows = []
    for e in entrants:
        mu, sigma = ratings.table()[e]
        s = stats[e]
        g = s["games"] or 1
        rows.append({
            "entrant": e,
            "mu": round(mu, 3),
            "sigma": round(sigma, 3),
            "conservative": round(mu - 3 * sigma, 3),
            "games": s["games"],
            "wins": s["wins"],
            "win_rate": round(s["wins"] / g, 4),
            "mean_place": round(s["place"] / g, 3),
            "mean_score": round(s["score"] / g, 2),
            "mean_phases": round(s["phases"] / g, 3),
            "faults": s["faults"],
            "fault_kinds": dict(sorted(s["fault_kinds"].items())),
            "place_counts": {str(k): v for k, v in sorted(s["places"].items())},
            "disqualified": (disqualified or {}).get(e),
        })
    rows.sort(key=lambda x: (x["disqualified"] is not None, -x["conservative"], -x["mu"], x["entrant"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return {
        "name": name,
        "seed": seed,
        "games": sum(1 for r in recs if r.get("reason") != "not_played"),
        "entrants": [{k: row[k] for k in COLUMNS} | {k: row[k] for k in row if k not in COLUMNS} for row in rows],
        "head_to_head": h2h,
        "history": {e: [list(p) for p in ratings.history[e]] for e in entrants},
    }
