"""Fair play: no bot process is dealt a deal twice; a runner that survives its workers
dying or being stopped; bounded memory and recordings whatever a bot sends; replays
readable whatever bytes a bot sends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
import yaml
from click.testing import CliRunner

from harness.cli import main
from harness.referee import BotProcess, BotSpec, FaultPolicy, TimeControl, handshake, play_game
from harness.referee.referee import MAX_EXTRA_LINES, RAW_KEEP, RECORDING_CAP, Recording
from harness.report.site import read_replay
from harness.engine import Rules
from harness.tournament.config import config_from
from harness.ledger.journal import read_journal
from harness.tournament.runner import run_tournament
from harness.tournament.schedule import schedule

ROOT = Path(__file__).resolve().parent.parent
FAULTY = [sys.executable, str(ROOT / "tests/bots/faulty.py")]
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
SMALL = {"phases": [1, 2], "hand_limit": 6}


def config(tmp: Path, out: str, bots: list[dict], **over):
    data = {
        "name": "fair", "seed": 5, "bots": bots, "table_size": 2, "games_per_table": 4, "parallel": 1,
        "rules": SMALL, "time": {"move_ms": 5000, "startup_ms": 10000}, "replays": "failed",
        "output": str(tmp / out),
    }
    data.update(over)
    return config_from(data, base=ROOT)


def records(out: Path) -> list[dict]:
    recs = sorted(read_journal(out / "games.jsonl", repair=False).values(), key=lambda r: r["id"])
    for r in recs:
        r.pop("duration_s")
        r.pop("replay_sha256", None)  # the replay holds its messages' times
    return recs


# ----- no deal seen twice ------------------------------------------------------------------


def _dealers() -> list[dict]:
    return [{"name": f"b{i}", "cmd": FAULTY + ["deals"]} for i in range(4)]


def _deals_by_process(cfg) -> dict[tuple[str, str], list[int]]:
    """{(entrant, process token): deal groups dealt to that process, in order}, from the
    bots' stderr logs."""
    group = {s.game: s.group for s in schedule(cfg)}
    seen: dict[tuple[str, str], list[int]] = {}
    for log in sorted((cfg.output / "logs").glob("b*.stderr.log")):
        name = log.name.split(".")[0]
        for line in log.read_text().splitlines():
            if line.startswith("| DEALT "):  # (a line the bot wrote)
                d = json.loads(line[8:])
                seen.setdefault((name, d["process"]), []).append(group[d["game"]])
    return seen


@pytest.mark.parametrize("parallel", [1, 2])
def test_no_bot_process_is_dealt_a_deal_twice_under_duplicate(tmp_path: Path, parallel: int) -> None:
    cfg = config(tmp_path, "out", _dealers(), table_size=3, games_per_table=3, duplicate=True,
                 parallel=parallel)
    outcome = run_tournament(cfg, build_site=False)
    assert outcome.finished and outcome.played == 12  # 4 tables of 3, one deal in 3 rotations each
    seen = _deals_by_process(cfg)
    assert sum(len(v) for v in seen.values()) == 36  # every seat of every game noted its hand
    for (name, proc), groups in seen.items():
        assert len(groups) == len(set(groups)), f"{name} process {proc} was dealt a deal twice: {groups}"
    # Processes are still reused across different deals.
    assert any(len(groups) > 1 for groups in seen.values()), seen
    board = json.loads((cfg.output / "leaderboard.json").read_text())
    assert board.get("trusted") == []


def test_duplicate_results_do_not_depend_on_parallel_or_trust(tmp_path: Path) -> None:
    outs = []
    for par, trusted in ((1, False), (2, False), (1, True)):
        d = tmp_path / f"p{par}{trusted}"
        d.mkdir()
        cfg = config(d, "out", _dealers(), table_size=3, games_per_table=3, duplicate=True, parallel=par,
                     trusted=trusted, replays="all")
        run_tournament(cfg, build_site=False)
        outs.append((cfg, d))
    base = records(outs[0][0].output)
    for cfg, _ in outs[1:]:
        assert records(cfg.output) == base
    # The trusted run reused its processes: one process per bot saw each deal in every rotation.
    cfg, d = outs[2]
    seen = _deals_by_process(cfg)
    assert len(seen) == 4 and any(len(g) != len(set(g)) for g in seen.values())
    board = json.loads((cfg.output / "leaderboard.json").read_text())
    assert board["trusted"] == ["b0", "b1", "b2", "b3"]
    assert "Trusted (one process may play every seat rotation of a deal): b0, b1, b2, b3." in (
        cfg.output / "leaderboard.md").read_text()
    assert yaml.safe_load((cfg.output / "config.resolved.yaml").read_text())["trusted"] == ["b0", "b1", "b2", "b3"]


def test_trusted_per_bot_and_its_errors() -> None:
    bots = [{"name": "a", "cmd": GREEDY, "trusted": True}, {"name": "b", "cmd": GREEDY}]
    cfg = config_from({"name": "x", "bots": bots}, base=ROOT)
    assert cfg.trusted == {"a"}
    cfg = config_from({"name": "x", "bots": [{**bots[0], "trusted": False}, bots[1]], "trusted": True}, base=ROOT)
    assert cfg.trusted == {"b"}
    with pytest.raises(ValueError, match=r"bots\[0\]\.trusted: must be true or false"):
        config_from({"name": "x", "bots": [{**bots[0], "trusted": "yes"}, bots[1]]}, base=ROOT)
    with pytest.raises(ValueError, match=r"trusted: must be true or false"):
        config_from({"name": "x", "bots": bots, "trusted": 1}, base=ROOT)


# ----- a runner that survives its parts -----------------------------------------------------

# Greedy, but 5 ms per answer: games long enough for a worker to be hit in the middle of one.
SLOW = FAULTY + ["late_always", "0.005"]


def _slow_bots() -> list[dict]:
    return [{"name": "slow", "cmd": SLOW}, {"name": "greedy", "cmd": GREEDY},
            {"name": "slow2", "cmd": SLOW}]


def _busy_worker() -> int | None:
    """The pid of a worker process of this process (a direct child) that has a bot running."""
    import psutil

    for child in psutil.Process().children():
        try:
            if any("faulty.py" in " ".join(g.cmdline()) for g in child.children()):
                return child.pid
        except psutil.Error:
            continue
    return None


def _hit_one_worker(sig: int, after: int):
    hit: dict[str, int] = {}

    def on_progress(progress) -> None:
        if hit or progress.done < after:
            return
        pid = _busy_worker()
        if pid is not None:
            hit["pid"] = pid
            os.kill(pid, sig)

    return hit, on_progress


def test_a_worker_killed_mid_run_is_replaced_and_its_game_played_once(tmp_path: Path) -> None:
    ref = config(tmp_path, "ref", _slow_bots(), parallel=2)
    run_tournament(ref, build_site=False)
    cfg = config(tmp_path, "killed", _slow_bots(), parallel=2)
    hit, on_progress = _hit_one_worker(signal.SIGKILL, after=3)
    outcome = run_tournament(cfg, on_progress=on_progress, build_site=False)
    assert hit, "no worker was killed"
    assert outcome.finished and outcome.played == 12
    assert records(cfg.output) == records(ref.output)  # every game exactly once, the same results
    assert (cfg.output / "leaderboard.json").read_bytes() == (ref.output / "leaderboard.json").read_bytes()
    [incident] = outcome.incidents
    assert "killed by SIGKILL" in incident["reason"]
    assert json.loads((cfg.output / "stats.json").read_text())["incidents"] == [incident]


def test_a_stopped_referee_is_caught_by_the_watchdog(tmp_path: Path) -> None:
    # Budget: max(move_ms, startup_ms) + 10 s = 12 s without progress.
    times = {"move_ms": 1000, "startup_ms": 2000}
    ref = config(tmp_path, "ref", _slow_bots(), parallel=2, time=times)
    run_tournament(ref, build_site=False)
    cfg = config(tmp_path, "stopped", _slow_bots(), parallel=2, time=times)
    hit, on_progress = _hit_one_worker(signal.SIGSTOP, after=2)
    outcome = run_tournament(cfg, on_progress=on_progress, build_site=False)
    assert hit, "no worker was stopped"
    assert outcome.finished and outcome.played == 12
    assert records(cfg.output) == records(ref.output)
    [incident] = outcome.incidents
    assert incident["reason"].startswith("watchdog: the game made no progress for"), incident
    assert "budget of 12 s" in incident["reason"]
    with pytest.raises(ProcessLookupError):  # the stopped worker was ended, not left behind
        for _ in range(50):
            os.kill(hit["pid"], 0)
            time.sleep(0.1)


def test_a_game_that_keeps_killing_workers_ends_the_run_with_an_error(tmp_path: Path, monkeypatch) -> None:
    import harness.tournament.executor as ex

    real = ex.GameRunner.run

    def deadly(self, spec, excluded=()):
        if spec.index == 2:
            os._exit(9)  # the worker dies playing game 2, every time
        return real(self, spec, excluded)

    monkeypatch.setattr(ex.GameRunner, "run", deadly)
    cfg = config(tmp_path, "out", [{"name": "a", "cmd": GREEDY}, {"name": "b", "cmd": GREEDY}], parallel=2)
    with pytest.raises(ex.ExecutorError, match=r"^game g000002 was lost 4 times \(the worker process died "
                                               r"\(exit code 9\)\)"):
        run_tournament(cfg, build_site=False)
    assert 2 not in read_journal(cfg.output / "games.jsonl")


# ----- bounded cost per bot -----------------------------------------------------------------


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


#: The bound protocol/LIMITS.md states for the main process and each worker process.
RSS_BOUND_MIB = 200


def test_100_mb_of_blank_lines_keeps_main_and_worker_under_the_bound(tmp_path: Path) -> None:
    import psutil

    flood = 100_000_000
    bots = [{"name": "flood", "cmd": FAULTY + ["blank_flood", str(flood)]}, {"name": "greedy", "cmd": GREEDY}]
    data = {"name": "flood", "seed": 3, "bots": bots, "table_size": 2, "games_per_table": 2, "parallel": 1,
            "rules": SMALL, "time": {"move_ms": 3000, "startup_ms": 10000}, "replays": "all",
            "output": str(tmp_path / "out")}
    path = tmp_path / "flood.yaml"
    path.write_text(yaml.safe_dump(data))
    p = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(path), "--no-site"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = {"main": 0.0, "worker": 0.0}
    while p.poll() is None:
        peak["main"] = max(peak["main"], _rss_mib(p.pid))
        try:
            for c in psutil.Process(p.pid).children():
                if "faulty.py" not in " ".join(c.cmdline()):  # the worker, not a bot
                    peak["worker"] = max(peak["worker"], _rss_mib(c.pid))
        except psutil.Error:
            pass
        time.sleep(0.02)
    out, err = p.communicate()
    assert p.returncode == 0, err.decode()
    assert peak["worker"] > 0, "the worker was never seen"
    print(f"peak resident memory (MiB): {peak}")
    assert peak["main"] < RSS_BOUND_MIB and peak["worker"] < RSS_BOUND_MIB, peak
    recs = list(read_journal(tmp_path / "out" / "games.jsonl").values())
    assert len(recs) == 2
    for r in recs:
        seat = r["seats"].index("flood")
        assert seat in r["forfeits"]  # strikes for the blank lines, then forfeit
        assert any(f["kind"] == "malformed" and "lines without a reply" in f["reason"] for f in r["faults"])
        replay = tmp_path / "out" / r["replay"]
        assert replay.stat().st_size < 2 * RECORDING_CAP


def _game(name: str, args: list[str], record: bool = False, policy: FaultPolicy = FaultPolicy()):
    """One game of faulty.py ARGS (seat 0, entrant `name`) against the greedy bot."""
    bots = [BotProcess(BotSpec(name, tuple(FAULTY + args))), BotProcess(BotSpec("greedy", tuple(GREEDY)))]
    tc = TimeControl(move_ms=5000)
    try:
        for b in bots:
            handshake(b, b.spec.name, tc)
        return play_game(bots, [name, "greedy"], Rules.from_dict(SMALL), 1, "g0", time_control=tc,
                         policy=policy, record=record)
    finally:
        for b in bots:
            b.stop()


def test_blank_lines_count_toward_the_line_limit() -> None:
    result = _game("flood", ["blank_flood", str(MAX_EXTRA_LINES + 1)], policy=FaultPolicy(retries=1, max_strikes=3))
    assert result.forfeits == [0]
    assert result.faults[0].kind == "malformed"
    assert result.faults[0].reason.startswith(f"protocol: {MAX_EXTRA_LINES + 1} lines without a reply to request")
    # A few blank lines are still allowed: a bot that writes exactly the limit plays on.
    result = _game("few", ["blank_flood", str(MAX_EXTRA_LINES)])
    assert result.faults == [] and result.forfeits == []


def test_a_recording_keeps_at_most_the_cap_per_seat_and_says_where_it_was_cut() -> None:
    rec = Recording(cap=10_000)
    reply = b'{"id":1,"draw":"deck","pad":"' + b"x" * 3000 + b'"}'
    for i in range(10):
        rec.msg("from", 0, float(i), reply, True)
        rec.msg("from", 1, float(i), b"junk" * 5000, False)  # kept: RAW_KEEP bytes of each
        rec.msg("to", 0, float(i), b'{"type":"request"}\n', True)
    lines = [orjson.loads(x) for x in rec.lines()]
    mine = [x for x in lines if x.get("dir") == "from" and x["seat"] == 0]
    assert len(mine) == 3  # 3 x 3 kB fit in 10 kB
    theirs = [x for x in lines if x.get("dir") == "from" and x["seat"] == 1]
    assert len(theirs) == 2 and all(len(x["raw"]) == RAW_KEEP and x["bytes"] == 20000 for x in theirs)
    cuts = [x for x in lines if x["type"] == "note" and x.get("cut")]
    assert sorted(x["seat"] for x in cuts) == [0, 1]
    assert "10000 bytes" in cuts[0]["text"]
    assert sum(1 for x in lines if x.get("dir") == "to") == 10  # the referee's own lines are all kept


def test_over_long_lines_are_cut_from_the_replay_at_the_cap() -> None:
    result = _game("long", ["long_line", "400000"], record=True)
    lines = [orjson.loads(x) for x in result.replay]
    kept = sum(len(x) for x, y in zip(result.replay, lines) if y.get("dir") == "from" and y["seat"] == 0)
    assert kept <= RECORDING_CAP + 1000
    assert any(y["type"] == "note" and y.get("cut") and y["seat"] == 0 for y in lines)
    assert any(y["type"] == "action" for y in lines)  # the moves are all there


# ----- replays always readable --------------------------------------------------------------


@pytest.mark.parametrize("kind, shown", [
    ("cr", "\r"), ("nul", "\x00"), ("utf8", "\\xff\\xfe"), ("nest", "[[[["),
])
def test_a_weird_reply_leaves_a_readable_replay(tmp_path: Path, kind: str, shown: str) -> None:
    result = _game("weird", ["weird", kind], record=True)
    path = tmp_path / "g0.jsonl"
    path.write_bytes(b"\n".join(result.replay) + b"\n")
    data = path.read_bytes()
    assert data.isascii() and b"\r" not in data and b"\x00" not in data
    # Every line is a small JSON object, in whatever way it is read.
    assert len(data.decode().splitlines()) == len(result.replay)
    assert all(isinstance(json.loads(x), dict) for x in data.decode().splitlines())
    # The evidence is there, escaped.
    raws = [json.loads(x).get("raw") for x in data.decode().splitlines()]
    assert any(r is not None and shown in r for r in raws), raws[:5]
    # The site's loader and `p10-tourney replay` read it.
    header, actions, end = read_replay(path)
    assert header["game"] == "g0" and actions and end is not None
    res = CliRunner().invoke(main, ["replay", str(path)])
    assert res.exit_code == 0, res.output
    assert "weird" in res.output


def test_weird_replies_in_a_tournament_leave_a_site(tmp_path: Path) -> None:
    bots = [{"name": "greedy", "cmd": GREEDY}] + [
        {"name": f"weird-{k}", "cmd": FAULTY + ["weird", k]} for k in ("cr", "nul", "utf8", "nest")]
    cfg = config(tmp_path, "out", bots, games_per_table=2, replays="all")
    outcome = run_tournament(cfg, build_site=True)
    assert outcome.finished
    pages = list((cfg.output / "site").rglob("*.html"))
    assert pages
    for rep in (cfg.output / "replays").iterdir():
        read_replay(rep)
        assert CliRunner().invoke(main, ["replay", str(rep)]).exit_code == 0


def test_a_replay_written_before_escaping_with_a_raw_carriage_return_is_read(tmp_path: Path) -> None:
    result = _game("weird", ["weird", "cr"], record=True)
    lines = list(result.replay)
    # As replays were written before: the reply as it came, \r included.
    at = next(i for i, x in enumerate(lines) if b'"raw":' in x and b"\\r" in x)
    msg = json.loads(lines[at])
    lines[at] = orjson.dumps({k: v for k, v in msg.items() if k != "raw"})[:-1] + b',"msg":' + msg["raw"].encode() + b"}"
    assert b"\r" in lines[at]
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    header, actions, end = read_replay(path)
    assert header["game"] == "g0" and actions and end is not None
    assert CliRunner().invoke(main, ["replay", str(path)]).exit_code == 0


# ----- an entrant's processes share its memory limit --------------------------------------


HOARDER = """
import os, sys
from harness.players import GreedyStrategy
from harness.sdk import StrategyBot, run

held = bytearray(int(sys.argv[1]) << 20)
for i in range(0, len(held), 4096):
    held[i] = 1  # touched: resident, charged to the bot's cgroup
run(StrategyBot(GreedyStrategy(), name="hoarder"))
"""


def test_waiting_processes_of_an_entrant_share_its_memory_limit(tmp_path: Path) -> None:
    """With duplicate deals an entrant keeps up to table_size processes; a bot that holds
    memory in each is held to one `memory_mb` across them: the process holding most is
    ended between games and started afresh when needed, with no fault. A bot within its
    limit keeps all of its processes."""
    from harness.sandbox.cgroups import cgroups

    backend, why = cgroups()
    if backend is None:
        pytest.skip(f"no cgroups here ({why}): the limits hold per process")
    script = tmp_path / "hoarder" / "hoarder.py"
    script.parent.mkdir()
    script.write_text(HOARDER)
    bots = [{"name": "hoarder", "cmd": [sys.executable, str(script), "80"], "limits": {"memory_mb": 200}},
            {"name": "g1", "cmd": GREEDY}, {"name": "g2", "cmd": GREEDY}]
    cfg = config(tmp_path, "out", bots, table_size=3, games_per_table=9, duplicate=True)
    outcome = run_tournament(cfg)
    recs = records(cfg.output)
    assert len(recs) == 9 and all(r["faults"] == [] for r in recs), [r["faults"] for r in recs]
    assert outcome.bot_starts["g1"] == 3 and outcome.bot_starts["g2"] == 3, outcome.bot_starts
    assert outcome.bot_starts["hoarder"] > 3, outcome.bot_starts
