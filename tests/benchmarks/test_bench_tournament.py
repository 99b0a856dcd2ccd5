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
from harness.tournament.config import config_from
from harness.tournament import executor
from harness.tournament.executor import GameRunner, pin_to_cpu
from harness.tournament.runner import run_tournament
from harness.seeds import derive_seed
from harness.tournament.schedule import GameSpec, game_id

ROOT = Path(__file__).resolve().parents[2]
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
GAMES_PER_TABLE = 32  # with 5 tables: 160 games per run


def _config(tmp: Path, parallel: int, per_table: int, affinity: bool = False) -> dict:
    return {
        "name": f"bench-p{parallel}-{affinity}",
        "affinity": affinity,
        "seed": 5,
        "bots": [{"name": f"greedy{i}", "cmd": GREEDY} for i in range(5)],
        "table_size": 4,
        "games_per_table": per_table,
        "parallel": parallel,
        "replays": "none",
        "output": str(tmp / f"p{parallel}-{affinity}"),
    }


def test_tournament_throughput_by_parallelism(benchmark, tmp_path: Path) -> None:
    """Games per second with parallel 1 and 2 on the bundled greedy bots (and parallel 2
    with `affinity: true`), and the bot processes started (one per entrant per worker).
    With parallel 1 on this machine a CPU is to spare, so its referee works ahead while
    bots think (`cpu_to_spare`); parallel 1 without that is run too, to tell how much of
    the speed-up it takes.

    Two rates per run: over the whole run (`run_tournament`, from reading the config to
    the leaderboards written), and in the steady state, from the first game's result to
    the last one's (games per second as a long tournament plays them). What the whole
    run adds to that is a fixed cost per run, reported apart: before the first result,
    starting the workers and bots (and that first game); after the last, the statistics
    of the leaderboards and ending the workers. The machine's speed drifts over seconds,
    so the four runs are made back to back in each of several rounds, in an order that
    turns by one each round, and the speed-up is the median of the rounds' ratios."""
    per_table = 4 if benchmark.disabled else GAMES_PER_TABLE  # 5 tables of 4 entrants
    rounds = 1 if benchmark.disabled else 5
    runs: dict[tuple[int, bool], list[dict[str, float]]] = {}

    def one(parallel: int, affinity: bool = False, ahead: bool = True) -> None:
        cfg = config_from(_config(tmp_path, parallel, per_table, affinity), base=ROOT)
        spare = executor.cpu_to_spare
        if not ahead:  # the workers are forked: they see this too
            executor.cpu_to_spare = lambda *_, **__: False
        try:
            t = time.perf_counter()
            out = run_tournament(cfg, fresh=True, build_site=False)
            dt = time.perf_counter() - t
        finally:
            executor.cpu_to_spare = spare
        runs.setdefault((parallel, affinity, ahead), []).append({
            "whole": out.played / dt, "steady": (out.played - 1) / (out.playing_s - out.first_s),
            "start_s": out.first_s, "end_s": dt - out.playing_s,
            "starts": sum(out.bot_starts.values()), "games": out.played})

    def all_rounds() -> None:
        runs_of_a_round = [lambda: one(1), lambda: one(2), lambda: one(2, affinity=True), lambda: one(1, ahead=False)]
        for r in range(rounds):
            # Each round starts one place further on: a run's place in the round moved its
            # speed by several per cent (what ran right after parallel 1 was slower).
            for k in range(len(runs_of_a_round)):
                runs_of_a_round[(r + k) % len(runs_of_a_round)]()

    benchmark.pedantic(all_rounds, rounds=1, iterations=1)

    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    p1, p2, pp, p1s = runs[1, False, True], runs[2, False, True], runs[2, True, True], runs[1, False, False]
    starts = ({r["starts"] for r in p1}, {r["starts"] for r in p2}, {r["starts"] for r in pp})
    n = p1[0]["games"]
    info: dict[str, object] = {"games": n, "rounds": rounds}
    lines = []
    for rate in ("whole", "steady"):
        speedups = [b[rate] / a[rate] for a, b in zip(p1, p2)]
        pinned = [b[rate] / a[rate] for a, b in zip(p1, pp)]
        still = [b[rate] / a[rate] for a, b in zip(p1s, p2)]
        info.update({
            f"{rate}_games_per_s_parallel_1_no_work_ahead": [round(r[rate], 2) for r in p1s],
            f"{rate}_speedup_vs_no_work_ahead_median": round(median(still), 2),
            f"{rate}_games_per_s_parallel_1": [round(r[rate], 2) for r in p1],
            f"{rate}_games_per_s_parallel_2": [round(r[rate], 2) for r in p2],
            f"{rate}_games_per_s_parallel_2_pinned": [round(r[rate], 2) for r in pp],
            f"{rate}_speedup_median": round(median(speedups), 2), f"{rate}_speedups": [round(x, 2) for x in speedups],
            f"{rate}_speedup_pinned_median": round(median(pinned), 2),
            f"{rate}_speedups_pinned": [round(x, 2) for x in pinned],
        })
        lines.append(
            f"{rate}: parallel 1 {median([r[rate] for r in p1]):.2f} games/s, parallel 2 "
            f"{median([r[rate] for r in p2]):.2f}, with affinity {median([r[rate] for r in pp]):.2f} (medians); "
            f"speed-up per round {', '.join(f'{x:.2f}' for x in speedups)} (median x{median(speedups):.2f}), "
            f"with affinity {', '.join(f'{x:.2f}' for x in pinned)} (median x{median(pinned):.2f}); "
            f"parallel 1 without work ahead {median([r[rate] for r in p1s]):.2f} games/s, parallel 2 against it "
            f"{', '.join(f'{x:.2f}' for x in still)} (median x{median(still):.2f})")
    for part in ("start_s", "end_s"):
        info[f"{part}_median"] = {k: round(median([r[part] for r in v]), 3) for k, v in
                                  (("parallel_1", p1), ("parallel_2", p2), ("parallel_2_pinned", pp))}
    info["bot_processes_parallel_1"], info["bot_processes_parallel_2"] = sorted(starts[0]), sorted(starts[1])
    benchmark.extra_info.update(info)
    print(f"\nthroughput, {rounds} rounds of {n} games:\n  " + "\n  ".join(lines)
          + f"\n  to the first result (workers, bots, one game), median s: {info['start_s_median']}"
          + f"\n  after the last result (statistics, leaderboards, ending workers), median s: {info['end_s_median']}"
          + f"\n  bot processes started {sorted(starts[0])} and {sorted(starts[1])} per run")
    assert starts[0] == {5} and max(starts[1] | starts[2]) <= 10  # never one per game


@pytest.mark.parametrize("pinned", [False, True], ids=["default", "one_cpu"])
def test_refereed_game_vs_in_process(benchmark, pinned: bool) -> None:
    """A 4-player game of the Python greedy bots through the referee (child processes,
    p10/1) next to the same game, same seed and same decisions, played in-process. With
    `one_cpu`, this process and the bots are pinned to one CPU for both, and the referee
    does not work ahead while bots think (what `affinity: true` does for a worker).

    The two are played back to back for each seed, and the ratio is given both ways: of
    the total times, and the median of the per-game ratios (the machine's speed drifts
    over seconds; a pair of games played a moment apart shares the moment's speed)."""
    games = 3 if benchmark.disabled else 60
    specs = [BotSpec(f"g{i}", tuple(GREEDY)) for i in range(4)]
    bots = [BotProcess(s) for s in specs]
    mask = os.sched_getaffinity(0) if pinned else None
    if pinned and pin_to_cpu(0) is None:
        pytest.skip("cannot pin to a CPU here")
    try:
        for b, s in zip(bots, specs):
            handshake(b, s.name, TimeControl())
        t_in = t_ref = 0.0
        decisions = 0
        per_game: list[float] = []

        def run() -> None:
            nonlocal t_in, t_ref, decisions
            for seed in range(games):
                t = time.perf_counter()
                g = play_local(Rules(), [GreedyStrategy() for _ in range(4)], seed, game_id=f"g{seed}")
                a = time.perf_counter() - t
                t = time.perf_counter()
                r = play_game(bots, [s.name for s in specs], Rules(), seed, f"g{seed}", work_ahead=not pinned)
                b = time.perf_counter() - t
                t_in += a
                t_ref += b
                per_game.append(b / a)
                decisions += r.decisions
                assert r.scores == [p.score for p in g.players]  # same game, same decisions

        benchmark.pedantic(run, rounds=1, iterations=1)
    finally:
        for b in bots:
            b.stop()
        if mask is not None:
            os.sched_setaffinity(0, mask)
    ratio = t_ref / t_in
    per_game.sort()
    paired = per_game[len(per_game) // 2]
    benchmark.extra_info.update({
        "games": games, "in_process_s_per_game": round(t_in / games, 4),
        "refereed_s_per_game": round(t_ref / games, 4), "ratio": round(ratio, 2),
        "ratio_per_game_median": round(paired, 2),
        "ratio_per_game_quartiles": [round(per_game[len(per_game) // 4], 2), round(per_game[3 * len(per_game) // 4], 2)],
        "refereed_us_per_decision": round(t_ref / decisions * 1e6, 1),
    })
    print(f"\n{'pinned to one CPU: ' if pinned else ''}in-process {t_in / games * 1000:.1f} ms/game, "
          f"refereed {t_ref / games * 1000:.1f} ms/game, ratio of the totals {ratio:.2f}, "
          f"median of the per-game ratios {paired:.2f} (quartiles {per_game[len(per_game) // 4]:.2f} "
          f"and {per_game[3 * len(per_game) // 4]:.2f})")


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc to read resident memory")
def test_worker_memory_does_not_grow(benchmark, tmp_path: Path) -> None:
    """A worker's resident memory after 100 and after 2,000 games (short games: phase 1 only,
    so 2,000 fit in a benchmark run)."""
    total = 200 if benchmark.disabled else 2000
    cfg = config_from({
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


def test_duplicate_deals_fresh_processes_cost(benchmark, tmp_path: Path) -> None:
    """What it costs that no bot process is dealt a deal twice: `duplicate: true` on 4-player
    tables of the greedy bots, each bot started afresh before every rotation of a deal its
    process has played (3 games in 4), against `trusted: true` (processes kept).

    The machine is shared and its speed drifts, so the two are run in pairs, back to back,
    the order turning each pair (fresh first, then trusted first), and the cost is the
    median of the pairs' ratios."""
    per_table = 4  # 5 tables: 20 games, the first 4 of each bot's 12 or so start its processes
    pairs = 1 if benchmark.disabled else 4
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}

    def one(trusted: bool) -> None:
        data = {**_config(tmp_path, 1, per_table), "duplicate": True, "trusted": trusted,
                "name": f"dup-{trusted}", "output": str(tmp_path / f"dup-{trusted}")}
        cfg = config_from(data, base=ROOT)
        t = time.perf_counter()
        out = run_tournament(cfg, fresh=True, build_site=False)
        dt = time.perf_counter() - t
        runs[trusted].append({"whole": out.played / dt, "steady": (out.played - 1) / (out.playing_s - out.first_s),
                              "starts": sum(out.bot_starts.values()), "games": out.played})
        print(f"\n  {'trusted' if trusted else 'fresh'}: {runs[trusted][-1]}", flush=True)

    def all_pairs() -> None:
        for p in range(pairs):
            for trusted in ((False, True) if p % 2 == 0 else (True, False)):
                one(trusted)

    benchmark.pedantic(all_pairs, rounds=1, iterations=1)

    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    fresh, kept = runs[False], runs[True]
    info: dict[str, object] = {"games": fresh[0]["games"], "pairs": pairs,
                               "bot_processes_fresh": sorted({r["starts"] for r in fresh}),
                               "bot_processes_trusted": sorted({r["starts"] for r in kept})}
    lines = []
    for rate in ("whole", "steady"):
        ratios = [a[rate] / b[rate] for a, b in zip(fresh, kept)]
        info.update({f"{rate}_games_per_s_fresh": [round(r[rate], 2) for r in fresh],
                     f"{rate}_games_per_s_trusted": [round(r[rate], 2) for r in kept],
                     f"{rate}_fresh_over_trusted": [round(x, 3) for x in ratios],
                     f"{rate}_fresh_over_trusted_median": round(median(ratios), 3)})
        lines.append(f"{rate}: fresh {median([r[rate] for r in fresh]):.2f} games/s, trusted "
                     f"{median([r[rate] for r in kept]):.2f} (medians); fresh/trusted per pair "
                     f"{', '.join(f'{x:.3f}' for x in ratios)} (median {median(ratios):.3f})")
    benchmark.extra_info.update(info)
    print(f"\nduplicate deals, {pairs} pairs of {fresh[0]['games']} games:\n  " + "\n  ".join(lines)
          + f"\n  bot processes started: fresh {info['bot_processes_fresh']}, trusted {info['bot_processes_trusted']}")
    assert {r["starts"] for r in kept} == {5}  # one process per entrant
