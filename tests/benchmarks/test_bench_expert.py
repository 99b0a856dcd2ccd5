"""The strong and expert bots: strength against the other bundled bots and the no-fault run.

Long (hours on a loaded 2-core machine), so marked `long` and left out of the default run:

    python -m pytest tests/benchmarks/test_bench_expert.py --long -s

Without --long only the smoke test runs (a duplicate deal of each table in-process, to keep
the measuring code working). What was measured, on how many games and under what load, is
in BENCHMARKS.md ("The strong and expert bots"); the strength runs print their figures
(`tests/benchmarks/strength.py` runs the same measurements from the command line, and
continues an interrupted run).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import play_deal, solitaire, summary, wilson  # noqa: E402

from harness.tournament.config import parse_config  # noqa: E402
from harness.tournament.runner import run_tournament  # noqa: E402
from harness.tournament.stats import analyse  # noqa: E402


def _wins(records: list[dict], who: str) -> float:
    total = 0.0
    for r in records:
        firsts = [s for s, p in zip(r["seats"], r["places"]) if p == 1]
        total += firsts.count(who) / len(firsts)
    return total


def test_strength_measurement_smoke() -> None:
    """One duplicate deal of a 4-player table (expert at 5 ms of CPU) and of a 2-player one,
    through the same code as the long runs."""
    recs = play_deal(["expert@5cpu", "greedy", "strong", "random"], 0, seed=1)
    assert len(recs) == 4 and all(sorted(set(r["seats"])) == sorted(recs[0]["seats"]) for r in recs)
    two = play_deal(["strong", "greedy"], 0, seed=1)
    assert [r["seats"] for r in two] == [["strong", "greedy"], ["greedy", "strong"]]
    assert "θ" in summary(recs, ["expert@5cpu", "greedy", "strong", "random"])
    lo, hi = wilson(13, 20)
    assert lo < 0.65 < hi
    assert len(solitaire(2).splitlines()) == 11  # a header and the ten phases


@pytest.mark.long
def test_expert_beats_greedy_two_player() -> None:
    """2-player duplicate games against greedy, 100 deals (200 games), the expert at its
    default budget of CPU time: at least 65 % wins, and rated above greedy, settled."""
    field = ["expert@150cpu", "greedy"]
    records = [r for d in range(100) for r in play_deal(field, d, seed=41)]
    print(summary(records, field))
    a = analyse(records, field, seed=1)
    assert _wins(records, field[0]) / len(records) >= 0.65, summary(records, field)
    assert a.settled(*field), summary(records, field)


@pytest.mark.long
def test_expert_first_at_four_player_tables() -> None:
    """4-player duplicate tables of the expert (default budget, CPU clock), strong and
    greedy (the JavaScript greedy plays behind the protocol only: see BENCHMARKS.md):
    the expert is settled first by the harness's Plackett–Luce statistics."""
    field = ["expert@150cpu", "strong", "greedy", "random"]
    records = [r for d in range(50) for r in play_deal(field, d, seed=43)]
    print(summary(records, field))
    a = analyse(records, field, seed=1)
    order = a.order()
    assert order[0] == field[0] and a.settled(order[0], order[1]), summary(records, field)


@pytest.mark.long
def test_expert_never_faults(tmp_path: Path) -> None:
    """500 refereed games (4-player tables of the expert at its default budget, strong,
    greedy and random) under the default time limits with parallel 2: no fault of any
    kind, in particular no timeout."""
    root = Path(__file__).resolve().parents[2]
    cfg = parse_config({
        "name": "expert-no-fault", "seed": 500, "base_dir": str(root),
        "bots": [{"name": "py-expert", "cmd": "python -m harness.bots.expert --seed 1"},
                 {"name": "py-strong", "cmd": "python -m harness.bots.strong"},
                 {"name": "py-greedy", "cmd": "python -m harness.bots.greedy"},
                 {"name": "py-random", "cmd": "python -m harness.bots.random 3"}],
        "table_size": 4, "format": "round-robin", "games_per_table": 500, "duplicate": True,
        "parallel": 2, "replays": "failed", "output": str(tmp_path / "out"),
    }, "<no-fault>", root)
    run_tournament(cfg, build_site=False)
    games = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines() if x.strip()]
    assert len(games) == 500
    faults = [f for g in games for f in g.get("faults", [])]
    assert faults == [] and all(not g.get("forfeits") for g in games)
