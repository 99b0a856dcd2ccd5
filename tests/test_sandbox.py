"""The sandbox: its settings and their errors, what a sandboxed bot sees, its limits and
the faults that name them, builds, the record in the results, the cgroup v2 and v1 logic
(against a fake cgroup file system), and the bundled bots playing inside it."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from harness.referee import BotProcess, BotSpec, BotStartError, Limits, TimeControl, handshake
from harness.referee.process import describe_exit
from harness.sandbox.box import BuildError, Sandbox, SandboxError
from harness.sandbox.build import run_build
from harness.sandbox.cgroups import BotCgroup, detect_cgroups
from harness.sandbox.modes import bwrap_available, resolve_mode
from harness.sandbox.options import prepare
from harness.tournament.config import ConfigError, load_config, config_from

ROOT = Path(__file__).resolve().parents[1]
OK, WHY = bwrap_available()
needs_bwrap = pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")
HAVE_NODE = shutil.which("node") is not None


def in_box(tmp_path: Path, script: str, box: Sandbox = Sandbox(), env: dict | None = None,
           scratch_mb: int = 16) -> subprocess.CompletedProcess:
    """Run a shell script in the sandbox, as a bot with `cwd` tmp_path would be."""
    inv = prepare(["sh", "-c", script], str(tmp_path), env or {}, box, scratch_mb)
    try:
        return subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
    finally:
        inv.close()


# ----- settings -------------------------------------------------------------------------------


def base_cfg(tmp_path: Path, **bot: object) -> dict:
    return {"name": "t", "seed": 1, "base_dir": str(tmp_path), "output": str(tmp_path / "out"),
            "bots": [{"name": "a", "cmd": "python a.py", **bot}, {"name": "b", "cmd": "python b.py"}]}


@pytest.mark.parametrize("change, words", [
    ({"sandbox": "docker"}, ["sandbox", "auto, bwrap, none", "'docker'"]),
    ({"bots_a": {"sandbox": "yes"}}, ["bots[0].sandbox", "'yes'"]),
    ({"bots_a": {"mounts": "/opt"}}, ["bots[0].mounts", "list of paths"]),
    ({"bots_a": {"mounts": ["/no/such/folder"]}}, ["bots[0].mounts[0]", "does not exist"]),
    ({"bots_a": {"mounts": ["/"]}}, ["bots[0].mounts[0]", "root folder"]),
    ({"bots_a": {"mounts": ["."]}}, ["bots[0].mounts[0]", "would show the bot"]),
    ({"bots_a": {"build": 5}}, ["bots[0].build", "command string or a list"]),
    ({"bots_a": {"build": ""}}, ["bots[0].build", "is empty"]),
    ({"bots_a": {"build_timeout_s": 0}}, ["bots[0].build_timeout_s", ">= 1"]),
    ({"limits": {"scratch_mb": 0}}, ["limits.scratch_mb", ">= 1"]),
    ({"limits": {"file_mb": "big"}}, ["limits.file_mb", "integer"]),
])
def test_sandbox_settings_are_validated(tmp_path: Path, change: dict, words: list[str]) -> None:
    data = base_cfg(tmp_path)
    for k, v in change.items():
        if k == "bots_a":
            data["bots"][0].update(v)
        else:
            data[k] = v
    with pytest.raises(ConfigError) as e:
        config_from(data, str(tmp_path / "t.yaml"), tmp_path)
    for w in words:
        assert w in str(e.value)


def test_defaults_are_on_and_a_bot_replaces_single_keys(tmp_path: Path) -> None:
    data = base_cfg(tmp_path, limits={"memory_mb": 256, "cpu_s": None})
    data["limits"] = {"processes": 64}
    cfg = config_from(data, str(tmp_path / "t.yaml"), tmp_path)
    a, b = cfg.bots
    assert b.limits == Limits(processes=64)
    assert a.limits == Limits(memory_mb=256, cpu_s=None, processes=64)
    assert Limits().memory_mb == 1024 and Limits().scratch_mb == 128
    assert a.sandbox.mode == "auto" and cfg.sandbox == "auto"


def test_each_bot_hides_results_tournament_and_the_other_bots(tmp_path: Path) -> None:
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "bot.py").write_text("")
    data = base_cfg(tmp_path)
    data["bots"] = [{"name": "a", "cmd": "python x/bot.py"}, {"name": "b", "cmd": "python bot.py", "cwd": "y"}]
    cfg = config_from(data, str(tmp_path / "t.yaml"), tmp_path)
    a, b = cfg.bots
    assert a.sandbox.own == str(tmp_path / "x") and b.sandbox.own == str(tmp_path / "y")
    for spec, other in ((a, b), (b, a)):
        assert str(tmp_path / "out") in spec.sandbox.hide
        assert str(tmp_path / "t.yaml") in spec.sandbox.hide and str(tmp_path) in spec.sandbox.hide
        assert other.sandbox.own in spec.sandbox.hide and spec.sandbox.own not in spec.sandbox.hide


def _masked(spec: BotSpec) -> list[str]:
    """The folders a bot's sandbox covers with an empty tmpfs, as bwrap_options says now
    (not its scratch folders)."""
    from harness.sandbox.options import bwrap_options

    opts = bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, None)
    return [opts[i + 1] for i, o in enumerate(opts) if o == "--tmpfs" and opts[i + 1] not in ("/tmp", "/dev/shm")]


def test_every_results_folder_a_bot_is_shown_is_masked_at_every_start(tmp_path: Path) -> None:
    """Another tournament's results (a secret seed, or a tournament.json that says so) in
    any folder the bot is shown, its cwd, hidden folders and a folder its command names
    included, are masked, also one made after the tournament file was read; a folder
    whose tournament.json is something else is left alone, and .git is not searched (it
    is covered whole). A bot whose cwd
    lies inside one is refused."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "bot.py").write_text("")
    old = tmp_path / "results" / "old"
    old.mkdir(parents=True)
    (old / "tournament.json").write_text(json.dumps({"format": "p10-results/2"}))
    hidden = tmp_path / ".runs" / "r1"
    hidden.mkdir(parents=True)
    (hidden / "seed.secret").write_text("123\n")
    unrelated = tmp_path / "x" / "data"
    unrelated.mkdir()
    (unrelated / "tournament.json").write_text("{}")
    (tmp_path / ".git" / "r").mkdir(parents=True)
    (tmp_path / ".git" / "r" / "seed.secret").write_text("1\n")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-data"
    (elsewhere / "res").mkdir(parents=True)
    (elsewhere / "res" / "seed.secret").write_text("2\n")
    (elsewhere / "table.txt").write_text("")
    data = base_cfg(tmp_path)
    data["bots"] = [{"name": "a", "cmd": "python x/bot.py"},
                    {"name": "b", "cmd": f"python x/bot.py {elsewhere / 'table.txt'}"}]
    cfg = config_from(data, str(tmp_path / "t.yaml"), tmp_path)
    later = tmp_path / "results" / "later"  # a run started after this one was read
    later.mkdir()
    (later / "seed.secret").write_text("3\n")
    for spec in cfg.bots:
        masked = _masked(spec)

        def covered(f: Path) -> bool:
            return any(str(f) == m or str(f).startswith(m + "/") for m in masked)

        for f in (old, hidden, later):
            assert covered(f), (f, masked)
        # results/, which holds results folders and nothing the bot needs, is masked whole:
        # the mask also covers a run begun there while the bot's process lives.
        assert str(tmp_path / "results") in masked
        assert not covered(unrelated) and not any(m.startswith(str(tmp_path / ".git") + "/") for m in masked)
        assert str(tmp_path / ".git") in masked  # not searched, but covered whole (a repository's history)
        assert covered(elsewhere / "res") == (spec.name == "b")
    (old / "bot.py").write_text("")
    data["bots"] = [{"name": "a", "cmd": "python x/bot.py"}, {"name": "b", "cmd": "python bot.py", "cwd": "results/old"}]
    with pytest.raises(ConfigError, match="which no bot may see"):
        config_from(data, str(tmp_path / "t.yaml"), tmp_path)


def test_the_search_for_results_folders_goes_thousands_of_folders_deep(tmp_path: Path) -> None:
    """A build may nest folders far deeper than Python's recursion limit: the search
    still ends, and finds a results folder at the bottom."""
    from harness.sandbox.marks import marked_folders

    deep = tmp_path
    for _ in range(1200):  # past the recursion limit (1000), inside PATH_MAX; made one by one, as
        deep = deep / "d"  # pathlib's and os.makedirs's recursion would not reach it
        deep.mkdir()
    (deep / "seed.secret").write_text("1\n")
    try:
        assert marked_folders(str(tmp_path), (("seed.secret", None),)) == [str(deep)]
    finally:  # bottom up: pytest's own clean-up (shutil.rmtree) recurses too
        (deep / "seed.secret").unlink()
        while deep != tmp_path:
            deep.rmdir()
            deep = deep.parent


def test_a_bot_start_searches_a_folder_of_100k_folders_in_bounded_work(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot folder of 99,000 empty folders cost seconds of a worker's CPU at every start
    of the bot: the search for results folders read every one. It is searched whole once
    (here when the tournament file is read); a start then reads at most `START_ENTRIES`
    directory entries in `START_FOLDERS` folders, and still masks the results folder found
    deep down then, and one made at the top of the folder since."""
    from harness.sandbox import options as sandbox
    from harness.ledger.names import CONCEAL

    own = tmp_path / "bot"
    for i in range(100):
        d = own / f"d{i:02}"
        d.mkdir(parents=True)
        for j in range(990):
            os.mkdir(d / f"e{j:03}")
    deep = own / "d99" / "e989" / "res"  # another tournament's results, far down
    deep.mkdir()
    (deep / "seed.secret").write_text("1\n")
    (own / "bot.py").write_text("")
    box = Sandbox(mode="bwrap", own=str(own), conceal=CONCEAL)
    argv = ("sh", str(own / "bot.py"))
    work = {"folders": 0, "entries": 0}
    real = os.scandir

    class Counted:
        """os.scandir, counting the folders opened and the entries read."""

        def __init__(self, path: str) -> None:
            self.it = real(path)
            work["folders"] += 1

        def __enter__(self) -> "Counted":
            return self

        def __exit__(self, *exc: object) -> None:
            self.it.close()

        def __iter__(self):
            for e in self.it:
                work["entries"] += 1
                yield e

    monkeypatch.setattr(os, "scandir", Counted)
    sandbox.bwrap_options(argv, str(own), box, None)  # the tournament file is read: the whole folder
    assert work["entries"] > 99_000
    later = own / "later"  # a run begun since, at the top of the bot's folder
    later.mkdir()
    (later / "tournament.json").write_text('{"format": "p10-results/2"}')
    for _ in range(3):  # bot starts
        work.update(folders=0, entries=0)
        opts = sandbox.bwrap_options(argv, str(own), box, None)
        assert work["entries"] <= 4_096 and work["folders"] <= 128, work  # (START_ENTRIES, START_FOLDERS)
        masked = [opts[i + 1] for i, o in enumerate(opts) if o == "--tmpfs"]
        for f in (deep, later):
            assert any(str(f) == m or str(f).startswith(m + "/") for m in masked), (f, masked)
    shutil.rmtree(own / "later")  # (gone: no longer masked, and nothing fails)
    assert str(later) not in sandbox.bwrap_options(argv, str(own), box, None)


@pytest.mark.skipif(not OK, reason="the sandbox cannot run here")
def test_a_folder_that_changed_since_the_tournament_was_read_fails_the_bots_start_only(tmp_path: Path) -> None:
    """The search at each start never hangs on a FIFO named like a mark, and a bot whose
    own folder has become a results folder since the tournament was read fails to start
    (a startup fault of that bot), without taking its worker down."""
    import os as _os

    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "bot.py").write_text((ROOT / "bots/python/greedy.py").read_text())
    data = base_cfg(tmp_path)
    data["bots"] = [{"name": "a", "cmd": "python bot.py", "cwd": "x"}, {"name": "b", "cmd": "python bot.py", "cwd": "x"}]
    cfg = config_from(data, str(tmp_path / "t.yaml"), tmp_path)
    _os.mkfifo(tmp_path / "x" / "tournament.json")  # a blocking open would hang here
    bot = BotProcess(cfg.bots[0])
    try:
        handshake(bot, "a", TimeControl(move_ms=5000, startup_ms=10000))
    finally:
        bot.stop()
    (tmp_path / "x" / "seed.secret").write_text("1\n")
    bot = BotProcess(cfg.bots[0])
    with pytest.raises(BotStartError, match="its sandbox cannot be made.*which no bot may see"):
        bot.start()
    bot.stop()


def test_resolve_mode() -> None:
    assert resolve_mode("none") == "none"
    assert resolve_mode("auto") == ("bwrap" if OK else "none")
    with pytest.raises(SandboxError):
        resolve_mode("maybe")
    if not OK:
        with pytest.raises(SandboxError, match="bwrap was asked for"):
            resolve_mode("bwrap")


# ----- what a sandboxed process sees ------------------------------------------------------------


@needs_bwrap
def test_a_sandboxed_process_sees_only_what_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("mine")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "games.jsonl").write_text("secret results")
    (tmp_path / "t.yaml").write_text("seed: 42")
    extra = tmp_path.parent / f"{tmp_path.name}-extra"
    extra.mkdir(exist_ok=True)
    (extra / "data.txt").write_text("extra data")
    box = Sandbox(hide=(str(tmp_path / "results"), str(tmp_path / "t.yaml")), mounts=(str(extra),))
    r = in_box(tmp_path, f"""
        id -u; id -g; hostname
        cat mine.txt; echo
        ls -A results; cat t.yaml; echo "[t.yaml]"
        cat {extra}/data.txt; echo
        touch mine2.txt 2>/dev/null; [ -e mine2.txt ] || echo ro-cwd
        touch {extra}/x 2>/dev/null; [ -e {extra}/x ] || echo ro-mount
        echo scratch > /tmp/s && cat /tmp/s && echo "home=$HOME"
        ls /proc | grep -c '^[0-9]'
        echo "ENV: $(env | cut -d= -f1 | sort | tr '\\n' ' ')"
        cat /etc/shadow 2>&1 | head -1
        ls /sys 2>&1 | head -1
    """, box, env={"MINE": "1"})
    out = r.stdout
    assert r.returncode == 0, r.stderr
    lines = out.splitlines()
    assert lines[:3] == ["1000", "1000", "bot"]
    assert "mine" in lines[3]
    assert "secret results" not in out and "seed: 42" not in out
    assert "extra data" in out
    assert "ro-cwd" in out and "ro-mount" in out
    assert "scratch" in out and "home=/tmp" in out
    env_names = set(next(t for t in lines if t.startswith("ENV: ")).split()[1:])
    shell_own = {"PWD", "SHLVL", "_", "OLDPWD"}  # what sh itself sets
    from harness.sandbox.toolchains import host_toolchains, toolchain_env

    toolchain = set(toolchain_env(host_toolchains()))  # RUSTUP_HOME where rustup's cargo is on PATH
    assert env_names - shell_own == {"HOME", "LANG", "MINE", "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
                                     "TMPDIR"} | toolchain
    assert "root:" not in out  # /etc/shadow is not there


@needs_bwrap
def test_no_network_not_even_the_hosts_loopback(tmp_path: Path) -> None:
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        code = f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')\n" \
               "except OSError as e:\n print('refused', e)\n"
        inv = prepare([sys.executable, "-c", code], str(tmp_path), {}, Sandbox(), 16)
        r = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
        inv.close()
        assert "refused" in r.stdout, (r.stdout, r.stderr)
    finally:
        srv.close()


@needs_bwrap
def test_scratch_is_capped_and_new_at_every_start(tmp_path: Path) -> None:
    first = in_box(tmp_path, "echo left > /tmp/left-behind; dd if=/dev/zero of=/tmp/f bs=1M count=64 2>&1 | tail -1; "
                             "du -m /tmp/f | cut -f1", scratch_mb=8)
    assert int(first.stdout.splitlines()[-1]) <= 8
    second = in_box(tmp_path, "cat /tmp/left-behind 2>&1 || echo gone")
    assert "gone" in second.stdout
    assert not Path("/tmp/left-behind").exists()


WRITE_EVERYWHERE = """
import errno, json, os, sys

MIB = 1 << 20
chunk = b"x" * (64 << 10)
out = {"accepted": {}, "refused": {}}
def fill(name, path, most, unlink=False):
    fd = None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if unlink:
            os.unlink(path)  # held open: its pages stay
        n = 0
        while n < most:
            n += os.write(fd, chunk)
    except OSError as e:
        out["refused"][name] = errno.errorcode[e.errno]
    finally:
        if fd is not None and not unlink:
            os.close(fd)
    out["accepted"][name] = out["accepted"].get(name, 0) + (n if fd is not None else 0)
    return fd
held = fill("unlinked", "/tmp/held", 3 * MIB, unlink=True)
fill("shm", "/dev/shm/big", 3 * MIB)
for i in range(100):  # hard links of one file: its pages once
    try:
        os.link("/dev/shm/big", f"/tmp/link{i}")
    except OSError as e:
        out["refused"]["link"] = errno.errorcode[e.errno]
        break
with open("/tmp/sparse", "wb") as f:  # a sparse file: only the page written
    f.seek(1 << 30)
    f.write(b"x")
small = 0
os.mkdir("/tmp/small")
try:
    for small in range(1, 20000):  # many small files: a page each
        with open(f"/tmp/small/{small}", "wb") as f:
            f.write(b"x")
except OSError as e:
    out["refused"]["small"] = errno.errorcode[e.errno]
out["small"] = small - 1
for name, path in (("root", "/big"), ("dev", "/dev/big"), ("etc", "/etc/big"), ("var", "/var/tmp/big"),
                   ("cwd", os.path.join(os.getcwd(), "big")), ("tmp", "/tmp/big")):
    if name != "cwd" or "build" not in sys.argv:
        fill(name, path, 40 * MIB)
st = os.statvfs("/tmp")
out["used"] = (st.f_blocks - st.f_bfree) * st.f_frsize
out["size"] = st.f_blocks * st.f_frsize
print(json.dumps(out))
"""


@needs_bwrap
@pytest.mark.parametrize("build", [False, True])
def test_everything_a_bot_writes_is_bounded_together_by_its_scratch(tmp_path: Path, build: bool) -> None:
    """With `scratch_mb` 8, all that a sandboxed process can write holds 8 MiB at most:
    the sandbox's root, `/dev`, `/etc` and the folders it is shown are read-only (a
    build's own folder aside, which the build's disk watch bounds), and `/tmp` and
    `/dev/shm` are one tmpfs, which counts files unlinked but held open, many small
    files (a page each), hard links once and sparse files by what is written."""
    own = _own_folder(tmp_path)
    (own / "w.py").write_text(WRITE_EVERYWHERE)
    inv = prepare([sys.executable, "w.py", *(["build"] if build else [])], str(own), {},
                  Sandbox(mode="bwrap", own=str(own)), 8, writable_own=build)
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True,
                           timeout=120, cwd=own)
    finally:
        inv.close()
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    accepted, refused = got["accepted"], got["refused"]
    assert got["size"] == 8 << 20 and got["used"] <= 8 << 20, got
    for name in ("root", "dev", "etc", "var") + (() if build else ("cwd",)):
        assert accepted[name] == 0 and refused[name] in ("EROFS", "ENOENT", "EACCES"), (name, got)
    assert accepted["unlinked"] == accepted["shm"] == 3 << 20, got  # both in the scratch, with 2 MiB left
    assert refused["small"] == "ENOSPC" and got["small"] * 4096 <= 2 << 20, got
    assert "link" not in refused and refused["tmp"] == "ENOSPC", got
    assert sum(accepted.values()) + got["small"] * 4096 <= 8 << 20, got


# ----- bots in the sandbox: limits and the faults that name them -------------------------------


def start(tmp_path: Path, code: str, limits: Limits, mode: str = "auto") -> BotProcess:
    script = tmp_path / "bot.py"
    script.write_text(textwrap.dedent(code))
    return BotProcess(BotSpec("limited", (sys.executable, str(script)), cwd=str(tmp_path), limits=limits,
                              sandbox=Sandbox(mode=mode)))


@needs_bwrap
def test_memory_limit_across_setsid_children_is_named(tmp_path: Path) -> None:
    """Four setsid children of 100 MiB each against a 256 MB limit: the cgroup (or, without
    one, the watchdog) ends the bot, and the fault says which limit."""
    bot = start(tmp_path, """
        import os, sys, time
        for _ in range(4):
            if os.fork() == 0:
                os.setsid()
                x = b"\\1" * (100 << 20)
                time.sleep(30)
                os._exit(0)
        time.sleep(30)
    """, Limits(memory_mb=256))
    try:
        with pytest.raises(BotStartError) as e:
            handshake(bot, "limited", TimeControl(startup_ms=15000))
        assert "memory limit of 256 MB reached" in str(e.value) or "256 MiB" in str(e.value), str(e.value)
    finally:
        bot.stop()


FILL_SHM = """
import os, sys
try:
    with open("/dev/shm/f", "wb") as f:
        while True:
            f.write(b"x" * 65536)
except OSError:
    if "quiet" not in sys.argv:
        raise
sys.stdin.readline()
print('{"type": "hello", "name": "filled"}', flush=True)
sys.stdin.readline()
os._exit(1)
"""


@needs_bwrap
def test_a_bot_that_dies_of_a_full_scratch_gets_the_limit_named(tmp_path: Path) -> None:
    """A bot that fills its 8 MB scratch and dies of the error before its hello: the fault
    names the scratch limit."""
    bot = start(tmp_path, FILL_SHM, Limits(scratch_mb=8))
    try:
        with pytest.raises(BotStartError, match="scratch limit of 8 MB reached"):
            handshake(bot, "limited", TimeControl(startup_ms=15000))
    finally:
        bot.stop()


@needs_bwrap
def test_a_full_scratch_is_still_seen_once_its_bot_has_ended(tmp_path: Path) -> None:
    """A bot that fills its scratch, says nothing of it and exits: its scratch, looked at
    while it ran, is held until the bot is stopped, so the exit still names the limit; then
    it is let go."""
    (tmp_path / "bot.py").write_text(FILL_SHM)
    bot = BotProcess(BotSpec("limited", (sys.executable, str(tmp_path / "bot.py"), "quiet"), cwd=str(tmp_path),
                             limits=Limits(scratch_mb=8), sandbox=Sandbox(mode="auto")))
    try:
        handshake(bot, "limited", TimeControl(startup_ms=15000))
        assert bot.limit_hit() == "scratch limit of 8 MB reached"  # looked at while it runs
        bot.resume()
        bot.send(b"{}\n")  # it exits at its next line
        assert bot.proc is not None and bot.proc.wait(timeout=30) != 0
        assert bot.exit_text().startswith("scratch limit of 8 MB reached (exit code 1)"), bot.exit_text()
    finally:
        bot.stop()
    assert bot._scratch is None and bot.limit_hit() == "scratch limit of 8 MB reached"


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_without_a_cgroup_memory_that_forked_workers_share_is_counted_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Where no cgroup can be made, the watchdog sums the proportional set size of the
    bot's processes: 120 MiB that four forked workers share (copy-on-write) counts once,
    not five times, so a bot well inside its 300 MB limit is not ended for it, while the
    sum of their resident sizes is over it. Memory each worker holds of its own still
    counts in full (`test_memory_limit_across_setsid_children_is_named`)."""
    from harness.referee import launch, process
    from harness.sandbox.proctable import stat_fields, tree_stats

    if mode == "auto" and not OK:
        pytest.skip(f"the sandbox cannot run here: {WHY}")
    monkeypatch.setattr(launch, "cgroups", lambda: (None, "none here"))
    bot = start(tmp_path, """
        import os, sys, time
        from harness.players import GreedyStrategy
        from harness.sdk import StrategyBot, run

        held = bytearray(120 << 20)
        for i in range(0, len(held), 4096):
            held[i] = 1
        for _ in range(4):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        run(StrategyBot(GreedyStrategy(), name="sharer"))
    """, Limits(memory_mb=300, cpu_s=None), mode=mode)
    try:
        handshake(bot, "limited", TimeControl(startup_ms=30000))
        assert bot.cgroup is None and bot.proc is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the workers forked: five processes
            if bot.usage()[2] >= 5:
                break
            time.sleep(0.1)
        if bot.sandboxed:
            rss = sum(int(st[21]) for _, st in tree_stats(bot.proc.pid, skip=2))
        else:
            rss = sum(int(st[21]) for st in (stat_fields(int(p)) for p in os.listdir("/proc") if p.isdigit())
                      if st is not None and len(st) > 21 and int(st[2]) == bot.proc.pid)
        assert rss * os.sysconf("SC_PAGE_SIZE") > 500 << 20  # what resident sizes would have counted
        assert bot.usage()[1] < 250, bot.usage()
        bot.check_limits(force=True)  # no LimitExceeded
        assert bot.alive
    finally:
        bot.stop()


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_without_a_cgroup_memory_held_in_in_memory_files_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Where no cgroup can be made, 240 MiB written into four in-memory files
    (`memfd_create`, each under `file_mb`, none mapped: no process's pages, so no resident
    or proportional size shows them) count towards a 200 MB limit: the watchdog ends the
    bot. The bot fills them only once its handshake is done (when told to): filled before,
    the watchdog, which looks while the harness waits for the hello reply, could end it
    during its handshake on a slow start."""
    from harness.referee import launch, process

    if mode == "auto" and not OK:
        pytest.skip(f"the sandbox cannot run here: {WHY}")
    monkeypatch.setattr(launch, "cgroups", lambda: (None, "none here"))
    bot = start(tmp_path, """
        import os, sys

        sys.stdin.readline()
        print('{"type": "hello", "name": "hoarder"}', flush=True)
        sys.stdin.readline()  # told to fill them
        held = []
        for _ in range(4):
            fd = os.memfd_create("hold")
            for _ in range(60):
                os.write(fd, b"\\1" * (1 << 20))
            held.append(fd)
        sys.stdin.readline()  # held until it is ended
    """, Limits(memory_mb=200, cpu_s=None), mode=mode)
    try:
        handshake(bot, "limited", TimeControl(startup_ms=30000))
        assert bot.cgroup is None
        bot.send(b"fill\n")
        bot.resume()  # (stopped between its turns)
        deadline = time.monotonic() + 60  # (no process reads its stdout now: no watchdog looks)
        while bot.usage()[1] <= 240 and bot.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bot.usage()[1] > 240, bot.usage()
        with pytest.raises(process.LimitExceeded, match="200 MiB"):
            bot.check_limits(force=True)
    finally:
        bot.stop()


def test_unsandboxed_without_a_cgroup_children_that_leave_the_group_are_counted_and_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sandbox: none` and no cgroup: two children that leave the bot's process group
    (`setpgid`) holding 120 MiB each (each under its address-space limit of 200 MB) count
    towards its 200 MB limit, and are ended with it (they were not: they outlived the
    bot). They fill their memory once the bot's handshake is done (when told to), so that
    the watchdog does not end the bot during its handshake on a slow start."""
    from harness.referee import launch, process
    from harness.sandbox.proctable import stat_fields, tree_stats

    monkeypatch.setattr(launch, "cgroups", lambda: (None, "none here"))
    bot = start(tmp_path, """
        import os, sys, time

        r, w = os.pipe()
        for _ in range(2):
            if os.fork() == 0:
                os.setpgid(0, 0)
                os.read(r, 1)  # told to fill it
                held = bytearray(120 << 20)
                for i in range(0, len(held), 4096):
                    held[i] = 1
                time.sleep(60)
                os._exit(0)
        sys.stdin.readline()
        print('{"type": "hello", "name": "leaver"}', flush=True)
        sys.stdin.readline()
        os.write(w, b"ff")
        sys.stdin.readline()
    """, Limits(memory_mb=200, cpu_s=None), mode="none")
    try:
        handshake(bot, "limited", TimeControl(startup_ms=30000))
        assert bot.proc is not None
        bot.send(b"fill\n")
        bot.resume()  # (stopped between its turns)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and bot.usage()[1] < 240:
            time.sleep(0.1)
        left = [pid for pid, st in tree_stats(bot.proc.pid) if int(st[2]) != bot.proc.pid]
        assert len(left) == 2 and bot.usage()[2] == 3, bot.usage()
        with pytest.raises(process.LimitExceeded, match="200 MiB"):
            bot.check_limits(force=True)
    finally:
        bot.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any((stat_fields(p) or ["Z"])[0] != "Z" for p in left):
        time.sleep(0.1)
    assert all((stat_fields(p) or ["Z"])[0] == "Z" for p in left), left


def test_a_runtime_that_says_out_of_memory_on_stdout_gets_the_limit_named(tmp_path: Path) -> None:
    """A JVM that cannot reserve its heap says so on stdout (HotSpot's default)."""
    bot = start(tmp_path, """
        import sys
        print("Error occurred during initialization of VM")
        print("Could not reserve enough space for object heap")
        sys.exit(1)
    """, Limits(memory_mb=300))
    with pytest.raises(BotStartError) as e:
        handshake(bot, "limited", TimeControl(startup_ms=15000))
    assert "memory limit of 300 MB reached" in str(e.value)
    assert "Could not reserve enough space for object heap" in str(e.value)


def test_runtime_memory_words_on_stderr_name_the_limit() -> None:
    for words in (b"MemoryError", b"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
                  b"terminate called after throwing an instance of 'std::bad_alloc'",
                  b"java.lang.OutOfMemoryError: Java heap space", b"fatal error: runtime: out of memory",
                  b"memory allocation of 1048576 bytes failed"):
        assert describe_exit(1, Limits(memory_mb=512), words).startswith("memory limit of 512 MB reached"), words


@needs_bwrap
def test_hard_limits_equal_soft_limits_in_the_box(tmp_path: Path) -> None:
    bot = start(tmp_path, """
        import json, resource, sys
        out = {n: resource.getrlimit(getattr(resource, n)) for n in ("RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_FSIZE")}
        sys.stdin.readline()
        print(json.dumps({"type": "hello", "name": json.dumps(out)}), flush=True)
        sys.stdin.readline()
    """, Limits(cpu_s=50, open_files=77, file_mb=3))
    try:
        handshake(bot, "limited", TimeControl(startup_ms=15000))
        got = json.loads(bot.hello["name"])
        assert got["RLIMIT_CPU"] == [50, 50] or got["RLIMIT_CPU"][0] == got["RLIMIT_CPU"][1]
        assert got["RLIMIT_NOFILE"] == [77, 77]
        assert got["RLIMIT_FSIZE"] == [3 << 20, 3 << 20]
        bot.reset_cpu_budget()  # re-armed per game: still hard = soft
        for pid in bot._members():
            import resource

            soft, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
            assert soft == hard and soft >= 50
    finally:
        bot.stop()


RAISE_EVERY_LIMIT = """
import json, resource

INF = resource.RLIM_INFINITY
def more(a, b):
    return (a == INF and b != INF) or (INF not in (a, b) and a > b)
limits = {}
for which in range(64):  # every limit of the kernel (up to the last one Python knows)
    try:
        soft, hard = resource.getrlimit(which)
    except ValueError:
        break
    raised = []
    for want in ((INF, INF), (soft, INF), (hard, hard), (INF if hard == INF else hard + 1,) * 2):
        try:
            resource.setrlimit(which, want)
        except (ValueError, OSError):
            continue
        now = resource.getrlimit(which)
        if more(now[0], soft) or more(now[1], hard):
            raised.append(now)
    limits[which] = [soft, hard, raised]
"""


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_bot_can_raise_none_of_its_limits(tmp_path: Path, mode: str) -> None:
    """Every resource limit a bot starts with (those the harness sets and those it leaves,
    `RLIMIT_CORE` and `RLIMIT_STACK` among them, whose hard limits systems leave open) has
    hard = soft, and the bot's attempts to raise each one fail (unsandboxed as root,
    which may raise anything, only the first is checked)."""
    if mode == "auto" and not OK:
        pytest.skip(f"the sandbox cannot run here: {WHY}")
    bot = start(tmp_path, RAISE_EVERY_LIMIT + """
import sys
sys.stdin.readline()
print(json.dumps({"type": "hello", "name": json.dumps(limits)}), flush=True)
sys.stdin.readline()
""", Limits(cpu_s=50, open_files=77, file_mb=3), mode=mode)
    try:
        handshake(bot, "limited", TimeControl(startup_ms=15000))
        got = {int(k): v for k, v in json.loads(bot.hello["name"]).items()}
    finally:
        bot.stop()
    import resource

    assert len(got) >= 15 and {resource.RLIMIT_CORE, resource.RLIMIT_STACK, 10} <= set(got), got  # 10: RLIMIT_LOCKS
    assert [k for k, (soft, hard, _) in got.items() if soft != hard] == [], got
    if mode != "none" or os.geteuid() != 0:
        assert {k: r for k, (_, _, r) in got.items() if r} == {}


@needs_bwrap
def test_a_build_can_raise_none_of_its_limits(tmp_path: Path) -> None:
    own = _own_folder(tmp_path)
    (own / "probe.py").write_text(RAISE_EVERY_LIMIT + "print(json.dumps(limits))\n")
    out = run_build("b", (sys.executable, "probe.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    got = json.loads(out.strip().splitlines()[-1])
    assert [k for k, (soft, hard, _) in got.items() if soft != hard] == [], got
    assert {k: r for k, (_, _, r) in got.items() if r} == {}


@needs_bwrap
def test_a_sandboxed_bot_exit_by_signal_reads_as_the_signal(tmp_path: Path) -> None:
    bot = start(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", Limits())
    with pytest.raises(BotStartError, match="killed by SIGSEGV"):
        handshake(bot, "limited", TimeControl(startup_ms=15000))


# ----- builds -------------------------------------------------------------------------------------


@needs_bwrap
def test_build_writes_its_own_folder_only_and_has_no_network(tmp_path: Path) -> None:
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    own = tmp_path / "bot"
    own.mkdir()
    (own / "build.py").write_text(textwrap.dedent(f"""
        import socket
        open("out.txt", "w").write("built")
        try:
            open("../outside", "w")
        except OSError as e:
            print("parent:", e.strerror)
        try:
            socket.create_connection(("127.0.0.1", {srv.getsockname()[1]}), timeout=2)
            print("net: connected")
        except OSError as e:
            print("net:", e)
    """))
    box = Sandbox(mode="bwrap", own=str(own), hide=(str(tmp_path / "results"),))
    try:
        out = run_build("b", ("python", "build.py"), str(own), {}, box, "bwrap")
    finally:
        srv.close()
    assert (own / "out.txt").read_text() == "built"
    assert not (tmp_path / "outside").exists()  # (in the sandbox, its parent is part of the scratch)
    assert "net: connected" not in out and "net: [Errno" in out


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a harness run as root drops the build's uid")
def test_a_build_run_by_root_owns_nothing_of_the_host(tmp_path: Path) -> None:
    """As root, a build runs as an unprivileged user on a copy of its folder: it cannot
    change the host's /dev/null, read a root-only file beside its folder, make a user
    namespace or hold the descriptor of the one it runs in; what it makes comes back owned by root with no set-user-ID bit and never
    writable by others, and files it left alone are not rewritten."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "keep.txt").write_text("mine")
    os.utime(own / "keep.txt", ns=(10**18, 10**18))
    (own / "private.txt").write_text("mine too")
    (own / "private.txt").chmod(0o600)
    (tmp_path / "secret.txt").write_text("root's")
    (tmp_path / "secret.txt").chmod(0o600)
    before = os.stat("/dev/null")
    (own / "build.sh").write_text(textwrap.dedent("""\
        chmod 600 /dev/null && echo CHMOD-DEVNULL
        touch -d 2001-01-01 /dev/null && echo TOUCH-DEVNULL
        cat secret.txt && echo READ-SECRET
        cd own
        cat private.txt && echo read-own
        unshare -U true && echo USERNS
        for f in /proc/$$/fd/*; do readlink "$f"; done | grep -q '^user:' && echo HOLDS-USERNS
        cp /bin/true suid && chmod 4755 suid
        echo made > made.txt
        mkdir pub && chmod 777 pub && echo x > pub/f && chmod 666 pub/f
        """))
    box = Sandbox(mode="bwrap", own=str(own))
    out = run_build("b", ("sh", "own/build.sh"), str(tmp_path), {}, box, "bwrap")
    assert "Permission denied" in out, out  # root's file is shown (its folder is the build's), not readable
    for bad in ("CHMOD-DEVNULL", "TOUCH-DEVNULL", "READ-SECRET", "USERNS", "HOLDS-USERNS"):
        assert bad not in out, out
    assert "mine too" in out and "read-own" in out, out
    after = os.stat("/dev/null")
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert (own / "made.txt").read_text() == "made\n" and (own / "made.txt").stat().st_uid == 0
    suid = (own / "suid").stat()
    assert suid.st_uid == 0 and not suid.st_mode & (stat.S_ISUID | stat.S_ISGID) and suid.st_mode & 0o111
    assert (own / "keep.txt").stat().st_mtime_ns == 10**18  # untouched, so not copied again
    assert (own / "private.txt").stat().st_mode & 0o777 == 0o600
    assert (own / "pub").stat().st_mode & 0o777 == 0o755 and (own / "pub" / "f").stat().st_mode & 0o777 == 0o644
    assert not [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("p10-build-")]


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a harness run as root drops the build's uid")
@pytest.mark.parametrize("make, words", [
    # folders nested past PATH_MAX (made with relative paths)
    ("import os\nfor _ in range(2500): os.mkdir('d'); os.chdir('d')", "nested more than 128 deep"),
    # a sparse file far larger than the blocks it takes
    ("open('big', 'wb').truncate(9 << 20)", "more than 4 MB"),
    # one file hard-linked many times
    ("import os\nopen('one', 'wb').write(b'x' * (1 << 20))\nfor k in range(8): os.link('one', f'l{k}')",
     "more than 4 MB"),
    # links out of its folder, which a later reading of the tournament file would take as its own
    ("import os\nos.symlink('/usr/bin', 'bin')\nos.mkdir('sub')\nos.symlink('../../x', 'sub/up')",
     "link 'sub/up' to '../../x', out of its folder"),
    ("import os\nos.symlink('/etc', 'etc')", "link 'etc' to '/etc', out of its folder"),
])
def test_a_build_that_makes_too_much_is_an_error_and_leaves_no_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      make: str, words: str) -> None:
    from harness.sandbox import tree as sandbox

    monkeypatch.setattr(sandbox, "BUILD_COPY_MB", 4)
    # A temporary folder of this test's own: builds of other runs on the machine stage theirs in /tmp.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    own = tmp_path / "own"
    own.mkdir()
    (own / "make.py").write_text(make)
    before = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("p10-build-")}
    with pytest.raises(SandboxError, match=words) as e:
        run_build("b", ("python", "make.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert "could not all be copied" in str(e.value)
    assert {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("p10-build-")} == before


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a harness run as root drops the build's uid")
def test_a_build_run_by_root_is_refused_a_folder_reached_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(SandboxError, match="reached through a symlink"):
        run_build("b", ("true",), str(real), {}, Sandbox(mode="bwrap", own=str(tmp_path / "link")), "bwrap")


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a harness run as root drops the build's uid")
def test_a_build_run_by_root_needs_to_enter_its_folder(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    tmp_path.chmod(0o700)
    with pytest.raises(SandboxError, match="uid 65534, which may not enter") as e:
        run_build("b", ("true",), str(tmp_path), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert str(tmp_path) in str(e.value) and "chmod o+rx" in str(e.value)
    # A working folder it may not enter outside its own folder (check-bot run from a
    # private folder): the build works in its own folder, and says so.
    own.chmod(0o755)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-own"
    elsewhere.mkdir(mode=0o755)
    elsewhere.chmod(0o755)
    out = run_build("b", ("sh", "-c", "pwd; touch made"), str(tmp_path), {}, Sandbox(mode="bwrap", own=str(elsewhere)),
                    "bwrap")
    assert f"the build runs in its own folder {elsewhere}" in out and (elsewhere / "made").exists(), out


@needs_bwrap
def test_failed_build_is_an_error_with_its_last_lines(tmp_path: Path) -> None:
    box = Sandbox(mode="bwrap", own=str(tmp_path))
    with pytest.raises(SandboxError) as e:
        run_build("b", ("sh", "-c", "echo compiling; echo 'main.c:3: error: expected ;'; exit 2"), str(tmp_path), {},
                  box, "bwrap")
    assert "bot 'b': build" in str(e.value) and "exit code 2" in str(e.value)
    assert "main.c:3: error: expected ;" in str(e.value)
    with pytest.raises(SandboxError, match="time limit of 1 s"):
        run_build("b", ("sleep", "30"), str(tmp_path), {}, box, "bwrap", timeout_s=1)


def _own_folder(tmp_path: Path) -> Path:
    """A bot's own folder for a build, which any user may enter (a build run as root's
    unprivileged user must)."""
    own = tmp_path / "own"
    own.mkdir(mode=0o755)
    return own


def _needs_cgroup() -> None:
    from harness.sandbox import cgroups as sandbox

    if sandbox.cgroups()[0] is None:
        pytest.skip("no cgroup can be made here")


@needs_bwrap
def test_a_builds_endless_output_is_kept_to_its_end(tmp_path: Path) -> None:
    """A build that prints 200 MB: the harness keeps the last 256 KB, not all of it."""
    from harness.sandbox import build as sandbox

    box = Sandbox(mode="bwrap", own=str(tmp_path))
    out = run_build("b", ("python", "-c", "import sys\nfor i in range(200_000): sys.stdout.write('x' * 1000 + '\\n')\n"
                         "print('the end')"), str(tmp_path), {}, box, "bwrap")
    assert out.startswith("[... ") and "bytes of output left out" in out.splitlines()[0]
    assert out.rstrip().endswith("the end")
    assert len(out) < (sandbox.BUILD_OUTPUT_KB << 10) + 200


@needs_bwrap
@pytest.mark.parametrize("what", ["bytes", "files"])
def test_a_build_that_fills_the_disk_is_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str) -> None:
    """Each file a build writes is capped; the disk it writes may grow by at most
    BUILD_DISK_MB and BUILD_DISK_FILES in all (here lowered to 40 MB and 3,000): past that
    the build is ended and the run stops with an error that says why."""
    from harness.sandbox import build as sandbox

    monkeypatch.setattr(sandbox, "BUILD_DISK_MB", 40)
    monkeypatch.setattr(sandbox, "BUILD_DISK_FILES", 3000)
    own = _own_folder(tmp_path)
    fill = {"bytes": "for i in range(400):\n    with open(f'f{i}', 'wb') as f: f.write(os.urandom(1 << 20))\n",
            "files": "for i in range(100_000):\n    open(f'e{i}', 'w').close()\n"}[what]
    (own / "build.py").write_text("import os, time\n" + fill + "time.sleep(30)\n")
    with pytest.raises(SandboxError) as e:
        run_build("b", ("python", "build.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap",
                  timeout_s=120)
    assert ("wrote more than 40 MB" if what == "bytes" else "more than 3,000 files") in str(e.value), str(e.value)
    made = list(own.iterdir())
    assert len(made) < (400 if what == "bytes" else 100_000)


@needs_bwrap
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "no cgroup"])
def test_a_builds_processes_are_bounded_and_none_outlives_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             cgroup: bool) -> None:
    """A build's processes share a cgroup with a process limit (BUILD_PROCESSES, here 30).
    Where no cgroup can be made, it may start no more than that beyond what its user runs
    already (RLIMIT_NPROC), or is ended when the harness sees more. Whatever it leaves
    running is ended with it."""
    from harness.sandbox import build as sandbox

    if cgroup:
        _needs_cgroup()
    else:
        monkeypatch.setattr(sandbox, "cgroups", lambda: (None, "none here"))
    monkeypatch.setattr(sandbox, "BUILD_PROCESSES", 30)
    own = _own_folder(tmp_path)
    mark = f"p10-build-mark-{os.getpid()}"
    (own / "build.py").write_text(f"""import os, subprocess, sys, time
n = 0
for i in range(100):
    try:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "{mark}"], start_new_session=True)
        n += 1
    except OSError:
        break
print("started", n, flush=True)
time.sleep(1)
""")
    try:
        out = run_build("b", ("python", "build.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    except SandboxError as e:  # without a cgroup: seen by the watch before the kernel refused one
        assert not cgroup and "ran more than 30 processes and threads" in str(e), str(e)
    else:  # refused by the kernel (without a cgroup, others of its user may have ended: a little room)
        assert int(out.split("started")[1].split()[0]) < (30 if cgroup else 40), out
    assert _left_running(mark) == []


@needs_bwrap
def test_without_a_cgroup_no_process_outlives_a_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no cgroup can be made (an ordinary user without a delegated one), what a
    build leaves running (daemons in sessions of their own) is ended with the sandbox's
    init, which outlives the build's command, and the build does not wait for them."""
    from harness.sandbox import build as sandbox

    monkeypatch.setattr(sandbox, "cgroups", lambda: (None, "none here"))
    own = _own_folder(tmp_path)
    mark = f"p10-build-daemon-{os.getpid()}"
    (own / "build.py").write_text(f"""import subprocess, sys
for i in range(3):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "{mark}"], start_new_session=True)
print("daemons started")
""")
    t0 = time.monotonic()
    out = run_build("b", ("python", "build.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert "daemons started" in out
    assert _left_running(mark) == []
    assert time.monotonic() - t0 < 30  # not the daemons' 60 s


@needs_bwrap
@pytest.mark.parametrize("how", ["one process", "four processes", "four processes whose main threads ended"])
def test_without_a_cgroup_a_builds_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      how: str) -> None:
    """Where no cgroup can be made, a build process may not take more than BUILD_MEMORY_MB
    (here 150 MB) of address space, and a build whose processes hold more than that
    together is ended by the harness."""
    from harness.sandbox import build as sandbox

    monkeypatch.setattr(sandbox, "cgroups", lambda: (None, "none here"))
    monkeypatch.setattr(sandbox, "BUILD_MEMORY_MB", 150)
    own = _own_folder(tmp_path)
    hold = {"one process": "hoard = [bytearray(1 << 20) for _ in range(400)]\nprint('held 400 MB')\n",
            "four processes": "import subprocess, sys, time\n"
                              "kids = [subprocess.Popen([sys.executable, '-c', 'import time; h = bytearray(60 << 20); "
                              "h[::4096] = b\"x\" * len(h[::4096]); time.sleep(60)']) for _ in range(4)]\n"
                              "time.sleep(60)\nprint('held 240 MB')\n",
            # a process whose main thread ends shows as a zombie with no memory; its threads hold it
            "four processes whose main threads ended": _ZOMBIE_LEADERS}[how]
    (own / "build.py").write_text(hold)
    with pytest.raises(SandboxError) as e:
        run_build("b", ("python", "build.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap",
                  timeout_s=50)
    assert "held" not in str(e.value).split("output ends")[-1] and "failed" in str(e.value), str(e.value)
    if how != "one process":
        assert "its processes held more than 150 MB of memory" in str(e.value), str(e.value)


_ZOMBIE_LEADERS = """import ctypes, os, platform, subprocess, sys, threading, time
libc = ctypes.CDLL(None)
def hold(mb):
    def work():
        time.sleep(0.3)
        h = bytearray(mb << 20)
        h[::4096] = b"x" * len(h[::4096])
        time.sleep(30)
        print("held", flush=True)
        os._exit(0)
    threading.Thread(target=work).start()
    libc.syscall(60 if platform.machine() == "x86_64" else 93, 0)  # SYS_exit: this thread alone
if len(sys.argv) == 1:
    kids = [subprocess.Popen([sys.executable, __file__, "kid"]) for _ in range(3)]
hold(60)
"""


@needs_bwrap
def test_a_builds_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """All of a build's processes share BUILD_MEMORY_MB (here 100 MB): one that takes more
    is ended by the kernel, and the build fails."""
    from harness.sandbox import build as sandbox

    _needs_cgroup()
    monkeypatch.setattr(sandbox, "BUILD_MEMORY_MB", 100)
    own = _own_folder(tmp_path)
    (own / "build.py").write_text("hoard = [bytearray(1 << 20) for _ in range(400)]\nprint('held 400 MB')\n")
    with pytest.raises(SandboxError) as e:
        run_build("b", ("python", "build.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert "held 400 MB" not in str(e.value) and "failed" in str(e.value), str(e.value)


@needs_bwrap
def test_a_build_that_fills_the_disk_and_ends_at_once_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk is looked at once more when the build ends, so one that writes past the
    limit between two looks and ends at once fails too; and `fallocate`, which reserves
    space without a file growing, is unsupported in a build."""
    from harness.sandbox import build as sandbox

    monkeypatch.setattr(sandbox, "BUILD_DISK_MB", 40)
    own = _own_folder(tmp_path)
    (own / "build.py").write_text("""import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("reserved", os.O_CREAT | os.O_WRONLY)
r = libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(1 << 30))  # FALLOC_FL_KEEP_SIZE, 1 GiB
print("fallocate", r, errno.errorcode.get(ctypes.get_errno()), flush=True)
for i in range(60):
    with open(f"f{i}", "wb") as f:
        f.write(b"x" * (1 << 20))
""")
    with pytest.raises(SandboxError) as e:
        run_build("b", ("python", "build.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert "wrote more than 40 MB" in str(e.value) and "fallocate -1 ENOTSUP" in str(e.value), str(e.value)
    # (run as root, the build works on a copy of its folder, which is dropped when it fails)
    assert not (own / "reserved").exists() or os.stat(own / "reserved").st_blocks == 0


@needs_bwrap
def test_a_build_may_leave_no_link_out_of_its_folder(tmp_path: Path) -> None:
    """A link a build makes must lead, through every link on its way, into its folder or a
    system folder: `sys -> /usr` is one, `data -> sys/../etc` is not (it leads to /etc),
    and the build fails with nothing it made kept (a later reading of the tournament file
    would take the link as the folder's own and show the bot /etc)."""
    own = _own_folder(tmp_path)
    (own / "build.sh").write_text("ln -s /usr sys && ln -s sys/../etc data && ln -s /usr/lib lib && ln -s build.sh b\n")
    with pytest.raises(BuildError) as e:
        run_build("b", ("sh", "build.sh"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert "'data'" in str(e.value) and "'/etc'" in str(e.value), str(e.value)
    assert sorted(os.listdir(own)) == ["build.sh"]
    (own / "build.sh").write_text("ln -s /usr sys && ln -s /usr/lib lib && ln -s build.sh b\n")
    run_build("b", ("sh", "build.sh"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert os.readlink(own / "lib") == "/usr/lib" and os.readlink(own / "b") == "build.sh"
    # Links that were there before the build are the author's, and stay as they are.
    run_build("b", ("true",), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")


@needs_bwrap
def test_a_build_may_not_turn_an_authors_link_out_of_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link is judged by where it leads, not by its text: the author's `data -> sys/../etc`
    leads into the folder while `sys` is a folder; a build that swaps `sys` for a link to
    /usr turns it to the host's /etc, and fails. A folder with more folders than can be
    looked at fails the build too, rather than leave links unlooked at."""
    from harness.sandbox import tree as sandbox

    own = tmp_path / "own"
    (own / "sys").mkdir(parents=True)
    (own / "etc").mkdir()
    (own / "data").symlink_to("sys/../etc")
    (own / "build.sh").write_text("rm -rf sys && ln -s /usr sys\n")
    os.chmod(own, 0o755)
    with pytest.raises(BuildError) as e:
        run_build("b", ("sh", "build.sh"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    assert "'data'" in str(e.value) and "'/etc'" in str(e.value), str(e.value)
    assert os.readlink(own / "data") == "sys/../etc" and (own / "sys").is_dir() and not (own / "sys").is_symlink()
    monkeypatch.setattr(sandbox, "SCAN_LIMIT", 20)
    for i in range(30):
        (own / "many" / f"d{i}").mkdir(parents=True)
    (own / "many" / "d29" / "esc").symlink_to("/etc")
    with pytest.raises(SandboxError, match="more than 20 folders: its links cannot all be checked"):
        sandbox.links_out(str(own), {})
    # (run as root, the copy of what the build made is held to the same number of entries first)
    with pytest.raises(SandboxError, match="more than 20"):
        run_build("b", ("true",), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")


@needs_bwrap
def test_a_failed_builds_output_moves_no_terminal(tmp_path: Path) -> None:
    box = Sandbox(mode="bwrap", own=str(tmp_path))
    with pytest.raises(SandboxError) as e:
        run_build("b", ("sh", "-c", r"printf 'ok\033]52;c;Y3VybA==\007\033[2J\nAll builds OK\n'; exit 1"),
                  str(tmp_path), {}, box, "bwrap")
    assert "\x1b" not in str(e.value) and "\x07" not in str(e.value) and "All builds OK" in str(e.value), str(e.value)


def _left_running(mark: str) -> list[str]:
    """Processes whose command line holds `mark`, after up to 5 s for them to end."""
    for _ in range(100):
        left = [p for p in os.listdir("/proc") if p.isdigit() and mark.encode() in _cmdline(int(p))]
        if not left:
            break
        time.sleep(0.05)
    return left


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@needs_bwrap
def test_a_tournament_builds_a_compiled_bot_once_then_plays_it(tmp_path: Path) -> None:
    """A bot whose program is made by its `build:` (here: a script copied by the build).
    Should its build fail, it is disqualified with the build's last lines, and the others
    play (see test_build_failures.py)."""
    template = ROOT / "bots/templates/python/bot.py"  # the standard library only
    own = tmp_path / "compiled"
    own.mkdir()
    (own / "source.py").write_bytes(template.read_bytes())
    (own / "build.sh").write_text("cp source.py bot.py\n"
                                  "echo $(( $(cat count 2>/dev/null || echo 0) + 1 )) > count\n")
    cfg = {"name": "built", "seed": 3, "base_dir": str(tmp_path), "output": str(tmp_path / "out"),
           "bots": [{"name": "compiled", "cmd": "python bot.py", "cwd": "compiled", "build": "sh build.sh"},
                    {"name": "template", "cmd": f"python {template}"}],
           "games_per_table": 2, "rules": {"phases": [1]}}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--no-site", "--no-progress"],
                       capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (own / "count").read_text().strip() == "1"
    games = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(not g["faults"] for g in games)
    # Run again, it is the same bot (its folder as its build made it): built again, nothing to play.
    r = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--no-site", "--no-progress"],
                       capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0 and "0 games played" in r.stdout, r.stderr
    assert (own / "count").read_text().strip() == "2"
    (own / "build.sh").write_text("echo 'fatal: no compiler'; exit 1\n")
    r = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--no-site", "--no-progress", "--fresh"],
                       capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "disqualified: compiled from game g000000: build 'sh build.sh' failed (exit code 1)" in r.stdout
    assert "fatal: no compiler" in r.stdout
    games = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert [g["disqualified"] for g in games] == [["compiled"], ["compiled"]]


# ----- the setting on the command line and in the results ---------------------------------------


def run_cli(args: list[str], cwd: Path, path_env: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if path_env is not None:
        env["PATH"] = path_env  # no bwrap on PATH: bubblewrap "not installed"
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
                          timeout=180, cwd=cwd, env=env)


def small_tournament(tmp_path: Path, **extra: object) -> Path:
    cfg = {"name": "small", "seed": 3, "base_dir": str(ROOT), "output": str(tmp_path / "out"),
           "bots": [{"name": "a", "cmd": "python bots/python/greedy.py"},
                    {"name": "b", "cmd": "python bots/python/random_bot.py 1"}],
           "games_per_table": 2, "rules": {"phases": [1]}, **extra}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_without_bubblewrap_auto_warns_and_the_results_say_so(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    r = run_cli(["run", str(path), "--no-progress"], tmp_path, path_env="/nonexistent")
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("warning: bots ran without a sandbox")
    out = tmp_path / "out"
    assert json.loads((out / "tournament.json").read_text())["sandbox"]["mode"] == "none"
    assert json.loads((out / "leaderboard.json").read_text())["sandbox"]["note"].startswith("bots ran without a sandbox")
    assert "Bots ran without a sandbox" in (out / "leaderboard.md").read_text()
    csv_text = (out / "leaderboard.csv").read_text()
    assert csv_text.splitlines()[0].endswith(",sandbox") and "none: bots ran without a sandbox" in csv_text
    assert "Bots ran without a sandbox" in (out / "site" / "index.html").read_text()


def test_bwrap_where_it_cannot_run_is_one_error_line(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    r = run_cli(["run", str(path), "--no-progress", "--sandbox", "bwrap"], tmp_path, path_env="/nonexistent")
    assert r.returncode != 0
    assert r.stderr.startswith("Error: sandbox: bwrap was asked for, but bubblewrap is not installed")
    assert r.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()
    for args in (["play", "--sandbox", "bwrap", "--bot", "a=python bots/python/greedy.py", "--bot",
                  "b=python bots/python/greedy.py", "-q"],
                 ["check-bot", "--sandbox", "bwrap", "--", "python", "bots/python/greedy.py"]):
        r = run_cli(args, ROOT, path_env="/nonexistent")
        assert r.returncode != 0 and r.stderr.startswith("Error: sandbox: bwrap was asked for"), r.stderr
        assert r.stderr.count("\n") == 1


@needs_bwrap
def test_a_sandboxed_run_records_it(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    r = run_cli(["run", str(path), "--no-progress", "--no-site"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    box = json.loads((tmp_path / "out" / "tournament.json").read_text())["sandbox"]
    assert box["mode"] == "bwrap" and box["bots"] == {"a": "bwrap", "b": "bwrap"}
    assert "without a sandbox" not in (tmp_path / "out" / "leaderboard.md").read_text()
    # A second run of the same folder without the sandbox: the record says some games were not.
    r = run_cli(["run", str(path), "--no-progress", "--no-site", "--sandbox", "none"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out" / "tournament.json").read_text())["sandbox"]["mode"] == "mixed"


# ----- every bundled bot and template, as the README runs them -----------------------------------

BUNDLED = [["python", "bots/python/greedy.py"], ["python", "bots/python/random_bot.py"],
           ["python", "bots/templates/python/bot.py"], ["python", "-m", "harness.bots.greedy"],
           ["python", "-m", "harness.bots.random"]]
if HAVE_NODE:
    BUNDLED += [["node", "bots/js/greedy.js"], ["node", "bots/templates/javascript/bot.js"]]


@needs_bwrap
@pytest.mark.parametrize("argv", BUNDLED, ids=" ".join)
def test_bundled_bots_pass_check_bot_in_the_sandbox(argv: list[str]) -> None:
    r = run_cli(["check-bot", "--sandbox", "bwrap", "--json", "--", *argv], ROOT)
    report = json.loads(r.stdout)
    assert r.returncode == 0, [c for c in report["checks"] if c["status"] != "pass"]


@needs_bwrap
def test_bundled_bots_play_in_the_sandbox() -> None:
    bots = [f"--bot=p{i}={' '.join(a)}" for i, a in enumerate(BUNDLED[:6])]
    r = run_cli(["play", "--sandbox", "bwrap", "-q", "--seed", "4", *bots], ROOT)
    assert r.returncode == 0, r.stderr
    assert "fault" not in r.stdout and r.stdout.startswith("result: 1.")


# ----- cgroups: v2 and v1 logic on a fake cgroup file system ------------------------------------


def fake_v2(tmp_path: Path, controllers: str = "cpu memory pids", procs: str | None = None) -> tuple[Path, Path]:
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text("0::/user.slice/run-1.scope\n")
    fs = tmp_path / "cg"
    here = fs / "user.slice" / "run-1.scope"
    here.mkdir(parents=True)
    (fs / "cgroup.controllers").write_text(controllers + "\n")
    (here / "cgroup.controllers").write_text(controllers + "\n")
    (here / "cgroup.subtree_control").write_text("")
    (here / "cgroup.procs").write_text(procs if procs is not None else f"{os.getpid()}\n")
    return tmp_path / "proc", fs


def test_cgroup_v2_moves_into_a_leaf_and_enables_memory_and_pids(tmp_path: Path) -> None:
    proc, fs = fake_v2(tmp_path)
    backend, why = detect_cgroups(str(proc), str(fs))
    here = fs / "user.slice" / "run-1.scope"
    assert backend is not None and backend.kind == "v2" and why == ""
    assert backend.parents == {"": str(here)}
    assert (here / "p10-harness" / "cgroup.procs").read_text() == str(os.getpid())
    assert (here / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    cg = backend.create("bot", memory_mb=512, processes=100, cpus=2)
    d = Path(cg.dirs[""])
    assert d.parent == here
    assert (d / "memory.max").read_text() == str(512 << 20)
    assert (d / "pids.max").read_text() == "100"
    assert (d / "cpu.max").read_text() == "200000 100000" and cg.cpus == 2
    # The bot's processes live in the hold, its own cgroup below, handed the cpu controller:
    # its limit stops the bot between turns, never the quota above (no timer shared).
    assert (d / "cgroup.subtree_control").read_text() == "+cpu"
    assert cg.hold_dir == str(d / "hold") and (d / "hold" / "cpu.max").read_text() == "max 1000000"
    assert cg.procs_files == [str(d / "hold" / "cgroup.procs")]
    # The counters the faults are named from.
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 2\n")
    (d / "pids.events").write_text("max 3\n")
    (d / "memory.current").write_text(str(300 << 20))
    assert cg.oom_kills() == 2 and cg.pids_refused() == 3 and cg.memory_mb() == 300


def test_cgroup_v2_refusals_say_why(tmp_path: Path) -> None:
    proc, fs = fake_v2(tmp_path / "a", controllers="cpu io")
    backend, why = detect_cgroups(str(proc), str(fs))
    assert backend is None or backend.kind == "v1"
    assert "memory and pids controllers are not delegated" in why or backend is not None
    proc, fs = fake_v2(tmp_path / "b", procs=f"{os.getpid()}\n1\n")
    backend, why = detect_cgroups(str(proc), str(fs))
    assert backend is None and "holds other processes" in why


def test_cgroup_v2_already_delegated_is_used_as_it_is(tmp_path: Path) -> None:
    proc, fs = fake_v2(tmp_path, procs="")
    here = fs / "user.slice" / "run-1.scope"
    (here / "cgroup.subtree_control").write_text("memory pids\n")
    backend, _ = detect_cgroups(str(proc), str(fs))
    assert backend is not None and backend.parents == {"": str(here)}
    assert not (here / "p10-harness").exists()


def test_cgroup_v1_memory_and_pids_hierarchies(tmp_path: Path) -> None:
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text("8:pids:/\n4:memory:/api/x\n0::/\n")
    fs = tmp_path / "cg"
    for d in ("memory/api/x", "pids"):
        (fs / d).mkdir(parents=True)
    for d in ("memory", "pids"):
        (fs / d / "cgroup.procs").write_text("")
    backend, why = detect_cgroups(str(proc.parent), str(fs))
    assert backend is not None and backend.kind == "v1", why
    assert backend.parents == {"memory": str(fs / "memory/api/x"), "pids": str(fs / "pids")}
    cg = backend.create("bot", memory_mb=64, processes=10, cpus=1)
    assert Path(cg.dirs["memory"], "memory.limit_in_bytes").read_text() == str(64 << 20)
    assert Path(cg.dirs["pids"], "pids.max").read_text() == "10"
    assert cg.cpus is None  # no cpu hierarchy: no quota, the other limits hold
    (fs / "cpu").mkdir()
    (fs / "cpu" / "cpu.cfs_quota_us").write_text("-1")
    backend, why = detect_cgroups(str(proc.parent), str(fs))
    assert backend is not None and backend.parents["cpu"] == str(fs / "cpu")
    cg = backend.create("bot", memory_mb=64, processes=10, cpus=1)
    assert Path(cg.dirs["cpu"], "cpu.cfs_quota_us").read_text() == "100000" and cg.cpus == 1
    assert Path(cg.dirs["cpu"], "hold", "cpu.cfs_period_us").read_text() == "1000000"
    assert cg.procs_files == [str(Path(d, "cgroup.procs")) for d in (cg.dirs["memory"], cg.dirs["pids"])] + [
        str(fs / "cpu" / Path(cg.dirs["cpu"]).name / "hold" / "cgroup.procs")]
    Path(cg.dirs["memory"], "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert cg.oom_kills() == 1


def test_no_cgroups_means_per_process_limits_recorded(tmp_path: Path) -> None:
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "cgroup").write_text("0::/\n")
    backend, why = detect_cgroups(str(tmp_path / "proc"), str(tmp_path / "nothing"))
    assert backend is None and why
    from harness.sandbox.modes import describe

    d = describe(["bwrap"], None, why)
    assert d["per_process_only"] == ["memory_mb", "processes"]
    assert d["note"].startswith("limits held per process only: memory_mb, processes")


@pytest.mark.skipif(not os.access("/sys/fs/cgroup", os.W_OK), reason="no writable cgroup file system here")
def test_a_real_cgroup_is_removed_with_its_bot(tmp_path: Path) -> None:
    from harness.sandbox.cgroups import cgroups

    backend, why = cgroups()
    if backend is None:
        pytest.skip(f"no cgroup can be made here: {why}")
    bot = start(tmp_path, "import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n", Limits())
    bot.start()
    cg: BotCgroup = bot.cgroup
    assert cg is not None and bot.pid in cg.pids()
    dirs = list(cg.dirs.values()) + [cg.hold_dir] * (cg.hold_dir is not None)
    bot.stop(0.1)
    assert not any(os.path.exists(d) for d in dirs)


# ----- the seccomp filter -----------------------------------------------------------------


def _run_bpf(prog: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Run a classic BPF seccomp program (the few instructions it uses) on a call."""
    import struct

    ins = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    acc, pc = 0, 0
    for _ in range(len(ins) + 1):
        code, jt, jf, k = ins[pc]
        if code == 0x20:  # LD W ABS
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35, 0x45):  # JEQ K, JGE K, JSET K
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:  # RET K
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
    raise AssertionError("the program does not end")


ALLOW = 0x7FFF0000
EPERM = 0x00050001
GRANTED = 0x00050000  # returns 0 without being made
ENOSYS = 0x00050026
ENOTSUP = 0x0005005F
EAFNOSUPPORT = 0x00050061


ABIS = [("x86_64", 0xC000003E), ("x86_64", 0x40000003), ("aarch64", 0xC00000B7), ("aarch64", 0x40000028)]
"""The ABIs the filter knows: (machine, AUDIT_ARCH), 32-bit x86 and ARM the second of
each machine. The tests take each system call's number from the kernel's headers
(`syscall_numbers`), by name."""
NEWER = {"setxattrat": 463, "removexattrat": 466}
"""Calls newer than Debian 12's headers, numbered alike on every ABI (as every call since
Linux 5.1)."""


@pytest.mark.parametrize("machine, arch", ABIS)
def test_seccomp_refuses_the_keyring_watches_and_locks_and_allows_ordinary_calls(machine: str, arch: int) -> None:
    from harness.sandbox import seccomp

    nr = {**syscall_numbers(arch), **NEWER}
    prog = seccomp.program(machine)
    build = seccomp.program(machine, build=True)
    assert prog is not None and build is not None and len(prog) % 8 == 0
    for name in ("inotify_init", "inotify_add_watch", "inotify_init1", "fanotify_init", "fanotify_mark"):
        if name in nr:  # (AArch64 has no inotify_init)
            assert _run_bpf(prog, nr[name], arch) == EPERM, name
    assert _run_bpf(prog, nr["io_setup"], arch) == ENOSYS
    for name in ("fchmodat", "utimensat"):  # modes and times: nothing happens in games; a build changes them
        assert _run_bpf(prog, nr[name], arch) == GRANTED and _run_bpf(build, nr[name], arch) == ALLOW
    # extended attributes (an ACL changes a mode): set and remove unsupported in games; read as ever
    for name in ("setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat",
                 "removexattrat"):
        assert _run_bpf(prog, nr[name], arch) == ENOTSUP and _run_bpf(build, nr[name], arch) == ALLOW, name
    assert _run_bpf(prog, nr["getxattr"], arch) == ALLOW
    # POSIX timers (one can send SIGCONT to a bot stopped between its turns): refused in games
    assert _run_bpf(prog, nr["timer_create"], arch) == EPERM and _run_bpf(build, nr["timer_create"], arch) == ALLOW
    for name in ("keyctl", "request_key", "add_key"):
        assert _run_bpf(build, nr[name], arch) == EPERM and _run_bpf(prog, nr[name], arch) == EPERM, name
    assert _run_bpf(prog, nr["io_uring_setup"], arch) == ENOSYS  # runtimes fall back
    assert _run_bpf(prog, nr["read"], arch) == ALLOW
    assert _run_bpf(prog, nr["flock"], arch, (3, 2)) == GRANTED
    for name in ("fcntl", "fcntl64") if arch & 0x80000000 == 0 else ("fcntl",):
        for cmd in (6, 7, 37, 38) + ((13, 14) if (arch & 0x80000000) == 0 else ()):
            assert _run_bpf(prog, nr[name], arch, (3, cmd)) == GRANTED, (name, cmd)
        # F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK, F_OFD_GETLK, F_DUPFD_CLOEXEC
        for cmd in (0, 1, 2, 3, 4, 5, 36, 1030):
            assert _run_bpf(prog, nr[name], arch, (3, cmd)) == ALLOW, (name, cmd)
        for cmd in (1024, 1026, 1031, 10):  # F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ, F_SETSIG
            assert _run_bpf(prog, nr[name], arch, (3, cmd)) == EPERM, (name, cmd)
    for n in range(0, 460):
        assert _run_bpf(prog, n, arch, (3, 1)) in (ALLOW, EPERM, ENOSYS, GRANTED, ENOTSUP, EAFNOSUPPORT)
    if arch == 0xC000003E:
        assert _run_bpf(prog, 0x40000000 + nr["keyctl"], arch) == EPERM
        assert _run_bpf(prog, 0x40000000 + 0, arch) == EPERM  # the x32 ABI whole
    assert _run_bpf(prog, nr["read"], 0x12345678) == EPERM  # an ABI it does not know


@pytest.mark.parametrize("machine, arch", ABIS)
def test_seccomp_refuses_another_processs_memory_and_descriptors(machine: str, arch: int) -> None:
    """`ptrace`, `process_vm_readv`, `process_vm_writev` and `pidfd_getfd` fail with
    EPERM in games and builds: a bot could otherwise rewrite its sandbox's init so that
    it outlives the harness and is not ended by its name; waiting for a child works."""
    from harness.sandbox import seccomp

    nr = syscall_numbers(arch)
    for build in (False, True):
        prog = seccomp.program(machine, build=build)
        assert prog is not None
        for name in ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"):
            assert _run_bpf(prog, nr[name], arch) == EPERM, (name, build)
        assert _run_bpf(prog, nr["wait4"], arch) == ALLOW


@pytest.mark.parametrize("machine, arch", ABIS)
@pytest.mark.parametrize("build", [False, True])
def test_seccomp_allows_only_unix_and_netlink_sockets(machine: str, arch: int, build: bool) -> None:
    """AF_VSOCK's ports are one table for the whole machine, and IP sockets' counts,
    source ports and (on cgroup v1) buffers are the machine's: a socket of any family but
    AF_UNIX and AF_NETLINK is refused, in games and builds."""
    from harness.sandbox import seccomp

    nr = syscall_numbers(arch)
    prog = seccomp.program(machine, build=build)
    assert prog is not None
    for name in ("socket", "socketpair"):
        for family in (1, 16):  # AF_UNIX, AF_NETLINK
            assert _run_bpf(prog, nr[name], arch, (family, 1, 0)) == ALLOW, (name, family)
        # AF_UNSPEC, AF_INET, AF_AX25, AF_IPX, AF_INET6, AF_PACKET, AF_TIPC, AF_ALG, AF_VSOCK, AF_XDP, AF_MCTP, beyond
        for family in (0, 2, 3, 4, 10, 17, 30, 38, 40, 44, 45, 46, 255, 0x10028):
            assert _run_bpf(prog, nr[name], arch, (family, 1, 0)) == EAFNOSUPPORT, (name, family)
    assert ("socketcall" in nr) == (arch & 0x80000000 == 0)  # the 32-bit ABIs'
    if "socketcall" in nr:  # its arguments lie in memory: making a socket through it is refused
        for call in (1, 8):  # SYS_SOCKET, SYS_SOCKETPAIR
            assert _run_bpf(prog, nr["socketcall"], arch, (call, 0)) == EAFNOSUPPORT
        for call in (2, 3, 9, 10, 17):  # bind, connect, send, recv, recvmsg on a socket it has
            assert _run_bpf(prog, nr["socketcall"], arch, (call, 0)) == ALLOW


@pytest.mark.parametrize("machine, arch", ABIS)
@pytest.mark.parametrize("build", [False, True])
def test_seccomp_refuses_socket_cookies(machine: str, arch: int, build: bool) -> None:
    """Socket cookies come from one counter for the machine: SO_COOKIE and SO_NETNS_COOKIE
    are refused, and so is a NETLINK_SOCK_DIAG socket (its dumps hand out cookies); other
    options and netlink protocols are not."""
    from harness.sandbox import seccomp

    nr = syscall_numbers(arch)
    socket, getsockopt = nr["socket"], nr["getsockopt"]
    prog = seccomp.program(machine, build=build)
    assert prog is not None
    ENOPROTOOPT, EPROTONOSUPPORT = 0x0005005C, 0x0005005D
    for opt in (57, 71):  # SOL_SOCKET, SO_COOKIE / SO_NETNS_COOKIE
        assert _run_bpf(prog, getsockopt, arch, (3, 1, opt)) == ENOPROTOOPT
    for level, opt in ((1, 4), (1, 7), (1, 17), (6, 57), (270, 71)):  # SO_ERROR, SO_SNDBUF, SO_PEERCRED; other levels
        assert _run_bpf(prog, getsockopt, arch, (3, level, opt)) == ALLOW, (level, opt)
    assert _run_bpf(prog, socket, arch, (16, 3, 4)) == EPROTONOSUPPORT  # AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG
    for proto in (0, 15, 16):  # NETLINK_ROUTE, NETLINK_KOBJECT_UEVENT, NETLINK_GENERIC
        assert _run_bpf(prog, socket, arch, (16, 3, proto)) == ALLOW
    assert _run_bpf(prog, socket, arch, (1, 1, 4)) == ALLOW  # a Unix socket's protocol is not looked at


@pytest.mark.parametrize("machine, arch", ABIS)
def test_seccomp_refuses_fallocate_in_builds(machine: str, arch: int) -> None:
    """`fallocate` reserves disk space at once without a file growing (past a build's disk
    watch and file-size limit): unsupported in builds; games write only their tmpfs."""
    from harness.sandbox import seccomp

    fallocate = syscall_numbers(arch)["fallocate"]
    prog, build = seccomp.program(machine), seccomp.program(machine, build=True)
    assert prog is not None and build is not None
    assert _run_bpf(build, fallocate, arch) == ENOTSUP and _run_bpf(prog, fallocate, arch) == ALLOW


@pytest.mark.parametrize("machine, arch", ABIS)
def test_seccomp_makes_setsid_do_nothing_in_games(machine: str, arch: int) -> None:
    """Every new session numbers an autogroup from one counter for the machine: in games
    `setsid` succeeds and does nothing; a build's works."""
    from harness.sandbox import seccomp

    nr = syscall_numbers(arch)
    prog, build = seccomp.program(machine), seccomp.program(machine, build=True)
    assert prog is not None and build is not None
    assert _run_bpf(prog, nr["setsid"], arch) == GRANTED and _run_bpf(build, nr["setsid"], arch) == ALLOW
    assert _run_bpf(prog, nr["getsid"], arch) == ALLOW


# Where each ABI's numbers are written down (Debian's paths; the cross-compilers' packages
# linux-libc-dev-armhf-cross and -arm64-cross put the other machines' in /usr/<triplet>).
SYSCALL_HEADERS = {
    0xC000003E: ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h",
                 "/usr/x86_64-linux-gnu/include/asm/unistd_64.h"],
    0x40000003: ["/usr/include/x86_64-linux-gnu/asm/unistd_32.h", "/usr/include/i386-linux-gnu/asm/unistd_32.h",
                 "/usr/include/asm/unistd_32.h", "/usr/x86_64-linux-gnu/include/asm/unistd_32.h"],
    0xC00000B7: ["/usr/include/asm-generic/unistd.h", "/usr/aarch64-linux-gnu/include/asm-generic/unistd.h"],
    0x40000028: ["/usr/include/arm-linux-gnueabihf/asm/unistd-eabi.h",
                 "/usr/arm-linux-gnueabihf/include/asm/unistd-eabi.h",
                 "/usr/arm-linux-gnueabi/include/asm/unistd-eabi.h"],
}
OLD_ABI_HEADERS = {
    # 32-bit ARM's old ABI shares its AUDIT_ARCH: its calls (socketcall) are filtered too.
    0x40000028: ["/usr/include/arm-linux-gnueabihf/asm/unistd-oabi.h",
                 "/usr/arm-linux-gnueabihf/include/asm/unistd-oabi.h",
                 "/usr/arm-linux-gnueabi/include/asm/unistd-oabi.h"],
}


def _header_numbers(path: str) -> dict[str, int]:
    import re

    raw = dict(re.findall(r"^#define\s+(__NR\w+)\s+(.+?)\s*$", Path(path).read_text(), re.M))

    def value(expr: str) -> int:
        expr = expr.strip().strip("()").replace("__NR_SYSCALL_BASE", "0")  # 0 for ARM's EABI
        if expr in raw:
            return value(raw[expr])
        return sum(int(term) for term in expr.split("+"))

    out = {}
    for name, expr in raw.items():
        try:
            out[name.removeprefix("__NR_")] = value(expr)
        except ValueError:
            continue
    return out


def syscall_numbers(arch: int) -> dict[str, int]:
    """The system call numbers of one ABI as the kernel's headers give them (name without
    `__NR_`, e.g. "sync": 162), or skip where this machine has none of its headers."""
    path = next((p for p in SYSCALL_HEADERS[arch] if os.path.exists(p)), None)
    if path is None:
        pytest.skip(f"no kernel header with the numbers of ABI {arch:#x} here")
    out = _header_numbers(path)
    old = next((p for p in OLD_ABI_HEADERS.get(arch, ()) if os.path.exists(p)), None)
    for name, nr in (_header_numbers(old) if old else {}).items():
        out.setdefault(name, nr)
    out.pop("syscalls", None)  # asm-generic's count of calls (__NR_syscalls), not a call
    return out


@pytest.mark.parametrize("abi", ["x86_64", "i386", "aarch64", "arm"])
def test_seccomp_numbers_are_the_kernels(abi: str) -> None:
    """Every system call the filter's rules name has, on each ABI, the number the kernel's
    headers give it. A call newer than this machine's headers must be one of those that
    Linux numbers alike on every ABI (since 5.1): above every number the headers hold,
    and the same on all four."""
    from harness.sandbox import seccomp

    rules = next(r[abi] for r in seccomp._RULES.values() if abi in r)
    kernel = syscall_numbers(rules.audit_arch)
    names = {n for field in dataclasses.fields(rules) if field.type == "tuple[str, ...]"
             for n in getattr(rules, field.name)}
    assert names and names <= set(seccomp.SYSCALLS[abi]), names - set(seccomp.SYSCALLS[abi])
    newest = max(kernel.values())
    for name in sorted(names):
        nr = seccomp.SYSCALLS[abi][name]
        if name in kernel:
            assert nr == kernel[name], (abi, name, nr, kernel[name])
        else:  # newer than these headers
            assert nr > newest, (abi, name, nr)
            assert {t.get(name) for t in seccomp.SYSCALLS.values()} == {nr}, (abi, name)


def test_seccomp_rules_unknown_to_an_abi_are_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call a rule names that an ABI's table lacks (a misspelt name) is an error, not a
    call the filter leaves out unseen."""
    from harness.sandbox import seccomp

    monkeypatch.setitem(seccomp.SYSCALLS, "x86_64", {k: v for k, v in seccomp.SYSCALLS["x86_64"].items() if k != "sync"})
    with pytest.raises(KeyError, match="sync"):
        seccomp.program.__wrapped__("x86_64")


@pytest.mark.parametrize("machine, arch, flush, fadvise", [
    ("x86_64", 0xC000003E, "sync_file_range", ("fadvise64",)),
    ("x86_64", 0x40000003, "sync_file_range", ("fadvise64", "fadvise64_64")),  # 32-bit x86
    ("aarch64", 0xC00000B7, "sync_file_range", ("fadvise64",)),
    ("aarch64", 0x40000028, "arm_sync_file_range", ("arm_fadvise64_64",)),  # 32-bit ARM
])
def test_seccomp_keeps_a_bot_from_writing_back_the_machines_files(
        machine: str, arch: int, flush: str, fadvise: tuple[str, ...]) -> None:
    """`sync`, `syncfs` and `quotactl` (whose Q_SYNC writes back every file system with
    quotas, unprivileged) fail with EPERM; `fsync`, `fdatasync`, `sync_file_range`,
    `posix_fadvise` and `msync` with MS_SYNC return 0 without being made, in games and
    builds. The numbers come from the kernel's headers, and the filter's lists for this
    are exactly these calls."""
    from harness.sandbox import seccomp

    nr = syscall_numbers(arch)
    refused = [nr[n] for n in ("sync", "syncfs", "quotactl", "quotactl_fd")]
    granted = [nr[n] for n in ("fsync", "fdatasync", flush, *fadvise)]
    name, abi = next((n, a) for n, a in seccomp._RULES[machine].items() if a.audit_arch == arch)
    assert sorted(seccomp.numbers(name, abi.writeback)) == sorted(refused)
    assert sorted(seccomp.numbers(name, abi.flush)) == sorted(granted)
    assert seccomp.numbers(name, abi.msync) == (nr["msync"],)
    for build in (False, True):
        prog = seccomp.program(machine, build=build)
        assert prog is not None
        for n in refused:
            assert _run_bpf(prog, n, arch) == EPERM, (n, build)
        for n in granted:
            assert _run_bpf(prog, n, arch, (3, 0, 0, 0)) == GRANTED, (n, build)
        for flags, verdict in ((4, GRANTED), (4 | 2, GRANTED), (1, ALLOW), (2, ALLOW), (0, ALLOW)):  # MS_SYNC
            assert _run_bpf(prog, nr["msync"], arch, (0x1000, 4096, flags)) == verdict, (flags, build)
        assert _run_bpf(prog, nr["readahead"], arch) == (ALLOW if build else GRANTED)  # a hint: nothing in games


def test_seccomp_has_no_filter_for_an_unknown_machine() -> None:
    from harness.sandbox import seccomp

    assert seccomp.program("riscv64") is None
    assert seccomp.program("amd64") == seccomp.program("x86_64")


@pytest.mark.skipif(not bwrap_available()[0], reason="the sandbox cannot run here")
def test_a_sandboxed_process_cannot_reach_the_keyring_or_file_locks(tmp_path: Path) -> None:
    """Inside the sandbox the keyring calls fail, file locks are granted but never held,
    and /proc/keys and /proc/locks list nothing; a program's ordinary calls (threads,
    files, fcntl) still work."""
    import platform

    from harness.sandbox.seccomp import program

    if program() is None or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"no seccomp filter for {platform.machine()}")
    add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    probe = tmp_path / "probe.py"
    probe.write_text(f"""
import ctypes, errno, threading
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall({add_key}, b"user", b"p10-probe", b"x", 1, -4)
print("add_key", r, errno.errorcode.get(ctypes.get_errno()))
r = libc.syscall({keyctl}, 0, -4, 0)
print("keyctl", r, errno.errorcode.get(ctypes.get_errno()))
try:
    print("keys", repr(open("/proc/keys").read()))
except OSError as e:
    print("keys refused", e.strerror)
try:
    print("locks", repr(open("/proc/locks").read()))
except OSError as e:
    print("locks refused", e.strerror)
import fcntl, os, struct, sys
with open(sys.executable, "rb") as f:
    for what, call in (("flock", lambda: fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                       ("lockf", lambda: fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 12345)),
                       ("ofd", lambda: fcntl.fcntl(f, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 12345, 1, 0)))):
        try:
            call()
            print(what, "granted")
        except OSError as e:
            print(what, errno.errorcode[e.errno])
    print("getfl", fcntl.fcntl(f, fcntl.F_GETFL) >= 0)
    # Nothing was held: another open file description asks about a write lock over the
    # same bytes (F_OFD_GETLK) and is told there is none (F_UNLCK).
    with open(sys.executable, "rb") as g:
        got = fcntl.fcntl(g, 36, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
        print("seen", struct.unpack("hhqqi", got)[0] == fcntl.F_UNLCK)
for f in ("/proc/sys/fs/lease-break-time", "/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger", "/proc/mtrr",
          "/proc/self/oom_score_adj"):
    try:
        fd = os.open(f, os.O_WRONLY)  # opened only, never written
        os.close(fd)
        print("writable", f)
    except OSError as e:
        print("not writable", f)
try:
    import ctypes
    libc.inotify_init1.restype = ctypes.c_int
    print("inotify", libc.inotify_init1(0), errno.errorcode.get(ctypes.get_errno()))
except AttributeError:
    print("inotify -1 EPERM")
open("/tmp/f", "w").close()
os.chmod("/tmp/f", 0o600)
os.utime("/tmp/f", (1, 1))
print("metadata", oct(os.stat("/tmp/f").st_mode & 0o777), os.stat("/tmp/f").st_mtime != 1)
try:
    os.setxattr("/tmp/f", "system.posix_acl_access", b"\\x02\\x00\\x00\\x00")
    print("xattr set")
except OSError as e:
    print("xattr", errno.errorcode[e.errno])
try:
    print("timer_list", repr(open("/proc/timer_list").read()[:40]))
except OSError as e:
    print("timer_list refused", e.strerror)
t = ctypes.c_void_p()
print("timer_create", libc.timer_create(1, None, ctypes.byref(t)), errno.errorcode.get(ctypes.get_errno()))
t = threading.Thread(target=lambda: None); t.start(); t.join()
print("thread ok")
""")
    inv = prepare([sys.executable, str(probe)], str(tmp_path), {}, Sandbox(mode="bwrap", own=str(tmp_path)), 64)
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
    finally:
        inv.close()
    assert p.returncode == 0, p.stderr
    assert "add_key -1 EPERM" in p.stdout and "keyctl -1 EPERM" in p.stdout, p.stdout
    assert "keys refused" in p.stdout or "keys ''" in p.stdout, p.stdout
    assert "locks refused" in p.stdout or "locks ''" in p.stdout, p.stdout
    for what in ("flock", "lockf", "ofd"):
        assert f"{what} granted" in p.stdout, p.stdout
    assert "seen True" in p.stdout, p.stdout
    assert "getfl True" in p.stdout and "thread ok" in p.stdout
    assert "writable /" not in p.stdout.replace("not writable", ""), p.stdout  # all of /proc: read-only
    assert "inotify -1 EPERM" in p.stdout, p.stdout
    assert "metadata 0o644 True" in p.stdout, p.stdout  # chmod and utime succeeded and did nothing
    assert "xattr ENOTSUP" in p.stdout, p.stdout  # an ACL would change the mode
    assert "timer_create -1 EPERM" in p.stdout, p.stdout  # a timer could send SIGCONT while stopped
    assert "timer_list refused" in p.stdout or "timer_list ''" in p.stdout, p.stdout  # every timer's expiry


@pytest.mark.parametrize("build", [False, True])
def test_a_sandboxed_process_cannot_make_the_machine_write_back_its_files(tmp_path: Path, build: bool) -> None:
    """In the sandbox (a game's and a build's), `sync()` and `syncfs()` fail with EPERM and
    Python's `os.sync()` goes on; `fsync`, `fdatasync`, `sync_file_range`, `posix_fadvise`
    and `msync(MS_SYNC)` return 0 without being made: on a pipe, or an address nothing is
    mapped at, where made they fail. `msync` without MS_SYNC is made."""
    import platform

    from harness.sandbox.seccomp import program

    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(platform.machine())
    if not OK or program() is None or arch is None:
        pytest.skip(f"no sandbox with a seccomp filter here ({platform.machine()}, {WHY})")
    nr = syscall_numbers(arch)
    probe = tmp_path / "probe.py"
    probe.write_text(f"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(*args)
    print(name, r, errno.errorcode.get(ctypes.get_errno(), "-") if r < 0 else "-")
r, w = os.pipe()
os.sync()
print("os.sync returned")
call("sync", {nr["sync"]})
call("syncfs", {nr["syncfs"]}, os.open("/usr", os.O_RDONLY))
call("quotactl", {nr["quotactl"]}, ctypes.c_uint(0x80000100), None, 0, None)  # Q_SYNC of user quotas, all file systems
call("fsync", {nr["fsync"]}, r)
call("fdatasync", {nr["fdatasync"]}, r)
call("sync_file_range", {nr["sync_file_range"]}, r, ctypes.c_int64(0), ctypes.c_int64(0), 2)
call("fadvise", {nr["fadvise64"]}, r, ctypes.c_int64(0), ctypes.c_int64(0), 4)
call("msync_sync", {nr["msync"]}, ctypes.c_void_p(0x10000), 4096, 4)
call("msync_async", {nr["msync"]}, ctypes.c_void_p(0x10000), 4096, 1)
""")
    inv = prepare([sys.executable, str(probe)], str(tmp_path), {}, Sandbox(mode="bwrap", own=str(tmp_path)), 64,
                  writable_own=build)
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
    finally:
        inv.close()
    got = {line.split()[0]: line.split()[1:] for line in p.stdout.splitlines()}
    assert p.returncode == 0 and "os.sync" in got, (p.stdout, p.stderr)
    for name in ("sync", "syncfs", "quotactl"):
        assert got[name] == ["-1", "EPERM"], (name, got)
    for name in ("fsync", "fdatasync", "sync_file_range", "fadvise", "msync_sync"):
        assert got[name] == ["0", "-"], (name, got)
    assert got["msync_async"] == ["-1", "ENOMEM"], got


@pytest.mark.skipif(not bwrap_available()[0], reason="the sandbox cannot run here")
def test_a_sandboxed_process_can_make_no_vsock_or_ip_socket(tmp_path: Path) -> None:
    """AF_VSOCK's ports are one table for the whole machine (a port bound in one sandbox is
    seen from every other), and IP sockets move machine-wide counts: inside the sandbox
    neither can be made, while Unix and netlink sockets work, and `setsid` leaves the
    session (and the machine's count of them) as it was."""
    import platform

    from harness.sandbox.seccomp import program

    if program() is None or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"no seccomp filter for {platform.machine()}")
    probe = tmp_path / "probe.py"
    probe.write_text("""
import errno, socket
for name, family, kind in (("vsock", 40, socket.SOCK_STREAM), ("vsock-dgram", 40, socket.SOCK_DGRAM),
                           ("packet", 17, socket.SOCK_DGRAM), ("tipc", 30, socket.SOCK_RDM),
                           ("unix", 1, socket.SOCK_STREAM), ("inet", 2, socket.SOCK_STREAM),
                           ("inet6", 10, socket.SOCK_DGRAM), ("netlink", 16, socket.SOCK_RAW)):
    try:
        socket.socket(family, kind).close()
        print(name, "made")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno))
a, b = socket.socketpair()
a.sendall(b"x")
print("socketpair", b.recv(1) == b"x")
try:
    a.getsockopt(socket.SOL_SOCKET, 57, 8)
    print("cookie read")
except OSError as e:
    print("cookie", errno.errorcode.get(e.errno))
try:
    socket.socket(16, socket.SOCK_RAW, 4).close()
    print("sock_diag made")
except OSError as e:
    print("sock_diag", errno.errorcode.get(e.errno))
import os
r, w = os.pipe()
if os.fork() == 0:  # not a group leader: setsid would make a session (and an autogroup)
    before = open("/proc/self/autogroup").read() if os.path.exists("/proc/self/autogroup") else ""
    sid = os.getsid(0)
    os.setsid()
    after = open("/proc/self/autogroup").read() if os.path.exists("/proc/self/autogroup") else ""
    os.write(w, f"setsid same-session {os.getsid(0) == sid} same-autogroup {before == after}".encode())
    os._exit(0)
os.close(w)
os.wait()
print(os.read(r, 200).decode())
""")
    inv = prepare([sys.executable, str(probe)], str(tmp_path), {}, Sandbox(mode="bwrap", own=str(tmp_path)), 64)
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
    finally:
        inv.close()
    assert p.returncode == 0, p.stderr
    for name in ("vsock", "vsock-dgram", "packet", "tipc", "inet", "inet6"):
        assert f"{name} EAFNOSUPPORT" in p.stdout, p.stdout
    for name in ("unix", "netlink"):
        assert f"{name} made" in p.stdout, p.stdout
    assert "socketpair True" in p.stdout, p.stdout
    assert "setsid same-session True same-autogroup True" in p.stdout, p.stdout
    assert "cookie ENOPROTOOPT" in p.stdout and "sock_diag EPROTONOSUPPORT" in p.stdout, p.stdout


_PTRACE_PROBE = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, 1, None, None)  # PTRACE_ATTACH to the sandbox's init
print("ptrace", r, errno.errorcode.get(ctypes.get_errno()))
buf = ctypes.create_string_buffer(8)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local, remote = iovec(ctypes.addressof(buf), 8), iovec(0x400000, 8)
r = libc.process_vm_readv(1, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print("process_vm_readv", r, errno.errorcode.get(ctypes.get_errno()))
"""


@pytest.mark.skipif(not bwrap_available()[0], reason="the sandbox cannot run here")
def test_a_bot_can_neither_trace_nor_read_its_sandboxs_init(tmp_path: Path) -> None:
    """In a game and in a build, `ptrace` and `process_vm_readv` of the sandbox's init
    fail with EPERM: a build that traced it could undo its death with the harness and
    rename it, and live on after the build. (Its memory can still be read through
    /proc/1/mem, which is read-only: it holds bwrap's options, the mounts that
    /proc/self/mountinfo shows anyway.)"""
    import platform

    from harness.sandbox.seccomp import program

    if program() is None or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"no seccomp filter for {platform.machine()}")
    own = _own_folder(tmp_path)
    (own / "probe.py").write_text(_PTRACE_PROBE)
    inv = prepare([sys.executable, str(own / "probe.py")], str(own), {}, Sandbox(mode="bwrap", own=str(own)), 64)
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
    finally:
        inv.close()
    out = run_build("b", ("python", "probe.py"), str(own), {}, Sandbox(mode="bwrap", own=str(own)), "bwrap")
    for text in (p.stdout, out):
        assert "ptrace -1 EPERM" in text and "process_vm_readv -1 EPERM" in text, text


@needs_bwrap
def test_a_builds_init_is_found_from_bwraps_info_written_in_pieces() -> None:
    """bwrap writes its `--info-fd` JSON in several writes: the init of a build's sandbox is
    taken once all of it is there (a look between two writes must not lose it), checked
    to be bwrap's in the PID namespace bwrap named, and `end` kills it."""
    import json

    from harness.sandbox.build import _SandboxInit

    r, w = os.pipe()
    p = subprocess.Popen(["bwrap", "--unshare-pid", "--ro-bind", "/", "/", "--info-fd", str(w), "sleep", "30"],
                         pass_fds=(w,), start_new_session=True)
    os.close(w)
    try:
        data = b""
        while not data.rstrip().endswith(b"}"):
            data += os.read(r, 4096)
        pid = json.loads(data)["child-pid"]
        r2, w2 = os.pipe()
        init = _SandboxInit(r2)
        init.look()  # nothing written yet: it must go on looking
        assert not init.done
        os.write(w2, data[:len(data) // 2])
        init.look()
        assert init.pid == 0
        os.write(w2, data[len(data) // 2:])
        init.look()
        assert init.pid == pid
        init.end()
        assert p.wait(timeout=10) != 0
        os.close(r2)
        os.close(w2)
    finally:
        os.close(r)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@needs_bwrap
def test_a_bot_folder_of_thousands_of_results_folders_to_mask_still_starts(tmp_path: Path) -> None:
    """Each results folder inside a bot's folder is masked by options of its own, and
    bubblewrap reads the options from a descriptor: written into a pipe, options past its
    64 KiB blocked the harness for ever (one entrant stopped the tournament). Now the
    sandbox starts, and every one of them is masked."""
    import signal as _signal

    from harness.ledger.names import CONCEAL

    own = tmp_path / "bot"
    for i in range(2000):
        d = own / f"results-folder-with-a-long-name-{i:05}"
        d.mkdir(parents=True)
        (d / "seed.secret").write_text("123\n")
    box = Sandbox(mode="bwrap", own=str(own), conceal=CONCEAL)
    _signal.alarm(300)  # a harness blocked writing the options fails here instead of hanging the suite
    try:
        res = in_box(own, "cat results-folder-with-a-long-name-01999/seed.secret; echo done", box)
    finally:
        _signal.alarm(0)
    assert res.stdout.strip().splitlines()[-1] == "done" and "123" not in res.stdout, res
