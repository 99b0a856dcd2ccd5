"""The collusion report: the pass counts each game records, the per-pair evidence, a
feeding pair of real bots flagged on the board, and honest fields not flagged (a small
version of tools/calibrate_collusion.py; the full figures are in BENCHMARKS.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.ratings.collusion import ALPHA, PassTally, collusion_report, flagged, hypergeom_sf
from harness.referee.passes import PassCounter
from harness.tournament.config import parse_config
from harness.tournament.runner import run_tournament

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import calibrate_collusion as cal  # noqa: E402

GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
FEEDER = [sys.executable, str(ROOT / "tests/bots/feeder.py")]


def test_the_pass_counts_follow_the_discards_and_who_draws_next() -> None:
    c = PassCounter(3)
    c.extend([
        {"e": "deal"},
        {"e": "draw", "seat": 0, "from": "deck"},
        {"e": "discard", "seat": 0, "card": "W", "skip": None},
        {"e": "draw", "seat": 1, "from": "discard", "card": "W"},  # 1 takes 0's Wild
        {"e": "discard", "seat": 1, "card": "S", "skip": 0},  # a Skip names 0; nobody may take it
        {"e": "draw", "seat": 2, "from": "deck"},
        {"e": "discard", "seat": 2, "card": "R5", "skip": None},
        {"e": "skipped", "seat": 0},
        {"e": "draw", "seat": 1, "from": "deck"},  # 0 was skipped: 2's discard was offered to 1
        {"e": "discard", "seat": 1, "card": "B7", "skip": None},
        {"e": "out", "seat": 1},  # the hand ends: the last discard was offered to no one
        {"e": "deal"},
        {"e": "draw", "seat": 2, "from": "deck"},
    ])
    assert c.to_record() == [[0, 1, 1, 1, 1, 0], [1, 0, 0, 0, 0, 1], [2, 1, 1, 0, 0, 0]]


def _honest_records(rng: np.random.Generator, entrants: int, games: int) -> list[dict[str, Any]]:
    """Games at random tables of 3 whose Wild discards go to whoever draws next at random
    (the null: an entrant's discards are exchangeable), some entrants discarding more
    Wilds than others."""
    names = [f"e{i}" for i in range(entrants)]
    wild_rate = rng.uniform(0, 0.2, entrants)
    out = []
    for g in range(games):
        seats = [int(x) for x in rng.choice(entrants, 3, replace=False)]
        rows = []
        for i in range(3):
            j = (i + 1) % 3
            offered = int(rng.integers(5, 15))
            wilds = int(rng.binomial(offered, wild_rate[seats[i]]))
            rows.append([i, j, offered, int(rng.binomial(offered, 0.2)), wilds, 0])
        out.append({"id": g, "seats": [names[s] for s in seats], "places": [int(x) for x in rng.permutation(3) + 1],
                    "passes": rows})
    return out


@pytest.mark.parametrize("exported", [True, False], ids=["boost-ufunc", "scipy-stats-fallback"])
def test_the_hypergeometric_tail_is_scipy_stats_own_inside_and_outside_the_support(
        exported: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from scipy.stats import hypergeom

    import harness.ratings.collusion as collusion
    if not exported:  # a SciPy without the private ufunc: the public scipy.stats path
        monkeypatch.setattr(collusion, "_boost_hypergeom_sf", lambda: None)
    rng = np.random.default_rng(5)
    total = rng.integers(1, 400, 4000)
    good = (rng.random(4000) * (total + 1)).astype(np.int64)
    drawn = (rng.random(4000) * (total + 1)).astype(np.int64)
    k = (rng.random(4000) * (np.minimum(good, drawn) + 3)).astype(np.int64) - 1
    want = hypergeom.sf(k, total, good, drawn)
    got = hypergeom_sf(k, total, good, drawn)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_under_the_null_a_field_is_flagged_at_most_at_the_stated_rate() -> None:
    rng = np.random.default_rng(7)
    fields = 300
    hits = 0
    for _ in range(fields):
        recs = _honest_records(rng, 6, 150)
        t = PassTally(sorted({e for r in recs for e in r["seats"]}))
        for r in recs:
            t.add(r)
        hits += bool(flagged(collusion_report(t).listed))
    # by construction at most ALPHA (1 %); 300 fields: 9 or more would refute it at p < 0.01
    assert hits <= 8, hits


def test_every_pair_that_met_has_its_evidence_both_ways() -> None:
    recs = _honest_records(np.random.default_rng(3), 4, 60)
    t = PassTally(["e0", "e1", "e2", "e3"])
    for r in recs:
        t.add(r)
    rep = collusion_report(t).listed
    assert len(rep) == 6
    for r in rep:
        a, b = r["pair"]
        assert set(r["feeds"]) == {f"{a}>{b}", f"{b}>{a}"} and set(r["results"]) == {a, b}
        f = r["feeds"][f"{a}>{b}"]
        assert 0 <= f["taken"] <= f["offered"] and f["wilds"] <= f["offered"]
        res = r["results"][b]
        assert res["games_with"] == res["games_after"] + (res["games_with"] - res["games_after"])
        assert 0 <= res["with"] <= 1


def test_honest_in_process_fields_are_not_flagged() -> None:
    makers = cal.honest_makers(3)
    makers = {e: m for e, m in makers.items() if not e.startswith("expert")}  # the cheap ones
    for size in (3, 4):
        cfg = cal.field_config(list(makers), size, 120, 40 + size, cal.SHORT)
        assert not flagged(cal.report_of(cal.play(cfg, makers)))


def test_a_feeding_pair_of_real_bots_is_flagged_on_the_board(tmp_path: Path) -> None:
    bots = [{"name": "feeder", "cmd": FEEDER + ["partner"]}, {"name": "partner", "cmd": GREEDY},
            {"name": "greedy", "cmd": GREEDY}]
    cfg = parse_config({"name": "feed", "seed": 3, "bots": bots, "table_size": 3, "games_per_table": 6,
                        "duplicate": True, "replays": "none", "output": str(tmp_path / "out"),
                        "time": {"move_ms": 5000, "startup_ms": 10000}}, base=ROOT)
    run_tournament(cfg, build_site=True)
    out = tmp_path / "out"
    board = json.loads((out / "leaderboard.json").read_text())
    rep = board["collusion"]
    assert [r["pair"] for r in rep if r["flagged"]] == [["feeder", "partner"]]
    top = rep[0]
    assert top["p"] < ALPHA
    feeds = top["feeds"]["feeder>partner"]
    assert feeds["wilds"] > 5 and feeds["wilds"] > 3 * feeds["wilds_expected"] / 2
    assert top["feeds"]["partner>feeder"]["wilds"] == 0
    assert top["results"]["partner"]["games_after"] == 3  # one seat order of the two (balanced seating)
    md = (out / "leaderboard.md").read_text()
    assert "**Flagged: feeder and partner.**" in md and "| feeder > partner |" in md
    assert "## Collusion" in (out / "stats.md").read_text()
    site = (out / "site" / "index.html").read_text()
    assert "Flagged: feeder and partner" in site and "Collusion flagged: feeder and partner" in site
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert all(isinstance(g["passes"], list) and all(len(row) == 6 for row in g["passes"]) for g in games)


@pytest.mark.parametrize("field", ["three"])
def test_the_feeder_in_process_is_flagged_within_a_few_games(field: str) -> None:
    run = cal.feeder_run((field, 12, 900))
    assert run["flagged_at"] is not None and run["flagged_at"] <= 12


def test_verify_plays_a_kept_replay_again_and_checks_its_pass_counts(tmp_path: Path) -> None:
    from harness.report.site import read_replay
    from harness.tournament.verify_replays import _replay_mismatch

    bots = [{"name": "feeder", "cmd": FEEDER + ["partner"]}, {"name": "partner", "cmd": GREEDY}]
    cfg = parse_config({"name": "v", "seed": 4, "bots": bots, "table_size": 2, "games_per_table": 2,
                        "replays": "all", "rules": {"phases": [1, 2]}, "output": str(tmp_path / "out"),
                        "time": {"move_ms": 5000, "startup_ms": 10000}}, base=ROOT)
    run_tournament(cfg, build_site=False)
    out = tmp_path / "out"
    rec = json.loads((out / "games.jsonl").read_text().splitlines()[0])
    header, actions, result = read_replay(out / "replays" / f"{rec['game']}.jsonl")
    rules = cfg.rules.to_dict()
    assert rec["passes"] and _replay_mismatch(header, actions, result, rec, rules) is None
    forged = dict(rec, passes=[[0, 1, 9, 9, 9, 0]])
    assert "its passes is" in (_replay_mismatch(header, actions, result, forged, rules) or "")


def test_a_large_fields_report_lists_the_flagged_and_smallest_p_pairs_and_counts_the_rest() -> None:
    recs = _honest_records(np.random.default_rng(5), 12, 200)
    for r in recs[:40]:  # e0 passes e1 a Wild whenever it sits just before it
        if r["seats"][:2] == ["e0", "e1"] or r["seats"][1:] == ["e0", "e1"]:
            i = r["seats"].index("e0")
            r["passes"][i][4] = r["passes"][i][2]
    t = PassTally([f"e{i}" for i in range(12)])
    for r in recs:
        t.add(r)
    full = collusion_report(t)
    short = collusion_report(t, limit=3)
    assert short.pairs == full.pairs == len(full.listed) > 3
    assert short.listed == full.listed[:max(3, len(flagged(full.listed)))]
