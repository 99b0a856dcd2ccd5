"""Standings: ratings, per-entrant statistics and head-to-head from game records, with how
sure the order is (`stats`)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..report.leaderboard import COLUMNS
from .ratings import Ratings
from .stats import CONFIDENCE, RESAMPLES, bootstrap_seed, report


def build_leaderboard(
    records: Iterable[Mapping[str, Any]], entrants: Sequence[str], name: str = "", seed: int | None = None,
    disqualified: Mapping[str, str] | None = None, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
    stopping: Mapping[str, Any] | None = None, ratings: Ratings | None = None,
) -> dict[str, Any]:
    """The leaderboard of `records` (any order; they are rated in game-index order).

    Each row also has the batch Plackett–Luce rating `pl_strength` with its bootstrap
    interval `ci_low`..`ci_high` (at `confidence`, over `resamples` resamples of deal
    groups seeded from `seed`) and `settled_above`: whether its place above the next row
    is settled at `confidence` (None on the last row). The board's `statistics` section has
    the rest (`stats.report`); `stopping` (early stopping's decision, from the runner) is
    kept as the board's `stopping`. `ratings`, if given, is TrueSkill already run over
    exactly these records in index order (the runner rates games as they finish).
    """
    recs = sorted(records, key=lambda r: r["id"])
    rate = ratings is None
    if ratings is None:
        ratings = Ratings(entrants)
    stats: dict[str, dict[str, Any]] = {e: {"games": 0, "wins": 0, "place": 0, "score": 0, "phases": 0, "faults": 0,
                 "fault_kinds": {}, "places": {}} for e in entrants}
    h2h: dict[str, dict[str, dict[str, int]]] = {
        a: {b: {"games": 0, "ahead": 0, "behind": 0, "tied": 0} for b in entrants if b != a} for a in entrants
    }
    for r in recs:
        seats, places = r["seats"], r["places"]
        if r.get("reason") == "not_played":
            continue
        if rate:
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
    shown = [row["entrant"] for row in rows]
    analysis, statistics = report(recs, entrants, shown, resamples, confidence, bootstrap_seed(seed))
    for row, nxt in zip(rows, rows[1:] + [None]):
        e = row["entrant"]
        ci = analysis.ci[e]
        row["pl_strength"] = round(analysis.theta[e], 3)
        row["ci_low"] = None if ci is None else round(ci[0], 3)
        row["ci_high"] = None if ci is None else round(ci[1], 3)
        row["settled_above"] = None if nxt is None else analysis.settled(e, nxt["entrant"])
    history = ratings.history
    board = {
        "name": name,
        "seed": seed,
        "games": sum(1 for r in recs if r.get("reason") != "not_played"),
        "entrants": [{k: row[k] for k in COLUMNS} | {k: row[k] for k in row if k not in COLUMNS} for row in rows],
        "head_to_head": h2h,
        "history": {e: [list(p) for p in history[e]] for e in entrants},
        "statistics": statistics,
    }
    if stopping is not None:
        board["stopping"] = dict(stopping)
    return board
