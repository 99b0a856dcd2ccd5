"""The Dask executor on a LocalCluster of 2 worker processes: the same games and
leaderboard as the local executor, a worker killed mid-tournament, and the early check
that every worker can start every bot."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

distributed = pytest.importorskip(
    "distributed", reason="the dask executor needs the cluster extra: pip install 'dask[distributed]'"
)

from harness.cli import main  # noqa: E402
from harness.tournament.config import config_from  # noqa: E402
from harness.tournament.dask_executor import LOG_DIR_ENV, ClusterError, DaskExecutor, check_report  # noqa: E402
from harness.ledger.journal import read_journal  # noqa: E402
from harness.tournament.runner import run_tournament  # noqa: E402
from harness.tournament.schedule import schedule  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
RANDOM = [sys.executable, str(ROOT / "bots/python/random_bot.py"), "5"]
# Greedy, but 3 ms per answer: games long enough for a worker to die in the middle of one.
SLOW = [sys.executable, str(ROOT / "tests/bots/faulty.py"), "late_always", "0.003"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """A LocalCluster the tests reach through its address, as they would a remote one."""
    logs = tmp_path_factory.mktemp("worker-logs")
    old = os.environ.get(LOG_DIR_ENV)
    os.environ[LOG_DIR_ENV] = str(logs)  # inherited by the worker processes
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"}) as c:
            c.worker_logs = logs
            yield c
    finally:
        if old is None:
            os.environ.pop(LOG_DIR_ENV, None)
        else:
            os.environ[LOG_DIR_ENV] = old


def config(tmp: Path, out: str, **over):
    data = {
        "name": "dask-t",
        "seed": 11,
        "bots": [
            {"name": "greedy", "cmd": GREEDY},
            {"name": "random", "cmd": RANDOM},
            {"name": "greedy2", "cmd": GREEDY},
        ],
        "table_size": 2,
        "games_per_table": 4,
        "parallel": 2,
        "rules": {"phases": [1, 2], "hand_limit": 20},
        "time": {"move_ms": 5000, "startup_ms": 10000},
        "replays": "failed",
        "output": str(tmp / out),
    }
    data.update(over)
    return config_from(data, base=ROOT)


def records(out: Path) -> list[dict]:
    lines = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines() if x.strip()]
    assert len({r["id"] for r in lines}) == len(lines), "a game recorded twice"
    for r in lines:
        r.pop("duration_s")
        r.pop("replay_sha256", None)  # the replay holds its messages' times
        r.pop("chain")  # covers the order games finished in and their durations
    return sorted(lines, key=lambda r: r["id"])


def board(out: Path) -> dict:
    return json.loads((out / "leaderboard.json").read_text())


def bot_processes() -> list[str]:
    """Bot command lines among this process's descendants (the cluster's workers' bots)."""
    import psutil

    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            cmd = " ".join(p.cmdline())
        except psutil.Error:
            continue
        if "bots/python/" in cmd or "faulty.py" in cmd:
            found.append(cmd)
    return found


def no_bots_left(deadline_s: float = 5.0) -> bool:
    end = time.monotonic() + deadline_s
    while bot_processes():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def test_same_games_and_leaderboard_as_local(tmp_path: Path, cluster) -> None:
    local = config(tmp_path, "local")
    dask = config(tmp_path, "dask", executor="dask", scheduler=cluster.scheduler_address)
    assert dask.fingerprint() == local.fingerprint()
    run_tournament(local, build_site=False)
    outcome = run_tournament(dask, build_site=False)
    assert outcome.finished and outcome.played == len(schedule(dask)) == 12
    assert records(dask.output) == records(local.output)
    assert board(dask.output) == board(local.output)
    # Each worker kept one process per entrant across its games.
    assert all(n <= 2 for n in outcome.bot_starts.values()), outcome.bot_starts
    # The workers are "remote": their bots' stderr logs stay on the workers.
    assert not any((dask.output / "logs").iterdir())
    assert any((cluster.worker_logs / "dask-t").iterdir())
    assert no_bots_left(), bot_processes()  # the plugin's teardown ended them


def test_resume_on_dask_plays_only_what_is_missing(tmp_path: Path, cluster) -> None:
    cfg = config(tmp_path, "resume", executor="dask", scheduler=cluster.scheduler_address)
    local = config(tmp_path, "local")
    run_tournament(local, build_site=False)
    out = cfg.output
    out.mkdir()
    kept = (local.output / "games.jsonl").read_text().splitlines()[:5]
    (out / "games.jsonl").write_text("\n".join(kept) + "\n")
    # The same config and seed, so the same chain: as a run stopped after 5 games leaves it.
    meta = json.loads((local.output / "tournament.json").read_text())
    meta |= {"games": 5, "journal_head": json.loads(kept[-1])["chain"], "finished": False}
    (out / "tournament.json").write_text(json.dumps(meta))
    outcome = run_tournament(cfg, build_site=False)
    assert outcome.played == 7 and outcome.finished
    assert records(out) == records(local.output)


def test_worker_killed_mid_tournament(tmp_path: Path, cluster) -> None:
    bots = [{"name": "slow", "cmd": SLOW}, {"name": "greedy", "cmd": GREEDY}, {"name": "random", "cmd": RANDOM}]
    local = config(tmp_path, "local", bots=bots)
    dask = config(tmp_path, "dask", bots=bots, executor="dask", scheduler=cluster.scheduler_address)
    run_tournament(local, build_site=False)

    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    killed: dict[str, object] = {}

    def kill_one_busy_worker(progress) -> None:
        if killed or progress.done < 3:
            return
        busy = [w for w, keys in client.processing().items() if keys]
        victim = busy[0]
        pid = client.run(os.getpid, workers=[victim])[victim]
        recorded = {r["game"] for r in records(dask.output)} if (dask.output / "games.jsonl").exists() else set()
        killed.update(worker=victim, pid=pid, games=client.processing()[victim], recorded=recorded)
        os.kill(pid, signal.SIGKILL)

    try:
        outcome = run_tournament(dask, on_progress=kill_one_busy_worker, build_site=False)
        assert killed, "no worker was killed"
        assert killed["games"], "the killed worker was not playing"
        assert outcome.finished and outcome.played == 12
        assert records(dask.output) == records(local.output)  # each game once, as locally
        assert board(dask.output) == board(local.output)
        # the loss is recorded (and printed by `run`), as a local worker's is
        # Every game the worker held when it died is lost; the scheduler may also have handed
        # it another between the look at what it held and the kill, so the lost games are
        # those it held and maybe more, each a game of the tournament that was then unplayed.
        lost = {i["game"] for i in outcome.incidents if i["worker"] == killed["worker"]}
        held = {k.split("-")[1] for k in killed["games"]}
        assert lost & held and lost.isdisjoint(killed["recorded"]), (outcome.incidents, killed)
        assert lost <= {r["game"] for r in records(dask.output)}
        assert json.loads((dask.output / "stats.json").read_text())["incidents"] == outcome.incidents
        client.wait_for_workers(2, timeout=30)  # the nanny restarts the worker
    finally:
        client.close()
    assert no_bots_left(), bot_processes()  # the dead worker's bots died with it


@pytest.mark.parametrize("cmd, why", [
    (["/nonexistent/p10-ghost-bot"], "command not found"),
    ([sys.executable, "bots/python/no_such_bot.py"], "failed the handshake"),
])
def test_a_bot_missing_on_the_workers_fails_early(tmp_path: Path, cluster, cmd: list[str], why: str) -> None:
    bots = [{"name": "greedy", "cmd": GREEDY}, {"name": "ghost", "cmd": cmd}]
    cfg = config(tmp_path, "missing", bots=bots, executor="dask", scheduler=cluster.scheduler_address)
    with pytest.raises(ClusterError) as info:
        run_tournament(cfg, build_site=False)
    text = str(info.value)
    assert "\n" not in text
    workers = sorted(cluster.scheduler_info["workers"])
    assert text.startswith(f"worker {workers[0]} cannot start bot 'ghost': ")
    assert why in text and workers[1] in text and "'greedy'" not in text
    assert read_journal(cfg.output / "games.jsonl") == {}  # no game was played
    assert no_bots_left(), bot_processes()


def test_a_failed_build_and_a_command_through_dotdot_play_as_on_local_workers(tmp_path: Path, cluster) -> None:
    """On the workers as locally: a bot named through `..` and a link plays (its path is
    made the host's before it is bound), and one whose build fails is disqualified while
    the others play: the same games and leaderboard as the local executor."""
    import shutil

    template = ROOT / "bots/templates/python/bot.py"  # the standard library only: runs in any sandbox
    for name in ("a/b", "a/c", "fails"):
        (tmp_path / name).mkdir(parents=True, exist_ok=True)
    shutil.copy(template, tmp_path / "a/c/bot.py")
    shutil.copy(template, tmp_path / "fails/bot.py")
    (tmp_path / "fails/build.sh").write_text("echo made > made.txt; exit 3\n")
    (tmp_path / "lnk").symlink_to("a/b")
    for p in (tmp_path, *(q for q in tmp_path.rglob("*") if q.is_dir() and not q.is_symlink())):
        os.chmod(p, 0o755)
    bots = [{"name": "dotdot", "cmd": ["python", f"{tmp_path}/lnk/../c/bot.py"]},
            {"name": "fails", "cmd": ["python", "bot.py"], "cwd": str(tmp_path / "fails"), "build": "sh build.sh"},
            {"name": "plain", "cmd": ["python", str(template)]}]
    local = config(tmp_path, "local", bots=bots, replays="none")
    dask = config(tmp_path, "dask", bots=bots, replays="none", executor="dask", scheduler=cluster.scheduler_address)
    run_tournament(local, build_site=False)
    outcome = run_tournament(dask, build_site=False)
    assert outcome.finished and list(outcome.disqualified) == ["fails"]
    assert "exit code 3" in outcome.disqualified["fails"]
    assert records(dask.output) == records(local.output)
    assert board(dask.output) == board(local.output)
    played = [r for r in records(dask.output) if len(r["seats"]) == 2]
    assert played and all(not r["faults"] for r in played)
    assert sorted(os.listdir(tmp_path / "fails")) == ["bot.py", "build.sh"]


def test_cli_on_its_own_local_cluster(tmp_path: Path, cluster) -> None:
    """`--executor dask` with no scheduler: a LocalCluster is started for the run and closed
    after; the workers share this machine, so the bots' logs are in the results folder."""
    local = config(tmp_path, "local", games_per_table=2)
    run_tournament(local, build_site=False)
    data = {**local.raw, "output": str(tmp_path / "own"), "base_dir": str(ROOT)}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(main, ["run", str(path), "--executor", "dask", "--no-site", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "6 games played" in res.output
    assert records(tmp_path / "own") == records(local.output)
    logs = sorted(p.name for p in (tmp_path / "own" / "logs").iterdir())
    assert "greedy.w0.stderr.log" in logs
    assert no_bots_left(), bot_processes()


def test_cli_missing_bot_is_one_error_line(tmp_path: Path, cluster) -> None:
    data = {**config(tmp_path, "x").raw, "base_dir": str(ROOT),
            "bots": [{"name": "greedy", "cmd": GREEDY}, {"name": "ghost", "cmd": ["/nonexistent/p10-ghost-bot"]}]}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(main, ["run", str(path), "--scheduler", cluster.scheduler_address,
                                    "--no-site", "--no-progress"])
    assert res.exit_code == 1
    assert res.output.startswith("Error: worker tcp://127.0.0.1:") and res.output.count("\n") == 1
    assert "cannot start bot 'ghost': command not found" in res.output


def test_executor_kept_open_across_runs(tmp_path: Path, cluster) -> None:
    """Used as a context manager, one connection, one check and the same bot processes
    serve several `run` calls (rounds); leaving the block ends the bots."""
    cfg = config(tmp_path, "rounds", executor="dask", scheduler=cluster.scheduler_address)
    specs = schedule(cfg)
    with DaskExecutor(cfg, None) as ex:
        first = [r["record"]["id"] for r in ex.run(specs[:6])]
        client = ex.client
        results = list(ex.run(specs[6:], excluded={"random"}))
        assert ex.client is client
    assert sorted(first) == list(range(6))
    assert sorted(r["record"]["id"] for r in results) == list(range(6, 12))
    assert all("random" not in r["record"]["seats"] for r in results)
    starts: dict[str, int] = {}
    for r in results:
        for name, n in r["starts"].items():
            starts[name] = max(starts.get(name, 0), n)
    assert max(starts.values()) == 1  # no bot restarted for the second round
    assert ex.client is None
    assert no_bots_left(), bot_processes()


def test_check_report_names_worker_and_bot() -> None:
    assert check_report({"tcp://a:1": {}, "tcp://b:2": {}}) is None
    text = check_report({"tcp://b:2": {"js": "bot 'js': command not found: 'node'"},
                         "tcp://a:1": Exception("ModuleNotFoundError(\"No module named 'harness'\")")})
    assert text.startswith("worker tcp://a:1 could not run the bot check (ModuleNotFoundError(\"No module named "
                           "'harness'\")); is p10-tourney installed in the worker's Python environment? (and 1 more: ")
    assert "(and 1 more: worker tcp://b:2 cannot start bot 'js': command not found: 'node'). Every worker" in text
    assert check_report({"tcp://a:1": OSError("gone")}).endswith("(OSError: gone); is p10-tourney installed in "
                                                                 "the worker's Python environment?")


def test_a_game_that_keeps_killing_workers_is_a_clear_error(tmp_path: Path) -> None:
    """When Dask gives up on a game (allowed_failures workers died running it), the run
    stops with a ClusterError naming the game, not a bare KilledWorker."""
    cfg = config(tmp_path, "x", executor="dask")
    spec = schedule(cfg)[3]

    class Lost:
        status = "error"

    exc = distributed.KilledWorker("p10-g000003-x", "tcp://10.0.0.9:4000", 3)
    with pytest.raises(ClusterError, match=r"^game g000003 was lost: 4 workers died while playing it"):
        DaskExecutor(cfg, None)._failed(Lost(), spec, (type(exc), exc, None))


def test_plugin_keeps_bots_across_games_and_ends_idle_ones(tmp_path: Path, monkeypatch) -> None:
    """In one worker: a runner per concurrent game, reused; bots idle for IDLE_CLOSE_S are
    ended and start again for their next game; teardown ends the rest."""
    import threading
    from types import SimpleNamespace

    from harness.tournament import dask_executor

    cfg = config(tmp_path, "x")
    specs = schedule(cfg)
    plugin = dask_executor.GamePlugin("p", cfg, str(tmp_path / "logs"), lease_s=3600.0)
    monkeypatch.setattr(dask_executor, "IDLE_CLOSE_S", 3600.0)
    plugin.setup(SimpleNamespace(name="tcp://10.1.2.3:4567-0", address="tcp://10.1.2.3:4567"))
    try:
        a = plugin.play(specs[0], ())
        b = plugin.play(specs[1], ())
        assert a["worker"] == b["worker"] == "tcp://10.1.2.3:4567#0"
        assert b["starts"] == {"greedy": 1, "random": 1}
        assert (tmp_path / "logs" / "greedy.10.1.2.3_4567.stderr.log").exists()
        runner = plugin._runners[0]
        monkeypatch.setattr(dask_executor, "IDLE_CLOSE_S", 0.2)
        plugin._stop.set()  # the reaper again, with the short period
        time.sleep(0.1)
        plugin._stop.clear()
        threading.Thread(target=plugin._reap, daemon=True).start()
        deadline = time.monotonic() + 5
        while (plugin._runners or any(bot.alive for bot in runner.bots.values())) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(bot.alive for bot in runner.bots.values())
        c = plugin.play(specs[2], ())
        # A new runner: its own starts, so the caller's sum over runners counts both.
        assert c["worker"] == "tcp://10.1.2.3:4567#1" and c["starts"] == {"greedy": 1, "random": 1}
        runner = plugin._runners[1]
    finally:
        plugin.teardown(None)
    assert not any(bot.alive for bot in runner.bots.values())


def test_unreachable_scheduler_and_no_workers_are_clear_errors(tmp_path: Path, monkeypatch) -> None:
    from harness.tournament import dask_executor

    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 1.0)
    monkeypatch.setattr(dask_executor, "WORKERS_TIMEOUT", 1.0)
    cfg = config(tmp_path, "x", executor="dask", scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ClusterError, match=r"^cannot reach the Dask scheduler at tcp://127.0.0.1:1: "):
        list(DaskExecutor(cfg, None).run(schedule(cfg)))
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": ":0"}) as empty:
        cfg = config(tmp_path, "y", executor="dask", scheduler=empty.scheduler_address)
        with pytest.raises(ClusterError, match=r"^no Dask worker joined the scheduler at tcp://127.0.0.1:\d+ within 1 s; "
                                               r"start some with: dask worker tcp://"):
            list(DaskExecutor(cfg, None).run(schedule(cfg)))


# ----- the lease: bots end when the process that runs the tournament is gone ---------------


def _proc_tree() -> dict[int, tuple[int, str, str]]:
    """pid → (parent pid, state, command line) of every process, from /proc."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2:].split()
        out[int(d)] = (int(rest[1]), rest[0], cmd)
    return out


def _bots_under(root: int) -> list[int]:
    """Live (not zombie) bot processes descending from process `root`."""
    tree = _proc_tree()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in tree.items():
        kids.setdefault(ppid, []).append(pid)
    found, todo = [], list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        _, state, cmd = tree[pid]
        if state != "Z" and "faulty.py" in cmd:
            found.append(pid)
    return found


def _wait(what, bound_s: float, every_s: float = 0.2):
    end = time.monotonic() + bound_s
    while True:
        value = what()
        if value or time.monotonic() > end:
            return value
        time.sleep(every_s)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc (Linux)")
def test_main_process_killed_the_workers_end_their_bots(tmp_path: Path) -> None:
    """A scheduler and a worker of their own (as on a cluster); the tournament's process,
    killed with SIGKILL mid-run, can say nothing: the lease it renewed lapses and the
    worker ends the bots, within 30 s of the kill, while the worker itself lives on."""
    import subprocess

    from harness.tournament import dask_executor

    env = dict(os.environ, **{LOG_DIR_ENV: str(tmp_path / "worker-logs")})
    sched_file = tmp_path / "scheduler.json"
    procs = []

    def start(*args: str, log: str) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-m", *args], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=open(tmp_path / log, "wb"), start_new_session=True)
        procs.append(p)
        return p

    try:
        start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
              "--scheduler-file", str(sched_file), log="scheduler.log")
        assert _wait(lambda: sched_file.exists() and sched_file.stat().st_size > 0, 60), "no scheduler"
        address = json.loads(sched_file.read_text())["address"]
        worker = start("distributed.cli.dask_worker", address, "--nworkers", "2", "--nthreads", "1",
                       "--no-dashboard", log="worker.log")
        slow = {"name": "slow", "cmd": SLOW}
        cfg = {"name": "lease-t", "seed": 3, "table_size": 2, "games_per_table": 200, "parallel": 2,
               "bots": [dict(slow, name="a"), dict(slow, name="b"), dict(slow, name="c")],
               "rules": {"phases": [1, 2, 3], "hand_limit": 20}, "time": {"move_ms": 5000, "startup_ms": 20000},
               "replays": "none", "output": str(tmp_path / "out"), "executor": "dask", "scheduler": address,
               "base_dir": str(ROOT)}
        (tmp_path / "t.yaml").write_text(yaml.safe_dump(cfg))
        main_proc = start("harness.cli", "run", str(tmp_path / "t.yaml"), "--no-progress", "--no-site", log="main.log")
        games = tmp_path / "out" / "games.jsonl"
        playing = _wait(lambda: games.exists() and games.read_bytes().count(b"\n") >= 2
                        and len(_bots_under(worker.pid)) >= 3, 180)
        assert playing, (tmp_path / "main.log").read_text()[-2000:] + (tmp_path / "worker.log").read_text()[-2000:]
        assert main_proc.poll() is None
        main_proc.kill()  # SIGKILL: no cleanup of any kind in the main process
        main_proc.wait()
        killed = time.monotonic()
        gone = _wait(lambda: not _bots_under(worker.pid), 30.0)
        took = time.monotonic() - killed
        assert gone, f"bots still running 30 s after the main process was killed: {_bots_under(worker.pid)}"
        assert worker.poll() is None  # ended by the lease, not with their worker
        print(f"bots gone {took:.1f} s after the kill (lease {dask_executor.LEASE_S:.0f} s)")
    finally:
        for p in reversed(procs):  # each in a session of its own: its process group, its children
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def test_work_ahead_counts_the_threads_of_the_whole_machine(tmp_path: Path) -> None:
    """Single-threaded workers filling a machine: none works ahead, though each has one
    thread; alone on a machine with CPUs to spare, a worker does."""
    from types import SimpleNamespace

    from harness.tournament import dask_executor

    cpus = len(os.sched_getaffinity(0))
    plugin = dask_executor.GamePlugin("p", config(tmp_path, "x"), str(tmp_path / "logs"), lease_s=3600.0)
    plugin.setup(SimpleNamespace(name=0, address="tcp://127.0.0.1:1", nthreads=1))
    try:
        me, threads = plugin.renew(None)
        assert (me, threads) == (dask_executor.machine_id(), 1)
        plugin.renew({me: cpus})  # as many game threads on this machine as CPUs
        assert plugin.work_ahead is False
        plugin.renew({me: 1, "boot:elsewhere": 64})
        assert plugin.work_ahead is (cpus > 1)
    finally:
        plugin.teardown(None)


def test_the_executor_renews_the_lease_and_counts_threads_by_machine(tmp_path: Path, cluster) -> None:
    from harness.tournament import dask_executor

    cfg = config(tmp_path, "x", executor="dask", scheduler=cluster.scheduler_address)
    ex = DaskExecutor(cfg, None)
    with ex:
        ex.start()
        assert ex.threads_by_machine == {dask_executor.machine_id(): 2}  # the 2 single-threaded workers
        name = ex.plugin
        seen = ex.client.run(lambda dask_worker: dask_worker.plugins[name]._renewed)
        time.sleep(dask_executor.LEASE_RENEW_S * 2.5)
        again = ex.client.run(lambda dask_worker: dask_worker.plugins[name]._renewed)
        assert all(again[w] > seen[w] for w in seen)
        assert set(ex.client.run(lambda dask_worker: dask_worker.plugins[name].work_ahead).values()) == {
            len(os.sched_getaffinity(0)) > 2}


def _dask_worker_with_a_bot() -> int | None:
    """The pid of a Dask worker process (under this process) that has a bot running."""
    import psutil

    for p in psutil.Process().children(recursive=True):
        try:
            if any("faulty.py" in " ".join(c.cmdline()) for c in p.children()):
                return p.pid
        except psutil.Error:
            continue
    return None


def test_a_stopped_worker_of_its_own_cluster_is_restarted_and_its_game_played_once(tmp_path: Path) -> None:
    """SIGSTOP of a worker of the LocalCluster the executor starts: the scheduler's worker
    TTL (the watchdog budget, 12 s here) has its nanny restart it, and its game is played
    again elsewhere, once."""
    bots = [{"name": "slow", "cmd": SLOW}, {"name": "greedy", "cmd": GREEDY}, {"name": "random", "cmd": RANDOM}]
    times = {"move_ms": 1000, "startup_ms": 2000}
    local = config(tmp_path, "local", bots=bots, time=times)
    run_tournament(local, build_site=False)
    dask = config(tmp_path, "dask", bots=bots, executor="dask", time=times)
    stopped: dict[str, int] = {}

    def stop_one_busy_worker(progress) -> None:
        if stopped or progress.done < 3:
            return
        pid = _dask_worker_with_a_bot()
        if pid is not None:
            stopped["pid"] = pid
            os.kill(pid, signal.SIGSTOP)

    try:
        outcome = run_tournament(dask, on_progress=stop_one_busy_worker, build_site=False)
        assert stopped, "no worker was stopped"
        assert outcome.finished and outcome.played == 12
        assert records(dask.output) == records(local.output)  # each game once, as locally
        assert board(dask.output) == board(local.output)
    finally:
        if stopped:
            try:
                os.kill(stopped["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
