"""Routes past the sandbox that a hostile entrant may try through the tournament file
itself (symlinks, command words, mounts, builds) rather than from inside a running bot,
and what a bot may print to a person's terminal. Each route must be refused or lead
nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.referee.process import printable, stderr_gist
from harness.sandbox.box import Sandbox, SandboxError
from harness.sandbox.build import run_build
from harness.sandbox.modes import bwrap_available
from harness.sandbox.options import bwrap_options
from harness.tournament.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]
OK, WHY = bwrap_available()
needs_bwrap = pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")


def tournament(tmp_path: Path, evil: dict) -> Path:
    """A tournament file in `tmp_path/repo/tournaments/` with results in `repo/results/t`,
    an entrant `evil` (its folder `repo/bots/evil`) and the bundled greedy bot."""
    repo = tmp_path / "repo"
    (repo / "tournaments").mkdir(parents=True, exist_ok=True)
    (repo / "bots" / "evil").mkdir(parents=True, exist_ok=True)
    (repo / "results" / "t").mkdir(parents=True, exist_ok=True)
    (repo / "bots" / "evil" / "bot.py").write_text("print('never run')\n")
    cfg = {"name": "t", "base_dir": "..", "output": str(repo / "results" / "t"),
           "bots": [{"name": "evil", **evil}, {"name": "greedy", "cmd": f"{sys.executable} {ROOT / 'bots/python/greedy.py'}"}],
           "rules": {"phases": [1]}, "games_per_table": 2}
    path = repo / "tournaments" / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("evil", [
    {"cmd": "python bot.py book", "cwd": "bots/evil"},          # a symlink in its folder to the results
    {"cmd": "python bot.py results/t/seed.secret"},              # a results file named as an argument
    {"cmd": "python bots/evil/bot.py tournaments/t.yaml"},       # the tournament file named as an argument
])
def test_a_command_word_that_leads_into_the_results_or_the_tournament_file_is_refused(
        tmp_path: Path, evil: dict) -> None:
    path = tournament(tmp_path, evil)
    os.symlink("../../results/t", tmp_path / "repo" / "bots" / "evil" / "book")
    with pytest.raises(ConfigError, match="which no bot may see"):
        load_config(path)


def test_a_mount_inside_the_results_folder_is_refused(tmp_path: Path) -> None:
    path = tournament(tmp_path, {"cmd": "python bot.py", "cwd": "bots/evil"})
    (tmp_path / "repo" / "results" / "t" / "logs").mkdir()
    data = yaml.safe_load(path.read_text())
    data["bots"][0]["mounts"] = [str(tmp_path / "repo" / "results" / "t" / "logs")]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="would show the bot"):
        load_config(path)


def test_the_results_folder_is_masked_even_below_a_folder_the_bot_needs(tmp_path: Path) -> None:
    """The bot's cwd is the repository that holds the results: they are covered, and a
    needed folder inside another hidden folder is shown again on top of its mask."""
    repo = tmp_path / "repo"
    (repo / "results").mkdir(parents=True)
    (repo / "other" / "mine").mkdir(parents=True)
    box = Sandbox(mode="bwrap", own=str(repo / "other" / "mine"), hide=(str(repo / "results"), str(repo / "other")),
                  secret=(str(repo / "results"),))
    opts = bwrap_options(["sh"], str(repo), box, 16)
    pairs = list(zip(opts, opts[1:]))
    assert ("--tmpfs", str(repo / "results")) in pairs
    assert ("--tmpfs", str(repo / "other")) in pairs
    masked = pairs.index(("--tmpfs", str(repo / "other")))
    assert ("--ro-bind", str(repo / "other" / "mine")) in pairs[masked:]


@needs_bwrap
def test_a_symlinked_command_does_not_make_its_targets_folder_writable_to_the_build(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "real.py").write_text("print('hi')\n")
    own = tmp_path / "evil"
    own.mkdir()
    os.symlink(victim / "real.py", own / "bot.py")
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({
        "name": "t", "seed": 1, "base_dir": str(tmp_path), "output": str(tmp_path / "out"),
        "bots": [{"name": "evil", "cmd": f"python {own / 'bot.py'}",
                  "build": ["sh", "-c", f"touch {victim}/planted; touch {own}/built"]},
                 {"name": "g", "cmd": f"python {ROOT / 'bots/python/greedy.py'}"}]}))
    cfg = load_config(path)
    evil = cfg.bot("evil")
    assert evil.sandbox.own == str(own)
    try:
        run_build("evil", evil.sandbox.build or (), evil.cwd, {}, evil.sandbox, "bwrap")
    except Exception:  # noqa: BLE001 - the build may fail on the read-only target: what matters is below
        pass
    assert not (victim / "planted").exists()
    assert (own / "built").exists()


def test_a_build_may_not_write_a_folder_that_holds_the_harness_or_the_results(tmp_path: Path) -> None:
    box = Sandbox(mode="bwrap", own=str(ROOT), build=("true",))
    with pytest.raises(Exception, match="would be writable during its build"):
        bwrap_options(["true"], str(ROOT), box, 16, writable_own=True)
    box = Sandbox(mode="bwrap", own=str(tmp_path), hide=(str(tmp_path / "out"),), build=("true",))
    with pytest.raises(Exception, match="would be writable during its build"):
        bwrap_options(["true"], str(tmp_path), box, 16, writable_own=True)


def test_a_bots_words_cannot_drive_the_terminal() -> None:
    evil = "Error: \x1b]0;TITLE\x07 \x1b]52;c;Y2xpcA==\x07 \rgone \x9b2J"
    for shown in (printable(evil), stderr_gist(evil.encode())):
        assert not any(ord(c) < 0x20 and c != "\t" or 0x7f <= ord(c) < 0xa0 for c in shown), repr(shown)
    assert "\\x1b]0;TITLE\\x07" in printable(evil)
    # Marks that reorder what follows on the screen ("Trojan source") or break the line.
    spoof = "bot\u202eniw\u202c \u2066x\u2069 a\u2028b"
    assert printable(spoof) == "bot\\u202eniw\\u202c \\u2066x\\u2069 a\\u2028b"


def test_play_shows_a_bots_stderr_without_its_control_characters(tmp_path: Path) -> None:
    bot = tmp_path / "loud.py"
    bot.write_text("import sys\nsys.stderr.write('Error: \\x1b]0;PWNED\\x07 boom\\n'); sys.exit(1)\n")
    p = subprocess.run([sys.executable, "-m", "harness.cli", "play", "--bot", f"loud=python {bot}",
                        "--bot", f"g=python {ROOT / 'bots/python/greedy.py'}", "--rules", '{"phases": [1]}',
                        "--stderr", "show"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "\x1b" not in p.stdout + p.stderr
    assert "\\x1b]0;PWNED" in p.stdout + p.stderr


@needs_bwrap
def test_a_build_cannot_turn_a_word_of_its_command_into_a_link_elsewhere(tmp_path: Path) -> None:
    """A bot's command names a data file in its folder; its build replaces the file with
    a link to another folder's file. Shown the link's target folder, the bot could read
    what it holds: the start is refused, naming the path. A link that was there when the
    tournament was read is the tournament's own choice and still starts."""
    own = tmp_path / "bot"
    own.mkdir()
    (own / "bot.py").write_text("print('hi')\n")
    (own / "model.bin").write_text("weights\n")
    elsewhere = tmp_path / "private"
    elsewhere.mkdir()
    (elsewhere / "key").write_text("secret\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "run.py").write_text("print('hi')\n")
    os.symlink(shared / "run.py", own / "run.py")
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({
        "name": "t", "seed": 1, "base_dir": str(tmp_path), "output": str(tmp_path / "out"),
        "bots": [{"name": "b", "cmd": "python run.py model.bin", "cwd": "bot"},
                 {"name": "g", "cmd": f"python {ROOT / 'bots/python/greedy.py'}"}]}))
    spec = load_config(path).bot("b")
    assert bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, 16)  # the link it was read with: fine
    (own / "model.bin").unlink()
    os.symlink(elsewhere / "key", own / "model.bin")
    with pytest.raises(SandboxError, match="now leads to .*private/key.*did not when the tournament was read"):
        bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, 16)
    (own / "model.bin").unlink()
    (own / "model.bin").write_text("weights\n")
    bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, 16)  # as it was: fine again
    # The same for a `mounts:` entry inside the bot's folder.
    (own / "data").mkdir()
    path.write_text(path.read_text().replace("cwd: bot", f"cwd: bot\n  mounts: [{own / 'data'}]"))
    spec = load_config(path).bot("b")
    assert spec.sandbox.mounts == (str(own / "data"),)
    bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, 16)
    (own / "data").rmdir()
    os.symlink(elsewhere, own / "data")
    with pytest.raises(SandboxError, match="now leads to .*private'"):
        bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, 16)


@needs_bwrap
def test_a_repository_history_is_covered_where_the_bot_sees_the_repository(tmp_path: Path) -> None:
    """A bot whose cwd is a repository's root would read other bots' folders and
    tournament files from the history, masked or not: its .git is covered."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    opts = bwrap_options(["sh"], str(tmp_path), Sandbox(mode="bwrap"), 16)
    at = [i for i, o in enumerate(opts) if o == str(tmp_path / ".git")]
    assert any(opts[i - 1] == "--tmpfs" for i in at), opts


def test_check_bot_and_replay_print_no_control_characters_of_the_bot(tmp_path: Path) -> None:
    """check-bot quotes a failing check's exchange (a bot's lines, which could otherwise
    clear the screen and draw a forged report of PASS lines), and `replay` prints a replay
    file's names: neither passes a control character to the terminal."""
    bot = tmp_path / "forger.py"
    bot.write_text(
        "import json, sys\n"
        "sys.stderr.write('note \\x1b]0;PWNED\\x07\\n'); sys.stderr.flush()\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        print('\\x1b[2J\\x1b[HPASS  handshake \\x1b]0;PWNED\\x07', flush=True)\n"
        "        print(json.dumps({'type': 'hello', 'name': 'x'}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'id': m['id'], 'draw': 'deck'}), flush=True)\n")
    p = subprocess.run([sys.executable, "-m", "harness.cli", "check-bot", "--only", "handshake", "--",
                        "python", str(bot)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 1 and "\x1b" not in p.stdout + p.stderr, p.stdout
    assert "\\x1b[2J" in p.stdout, p.stdout
    src = tmp_path / "g.jsonl"
    g = subprocess.run([sys.executable, "-m", "harness.cli", "play", "--bot", f"a=python {ROOT / 'bots/python/greedy.py'}",
                        "--bot", f"b=python {ROOT / 'bots/python/greedy.py'}", "--rules", '{"phases": [1]}',
                        "--replay", str(src)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert g.returncode == 0, g.stderr
    lines = src.read_text().splitlines()
    head = json.loads(lines[0])
    head["game"] = "g\x1b]0;PWNED\x07"
    head["players"][0]["name"] = "a\x1b[2J"
    (tmp_path / "evil.jsonl").write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    r = subprocess.run([sys.executable, "-m", "harness.cli", "replay", str(tmp_path / "evil.jsonl")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "\x1b" not in r.stdout + r.stderr and "a\\x1b[2J" in r.stdout, r.stdout[:500]
