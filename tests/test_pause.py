"""A bot runs only while the referee waits for it: between its turns (and its games) every
process of it is stopped, so it cannot take CPU from the bots that are thinking, whatever
it forks; and all its processes together keep at most `limits.cpus` CPUs busy.

The thief below answers like the greedy bot but first forks spinning processes (in new
sessions, so no process group holds them)."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.engine import Rules
from harness.referee import BotProcess, BotSpec, Limits, TimeControl, handshake, play_game
from harness.referee.sandbox import Sandbox, bwrap_available, harness_package

OK, WHY = bwrap_available()
MODES = ["bwrap", "none"]

THIEF = textwrap.dedent("""
    import os, sys, time
    n = int(os.environ.get("SPINNERS", "4"))
    for _ in range(n):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    if os.environ.get("FORK_CHAIN"):  # a process that forks a successor and exits, over and over
        if os.fork() == 0:
            os.setsid()
            while True:
                if os.fork():
                    os._exit(0)
    sys.path.insert(0, os.environ["HARNESS_PARENT"])
    from harness.bots.greedy import main
    main()
""")


def thief(tmp_path: Path, mode: str, spinners: int = 4, chain: bool = False, cpus: int | None = 1) -> BotProcess:
    if mode == "bwrap" and not OK:
        pytest.skip(f"the sandbox cannot run here: {WHY}")
    script = tmp_path / "thief" / "thief.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(THIEF)
    env = {"SPINNERS": str(spinners), "HARNESS_PARENT": str(Path(harness_package()).parent)}
    if chain:
        env["FORK_CHAIN"] = "1"
    spec = BotSpec("thief", (sys.executable, str(script)), env=env, sandbox=Sandbox(mode=mode),
                   limits=Limits(cpus=cpus))
    bot = BotProcess(spec)
    handshake(bot, "thief", TimeControl(move_ms=2000, startup_ms=30000))
    return bot


def cpu_over(bot: BotProcess, seconds: float) -> float:
    c0 = bot.usage()[0]
    time.sleep(seconds)
    return bot.usage()[0] - c0


@pytest.mark.parametrize("mode", MODES)
def test_after_its_hello_a_bot_is_stopped_and_its_spinners_take_no_cpu(tmp_path: Path, mode: str) -> None:
    bot = thief(tmp_path, mode)
    try:
        assert bot.paused
        assert bot.usage()[2] >= 5  # the bot and its four spinners (and bwrap's two)
        assert cpu_over(bot, 0.5) < 0.02
        bot.resume()
        deadline = time.monotonic() + 30
        used = 0.0
        while used < 0.05 and time.monotonic() < deadline:  # running: they spin (slowly on a busy machine)
            used += cpu_over(bot, 0.2)
        assert used >= 0.05
        bot.pause()
        assert cpu_over(bot, 0.5) < 0.02
    finally:
        bot.stop()


@pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")
def test_processes_forked_while_it_is_being_stopped_are_stopped_too(tmp_path: Path) -> None:
    """A chain of processes that each fork a successor and exit: stopping one list of
    pids would miss the successor; the cgroup's list is read until all are stopped."""
    bot = thief(tmp_path, "bwrap", spinners=0, chain=True)
    try:
        assert bot.cgroup is not None
        before = set(bot.cgroup.pids())
        time.sleep(0.3)
        assert set(bot.cgroup.pids()) == before  # nothing runs to fork
        assert cpu_over(bot, 0.3) < 0.02
    finally:
        bot.stop()


@pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")
def test_all_its_processes_together_keep_at_most_cpus_busy(tmp_path: Path) -> None:
    bot = thief(tmp_path, "bwrap", spinners=4, cpus=1)
    try:
        if bot.cgroup is None or bot.cgroup.cpus is None:
            pytest.skip("no CPU controller for the bot's cgroup here")
        bot.resume()
        t0 = time.monotonic()
        c0 = bot.usage()[0]
        time.sleep(1.0)
        used, wall = bot.usage()[0] - c0, time.monotonic() - t0
        assert used <= 1.0 * wall + 0.15, f"{used:.2f} s of CPU in {wall:.2f} s with a quota of 1 CPU"
    finally:
        bot.stop()


@pytest.mark.parametrize("mode", MODES)
def test_in_a_game_the_thief_gets_cpu_only_in_its_own_turns(tmp_path: Path, mode: str) -> None:
    """Over a whole game against the greedy bot, the thief's processes use no more CPU
    than its own turns lasted (times its quota of 1 CPU): its spinners take nothing from
    its opponent, whose turns are most of the game. The honest bot has no fault."""
    bot = thief(tmp_path, mode)
    honest = BotProcess(BotSpec("greedy", (sys.executable, "-m", "harness.bots.greedy"), sandbox=Sandbox(mode=mode)))
    try:
        handshake(honest, "greedy", TimeControl(move_ms=2000, startup_ms=30000))
        c0 = bot.usage()[0]
        result = play_game([bot, honest], ["thief", "greedy"], Rules.from_dict({"phases": [1, 2, 3]}), 7, "g000000",
                           time_control=TimeControl(move_ms=2000))
        used = bot.usage()[0] - c0
        assert not result.faults, result.faults
        own_turns = result.think_s[0]
        # Each of its turns may also run it for the moment it takes to stop it again.
        bound = own_turns + 0.002 * result.decisions + 0.3
        assert used <= bound, (f"the thief used {used:.2f} s of CPU in a game of {result.duration_s:.2f} s "
                               f"whose own turns took {own_turns:.2f} s")
    finally:
        bot.stop()
        honest.stop()


@pytest.mark.parametrize("mode", MODES)
def test_a_stopped_bot_still_exits_on_bye_and_stops_cleanly(tmp_path: Path, mode: str) -> None:
    bot = thief(tmp_path, mode, spinners=1)
    pid = bot.pid
    assert bot.paused
    code = bot.stop()
    assert bot.proc is None and code is not None
    assert pid is not None and not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
