"""What an author learns of its bot's faults without reading games.jsonl: `run` prints, per
entrant with faults, their kinds and the first reason; leaderboard.md, stats.md and the
site list the kinds per entrant."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_run_and_the_published_files_name_each_entrants_fault_kinds(tmp_path: Path) -> None:
    cfg = {
        "name": "faults", "seed": 7, "table_size": 2, "games_per_table": 2, "parallel": 1,
        "bots": [{"name": "bad", "cmd": [sys.executable, str(ROOT / "tests/bots/faulty.py"), "illegal_once"]},
                 {"name": "greedy", "cmd": [sys.executable, str(ROOT / "bots/python/greedy.py")]}],
        "rules": {"phases": [1], "hand_limit": 6}, "time": {"move_ms": 5000, "startup_ms": 20000},
        "output": str(tmp_path / "out"),
    }
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(main, ["run", str(path), "--no-progress"])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("faults: bad: "))
    n = int(line.split("illegal × ")[1].split(";")[0])
    assert n >= 1 and "; first: g00000" in line and ", illegal: R3." in line
    assert not any(x.startswith("faults: greedy") for x in res.output.splitlines())
    out = tmp_path / "out"
    for name in ("leaderboard.md", "stats.md"):
        text = (out / name).read_text()
        section = text[text.index("## Faults"):]
        assert f"| bad | {n} | illegal × {n} | g00000" in section, name
        assert "| greedy |" not in section.split("\n## ")[0], name
    site = (out / "site" / "index.html").read_text()
    assert f'{n} <span class="band">illegal × {n}</span></td>' in site
