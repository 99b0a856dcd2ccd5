"""Engine benchmarks (pytest-benchmark; no timed asserts).

    python -m pytest tests/benchmarks -q --benchmark-enable --benchmark-only

The project's addopts hold --benchmark-disable, so the ordinary test run executes each
benchmark once, as a smoke test. Figures and the target (>= 10 complete 4-player greedy
games per second on one core) are recorded in BENCHMARKS.md, section "Engine".
"""

from __future__ import annotations

import itertools
import random

import pytest

from harness.engine import DECK, PHASES, WILD, Rules, find_lay
from harness.players import GreedyStrategy, play_local

GAMES_TARGET_PER_SECOND = 10
FINDER_HANDS = 50


def test_bench_greedy_game(benchmark) -> None:
    """One complete standard game of 4 greedy players (a new seed each round)."""
    rules = Rules()
    seeds = itertools.count(1)

    def one_game() -> int:
        game = play_local(rules, [GreedyStrategy() for _ in range(4)], seed=next(seeds))
        assert game.end_reason in ("finished", "tiebreak")
        return game.hand_no

    benchmark.extra_info["target_games_per_second"] = GAMES_TARGET_PER_SECOND
    benchmark.pedantic(one_game, rounds=30, iterations=1, warmup_rounds=1)
    if benchmark.stats is not None:  # None when benchmarks are disabled (smoke run)
        benchmark.extra_info["games_per_second_mean"] = round(1 / benchmark.stats.stats.mean, 2)
        benchmark.extra_info["games_per_second_median"] = round(1 / benchmark.stats.stats.median, 2)


def hands_with_wilds(wilds: int) -> list[list]:
    """50 random 11-card hands (fixed seed) holding exactly `wilds` Wilds."""
    rng = random.Random(11 + wilds)
    naturals = [c for c in DECK if c is not WILD]
    return [rng.sample(naturals, 11 - wilds) + [WILD] * wilds for _ in range(FINDER_HANDS)]


@pytest.mark.parametrize("wilds", [0, 1, 2, 3])
def test_bench_finder(benchmark, wilds: int) -> None:
    """find_lay (as offered to players: extended) on 11-card hands, phases 1..10 in turn.
    One round = 50 hands x 10 phases = 500 calls; time per call = round time / 500."""
    hands = hands_with_wilds(wilds)
    phases = [PHASES[p] for p in range(1, 11)]
    calls = len(hands) * len(phases)

    def batch() -> int:
        found = 0
        for hand in hands:
            for phase in phases:
                if find_lay(hand, phase) is not None:
                    found += 1
        return found

    found = benchmark.pedantic(batch, rounds=20, iterations=1, warmup_rounds=1)
    benchmark.extra_info["calls_per_round"] = calls
    benchmark.extra_info["share_with_a_lay"] = round(found / calls, 4)
    if benchmark.stats is not None:
        benchmark.extra_info["us_per_call_mean"] = round(1e6 * benchmark.stats.stats.mean / calls, 1)
        benchmark.extra_info["us_per_call_median"] = round(1e6 * benchmark.stats.stats.median / calls, 1)
