"""Shared fixtures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from harness.referee import BotProcess, BotSpec, TimeControl, handshake
from harness.sandbox.box import Sandbox

ROOT = Path(__file__).resolve().parent.parent
# Generous: the bundled bots answer in milliseconds; tests that are about time pass their own.
SLOW_OK = TimeControl(move_ms=5000, startup_ms=20000)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False,
                     help="also run the tests marked long (hours of games; left out by default)")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Benchmarks and long tests are measured in one process: with --benchmark-enable or
    --long the test workers that `-n auto` (addopts) asks for are not started, so nothing
    else runs beside them (and what they print with -s is shown)."""
    alone = config.getoption("benchmark_enable", False) or config.getoption("--long", False)
    if alone and getattr(config.option, "dist", "no") != "no":
        config.option.dist = "no"
        config.option.tx = []
        config.option.numprocesses = 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `long` run only with --long."""
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _tmp_path_open_to_builds(request: pytest.FixtureRequest) -> None:
    """pytest makes `tmp_path` readable by its owner only; a sandboxed build run by root
    runs as an unprivileged user (see `sandbox.run_build`), which must enter the folders
    a bot's files are in, as in a checkout."""
    if "tmp_path" in request.fixturenames:
        request.getfixturevalue("tmp_path").chmod(0o755)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., BotProcess]]:
    """start(name, argv, tc=..., sandbox="auto", **BotProcess kwargs) -> a started bot past
    its handshake (in the default sandbox unless told); every bot started is stopped at the
    end of the test."""
    made: list[BotProcess] = []

    def start(name: str, argv: tuple[str, ...], tc: TimeControl = SLOW_OK, sandbox: str = "auto",
              **kw: Any) -> BotProcess:
        bot = BotProcess(BotSpec(name, tuple(argv), cwd=str(ROOT), sandbox=Sandbox(mode=sandbox)),
                         log_path=tmp_path / f"{name}.log", **kw)
        made.append(bot)
        handshake(bot, name, tc)
        return bot

    yield start
    for bot in made:
        bot.stop()
        bot.close_log()


@pytest.fixture(scope="session")
def gen() -> Any:
    """tools/gen_journal.py, loaded as a module: synthetic journals and runs."""
    path = Path(__file__).resolve().parents[1] / "tools" / "gen_journal.py"
    spec = importlib.util.spec_from_file_location("gen_journal", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_journal"] = mod
    spec.loader.exec_module(mod)
    return mod
