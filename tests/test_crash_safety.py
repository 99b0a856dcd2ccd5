"""Crash safety: games.jsonl survives the harness being killed at any moment.

A real `p10-tourney run` is killed with SIGKILL at seeded random moments, several times,
then run to its end: the final games.jsonl must equal that of an uninterrupted run
(sorted by id, durations aside), and after each kill no process of the tournament may be
left (the workers learn of their parent's death and end their bots).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest
import yaml

from harness.ledger.journal import Journal, JournalError, genesis, read_chain, read_journal

ROOT = Path(__file__).resolve().parents[1]
MARK = "P10_CRASH_MARK"


def write_config(path: Path, out: Path, parallel: int) -> Path:
    bots = [{"name": n, "cmd": "python bots/python/greedy.py"} for n in ("a", "b", "c")]
    cfg = {"name": "crash", "seed": 5, "base_dir": str(ROOT), "bots": bots, "table_size": 2,
           "games_per_table": 60, "parallel": parallel, "rules": {"phases": [1, 2, 3]},
           "time": {"move_ms": 2000, "startup_ms": 10000}, "replays": "none", "output": str(out)}
    path.write_text(yaml.safe_dump(cfg))
    return path


def start(cfg: Path, mark: str) -> subprocess.Popen:
    env = dict(os.environ, **{MARK: mark})
    return subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(cfg), "--no-site", "--no-progress"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def marked(mark: str) -> list[str]:
    needle = f"{MARK}={mark}".encode()
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if needle in Path(f"/proc/{p}/environ").read_bytes().split(b"\0"):
                    out.append(Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


def wait_gone(mark: str, timeout: float = 8.0) -> list[str]:
    end = time.monotonic() + timeout
    while (left := marked(mark)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def normalized(path: Path) -> list[dict]:
    recs = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    for r in recs:
        r.pop("duration_s", None)
        r.pop("replay_sha256", None)  # the replay holds its messages' times
        r.pop("chain", None)  # covers the order games finished in and their durations
    return sorted(recs, key=lambda r: r["id"])


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def kill_when(p: subprocess.Popen, journal: Path, games: int, extra: float) -> bool:
    """SIGKILL `p` `extra` seconds after `journal` holds `games` lines; False if it ended first."""
    while lines(journal) < games:
        if p.poll() is not None:
            return False
        time.sleep(0.002)
    time.sleep(extra)
    if p.poll() is not None:
        return False
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    return True


def test_sigkill_at_random_moments_loses_nothing_and_counts_nothing_twice(tmp_path):
    mark = uuid.uuid4().hex
    rng = random.Random(20240611)
    try:
        # The reference: one uninterrupted run, one worker.
        ref_cfg = write_config(tmp_path / "ref.yaml", tmp_path / "ref", parallel=1)
        p = start(ref_cfg, mark)
        assert p.wait(timeout=120) == 0, p.stderr.read().decode()[-2000:]
        reference = normalized(tmp_path / "ref" / "games.jsonl")
        total = len(reference)
        assert total == 180

        cfg = write_config(tmp_path / "run.yaml", tmp_path / "run", parallel=2)
        journal = tmp_path / "run" / "games.jsonl"
        kills = []
        torn = False
        # Where the kills fall: during start-up (before any game), after a seeded number of
        # further games plus a seeded fraction of a game (mid-game, mid-write, between
        # games), and once after the last game (while the leaderboard is written).
        plan = [("start", 0)] + [("games", rng.randint(1, 40)) for _ in range(5)] + [("end", 0)]
        for when, more in plan:
            before = lines(journal)
            p = start(cfg, mark)
            if when == "start":
                time.sleep(rng.uniform(0.05, 0.3))
                if p.poll() is None:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait()
                killed = True
            else:
                target = total if when == "end" else min(total - 1, before + more)
                killed = kill_when(p, journal, target, rng.uniform(0.0, 0.03))
            # The workers noticed and ended their bots: nothing of the tournament is left.
            assert wait_gone(mark) == [], f"left after the kill at {when} {more}"
            assert p.wait() in (0, -signal.SIGKILL)
            done = read_journal(journal, repair=False) if journal.exists() else {}
            assert len(done) >= before  # nothing finished is lost
            kills.append((when, before, len(done), killed))
            if not torn and 2 <= len(done) < total:
                # As if the kill had come in the middle of writing the last line.
                data = journal.read_bytes()
                last = data[:-1].rfind(b"\n") + 1
                journal.write_bytes(data[: last + (len(data) - last) // 2])
                assert len(read_journal(journal, repair=False)) == len(done) - 1
                torn = True
        assert torn
        assert sum(1 for w, b, a, k in kills if k and 0 < a < total) >= 4, kills
        p = start(cfg, mark)
        assert p.wait(timeout=120) == 0, p.stderr.read().decode()[-2000:]
        assert wait_gone(mark) == []
        assert normalized(journal) == reference
        # Every game once, in a file whose every line is whole.
        data = journal.read_bytes().split(b"\n")
        assert data[-1] == b"" and all(orjson.loads(x) for x in data[:-1])
        board = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
        assert board["games"] == total
    finally:
        _kill_marked(mark)


def _kill_marked(mark: str) -> None:
    needle = f"{MARK}={mark}".encode()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if needle in Path(f"/proc/{p}/environ").read_bytes().split(b"\0"):
                    os.kill(int(p), signal.SIGKILL)
            except OSError:
                pass


# ----- the journal, line by line -------------------------------------------------------------


GENESIS = genesis("c" * 64, "s" * 64)


def _journal(path: Path, n: int) -> bytes:
    j = Journal(path, GENESIS)
    for i in range(n):
        j.append({"id": i, "game": f"g{i:06d}", "seats": ["a", "b"], "places": [1, 2]})
    j.close()
    return path.read_bytes()


@pytest.mark.parametrize("cut", [1, 5, 20, -1])
def test_a_torn_last_line_is_dropped_and_cut_away(tmp_path, cut):
    path = tmp_path / "games.jsonl"
    data = _journal(path, 3)
    start = data[:-1].rfind(b"\n") + 1
    path.write_bytes(data[: start + cut] if cut > 0 else data[:-1])  # -1: all but the newline
    assert sorted(read_journal(path, start=GENESIS)) == [0, 1]
    assert path.read_bytes() == data[:start]  # repaired: the next append starts a fresh line
    j = Journal(path, read_chain(path, GENESIS).head)
    j.append({"id": 2, "game": "g000002"})
    j.close()
    assert sorted(read_journal(path, start=GENESIS)) == [0, 1, 2]


def test_a_damaged_middle_line_is_an_error_not_a_repair(tmp_path):
    path = tmp_path / "games.jsonl"
    data = _journal(path, 3)
    lines = data.split(b"\n")
    lines[1] = lines[1][:10]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalError, match="line 2"):
        read_journal(path)
    assert path.read_bytes() == b"\n".join(lines)  # untouched


def test_a_game_recorded_twice_is_an_error(tmp_path):
    path = tmp_path / "games.jsonl"
    data = _journal(path, 2)
    path.write_bytes(data + data.split(b"\n")[0] + b"\n")
    with pytest.raises(JournalError, match="twice"):
        read_journal(path)


# ----- disqualification survives kills and does not depend on parallel -------------------------


def write_dq_config(path: Path, out: Path, parallel: int) -> Path:
    bots = [{"name": "a", "cmd": "python bots/python/greedy.py"},
            {"name": "b", "cmd": "python bots/python/greedy.py"},
            {"name": "crash_at_start", "cmd": "python tests/zoo/crash_at_start.py"},
            {"name": "crash_mid_hand", "cmd": "python tests/zoo/crash_mid_hand.py"},
            {"name": "illegal", "cmd": "python tests/zoo/illegal.py"}]
    cfg = {"name": "crash-dq", "seed": 9, "base_dir": str(ROOT), "bots": bots, "table_size": 2,
           "games_per_table": 4, "parallel": parallel, "rules": {"phases": [1, 2]},
           "time": {"move_ms": 2000, "startup_ms": 10000},
           "faults": {"retries": 0, "max_strikes": 3,
                      "disqualify": {"startup_failures": 2, "forfeit_share": 0.5, "min_games": 2, "check_every": 4}},
           "replays": "none", "output": str(out)}
    path.write_text(yaml.safe_dump(cfg))
    return path


def comparable(path: Path) -> list[dict]:
    """Records without what depends on timing: durations, and the wording of a death
    (a bot that died before hello may be found out by its stdin or by its stdout)."""
    recs = normalized(path)
    for r in recs:
        r["faults"] = [(f["seat"], f["entrant"], f["kind"]) for f in r["faults"]]
    return recs


def test_disqualifications_are_the_same_with_kills_and_any_parallel(tmp_path):
    mark = uuid.uuid4().hex
    rng = random.Random(7)
    try:
        p = start(write_dq_config(tmp_path / "ref.yaml", tmp_path / "ref", parallel=1), mark)
        assert p.wait(timeout=120) == 0, p.stderr.read().decode()[-2000:]
        reference = comparable(tmp_path / "ref" / "games.jsonl")
        ref_dq = json.loads((tmp_path / "ref" / "disqualified.json").read_text())
        assert {d["entrant"] for d in ref_dq["disqualified"]} == {"crash_at_start", "crash_mid_hand", "illegal"}

        cfg = write_dq_config(tmp_path / "run.yaml", tmp_path / "run", parallel=3)
        for _ in range(2):
            p = start(cfg, mark)
            time.sleep(rng.uniform(1.0, 2.5))
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
            assert wait_gone(mark) == []
        p = start(cfg, mark)
        assert p.wait(timeout=120) == 0, p.stderr.read().decode()[-2000:]
        assert comparable(tmp_path / "run" / "games.jsonl") == reference
        assert json.loads((tmp_path / "run" / "disqualified.json").read_text()) == ref_dq
    finally:
        _kill_marked(mark)
