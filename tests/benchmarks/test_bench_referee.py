"""The referee's own cost per decision, next to the floor of a bare JSON-lines round trip.

    python -m pytest tests/benchmarks/test_bench_referee.py --benchmark-enable -q -s

How it is made honest:

- The workload is one real game: 4 greedy players, standard rules, a fixed seed, played
  in-process first to record every reply each seat gives (`play_local`).
- "Instant" bots (tests/bots/instant.py) answer each request with the next of those
  replies, with no thinking: they only parse the message with orjson and write the reply
  with the request's id. Refereeing the same seed with them replays the very same game,
  so a refereed game's time per decision is the referee's overhead plus the pipe round
  trip, and nothing of a bot's strategy.
- The floor is the same instant bots driven by a bare loop instead of the referee: the
  exact bytes the referee sent in that game (captured once from a recorded game), one
  `os.write` per message and one `readline` + `orjson.loads` per reply. Nothing of the
  game is computed.
- (a) `floor_round_trip`: one child, the game's requests in order, each answered with its
  real reply (real sizes both ways). (a') `floor_game_traffic`: four children, every
  message of the game (game_start, requests, hand_end, game_end) to its seat.
  (b) `referee_game[...]`: whole refereed games with the four instant bots; with the
  options that the bundled bots ask for, without them (`"options": false`), and with the
  replay recorded.

No assertion here is about time. With benchmarks disabled (the normal test run) each runs
once as a smoke test. Figures and the target (referee ≤ 2× the floor per decision) are in
BENCHMARKS.md, section "Referee".
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from harness.engine import Rules
from harness.players import GreedyStrategy, Strategy, play_local
from harness.referee import BotProcess, BotSpec, TimeControl, encode, handshake, play_game
from harness.referee.process import child_setup

ROOT = Path(__file__).resolve().parents[2]
INSTANT = ROOT / "tests" / "bots" / "instant.py"
SEED = 2024
GAME = "g-bench"
NAMES = [f"i{s}" for s in range(4)]
RULES = Rules()
TC = TimeControl(move_ms=10_000, startup_ms=20_000)
ROUNDS = 30
RESULTS: dict[str, tuple[float, float, float]] = {}  # (min, median, cpu) µs per decision, for the summary
PAIRED: dict[str, Any] = {}  # figures of the paired rounds, for the summary


class CpuClock:
    """This process's CPU time over the calls of a benchmarked function (the side that
    is measured: the referee or the bare loop; the bots' CPU is not in it)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.calls = 0

    def __call__(self, fn):
        def timed():
            t = time.process_time()
            out = fn()
            self.total += time.process_time() - t
            self.calls += 1
            return out

        return timed


def replies_files(folder: Path, players: list["Recording"]) -> list[Path]:
    """Each seat's recorded replies as a file (seat0.jsonl, ...) for tests/bots/instant.py."""
    files = []
    for s, p in enumerate(players):
        path = folder / f"seat{s}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in p.replies))
        files.append(path)
    return files


class Recording(Strategy):
    """Greedy, keeping a copy of every reply it gives."""

    name = "greedy"

    def __init__(self) -> None:
        self.inner = GreedyStrategy()
        self.replies: list[dict[str, Any]] = []

    def new_game(self, game: str, seat: int) -> None:
        self.inner.new_game(game, seat)

    def decide(self, state, decision, options):
        reply = self.inner.decide(state, decision, options)
        self.replies.append(orjson.loads(orjson.dumps(reply)))
        return reply


def _instant_bots(files: list[Path], *flags: str) -> list[BotProcess]:
    bots = []
    for name, path in zip(NAMES, files):
        bot = BotProcess(BotSpec(name, (sys.executable, str(INSTANT), str(path), *flags), cwd=str(ROOT)))
        handshake(bot, name, TC)
        bots.append(bot)
    return bots


def _stop(bots: list[BotProcess]) -> None:
    for bot in bots:
        if bot.alive:
            bot.send(encode({"type": "bye"}))
        bot.stop()


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> dict[str, Any]:
    """The recorded replies per seat, the game's traffic and its size."""
    d = tmp_path_factory.mktemp("instant")
    players = [Recording() for _ in NAMES]
    game = play_local(RULES, players, seed=SEED, game_id=GAME)
    game_names = {p.name for p in players}
    assert game_names == {"greedy"} and game.over
    files = replies_files(d, players)
    decisions = sum(len(p.replies) for p in players)
    # One recorded refereed game with the instant bots: the exact bytes the referee sends.
    bots = _instant_bots(files)
    try:
        res = play_game(bots, NAMES, RULES, SEED, GAME, time_control=TC, record=True)
    finally:
        _stop(bots)
    assert res.faults == [] and res.decisions == decisions, (res.faults, res.decisions, decisions)
    traffic: list[tuple[int, bytes, bool]] = []
    replies_in_order: list[dict[str, Any]] = []
    for line in res.replay:
        rec = orjson.loads(line)
        if rec["type"] != "msg":
            continue
        if rec["dir"] == "to":
            data = orjson.dumps(rec["msg"]) + b"\n"
            traffic.append((rec["seat"], data, rec["msg"]["type"] == "request"))
        else:
            reply = dict(rec["msg"])
            del reply["id"]
            replies_in_order.append(reply)
    all_path = d / "all.jsonl"
    all_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in replies_in_order))
    requests = [data for _, data, is_req in traffic if is_req]
    assert len(requests) == decisions
    return {
        "files": files, "all": all_path, "decisions": decisions, "hands": res.hands, "traffic": traffic,
        "requests": requests,
        "bytes_to": sum(len(x) for _, x, _ in traffic),
        "bytes_from": sum(len(orjson.dumps(r)) + 10 for r in replies_in_order),
    }


def _child(path: Path) -> subprocess.Popen:
    """An instant bot as a bare child process (no BotProcess), past its hello. It starts
    as the referee's bots do (`child_setup`: without address randomisation on Linux), so
    the floor and the referee talk to the same kind of process."""
    proc = subprocess.Popen([sys.executable, str(INSTANT), str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT, preexec_fn=child_setup())
    os.write(proc.stdin.fileno(), encode({"type": "hello", "protocol": "p10/1", "name": "x",
                                          "time": {"move_ms": 1, "game_ms": None}}))
    assert orjson.loads(proc.stdout.readline())["type"] == "hello"
    return proc


def _traffic_player(procs: list[subprocess.Popen], traffic: list[tuple[int, bytes, bool]]):
    """The floor's loop: send every message of the game to its seat's child, one `os.write`
    each, and read and parse the reply to each request. Returns the requests answered."""
    fds = [p.stdin.fileno() for p in procs]
    readlines = [p.stdout.readline for p in procs]

    def play() -> int:
        n = 0
        for seat, data, is_request in traffic:
            os.write(fds[seat], data)
            if is_request:
                orjson.loads(readlines[seat]())
                n += 1
        return n

    return play


def _end(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.stdin.close()
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.stdout.close()


def _note(benchmark, key: str, per_round: int, unit: str, cpu: CpuClock) -> None:
    benchmark.extra_info[f"{unit}s_per_round"] = per_round
    if cpu.calls:
        benchmark.extra_info[f"cpu_us_per_{unit}"] = round(1e6 * cpu.total / cpu.calls / per_round, 2)
    if benchmark.stats is not None:  # None when benchmarks are disabled (smoke run)
        st = benchmark.stats.stats
        for stat in ("min", "median", "mean"):
            benchmark.extra_info[f"us_per_{unit}_{stat}"] = round(1e6 * getattr(st, stat) / per_round, 2)
        benchmark.extra_info[f"{unit}s_per_second_median"] = round(per_round / st.median)
        RESULTS[key] = (1e6 * st.min / per_round, 1e6 * st.median / per_round, 1e6 * cpu.total / cpu.calls / per_round)


def test_bench_floor_round_trip(benchmark, workload) -> None:
    """(a) One child; every request of the game in order, each answered with its real
    reply: µs per round trip of real-size JSON lines, parsed with orjson on both sides."""
    proc = _child(workload["all"])
    fd = proc.stdin.fileno()
    readline = proc.stdout.readline
    requests = workload["requests"]
    start = encode({"type": "game_start"})

    def round_trips() -> int:
        os.write(fd, start)
        for data in requests:
            os.write(fd, data)
            orjson.loads(readline())
        return len(requests)

    cpu = CpuClock()
    try:
        benchmark.pedantic(cpu(round_trips), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    finally:
        _end([proc])
    benchmark.extra_info["mean_request_bytes"] = round(sum(map(len, requests)) / len(requests))
    _note(benchmark, "floor_round_trip", len(requests), "round_trip", cpu)


def test_bench_floor_game_traffic(benchmark, workload) -> None:
    """(a') Four children; every message the referee sent in the game, byte for byte, to
    its seat; each request's reply read and parsed. µs per decision without a referee."""
    procs = [_child(path) for path in workload["files"]]
    game_traffic = _traffic_player(procs, workload["traffic"])
    cpu = CpuClock()
    try:
        n = benchmark.pedantic(cpu(game_traffic), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    finally:
        _end(procs)
    assert n == workload["decisions"]
    benchmark.extra_info["bytes_to_bots_per_game"] = workload["bytes_to"]
    _note(benchmark, "floor_game_traffic", workload["decisions"], "decision", cpu)


@pytest.mark.parametrize("variant", ["options", "no_options", "options_recorded"])
def test_bench_referee_game(benchmark, workload, variant) -> None:
    """(b) Whole refereed games (the same game each round) with four instant bots: µs per
    decision = referee overhead + pipe round trip."""
    flags = ("--no-options",) if variant == "no_options" else ()
    record = variant == "options_recorded"
    bots = _instant_bots(workload["files"], *flags)
    results = []

    def one_game() -> int:
        res = play_game(bots, NAMES, RULES, SEED, GAME, time_control=TC, record=record)
        results.append(res)
        return res.decisions

    cpu = CpuClock()
    try:
        decisions = benchmark.pedantic(cpu(one_game), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    finally:
        _stop(bots)
    assert decisions == workload["decisions"]
    assert all(r.faults == [] and r.decisions == decisions for r in results)
    benchmark.extra_info["hands_per_game"] = workload["hands"]
    _note(benchmark, f"referee_{variant}", decisions, "decision", cpu)


def test_bench_paired(benchmark, workload) -> None:
    """(c) The ratio itself, measured in pairs: each round plays the floor's game traffic
    once, then the refereed game with options, then without, back to back, and the ratio
    is taken per round. The machine's speed drifts over seconds; a floor measured in one
    minute and a referee in the next would carry that drift into the ratio."""
    procs = [_child(path) for path in workload["files"]]
    floor = _traffic_player(procs, workload["traffic"])
    with_opts = _instant_bots(workload["files"])
    without = _instant_bots(workload["files"], "--no-options")
    rounds = 3 if benchmark.disabled else 3 * ROUNDS
    times: dict[str, list[float]] = {"floor": [], "options": [], "no_options": []}

    def refereed(bots: list[BotProcess]) -> None:
        res = play_game(bots, NAMES, RULES, SEED, GAME, time_control=TC)
        assert res.faults == [] and res.decisions == workload["decisions"]

    def pairs() -> None:
        for _ in range(rounds):
            for key, run in (("floor", floor), ("options", lambda: refereed(with_opts)),
                             ("no_options", lambda: refereed(without))):
                t = time.perf_counter()
                run()
                times[key].append(time.perf_counter() - t)

    try:
        floor()  # warm up
        benchmark.pedantic(pairs, rounds=1, iterations=1)
    finally:
        _end(procs)
        _stop(with_opts)
        _stop(without)
    n = workload["decisions"]

    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    for key in ("options", "no_options"):
        ratios = [r / f for r, f in zip(times[key], times["floor"])]
        benchmark.extra_info[f"paired_ratio_{key}_median"] = round(median(ratios), 3)
        benchmark.extra_info[f"us_per_decision_{key}_median"] = round(1e6 * median(times[key]) / n, 1)
    benchmark.extra_info["us_per_decision_floor_median"] = round(1e6 * median(times["floor"]) / n, 1)
    benchmark.extra_info["rounds"] = rounds
    if not benchmark.disabled:
        PAIRED.update(benchmark.extra_info)


def test_bench_summary() -> None:
    """Print the figures and ratios (only when the benchmarks above ran with timing)."""
    floor = RESULTS.get("floor_game_traffic")
    if not floor and not PAIRED:
        pytest.skip("benchmarks disabled: no figures")
    if floor:
        print("\nµs per decision (per round trip for floor_round_trip); ratio = / floor_game_traffic")
        print(f"  {'':26s} {'min':>8s} {'median':>8s} {'ratio':>6s} {'cpu':>7s}")
        for key, (lo, med, cpu) in RESULTS.items():
            print(f"  {key:26s} {lo:8.1f} {med:8.1f} {med / floor[1]:5.2f}x {cpu:7.1f}")
    if PAIRED:
        print(f"paired rounds ({PAIRED['rounds']}: floor, referee with options, without; ratio per round): "
              f"floor {PAIRED['us_per_decision_floor_median']} µs; "
              f"options {PAIRED['us_per_decision_options_median']} µs, ratio {PAIRED['paired_ratio_options_median']}x; "
              f"no options {PAIRED['us_per_decision_no_options_median']} µs, "
              f"ratio {PAIRED['paired_ratio_no_options_median']}x (medians)")
