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
from harness.sandbox.box import Sandbox
from harness.sandbox.cgroups import BotCgroup
from harness.sandbox.modes import bwrap_available
from harness.sandbox.paths import harness_package

OK, WHY = bwrap_available()
MODES = ["bwrap", "none"]
#: How a bot is stopped between its turns: its cgroup held to no CPU (`sandbox.throttle`,
#: where the cgroup has a CPU controller), or every process sent SIGSTOP (elsewhere).
STOPS = ["throttle", "signals"]


@pytest.fixture(params=STOPS)
def stop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way of stopping a bot, the one this machine would not use forced."""
    from harness.sandbox.cgroups import BotCgroup, cgroups

    if request.param == "signals":
        monkeypatch.setattr(BotCgroup, "throttle", lambda self: None)
    else:
        backend, why = cgroups()
        if backend is None or not backend.cpu_quota:
            pytest.skip(f"no cgroup with a CPU controller here: {why or 'no cpu controller'}")
    return str(request.param)

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
def test_after_its_hello_a_bot_is_stopped_and_its_spinners_take_no_cpu(tmp_path: Path, mode: str, stop: str) -> None:
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
def test_processes_forked_while_it_is_being_stopped_are_stopped_too(tmp_path: Path, stop: str) -> None:
    """A chain of processes that each fork a successor and exit: stopping one list of
    pids would miss the successor; the cgroup's list is read until all are stopped. A
    held cgroup holds what is forked in it (to the held share of a CPU, 1 ms in 100 ms:
    a successor or two, where a running chain forks thousands a second)."""
    bot = thief(tmp_path, "bwrap", spinners=0, chain=True)
    try:
        assert bot.cgroup is not None
        before = set(bot.cgroup.pids())
        time.sleep(0.3)
        forked = set(bot.cgroup.pids()) - before
        if stop == "signals":
            assert not forked  # nothing runs to fork
        else:
            print(f"forked while held: {len(forked)}")
            assert len(forked) <= 20
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
def test_in_a_game_the_thief_gets_cpu_only_in_its_own_turns(tmp_path: Path, mode: str, stop: str) -> None:
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
def test_a_stopped_bot_still_exits_on_bye_and_stops_cleanly(tmp_path: Path, mode: str, stop: str) -> None:
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


# ----- escapes in C: a fork from a second thread while the main thread sleeps (a slow fork:
# 20,000 mappings), each new process waking the others with kill(-1, SIGCONT); and the
# sandbox's own init taken over with ptrace to wake everything -------------------------------

HOSTILE = Path(__file__).resolve().parent / "hostile_bots"
ESCAPER = textwrap.dedent("""
    import os, sys, threading
    prog = os.environ["PROG"]
    if os.environ.get("DETACH"):
        if os.fork() == 0:
            os.setsid()
            os.execv(prog, [prog, *os.environ.get("ARGS", "").split()])
    else:
        os.system(prog)
    def spin():
        while True:
            pass
    threading.Thread(target=spin, daemon=True).start()
    sys.path.insert(0, os.environ["HARNESS_PARENT"])
    from harness.bots.greedy import main
    main()
""")


def compiled(tmp_path: Path, name: str) -> Path:
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (Debian: apt-get install gcc)")
    out = tmp_path / "bot" / name
    out.parent.mkdir(exist_ok=True)
    subprocess.run([cc, "-O1", "-pthread", "-o", str(out), str(HOSTILE / f"{name}.c")], check=True,
                   capture_output=True, timeout=120)
    return out


def escaper(tmp_path: Path, env: dict[str, str]) -> BotProcess:
    if not OK:
        pytest.skip(f"the sandbox cannot run here: {WHY}")
    script = tmp_path / "bot" / "escaper.py"
    script.write_text(ESCAPER)
    spec = BotSpec("escaper", (sys.executable, str(script)), cwd=str(script.parent),
                   env={**env, "HARNESS_PARENT": str(Path(harness_package()).parent)}, sandbox=Sandbox(mode="bwrap"))
    bot = BotProcess(spec)
    handshake(bot, "escaper", TimeControl(move_ms=2000, startup_ms=30000))
    return bot


def rounds_stopped(bot: BotProcess, rounds: int = 3) -> list[float]:
    """CPU over 0.5 s after each of `rounds` stops (each after 0.3 s of running)."""
    used = []
    for _ in range(rounds):
        bot.resume()
        time.sleep(0.3)
        bot.pause()
        used.append(cpu_over(bot, 0.5))
    return used


def test_a_slow_fork_from_a_second_thread_waking_the_others_is_stopped(tmp_path: Path, stop: str) -> None:
    prog = compiled(tmp_path, "fork_chain")
    bot = escaper(tmp_path, {"PROG": str(prog), "DETACH": "1", "ARGS": "20000 1"})
    try:
        used = rounds_stopped(bot)
        print("rounds", stop, [round(u * 1000, 1) for u in used])
        assert all(u < 0.02 for u in used), "a process ran while the bot was stopped"
    finally:
        bot.stop()


def test_the_sandbox_init_taken_over_is_stopped_with_the_bot(tmp_path: Path, stop: str) -> None:
    prog = compiled(tmp_path, "init_hijack")
    bot = escaper(tmp_path, {"PROG": str(prog)})
    try:
        used = rounds_stopped(bot)
        print("rounds", stop, [round(u * 1000, 1) for u in used])
        assert all(u < 0.02 for u in used), "a process ran while the bot was stopped"
    finally:
        bot.stop()


def test_a_bot_that_ran_while_stopped_is_ended_at_its_next_turn(tmp_path: Path, stop: str) -> None:
    """Whatever way a process finds to run while the bot is stopped, the CPU it used is
    seen when the bot is let run again: the bot is ended (a crash fault in a game). The
    way out is the stop's own lever: SIGCONT to stopped processes, the CPU limit of a
    held cgroup lifted."""
    from harness.referee import BotDied
    from harness.sandbox.throttle import unthrottle

    bot = thief(tmp_path, "bwrap", spinners=2)
    try:
        assert bot.cgroup is not None
        if stop == "signals":
            for pid in bot.cgroup.members():  # what an escaped process would do
                os.kill(pid, __import__("signal").SIGCONT)
        else:
            assert bot.cgroup.hold_dir is not None
            unthrottle(bot.cgroup.hold_dir)
        time.sleep(0.5)
        with pytest.raises(BotDied, match="ran while it was stopped"):
            bot.resume(check=True)
    finally:
        bot.stop()


def test_a_held_bot_is_stopped_and_let_run_without_a_signal_or_a_list_of_its_processes(
        tmp_path: Path, stop: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where its cgroup has a CPU controller, stopping a bot and letting it run again costs
    the same whatever it runs (16 spinning processes here): no signal to each process, no
    list of them, no thread's state read; one write and one read of its cgroup's files."""
    from harness.referee import pause
    from harness.sandbox.cgroups import BotCgroup

    if stop != "throttle":
        pytest.skip("the signals' stop visits every process")
    bot = thief(tmp_path, "bwrap", spinners=16)
    calls: list[str] = []
    monkeypatch.setattr(pause.os, "kill", lambda *a: calls.append("kill"))
    monkeypatch.setattr(pause, "thread_stats", lambda *a: calls.append("threads") or [])
    monkeypatch.setattr(BotCgroup, "members", lambda self: calls.append("members") or [])
    try:
        for _ in range(3):
            bot.resume(check=True)
            bot.pause()
            bot.confirm_stopped()
        assert calls == []
        assert cpu_over(bot, 0.5) < 0.02
    finally:
        monkeypatch.undo()
        bot.stop()


def test_the_next_start_ends_bots_a_killed_harness_left(tmp_path: Path) -> None:
    """A bot can clear its parent-death signal (in its sandbox's init, too): the bot
    cgroups of a harness process that is gone are emptied and removed at the next start."""
    import subprocess

    from harness.sandbox.cgroups import cgroups, sweep

    backend, why = cgroups()
    if backend is None:
        pytest.skip(f"no cgroups here: {why}")
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no process has now
    cg = backend.create("left", 64, 16)
    for d in cg.dirs.values():
        os.rename(d, d.replace(f"-{os.getpid()}-", f"-{gone.pid}-"))
    cg.dirs = {k: v.replace(f"-{os.getpid()}-", f"-{gone.pid}-") for k, v in cg.dirs.items()}
    if cg.hold_dir is not None:  # it moved with its cgroup
        cg.hold_dir = cg.hold_dir.replace(f"-{os.getpid()}-", f"-{gone.pid}-")
    left = subprocess.Popen(["sleep", "300"], preexec_fn=lambda: cg.join())
    try:
        os.kill(left.pid, __import__("signal").SIGSTOP)
        assert sweep(backend) >= 1
        assert left.wait(timeout=10) == -9
        assert not any(os.path.exists(d) for d in cg.dirs.values())
    finally:
        if left.poll() is None:
            left.kill()


def test_a_parent_waiting_in_vfork_for_a_stopped_child_counts_as_stopped(tmp_path: Path, stop: str) -> None:
    prog = compiled(tmp_path, "vfork_stall")
    bot = escaper(tmp_path, {"PROG": str(prog), "DETACH": "1"})
    try:
        used = rounds_stopped(bot)
        print("rounds", stop, [round(u * 1000, 1) for u in used])
        assert all(u < 0.02 for u in used), "a process ran while the bot was stopped"
        # Each stop was confirmed (the parent in D waits for its stopped child): none was
        # given up, which would have cost the referee 2 s a turn.
        assert bot.stop_giveups == 0 and bot._cpu_at_stop is not None
        bot.resume(check=True)  # no process appeared and none ran while it was stopped: no fault
    finally:
        bot.stop()


BURNER = textwrap.dedent("""
    import sys, time
    for line in sys.stdin:
        end = time.process_time() + float(line)
        while time.process_time() < end:
            pass
        print("done", flush=True)
""")


def _throttled_s(cgroup: BotCgroup) -> float:
    """The time the kernel kept the cgroup's processes from running for its CPU quota."""
    dirs = cgroup.dirs
    v2 = "" in dirs
    with open(os.path.join(dirs["" if v2 else "cpu"], "cpu.stat")) as fh:
        stat = dict(line.split() for line in fh if line.strip())
    return int(stat["throttled_usec"]) / 1e6 if v2 else int(stat["throttled_time"]) / 1e9


def test_a_bot_held_then_let_run_has_its_whole_quota_at_once() -> None:
    """A held bot let run again thinks at its full quota from the start: a single thread
    within a quota of 1 CPU is never throttled. (Held over a longer period than its
    quota's, it was given only one period's quota, 100 ms, until the held period ended:
    one that thought 150 ms waited up to a second.) Counted by the kernel's own
    throttled time, not by a clock."""
    import subprocess

    from harness.sandbox.cgroups import cgroups

    backend, why = cgroups()
    if backend is None or not backend.cpu_quota:
        pytest.skip(f"no cgroup with a CPU controller here: {why or 'no cpu controller'}")
    cg = backend.create("held-then-run", None, None, cpus=1)
    proc = subprocess.Popen([sys.executable, "-c", BURNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for path in cg.procs_files:
            with open(path, "w") as fh:
                fh.write(str(proc.pid))
        held = cg.throttle()
        assert held is not None
        assert proc.stdin is not None and proc.stdout is not None
        before = _throttled_s(cg)
        for hold_s in (0.05, 0.25, 0.45, 0.65):
            held.hold()
            time.sleep(hold_s)
            held.release()
            proc.stdin.write("0.3\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "done"
        throttled = _throttled_s(cg) - before
        assert throttled < 0.1, f"throttled {throttled:.2f} s while thinking, after being held"
    finally:
        proc.kill()
        proc.wait()
        cg.kill()
        cg.remove()
