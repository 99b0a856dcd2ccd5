"""Tournament-level speed: throughput by parallelism, bot processes started, refereed vs
in-process games, and a worker's memory over many games.

Run:  python -m pytest tests/benchmarks/test_bench_tournament.py --benchmark-enable -q -s
In the normal test run (benchmarks disabled) each runs once on a small workload as a smoke
test. Figures go to BENCHMARKS.md; nothing here asserts a speed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from harness.engine import Rules
from harness.players import GreedyStrategy, play_local
from harness.referee import BotProcess, BotSpec, TimeControl, handshake, play_game
from harness.tournament.config import parse_config
from harness.tournament.executor import GameRunner
from harness.tournament.runner import run_tournament
from harness.tournament.schedule import GameSpec, derive_seed, game_id

ROOT = Path(__file__).resolve().parents[2]
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]


def _config(tmp: Path, parallel: int, per_table: int) -> dict:
    return {
        "name": f"bench-p{parallel}",
        "seed": 5,
        "bots": [{"name": f"greedy{i}", "cmd": GREEDY} for i in range(5)],
        "table_size": 4,
        "games_per_table": per_table,
        "parallel": parallel,
        "replays": "none",
        "output": str(tmp / f"p{parallel}"),
    }


def test_tournament_throughput_by_parallelism(benchmark, tmp_path: Path) -> None:
    """Games per second with parallel 1 and 2 on the bundled greedy bots, and the bot
    processes started (one per entrant per worker)."""
    per_table = 4 if benchmark.disabled else 16  # 5 tables of 4 entrants
    figures = {}

    def one(parallel: int) -> None:
        cfg = parse_config(_config(tmp_path, parallel, per_table), base=ROOT)
        t = time.perf_counter()
        out = run_tournament(cfg, fresh=True, build_site=False)
        dt = time.perf_counter() - t
        figures[parallel] = (out.played / dt, sum(out.bot_starts.values()), out.played)

    def both() -> None:
        one(1)
        one(2)

    benchmark.pedantic(both, rounds=1, iterations=1)
    (g1, s1, n), (g2, s2, _) = figures[1], figures[2]
    benchmark.extra_info.update({
        "games": n, "games_per_s_parallel_1": round(g1, 2), "games_per_s_parallel_2": round(g2, 2),
        "speedup": round(g2 / g1, 2), "bot_processes_parallel_1": s1, "bot_processes_parallel_2": s2,
    })
    print(f"\nthroughput: parallel 1 {g1:.2f} games/s, parallel 2 {g2:.2f} games/s, x{g2 / g1:.2f}; "
          f"bot processes started {s1} and {s2} for {n} games")
    assert s1 == 5 and s2 <= 10  # never one per game


def test_refereed_game_vs_in_process(benchmark) -> None:
    """A 4-player game of the Python greedy bots through the referee (child processes,
    p10/1) next to the same game, same seed and same decisions, played in-process."""
    games = 3 if benchmark.disabled else 30
    specs = [BotSpec(f"g{i}", tuple(GREEDY)) for i in range(4)]
    bots = [BotProcess(s) for s in specs]
    try:
        for b, s in zip(bots, specs):
            handshake(b, s.name, TimeControl())
        t_in = t_ref = 0.0
        decisions = 0

        def run() -> None:
            nonlocal t_in, t_ref, decisions
            for seed in range(games):
                t = time.perf_counter()
                g = play_local(Rules(), [GreedyStrategy() for _ in range(4)], seed, game_id=f"g{seed}")
                t_in += time.perf_counter() - t
                t = time.perf_counter()
                r = play_game(bots, [s.name for s in specs], Rules(), seed, f"g{seed}")
                t_ref += time.perf_counter() - t
                decisions += r.decisions
                assert r.scores == [p.score for p in g.players]  # same game, same decisions

        benchmark.pedantic(run, rounds=1, iterations=1)
    finally:
        for b in bots:
            b.stop()
    ratio = t_ref / t_in
    benchmark.extra_info.update({
        "games": games, "in_process_s_per_game": round(t_in / games, 4),
        "refereed_s_per_game": round(t_ref / games, 4), "ratio": round(ratio, 2),
        "refereed_us_per_decision": round(t_ref / decisions * 1e6, 1),
    })
    print(f"\nin-process {t_in / games * 1000:.1f} ms/game, refereed {t_ref / games * 1000:.1f} ms/game, ratio {ratio:.2f}")


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc to read resident memory")
def test_worker_memory_does_not_grow(benchmark, tmp_path: Path) -> None:
    """A worker's resident memory after 100 and after 2,000 games (short games: phase 1 only,
    so 2,000 fit in a benchmark run)."""
    total = 200 if benchmark.disabled else 2000
    cfg = parse_config({
        "name": "mem", "seed": 1, "bots": [{"name": "a", "cmd": GREEDY}, {"name": "b", "cmd": GREEDY}],
        "rules": {"phases": [1]}, "replays": "failed", "output": str(tmp_path / "mem"),
    }, base=ROOT)
    runner = GameRunner(cfg, "w0", tmp_path / "logs")
    marks = {}

    def run() -> None:
        for i in range(total):
            spec = GameSpec(i, game_id(i), ("a", "b") if i % 2 == 0 else ("b", "a"), derive_seed(1, i), i)
            runner.run(spec)
            if i + 1 in (100, total):
                marks[i + 1] = _rss_kib()

    try:
        benchmark.pedantic(run, rounds=1, iterations=1)
    finally:
        runner.close()
    benchmark.extra_info.update({f"rss_kib_after_{k}": v for k, v in marks.items()})
    print(f"\nworker RSS: {marks}")
    assert all(n == 1 for n in runner.starts.values())
