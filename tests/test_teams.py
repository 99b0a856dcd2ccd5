"""Teams: entrants of one team (`team: NAME`) never share a table, in every format
(round-robin, gauntlet, random and its later matched fields, league); the config refuses
teams that make a format impossible; the board shows the teams and what they cost in
seat balance."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.tournament.config import ConfigError, parse_config
from harness.tournament.league import Matchmaker
from harness.tournament.runner import run_tournament
from harness.tournament.schedule import Past, schedule
from harness.tournament.verify import verify_results

ROOT = Path(__file__).resolve().parent.parent
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
TEAMS = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"}  # c1, c2, c3: no team


def config(fmt: str, size: int = 3, teams: dict[str, str] | None = None, names: tuple[str, ...] | None = None,
           **over: Any) -> Any:
    teams = TEAMS if teams is None else teams
    names = names or ("a1", "a2", "a3", "b1", "b2", "c1", "c2", "c3")
    data: dict[str, Any] = {
        "name": "teams", "seed": 11, "table_size": size, "format": fmt, "rules": {"phases": [1, 2]},
        "output": "/nonexistent/teams", "bots": [{"name": n, "cmd": GREEDY} | ({"team": teams[n]} if n in teams else {})
                                                 for n in names]}
    if fmt in ("random", "league"):
        data["games"] = 120
    else:
        data["games_per_table"] = size
    if fmt == "gauntlet":
        data["challengers"] = ["a1", "c1"]
    data.update(over)
    return parse_config(data, base=ROOT)


def mates_apart(tables: Any) -> None:
    for seats in tables:
        teams = [TEAMS[e] for e in seats if e in TEAMS]
        assert len(teams) == len(set(teams)), seats


@pytest.mark.parametrize("size", [2, 3, 4])
def test_round_robin_never_seats_team_mates_together(size: int) -> None:
    cfg = config("round-robin", size)
    specs = schedule(cfg)
    mates_apart(s.seats for s in specs)
    played = {e for s in specs for e in s.seats}
    assert played == set(cfg.entrants)
    assert any({"a1", "b1"} <= set(s.seats) for s in specs)  # other teams do meet


def test_a_gauntlet_never_seats_a_challenger_with_its_team_mates() -> None:
    specs = schedule(config("gauntlet", 3))
    mates_apart(s.seats for s in specs)
    assert {s.seats[0] for s in specs} <= {"a1", "c1"} or all({"a1", "c1"} & set(s.seats) for s in specs)
    assert any("a1" in s.seats for s in specs) and any("c1" in s.seats for s in specs)


@pytest.mark.parametrize("duplicate", [False, True])
@pytest.mark.parametrize("size", [3, 4])
def test_random_tables_never_seat_team_mates_together(size: int, duplicate: bool) -> None:
    cfg = config("random", size, duplicate=duplicate)
    specs = schedule(cfg)
    assert len(specs) == 120
    mates_apart(s.seats for s in specs)


def test_a_random_tournaments_later_field_matches_its_tables_apart_too() -> None:
    cfg = config("random", 3)
    first = schedule(cfg)
    records = [{"id": s.index, "seats": list(s.seats), "seed": s.seed, "group": s.group,
                "places": list(range(1, len(s.seats) + 1))} for s in first]
    later = schedule(cfg, past=Past.of(records, len(records), rate=True))  # matched from the ratings
    assert later and later[0].index == 120
    mates_apart(s.seats for s in later)


def test_league_rounds_never_seat_team_mates_together() -> None:
    cfg = config("league", 3, league={"round_games": 30, "min_games": 4}).with_seed(11)
    mm = Matchmaker(cfg)
    records: dict[int, dict[str, Any]] = {}
    start = 0
    for _ in range(4):  # rounds matched from the results of the ones before
        rnd = mm.round(start, cfg.entrants, records)
        assert rnd
        mates_apart(s.seats for s in rnd)
        for s in rnd:
            order = sorted(s.seats, key=lambda e: (e[0] != "a", e))  # team A wins, so the ratings move
            records[s.index] = {"id": s.index, "seats": list(s.seats), "places": [order.index(e) + 1 for e in s.seats],
                                "reason": "done", "faults": [], "forfeits": []}
        start += len(rnd)


@pytest.mark.parametrize("fmt,size,key,why", [
    ("round-robin", 4, "table_size", "only 3 teams"),
    ("random", 4, "table_size", "only 3 teams"),
    ("league", 4, "table_size", "only 3 teams"),
    ("gauntlet", 3, "table_size", "challenger 'a1' meets only 1 teams"),
])
def test_teams_that_make_the_format_impossible_are_a_config_error(fmt: str, size: int, key: str, why: str) -> None:
    names = ("a1", "a2", "a3", "b1", "b2", "c1")
    with pytest.raises(ConfigError) as e:
        config(fmt, size, names=names, **({"challengers": ["a1"]} if fmt == "gauntlet" else {}),
               teams={"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"} if fmt != "gauntlet" else
               {"a1": "A", "a2": "A", "a3": "A", "b1": "A", "b2": "A"})
    assert f"{key}:" in str(e.value) and why in str(e.value) and "never share a table" in str(e.value)


def test_a_team_name_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"bots\[0\]\.team: must be a short name"):
        config("round-robin", 2, teams={"a1": "no spaces allowed"})


def test_a_run_shows_the_teams_and_their_cost_on_the_board(tmp_path: Path) -> None:
    names = ("a1", "a2", "b1", "c1")
    cfg = config("round-robin", 2, names=names, teams={"a1": "A", "a2": "A"}, games_per_table=2,
                 output=str(tmp_path / "out"), replays="none", time={"move_ms": 5000, "startup_ms": 10000})
    run_tournament(cfg, build_site=True)
    out = tmp_path / "out"
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 10  # 5 tables of 2 (not a1 with a2), 2 games each
    mates_apart(g["seats"] for g in games)
    board = json.loads((out / "leaderboard.json").read_text())
    assert {r["entrant"]: r.get("team") for r in board["entrants"]} == {"a1": "A", "a2": "A", "b1": None, "c1": None}
    seats = board["teams"]["seats"]
    assert (seats["games_min"], seats["games_max"], seats["team_mates"], seats["never_met"]) == (4, 6, [["a1", "a2"]], [])
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert {r["entrant"]: r["team"] for r in rows} == {"a1": "A", "a2": "A", "b1": "", "c1": ""}
    md = (out / "leaderboard.md").read_text()
    assert "Teams (entrants of one team never share a table): A: a1, a2." in md and "| team |" in md
    assert "4 to 6 games per entrant" in (out / "leaderboard.md").read_text()
    assert "## Teams" in (out / "stats.md").read_text()
    assert "(team A)" in (out / "site" / "index.html").read_text()
    assert "team" in (out / "config.resolved.yaml").read_text()
    v = verify_results(out)  # the board's teams recomputed from the published config
    assert v.ok, [(c.name, c.detail) for c in v.checks if c.ok is False]
