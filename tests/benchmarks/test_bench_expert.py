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
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import play_deal, solitaire, summary, wilson  # noqa: E402

from harness.tournament.config import config_from  # noqa: E402
from harness.tournament.runner import run_tournament  # noqa: E402
from harness.ratings.bootstrap import analyse  # noqa: E402
from harness.ratings.paired import paired_deals  # noqa: E402
from harness.ratings.significance import neighbour_tests  # noqa: E402
from harness.ratings.stopping import check_settled  # noqa: E402


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
    """2-player duplicate games against greedy, the expert at its default budget of CPU
    time (as `python tests/benchmarks/strength.py expert@150cpu greedy --deals 300 --seed
    61` plays them): at least 65 % wins, and rated above greedy, settled."""
    field = ["expert@150cpu", "greedy"]
    records = [r for d in range(300) for r in play_deal(field, d, seed=61)]
    print(summary(records, field))
    a = analyse(records, field, seed=1)
    assert _wins(records, field[0]) / len(records) >= 0.65, summary(records, field)
    test = neighbour_tests(paired_deals(records, field), a.order())[0]
    assert a.order()[0] == field[0] and test["settled"], summary(records, field)


FOUR: dict[str, Any] = {
    "name": "expert-four", "seed": 500,
    "bots": [{"name": "py-expert", "cmd": "python -m harness.bots.expert --seed 1"},
             {"name": "py-strong", "cmd": "python -m harness.bots.strong"},
             {"name": "py-greedy", "cmd": "python -m harness.bots.greedy"},
             {"name": "js-greedy", "cmd": "node bots/js/greedy.js"}],
    "table_size": 4, "format": "round-robin", "games_per_table": 600, "duplicate": True, "seating": "balanced",
    "stop_when": "settled", "stop": {"top": 1, "round_games": 24, "min_games": 48},
    "parallel": 2, "replays": "failed",
}
"""The refereed run of BENCHMARKS.md: 4-player duplicate tables of the expert at its
default budget (150 ms of its own CPU time per decision, at most 400 ms of wall-clock
time), strong and both greedy bots, under the default time limits, every order round the
table equally often, until the first place is settled (anytime-valid) or 600 games."""


@pytest.mark.long
@pytest.mark.skipif(shutil.which("node") is None, reason="js-greedy needs Node.js")
def test_expert_first_and_never_faults_at_four_player_tables(tmp_path: Path) -> None:
    """Refereed games (`FOUR`: the expert, strong, py-greedy and js-greedy at 4-player
    duplicate tables, default time limits, parallel 2) until the first place is settled
    or 600 games: no fault of any kind, in particular no timeout, and the expert first,
    settled above the next by the harness's own anytime-valid test (the one the run
    stopped on)."""
    root = Path(__file__).resolve().parents[2]
    cfg = config_from(FOUR | {"base_dir": str(root), "output": str(tmp_path / "out")}, "<four>", root)
    run_tournament(cfg, build_site=False)
    games = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines() if x.strip()]
    assert 48 <= len(games) <= 600 and len(games) % 4 == 0
    faults = [f for g in games for f in g.get("faults", [])]
    assert faults == [] and all(not g.get("forfeits") for g in games)
    names = [b["name"] for b in FOUR["bots"]]
    print(summary(games, names))
    check = check_settled(games, names, top=1)
    assert check.order[0] == "py-expert" and check.settled, summary(games, names)


EXPERT_LADDER = {"bots": ["py-expert", "py-strong", "py-greedy", "js-greedy"], "challenger": "py-expert",
                 "games": 400, "games4": 600}
"""The expert's benchmark on `tournaments/ladder.yaml` (refereed, default limits): heads-up
400 duplicate games against each other bot, and 600 games at 4-player duplicate tables of
the four; as `python tools/ladder.py --bots py-expert,py-strong,py-greedy,js-greedy
--challenger py-expert --games 400 --games4 600 --output results/expert-ladder` plays it."""


@pytest.mark.long
@pytest.mark.skipif(shutil.which("node") is None, reason="js-greedy needs Node.js")
def test_expert_ladder(tmp_path: Path) -> None:
    """Heads-up, the expert ahead of each other bot, settled as the board marks it, with
    at least 60 % of the games; at 4-player tables no bot settled above it; no fault in
    any game."""
    from harness.ledger.journal import read_journal
    from harness.tournament.ladder import ladder_markdown, ladder_plan, run_ladder
    from harness.ratings.pairwise import heads_up

    root = Path(__file__).resolve().parents[2]
    e = EXPERT_LADDER
    plan = ladder_plan(root / "tournaments" / "ladder.yaml", e["games"], e["games4"], e["bots"], e["challenger"],
                       tmp_path / "ladder")
    print(run_ladder(plan, lambda c: run_tournament(c, build_site=False)))
    two = list(read_journal(Path(plan.heads_up.output) / "games.jsonl").values())
    assert plan.four is not None
    four = list(read_journal(Path(plan.four.output) / "games.jsonl").values())
    assert [f for g in two + four for f in g.get("faults", [])] == []
    for p in heads_up(two, e["bots"]):
        assert p.upper == "py-expert" and p.settled and p.share >= 0.6, ladder_markdown(plan)
    board = json.loads((Path(plan.four.output) / "leaderboard.json").read_text())
    rows = [r["entrant"] for r in board["entrants"]]
    above = board["entrants"][:rows.index("py-expert")]
    assert not any(r["settled_above"] for r in above), ladder_markdown(plan)
