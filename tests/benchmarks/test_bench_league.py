"""League matchmaking against random tables: how many games until the order of 8 entrants
of known strength is settled at 95 % (the anytime-valid test of `stop_when: settled`,
`check_settled`), looked at after every round of 40 games. Disabled by default (run with
--benchmark-enable; the figures are in BENCHMARKS.md, "League matchmaking").

The players are synthetic, so a run takes seconds: a two-seat table's winner is drawn from
the entrants' Bradley–Terry strengths (P(i ahead of j) = s_i / (s_i + s_j)), the strengths
a geometric ladder, each entrant `RATIO` times as strong as the one below it. The tables
come from the real schedulers: `Matchmaker.round` for `format: league` and `schedule` for
`format: random`.
"""

from __future__ import annotations

import random
import statistics
from typing import Any

from harness.tournament.config import config_from
from harness.tournament.league import Matchmaker
from harness.tournament.schedule import schedule
from harness.ratings.stopping import check_settled

ENTRANTS = [f"e{i}" for i in range(8)]  # e0 the strongest
RATIO = 2.5  # P(e_k ahead of e_{k+1}) = 2.5 / 3.5 = 0.714
ROUND = 40
BUDGET = 8000


def _cfg(fmt: str, seed: int) -> Any:
    data = {"name": "bench", "seed": seed, "format": fmt, "games": BUDGET, "table_size": 2, "sandbox": "none",
            "bots": [{"name": e, "cmd": ["python", "-c", "pass"]} for e in ENTRANTS]}
    if fmt == "league":
        data["league"] = {"round_games": ROUND, "min_games": 10}
    return config_from(data)


def _play(seats: tuple[str, ...], rng: random.Random) -> list[int]:
    s = [RATIO ** -ENTRANTS.index(e) for e in seats]
    first = 0 if rng.random() < s[0] / (s[0] + s[1]) else 1
    return [1, 2] if first == 0 else [2, 1]


def _record(spec: Any, places: list[int]) -> dict[str, Any]:
    return {"id": spec.index, "game": spec.game, "seed": spec.seed, "group": spec.group, "seats": list(spec.seats), "places": places,
            "scores": [0, 0], "phases": [0, 0], "reason": "finished", "faults": [], "forfeits": []}


def games_to_settle(fmt: str, seed: int) -> int:
    """Games played when the order of the 8 is first settled at 95 % (BUDGET if never)."""
    cfg = _cfg(fmt, seed)
    rng = random.Random(seed * 7919 + (fmt == "league"))
    records: dict[int, dict[str, Any]] = {}
    planned = iter(schedule(cfg)) if fmt == "random" else None
    mm = Matchmaker(cfg) if fmt == "league" else None
    while len(records) < BUDGET:
        if mm is not None:
            rnd = mm.round(len(records), ENTRANTS, records)
        else:
            assert planned is not None
            rnd = [next(planned) for _ in range(ROUND)]
        for spec in rnd:
            records[spec.index] = _record(spec, _play(spec.seats, rng))
        check = check_settled(records.values(), ENTRANTS, confidence=0.95)
        if check.settled:
            assert check.order == ENTRANTS, check.order  # settled, and right
            return len(records)
    return BUDGET


def compare(seeds: int) -> dict[str, list[int]]:
    """Games to settle, per format, over `seeds` seeds."""
    return {fmt: [games_to_settle(fmt, s) for s in range(1, seeds + 1)] for fmt in ("league", "random")}


def test_bench_league_settles_in_fewer_games_than_random(benchmark: Any) -> None:
    seeds = 2 if benchmark.disabled else 20  # the ordinary test run only smoke-tests benchmarks
    res = benchmark.pedantic(compare, args=(seeds,), rounds=1, iterations=1)
    league, rand = statistics.median(res["league"]), statistics.median(res["random"])
    print(f"\ngames to settle 8 entrants at 95 % over {seeds} seeds: league median {league:.0f} "
          f"(mean {statistics.mean(res['league']):.0f}), random median {rand:.0f} (mean "
          f"{statistics.mean(res['random']):.0f}); league {res['league']}; random {res['random']}")
    assert all(n <= BUDGET for n in res["league"] + res["random"])
    if not benchmark.disabled:
        assert league < rand
