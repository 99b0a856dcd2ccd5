"""The tournament file: its JSON Schema (docs/config.schema.json) says what the parser
accepts, and parsing is pure (no file looked at, no sandbox worked out) until the config
is resolved on the machine that runs it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness.tournament import config as config_mod
from harness.tournament.config import (BOT_KEYS, LEAGUE_KEYS, LIMIT_KEYS, SETTLED_KEYS, SPRT_KEYS, TOP_KEYS,
                                       ConfigError, parse_config, resolve_config)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "config.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FILES = sorted((ROOT / "tournaments").glob("*.yaml")) + sorted((ROOT / "tests" / "golden" / "configs").glob("*.yaml"))


def _props(*path: str) -> set[str]:
    node: Any = SCHEMA
    for p in path:
        node = node[p]
    return set(node["properties"])


def test_the_schema_names_exactly_the_keys_the_parser_knows() -> None:
    assert _props() == TOP_KEYS
    assert _props("$defs", "bot") == BOT_KEYS
    assert _props("$defs", "limits") == set(LIMIT_KEYS)
    assert _props("properties", "time") == {"move_ms", "game_ms", "startup_ms"}
    assert _props("properties", "faults") == {"retries", "max_strikes", "disqualify"}
    dq = SCHEMA["properties"]["faults"]["properties"]["disqualify"]["oneOf"][2]
    assert set(dq["properties"]) == {"startup_failures", "forfeit_share", "min_games", "check_every"}
    assert _props("properties", "league") == LEAGUE_KEYS
    assert _props("properties", "stop") == SETTLED_KEYS | SPRT_KEYS
    assert _props("properties", "rules") == {"variant", "phases", "first_to", "turn_limit", "hand_limit",
                                             "first_dealer"}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_shipped_tournament_file_is_valid_by_the_schema_and_by_the_parser(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    VALIDATOR.validate(data)
    cfg = parse_config(data, str(path), path.parent)
    VALIDATOR.validate(json.loads(json.dumps(cfg.resolved())))  # config.resolved.yaml reads back valid too


BASE = {"name": "t", "seed": 1, "bots": [{"name": "a", "cmd": "x"}, {"name": "b", "cmd": "y"}]}
WRONG = [
    ({"colour": 1}, "colour"),
    ({"name": "has space"}, "name"),
    ({"seed": -1}, "seed"),
    ({"seed": "lucky"}, "seed"),
    ({"bots": [{"name": "a", "cmd": "x"}]}, "bots"),
    ({"bots": [{"name": "a", "cmd": ""}, {"name": "b", "cmd": "y"}]}, "bots[0].cmd"),
    ({"bots": [{"name": "a", "cmd": "x", "cwd": 3}, {"name": "b", "cmd": "y"}]}, "bots[0].cwd"),
    ({"bots": [{"name": "a", "cmd": "x", "sandbox": "docker"}, {"name": "b", "cmd": "y"}]}, "bots[0].sandbox"),
    ({"bots": [{"name": "a", "cmd": "x", "limits": {"memory_mb": 0}}, {"name": "b", "cmd": "y"}]},
     "bots[0].limits.memory_mb"),
    ({"bots": [{"name": "a", "cmd": "x", "limits": {"gpu": 1}}, {"name": "b", "cmd": "y"}]}, "bots[0].limits.gpu"),
    ({"table_size": 7}, "table_size"),
    ({"format": "swiss"}, "format"),
    ({"duplicate": "yes"}, "duplicate"),
    ({"parallel": 0}, "parallel"),
    ({"time": {"move_ms": 0}}, "time.move_ms"),
    ({"time": {"hours": 1}}, "time.hours"),
    ({"faults": {"retries": 11}}, "faults.retries"),
    ({"faults": {"disqualify": {"forfeit_share": 1.5}}}, "faults.disqualify.forfeit_share"),
    ({"replays": "some"}, "replays"),
    ({"executor": "ray"}, "executor"),
    ({"sandbox": "docker"}, "sandbox"),
    ({"stop_when": "bored"}, "stop_when"),
    ({"stop_when": "settled", "stop": {"confidence": 0.4}}, "stop.confidence"),
    ({"rules": {"variant": "wild"}}, "rules"),
    ({"rules": {"turn_limit": 1}}, "rules"),
    ({"seating": "random"}, "seating"),
    ({"affinity": 1}, "affinity"),
]


@pytest.mark.parametrize("change,key", WRONG, ids=[k for _, k in WRONG])
def test_a_wrong_value_is_refused_by_the_schema_and_by_the_parser_naming_its_key(change: dict[str, Any],
                                                                                  key: str) -> None:
    data = {**BASE, **change}
    assert not VALIDATOR.is_valid(data)
    with pytest.raises(ConfigError) as e:
        parse_config(data, "t.yaml")
    assert f"t.yaml: {key}" in str(e.value)


def test_parsing_looks_at_no_file_and_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`parse_config` is pure: with every file-system call and process start refused it
    still parses a config whose bots' folders, mounts and builds do not exist here (as
    `verify` reads a stored config on another machine); `resolve_config` then names the
    missing folder."""
    data = {**BASE, "sandbox": "bwrap", "bots": [
        {"name": "a", "cmd": "./bot", "cwd": "/nowhere/a", "mounts": ["/nowhere/lib"], "build": "make"},
        {"name": "b", "cmd": ["python3", "b.py"], "cwd": "b", "env": {"K": "v"}}]}

    def refused(*a: Any, **k: Any) -> Any:
        raise AssertionError(f"parse_config touched the file system or ran something: {a[:1]}")

    with monkeypatch.context() as m:
        for name in ("stat", "lstat", "listdir", "scandir", "open", "access", "readlink"):
            m.setattr(os, name, refused)
        m.setattr(subprocess, "Popen", refused)
        cfg = parse_config(data, "/nowhere/t.yaml", Path("/nowhere"))
    assert cfg.bots[0].cwd == "/nowhere/a" and cfg.bots[0].sandbox.build == ("make",)
    with pytest.raises(ConfigError, match=r"bots\[0\]\.cwd: '/nowhere/a' is not a directory"):
        resolve_config(cfg)


def test_a_stored_config_reads_back_to_the_same_hash_without_its_machine(tmp_path: Path) -> None:
    """What config.resolved.yaml holds (host paths shown as <host>/…, env values withheld)
    parses back as it is to the config's own hash: `verify` needs no rewriting of it."""
    bot = tmp_path / "bots"
    bot.mkdir()
    (bot / "x.py").write_text("")
    cfg = config_mod.config_from({**BASE, "bots": [
        {"name": "a", "cmd": "python3 x.py", "cwd": "bots", "env": {"TOKEN": "s3cret"}, "mounts": [str(bot)]},
        {"name": "b", "cmd": "python3 bots/x.py", "sandbox": "none"}]}, str(tmp_path / "t.yaml"), tmp_path)
    stored = yaml.safe_load(yaml.safe_dump(cfg.resolved(), sort_keys=False))
    assert "s3cret" not in json.dumps(stored) and str(tmp_path) not in json.dumps(stored)
    again = parse_config(stored, "config.resolved.yaml")
    assert again.config_sha256() == cfg.config_sha256()
