"""`p10-tourney check-bot`: every bundled bot and both templates pass every check; each bot
of a small hostile zoo (tests/checker_bots/) fails the checks that name its mistake, with
a message that tells its author what to fix and the exchange that shows it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.checker import NAMES
from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "checker_bots"
PY = sys.executable
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: the JavaScript bots cannot run")

GOOD = [
    pytest.param([PY, str(ROOT / "bots/python/greedy.py")], id="python-greedy"),
    pytest.param([PY, str(ROOT / "bots/python/random_bot.py"), "7"], id="python-random"),
    pytest.param([PY, "-m", "harness.bots.random", "3"], id="module-random"),
    pytest.param([PY, str(ROOT / "bots/python/strong.py")], id="python-strong"),
    pytest.param(["node", str(ROOT / "bots/js/greedy.js")], id="js-greedy", marks=needs_node),
    pytest.param([PY, str(ROOT / "bots/templates/python/bot.py")], id="python-template"),
    pytest.param(["node", str(ROOT / "bots/templates/javascript/bot.js")], id="js-template", marks=needs_node),
]


def check(argv: list[str], *options: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["check-bot", "--json", *options, "--", *argv])
    try:
        report = json.loads(result.output)
    except ValueError:
        raise AssertionError(result.output) from None
    assert report["exit_code"] == result.exit_code
    return result.exit_code, report


def failures(report: dict) -> dict[str, dict]:
    """The checks that did not pass, but for those the bot never exercised (skipped)."""
    return {c["name"]: c for c in report["checks"]
            if c["status"] != "pass" and not c["message"].startswith("not exercised")}


@pytest.mark.parametrize("argv", GOOD)
def test_bundled_bots_and_templates_pass(argv: list[str]) -> None:
    code, report = check(argv, "--move-ms", "5000")  # a margin for a busy machine
    assert failures(report) == {}
    assert code == 0 and report["ok"]
    assert [c["name"] for c in report["checks"]] == list(NAMES)
    assert report["schemas"] == "protocol/schemas"  # replies were validated against the schemas


# The hostile zoo: script -> {check that must fail: words its message must contain}.
# `exact`: every other check must pass (the mistake shows only where it belongs).
# Bots that time out run with a short move_ms (SHORT) to keep the test quick.
SHORT = {"silent.py", "string_id.py", "late.py"}
HOSTILE = [
    ("silent.py", {"in-time": "within move_ms (150 ms here", "errors": "no reply to request"}, False),
    ("string_id.py", {"valid-replies": "id: '1' is not of type 'integer'",
                      "late-replies": "send the id back exactly as received, a JSON number"}, False),
    ("ignores_options.py", {"options-lay": 'laid nothing; options.lay offered R3 B3 G3 / R7 B7 G7',
                            "valid-replies": "holds 0"}, False),
    ("one_game.py", {"several-games": "ended after game 1 (exit code 0); one process plays many games"}, True),
    ("crash_on_error.py", {"errors": "An error needs no answer and must not end the bot"}, True),
    ("late.py", {"late-replies": "late reply to request 1 (it arrived while request 2 was open)",
                 "in-time": "move_ms"}, False),
    ("no_version.py", {"handshake": "'version' is a required property"}, False),
    ("ignores_bye.py", {"bye": "still running"}, True),
    ("no_end.py", {"wild-end": 'add "end": "low" or "end": "high" to the hit'}, False),
    ("names_inactive.py", {"tie-break": "R10.6: seat 2 is not playing this tie-break hand"}, False),
    ("ignores_pending.py", {"skip-pending": "R6.2: seat 1 already has a skip pending"}, False),
    ("debug_on_hand_end.py", {"valid-replies": "'debug: hand 1 over'; it came after hand_end"}, False),
]


@pytest.mark.parametrize("script,expected,exact", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_bots_fail_the_checks_they_should(script: str, expected: dict[str, str], exact: bool) -> None:
    code, report = check([PY, str(ZOO / script)], "--move-ms", "150" if script in SHORT else "1000")
    assert code == 1 and not report["ok"]
    failed = failures(report)
    for name, words in expected.items():
        assert name in failed, f"{script}: {name} passed: {report}"
        assert failed[name]["status"] == "fail"
        assert words in failed[name]["message"], failed[name]["message"]
        assert failed[name]["exchange"], f"{name} shows no exchange"
    if exact:
        assert set(failed) == set(expected), {n: c["message"] for n, c in failed.items()}
    if script == "debug_on_hand_end.py":  # the exchange shows the message the stray line came after
        assert any('"type":"hand_end"' in x["text"] for x in failed["valid-replies"]["exchange"][:-1])
    if script == "late.py":  # a late reply is not checked against the schema of the request then open
        assert "valid-replies" not in failed, failed["valid-replies"]["message"]
    if script == "no_version.py":
        assert {c["status"] for n, c in failed.items() if n != "handshake"} == {"skip"}
    else:
        assert "handshake" not in failed


def test_only_runs_the_named_checks_and_rejects_unknown_names() -> None:
    code, report = check([PY, str(ZOO / "one_game.py")], "--only", "several-games")
    assert code == 1
    assert [c["name"] for c in report["checks"]] == ["handshake", "several-games"]
    result = CliRunner().invoke(main, ["check-bot", "--only", "speed", "--", PY, "x.py"])
    assert result.exit_code == 2
    assert "no check named 'speed'; the checks are: handshake, options-lay" in result.output
    assert "bye" in result.output


def test_a_command_that_does_not_exist_fails_the_handshake() -> None:
    code, report = check(["./no-such-bot"])
    assert code == 1
    hs = failures(report)["handshake"]
    assert "command not found" in hs["message"]


def test_text_report_from_the_installed_command() -> None:
    """What an author sees: one line per check, the failing exchange, a summary, exit 1."""
    exe = shutil.which("p10-tourney") or pytest.skip("p10-tourney is not on PATH")
    proc = subprocess.run([exe, "check-bot", "--move-ms", "150", "--only", "options-lay",
                           f"{PY} {ZOO / 'ignores_options.py'}"], capture_output=True, text=True, timeout=120)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "PASS  handshake" in out and "FAIL  options-lay" in out
    assert "→ bot  {\"type\":\"request\"" in out and "← bot  {\"id\": 2, \"discard\": \"R1\"}" in out
    assert "2 checks: 1 passed, 1 failed" in out


def test_a_bot_that_ends_after_an_error_gets_one_verdict_whichever_pipe_shows_it() -> None:
    """Dying at once on an error is usually seen when check-bot sends the next request (a
    closed stdin); dying a moment later, when it reads the reply (a closed stdout). Which
    comes first is a race: the verdict is built from how the process ended, so it is the
    same."""
    messages = []
    for script in ("crash_on_error.py", "slow_crash_on_error.py"):
        _, report = check([PY, str(ZOO / script)], "--only", "errors")
        messages.append(failures(report)["errors"]["message"])
    assert messages[0] == messages[1]
    assert messages[0].startswith('after an error with "retry": true, the process ended (exit code 1). '
                                  "An error needs no answer and must not end the bot")


def test_check_bot_build_exit_codes_are_those_of_its_help(tmp_path: Path) -> None:
    """A bot whose build fails: 1, with one `Error:` line (the bot's fault, as a failed
    check); a sandbox that cannot run here: 2 (check-bot's own failure); the help says so."""
    help_text = CliRunner().invoke(main, ["check-bot", "--help"]).output
    assert "1 a check failed or the bot's build (--build) failed, 2 check-bot itself failed" in " ".join(help_text.split())
    build = tmp_path / "build.sh"
    build.write_text("#!/bin/sh\necho compiling >&2\nexit 3\n")
    build.chmod(0o755)
    res = CliRunner().invoke(main, ["check-bot", "--sandbox", "none", "--build", str(build), "--", PY,
                                    str(ROOT / "bots/python/greedy.py")])
    assert res.exit_code == 1 and res.output.splitlines()[-1].startswith("Error: ") and "exit code 3" in res.output
    env = {**os.environ, "PATH": str(tmp_path)}  # no bubblewrap on PATH
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "check-bot", "--sandbox", "bwrap", "--", PY,
                           str(ROOT / "bots/python/greedy.py")], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and proc.stderr.startswith("Error: "), proc.stderr


def test_a_check_whose_rule_the_bot_never_exercised_is_skipped_not_passed() -> None:
    """The zoo's minimal bot never hits: wild-end cannot see it say "end" (R7.3)."""
    code, report = check([PY, str(ZOO / "ignores_bye.py")], "--only", "wild-end")
    wild = {c["name"]: c for c in report["checks"]}["wild-end"]
    assert wild["status"] == "skip" and "not exercised" in wild["message"] and "R7.3" in wild["message"]
    assert code == 0 and report["ok"]  # nothing failed
