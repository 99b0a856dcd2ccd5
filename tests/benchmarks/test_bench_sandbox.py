"""What the sandbox costs: per bot start, per decision, and in tournament throughput, each
next to the same without it (`sandbox: none`).

    python -m pytest tests/benchmarks/test_bench_sandbox.py --benchmark-enable -q -s

The machine's speed drifts, so the two sides are measured in pairs, back to back, their
order turning each pair, and each figure is the median of the per-pair values. With
benchmarks disabled (the normal test run) each runs once, small, as a smoke test; nothing
here asserts a speed. Figures are in BENCHMARKS.md, section "Sandbox".
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.engine import Rules
from harness.players import play_local
from harness.referee import BotProcess, BotSpec, TimeControl, encode, handshake, play_game
from harness.sandbox.box import Sandbox
from harness.sandbox.modes import bwrap_available
from harness.tournament.config import config_from, with_sandbox
from harness.tournament.runner import run_tournament
from test_bench_referee import Recording, replies_files  # the same recording greedy player

ROOT = Path(__file__).resolve().parents[2]
INSTANT = ROOT / "tests" / "bots" / "instant.py"
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
TC = TimeControl(move_ms=10_000, startup_ms=20_000)
OK, WHY = bwrap_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")
MODES = ("bwrap", "none")


def _paired(n: int, fn: Any, sides: tuple[str, str] = MODES) -> dict[str, list[float]]:
    """`fn(side)` for both sides (default: the two modes), n pairs, the order turning each pair."""
    out: dict[str, list[float]] = {m: [] for m in sides}
    for i in range(n):
        for m in (sides if i % 2 == 0 else sides[::-1]):
            out[m].append(fn(m))
    return out


def _summary(name: str, unit: str, got: dict[str, list[float]], scale: float = 1.0) -> dict[str, Any]:
    (ka, a), (kb, b) = got.items()
    diffs = [(x - y) * scale for x, y in zip(a, b)]
    ratios = [x / y for x, y in zip(a, b)]
    info = {"pairs": len(a), f"{ka}_median_{unit}": round(statistics.median(a) * scale, 2),
            f"{kb}_median_{unit}": round(statistics.median(b) * scale, 2),
            f"difference_median_{unit}": round(statistics.median(diffs), 2),
            "ratio_median": round(statistics.median(ratios), 3)}
    print(f"\n{name}: {ka} {info[f'{ka}_median_{unit}']} {unit}, {kb} {info[f'{kb}_median_{unit}']} {unit} "
          f"(medians of {len(a)} pairs); difference per pair, median {info[f'difference_median_{unit}']} {unit}; "
          f"ratio per pair, median x{info['ratio_median']}")
    return info


@pytest.mark.parametrize("bot", ["instant", "greedy"])
def test_cost_per_bot_start(benchmark, bot: str, tmp_path: Path) -> None:
    """From `start()` to the hello reply read, and the ending (`bye`, then `stop()`), with
    and without the sandbox (its cgroup included, where one can be made)."""
    replies = tmp_path / "r.jsonl"
    replies.write_text("")
    argv = (sys.executable, str(INSTANT), str(replies)) if bot == "instant" else tuple(GREEDY)
    pairs = 1 if benchmark.disabled else 20
    ends: dict[str, list[float]] = {m: [] for m in MODES}

    def once(mode: str) -> float:
        p = BotProcess(BotSpec("b", argv, cwd=str(ROOT), sandbox=Sandbox(mode=mode)))
        t = time.perf_counter()
        handshake(p, "b", TC)
        dt = time.perf_counter() - t
        t = time.perf_counter()
        p.send(encode({"type": "bye"}))
        p.stop()
        ends[mode].append(time.perf_counter() - t)
        return dt

    got: dict[str, list[float]] = {}
    benchmark.pedantic(lambda: got.update(_paired(pairs, once)), rounds=1, iterations=1)
    info = _summary(f"start to hello, {bot} bot", "ms", got, 1000)
    info.update({f"end_{k}": v for k, v in _summary(f"bye to ended, {bot} bot", "ms", ends, 1000).items()})
    benchmark.extra_info.update(info)


def test_cost_of_a_bot_start_in_a_folder_of_100k_folders(benchmark, tmp_path: Path) -> None:
    """A sandboxed bot whose own folder holds 99,000 empty folders (a small one when
    benchmarks are disabled): the search of its folders for results folders that each
    start makes (`marked_at_start`, the bounded search), the whole search that a process
    makes once (the first `marked_at_start`: what every start made before), and start to hello of
    the instant bot in that folder next to the same bot in a folder of its own (after a
    first start of each, which searches the whole folder)."""
    from harness.sandbox import marks as sandbox
    from harness.ledger.names import CONCEAL

    replies = tmp_path / "r.jsonl"
    replies.write_text("")
    outer, inner = (2, 10) if benchmark.disabled else (100, 990)
    folders = {"many": tmp_path / "many", "one": tmp_path / "one"}
    for i in range(outer):
        (folders["many"] / f"d{i:02}").mkdir(parents=True)
        for j in range(inner):
            os.mkdir(folders["many"] / f"d{i:02}" / f"e{j:03}")
    folders["one"].mkdir()
    for f in folders.values():
        shutil.copy(INSTANT, f / "instant.py")
    specs = {k: BotSpec(k, (sys.executable, str(f / "instant.py"), str(replies)), cwd=str(f),
                        sandbox=Sandbox(mode="bwrap", own=str(f), conceal=CONCEAL)) for k, f in folders.items()}
    n = 1 if benchmark.disabled else 20
    t = time.perf_counter()
    sandbox.marked_at_start(str(folders["many"]), CONCEAL)  # the first in this process: the whole search
    whole = time.perf_counter() - t
    searches = []
    for _ in range(n):
        t = time.perf_counter()
        sandbox.marked_at_start(str(folders["many"]), CONCEAL)
        searches.append(time.perf_counter() - t)

    def once(kind: str) -> float:
        p = BotProcess(specs[kind])
        t = time.perf_counter()
        handshake(p, kind, TC)
        dt = time.perf_counter() - t
        p.send(encode({"type": "bye"}))
        p.stop()
        return dt

    for kind in specs:  # (the first start in this process searches the whole folder)
        once(kind)
    got: dict[str, list[float]] = {}
    benchmark.pedantic(lambda: got.update(_paired(n, once, ("many", "one"))), rounds=1, iterations=1)
    info = _summary(f"start to hello, instant bot in a folder of {outer * inner:,} folders or of none", "ms", got, 1000)
    info.update({"search_at_start_median_ms": round(statistics.median(searches) * 1000, 3),
                 "whole_search_ms": round(whole * 1000, 1), "folders": outer * inner})
    print(f"search at a start: median {info['search_at_start_median_ms']} ms of {n}; the whole search (once a "
          f"process): {info['whole_search_ms']} ms")
    benchmark.extra_info.update(info)


def test_cost_per_decision(benchmark, tmp_path: Path) -> None:
    """A refereed 4-player game of instant bots (tests/bots/instant.py: they replay the
    replies of a recorded greedy game, with no thinking), bots started once per side: the
    time per decision is the referee's and the pipes'. Sandboxed or not, the pipes are
    the same pipes, so this should not differ beyond noise."""
    names = [f"i{s}" for s in range(4)]
    players = [Recording() for _ in names]
    game = play_local(Rules(), players, seed=2024, game_id="g")
    assert game.over
    files = replies_files(tmp_path, players)
    decisions = sum(len(p.replies) for p in players)
    bots = {m: [BotProcess(BotSpec(n, (sys.executable, str(INSTANT), str(f)), cwd=str(ROOT),
                                   sandbox=Sandbox(mode=m))) for n, f in zip(names, files)] for m in MODES}
    for m in MODES:
        for n, b in zip(names, bots[m]):
            handshake(b, n, TC)
    pairs = 1 if benchmark.disabled else 40

    def once(mode: str) -> float:
        t = time.perf_counter()
        res = play_game(bots[mode], names, Rules(), 2024, "g", time_control=TC)
        dt = time.perf_counter() - t
        assert res.faults == [] and res.decisions == decisions
        return dt / decisions

    got: dict[str, list[float]] = {}
    try:
        benchmark.pedantic(lambda: got.update(_paired(pairs, once)), rounds=1, iterations=1)
    finally:
        for m in MODES:
            for b in bots[m]:
                if b.alive:
                    b.send(encode({"type": "bye"}))
                b.stop()
    info = _summary(f"per decision ({decisions} decisions a game)", "us", got, 1e6)
    benchmark.extra_info.update(info)


def test_tournament_throughput_with_and_without_sandbox(benchmark, tmp_path: Path) -> None:
    """Games per second of a whole run (`run_tournament`: config to leaderboards; bots
    started once per worker) and in the steady state (first to last result): 5 greedy
    bots, 4-player tables, parallel 2, with the sandbox and without."""
    per_table = 4 if benchmark.disabled else 16  # 5 tables: 80 games a run
    pairs = 1 if benchmark.disabled else 4
    steady: dict[str, list[float]] = {m: [] for m in MODES}

    def once(mode: str) -> float:
        data = {"name": f"bench-{mode}", "seed": 5, "bots": [{"name": f"g{i}", "cmd": GREEDY} for i in range(5)],
                "table_size": 4, "games_per_table": per_table, "parallel": 2, "replays": "none",
                "output": str(tmp_path / mode)}
        cfg = with_sandbox(config_from(data, base=ROOT), mode)
        t = time.perf_counter()
        out = run_tournament(cfg, fresh=True, build_site=False)
        dt = time.perf_counter() - t
        assert out.sandbox["mode"] == mode
        steady[mode].append((out.played - 1) / (out.playing_s - out.first_s))
        return out.played / dt

    got: dict[str, list[float]] = {}
    benchmark.pedantic(lambda: got.update(_paired(pairs, once)), rounds=1, iterations=1)
    info = _summary("whole run", "games_per_s", got)
    info.update({f"steady_{k}": v for k, v in _summary("steady state", "games_per_s", steady).items()})
    benchmark.extra_info.update(info)


def _per_decision(bots: list[BotProcess], names: list[str]) -> float:
    """Seconds per decision of three refereed games (the same three each time)."""
    t = time.perf_counter()
    decisions = 0
    for g in range(3):
        res = play_game(bots, names, Rules(), 3000 + g, f"g{g}", time_control=TC)
        assert res.faults == []
        decisions += res.decisions
    return (time.perf_counter() - t) / decisions


def _bye_all(bots: list[BotProcess]) -> None:
    for b in bots:
        if b.alive:
            b.send(encode({"type": "bye"}))
        b.stop()


def test_cost_of_stopping_bots_between_turns(benchmark, monkeypatch: pytest.MonkeyPatch) -> None:
    """Per decision of a refereed 4-player game of sandboxed Python greedy bots, with the
    bots stopped between their turns (the default: `BotProcess.pause`) and with the stop
    switched off (pause and resume made no-ops), the same games, in pairs."""
    names = [f"g{s}" for s in range(4)]
    bots = [BotProcess(BotSpec(n, tuple(GREEDY), cwd=str(ROOT), sandbox=Sandbox(mode="bwrap"))) for n in names]
    for n, b in zip(names, bots):
        handshake(b, n, TC)
    pairs = 1 if benchmark.disabled else 12
    real = (BotProcess.pause, BotProcess.resume)

    def once(side: str) -> float:
        if side == "stopped":
            monkeypatch.setattr(BotProcess, "pause", real[0])
            monkeypatch.setattr(BotProcess, "resume", real[1])
        else:
            for b in bots:
                b.resume()
            monkeypatch.setattr(BotProcess, "pause", lambda self, *a, **k: None)
            monkeypatch.setattr(BotProcess, "resume", lambda self, *a, **k: None)
        return _per_decision(bots, names)

    got: dict[str, list[float]] = {}
    try:
        benchmark.pedantic(lambda: got.update(_paired(pairs, once, ("stopped", "running"))), rounds=1, iterations=1)
    finally:
        monkeypatch.undo()
        _bye_all(bots)
    benchmark.extra_info.update(_summary("per decision, greedy bots stopped between turns or not", "us", got, 1e6))


def test_cost_of_the_held_stop_against_signals(benchmark, monkeypatch: pytest.MonkeyPatch) -> None:
    """Per decision of a refereed 4-player game of sandboxed Python greedy bots, stopped
    between their turns by holding their cgroups to no CPU (the default where the cgroup
    has a CPU controller: one write and one read a turn change) or by SIGSTOP to each of
    their processes (as elsewhere), the same games, in pairs. Also in
    `tools/bench_containment.py` (figure 1, "signals")."""
    from harness.sandbox.cgroups import BotCgroup, cgroups

    backend, why = cgroups()
    if backend is None or not backend.cpu_quota:
        pytest.skip(f"no cgroup with a CPU controller here: {why or 'no cpu controller'}")
    names = [f"g{s}" for s in range(4)]
    bots = [BotProcess(BotSpec(n, tuple(GREEDY), cwd=str(ROOT), sandbox=Sandbox(mode="bwrap"))) for n in names]
    for n, b in zip(names, bots):
        handshake(b, n, TC)
    pairs = 1 if benchmark.disabled else 12
    real = BotCgroup.throttle

    def once(side: str) -> float:
        for b in bots:
            b.resume()  # (each side stops them its own way from here)
        if side == "held":
            monkeypatch.setattr(BotCgroup, "throttle", real)
        else:
            monkeypatch.setattr(BotCgroup, "throttle", lambda self: None)
        return _per_decision(bots, names)

    got: dict[str, list[float]] = {}
    try:
        benchmark.pedantic(lambda: got.update(_paired(pairs, once, ("held", "signals"))), rounds=1, iterations=1)
    finally:
        monkeypatch.undo()
        _bye_all(bots)
    benchmark.extra_info.update(_summary("per decision, greedy bots held or stopped by signals", "us", got, 1e6))


@pytest.mark.parametrize("size_mb", [0, 18, 250])
def test_cost_of_a_private_copy_of_a_bot_folder(benchmark, size_mb: int, tmp_path: Path) -> None:
    """The private copy of its own folder each start of a bot in its games makes
    (`sandbox.private`): of bots/python (size 0 here) or of a folder of `size_mb` MB of data
    in 86 files (a built Rust kit holds 18 MB in 86 files), median of the copies."""
    from harness.sandbox.private import PrivateFolder

    folder = ROOT / "bots/python"
    if size_mb:
        folder = tmp_path / "own"
        folder.mkdir()
        for k in range(86):
            (folder / f"f{k}").write_bytes(os.urandom((size_mb << 20) // 86))
    enabled = not benchmark.disabled
    times = []
    for _ in range(15 if enabled else 1):
        p = PrivateFolder()
        t = time.perf_counter()
        p.copy(str(folder), [])
        times.append(time.perf_counter() - t)
        p.remove()
    benchmark.extra_info["median_ms"] = statistics.median(times) * 1000
    if enabled:
        print(f"\nprivate copy of {size_mb or 'bots/python'} MB: median {statistics.median(times) * 1000:.1f} ms, "
              f"max {max(times) * 1000:.1f} ms")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
