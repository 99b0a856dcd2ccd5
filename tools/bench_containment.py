#!/usr/bin/env python3
"""What containment costs: the default settings (a sandbox, a cgroup per bot, the stop
between turns, a process per rotation of a duplicate deal) next to `sandbox: none` and
the bare JSON-lines floor of the same traffic. Every side-by-side figure is taken in
pairs, the two sides back to back with their order turning each pair, and the ratio is
the median of the per-pair ratios. It prints the machine's load (`uptime`) before and
after: re-run it on a quiet machine for figures to quote.

    python tools/bench_containment.py            # all figures (a few minutes on 2 cores)
    python tools/bench_containment.py --quick    # fewer pairs, to try it out

Figures: (1) µs per decision of a whole 4-player game of instant bots (bots' small
work included): default, `sandbox: none`, and the floor (one bare child per seat, the
game's messages written and each reply read and parsed); (2) the heaviest cycle, a play
request with its options after a draw reply: the referee's time per play decision
against the floor's round trip of the same play requests; (3) README command 1 (the
demo tournament) wall time, default against `sandbox: none, trusted: true`; (4) games
per second at `parallel: 2` and bot starts per game (5 greedy bots, 4-player duplicate
tables).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any, Callable

import orjson
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from harness.players import play_local  # noqa: E402
from harness.referee import BotProcess, BotSpec, handshake, play_game  # noqa: E402
from harness.referee import referee as referee_mod  # noqa: E402
from harness.sandbox.box import Sandbox  # noqa: E402
from harness.tournament.config import config_from  # noqa: E402
from harness.tournament.runner import run_tournament  # noqa: E402
from test_bench_referee import (  # noqa: E402
    GAME, INSTANT, NAMES, RULES, SEED, TC, Recording, _child, _end, _stop, _traffic_player, replies_files,
)


def load() -> str:
    """The machine's load, as `uptime` says it."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pairs(n: int, sides: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Each side's figure `n` times, the sides back to back, their order turning each pair."""
    names = list(sides)
    got: dict[str, list[float]] = {k: [] for k in names}
    for i in range(n):
        for k in (names if i % 2 == 0 else names[::-1]):
            got[k].append(sides[k]())
    return got


def ratio(a: list[float], b: list[float]) -> float:
    """The median of the per-pair ratios a/b."""
    return median(x / y for x, y in zip(a, b))


def _workload(d: Path) -> dict[str, Any]:
    """One greedy game's replies per seat, and the exact messages the referee sends in it."""
    players = [Recording() for _ in NAMES]
    play_local(RULES, players, seed=SEED, game_id=GAME)
    files = replies_files(d, players)
    bots = _bots(files, "none")
    try:
        res = play_game(bots, NAMES, RULES, SEED, GAME, time_control=TC, record=True)
    finally:
        _stop(bots)
    traffic = []
    for line in res.replay:
        rec = orjson.loads(line)
        if rec["type"] == "msg" and rec["dir"] == "to":
            traffic.append((rec["seat"], orjson.dumps(rec["msg"]) + b"\n", rec["msg"]["type"] == "request"))
    plays = [(s, m) for s, m, req in traffic if req and b'"decision":"play"' in m]
    return {"files": files, "decisions": res.decisions, "traffic": traffic, "plays": plays}


def _bots(files: list[Path], mode: str, signals: bool = False) -> list[BotProcess]:
    """Four instant bots, with the default limits, in sandbox `mode` ("auto": the default);
    with `signals`, stopped between turns by SIGSTOP as where no cgroup CPU controller is."""
    bots = []
    for name, path in zip(NAMES, files):
        bot = BotProcess(BotSpec(name, (sys.executable, str(INSTANT), str(path)), cwd=str(ROOT),
                                 sandbox=Sandbox(mode=mode)))
        handshake(bot, name, TC)
        if signals and bot.cgroup is not None:
            bot.resume()
            bot.cgroup._throttle = None  # (opened at its hello's stop): the signals' stop from now on
            bot._held = None
            bot.pause()
        bots.append(bot)
    return bots


class PlayClock:
    """Wall time of the referee's play decisions (`Referee._decide` of a play request)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0
        inner = referee_mod.Referee._decide

        def timed(ref: Any, game: Any, seat: Any) -> Any:
            if game.decision != "play":
                return inner(ref, game, seat)
            t = time.perf_counter()
            try:
                return inner(ref, game, seat)
            finally:
                self.total += time.perf_counter() - t
                self.n += 1

        referee_mod.Referee._decide = timed  # type: ignore[method-assign]

    def take(self) -> float:
        """µs per play decision since the last take."""
        us = 1e6 * self.total / max(1, self.n)
        self.total, self.n = 0.0, 0
        return us


def per_decision(n: int, w: dict[str, Any]) -> None:
    """Figures (1) and (2)."""
    sides = {"default": _bots(w["files"], "auto"), "none": _bots(w["files"], "none"),
             "signals": _bots(w["files"], "auto", signals=True)}
    procs = [_child(p) for p in w["files"]]
    floor_game = _traffic_player(procs, w["traffic"])
    clock = PlayClock()
    plays: dict[str, list[float]] = {k: [] for k in sides}

    def game(bots: list[BotProcess], key: str) -> Callable[[], float]:
        def run() -> float:
            t = time.perf_counter()
            res = play_game(bots, NAMES, RULES, SEED, GAME, time_control=TC)
            took = time.perf_counter() - t
            assert not res.faults, res.faults
            plays[key].append(clock.take())
            return 1e6 * took / res.decisions
        return run

    def floor() -> float:
        t = time.perf_counter()
        floor_game()
        return 1e6 * (time.perf_counter() - t) / w["decisions"]

    fds = [p.stdin.fileno() for p in procs]
    readlines = [p.stdout.readline for p in procs]

    def floor_plays() -> float:
        t = time.perf_counter()
        for seat, data in w["plays"]:
            os.write(fds[seat], data)
            orjson.loads(readlines[seat]())
        return 1e6 * (time.perf_counter() - t) / len(w["plays"])

    try:
        runs = {k: game(bots, k) for k, bots in sides.items()}
        for run in (*runs.values(), floor):
            run()  # warm up
        plays = {k: [] for k in sides}
        got = pairs(n, {**runs, "floor": floor})
        cyc = pairs(n, {"floor_plays": floor_plays})
    finally:
        for bots in sides.values():
            _stop(bots)
        _end(procs)
    print(f"\n(1) µs per decision, 4-player game of instant bots ({w['decisions']} decisions, {n} rounds)")
    for k in ("default", "none", "signals", "floor"):
        print(f"    {k:8s} median {median(got[k]):8.1f}")
    print("    (signals: the default settings stopped by SIGSTOP to each process, as where the bot's "
          "cgroup has no CPU controller)")
    print(f"    default / none  {ratio(got['default'], got['none']):.2f}x   (target <= 1.25x)")
    print(f"    default / floor {ratio(got['default'], got['floor']):.2f}x   (target <= 2.5x)")
    print(f"    none / floor    {ratio(got['none'], got['floor']):.2f}x")
    print(f"    signals / default {ratio(got['signals'], got['default']):.2f}x")
    print(f"(2) heaviest cycle: µs per play decision (a play request with options, {len(w['plays'])} a game)")
    fp = median(cyc["floor_plays"])
    print(f"    default {median(plays['default']):.1f}, none {median(plays['none']):.1f}, "
          f"signals {median(plays['signals']):.1f}, "
          f"floor round trip of the same play requests {fp:.1f}")
    print(f"    default / floor {median(plays['default']) / fp:.2f}x   (target <= 2x; medians, the floor "
          "taken after the games)")


def _demo_config(tmp: Path, contained: bool) -> Path:
    data = yaml.safe_load((ROOT / "tournaments" / "quickstart.yaml").read_text())
    data["base_dir"] = str(ROOT)
    data["output"] = str(tmp / ("default" if contained else "none"))
    if not contained:
        data["sandbox"] = "none"
        data["trusted"] = True
    path = tmp / ("default.yaml" if contained else "none.yaml")
    path.write_text(yaml.safe_dump(data))
    return path


def demo(n: int) -> None:
    """Figure (3): README command 1's wall time, the CLI as a user runs it: the harness's
    modules byte-compiled first, as `pip install .` leaves them (a checkout run where
    PYTHONDONTWRITEBYTECODE is set would compile every module in every bot's start)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "harness")], check=True)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cfgs = {"default": _demo_config(tmp, True), "none, trusted": _demo_config(tmp, False)}

        def run(path: Path) -> Callable[[], float]:
            def go() -> float:
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--fresh"], check=True,
                               capture_output=True, cwd=ROOT)
                return time.perf_counter() - t
            return go

        got = pairs(n, {k: run(p) for k, p in cfgs.items()})
    print(f"\n(3) README command 1 (48 games, parallel 2), wall seconds, {n} pairs")
    for k, v in got.items():
        print(f"    {k:14s} median {median(v):6.2f}  ({', '.join(f'{x:.2f}' for x in v)})")
    print(f"    default / (none, trusted) {ratio(got['default'], got['none, trusted']):.2f}x   "
          "(target <= 1.5x, and default <= 4 s on a quiet 2-core machine)")


def throughput(games: int) -> None:
    """Figure (4): games per second at parallel 2, and bot starts per game."""
    with tempfile.TemporaryDirectory() as d:
        bots = [{"name": f"g{i}", "cmd": ["python", "bots/python/greedy.py"]} for i in range(5)]
        cfg = config_from({"name": "bench", "seed": 11, "bots": bots, "table_size": 4, "format": "random",
                            "games": games, "duplicate": True, "parallel": 2, "replays": "none",
                            "time": {"move_ms": 5000, "startup_ms": 20000}, "output": str(Path(d) / "out")},
                           base=ROOT)
        t = time.perf_counter()
        out = run_tournament(cfg, build_site=False)
        took = time.perf_counter() - t
    starts = sum(out.bot_starts.values())
    print(f"\n(4) 5 greedy bots, 4-player duplicate tables, parallel 2: {out.played} games in {took:.1f} s = "
          f"{out.played / took:.2f} games/s; bot starts {starts} = {starts / out.played:.3f} a game "
          "(target <= 0.1; at most 5 bots x 4 rotations x 2 workers = 40, started once)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer pairs (to try it out)")
    ap.add_argument("--only", choices=["decision", "demo", "throughput"], action="append")
    a = ap.parse_args()
    only = set(a.only or ["decision", "demo", "throughput"])
    print(f"load before: {load()}")
    print(f"commit: {subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=ROOT).stdout.strip()}")
    if "decision" in only:
        with tempfile.TemporaryDirectory() as d:
            per_decision(6 if a.quick else 30, _workload(Path(d)))
    if "demo" in only:
        demo(1 if a.quick else 4)
    if "throughput" in only:
        throughput(80 if a.quick else 400)
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()
