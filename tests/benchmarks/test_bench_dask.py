"""The Dask executor's cost per game next to the local executor's, on a LocalCluster of
2 single-threaded worker processes (the same shape as `parallel: 2` locally).

Run:  python -m pytest tests/benchmarks/test_bench_dask.py --benchmark-enable -q -s
In the normal test run (benchmarks disabled) each runs once on a small workload as a smoke
test. Figures go to BENCHMARKS.md, section "Dask"; nothing here asserts a speed.

- null games: the game itself replaced by an immediate result, so what is left is the
  executor's own cost per game (local: queues to forked workers; Dask: a task through
  the scheduler, the worker plugin, the result back; both with their in-flight window);
- real games: games of two bundled greedy bots, short (phase 1 only) and whole standard
  games, bots kept alive;
- a Dask run from nothing: start a LocalCluster, check the bots on every worker, play,
  close, which is what `p10-tourney run --executor dask` adds to a tournament.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip(
    "distributed", reason="the dask executor needs the cluster extra: pip install 'dask[distributed]'"
)

from harness.tournament.config import config_from  # noqa: E402
from harness.tournament.dask_executor import LOG_DIR_ENV, DaskExecutor  # noqa: E402
from harness.tournament.executor import GameRunner, LocalExecutor  # noqa: E402
from harness.tournament.schedule import schedule  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    old = os.environ.get(LOG_DIR_ENV)
    os.environ[LOG_DIR_ENV] = str(tmp_path_factory.mktemp("worker-logs"))  # not /tmp/p10-tourney
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"}) as c:
            yield c
    finally:
        if old is None:
            os.environ.pop(LOG_DIR_ENV, None)
        else:
            os.environ[LOG_DIR_ENV] = old


def _cfg(tmp: Path, games: int, **over: Any):
    data = {
        "name": "bench-dask", "seed": 3,
        "bots": [{"name": "a", "cmd": GREEDY}, {"name": "b", "cmd": GREEDY}],
        "table_size": 2, "games_per_table": games, "parallel": 2,
        "rules": {"phases": [1]}, "replays": "none", "output": str(tmp / "out"),
    }
    data.update(over)
    return config_from(data, base=ROOT)


def _null_result(spec: Any) -> dict[str, Any]:
    return {"record": {"id": spec.index}, "replay": None, "starts": {}, "startup_failures": []}


def _null_plugin(name: str) -> Any:
    """A worker plugin that answers each game at once (defined here so that it travels to
    the workers by value)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class NullGames(WorkerPlugin):
        def __init__(self) -> None:
            self.name = name

        def play(self, spec: Any, excluded: Any) -> dict[str, Any]:
            return {"record": {"id": spec.index}, "replay": None, "starts": {}, "startup_failures": [],
                    "worker": "null"}

    return NullGames()


def _report(benchmark: Any, label: str, games: int, seconds: list[float]) -> None:
    best = min(seconds)
    benchmark.extra_info.update({"games": games, "ms_per_game_best": round(best / games * 1000, 3)})
    print(f"\n{label}: {games} games, best {best:.3f} s = {best / games * 1000:.2f} ms/game")


def test_local_null_games(benchmark, tmp_path: Path, monkeypatch) -> None:
    """The local executor's own cost per game (forking its 2 workers included)."""
    n = 40 if benchmark.disabled else 1000
    cfg = _cfg(tmp_path, n)
    specs = schedule(cfg)
    # The workers are forked, so they inherit the replacement.
    monkeypatch.setattr(GameRunner, "run", lambda self, spec, excluded=(): _null_result(spec))
    times: list[float] = []

    def run() -> None:
        t = time.perf_counter()
        assert sum(1 for _ in LocalExecutor(cfg, None).run(specs)) == n
        times.append(time.perf_counter() - t)

    benchmark.pedantic(run, rounds=5, iterations=1)
    _report(benchmark, "local executor, null games", n, times)


def test_dask_null_games(benchmark, tmp_path: Path, cluster) -> None:
    """The Dask executor's own cost per game, cluster up and workers checked."""
    n = 40 if benchmark.disabled else 1000
    cfg = _cfg(tmp_path, n, executor="dask", scheduler=cluster.scheduler_address)
    specs = schedule(cfg)
    times: list[float] = []
    with DaskExecutor(cfg, None) as ex:
        ex.start()
        ex.client.register_plugin(_null_plugin("null-games"), name="null-games")
        real, ex.plugin = ex.plugin, "null-games"

        def run() -> None:
            t = time.perf_counter()
            assert sum(1 for _ in ex.run(specs)) == n
            times.append(time.perf_counter() - t)

        try:
            benchmark.pedantic(run, rounds=5, iterations=1)
        finally:
            ex.client.unregister_worker_plugin("null-games")
            ex.plugin = real
    _report(benchmark, "dask executor, null games", n, times)


# Short games (phase 1 only) and whole standard games (phases 1-10) of two greedy bots.
GAMES = {"phase1": ({"phases": [1]}, 200), "standard": ({}, 40)}


@pytest.mark.parametrize("kind", list(GAMES))
def test_local_real_games(benchmark, tmp_path: Path, kind: str) -> None:
    """Greedy games on the local executor (workers and bots started each round)."""
    rules, n = GAMES[kind]
    n = 4 if benchmark.disabled else n
    cfg = _cfg(tmp_path, n, rules=rules)
    specs = schedule(cfg)
    times: list[float] = []

    def run() -> None:
        t = time.perf_counter()
        assert sum(1 for _ in LocalExecutor(cfg, None).run(specs)) == n
        times.append(time.perf_counter() - t)

    benchmark.pedantic(run, rounds=3, iterations=1)
    _report(benchmark, f"local executor, greedy games ({kind})", n, times)


@pytest.mark.parametrize("kind", list(GAMES))
def test_dask_real_games(benchmark, tmp_path: Path, cluster, kind: str) -> None:
    """The same games on the Dask executor (cluster up; bots started in the first round
    and kept, as they would be across the rounds of a tournament)."""
    rules, n = GAMES[kind]
    n = 4 if benchmark.disabled else n
    cfg = _cfg(tmp_path, n, executor="dask", scheduler=cluster.scheduler_address, rules=rules)
    specs = schedule(cfg)
    times: list[float] = []
    with DaskExecutor(cfg, None) as ex:
        list(ex.run(specs[:2]))  # start the bots

        def run() -> None:
            t = time.perf_counter()
            assert sum(1 for _ in ex.run(specs)) == n
            times.append(time.perf_counter() - t)

        benchmark.pedantic(run, rounds=3, iterations=1)
    _report(benchmark, f"dask executor, greedy games ({kind})", n, times)


def test_dask_run_from_nothing(benchmark, tmp_path: Path) -> None:
    """Start a LocalCluster of 2 workers, check both bots on each, play, close."""
    if benchmark.disabled:
        pytest.skip("starts its own LocalCluster: measured with --benchmark-enable only")
    n = 10
    cfg = _cfg(tmp_path, n, executor="dask")
    specs = schedule(cfg)
    times: list[float] = []

    def run() -> None:
        t = time.perf_counter()
        assert sum(1 for _ in DaskExecutor(cfg, None).run(specs)) == n
        times.append(time.perf_counter() - t)

    benchmark.pedantic(run, rounds=3, iterations=1)
    _report(benchmark, "dask executor from nothing (10 games)", n, times)
