"""Tools for bot authors: `ask` (one request, one verdict), `play --stderr`, `play --deck`
with the documented deck file, `replay --html` (one self-contained page), and the
default `replays: sample` that keeps the first clean games of every entrant."""

from __future__ import annotations

import copy
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.checker.ask import RequestError, judge, load_request
from harness.checker.schemas import Schemas
from harness.cli import main
from harness.engine import Deck, Game, IllegalMove, Rules, action_from_json
from harness.players import GreedyStrategy, RandomStrategy
from harness.tournament.config import SAMPLE_PER_ENTRANT, load_config
from harness.tournament.schedule import schedule

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SPEC = ROOT / "protocol" / "SPEC.md"
GREEDY = f"{PY} {ROOT / 'bots/python/greedy.py'}"
SCHEMAS = Schemas()


def spec_requests() -> list[dict]:
    text = SPEC.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- schema: to_bot\.request -->\s*```json\n(.*?)```", text, flags=re.S)
    return [json.loads(b) for b in blocks]


def write(tmp: Path, name: str, obj: object) -> Path:
    path = tmp / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


# ----- ask -------------------------------------------------------------------------------------


def test_ask_prints_a_legal_reply_and_what_it_did(tmp_path: Path) -> None:
    req = write(tmp_path, "play.json", spec_requests()[1])
    result = CliRunner().invoke(main, ["ask", "--request", str(req), "--", PY, str(ROOT / "bots/python/greedy.py")])
    assert result.exit_code == 0, result.output
    assert "request: play (id 58, hand 9, seat 2)" in result.output
    assert re.search(r'reply: +\{.*"id": ?58', result.output)
    assert "legal (" in result.output and '"e": "lay"' in result.output


def test_ask_names_the_rule_an_illegal_reply_breaks_and_what_to_change(tmp_path: Path) -> None:
    req = write(tmp_path, "play.json", spec_requests()[1])
    result = CliRunner().invoke(main, ["ask", "--json", "--request", str(req), "--",
                                       PY, str(ROOT / "tests/checker_bots/ignores_options.py")])
    assert result.exit_code == 1
    verdict = json.loads(result.output)
    assert verdict["verdict"] == "illegal" and verdict["rule"] == "R3.5" and not verdict["legal"]
    assert "holds 0" in verdict["reason"] and "discard one card of state.cards" in verdict["fix"]


def test_ask_as_a_real_process_with_the_command_in_one_word(tmp_path: Path) -> None:
    exe = shutil.which("p10-tourney") or pytest.skip("p10-tourney is not on PATH")
    req = write(tmp_path, "draw.json", spec_requests()[0])
    proc = subprocess.run([exe, "ask", "--request", str(req), GREEDY], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"draw"' in proc.stdout and "legal" in proc.stdout


def test_ask_takes_the_request_after_the_command_too(tmp_path: Path) -> None:
    req = write(tmp_path, "draw.json", spec_requests()[0])
    result = CliRunner().invoke(main, ["ask", "--", PY, str(ROOT / "bots/python/greedy.py"), "--request", str(req)])
    assert result.exit_code == 0, result.output
    assert "legal" in result.output
    missing = CliRunner().invoke(main, ["ask", "--", PY, "bot.py"])
    assert missing.exit_code == 2 and "Missing option '--request'" in missing.output


def test_ask_refuses_a_file_that_is_not_a_request(tmp_path: Path) -> None:
    bad = write(tmp_path, "hello.json", {"type": "hello", "protocol": "p10/1"})
    result = CliRunner().invoke(main, ["ask", "--request", str(bad), "--", PY, "x.py"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "not a request" in result.output
    assert "Traceback" not in result.output


def test_ask_reads_a_request_from_a_replay_line(tmp_path: Path) -> None:
    line = {"type": "msg", "dir": "to", "seat": 2, "t": 0.1, "msg": spec_requests()[0]}
    assert load_request(write(tmp_path, "line.json", line))["id"] == 57
    with pytest.raises(RequestError):
        load_request(write(tmp_path, "req.json", {**spec_requests()[0], "decision": "think"}))


@pytest.mark.parametrize("seed", range(6))
def test_ask_judges_every_reply_as_the_engine_judges_it_in_the_real_game(seed: int) -> None:
    """`judge` rebuilds the game from the request's state alone: its verdict on good and
    broken replies is the real game's, at every decision of whole games."""
    rng = random.Random(seed)
    rules = Rules.from_dict({"phases": [1, 2, 7], "turn_limit": 60, "hand_limit": 3})
    game = Game(rules, 2 + seed % 3, seed)
    game.start()
    players = [GreedyStrategy() if s % 2 else RandomStrategy(seed) for s in range(game.n)]
    rid = 0
    while game.decision is not None:
        seat, decision = game.current, game.decision
        state = game.view(seat)
        options = game.options(seat) if decision == "play" else None
        good = players[seat].decide(state, decision, options)
        for reply in (good, _broken(rng, good, state, decision)):
            rid += 1
            request = {"type": "request", "id": rid, "decision": decision, "events": [], "state": state}
            answer = judge(request, json.dumps({**reply, "id": rid}).encode(), rules)
            if SCHEMAS.error(f"from_bot.{decision}", {**reply, "id": rid}):
                assert answer.verdict == "malformed", (reply, answer.reason)
                continue
            try:
                copy.deepcopy(game).apply(action_from_json(reply, decision))  # the real game, on a copy
                real = "legal"
            except IllegalMove as e:
                real = e.rule
            assert (answer.rule or answer.verdict) == real, (reply, answer.reason)
        game.apply(action_from_json(good, decision))


def _broken(rng: random.Random, good: dict, state: dict, decision: str) -> dict:
    """The good reply with one thing changed, as authors get it wrong."""
    if decision == "draw":
        return {"draw": "discard"}
    reply = dict(good)
    kind = rng.choice(["discard", "skip", "lay", "hit", "none"])
    if kind == "discard":
        reply["discard"] = rng.choice(["R1", "Y12", "S", "W"])
    elif kind == "skip":
        reply["discard"], reply["skip"] = "S", rng.randrange(-1, 4)
    elif kind == "lay":
        reply["lay"] = [state["cards"][:3], state["cards"][3:6]]
    elif kind == "hit" and state["table"]:
        reply["hits"] = [{"card": rng.choice(state["cards"]), "meld": rng.randrange(len(state["table"])),
                          "end": rng.choice(["low", "high"])}]
    else:
        reply.pop("discard", None)
    return reply


# ----- play --stderr, --deck --------------------------------------------------------------------


def test_play_stderr_show_prints_each_bots_lines_after_its_name(tmp_path: Path) -> None:
    exe = shutil.which("p10-tourney") or pytest.skip("p10-tourney is not on PATH")
    proc = subprocess.run([exe, "play", "--bot", f"talker={PY} {ROOT / 'tests/bots/chatty.py'}", "--bot",
                           f"quiet={GREEDY}", "--rules", '{"phases": [1]}', "--stderr", "show", "-q"],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "  [talker] thinking about request 1" in proc.stderr
    assert "[quiet]" not in proc.stderr
    assert proc.stdout.startswith("result: ")


def test_play_stderr_folder_keeps_one_log_per_bot(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    result = CliRunner().invoke(main, ["play", "--bot", f"talker={PY} {ROOT / 'tests/bots/chatty.py'}",
                                       "--bot", f"quiet={GREEDY}", "--rules", '{"phases": [1]}',
                                       "--stderr", str(logs), "-q"])
    assert result.exit_code == 0, result.output
    assert "thinking about request 1" in (logs / "talker.log").read_text()
    assert "thinking" not in (logs / "quiet.log").read_text()
    assert f"stderr kept in: {logs}/" in result.output


def test_the_deck_file_of_spec_is_the_example_file_and_plays(tmp_path: Path) -> None:
    example = ROOT / "protocol" / "deck.example.json"
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(r"## Deck files.*?```json\n(.*?)```", text, flags=re.S)
    assert block is not None and json.loads(block.group(1)) == json.loads(example.read_text())
    deck = Deck.from_dict(json.loads(example.read_text()))
    game = Game(Rules(), 2, 1, deck)
    events = game.start()
    assert [e["e"] for e in events] == ["deal", "skipped"]  # the Skip up-card (R2.4): seat 1 loses its turn
    assert game.to_move == 0 and [c.text for c in game.players[0].hand][:6] == ["R3", "B3", "G3", "R7", "B7", "G7"]
    game.apply(action_from_json({"draw": "deck"}))
    assert game.players[0].hand[-1].text == "W"
    replay = tmp_path / "r.jsonl"
    result = CliRunner().invoke(main, ["play", "--deck", str(example), "--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}",
                                       "--rules", '{"phases": [1, 2]}', "--replay", str(replay), "-q"])
    assert result.exit_code == 0, result.output
    assert '"hands":[["R3","B3","G3","R7","B7","G7"' in replay.read_text()


def test_play_help_shows_how_to_seat_a_person() -> None:
    result = CliRunner().invoke(main, ["play", "--help"])
    assert "--human [NAME]" in result.output and "--human --bot NAME=CMD" in " ".join(result.output.split())
    for doc in (ROOT / "README.md", ROOT / "protocol" / "TUTORIAL.md"):
        assert "--human --bot" in doc.read_text()


# ----- replay --html --------------------------------------------------------------------------------


def _play_replay(tmp: Path) -> Path:
    replay = tmp / "game.jsonl"
    result = CliRunner().invoke(main, ["play", "--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--seed", "4",
                                       "--rules", '{"phases": [1, 2]}', "--replay", str(replay), "-q"])
    assert result.exit_code == 0, result.output
    return replay


def test_replay_html_writes_one_self_contained_page(tmp_path: Path) -> None:
    replay = _play_replay(tmp_path)
    page = tmp_path / "out" / "game.html"
    result = CliRunner().invoke(main, ["replay", str(replay), "--html", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert "window.P10_REPLAYS=" in html and '"game"' in html and "a vs b" in html
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|https?://", html)  # nothing fetched
    assert 'id="viewer"' in html and "replay-index" in html


def test_replay_html_of_a_file_that_is_not_a_replay_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    result = CliRunner().invoke(main, ["replay", str(bad), "--html", str(tmp_path / "x.html")])
    assert result.exit_code == 1 and result.output.startswith("Error: ") and "not a replay file" in result.output


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_replay_html_page_steps_through_the_game_in_a_browser(tmp_path: Path) -> None:
    replay = _play_replay(tmp_path)
    page = tmp_path / "game.html"
    CliRunner().invoke(main, ["replay", str(replay), "--html", str(page)])
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
                               page.as_uri() + "#keys=ArrowRight,ArrowRight,ArrowRight"],
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    dom = proc.stdout
    assert re.search(r'id="viewer"[^>]*data-frame="3"', dom), dom[:2000]
    assert re.search(r'id="js-errors"[^>]*data-count="0"', dom)
    assert re.search(r'class="pcard [RBGY]', dom)


# ----- replays: sample -----------------------------------------------------------------------------


def _config(tmp: Path, **over: object) -> Path:
    cfg = {"name": "t", "seed": 3, "table_size": 2, "format": "round-robin", "games_per_table": 4,
           "bots": [{"name": n, "cmd": [PY, str(ROOT / "bots/python/greedy.py")]} for n in ("a", "b", "c")],
           "rules": {"phases": [1], "hand_limit": 3}, "time": {"move_ms": 5000}, "output": str(tmp / "out"),
           **over}
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_replays_sample_is_the_default_and_marks_the_first_games_of_every_entrant(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path))
    assert cfg.replays == "sample"
    specs = schedule(cfg)
    for name in ("a", "b", "c"):
        theirs = [s for s in specs if name in s.seats]
        assert all(s.sample for s in theirs[:SAMPLE_PER_ENTRANT])
    assert not all(s.sample for s in specs)  # the rest is not kept when clean
    assert not any(s.sample for s in schedule(load_config(_config(tmp_path, replays="failed"))))


def test_replays_sample_keeps_clean_games_of_every_entrant_on_the_site(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", str(_config(tmp_path)), "--no-progress"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines() if line.strip()]
    kept = [g for g in games if g.get("replay")]
    assert all(not g["faults"] for g in games)
    for name in ("a", "b", "c"):
        assert sum(name in g["seats"] for g in kept) >= SAMPLE_PER_ENTRANT
    assert len(kept) < len(games)
    index = (out / "site" / "replay.html").read_text()
    assert all(g["game"] in index for g in kept)


PEEKER = """import os, sys
sys.stdin.readline()
print('{"type": "hello", "name": "peek"}', flush=True)
print("secret: " + ("readable" if os.access(SECRET, os.R_OK) else "unreadable"), file=sys.stderr, flush=True)
"""


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_ask_runs_the_bot_in_its_sandbox_as_a_tournament_would(tmp_path: Path, mode: str) -> None:
    """`ask --sandbox` (default auto) contains the bot as `run` and `check-bot` do: a file
    outside the folders it is given is not there for it."""
    from harness.sandbox.modes import bwrap_available

    ok, why = bwrap_available()
    if mode == "bwrap" and not ok:
        pytest.skip(why)
    secret = tmp_path / "private" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("opponents' cards")
    bot = tmp_path / "bot" / "peek.py"
    bot.parent.mkdir()
    bot.write_text(f"SECRET = {str(secret)!r}\n" + PEEKER)  # named in the command, its folder would be shown
    req = write(tmp_path, "draw.json", spec_requests()[0])
    result = CliRunner().invoke(main, ["ask", "--json", "--sandbox", mode, "--request", str(req), "--", PY, str(bot)])
    assert result.exit_code == 1, result.output
    verdict = json.loads(result.output[result.output.index("{"):])  # after the warning when unsandboxed
    assert verdict["verdict"] == "crash"
    assert ("secret: unreadable" if mode == "bwrap" else "secret: readable") in verdict["stderr"]


GONE_AFTER_HELLO = """import os, sys
sys.stdin.readline()
os.close(0)  # nothing reads what the referee sends next: its write fails at once
print('{"type": "hello", "name": "gone"}', flush=True)
print("leaving after hello", file=sys.stderr, flush=True)
"""


def test_ask_a_bot_gone_before_its_request_is_sent_is_a_crash_not_a_traceback(tmp_path: Path) -> None:
    """A bot that stops reading after hello makes the request's write fail; `ask` says crash
    with the bot's stderr, as when it exits while the request is on its way."""
    bot = tmp_path / "gone.py"
    bot.write_text(GONE_AFTER_HELLO)
    req = write(tmp_path, "draw.json", spec_requests()[0])
    result = CliRunner().invoke(main, ["ask", "--json", "--sandbox", "none", "--request", str(req), "--", PY, str(bot)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    verdict = json.loads(result.output[result.output.index("{"):])
    assert verdict["verdict"] == "crash"
    assert "closed its stdin" in verdict["reason"]


def test_run_check_bot_ask_and_play_share_one_default_move_ms(tmp_path: Path) -> None:
    """A reply `ask` calls legal in time is in time in a tournament and in check-bot."""
    from harness.cli import DEFAULT_MOVE_MS
    from harness.referee import DEFAULT_MOVE_MS as REFEREE_DEFAULT, TimeControl
    from harness.checker.ask import ask
    from harness.checker.runner import run_checks
    import inspect

    defaults = {name: next(p.default for p in main.commands[name].params if p.name == "move_ms")
                for name in ("play", "check-bot", "ask")}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "seed": 1, "output": str(tmp_path / "out"),
                                    "bots": [{"name": "a", "cmd": GREEDY}, {"name": "b", "cmd": GREEDY}]}))
    run_default = load_config(path).time.move_ms
    library = {f.__name__: inspect.signature(f).parameters["move_ms"].default for f in (ask, run_checks)}
    assert set(defaults.values()) | {run_default, TimeControl().move_ms, REFEREE_DEFAULT, DEFAULT_MOVE_MS} \
        | set(library.values()) == {REFEREE_DEFAULT}, (defaults, run_default, library)
