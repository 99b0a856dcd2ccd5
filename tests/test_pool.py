"""A worker's bot processes under duplicate deals (`tournament.pool`): no process is dealt
a deal twice; each is started once per worker and reused across deal groups; the least
recently used are ended beyond a bound. Real bot processes; starts are counted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.tournament.config import config_from
from harness.tournament.executor import GameRunner
from harness.tournament.pool import BotPool
from harness.tournament.schedule import schedule

ROOT = Path(__file__).resolve().parent.parent
DEALER = [sys.executable, str(ROOT / "tests/bots/faulty.py"), "deals"]
# Games of a few turns: what is counted here is processes, not play.
TINY = {"phases": [1], "hand_limit": 1, "turn_limit": 4}


def config(tmp: Path, entrants: int, table: int, games_per_table: int, **over):
    data = {"name": "pool", "seed": 3, "bots": [{"name": f"b{i}", "cmd": DEALER} for i in range(entrants)],
            "table_size": table, "games_per_table": games_per_table, "duplicate": True, "parallel": 1,
            "rules": TINY, "time": {"move_ms": 5000, "startup_ms": 20000}, "replays": "none", "sandbox": "none",
            "output": str(tmp / "out"), **over}
    return config_from(data, base=ROOT)


def dealt(log_dir: Path) -> list[dict]:
    """What each bot process wrote when dealt: {"log", "process", "game", "seat"}."""
    out = []
    for log in sorted(log_dir.glob("b*.stderr.log")):
        for line in log.read_text().splitlines():
            if line.startswith("| DEALT "):
                out.append({"log": log.name, **json.loads(line[8:])})
    return out


def play(cfg, log_dir: Path, live: int | None = None, check=None, first: int = 10**9) -> tuple[GameRunner, int]:
    log_dir.mkdir(exist_ok=True)
    runner = GameRunner(cfg, "w0", log_dir)
    if live is not None:
        runner.pool.live = live
    games = 0
    try:
        for spec in schedule(cfg)[:first]:
            rec = runner.run(spec)["record"]
            assert not rec["faults"], rec["faults"]
            games += 1
            if check is not None:
                check(runner)
    finally:
        runner.close()
    return runner, games


def test_each_process_starts_once_per_worker_and_never_sees_a_deal_twice(tmp_path: Path) -> None:
    """4 entrants at 4-player tables, 160 games (40 deals in their 4 rotations): no
    process was dealt one deal twice, and the 16 processes (4 an entrant) were each
    started once: 0.1 starts a game."""
    cfg = config(tmp_path, 4, 4, 160)
    runner, games = play(cfg, tmp_path / "logs")
    group = {s.game: s.group for s in schedule(cfg)}
    seen = dealt(tmp_path / "logs")
    assert games == 160 and len(seen) >= 400  # (a seat that had no turn in a game of 4 turns wrote nothing)
    by_process: dict[str, list[dict]] = {}
    for d in seen:
        by_process.setdefault(d["process"], []).append(d)
    assert len(by_process) == 16
    for token, ds in by_process.items():
        assert len({d["log"] for d in ds}) == 1  # one process a log: none was started again
        groups = [group[d["game"]] for d in ds]
        assert len(groups) == len(set(groups))
    starts = sum(runner.starts.values())
    assert starts == 16 and starts / games <= 0.1


def test_the_least_recently_used_processes_are_ended_beyond_the_bound(tmp_path: Path) -> None:
    """5 entrants at 4-player tables want 20 processes; held to 6 running, the worker ends
    the least recently used after each game and starts them again when needed: still no
    process is dealt a deal twice (the first 6 games: one deal in 4 rotations, and the
    next table's)."""
    cfg = config(tmp_path, 5, 4, 4)
    most = []

    def check(runner: GameRunner) -> None:
        most.append(sum(1 for b in runner.pool if b.proc is not None))

    runner, games = play(cfg, tmp_path / "logs", live=6, check=check, first=6)
    assert games == 6 and max(most) <= 6
    seen = dealt(tmp_path / "logs")
    group = {s.game: s.group for s in schedule(cfg)}
    by_process: dict[str, list[int]] = {}
    for d in seen:
        by_process.setdefault(d["process"], []).append(group[d["game"]])
    assert all(len(g) == len(set(g)) for g in by_process.values()), by_process
    wanted = {(name, k) for spec in schedule(cfg)[:6] for k, name in enumerate(spec.seats)}
    assert sum(runner.starts.values()) > len(wanted)  # evicted processes were started again


def test_a_pool_makes_processes_when_first_needed_and_trims_the_oldest() -> None:
    made: list[tuple[str, int]] = []

    class Fake:
        def __init__(self) -> None:
            self.proc: object | None = object()
            self.alive = False

        def stop(self) -> None:
            self.proc = None

    def make(name: str, k: int) -> Fake:
        made.append((name, k))
        return Fake()

    pool = BotPool(make, live=2)  # type: ignore[arg-type]
    a, b, c = pool.get("a", 0), pool.get("b", 1), pool.get("c", 0)
    assert made == [("a", 0), ("b", 1), ("c", 0)] and pool.get("a", 0) is a
    assert pool.trim() == [b]  # "a" was used after "b"
    assert a.proc is not None and c.proc is not None and b.proc is None


def test_a_games_new_processes_start_together_and_one_that_dies_at_once_is_started_once(tmp_path: Path) -> None:
    """A game's processes are all started before any is greeted (their start-ups overlap);
    one that dies before its hello is reported as a start-up fault of that seat, started
    once, not a second time by its handshake."""
    dies = [sys.executable, "-c", "import sys; sys.exit(3)"]
    cfg = config(tmp_path, 3, 3, 3, bots=[{"name": "b0", "cmd": DEALER}, {"name": "b1", "cmd": DEALER},
                                           {"name": "dead", "cmd": dies}])
    runner = GameRunner(cfg, "w0", tmp_path)
    order: list[str] = []
    process = type(runner.pool.get("b0", 0))
    try:
        real_start = process.start

        def start(bot) -> None:
            order.append(f"start {bot.spec.name}")
            real_start(bot)

        import harness.tournament.executor as executor
        real_handshake = executor.handshake

        def handshake(bot, name, tc, started=False) -> None:
            order.append(f"hello {name}")
            real_handshake(bot, name, tc, started=started)

        from unittest import mock
        with mock.patch.object(process, "start", start), \
                mock.patch.object(executor, "handshake", handshake):
            out = runner.run(schedule(cfg)[0])
    finally:
        runner.close()
    seats = out["record"]["seats"]
    assert order[:3] == [f"start {n}" for n in seats] and sorted(order[3:]) == sorted(f"hello {n}" for n in seats)
    assert out["starts"]["dead"] == 1
    assert out["startup_failures"] == ["dead"]
    fault = next(f for f in out["record"]["faults"] if f["entrant"] == "dead")
    assert fault["kind"] == "startup" and "exit" in fault["reason"], fault
