"""Leagues: a field that changes between runs over one results folder, entrant identity,
`format: league` matchmaking, `run --forever` and its signals."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.cli import main
from harness.tournament.config import load_config
from harness.tournament.identity import bot_folder, fingerprint
from harness.ledger.journal import read_journal
from harness.tournament.runner import ResultsError, run_tournament
from harness.tournament.schedule import schedule
from harness.tournament.verify import verify_results

ROOT = Path(__file__).resolve().parent.parent
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
RANDOM = [sys.executable, str(ROOT / "bots/python/random_bot.py")]
FIELD = {
    "a": GREEDY, "b": RANDOM + ["5"], "c": GREEDY + [], "d": RANDOM + ["7"], "e": RANDOM + ["9"],
    "f": RANDOM + ["11"], "g": RANDOM + ["13"],
}


def bots(*names: str) -> list[dict]:
    return [{"name": n, "cmd": FIELD[n]} for n in names]


def write(tmp: Path, names: tuple[str, ...], **over) -> Path:
    cfg = {
        "name": "lg", "seed": 5, "bots": bots(*names), "table_size": 2, "format": "round-robin",
        "games_per_table": 2, "parallel": 1, "rules": {"phases": [1, 2], "hand_limit": 20},
        "time": {"move_ms": 5000, "startup_ms": 10000}, "replays": "sample", "output": str(tmp / "out"),
    }
    cfg.update(over)
    cfg = {k: v for k, v in cfg.items() if v is not None}
    path = tmp / "lg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def lines(out: Path) -> list[bytes]:
    return (out / "games.jsonl").read_bytes().splitlines()


def recs(out: Path) -> dict[int, dict]:
    return read_journal(out / "games.jsonl", repair=False)


def no_durations(out: Path) -> list[dict]:
    rows = []
    for _, r in sorted(recs(out).items()):
        r = dict(r)
        r.pop("duration_s")
        r.pop("replay_sha256", None)  # the replay holds its messages' times
        rows.append(r)
    return rows


def run(path: Path, **kw) -> object:
    return run_tournament(load_config(path), build_site=False, **kw)


def test_a_sixth_entrant_plays_exactly_the_new_pairings(tmp_path: Path) -> None:
    five = ("a", "b", "c", "d", "e")
    out = tmp_path / "out"
    first = run(write(tmp_path, five))
    assert first.finished and first.played == 20
    before = lines(out)
    second = run(write(tmp_path, five + ("f",)))
    assert second.finished and second.played == 10
    after = lines(out)
    assert after[:20] == before  # the first five entrants' lines, byte for byte
    new = [r for i, r in sorted(recs(out).items()) if i >= 20]
    assert [r["game"] for r in new] == [f"g{i:06d}" for i in range(20, 30)]
    pairs = sorted(tuple(sorted(r["seats"])) for r in new)
    assert pairs == sorted(tuple(sorted((x, "f"))) for x in five for _ in range(2))
    # The new games are the games a six-entrant round-robin plays at those tables.
    (tmp_path / "x").mkdir()
    full = load_config(write(tmp_path / "x", five + ("f",)))
    want = {(s.seats, s.seed) for s in schedule(full.with_seed(5)) if "f" in s.seats}
    assert {(tuple(r["seats"]), r["seed"]) for r in new} == want
    # Balanced as before: the newcomer sits first and second equally often against each.
    for x in five:
        seats = [r["seats"] for r in new if x in r["seats"]]
        assert sorted(s.index("f") for s in seats) == [0, 1]
    # The chain goes on through the change, and everything checks.
    v = verify_results(out)
    assert v.ok, [(c.name, c.detail) for c in v.checks if c.ok is False]
    meta = json.loads((out / "tournament.json").read_text())
    assert [f["start"] for f in meta["fields"]] == [0, 20]
    board = json.loads((out / "leaderboard.json").read_text())
    assert {r["entrant"]: r["games"] for r in board["entrants"]} == {x: 10 for x in five + ("f",)}
    # Running again plays nothing.
    assert run(write(tmp_path, five + ("f",))).played == 0


def test_a_removed_entrant_is_never_scheduled_and_keeps_its_history(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(write(tmp_path, ("a", "b", "c", "d")))
    before = lines(out)
    outcome = run(write(tmp_path, ("a", "c", "d", "e")))  # b leaves, e arrives
    assert lines(out)[: len(before)] == before
    new = [r for i, r in sorted(recs(out).items()) if i >= len(before)]
    assert outcome.played == len(new) == 6  # e against a, c, d, two games each
    assert all("b" not in r["seats"] and "e" in r["seats"] for r in new)
    board = json.loads((out / "leaderboard.json").read_text())
    rows = {r["entrant"]: r for r in board["entrants"]}
    assert rows["b"]["games"] == 6 and rows["b"]["retired"] is True
    assert board["retired"] == ["b"] and not rows["e"]["retired"]
    md = (out / "leaderboard.md").read_text()
    assert "b (retired)" in md
    csv = (out / "leaderboard.csv").read_text().splitlines()
    assert csv[0].endswith(",retired") and any(line.split(",")[1] == "b" and line.endswith(",true") for line in csv)
    # Removing yet another one schedules nothing at all.
    assert run(write(tmp_path, ("a", "c", "d"))).played == 0
    board = json.loads((out / "leaderboard.json").read_text())
    assert sorted(board["retired"]) == ["b", "e"]
    assert verify_results(out).ok
    from harness.report.site import build_site

    site = build_site(out)
    page = (site / "index.html").read_text()
    # The site lists the retired entrants in their own section, marked retired, with their
    # games (their history), each linked to its page.
    section = page.split('<section class="panel" id="retired">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r'<tr data-entrant="([^"]+)">.*?<td>([^<]*)</td><td class="num">[^<]*</td>'
                      r'<td class="num">(\d+)</td></tr>', section)
    assert sorted(rows) == [("b", "retired", "6"), ("e", "retired", "6")], rows
    assert all((site / "entrants" / f"{n}.html").exists() for n in ("b", "e"))


def _sequence(tmp: Path, parallel: int) -> Path:
    """Edits and runs: five entrants; a sixth; one retired and a seventh; --retire."""
    steps = [("a", "b", "c", "d", "e"), ("a", "b", "c", "d", "e", "f"), ("a", "c", "d", "e", "f", "g")]
    for names in steps:
        run(write(tmp, names, parallel=parallel, duplicate=True, games_per_table=2))
    run(write(tmp, steps[-1], parallel=parallel, duplicate=True, games_per_table=2), retire=["d"])
    return tmp / "out"


def test_the_same_edits_and_runs_give_the_same_results_whatever_parallel(tmp_path: Path) -> None:
    (tmp_path / "p1").mkdir()
    (tmp_path / "p2").mkdir()
    a = _sequence(tmp_path / "p1", 1)
    b = _sequence(tmp_path / "p2", 2)
    assert no_durations(a) == no_durations(b)
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "head_to_head.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ma, mb = (json.loads((x / "tournament.json").read_text()) for x in (a, b))
    for key in ("fields", "entrants", "retired", "results_sha256", "config_sha256"):
        assert ma[key] == mb[key], key
    assert ma["retired"] == ["d"]
    assert verify_results(a).ok and verify_results(b).ok


def test_a_changed_command_under_an_old_name_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = write(tmp_path, ("a", "b", "c"))
    assert CliRunner().invoke(main, ["run", str(path), "--no-site"]).exit_code == 0
    changed = yaml.safe_load(path.read_text())
    changed["bots"][1]["cmd"] = RANDOM + ["6"]  # b, another bot under the same name
    path.write_text(yaml.safe_dump(changed))
    before = (out / "games.jsonl").read_bytes()
    res = CliRunner().invoke(main, ["run", str(path), "--no-site"])
    assert res.exit_code == 1
    assert res.output.startswith("Error: ") and res.output.count("\n") == 1, res.output
    assert "'b'" in res.output and "another name" in res.output and "--retire b" in res.output
    assert (out / "games.jsonl").read_bytes() == before
    # Renamed, the new version is a new entrant and the old one is retired.
    changed["bots"][1]["name"] = "b2"
    path.write_text(yaml.safe_dump(changed))
    res = CliRunner().invoke(main, ["run", str(path), "--no-site"])
    assert res.exit_code == 0, res.output
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["retired"] == ["b"]
    # Or --retire: the old one is retired and the changed one under its name not played.
    changed["bots"][0]["cmd"] = RANDOM + ["8"]
    path.write_text(yaml.safe_dump(changed))
    assert CliRunner().invoke(main, ["run", str(path), "--no-site"]).exit_code == 1
    res = CliRunner().invoke(main, ["run", str(path), "--no-site", "--retire", "a"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "leaderboard.json").read_text())["retired"] == ["a", "b"]
    assert verify_results(out).ok


def test_a_changed_file_in_a_bots_folder_is_refused(tmp_path: Path) -> None:
    own = tmp_path / "mine"
    own.mkdir()
    shutil.copy(ROOT / "bots/python/greedy.py", own / "bot.py")
    for name in ("p10bot.py",):
        if (ROOT / "bots/python" / name).exists():
            shutil.copy(ROOT / "bots/python" / name, own / name)
    path = write(tmp_path, ("a", "b"))
    data = yaml.safe_load(path.read_text())
    data["bots"].append({"name": "mine", "cmd": [sys.executable, str(own / "bot.py")]})
    path.write_text(yaml.safe_dump(data))
    cfg = load_config(path)
    assert bot_folder(cfg.bot("mine")) == str(own)
    run_tournament(cfg, build_site=False)
    (own / "notes.txt").write_text("tuned\n")
    with pytest.raises(ResultsError, match="'mine' is not the bot that played"):
        run(path)
    (own / "notes.txt").unlink()
    (own / "__pycache__").mkdir(exist_ok=True)
    (own / "__pycache__" / "x.pyc").write_bytes(b"\0" * 10)
    assert run(path).played == 0  # caches do not count


def test_bundled_bots_have_a_stable_fingerprint(tmp_path: Path) -> None:
    path = write(tmp_path, ("a", "b"))
    data = yaml.safe_load(path.read_text())
    data["bots"].append({"name": "bundled", "cmd": "python -m harness.bots.greedy", "cwd": str(tmp_path)})
    path.write_text(yaml.safe_dump(data))
    spec = load_config(path).bot("bundled")
    assert bot_folder(spec) == str(ROOT / "harness" / "bots")
    first = fingerprint(spec)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "noise.txt").write_text("results come and go\n")
    assert fingerprint(spec) == first


def test_other_changes_are_still_refused_naming_what_changed(tmp_path: Path) -> None:
    path = write(tmp_path, ("a", "b", "c"))
    run(path)
    for over, key in (({"rules": {"phases": [1]}}, "rules"), ({"seed": 6}, "seed"), ({"duplicate": True}, "duplicate"),
                      ({"games_per_table": 4}, "games_per_table")):
        res = CliRunner().invoke(main, ["run", str(write(tmp_path, ("a", "b", "c", "d"), **over)), "--no-site"])
        assert res.exit_code == 1 and res.output.startswith("Error: ") and res.output.count("\n") == 1
        assert f"{key} changed" in res.output and "--fresh" in res.output, res.output


# ----- format: league ----------------------------------------------------------------------

def test_matchmaking_pairs_close_ratings_and_prefers_uncertain_ones() -> None:
    import random as _random

    from harness.tournament.matching import match_tables, pair_information

    ratings = {"a": (30.0, 1.0), "b": (29.5, 1.0), "c": (10.0, 1.0), "d": (9.5, 1.0)}
    tables = match_tables(list(ratings), ratings, {e: 50 for e in ratings}, 2, 2, 10, _random.Random(1))
    assert sorted(tuple(sorted(t)) for t in tables) == [("a", "b"), ("c", "d")]
    # Equally close, the more uncertain pair tells more.
    assert pair_information((25, 8), (25, 8)) > pair_information((25, 2), (25, 2))
    assert pair_information((25, 3), (26, 3)) > pair_information((25, 3), (40, 3))
    # The entrant short of games sits first, until it has them; none sits at more than
    # twice its share of the round's tables.
    names = [f"e{i}" for i in range(6)]
    flat = {e: (25.0 + i, 8.0) for i, e in enumerate(names)}
    tables = match_tables(names, flat, {"e5": 6} | {e: 20 for e in names[:5]}, 6, 2, 10, _random.Random(2))
    assert [t[0] for t in tables[:2]] == ["e5", "e5"] and tables[2][0] != "e5"
    seats = [x for t in tables for x in t]
    assert max(seats.count(e) for e in names) <= 4


def league_file(tmp: Path, names: tuple[str, ...], **over) -> Path:
    return write(tmp, names, format="league", games=16, league={"round_games": 8, "min_games": 6},
                 games_per_table=None, **over)


def _league_sequence(tmp: Path, parallel: int) -> Path:
    run(league_file(tmp, ("a", "b", "c", "d"), parallel=parallel, duplicate=True))
    run(league_file(tmp, ("a", "b", "c", "d", "e"), parallel=parallel, duplicate=True))
    return tmp / "out"


def test_a_league_plays_rounds_to_its_budget_and_a_newcomer_its_minimum(tmp_path: Path) -> None:
    outs = []
    for par in (1, 2):
        (tmp_path / f"p{par}").mkdir()
        outs.append(_league_sequence(tmp_path / f"p{par}", par))
    a, b = outs
    assert no_durations(a) == no_durations(b)
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    rows = no_durations(a)
    meta = json.loads((a / "tournament.json").read_text())
    start = meta["fields"][1]["start"]
    assert start == 16 and len(rows) % 8 == 0  # whole rounds: 16 games, then the newcomer's rounds
    played = {e: sum(e in r["seats"] for r in rows) for e in "abcde"}
    assert played["e"] >= 6 and all(n >= 6 for n in played.values())
    assert all("e" not in r["seats"] for r in rows[:start])
    # Duplicate: each table plays one deal in both seat orders.
    for k in range(0, len(rows), 2):
        assert rows[k]["seed"] == rows[k + 1]["seed"] and rows[k]["seats"] == rows[k + 1]["seats"][::-1]
    assert meta["finished"] is False and meta["seed_mode"] == "fixed"
    v = verify_results(a)
    assert v.ok, [(c.name, c.detail) for c in v.checks if c.ok is False]
    assert any(c.name == "schedule" and c.ok for c in v.checks)
    assert run(league_file(tmp_path / "p1", ("a", "b", "c", "d", "e"), duplicate=True)).played == 0


def test_verify_catches_a_league_game_that_is_not_the_matchmakings(tmp_path: Path) -> None:
    from harness.tournament.league import Matchmaker

    out = _league_sequence(tmp_path, 1)
    cfg = load_config(league_file(tmp_path, ("a", "b", "c", "d", "e"), duplicate=True)).with_seed(5)
    mm = Matchmaker(cfg)
    rnd = mm.round(0, ["a", "b", "c", "d"], {})
    assert [s.game for s in rnd] == [f"g{i:06d}" for i in range(8)]
    assert [list(s.seats) for s in rnd] == [r["seats"] for r in no_durations(out)[:8]]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_forever_stops_on_a_signal_finishing_the_games_in_flight(tmp_path: Path, sig: int) -> None:
    path = write(tmp_path, ("a", "b", "c", "d"), format="league", games=8, games_per_table=None,
                 league={"round_games": 8, "min_games": 2}, parallel=2)
    out = tmp_path / "out"
    log = open(tmp_path / "run.log", "wb")
    proc = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "run", str(path),
                             "--forever", "--no-site", "--no-progress"], stdout=log, stderr=subprocess.STDOUT,
                            cwd=tmp_path)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # past the budget of 8: it goes on
            if (out / "games.jsonl").exists() and len(lines(out)) >= 12:
                break
            assert proc.poll() is None, (tmp_path / "run.log").read_text()
            time.sleep(0.1)
        else:
            pytest.fail("the league did not play 12 games")
        # The host's second run over the folder while the league plays is refused.
        other = CliRunner().invoke(main, ["run", str(path), "--no-site"])
        assert other.exit_code == 1 and "another run is playing into this folder" in other.output, other.output
        proc.send_signal(sig)
        rc = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    text = (tmp_path / "run.log").read_text()
    assert rc == 0, text
    assert f"{signal.Signals(sig).name}: finishing the games being played" in text
    data = (out / "games.jsonl").read_bytes()
    assert data.endswith(b"\n")  # no torn line: every game handed out finished
    n = len(data.splitlines())
    assert n >= 12
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["games"] == n and json.loads((out / "tournament.json").read_text())["games"] == n
    assert json.loads((out / "progress.json").read_text())["running"] is False
    assert json.loads((out / "stats.json").read_text())["incidents"] == []
    assert verify_results(out).ok
    # A plain run afterwards completes the round that was cut short, and checks.
    after = run(path)
    assert len(lines(out)) % 8 == 0 and after.played == len(lines(out)) - n
    assert verify_results(out).ok


def test_a_stop_asked_for_between_two_rounds_hands_out_nothing_and_ends_cleanly() -> None:
    """A signal that lands after one round of a league and before the next is handed out
    (the race the test above can hit): the next round hands out no game and ends, instead
    of taking its empty hand for games that can never start."""
    import threading

    from harness.tournament.config import DisqualifyPolicy
    from harness.tournament.disqualify import DisqualificationGate
    from harness.tournament.play import play_games
    from harness.tournament.schedule import GameSpec

    specs = [GameSpec(i, f"g{i:06d}", ("a", "b"), i, i) for i in range(4)]

    class Executor:
        given: list = []

        def run(self, first, excluded, more):
            self.given.extend(first)
            return iter(())

    stop = threading.Event()
    stop.set()
    ex = Executor()
    gate = DisqualificationGate(specs, ["a", "b"], DisqualifyPolicy())
    assert list(play_games(ex, specs, gate, set(), stop, parallel=2)) == [] and ex.given == []


# ----- property: any sequence of fields --------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.tournament.config import config_from  # noqa: E402
from harness.tournament.schedule import Past  # noqa: E402

NAMES = [f"n{i}" for i in range(7)]


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(["round-robin", "gauntlet"]), size=st.integers(2, 3), dup=st.booleans(),
       fields=st.lists(st.sets(st.sampled_from(NAMES), min_size=4), min_size=1, max_size=4))
def test_any_sequence_of_fields_plays_each_game_once_and_every_game_of_the_last(fmt: str, size: int, dup: bool,
                                                                              fields: list[set[str]]) -> None:
    """Fields one after another, each played out: no game is played twice, the ids run on
    without a gap, and the games played include every game of the last field's own
    schedule (the same seats and deal)."""
    def cfg_of(names: list[str]) -> object:
        data = {"name": "p", "seed": 3, "format": fmt, "table_size": size, "games_per_table": size * 2,
                "duplicate": dup, "sandbox": "none", "bots": [{"name": n, "cmd": ["python", "-c", "pass"]} for n in names]}
        if fmt == "gauntlet":
            data["challengers"] = names[:1]
        return config_from(data)

    records: dict[int, dict] = {}
    order: list[str] = []
    for field in fields:
        order += [n for n in NAMES if n in field and n not in order]
        names = [n for n in order if n in field]
        cfg = cfg_of(names)
        base = max(records, default=-1) + 1
        new = schedule(cfg, names, Past.of(records.values(), base))
        assert [s.index for s in new] == list(range(base, base + len(new)))
        played = {(tuple(r["seats"]), r["seed"]) for r in records.values()}
        assert not played & {(s.seats, s.seed) for s in new}
        groups = {r["group"] for r in records.values()}
        fresh = {s.group for s in new if all(s.seed != r["seed"] for r in records.values())}
        assert not fresh & groups  # a new deal never shares a group number with an old one
        for s in new:
            records[s.index] = {"id": s.index, "seats": list(s.seats), "seed": s.seed, "group": s.group}
        own = {(s.seats, s.seed) for s in schedule(cfg, names)}
        assert own <= {(tuple(r["seats"]), r["seed"]) for r in records.values()}


def test_a_random_fields_newcomer_plays_first_and_its_tables_are_matched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(write(tmp_path, ("a", "b", "c", "d"), format="random", games=12, games_per_table=None))
    before = lines(out)
    outcome = run(write(tmp_path, ("a", "b", "c", "d", "e"), format="random", games=12, games_per_table=None))
    assert outcome.played == 12 and lines(out)[:12] == before
    new = [r for i, r in sorted(recs(out).items()) if i >= 12]
    # The newcomer sits at every table until it has the minimum (10) of games.
    assert all("e" in r["seats"] for r in new[:10])
    v = verify_results(out)
    assert v.ok, [(c.name, c.detail) for c in v.checks if c.ok is False]


def test_a_league_board_is_anytime_valid_and_its_secret_seed_never_revealed(tmp_path: Path) -> None:
    path = write(tmp_path, ("b", "d", "e", "f"), format="league", games=4, games_per_table=None, seed=None,
                 league={"round_games": 4, "min_games": 1}, rules={"phases": [1], "hand_limit": 4})
    run(path)
    out = tmp_path / "out"
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["seed_mode"] == "secret" and meta["seed"] is None
    # Published again and again while it plays: its marks come from the anytime-valid test.
    assert json.loads((out / "leaderboard.json").read_text())["statistics"]["test"] == "sequential"
    seed = {c.name: c for c in verify_results(out).checks}["seed"]
    assert seed.ok and "secret for good" in seed.detail and "never to be published" in seed.detail
    (out / "seed.secret").rename(tmp_path / "seed.secret")  # as published: without the host's secret
    checks = {c.name: c for c in verify_results(out).checks}
    assert checks["seed"].ok is None and "never reveals its seed" in checks["seed"].detail
    assert checks["schedule"].ok is None and "never revealed" in checks["schedule"].detail


def test_a_league_with_default_rounds_keeps_its_settings_when_an_entrant_joins(tmp_path: Path) -> None:
    """The default round size does not follow the field: a newcomer is not refused as
    'a different config'."""
    cfgs = [load_config(write(tmp_path, names, format="league", games=8, games_per_table=None))
            for names in (("a", "b", "c"), ("a", "b", "c", "d", "e", "f", "g"))]
    assert cfgs[0].league.round_games == cfgs[1].league.round_games == 40
    assert cfgs[0].settings_sha256() == cfgs[1].settings_sha256()


def test_a_league_round_interrupted_at_its_budget_is_finished_on_resume() -> None:
    """The budget counts the games before the round to play: with half of that round
    played (a run interrupted), a resume plays the rest of it, as one run would have."""
    from harness.tournament.config import config_from
    from harness.tournament.league import Matchmaker, budget_met

    cfg = config_from({"name": "lg", "seed": 3, "format": "league", "games": 8, "table_size": 2,
                        "league": {"round_games": 8, "min_games": 0}, "faults": {"disqualify": False},
                        "bots": [{"name": n, "cmd": "true"} for n in "abcd"]})
    mm = Matchmaker(cfg)
    records = {}
    for s in mm.round(0, cfg.entrants, records):
        records[s.index] = {"id": s.index, "seats": list(s.seats), "places": [1, 2], "faults": [], "forfeits": []}
    assert budget_met(cfg, records, Matchmaker(cfg), 8)  # the budget, at the boundary
    part = {i: r for i, r in records.items() if i < 4}
    assert not budget_met(cfg, part, Matchmaker(cfg), 0)
    cfg4 = config_from(dict(cfg.raw) | {"games": 4})
    # 4 games played of the first round: the budget of 4 is met only once that round is whole.
    assert not budget_met(cfg4, part, Matchmaker(cfg4), 0)
    assert budget_met(cfg4, records, Matchmaker(cfg4), 8)


def test_a_plain_run_makes_whole_a_round_that_a_stopped_league_left_part_played(tmp_path: Path) -> None:
    """A `--forever` run stopped by a signal finishes only the games it had handed out, so
    its last round may be part played; a plain run afterwards plays that round to its end
    (however many games were played before it), and then stops at the round's end."""
    from harness.tournament.league import Matchmaker, budget_met

    cfg = load_config(write(tmp_path, ("a", "b", "c", "d"), format="league", games=8, games_per_table=None,
                            league={"round_games": 8, "min_games": 2}))
    part = {i: {} for i in [*range(16), 16, 17, 18, 19]}  # two whole rounds and half of the third
    assert not budget_met(cfg, part, Matchmaker(cfg), 16)
    first = run(write(tmp_path, ("a", "b", "c", "d"), format="league", games=8, games_per_table=None,
                      league={"round_games": 8, "min_games": 2}))
    assert first.played == 8  # and an uninterrupted plain run stops at the round's end
