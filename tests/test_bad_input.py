"""Bad input anywhere gets one clear `Error:` line and a non-zero exit, and nothing already
written is damaged: config files, deck files, CLI arguments, results folders of another
config, of another program, of an older version, or with a damaged games.jsonl."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.cli import main
from harness.ledger.journal import chained_line
from harness.ledger.marker import marker_genesis, read_marker

ROOT = Path(__file__).resolve().parents[1]
GREEDY = f"{sys.executable} {ROOT / 'bots/python/greedy.py'}"


def good_config(tmp_path: Path, **changes) -> dict:
    cfg = {"name": "bad-input", "seed": 1, "base_dir": str(ROOT),
           "bots": [{"name": "a", "cmd": "python bots/python/greedy.py"},
                    {"name": "b", "cmd": "python bots/python/greedy.py"}],
           "table_size": 2, "games_per_table": 2, "rules": {"phases": [1]},
           "time": {"move_ms": 2000, "startup_ms": 10000}, "output": str(tmp_path / "out")}
    cfg.update(changes)
    return cfg


def write(tmp_path: Path, cfg: dict, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg))
    return path


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(result, *words: str) -> str:
    """The output is one `Error:` line (after click's usage lines, if any) naming `words`."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    out = result.output
    assert "Traceback" not in out
    errors = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, out
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ----- the config file -------------------------------------------------------------------------


def test_missing_config(tmp_path):
    one_error(invoke("run", tmp_path / "nope.yaml"), "nope.yaml", "no such file")


def test_yaml_syntax_error(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("name: x\nbots: [\n  {name: a\n")
    one_error(invoke("run", path), "t.yaml", "not valid YAML", "line")


def test_not_utf8(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    one_error(invoke("run", path), "t.yaml", "cannot read")


def test_not_a_mapping(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("- a\n- b\n")
    one_error(invoke("run", path), "mapping")


@pytest.mark.parametrize("changes, words", [
    ({"colour": "red"}, ["colour", "unknown key"]),
    ({"seed": "one"}, ["seed", "integer"]),
    ({"table_size": 7}, ["table_size", "2..6", "7"]),
    ({"games_per_table": 3}, ["games_per_table", "multiple of table_size"]),
    ({"rules": {"phases": [1, 21]}}, ["rules", "phase 21"]),
    ({"rules": {"phases": "all"}}, ["rules"]),
    ({"parallel": 0}, ["parallel"]),
    ({"time": {"move_ms": -1}}, ["time.move_ms"]),
    ({"time": {"move_sec": 1}}, ["time.move_sec", "unknown key"]),
    ({"faults": {"max_strikes": 0}}, ["faults.max_strikes"]),
    ({"faults": {"disqualify": {"forfeit_share": 1.5}}}, ["forfeit_share"]),
    ({"faults": {"disqualify": {"check_every": 0}}}, ["check_every"]),
    ({"faults": {"disqualify": {"check_evry": 5}}}, ["check_evry", "unknown key"]),
    ({"faults": {"disqualify": "sometimes"}}, ["faults.disqualify"]),
    ({"limits": {"memory_mb": "lots"}}, ["limits.memory_mb", "integer"]),
    ({"limits": {"swap_mb": 5}}, ["limits.swap_mb", "unknown key"]),
    ({"bots": [{"name": "a", "cmd": "x"}]}, ["bots", "at least 2"]),
    ({"bots": [{"name": "a", "cmd": "x"}, {"name": "a", "cmd": "y"}]}, ["bots[1].name", "twice"]),
    ({"bots": [{"name": "a", "cmd": "x"}, {"name": "b b", "cmd": "y"}]}, ["bots[1].name"]),
    ({"bots": [{"name": "a", "cmd": "x"}, {"name": "b", "cmd": "'unclosed"}]}, ["bots[1].cmd"]),
    ({"bots": [{"name": "a", "cmd": "x", "limits": {"cpu_s": 0}}, {"name": "b", "cmd": "y"}]}, ["bots[0].limits.cpu_s"]),
    ({"bots": [{"name": "a", "cmd": "x", "cwd": "no/such/dir"}, {"name": "b", "cmd": "y"}]}, ["bots[0].cwd"]),
    ({"format": "swiss"}, ["format"]),
    ({"replays": "some"}, ["replays"]),
])
def test_bad_config_values(tmp_path, changes, words):
    one_error(invoke("run", write(tmp_path, good_config(tmp_path, **changes))), "t.yaml", *words)
    assert not (tmp_path / "out").exists()  # nothing was written


@pytest.mark.parametrize("args, words", [
    (["--parallel", "0"], ["parallel"]),
    (["--parallel", "many"], ["--parallel"]),
    (["--executor", "cloud"], ["--executor"]),
    (["--bogus"], ["--bogus"]),
])
def test_bad_run_arguments(tmp_path, args, words):
    one_error(invoke("run", write(tmp_path, good_config(tmp_path)), *args), *words)


def test_config_that_is_a_folder(tmp_path):
    one_error(invoke("run", tmp_path), "directory")


# ----- results folders ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished small tournament to misuse."""
    base = tmp_path_factory.mktemp("finished")
    cfg = write(base, good_config(base))
    res = invoke("run", cfg, "--no-site", "--no-progress")
    assert res.exit_code == 0, res.output
    return base, cfg


def copy_results(finished, tmp_path) -> tuple[Path, Path]:
    import shutil

    base, cfg_path = finished
    out = tmp_path / "out"
    shutil.copytree(base / "out", out)
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["output"] = str(out)
    return out, write(tmp_path, cfg)


def test_results_of_another_config(finished, tmp_path):
    out, cfg_path = copy_results(finished, tmp_path)
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["seed"] = 2
    before = snapshot(out)
    one_error(invoke("run", write(tmp_path, cfg, "other.yaml")), "different config", "--fresh")
    assert snapshot(out) == before


def test_foreign_folder_is_not_touched_even_with_fresh(finished, tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("years of work")
    cfg = good_config(tmp_path, output=str(foreign))
    for extra in ([], ["--fresh"]):
        one_error(invoke("run", write(tmp_path, cfg), *extra), "not a p10-tourney results folder")
        assert snapshot(foreign) == {"thesis.tex": hashlib.sha256(b"years of work").hexdigest()}


def test_output_that_is_a_file(tmp_path):
    f = tmp_path / "out"
    f.write_text("x")
    one_error(invoke("run", write(tmp_path, good_config(tmp_path))), "not a folder")
    assert f.read_text() == "x"


def test_results_of_an_older_version(finished, tmp_path):
    out, cfg_path = copy_results(finished, tmp_path)
    (out / "tournament.json").write_text(json.dumps({"format": "p10-results/0", "name": "bad-input"}))
    before = snapshot(out)
    one_error(invoke("run", cfg_path), "another version", "p10-results/0")
    assert snapshot(out) == before


def test_unreadable_marker(finished, tmp_path):
    out, cfg_path = copy_results(finished, tmp_path)
    (out / "tournament.json").write_text('{"form')
    before = snapshot(out)
    one_error(invoke("run", cfg_path), "tournament.json", "unreadable")
    assert snapshot(out) == before


def test_damaged_middle_line_of_games_jsonl(finished, tmp_path):
    out, cfg_path = copy_results(finished, tmp_path)
    lines = (out / "games.jsonl").read_bytes().split(b"\n")
    lines[0] = lines[0][:25]
    (out / "games.jsonl").write_bytes(b"\n".join(lines))
    before = snapshot(out)
    one_error(invoke("run", cfg_path), "games.jsonl", "line 1")
    assert snapshot(out) == before


def test_games_of_another_schedule(finished, tmp_path):
    """Even with its hash chain recomputed and tournament.json's head rewritten to match (by
    someone who knows how), a game whose seed is not the schedule's is refused."""
    out, cfg_path = copy_results(finished, tmp_path)
    recs = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    recs[0]["seed"] += 1
    head = marker_genesis(read_marker(out))
    lines = []
    for r in recs:
        line, head = chained_line(head, r)
        lines.append(line + b"\n")
    (out / "games.jsonl").write_bytes(b"".join(lines))
    meta = json.loads((out / "tournament.json").read_text())
    (out / "tournament.json").write_text(json.dumps(meta | {"journal_head": head}))
    one_error(invoke("run", cfg_path), "does not belong")


def test_a_torn_last_line_is_not_an_error(finished, tmp_path):
    """The one damage a kill can do is repaired: that game is played again. (A kill while
    the last line is written comes before the results of that game are published, so
    tournament.json still holds the state before it: here, the first run's start.)"""
    out, cfg_path = copy_results(finished, tmp_path)
    data = (out / "games.jsonl").read_bytes()
    (out / "games.jsonl").write_bytes(data[:-7])
    meta = read_marker(out)
    meta |= {"games": 0, "journal_head": marker_genesis(meta), "finished": False}
    (out / "tournament.json").write_text(json.dumps(meta))
    res = invoke("run", cfg_path, "--no-site", "--no-progress")
    assert res.exit_code == 0, res.output
    assert "1 games played" in res.output
    assert (out / "games.jsonl").read_bytes().count(b"\n") == data.count(b"\n")


@pytest.mark.parametrize("content, words", [
    (None, ["no leaderboard.json"]),
    ("{not json", ["not a leaderboard"]),
    ('{"entrants": 5}', ["not a leaderboard"]),
    ('{"name": "x", "games": 1, "seed": 1, "entrants": [{"entrant": "a"}]}', ["not a leaderboard", "lacks"]),
])
def test_leaderboard_and_report_of_a_foreign_folder(tmp_path, content, words):
    (tmp_path / "r").mkdir()
    if content is not None:
        (tmp_path / "r" / "leaderboard.json").write_text(content)
    one_error(invoke("leaderboard", tmp_path / "r"), *words)
    one_error(invoke("report", tmp_path / "r"), *words)
    assert not (tmp_path / "r" / "site").exists()


def test_leaderboard_of_a_missing_folder(tmp_path):
    one_error(invoke("leaderboard", tmp_path / "nope"), "no such")


def test_replay_of_a_file_that_is_not_one(tmp_path):
    for data in (b"garbage\n", bytes(range(256)), b'{"type": "header"}\n'):
        (tmp_path / "r.jsonl").write_bytes(data)
        one_error(invoke("replay", tmp_path / "r.jsonl"), "not a replay file")


# ----- play: deck files, rules, seats ---------------------------------------------------------


def deck(tmp_path: Path, hands) -> Path:
    path = tmp_path / "deck.json"
    path.write_text(json.dumps({"deals": [{"hands": hands, "discard": "Y1", "draw": ["W"]}]}))
    return path


H1 = ["G1", "G2", "G3", "G4", "G6", "G7", "G8", "G9", "G10", "G11"]


@pytest.mark.parametrize("hands, words", [
    ([["R5", "R5", "R5", "B1", "B2", "B3", "B4", "B6", "B7", "B8"], H1], ["3 copies of R5"]),
    ([["Q9"] * 10, H1], ["Q9", "not a card"]),
    ([H1], ["1 players", "not 2"]),
])
def test_play_with_a_bad_deck(tmp_path, hands, words):
    one_error(invoke("play", "--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--deck", deck(tmp_path, hands), "-q"),
              "deck.json", *words)


def test_play_with_a_deck_that_is_not_json(tmp_path):
    (tmp_path / "deck.json").write_text("{deals: [")
    one_error(invoke("play", "--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--deck", tmp_path / "deck.json"),
              "deck.json")


@pytest.mark.parametrize("args, words", [
    (["--bot", "a"], ["--bot", "NAME=COMMAND"]),
    (["--bot", f"a={GREEDY}"], ["2 to 6"]),
    (["--bot", f"a={GREEDY}", "--bot", f"a={GREEDY}"], ["own name"]),
    (["--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--rules", "{phases: [21]}"], ["--rules", "phase 21"]),
    (["--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--rules", "{phases: ["], ["--rules"]),
    (["--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--move-ms", "-5"], ["--move-ms"]),
    (["--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--seed", "x"], ["--seed"]),
    (["--bot", f"a={GREEDY}", "--bot", f"b={GREEDY}", "--deck", "/no/such/deck.json"], ["--deck"]),
])
def test_play_with_bad_arguments(args, words):
    one_error(invoke("play", *args), *words)
