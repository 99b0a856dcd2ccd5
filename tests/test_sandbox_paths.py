"""Paths a bot's entry names (its command's words, cwd, mounts, build) reach in the sandbox
what they reach on the host: a path through `..` or through a link on its way is shown,
and given to the bot, as the path the host finds; a path the sandbox cannot show is one
`Error:` when the tournament is read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.sandbox.modes import bwrap_available
from harness.sandbox.paths import command_file, command_paths, named_path, sandbox_argv

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "bots/templates/python/bot.py"  # the standard library only: runs in any sandbox
OK, WHY = bwrap_available()
needs_bwrap = pytest.mark.skipif(not OK, reason=f"bubblewrap unavailable: {WHY}")


def layout(tmp: Path) -> Path:
    """bots/a/b (a folder no bot is shown), bots/a/c/bot.py, bots/lnk -> a/b, bots/via -> a/c,
    bots/e/{bot.py,build.sh,sub/}; the tournament's own folder apart (t/)."""
    bots = tmp / "bots"
    (bots / "a" / "b").mkdir(parents=True)
    (bots / "a" / "c").mkdir()
    shutil.copy(BOT, bots / "a" / "c" / "bot.py")
    (bots / "lnk").symlink_to("a/b")
    (bots / "via").symlink_to("a/c")
    (bots / "e" / "sub").mkdir(parents=True)
    shutil.copy(BOT, bots / "e" / "bot.py")
    (bots / "e" / "build.sh").write_text("ls ../a/c/bot.py > made.txt\n")
    (tmp / "t").mkdir()
    for p in [tmp, *(q for q in tmp.rglob("*") if q.is_dir() and not q.is_symlink())]:
        os.chmod(p, 0o755)
    return bots


def test_a_path_is_named_where_the_host_finds_it(tmp_path: Path) -> None:
    """`..` after a link goes up from where the link leads, as the kernel goes: the bot's
    own folder (writable while it builds) is the script's real folder, never the one a
    lexical `..` would name; a word that needs no change is left as written."""
    bots = layout(tmp_path)
    (bots / "c").mkdir()  # what a lexical bots/lnk/../c would be: another folder
    argv = ["python", f"{bots}/lnk/../c/bot.py"]
    assert command_file(argv, None) == f"{bots}/a/c/bot.py"
    assert command_paths(argv, None) == [f"{bots}/a/c"]
    assert named_path(f"{bots}/via/bot.py") == f"{bots}/a/c/bot.py"
    assert named_path(f"{bots}/via") == f"{bots}/via"  # a link at the end stays a link
    e = str(bots / "e")
    assert sandbox_argv(["sh", "sub/../build.sh", "-x", "bot.py"], e) == ["sh", "build.sh", "-x", "bot.py"]
    assert sandbox_argv(["sh", "../lnk/../c/bot.py"], e) == ["sh", f"{bots}/a/c/bot.py"]
    assert sandbox_argv(["./sub/../bot.py", "missing/../x"], e) == ["bot.py", "missing/../x"]


@needs_bwrap
def test_commands_mounts_and_builds_through_dotdot_and_links_run_in_the_sandbox(tmp_path: Path) -> None:
    """Four bots whose command, cwd, mount or build names a path through `..` or a link
    outside any folder they are shown play every game without a fault, and the build ran
    where it was named."""
    bots = layout(tmp_path)
    cfg = {"name": "paths", "seed": 5, "output": str(tmp_path / "out"), "table_size": 4, "games_per_table": 4,
           "rules": {"phases": [1], "hand_limit": 10}, "time": {"move_ms": 5000, "startup_ms": 20000},
           "bots": [{"name": "dotdot", "cmd": f"python {bots}/a/b/../c/bot.py"},
                    {"name": "link-dotdot", "cmd": f"python {bots}/lnk/../c/bot.py"},
                    {"name": "link", "cmd": f"python {bots}/via/bot.py"},
                    {"name": "relative", "cmd": "python sub/../bot.py", "cwd": "../bots/e",
                     "mounts": ["../bots/lnk/../c"], "build": "sh sub/../build.sh"}]}
    path = tmp_path / "t" / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--no-site", "--no-progress"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    games = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4 and all(g["reason"] != "not_played" and not g["faults"] for g in games), games
    assert (bots / "e" / "made.txt").read_text() == "../a/c/bot.py\n"


def test_a_path_the_sandbox_cannot_show_is_one_error_at_load(tmp_path: Path) -> None:
    """A mount (or command, cwd) in /proc or /dev, which every sandbox makes its own: one
    `Error:` line when the tournament is read, not a failed start in every game."""
    bots = layout(tmp_path)
    cfg = {"name": "paths", "seed": 5, "output": str(tmp_path / "out"), "sandbox": "bwrap" if OK else "auto",
           "bots": [{"name": "a", "cmd": f"python {bots}/via/bot.py", "mounts": ["/proc/self/status"]},
                    {"name": "b", "cmd": f"python {bots}/e/bot.py"}]}
    path = tmp_path / "t" / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--no-site", "--no-progress"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode != 0 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("Error: ") and "cannot be shown in the sandbox: it lies in /proc" in r.stderr
    assert not (tmp_path / "out" / "games.jsonl").exists()
