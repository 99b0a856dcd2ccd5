"""tools/gen_journal.py: a synthetic results folder that the project's own readers accept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import main as cli
from harness.ledger.journal import read_journal
from harness.tournament.results import prepare_output
from harness.tournament.schedule import schedule
from harness.tournament.verify import verify_results


def test_games_follow_the_configs_schedule_and_rule_9_4(gen, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert gen.main([str(out), "--entrants", "7", "--games", "300", "--fault-rate", "0.05", "--no-publish"]) == 0
    cfg = gen._load_written_config(out)
    specs = schedule(cfg)
    games = read_journal(out / "games.jsonl")
    assert sorted(games) == list(range(300)) == [s.index for s in specs]
    assert prepare_output(cfg).done == games  # the folder is this config's: a run would resume it
    faults = 0
    for s in specs:
        g = games[s.index]
        assert (g["game"], g["seed"], g["group"], tuple(g["seats"])) == (s.game, s.seed, s.group, s.seats)
        assert sorted(g["places"]) == list(range(1, len(s.seats) + 1))
        assert g["places"][g["winner"]] == 1
        by_place = sorted(range(len(s.seats)), key=lambda i: g["places"][i])
        keys = [(-g["phases"][i], g["scores"][i]) for i in by_place]
        assert keys == sorted(keys)  # R9.4: more phases first, then the lower score
        faults += len(g["faults"])
    assert 0 < faults < 60


def test_same_arguments_write_the_same_bytes(gen, tmp_path: Path) -> None:
    args = ["--entrants", "5", "--games", "120", "--table-size", "3", "--seed", "9", "--no-publish"]
    gen.main([str(tmp_path / "a"), *args])
    gen.main([str(tmp_path / "b"), *args])
    assert (tmp_path / "a" / "games.jsonl").read_bytes() == (tmp_path / "b" / "games.jsonl").read_bytes()
    gen.main([str(tmp_path / "c"), *args[:-2], "10", "--no-publish"])
    assert (tmp_path / "a" / "games.jsonl").read_bytes() != (tmp_path / "c" / "games.jsonl").read_bytes()


def test_published_folder_ranks_by_latent_strength_and_reports(gen, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert gen.main([str(out), "--entrants", "4", "--games", "24", "--format", "round-robin",
                     "--table-size", "2", "--spread", "8"]) == 0
    games = read_journal(out / "games.jsonl")
    assert len(games) == 24  # 6 tables × 4 games (24 rounded to whole rounds)
    res = CliRunner().invoke(cli, ["leaderboard", str(out), "--format", "csv"])
    assert res.exit_code == 0, res.output
    order = [line.split(",")[1] for line in res.output.splitlines()[1:]]
    assert order == ["e0001", "e0002", "e0003", "e0004"]
    res = CliRunner().invoke(cli, ["report", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "site" / "index.html").is_file()
    v = verify_results(out)  # the hash chain, the schedule and the published files all check out
    assert v.ok and [c.name for c in v.checks if c.ok] == ["config", "chain", "published", "seed", "schedule", "leaderboard"], v.checks


def test_publishing_again_uses_the_ratings_checkpoint_only_for_its_own_games(gen, tmp_path: Path) -> None:
    """The end of a publish keeps TrueSkill (ratings.checkpoint.json, its SHA-256 in
    tournament.json), so publishing the same games again does not rate them again and
    writes the same leaderboard; a checkpoint edited by hand, or of other games (even with
    tournament.json's hash rewritten to match), is not used: the games are rated again."""
    import hashlib
    import json

    out = tmp_path / "r"
    assert gen.main([str(out), "--entrants", "5", "--games", "120", "--no-site"]) == 0
    first = (out / "leaderboard.json").read_bytes()
    cfg = gen._load_written_config(out)
    assert gen.republish(cfg, build_site=False)["timings"]["ratings"] == "checkpoint"
    assert (out / "leaderboard.json").read_bytes() == first
    ck, marker = out / "ratings.checkpoint.json", out / "tournament.json"
    data = json.loads(ck.read_text())
    forged = json.loads(json.dumps(data))
    forged["ratings"]["entrants"]["e0005"]["mu"] = 99.0
    ck.write_text(json.dumps(forged))
    assert gen.republish(cfg, build_site=False)["timings"]["ratings"] == "rated"
    assert (out / "leaderboard.json").read_bytes() == first
    stale = dict(data, games=data["games"] - 1)
    raw = json.dumps(stale).encode()
    ck.write_bytes(raw)
    meta = json.loads(marker.read_text())
    marker.write_text(json.dumps(meta | {"ratings_sha256": hashlib.sha256(raw).hexdigest()}))
    assert gen.republish(cfg, build_site=False)["timings"]["ratings"] == "rated"
    assert (out / "leaderboard.json").read_bytes() == first
    assert verify_results(out, replays=False).ok


def test_a_large_field_publishes_only_the_pairs_that_met(gen, tmp_path: Path) -> None:
    """Beyond 20 entrants the per-pair tables are bounded by the pairs that met, not every
    pair: head_to_head and statistics.pairs_met list only those (the same shape), so do the
    rows of head_to_head.csv, and the Markdown has no entrants × entrants matrix. Small
    fields keep every pair (tests/test_stats.py)."""
    import csv
    import json

    out = tmp_path / "r"
    assert gen.main([str(out), "--entrants", "30", "--games", "40", "--table-size", "2"]) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    games = read_journal(out / "games.jsonl")
    met = {(a, b) for g in games.values() for a in g["seats"] for b in g["seats"] if a != b}
    h2h = board["head_to_head"]
    assert {(a, b) for a, row in h2h.items() for b in row} == met and len(h2h) == 30
    assert all(c["games"] == c["ahead"] + c["behind"] + c["tied"] > 0 for row in h2h.values() for c in row.values())
    pm = board["statistics"]["pairs_met"]
    assert {(a, b) for a, row in pm.items() for b in row} == met
    rows = list(csv.reader((out / "head_to_head.csv").open()))
    assert len(rows) == 1 + len(met)
    md = (out / "leaderboard.md").read_text()
    assert "head_to_head.csv" in md and "| e0001 | — |" not in md
    stats_md = (out / "stats.md").read_text()
    assert f"{len(met) // 2} of {30 * 29 // 2} pairs met" in stats_md
    assert (out / "site" / "index.html").exists()
    assert verify_results(out, replays=False).ok


def test_a_run_keeps_no_record_or_spec_per_game(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a run's main process keeps grows by a few bytes a game, not by a record (over 1 KB
    in memory) or a scheduled game (~0.5 KB): a real `run_tournament` (disqualification on,
    so its gate is exercised) whose games are drawn by the synthetic executor, with the
    memory allocated from game 60 on and still held at game 340 measured by tracemalloc.
    Left out: TrueSkill's own allocations and its rating history (bounded per entrant,
    `ratings.HISTORY_POINTS` points). The window of games handed out and read ahead is made small so that its
    turnover does not count as growth. The run then publishes and verifies."""
    import dataclasses
    import gc
    import tracemalloc

    from harness.tournament import play
    from harness.tournament.config import DisqualifyPolicy

    monkeypatch.setattr(play, "WINDOW", 4)
    monkeypatch.setattr(play, "HELD", 4)
    cfg = gen.make_config(tmp_path / "r", 10, 360, 2, "round-robin", 3, False, "mem")
    cfg = dataclasses.replace(cfg, disqualify=DisqualifyPolicy())
    strengths = dict(zip(cfg.entrants, gen.latent_strengths(10, 3.0).tolist()))
    snap: list[tracemalloc.Snapshot] = []

    def each(n: int) -> None:
        if n == 60:
            gc.collect()
            tracemalloc.start()
        elif n == 340:
            gc.collect()
            snap.append(tracemalloc.take_snapshot())
            tracemalloc.stop()

    try:
        outcome = gen.simulate_run(cfg, strengths, 3, build_site=False, each=each)
    finally:
        tracemalloc.stop()
    assert outcome.finished and outcome.played == 360 == len(read_journal(tmp_path / "r" / "games.jsonl"))
    kept = snap[0].filter_traces([tracemalloc.Filter(False, "*/trueskill/*"),
                                  tracemalloc.Filter(False, "*/harness/ratings/trueskill.py")])
    per_game = sum(t.size for t in kept.traces) / 280
    assert per_game < 300, f"the run keeps {per_game:.0f} bytes a game: " + "; ".join(
        str(s) for s in kept.statistics("lineno")[:5])
    assert verify_results(tmp_path / "r", replays=False).ok


def _verify_peak(out: Path) -> tuple[int, list]:
    """The peak of what `verify_results(out)` allocates (tracemalloc), and its checks."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        v = verify_results(out, replays=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert v.ok, v.checks
    return peak, v.checks


def test_verify_keeps_no_record_per_game(gen, tmp_path: Path) -> None:
    """`verify` reads games.jsonl one line at a time and recomputes the leaderboards from
    running aggregates, so the peak of what it allocates grows by some 120 bytes a game
    (the aggregates' compact arrays and the statistics' working arrays), not by a record
    (~2,000 bytes a game when the records were kept): measured by tracemalloc over verify
    of synthetic folders of 990 and 3,960 games (10 entrants, 2-player round-robin)."""
    peaks = {}
    for games in (1000, 4000):
        out = tmp_path / f"r{games}"
        assert gen.main([str(out), "--entrants", "10", "--games", str(games), "--format", "round-robin",
                         "--table-size", "2", "--no-site"]) == 0
        peak, checks = _verify_peak(out)
        assert [c.name for c in checks if c.ok] == ["config", "chain", "published", "seed", "schedule", "leaderboard"]
        peaks[len(read_journal(out / "games.jsonl"))] = peak
    (n0, p0), (n1, p1) = sorted(peaks.items())
    assert (n0, n1) == (990, 3960)
    per_game = (p1 - p0) / (n1 - n0)
    assert per_game < 400, f"verify's peak grows by {per_game:.0f} bytes a game"


def _rechain(out: Path, lines: list[bytes]) -> None:
    """games.jsonl of `lines` (records) with the chain recomputed from the genesis, and
    tournament.json's published head rewritten to match: a forgery only the schedule and
    the leaderboards can give away."""
    import json

    import orjson

    from harness.ledger.journal import chained_line
    from harness.ledger.marker import marker_genesis, read_marker

    head = marker_genesis(read_marker(out))
    data = []
    for raw in lines:
        line, head = chained_line(head, orjson.loads(raw))
        data.append(line + b"\n")
    (out / "games.jsonl").write_bytes(b"".join(data))
    meta = json.loads((out / "tournament.json").read_text())
    (out / "tournament.json").write_text(json.dumps(meta | {"journal_head": head}))


@pytest.mark.parametrize("edit", ["byte", "rechained_result", "rechained_seed", "rechained_duplicate",
                                  "rechained_garbage"])
def test_verify_finds_an_edit_deep_in_a_long_journal(gen, tmp_path: Path, edit: str) -> None:
    """An edit at line 1,700 of 1,980, read one line at a time, is found there: a changed
    byte breaks the chain at that line; with the chain (and the published head)
    recomputed, a changed result is not what the leaderboards were published from, a
    changed deal seed is not the game the seed schedules, a game recorded twice is named
    with its second line, and a result that is no result at all (places that are not
    numbers) is named as a record of another shape, not a crash."""
    import orjson

    out = tmp_path / "r"
    assert gen.main([str(out), "--entrants", "10", "--games", "2000", "--format", "round-robin",
                     "--table-size", "2", "--no-site"]) == 0
    lines = (out / "games.jsonl").read_bytes().splitlines()
    assert len(lines) == 1980
    rec = orjson.loads(lines[1699])
    if edit == "byte":
        assert b'"stalled_hands":0,' in lines[1699]
        lines[1699] = lines[1699].replace(b'"stalled_hands":0,', b'"stalled_hands":1,')
        (out / "games.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    elif edit == "rechained_result":
        lines[1699] = orjson.dumps(rec | {"places": rec["places"][::-1], "winner": 1 - rec["winner"]})
        _rechain(out, lines)
    elif edit == "rechained_seed":
        lines[1699] = orjson.dumps(rec | {"seed": rec["seed"] + 1})
        _rechain(out, lines)
    elif edit == "rechained_garbage":
        lines[1699] = orjson.dumps(rec | {"places": "xy"})
        _rechain(out, lines)
    else:
        lines[1699] = lines[1000]
        _rechain(out, lines)
    v = verify_results(out, replays=False)
    failed = [c for c in v.checks if c.ok is False]
    assert len(failed) == 1 and not v.ok, v.checks
    name, detail = failed[0].name, failed[0].detail
    if edit == "byte":
        assert name == "chain" and "line 1700 (game 1699) breaks the hash chain" in detail, detail
    elif edit == "rechained_result":
        assert name == "leaderboard" and "leaderboard.json" in detail and "1980 published games" in detail, detail
    elif edit == "rechained_seed":
        assert name == "schedule" and detail.startswith(f"game 1699 (g001699) is not the game the seed schedules "
                                                        f"(seats {rec['seats']}, seed {rec['seed'] + 1})"), detail
    elif edit == "rechained_garbage":
        assert name == "records" and detail.startswith("game 1699 (line 1700) is not a record the runner writes: "
                                                      "its places are not a number for each seat"), detail
    else:
        assert name == "chain" and "game 1000 is recorded twice (line 1700)" in detail, detail


def _run_on(gen, cfg, strengths: dict, seed: int) -> Any:
    """`run_tournament` of `cfg` over its results folder as it is (not fresh), its games
    drawn by the synthetic executor."""
    from unittest import mock

    from harness.tournament import runner

    executor = gen.SyntheticExecutor(cfg, strengths, seed)
    with mock.patch.object(runner, "_executor", lambda cfg, log_dir: executor), mock.patch("os.fsync", lambda fd: None):
        return runner.run_tournament(cfg, build_site=False)


@pytest.mark.parametrize("fmt", ["round-robin", "random"])
def test_verify_checks_every_field_of_a_folder_whose_field_changed(gen, tmp_path: Path, fmt: str) -> None:
    """A results folder played by 5 entrants, then by 6 (one added between runs), with
    disqualification on: verify checks each field's games against that field's schedule
    (the later one made from the games before it, matched from their ratings in the random
    format) and recomputes the leaderboards from the games of both; a game of the first
    field changed (its chain and published head recomputed) is found."""
    import dataclasses

    import orjson

    from harness.tournament.config import DisqualifyPolicy

    out = tmp_path / "r"
    strengths = dict(zip(gen.entrant_names(6), gen.latent_strengths(6, 3.0).tolist()))
    for n, games in ((5, 60), (6, 90)):
        cfg = dataclasses.replace(gen.make_config(out, n, games, 2, fmt, 3, False, "fields"),
                                  disqualify=DisqualifyPolicy())
        assert _run_on(gen, cfg, strengths, n).finished
    meta = json.loads((out / "tournament.json").read_text())
    assert [f["start"] for f in meta["fields"]] == [0, 60]
    v = verify_results(out, replays=False)
    assert v.ok and [c.name for c in v.checks if c.ok] == ["config", "chain", "published", "seed", "schedule",
                                                           "leaderboard"], v.checks
    lines = (out / "games.jsonl").read_bytes().splitlines()
    k = next(k for k, raw in enumerate(lines) if orjson.loads(raw)["id"] == 30)
    rec = orjson.loads(lines[k])
    lines[k] = orjson.dumps(rec | {"seats": rec["seats"][::-1]})
    _rechain(out, lines)
    failed = [c for c in verify_results(out, replays=False).checks if c.ok is False]
    assert [c.name for c in failed] == ["schedule"] and failed[0].detail.startswith("game 30 (g000030)"), failed


def test_verify_decides_early_stopping_as_the_run_did(gen, tmp_path: Path) -> None:
    """A duplicate-deal round-robin with `stop_when: settled` that stops once the order is
    settled, well before its budget: verify recomputes the stopping decision round by
    round from the published games (and the boards with it) and finds them as published."""
    import dataclasses

    from harness.tournament.config import DisqualifyPolicy

    out = tmp_path / "r"
    cfg = gen.make_config(out, 4, 1200, 2, "round-robin", 3, True, "stop")
    cfg = dataclasses.replace(cfg, stop_when="settled", disqualify=DisqualifyPolicy(),
                              stop=dataclasses.replace(cfg.stop, round_games=24, min_games=24))
    strengths = dict(zip(cfg.entrants, gen.latent_strengths(4, 12.0).tolist()))
    outcome = gen.simulate_run(cfg, strengths, 3, build_site=False)
    assert outcome.finished and outcome.stopping["reason"] == "settled" and outcome.played < outcome.total
    v = verify_results(out, replays=False)
    assert v.ok and [c.name for c in v.checks if c.ok] == ["config", "chain", "published", "seed", "schedule",
                                                           "leaderboard"], v.checks
    board = json.loads((out / "leaderboard.json").read_text())
    board["stopping"]["round"] += 1
    (out / "leaderboard.json").write_text(json.dumps(board, indent=1) + "\n")
    failed = [c for c in verify_results(out, replays=False).checks if c.ok is False]
    assert [c.name for c in failed] == ["leaderboard"] and "leaderboard.json" in failed[0].detail, failed


def test_the_disqualification_gate_looks_at_a_game_a_few_times_not_at_every_game_held(
        gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With disqualification on (the default), games the gate holds up wait with the entrant
    that holds them up and are looked at again only once it is cleared: the gate is asked
    about each game a few times, where every game held (up to 4,096) used to be asked again
    each time one was handed out. Counted, not timed: 40 entrants, 2-player round-robin,
    two entrants forfeiting half their games and disqualified for it: 2.4 times a game,
    against 2,028 before (at 100 entrants some 3,000: 9 ms of the main process's CPU a
    game, ten times what the rest of the run cost it)."""
    import dataclasses

    from harness.tournament.config import DisqualifyPolicy
    from harness.tournament.disqualify import DisqualificationGate

    asked = [0]
    blocker = DisqualificationGate.blocker

    def counted(self, spec):  # type: ignore[no-untyped-def]
        asked[0] += 1
        return blocker(self, spec)

    monkeypatch.setattr(DisqualificationGate, "blocker", counted)
    record = gen.Synth.record

    def forfeiting(self, spec):  # type: ignore[no-untyped-def]
        r = record(self, spec)
        for e in ("e0003", "e0017"):
            if e in spec.seats and spec.index % 2:
                r["forfeits"].append(spec.seats.index(e))
        return r

    monkeypatch.setattr(gen.Synth, "record", forfeiting)
    cfg = gen.make_config(tmp_path / "r", 40, 6000, 2, "round-robin", 5, False, "gate")
    cfg = dataclasses.replace(cfg, disqualify=DisqualifyPolicy(forfeit_share=0.3))
    strengths = dict(zip(cfg.entrants, gen.latent_strengths(40, 2.0).tolist()))
    outcome = gen.simulate_run(cfg, strengths, 5, build_site=False)
    assert outcome.finished and outcome.played == outcome.total
    dq = json.loads((tmp_path / "r" / "disqualified.json").read_text())["disqualified"]
    assert sorted(d["entrant"] for d in dq) == ["e0003", "e0017"]
    per_game = asked[0] / outcome.total
    assert per_game < 5, f"the gate was asked {per_game:.1f} times a game"


@pytest.mark.parametrize("spread, reason", [(12.0, "accepted"), (-12.0, "rejected"), (None, "settled")])
def test_verify_passes_a_tournament_stopped_early_by_any_rule(gen, tmp_path: Path, spread, reason) -> None:
    """The runner and verify decide "finished" by one rule: a run stopped by its SPRT
    (accepting H1 or H0) or by a settled order verifies, finished, as published."""
    import dataclasses

    from harness.tournament.config import DisqualifyPolicy

    out = tmp_path / "r"
    cfg = gen.make_config(out, 4, 1200, 2, "round-robin", 3, True, "stop")
    names = cfg.entrants
    if spread is None:
        cfg = dataclasses.replace(cfg, stop_when="settled", disqualify=DisqualifyPolicy(),
                                  stop=dataclasses.replace(cfg.stop, round_games=24, min_games=24))
        strengths = dict(zip(names, gen.latent_strengths(4, 12.0).tolist()))
    else:
        cfg = dataclasses.replace(cfg, stop_when="sprt", stop=dataclasses.replace(
            cfg.stop, candidate=names[0], round_games=24, min_games=24, elo0=0.0, elo1=100.0))
        strengths = dict(zip(names, gen.latent_strengths(4, spread).tolist()))
    outcome = gen.simulate_run(cfg, strengths, 3, build_site=False)
    assert outcome.finished and outcome.stopping["reason"] == reason and outcome.played < outcome.total
    assert json.loads((out / "tournament.json").read_text())["finished"] is True
    v = verify_results(out, replays=False)
    assert v.ok, [c for c in v.checks if c.ok is False]
