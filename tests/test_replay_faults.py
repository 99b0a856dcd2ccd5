"""A game's faults at their turn: the replay file records each fault where it happened,
and `replay`, `replay --html` and the site's viewer show it there (kind, reason, strike,
the move the referee played instead), the viewer linking each fault to its frame."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.report.site.replays import frame_faults, replay_frames

ROOT = Path(__file__).resolve().parent.parent
FAULTY = f"{sys.executable} {ROOT / 'tests/bots/faulty.py'} illegal"


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game in which seat 0 always plays illegally: 5 strikes, then the referee plays for it."""
    path = tmp_path_factory.mktemp("faults") / "illegal.jsonl"
    res = CliRunner().invoke(main, ["play", "--bot", f"bad={FAULTY}", "--bot", "g=python -m harness.bots.greedy",
                                    "--seed", "3", "--replay", str(path), "--quiet"])
    assert res.exit_code == 0, res.output
    return path


def test_the_replay_file_puts_each_fault_before_the_move_it_led_to(replay_file: Path) -> None:
    lines = [json.loads(x) for x in replay_file.read_text().splitlines()]
    faults = [x for x in lines if x["type"] == "fault"]
    assert [f["strike"] for f in faults] == [1, 2, 3, 4, 5] and {f["kind"] for f in faults} == {"illegal"}
    header, frames, _ = replay_frames(replay_file)
    found = frame_faults(frames)
    assert len(found) == 5 and all(frames[f["frame"]]["seat"] == 0 for f in found)
    assert found[1]["instead"] and "bad" in found[1]["instead"]  # the second strike: the referee played for it
    assert found[0]["frame"] == found[1]["frame"]  # the retry after the first strike failed too


def test_replay_prints_each_fault_at_its_turn(replay_file: Path) -> None:
    res = CliRunner(env={"COLUMNS": "240"}).invoke(main, ["replay", str(replay_file)])
    assert res.exit_code == 0, res.output
    out = res.output.splitlines()
    at = [i for i, line in enumerate(out) if "fault: bad illegal (strike " in line]
    assert len(at) == 5
    assert re.match(r"\s+\d+  fault: bad illegal \(strike 1\): R3\.\d", out[at[0]])
    # each fault comes before the move it led to, and a move the referee played says so
    assert any("(played instead, by the referee)" in line for line in out[at[1]:at[2]])
    first_move = next(i for i, line in enumerate(out) if "bad draws" in line or "bad discards" in line)
    assert first_move < at[0]


def _dump_dom(url: str) -> str:
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--allow-file-access-from-files",
             f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", url],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_replay_html_shows_each_fault_at_its_frame_in_a_browser(replay_file: Path, tmp_path: Path) -> None:
    page = tmp_path / "game.html"
    res = CliRunner().invoke(main, ["replay", str(replay_file), "--html", str(page)])
    assert res.exit_code == 0, res.output
    _, frames, _ = replay_frames(replay_file)
    found = frame_faults(frames)
    target = found[1]["frame"]
    dom = _dump_dom(page.as_uri() + f"#game={replay_file.stem}&frame={target}")
    assert re.search(r'id="viewer"[^>]*data-frame="%d"' % target, dom)
    action = re.search(r'<div class="action" id="action-text">(.*?)</div>\s*<div class="board">', dom, re.S)
    assert action, "no action text"
    text = re.sub(r"<[^>]+>", "", action.group(1))
    assert "Fault: bad — illegal (strike 2): R3." in text and "played instead: " in text
    # the list of the game's faults links each to its frame
    links = re.findall(r'<a class="fault-link" href="([^"]*)" data-frame="(\d+)">Hand (\d+), turn (\d+)</a>', dom)
    assert [int(f) for _, f, _, _ in links] == [f["frame"] for f in found]
    assert all(html.unescape(href).endswith(f"&frame={f}") for href, f, _, _ in links)
    assert [(int(h), int(t)) for _, _, h, t in links] == [(f["hand"], f["turn"]) for f in found]
