"""Standings: the leaderboard of the games, from their records or their running aggregates
(`tally.Tally`): ratings, per-entrant statistics and head-to-head, with how sure the order
is (`section`)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence, cast

from ..model import Board, BoardRow, StopDecision
from ..report.columns import COLUMNS
from .bootstrap import RESAMPLES, bootstrap_seed
from .collusion import collusion_report
from .paired import SPARSE_ABOVE
from .section import report
from .significance import CONFIDENCE
from .tally import Tally
from .trueskill import Ratings


def build_leaderboard(
    records: Iterable[Mapping[str, Any]], entrants: Sequence[str], name: str = "", seed: int | None = None,
    disqualified: Mapping[str, str] | None = None, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
    stopping: Mapping[str, Any] | None = None, ratings: Ratings | None = None, sequential: bool = False,
    draw_probability: float | None = None,
) -> Board:
    """The leaderboard of `records` (any order; they are rated in game-index order).

    `ratings`, if given, is TrueSkill already run over exactly these records in index order
    (the runner rates games as they finish); otherwise they are rated with
    `draw_probability` (default: that of the standard game; the runner passes the
    variant's). The rest is `tally_leaderboard`'s."""
    tally = Tally(entrants, draw_probability, ratings=ratings is None)
    for r in sorted(records, key=lambda r: r["id"]):
        tally.add(r)
    return tally_leaderboard(tally, name, seed, disqualified, confidence, resamples, stopping, ratings, sequential)


def tally_leaderboard(
    tally: Tally, name: str = "", seed: int | None = None, disqualified: Mapping[str, str] | None = None,
    confidence: float = CONFIDENCE, resamples: int = RESAMPLES, stopping: Mapping[str, Any] | None = None,
    ratings: Ratings | None = None, sequential: bool = False, bootstrap: int | None = None,
) -> Board:
    """The leaderboard of the games in `tally` (`bootstrap`: the bootstrap's seed, if not
    the one `seed` gives: where the seed is secret, the one the board published).

    The rows are in the order of the batch Plackett–Luce rating `pl_strength` (disqualified
    entrants last), each with its bootstrap interval `ci_low`..`ci_high` (at `confidence`,
    over `resamples` resamples of deal groups seeded from `seed`), `settled_above`: whether
    its place above the next row is settled at `confidence` by the paired deal test (None
    on the last row), and `next`: that test's verdict ("settled", "open", "too few deals",
    "no evidence of a difference"). TrueSkill (μ, σ, μ − 3σ) is the other rating, shown
    beside it: `ratings` if given (e.g. a checkpoint of them), else the tally's own. With
    `sequential` (a tournament with early stopping) the test is the anytime-valid one. The
    board's `statistics` section has the rest (`section.report`); `stopping` (early
    stopping's decision, from the runner) is kept as the board's `stopping`.

    Sizes: with more than `paired.SPARSE_ABOVE` entrants, `head_to_head` (and the
    statistics' `pairs_met`) list only the pairs that met; pairs not listed never met.
    """
    entrants = tally.entrants
    if ratings is None:
        ratings = tally.final_ratings()
    if ratings is None:
        raise ValueError("no TrueSkill ratings: the tally was kept without them and none were given")
    rows = _rows(tally, ratings, disqualified or {})
    dq = {e for e in entrants if (disqualified or {}).get(e)}
    boot = bootstrap_seed(seed) if bootstrap is None else bootstrap
    analysis, statistics = report(tally.arrays(), entrants, resamples, confidence, boot, last=dq, sequential=sequential)
    theta = analysis.theta
    rank = {e: i for i, e in enumerate(statistics["order"])}
    rows.sort(key=lambda x: rank[x["entrant"]])
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    tests = {(nb["upper"], nb["lower"]): nb for nb in statistics["neighbours"]}
    for row, nxt in zip(rows, rows[1:] + [None]):
        e = row["entrant"]
        ci = analysis.ci[e]
        row["pl_strength"] = round(theta[e], 3)
        row["ci_low"] = None if ci is None else round(ci[0], 3)
        row["ci_high"] = None if ci is None else round(ci[1], 3)
        nb = None if nxt is None else tests.get((e, nxt["entrant"]))
        row["settled_above"] = None if nxt is None else bool(nb and nb["settled"])
        row["next"] = None if nxt is None or nb is None else nb["verdict"]
    history = ratings.history
    board: Board = {
        "name": name,
        "seed": seed,
        "games": tally.played,
        "entrants": [cast(BoardRow, {k: row[k] for k in COLUMNS} | {k: row[k] for k in row if k not in COLUMNS})
                     for row in rows],
        "head_to_head": tally.head_to_head(sparse=len(entrants) > SPARSE_ABOVE),
        "history": {e: [list(p) for p in history[e]] for e in entrants},
        "statistics": statistics,
    }
    collusion = collusion_report(tally.passes)
    board["collusion"] = collusion.listed
    board["collusion_pairs"] = collusion.pairs
    if stopping is not None:
        board["stopping"] = cast(StopDecision, dict(stopping))
    return board


def _rows(tally: Tally, ratings: Ratings, disqualified: Mapping[str, str]) -> list[dict[str, Any]]:
    """A row of the board per entrant, in the tally's order: TrueSkill and the sums."""
    sums = tally.sums
    table = ratings.table()
    rows: list[dict[str, Any]] = []
    for i, e in enumerate(tally.entrants):
        mu, sigma = table[e]
        games = sums["games"][i]
        g = games or 1
        rows.append({
            "entrant": e,
            "mu": round(mu, 3),
            "sigma": round(sigma, 3),
            "conservative": round(mu - 3 * sigma, 3),
            "games": games,
            "wins": sums["wins"][i],
            "win_rate": round(sums["wins"][i] / g, 4),
            "mean_place": round(sums["place"][i] / g, 3),
            "mean_score": round(sums["score"][i] / g, 2),
            "mean_phases": round(sums["phases"][i] / g, 3),
            "faults": sums["faults"][i],
            "fault_kinds": dict(sorted(tally.fault_kinds[i].items())),
            **({"first_fault": dict(zip(("game", "kind", "reason"), first[1:]))}
               if (first := tally.first_fault[i]) is not None else {}),
            "place_counts": {str(k): v for k, v in sorted(tally.place_counts[i].items())},
            "disqualified": disqualified.get(e),
        })
    return rows
