"""Tournaments end to end: schedules, determinism across parallelism, resume, outputs."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.tournament.config import ConfigError, load_config, config_from
from harness.ledger.journal import read_journal
from harness.tournament.runner import ResultsError, run_tournament
from harness.tournament.schedule import schedule

ROOT = Path(__file__).resolve().parent.parent
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
RANDOM = [sys.executable, str(ROOT / "bots/python/random_bot.py")]


def write_config(tmp: Path, **over) -> Path:
    cfg = {
        "name": "t",
        "seed": 11,
        "bots": [
            {"name": "greedy", "cmd": GREEDY},
            {"name": "random", "cmd": RANDOM + ["5"]},
            {"name": "greedy2", "cmd": GREEDY},
        ],
        "table_size": 2,
        "format": "round-robin",
        "games_per_table": 4,
        "parallel": 1,
        "rules": {"phases": [1, 2, 3], "hand_limit": 20},
        "time": {"move_ms": 5000, "startup_ms": 10000},
        "replays": "all",
        "output": str(tmp / "out"),
    }
    cfg.update(over)
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def records(out: Path) -> list[dict]:
    recs = sorted(read_journal(out / "games.jsonl", repair=False).values(), key=lambda r: r["id"])
    for r in recs:
        r.pop("duration_s")
        r.pop("replay_sha256", None)  # the replay holds its messages' times
    return recs


# ----- schedules -----------------------------------------------------------------------------


def test_round_robin_every_table_and_every_seat_equally(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, table_size=3, games_per_table=6,
                                   bots=[{"name": n, "cmd": GREEDY} for n in "abcd"]))
    specs = schedule(cfg)
    assert len(specs) == 4 * 6  # C(4,3) tables x 6 games
    tables = Counter(frozenset(s.seats) for s in specs)
    assert set(tables) == {frozenset(t) for t in combinations("abcd", 3)}
    for table in tables:
        seats = Counter((name, i) for s in specs if frozenset(s.seats) == table for i, name in enumerate(s.seats))
        assert set(seats.values()) == {2}  # each entrant in each seat twice
    assert [s.index for s in specs] == list(range(len(specs)))
    assert len({s.seed for s in specs}) == len(specs)


def test_duplicate_replays_each_deal_in_every_rotation(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, table_size=3, games_per_table=6, duplicate=True))
    specs = schedule(cfg)
    groups: dict[int, list] = {}
    for s in specs:
        groups.setdefault(s.group, []).append(s)
    assert len(groups) == 2
    for members in groups.values():
        assert len({m.seed for m in members}) == 1
        # every entrant holds every seat's cards once in the group
        assert {m.seats[0] for m in members} == set(members[0].seats)


def _follows(seatings) -> Counter:
    """How often each entrant played right after each other one (R2.1), over games given
    by their seats."""
    c: Counter = Counter()
    for seats in seatings:
        c.update((seats[i - 1], seats[i]) for i in range(len(seats)))
    return c


@pytest.mark.parametrize("size, blocks", [(3, 2), (4, 6), (5, 24)])
def test_balanced_seating_balances_who_plays_after_whom(tmp_path: Path, size: int, blocks: int) -> None:
    bots = [{"name": f"b{i}", "cmd": GREEDY} for i in range(size)]
    cfg = load_config(write_config(tmp_path, bots=bots, table_size=size, games_per_table=size * blocks, duplicate=True))
    assert cfg.seating == "seeded"
    specs = schedule(cfg)
    follows = _follows(s.seats for s in specs)
    # every ordered pair equally often: (n - 1)! blocks hold every order round the table once
    assert len(follows) == size * (size - 1) and len(set(follows.values())) == 1
    # and every entrant still holds every seat once in each deal group
    groups: dict[int, list] = {}
    for s in specs:
        groups.setdefault(s.group, []).append(s)
    assert len(groups) == blocks
    for members in groups.values():
        assert len({m.seed for m in members}) == 1
        assert len({m.seats for m in members}) == size
        for seat in range(size):
            assert {m.seats[seat] for m in members} == set(members[0].seats)
    # in every two blocks no entrant plays after the same one twice (an order, then its reverse)
    orders = [groups[g][0].seats for g in sorted(groups)]
    for b in range(0, blocks, 2):
        assert max(_follows(orders[b:b + 2]).values()) == 1
    # the same schedule however often it is made, and a config that says so
    assert schedule(cfg) == specs
    assert cfg.resolved()["seating"] == "seeded"


def test_seeded_seating_draws_the_orders_from_the_seed_not_the_names(tmp_path: Path) -> None:
    """With `seating: seeded` (the default) a table's sequence of orders comes from the
    tournament seed: in a run too short for the orders to even out, whom an entrant sits
    after is not fixed by the names (by trying names, an entrant could otherwise choose
    never to sit after the bot it fears), and another seed gives other orders. The earlier
    `seating: balanced` schedule, fixed by the names, is kept for results played with it."""
    bots = [{"name": n, "cmd": GREEDY} for n in ("mine", "strong", "weak", "other")]

    def first_orders(seed: int, seating: str = "seeded") -> list[tuple[str, ...]]:
        cfg = load_config(write_config(tmp_path, bots=bots, table_size=4, games_per_table=8, duplicate=True,
                                       seed=seed, seating=seating))
        return [s.seats for s in schedule(cfg)][::4]  # each block's first rotation: its order

    seeded = {tuple(first_orders(seed)) for seed in range(12)}
    assert len(seeded) > 1  # the seed decides
    assert first_orders(5) == first_orders(5)  # and only the seed
    names = {tuple(first_orders(seed, "balanced")) for seed in range(12)}
    assert len(names) == 1  # the earlier schedule: the same in every tournament


def test_rotate_seating_keeps_the_tables_order(tmp_path: Path) -> None:
    bots = [{"name": f"b{i}", "cmd": GREEDY} for i in range(4)]
    cfg = load_config(write_config(tmp_path, bots=bots, table_size=4, games_per_table=24, duplicate=True,
                                   seating="rotate"))
    follows = _follows(s.seats for s in schedule(cfg))
    assert set(follows) == {("b0", "b1"), ("b1", "b2"), ("b2", "b3"), ("b3", "b0")}
    with pytest.raises(ConfigError, match="seating"):
        load_config(write_config(tmp_path, seating="shuffled"))
    # the schedule of versions without the key: their configs hash as before
    assert "seating" not in cfg.resolved()


def test_a_folder_played_before_seating_was_balanced_still_verifies(tmp_path: Path) -> None:
    """A 3-player round-robin played with `seating: rotate` writes the config a version
    without the key wrote: verify reads the missing key as `rotate` and finds every game
    where the schedule puts it; a balanced one verifies too."""
    from harness.tournament.verify import verify_results

    for seating in ("rotate", "balanced", "seeded"):
        out = tmp_path / seating
        cfg = load_config(write_config(tmp_path, table_size=3, games_per_table=6, duplicate=True, seating=seating,
                                       rules={"phases": [1], "hand_limit": 20}, replays="none", output=str(out)))
        run_tournament(cfg, build_site=False)
        resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
        assert resolved.get("seating") == (None if seating == "rotate" else seating)
        v = verify_results(out, replays=False)
        assert v.ok, v.checks


def test_balanced_seating_is_the_rotation_at_two_players(tmp_path: Path) -> None:
    plain = load_config(write_config(tmp_path, duplicate=True))
    rotated = load_config(write_config(tmp_path, duplicate=True, seating="rotate"))
    assert [(s.seats, s.seed) for s in schedule(plain)] == [(s.seats, s.seed) for s in schedule(rotated)]
    # nothing changes, so nothing is written: the config hashes as in versions without the key
    assert "seating" not in plain.resolved() and plain.config_sha256() == rotated.config_sha256()


def test_gauntlet_challengers_meet_every_table_of_the_field(tmp_path: Path) -> None:
    bots = [{"name": n, "cmd": GREEDY} for n in ["new", "a", "b", "c"]]
    cfg = load_config(write_config(tmp_path, format="gauntlet", challengers=["new"], bots=bots, table_size=3,
                                   games_per_table=3))
    specs = schedule(cfg)
    assert all("new" in s.seats for s in specs)
    assert {frozenset(s.seats) - {"new"} for s in specs} == {frozenset(t) for t in combinations("abc", 2)}


def test_random_format_balances_games_and_pairs(tmp_path: Path) -> None:
    bots = [{"name": f"b{i}", "cmd": GREEDY} for i in range(7)]
    cfg = load_config(write_config(tmp_path, format="random", games=70, bots=bots, table_size=3,
                                   games_per_table=3))
    specs = schedule(cfg)
    assert len(specs) == 70
    played = Counter(x for s in specs for x in s.seats)
    assert max(played.values()) - min(played.values()) <= 1
    met = Counter(frozenset(p) for s in specs for p in combinations(s.seats, 2))
    assert len(met) == 21 and max(met.values()) - min(met.values()) <= 3


def test_seeds_depend_on_the_table_not_on_the_rest_of_the_field(tmp_path: Path) -> None:
    small = schedule(load_config(write_config(tmp_path, bots=[{"name": "a", "cmd": GREEDY}, {"name": "b", "cmd": GREEDY}])))
    big = schedule(load_config(write_config(tmp_path, bots=[{"name": n, "cmd": GREEDY} for n in "abz"])))
    ab = [(s.seats, s.seed) for s in big if set(s.seats) == {"a", "b"}]
    assert ab == [(s.seats, s.seed) for s in small]


# ----- config errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "over, key",
    [
        ({"table_size": 7}, "table_size"),
        ({"games_per_table": 3}, "games_per_table"),
        ({"format": "swiss"}, "format"),
        ({"bots": [{"name": "a", "cmd": GREEDY}]}, "bots"),
        ({"bots": [{"name": "a", "cmd": GREEDY}, {"name": "a", "cmd": GREEDY}]}, "bots[1].name"),
        ({"bots": [{"name": "a", "cmd": 5}, {"name": "b", "cmd": GREEDY}]}, "bots[0].cmd"),
        ({"rules": {"phases": [1, 21]}}, "rules"),
        ({"time": {"move_ms": "fast"}}, "time.move_ms"),
        ({"colour": "red"}, "colour"),
        ({"replays": "some"}, "replays"),
        ({"format": "gauntlet"}, "challengers"),
        ({"format": "random"}, "games"),
        ({"affinity": "yes"}, "affinity"),
        ({"randomize_addresses": "no"}, "randomize_addresses"),
        ({"affinity": True, "executor": "dask"}, "affinity"),
    ],
)
def test_bad_configs_name_the_file_and_key(tmp_path: Path, over: dict, key: str) -> None:
    path = write_config(tmp_path, **over)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: {key}")



def test_config_randomize_addresses_reaches_every_bot(tmp_path: Path) -> None:
    assert not any(b.randomize_addresses for b in load_config(write_config(tmp_path)).bots)
    cfg = load_config(write_config(tmp_path, randomize_addresses=True))
    assert all(b.randomize_addresses for b in cfg.bots)


def test_work_ahead_only_with_a_cpu_to_spare() -> None:
    from harness.tournament.executor import cpu_to_spare

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert cpu_to_spare(cpus) is False and cpu_to_spare(cpus + 3) is False
    assert cpu_to_spare(cpus - 1) is (cpus > 1)
    assert cpu_to_spare(1, pinned=True) is False

def test_config_is_frozen_and_cmd_strings_are_split(tmp_path: Path) -> None:
    cfg = config_from({"name": "x", "bots": [{"name": "a", "cmd": "python 'my bot.py' --x"},
                                              {"name": "b", "cmd": ["node", "b.js"]}]}, base=tmp_path)
    assert cfg.bots[0].argv == ("python", "my bot.py", "--x")
    with pytest.raises(Exception):
        cfg.seed = 3  # type: ignore[misc]


# ----- running --------------------------------------------------------------------------------


def test_parallel_1_and_2_give_identical_results(tmp_path: Path) -> None:
    """Also with each worker and its bots pinned to one CPU (`affinity: true`), or not."""
    outs = []
    for par, pin in ((1, False), (2, False), (2, True)):
        d = tmp_path / f"p{par}-{pin}"
        d.mkdir()
        cfg = load_config(write_config(d, parallel=par, duplicate=True, affinity=pin))
        assert cfg.affinity is pin
        outcome = run_tournament(cfg, build_site=False)
        assert outcome.finished and outcome.played == 12
        # With duplicate deals, one bot process per entrant, worker and seat rotation (2
        # here), so that none is dealt a deal twice; never one per game.
        assert all(n <= 2 * par for n in outcome.bot_starts.values()), outcome.bot_starts
        outs.append(cfg.output)
    a = outs[0]
    for b in outs[1:]:
        assert records(a) == records(b)
        for name in ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "head_to_head.csv"):
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
        replays = sorted(p.name for p in (a / "replays").iterdir())
        assert replays and replays == sorted(p.name for p in (b / "replays").iterdir())


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pinning needs Linux")
def test_pin_to_cpu_pins_the_process_and_what_it_starts() -> None:
    code = (
        "import os, subprocess, sys\n"
        "from harness.tournament.executor import pin_to_cpu\n"
        "cpus = sorted(os.sched_getaffinity(0))\n"
        "cpu = pin_to_cpu(len(cpus) + 1)\n"
        "assert cpu == cpus[(len(cpus) + 1) % len(cpus)], cpu\n"
        "child = subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'],"
        " capture_output=True, text=True, check=True).stdout.strip()\n"
        "print(sorted(os.sched_getaffinity(0)), child, cpu)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    mine, child, cpu = out.stdout.split()  # the pinned process, a process it started, the CPU
    assert mine == child == f"[{cpu}]", out.stdout


def test_greedy_ranks_above_random(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, parallel=2, games_per_table=6, replays="none"))
    outcome = run_tournament(cfg, build_site=False)
    ranks = {row["entrant"]: row["rank"] for row in outcome.board["entrants"]}
    assert ranks["random"] == 3
    board = json.loads((cfg.output / "leaderboard.json").read_text())
    row = {r["entrant"]: r for r in board["entrants"]}
    assert row["greedy"]["mean_place"] < row["random"]["mean_place"]
    assert row["random"]["games"] == 12 and row["random"]["faults"] == 0
    csv = (cfg.output / "leaderboard.csv").read_text().splitlines()
    # The required columns first, in this order; the statistics columns are appended after them.
    assert csv[0].startswith("rank,entrant,mu,sigma,conservative,games,wins,win_rate,mean_place,mean_score,mean_phases,faults,")


def test_resume_after_interruption_equals_one_run(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    whole.mkdir()
    cfg = load_config(write_config(whole))
    run_tournament(cfg, build_site=False)

    part = tmp_path / "part"
    part.mkdir()
    cfg2 = load_config(write_config(part, parallel=2))
    seen = []

    def stop_after_5(p) -> None:
        seen.append(p.done)
        if p.done >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg2, on_progress=stop_after_5, build_site=False)
    kept = read_journal(cfg2.output / "games.jsonl", repair=False)
    assert 5 <= len(kept) < 12
    # a torn last line, as a kill in the middle of a write would leave
    with open(cfg2.output / "games.jsonl", "ab") as f:
        f.write(b'{"id": 11, "game": "g0000')
    outcome = run_tournament(cfg2, build_site=False)
    assert outcome.played == 12 - len(kept)
    assert records(cfg2.output) == records(cfg.output)
    assert (cfg2.output / "leaderboard.json").read_bytes() == (cfg.output / "leaderboard.json").read_bytes()
    # running again plays nothing
    assert run_tournament(cfg2, build_site=False).played == 0


# ----- which replays are kept ---------------------------------------------------------------------

FAULTY = [sys.executable, str(ROOT / "tests/bots/faulty.py")]


def _kept(out: Path) -> list[int]:
    return sorted(int(p.name[1:7]) for p in (out / "replays").glob("g*.jsonl"))


def test_a_bot_that_faults_in_every_game_keeps_a_few_replays_whatever_the_parallelism(tmp_path: Path) -> None:
    """A bot writes one bad line in each of its games from game 6 on. Under `replays:
    sample` only its first FAULT_REPLAYS such games keep their replays (by game index),
    besides the games the schedule samples: the same games with -j1, -j2, and over an
    interrupted run resumed; verify agrees; `replays: failed` keeps them all."""
    from harness.ledger.keep import FAULT_REPLAYS
    from harness.tournament.verify import verify_results

    bots = [{"name": "greedy", "cmd": GREEDY}, {"name": "greedy2", "cmd": GREEDY},
            {"name": "bad", "cmd": FAULTY + ["bad_line_from", "6"]}]
    over = dict(bots=bots, games_per_table=6, replays="sample", rules={"phases": [1], "hand_limit": 10})
    runs = {}
    for how, par in (("j1", 1), ("j2", 2), ("resumed", 2), ("failed", 2)):
        d = tmp_path / how
        d.mkdir()
        cfg = load_config(write_config(d, parallel=par, **(over | ({"replays": "failed"} if how == "failed" else {}))))
        if how == "resumed":
            def stop_after_7(p) -> None:
                if p.done >= 7:
                    raise KeyboardInterrupt

            with pytest.raises(KeyboardInterrupt):
                run_tournament(cfg, on_progress=stop_after_7, build_site=False)
        assert run_tournament(cfg, build_site=False).finished
        assert verify_results(cfg.output).ok, [c for c in verify_results(cfg.output).checks if c.ok is False]
        runs[how] = cfg
    recs = records(runs["j1"].output)
    faulted = [r["id"] for r in recs if any(f["entrant"] == "bad" for f in r["faults"])]
    assert faulted == [r["id"] for r in recs if "bad" in r["seats"] and r["id"] >= 6] and len(faulted) > 2 * FAULT_REPLAYS
    sampled = {s.index for s in schedule(runs["j1"]) if s.sample}
    want = sorted(sampled | set(faulted[:FAULT_REPLAYS]))
    assert _kept(runs["j1"].output) == want
    assert not set(faulted[FAULT_REPLAYS:]) & set(want)  # (the rule is what keeps them out)
    for how in ("j2", "resumed"):
        assert records(runs[how].output) == recs
        assert _kept(runs[how].output) == want, how
    assert set(faulted) <= set(_kept(runs["failed"].output))
    assert f"first {FAULT_REPLAYS} games with a fault of its own" in (ROOT / "docs" / "config.md").read_text()


def test_which_faulted_games_keep_their_replay_does_not_depend_on_the_order_games_finish_in() -> None:
    """The run's `Deferred` (games finishing in any order, a few at a time) keeps the
    replays that verify's rule keeps from the whole journal."""
    import random

    from harness.ledger.keep import Deferred, FirstFaults
    from harness.tournament.schedule import GameSpec, game_id
    from harness.tournament.verify_replays import not_kept

    rng = random.Random(5)
    names = ["a", "b", "c", "d"]
    specs, recs = [], {}
    for i in range(60):
        seats = rng.sample(names, 2)
        faults = [{"seat": k, "entrant": e, "kind": "malformed"} for k, e in enumerate(seats) if rng.random() < 0.3]
        specs.append(GameSpec(i, game_id(i), tuple(seats), i, i, i < 3))
        recs[i] = {"id": i, "seats": seats, "faults": faults}
    whole = FirstFaults()
    for r in recs.values():
        whole.add(r)
    want = [i for i in recs if not_kept("sample", recs[i], whole, {s.index for s in specs if s.sample}) is None]
    for trial in range(20):
        deferred = Deferred("sample", FirstFaults())
        todo = deferred.track(iter(specs))
        playing: list[GameSpec] = []
        kept, out = [], []
        while True:
            while len(playing) < 1 + trial % 5 and (s := next(todo, None)) is not None:
                playing.append(s)
            if not playing:
                break
            s = playing.pop(rng.randrange(len(playing)))
            res = {"record": dict(recs[s.index]), "replay": [b"x"]}
            for r in deferred.feed(res, s.sample):
                out.append(r["record"]["id"])
                if r["replay"] is not None:
                    kept.append(r["record"]["id"])
        assert sorted(out) == list(range(60)) and sorted(kept) == want, trial


def test_other_config_on_same_output_is_refused_unless_fresh(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, games_per_table=2))
    run_tournament(cfg, build_site=False)
    other = load_config(write_config(tmp_path, games_per_table=2, seed=99))
    with pytest.raises(ResultsError, match="different config"):
        run_tournament(other, build_site=False)
    assert len(read_journal(cfg.output / "games.jsonl")) == 6  # nothing damaged
    assert run_tournament(other, fresh=True, build_site=False).played == 6


def test_cli_run_and_leaderboard(tmp_path: Path) -> None:
    path = write_config(tmp_path, games_per_table=2, replays="failed")
    runner = CliRunner()
    res = runner.invoke(main, ["run", str(path), "--no-site", "-j", "2"])
    assert res.exit_code == 0, res.output
    assert "6 games played" in res.output
    out = tmp_path / "out"
    for name in ("games.jsonl", "leaderboard.md", "leaderboard.json", "leaderboard.csv", "head_to_head.csv",
                 "config.resolved.yaml"):
        assert (out / name).exists(), name
    assert any((out / "logs").iterdir())
    res = runner.invoke(main, ["leaderboard", str(out)])
    assert res.exit_code == 0 and "greedy" in res.output and "random" in res.output
    res = runner.invoke(main, ["leaderboard", str(out), "--format", "markdown"])
    assert res.output.startswith("# Leaderboard: t") and "## Head to head" in res.output
    res = runner.invoke(main, ["leaderboard", str(tmp_path / "nope")])
    assert res.exit_code != 0 and res.output.startswith("Error: ")


def test_cli_bad_config_is_one_error_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, table_size=9)
    res = CliRunner().invoke(main, ["run", str(path)])
    assert res.exit_code == 1
    assert res.output.startswith("Error: ") and res.output.count("\n") == 1
    assert "table_size" in res.output


def test_quickstart_config_is_valid() -> None:
    cfg = load_config(ROOT / "tournaments/quickstart.yaml")
    assert cfg.parallel == 2 and len(schedule(cfg)) > 0
    for path in (ROOT / "tournaments").glob("*.yaml"):
        load_config(path)


def test_the_tally_rates_games_in_index_order_as_they_arrive() -> None:
    """The runner keeps running aggregates (`GameTally`), not the records: TrueSkill rated
    as each game finishes, in index order (a game waits behind a gap); the leader looked up
    at most every `leader_every_s`; once every game is in, the ratings are exactly those of
    rating all records at once, and the leaderboard built on the tally is the one built on
    the records; with a gap never filled too; the digest is `results_digest`'s."""
    from harness.ledger.journal import results_digest
    from harness.ratings.trueskill import Ratings
    from harness.ratings.standings import build_leaderboard, tally_leaderboard
    from harness.tournament.tally import GameTally

    games = [{"id": i, "game": f"g{i}", "group": i, "seats": ["a", "b"], "places": [1, 2] if i % 3 else [2, 1],
              "scores": [0, 50], "phases": [1, 0], "faults": []} for i in range(6)]
    live = GameTally(["a", "b"], leader_every_s=0.0)
    assert live.leader() is None
    for g in [games[1], games[0], games[3]]:  # game 2 is missing: game 3 waits for it
        live.add(g)
    assert len(live) == 3 and 3 in live and 2 not in live
    assert not live.complete() and live.leader() is not None
    expected = Ratings(["a", "b"])
    for g in games[:2]:
        expected.update(g["id"], g["seats"], g["places"])
    assert live.ratings is not None and live.ratings.table() == expected.table()
    for g in [games[5], games[2], games[4], games[2]]:  # a game added twice counts once
        live.add(g)
    assert live.complete() and live.final_ratings() is live.ratings and len(live) == 6
    whole = build_leaderboard(games, ["a", "b"], seed=1, resamples=50)
    assert build_leaderboard(games, ["a", "b"], seed=1, resamples=50, ratings=live.final_ratings()) == whole
    assert tally_leaderboard(live, seed=1, resamples=50) == whole
    assert live.digest() == results_digest(games)
    gap = GameTally(["a", "b"])
    for g in [games[5], games[0], games[2]]:  # games 1, 3 and 4 never come
        gap.add(g)
    some = [games[0], games[2], games[5]]
    assert tally_leaderboard(gap, seed=1, resamples=50) == build_leaderboard(some, ["a", "b"], seed=1, resamples=50)
    assert gap.digest() == results_digest(some)
    slow = GameTally(["a", "b"], leader_every_s=3600.0)
    slow.add(games[0])
    first = slow.leader()
    assert first is not None
    slow.add(games[1])
    assert slow.leader() == first  # rated at once; the leader is not looked up again within the hour


def test_the_tally_hands_its_games_to_the_statistics_without_a_copy_that_later_games_change() -> None:
    """`GameTally.arrays` reads the tally's own columns (no copy of the games), read-only;
    arrays taken earlier keep their games as more are added (a column that grows moves),
    and mixed table sizes are laid out as `GameArrays.from_records` does."""
    from harness.ratings.games import GameArrays
    from harness.tournament.tally import GameTally

    names = ["a", "b", "c", "d"]
    games = [{"id": i, "game": f"g{i}", "group": i // 2, "seats": names[: 2 + i % 3] if i > 150 else ["a", "b"],
              "places": list(range(1, 3 + i % 3)) if i > 150 else [1 + i % 2, 2 - i % 2],
              "scores": [0] * (2 + i % 3 if i > 150 else 2), "phases": [0] * (2 + i % 3 if i > 150 else 2),
              "faults": []} for i in range(300)]
    tally = GameTally(names, ratings=False)
    for g in games[:100]:
        tally.add(g)
    early = tally.arrays()
    assert not early.seats.flags.writeable and not early.places.flags.writeable and not early.ids.flags.writeable
    with pytest.raises(ValueError):
        early.seats[0, 0] = 3
    seats_before = early.seats.copy()
    for g in games[100:]:  # the columns grow past what `early` reads
        tally.add(g)
    assert early.games == 100 and (early.seats == seats_before).all()
    whole, expected = tally.arrays(), GameArrays.from_records(games, names)
    for k in ("ids", "group", "size", "seats", "places"):
        assert getattr(whole, k).tolist() == getattr(expected, k).tolist(), k


def _past_as_sets(records: list[dict], base: int, rate: bool) -> tuple:
    """What `Past.of` gives, computed from plain sets and dicts (the definition)."""
    from harness.ratings.trueskill import Ratings

    below = [r for r in records if r["id"] < base]
    played, groups, games, met, top = set(), {}, {}, {}, -1
    for r in below:
        seats = tuple(r["seats"])
        played.add((seats, r["seed"]))
        g = r.get("group")
        if isinstance(g, int):
            groups.setdefault(r["seed"], g)
            top = max(top, g)
        for x in seats:
            games[x] = games.get(x, 0) + 1
            for y in seats:
                if x != y:
                    met[x, y] = met.get((x, y), 0) + 1
    ratings = {}
    if rate:
        rated = Ratings(sorted(games))
        for r in sorted(below, key=lambda r: r["id"]):
            if r.get("reason") != "not_played" and "places" in r:
                rated.update(r["id"], r["seats"], r["places"])
        ratings = dict(rated.table())
    return played, groups, top + 1, games, met, ratings


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_history_before_a_field_held_as_arrays_answers_as_sets_would(data) -> None:
    """`Past.of` (a `PastReader`, the games played held as arrays): for records in any
    order, duplicate deals sharing a seed, games without a group, games not played, and
    seeds or groups that are not 64-bit integers, every question a field's schedule asks
    (was this game played? the group of this deal seed?) has the answer sets give, and the
    counts and ratings are the same."""
    from harness.tournament.schedule import Past

    names = ["a", "b", "c", "d"]
    seeds = data.draw(st.lists(st.one_of(st.integers(0, 5), st.just(1 << 70), st.just(-3)), min_size=1, max_size=4))
    n = data.draw(st.integers(0, 25))
    ids = data.draw(st.permutations(range(n)))
    records = []
    for i in ids:
        seats = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        rec = {"id": i, "seats": seats, "seed": data.draw(st.sampled_from(seeds))}
        g = data.draw(st.one_of(st.none(), st.integers(0, 9), st.just(1 << 65), st.just("x")))
        if g is not None:
            rec["group"] = g
        if data.draw(st.booleans()):
            rec["reason"] = "not_played"
        else:
            rec["places"] = data.draw(st.permutations(range(1, len(seats) + 1)))
        records.append(rec)
    base = data.draw(st.integers(0, n + 1))
    rate = data.draw(st.booleans())
    past = Past.of(records, base, rate)
    played, groups, next_group, games, met, ratings = _past_as_sets(records, base, rate)
    asked = {(tuple(r["seats"]), s) for r in records for s in seeds + [7]} | played
    asked |= {(tuple(reversed(r["seats"])), r["seed"]) for r in records}
    for q in asked:
        assert (q in past.played) == (q in played), q
    for s in seeds + [7]:
        assert past.groups.get(s) == groups.get(s), s
    assert (past.next_group, dict(past.games), dict(past.met)) == (next_group, games, met)
    assert dict(past.ratings) == ratings


def test_a_budget_changed_after_a_published_board_makes_the_marks_anytime_valid(tmp_path: Path) -> None:
    """A random tournament's games budget may change between runs over one results folder.
    A board was published at the old size, so the new size may have been chosen on what it
    showed (played on because nothing was settled yet): that is a second look, which the
    fixed-sample test does not allow. From then on the board's marks come from the
    anytime-valid test, tournament.json says why, and verify recomputes the same board."""
    from harness.tournament.verify import verify_results

    def run(games: int) -> dict:
        path = write_config(tmp_path, format="random", games=games, rules={"phases": [1], "hand_limit": 20},
                            replays="none")
        run_tournament(load_config(path), build_site=False)
        return json.loads((tmp_path / "out" / "leaderboard.json").read_text())

    out = tmp_path / "out"
    assert run(6)["statistics"]["test"] == "fixed"
    assert run(6)["statistics"]["test"] == "fixed"  # the same budget again: nothing new looked at
    assert not json.loads((out / "tournament.json").read_text()).get("budget_changed")
    board = run(10)
    assert board["games"] == 10 and board["statistics"]["test"] == "sequential"
    assert json.loads((out / "tournament.json").read_text())["budget_changed"] is True
    assert run(10)["statistics"]["test"] == "sequential"  # for good: the earlier look stays a look
    v = verify_results(out, replays=False)
    assert v.ok, v.checks


def test_a_compact_schedule_gives_back_every_game_as_scheduled_whatever_its_table_sizes() -> None:
    """`CompactSchedule` holds the games as arrays (where a game's seats begin only once
    table sizes differ): every position gives back its game, a negative position counts
    from the end, and a position outside the schedule is an error."""
    from harness.tournament.schedule import CompactSchedule, GameSpec, game_id

    sizes = [3] * 5 + [2, 4, 3] + [3] * 4
    specs = [GameSpec(10 + k, game_id(10 + k), tuple(f"e{(k + j) % 7}" for j in range(w)), 1000 + k, k // 2, k % 3 == 0)
             for k, w in enumerate(sizes)]
    for first in (specs[:5], specs):  # widths all the same, then not
        sched = CompactSchedule(first, 10)
        assert list(sched) == first and [sched.spec(k) for k in range(len(first))] == first
        assert sched.spec(-1) == first[-1] and sched.spec(-len(first)) == first[0]
        for bad in (len(first), -len(first) - 1):
            with pytest.raises(IndexError):
                sched.spec(bad)


def test_a_bots_words_make_no_markdown_or_terminal_escapes(tmp_path: Path) -> None:
    """A disqualified bot's last stderr line reaches leaderboard.md and the terminal: there
    it forges no table cell, link or HTML, and moves no cursor."""
    bots = [{"name": "greedy", "cmd": GREEDY}, {"name": "greedy2", "cmd": GREEDY},
            {"name": "markup", "cmd": [sys.executable, str(ROOT / "tests/zoo/markup_crash.py")]}]
    path = write_config(tmp_path, bots=bots, games_per_table=2, rules={"phases": [1]},
                        faults={"retries": 0, "disqualify": {"startup_failures": 1, "check_every": 1}})
    res = CliRunner().invoke(main, ["run", str(path), "--no-site", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "disqualified: markup" in res.output
    assert "\x1b" not in res.output and "\x07" not in res.output, repr(res.output)
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| ") and "markup" in line)
    header = next(line for line in md.splitlines() if line.startswith("| rank"))
    cells = lambda line: len(re.split(r"(?<!\\)\|", line))  # noqa: E731 - cells not escaped
    assert cells(row) == cells(header), row
    assert "forged" in row and "\\<img" in row and "\x1b" not in md, row
    assert not re.search(r"(?<!\\)[<>\[\]()`]", row.split("(disqualified: ", 1)[1].split(") | ", 1)[0]), row


def test_the_main_machine_records_only_the_games_it_handed_out(tmp_path: Path, monkeypatch) -> None:
    """A worker (a machine of a Dask cluster, where a bot may have escaped) that answers
    with a game it was not given, or with other seats or another seed, stops the run with
    an error, and the forged game is not recorded."""
    from harness.tournament.executor import LocalExecutor

    real_run = LocalExecutor.run

    def forging(self, specs, excluded, more=None):
        for res in real_run(self, specs, excluded, more=more):
            if res["record"]["id"] == 2:
                res["record"] = {**res["record"], "seats": list(reversed(res["record"]["seats"]))}
            yield res

    monkeypatch.setattr(LocalExecutor, "run", forging)
    cfg = load_config(write_config(tmp_path, games_per_table=2, replays="none"))
    with pytest.raises(ResultsError, match="not a game handed out, or not as scheduled"):
        run_tournament(cfg, build_site=False)
    assert 2 not in read_journal(cfg.output / "games.jsonl")


def test_workers_run_bots_in_the_sandbox_mode_found_on_the_main_machine(tmp_path: Path) -> None:
    """`sandbox: auto` is resolved once, where the run starts, and the executor's bots carry
    that mode ("bwrap" or "none", as the results record it): a Dask worker without
    bubblewrap then fails the bot's start instead of running it unsandboxed."""
    from harness.tournament.runner import _pinned, sandbox_state

    cfg = load_config(write_config(tmp_path))
    assert {b.sandbox.mode for b in cfg.bots} == {"auto"}
    state = sandbox_state(cfg)
    pinned = _pinned(cfg, state)
    assert [b.sandbox.mode for b in pinned.bots] == [state["bots"][b.name] for b in cfg.bots]
    assert {b.sandbox.mode for b in pinned.bots} <= {"bwrap", "none"}


def test_the_viewers_replays_made_during_the_run_are_those_the_site_makes_from_the_files(tmp_path: Path) -> None:
    """The run makes the viewer's form of the first replays it keeps while its workers play
    (`replays.prepare`); the site built from the files alone writes the same bytes."""
    from harness.report.site import build_site
    from harness.report.site import replays

    replays._MADE.clear()
    out = tmp_path / "out"
    run_tournament(load_config(write_config(tmp_path, sandbox="none")))
    made = len(replays._MADE)
    ahead = {p.name: p.read_bytes() for p in sorted((out / "site" / "replays").glob("*.js"))}
    replays._MADE.clear()
    build_site(out)
    again = {p.name: p.read_bytes() for p in sorted((out / "site" / "replays").glob("*.js"))}
    assert made == len(ahead) == 12 and ahead == again
