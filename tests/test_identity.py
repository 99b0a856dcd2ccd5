"""Entrant identity: what a fingerprint reads in each layout of a bot, so that a changed
strategy file is refused by the entrant's name, and what a build makes is not read, so
that a tournament of built bots resumes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from harness.tournament import identity
from harness.tournament.config import ConfigError, load_config
from harness.tournament.identity import bot_roots, fingerprint
from harness.tournament.runner import ResultsError, run_tournament

ROOT = Path(__file__).resolve().parent.parent
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]


def tournament(tmp: Path, mine: dict, **over: object) -> Path:
    """A two-game round-robin of `mine` against the bundled greedy bot."""
    cfg = {
        "name": "id", "seed": 3, "bots": [{"name": "greedy", "cmd": GREEDY}, mine], "table_size": 2,
        "games_per_table": 2, "parallel": 1, "rules": {"phases": [1], "hand_limit": 6},
        "time": {"move_ms": 5000, "startup_ms": 20000}, "replays": "none", "output": str(tmp / "out"), **over,
    }
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def refused(path: Path, name: str) -> str:
    """Run `path` again: it must be refused, naming `name`; the message."""
    with pytest.raises(ResultsError) as e:
        run_tournament(load_config(path), build_site=False)
    assert f"{name!r} is not the bot that played its games" in str(e.value)
    return str(e.value)


def python_module_bot(tmp: Path) -> Path:
    """A bot run as `python -m carol.bin.run` from its folder, its strategy in carol/."""
    own = tmp / "carolbot"
    (own / "carol" / "bin").mkdir(parents=True)
    (own / "carol" / "__init__.py").write_text("")
    (own / "carol" / "bin" / "__init__.py").write_text("")
    (own / "carol" / "strategy.py").write_text("from harness.players import GreedyStrategy as Strategy\n")
    (own / "carol" / "bin" / "run.py").write_text(
        "from carol.strategy import Strategy\nfrom harness.sdk import StrategyBot, run\n"
        "run(StrategyBot(Strategy(), name='carol'))\n")
    return own


def test_a_python_module_bots_strategy_in_its_package_is_part_of_it(tmp_path: Path) -> None:
    own = python_module_bot(tmp_path)
    path = tournament(tmp_path, {"name": "carol", "cmd": "python -m carol.bin.run", "cwd": str(own)})
    spec = load_config(path).bot("carol")
    assert str(own) in bot_roots(spec) or str(own / "carol") in bot_roots(spec)
    assert run_tournament(load_config(path), build_site=False).played == 2
    assert run_tournament(load_config(path), build_site=False).played == 0  # nothing changed: resumes
    (own / "carol" / "strategy.py").write_text("from harness.players import RandomStrategy as Strategy\n")
    refused(path, "carol")


def test_a_javascript_bots_node_modules_are_part_of_it_unless_ignored(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    own = tmp_path / "js"
    (own / "node_modules" / "strat").mkdir(parents=True)
    (own / "node_modules" / "strat" / "index.js").write_text(
        (ROOT / "bots/js/greedy.js").read_text() + "\nmodule.exports.main = main;\n")
    (own / "bot.js").write_text('require("strat").main();\n')
    path = tournament(tmp_path, {"name": "jsbot", "cmd": ["node", str(own / "bot.js")]})
    assert run_tournament(load_config(path), build_site=False).played == 2
    strat = own / "node_modules" / "strat" / "index.js"
    strat.write_text(strat.read_text() + "// tuned\n")
    refused(path, "jsbot")
    # an author who lists node_modules in `ignore:` says it is not part of the bot
    spec = load_config(tournament(tmp_path, {"name": "jsbot", "cmd": ["node", str(own / "bot.js")],
                                             "ignore": ["node_modules/"]})).bot("jsbot")
    before = fingerprint(spec)
    strat.write_text(strat.read_text() + "// tuned again\n")
    assert fingerprint(spec) == before


def test_a_bundled_bot_is_the_harness_modules_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """py-strong is harness/bots/strong.py and what it imports (harness/players/strong.py);
    a change to a harness module it does not run (the site) is not a change of it."""
    copy = tmp_path / "harness"
    shutil.copytree(ROOT / "harness", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(identity, "_HARNESS", str(copy))
    path = tournament(tmp_path, {"name": "py-strong", "cmd": "python -m harness.bots.strong"})
    spec = load_config(path).bot("py-strong")
    assert str(copy / "players" / "strong.py") in bot_roots(spec)
    assert run_tournament(load_config(path), build_site=False).played == 2
    site = copy / "report" / "leaderboard.py"
    site.write_text(site.read_text() + "# not played\n")
    assert run_tournament(load_config(path), build_site=False).played == 0
    strong = copy / "players" / "strong.py"
    strong.write_text(strong.read_text() + "# tuned\n")
    refused(path, "py-strong")


def test_a_bundled_bots_modules_are_parsed_once_until_one_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every start of a tournament (and a resume) fingerprints its bundled bots: a harness
    module is parsed for its imports once, and again only when its content changes."""
    root = tmp_path / "harness"
    for f, text in {"__init__.py": "", "bots/__init__.py": "", "players/__init__.py": "",
                    "bots/mine.py": "from ..players import a\n", "players/a.py": "import os\n",
                    "players/b.py": ""}.items():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(text)
    monkeypatch.setattr(identity, "_HARNESS", str(root))
    parsed: list[str] = []
    real_parse = identity.ast.parse
    monkeypatch.setattr(identity.ast, "parse", lambda source, name, *a: parsed.append(name) or real_parse(source, name, *a))
    origin = str(root / "bots" / "mine.py")
    first = identity.harness_closure(origin)
    assert str(root / "players" / "a.py") in first and str(root / "players" / "b.py") not in first
    count = len(parsed)
    assert identity.harness_closure(origin) == first and len(parsed) == count
    (root / "players" / "a.py").write_text("from . import b\n")
    assert str(root / "players" / "b.py") in identity.harness_closure(origin)
    assert parsed[count:].count(str(root / "players" / "a.py")) == 1


def test_what_a_build_makes_is_not_part_of_the_bot_but_its_sources_are(tmp_path: Path) -> None:
    """The kits' outputs (build/, Cargo.lock) and a bot's own `outputs:` are left out of
    its fingerprint; the same before and after a build, its sources count."""
    own = tmp_path / "b"
    own.mkdir()
    (own / "main.go").write_text("package main\n")
    mine = {"name": "gopher", "cmd": str(own / "run"), "cwd": str(own), "build": "true"}
    spec = load_config(tournament(tmp_path, mine)).bot("gopher")
    before = fingerprint(spec)
    (own / "build").mkdir()
    (own / "build" / "bot").write_bytes(b"\x7fELF one build")
    (own / "Cargo.lock").write_text("# made by cargo\n")
    assert fingerprint(spec) == before
    (own / "main.go").write_text("package main // tuned\n")
    assert fingerprint(spec) != before
    declared = load_config(tournament(tmp_path, {**mine, "outputs": ["out/", "*.o"]})).bot("gopher")
    first = fingerprint(declared)
    (own / "out").mkdir()
    (own / "out" / "x").write_text("made")
    (own / "sub").mkdir()
    (own / "sub" / "y.o").write_text("made")
    assert fingerprint(declared) == first
    (own / "Cargo.lock").write_text("# declared outputs replace the defaults\n")
    assert fingerprint(declared) != first
    # without a build, build/ is the bot's own: a prebuilt program counts
    plain = load_config(tournament(tmp_path, {"name": "gopher", "cmd": str(own / "run")})).bot("gopher")
    now = fingerprint(plain)
    (own / "build" / "bot").write_bytes(b"\x7fELF another")
    assert fingerprint(plain) != now


@pytest.mark.parametrize("bad", [["/etc"], ["../x"], "build/", [""]])
def test_outputs_and_ignore_must_be_paths_in_the_bots_folder(tmp_path: Path, bad: object) -> None:
    for key in ("outputs", "ignore"):
        with pytest.raises(ConfigError, match=rf"bots\[1\]\.{key}"):
            load_config(tournament(tmp_path, {"name": "x", "cmd": GREEDY, key: bad}))
