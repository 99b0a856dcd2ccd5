"""Hostile bots in a real tournament with the default configuration (sandbox: auto, the
default limits): every attack of tests/hostile_bots/attacker.py must fail, the tournament
must complete, the honest bots at the attackers' tables must finish every game with no
fault, nothing outside may change and no process may be left behind.

The tournament is played once (a gauntlet: each attacker at a table with the two honest
bots) by a real `p10-tourney run`; each test then checks one attack from the attacker's
own account (its stderr log, where it writes everything it managed) and from the outside
(files, the listener, the process table, games.jsonl).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml

from harness.sandbox.modes import bwrap_available
from harness.sandbox.paths import harness_package

ROOT = Path(__file__).resolve().parents[1]
ATTACKER = ROOT / "tests" / "hostile_bots" / "attacker.py"
ATTACKS = ["proc_snoop", "ptrace_attach", "killer", "writer", "reader", "network", "daemon", "forker", "memhog",
           "cpu_raise", "scratch_fill", "cpu_thief", "keyring", "other_results", "vsock",
           "counters"]
HAVE_NODE = shutil.which("node") is not None
OK, WHY = bwrap_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")


def marked(needle: bytes) -> list[tuple[int, str]]:
    """Processes whose environment holds `needle` (NAME=value)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            if needle in Path(f"/proc/{p}/environ").read_bytes().split(b"\0"):
                out.append((int(p), Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")))
        except OSError:
            continue
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vsock_port() -> tuple[socket.socket | None, int]:
    """A port the host binds in AF_VSOCK's machine-wide table (None where it has none)."""
    try:
        s = socket.socket(40, socket.SOCK_STREAM)
    except OSError:
        return None, 0
    for port in range(40000 + os.getpid() % 10000, 60000):
        try:
            s.bind((0xFFFFFFFF, port))
            s.listen(1)
            return s, port
        except OSError:
            continue
    s.close()
    return None, 0


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[str] = []
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, addr = self.sock.accept()
            except OSError:
                continue
            self.accepted.append(f"{addr}")
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Play the hostile tournament once; returns what the tests look at."""
    mark = uuid.uuid4().hex[:12]
    base = tmp_path_factory.mktemp("hostile")
    (base / "bots" / "honest_py").mkdir(parents=True)
    (base / "bots" / "honest_js").mkdir(parents=True)
    source_mark = f"HONEST-SOURCE-{mark}"
    py = base / "bots" / "honest_py" / "greedy.py"
    py.write_text((ROOT / "bots/python/greedy.py").read_text() + f"# {source_mark}\n")
    honest = [{"name": "honest-py", "cmd": f"python {py}", "env": {"HONEST_SECRET": f"secret-{mark}"}}]
    if HAVE_NODE:
        js = base / "bots" / "honest_js" / "greedy.js"
        js.write_text((ROOT / "bots/js/greedy.js").read_text() + f"// {source_mark}\n")
        honest.append({"name": "honest-js", "cmd": f"node {js}", "env": {"HONEST_SECRET": f"secret-{mark}"}})
    else:
        honest.append({"name": "honest-py2", "cmd": f"python {py}", "env": {"HONEST_SECRET": f"secret-{mark}"}})
    out = base / "results"
    other = base / "results-of-another-tournament"  # in the folder the bots are shown
    other.mkdir()
    (other / "tournament.json").write_text(json.dumps({"format": "p10-results/2", "name": "other"}))
    (other / "seed.secret").write_text(f"OTHER-SEED-{mark}\n")
    os.chmod(other / "seed.secret", 0o600)
    tournament = base / "tournament.yaml"
    listener = Listener()
    vsock, vport = vsock_port()
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = {"HOSTILE_MARK": mark, "HOSTILE_RESULTS": str(out), "HOSTILE_TOURNAMENT": str(tournament),
           "HOSTILE_OTHER_BOT": str(py.parent), "HOSTILE_OTHER_RESULTS": str(other), "HOSTILE_HARNESS": harness_package(), "HOSTILE_SITE": site,
           "HOSTILE_PORT": str(listener.port), "HOSTILE_VSOCK_PORT": str(vport)}
    attackers = [{"name": a.replace("_", "-"), "cmd": f"python {ATTACKER} {a}", "env": env} for a in ATTACKS]
    cfg = {
        "name": "hostile", "seed": 5, "bots": honest + attackers, "table_size": 3, "format": "gauntlet",
        "challengers": [a["name"] for a in attackers], "games_per_table": 3, "parallel": 2,
        "rules": {"phases": [1, 2]}, "replays": "failed", "output": str(out),
    }
    tournament.write_text(f"# TOURNAMENT-SECRET-{mark}\n" + yaml.safe_dump(cfg, sort_keys=False))
    watched = [tournament, py, Path(harness_package()) / "__init__.py"] + ([base / "bots/honest_js/greedy.js"] if HAVE_NODE else [])
    before = {p: digest(p) for p in watched}
    t0 = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(tournament), "--no-progress", "--no-site"],
                             cwd=base, capture_output=True, text=True, timeout=240, start_new_session=True)
    finally:
        elapsed = time.monotonic() - t0
        time.sleep(1.0)  # what a daemon left behind would do now
        left = marked(f"HOSTILE_MARK={mark}".encode())
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        listener.close()
        if vsock is not None:
            vsock.close()
    logs = {}
    for a in ATTACKS:
        name = a.replace("_", "-")
        logs[a] = "".join(p.read_text(errors="replace") for p in sorted((out / "logs").glob(f"{name}.*.stderr.log")))
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines() if line.strip()]
    yield {"mark": mark, "base": base, "out": out, "run": run, "left": left, "logs": logs, "games": games,
           "listener": listener, "vsock": vport if vsock is not None else None, "before": before, "after": {p: digest(p) for p in watched},
           "honest": [h["name"] for h in honest], "source_mark": source_mark, "elapsed": elapsed,
           "tournament": tournament, "harness": Path(harness_package()), "site": Path(site)}
    for p in [Path(harness_package()), Path(site)]:
        for f in p.glob(f"planted-{mark}*"):
            f.unlink()


def lines(log: str, what: str) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"^\| HOSTILE \S+ {re.escape(what)} (.*)$", log, re.M)]


def assert_ran(h: dict, attack: str) -> str:
    log = h["logs"][attack]
    assert lines(log, "done"), f"the {attack} attack did not run to its end; its log:\n{log[-3000:]}"
    assert not lines(log, "error"), lines(log, "error")
    return log


# ----- the tournament as a whole --------------------------------------------------------------


def test_tournament_completes_and_honest_bots_have_no_fault(hostile: dict) -> None:
    run = hostile["run"]
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    assert "without a sandbox" not in run.stderr  # auto found bubblewrap: it is the default here
    games = hostile["games"]
    assert len(games) == 3 * len(ATTACKS)
    marker = json.loads((hostile["out"] / "tournament.json").read_text())
    assert marker["sandbox"]["mode"] == "bwrap" and marker["sandbox"]["note"] == ""
    for g in games:
        assert set(hostile["honest"]) <= set(g["seats"])
        assert g.get("reason") != "not_played"
        bad = [f for f in g["faults"] if f["entrant"] in hostile["honest"]]
        assert not bad, f"{g['game']}: an honest bot has a fault: {bad}"
        assert not [f for f in g.get("forfeits", []) if f in hostile["honest"]]


def test_no_process_outlives_the_run(hostile: dict) -> None:
    """The daemon (setsid, double fork), the forker's and the memory hog's children: none
    is alive a second after the run ended."""
    assert hostile["left"] == []
    assert lines(hostile["logs"]["daemon"], "daemon-started")


def test_files_outside_are_unchanged(hostile: dict) -> None:
    assert hostile["before"] == hostile["after"]
    mark = hostile["mark"]
    planted = [p for root in (hostile["base"], hostile["harness"], hostile["site"])
               for p in root.rglob(f"planted-{mark}*")]
    assert planted == []
    for p in hostile["out"].rglob("*"):
        if p.is_file() and "logs" not in p.parts:
            assert f"FORGED-{mark}" not in p.read_text(errors="replace"), p


# ----- one attack each ----------------------------------------------------------------------


def _only_own_sandbox(entries: list[str]) -> None:
    """Each entry is "<pid> '<cmdline>'": the only other process a bot may see is its own
    sandbox's init (bwrap)."""
    for e in entries:
        pid, _, cmd = e.partition(" ")
        assert cmd.strip("'\"").startswith("bwrap"), f"saw a process outside its sandbox: {e}"


def test_proc_mem_environ_cmdline_of_siblings(hostile: dict) -> None:
    log = assert_ran(hostile, "proc_snoop")
    _only_own_sandbox(lines(log, "see"))
    assert lines(log, "see"), "it saw not even its own sandbox's init: the attack did not look"
    assert f"secret-{hostile['mark']}" not in log
    assert not lines(log, "mem-hit")
    for e in lines(log, "environ"):
        assert "HONEST_SECRET" not in e


def test_ptrace_attach(hostile: dict) -> None:
    log = assert_ran(hostile, "ptrace_attach")
    _only_own_sandbox(lines(log, "attached"))


def test_sigkill_sigstop_of_siblings_and_parent(hostile: dict) -> None:
    log = assert_ran(hostile, "killer")
    _only_own_sandbox([e.split(" ", 1)[1] for e in lines(log, "signalled")])
    # The referee, the worker and the honest bots carried on: no fault, a finished run
    # (test_tournament_completes_and_honest_bots_have_no_fault).
    assert hostile["run"].returncode == 0


def test_writes_to_results_tournament_folder_other_bot_and_harness(hostile: dict) -> None:
    log = assert_ran(hostile, "writer")
    assert lines(log, "wrote") == []
    refused = lines(log, "write-refused")
    assert refused and len(refused) % 10 == 0, refused  # ten tries at each start


def test_reading_the_tournament_file(hostile: dict) -> None:
    log = assert_ran(hostile, "reader")
    assert f"TOURNAMENT-SECRET-{hostile['mark']}" not in log
    assert hostile["source_mark"] not in log  # the other bot's source
    assert "seed" not in "".join(lines(log, "read"))
    for e in lines(log, "listdir"):
        assert e.endswith("[]"), f"it saw the results folder's files: {e}"


def test_another_tournaments_results_folder_in_sight(hostile: dict) -> None:
    """A results folder of another tournament inside the bot's folders is masked: its
    secret seed cannot be read (its mode, 0600, would not stop a bot)."""
    log = assert_ran(hostile, "other_results")
    assert f"OTHER-SEED-{hostile['mark']}" not in log
    assert lines(log, "read") == [] and lines(log, "read-refused")
    for e in lines(log, "listdir"):
        assert e.endswith("[]"), f"it saw the other results folder's files: {e}"


def test_notes_through_the_kernel_keyring(hostile: dict) -> None:
    """The keyring is closed (seccomp): no key can be added or asked about, /proc/keys
    shows none, and the host user's keyring holds nothing of the run's afterwards."""
    log = assert_ran(hostile, "keyring")
    assert lines(log, "key-added") == [] and lines(log, "keyctl-answered") == []
    if "keyring-skipped" not in log:
        assert lines(log, "key-refused") and lines(log, "keyctl-refused")
    assert all(n.strip() == "[]" for n in lines(log, "notes")), lines(log, "notes")
    keys = Path("/proc/keys").read_text() if Path("/proc/keys").exists() else ""
    assert f"p10note-{hostile['mark']}" not in keys


def test_tcp_connection_to_a_listener_on_localhost(hostile: dict) -> None:
    log = assert_ran(hostile, "network")
    assert lines(log, "connected") == []
    assert lines(log, "resolved") == []
    tries = lines(log, "connect-refused")
    assert tries and len(tries) % 3 == 0, tries
    assert hostile["listener"].accepted == []


def test_vsock_ports_shared_by_the_whole_machine(hostile: dict) -> None:
    """AF_VSOCK's ports are one table for the machine, outside every namespace: no socket
    of that family can be made in the sandbox, so a port the host holds is not seen."""
    log = assert_ran(hostile, "vsock")
    assert lines(log, "vsock-made") == [] and lines(log, "vsock-seen") == [], log[-2000:]
    refused = lines(log, "vsock-refused")
    assert refused and all(r.strip() == "EAFNOSUPPORT" for r in refused), refused


def test_machine_wide_counts_of_sessions_and_ip_sockets(hostile: dict) -> None:
    """`setsid` makes no new session (each would take a number from one counter for the
    machine), and no IP socket can be made (their counts and, on cgroup v1, their buffer
    memory are the machine's)."""
    log = assert_ran(hostile, "counters")
    assert lines(log, "autogroup-moved") == [] and lines(log, "autogroup-still"), log[-2000:]
    assert lines(log, "ip-made") == [], log[-2000:]
    refused = lines(log, "ip-refused")
    assert refused and len(refused) % 3 == 0 and all(r.endswith("EAFNOSUPPORT") for r in refused), refused


def test_500_processes(hostile: dict) -> None:
    log = hostile["logs"]["forker"]
    counts = [int(e.split()[0]) for e in lines(log, "forked")]
    assert counts and max(counts) < 500, log[-2000:]
    assert max(counts) <= 256  # the default `processes` limit
    # Its cgroup refused the forks; the watchdog then ended it, and its fault names the limit.
    faults = [f["reason"] for g in hostile["games"] for f in g["faults"] if f["entrant"] == "forker"]
    assert any("process limit of 256 reached" in r for r in faults), faults


def test_8_gib_across_setsid_children(hostile: dict) -> None:
    log = hostile["logs"]["memhog"]
    allocated = [int(e.split()[0]) for e in lines(log, "allocated")]
    faults = [f for g in hostile["games"] for f in g["faults"] if f["entrant"] == "memhog"]
    # Either it lived to say how much its children got (less than 8 GiB), or the kernel
    # ended it at the memory limit and the fault says so.
    assert allocated or any("memory limit of 1024 MB reached" in f["reason"] for f in faults), (log[-2000:], faults)
    assert all(a < 8192 for a in allocated), allocated
    assert all(a <= 1024 for a in allocated), allocated


def test_raising_rlimit_cpu(hostile: dict) -> None:
    log = assert_ran(hostile, "cpu_raise")
    soft, hard = re.match(r"soft (\d+) hard (\d+)", lines(log, "limits")[0]).groups()
    assert soft == hard, "the hard CPU limit must equal the soft one"
    assert lines(log, "raised") == []
    assert len(lines(log, "raise-refused")) >= 2


def test_2_gib_into_scratch(hostile: dict) -> None:
    """2 GiB into each of /tmp, HOME, /, /dev and /dev/shm: all of them together take the
    default scratch_mb of 128 MiB, and the watchdog ends the bot, naming the limit (while it
    fills, or in its first game)."""
    log = hostile["logs"]["scratch_fill"]
    took: dict[str, int] = {}  # by process (none where it was ended first)
    for e in lines(log, "filled"):
        _, mib, _, process = e.split()
        took[process] = took.get(process, 0) + int(mib)
    assert all(t <= 128 for t in took.values()), log[-2000:]
    assert lines(log, "fill-stopped") or not took
    faults = [f["reason"] for g in hostile["games"] for f in g["faults"] if f["entrant"] == "scratch-fill"]
    assert any("scratch limit of 128 MB reached" in r for r in faults), faults


def test_spinning_processes_are_stopped_between_its_turns(hostile: dict) -> None:
    """16 spinning children: the honest bots have no fault
    (test_tournament_completes_and_honest_bots_have_no_fault), and the thief is not taken
    for a bot that ran while stopped: every one of its processes was stopped. (The CPU it
    gets over a game is measured in tests/test_pause.py.)"""
    log = assert_ran(hostile, "cpu_thief")
    assert lines(log, "spinning")
    ran = [f for g in hostile["games"] for f in g["faults"] if "ran while it was stopped" in f.get("reason", "")]
    assert ran == []
