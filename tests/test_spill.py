"""Arrays that grow with the games live in files (`harness.spill`): the values
are the same as in memory, the run's boards are byte for byte the same, and the memory a
run holds of its own no longer grows with its games."""

from __future__ import annotations

import dataclasses
import gc
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from harness import spill
from harness.ratings import games as game_arrays
from harness.ratings.games import GameArrays
from harness.ratings.paired import paired_deals
from harness.ratings.significance import running_max_mixture
from harness.ratings.section import report
from harness.tournament.config import DisqualifyPolicy
from harness.tournament.disqualify import disqualifications
from harness.tournament.schedule import CompactSchedule, plan_rounds, schedule


def test_small_arrays_stay_in_memory_and_large_ones_go_to_an_unlinked_file(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    small = spill.empty(10, np.int64)
    assert not spill.is_spilled(small) and small.tolist() == [0] * 10
    big = spill.empty((spill.SPILL_BYTES // 8, 2), np.int32)
    assert spill.is_spilled(big) and spill.is_spilled(big[3:]) and big.shape == (spill.SPILL_BYTES // 8, 2)
    assert big.flags.writeable and not big.any()  # zeros, as np.zeros
    big[7, 1] = -5
    assert big[7, 1] == -5 and int(big.sum()) == -5
    assert list(tmp_path.iterdir()) == []  # the file is unlinked at once: nothing is left behind
    assert spill.arange(300_000)[[0, 1, 299_999]].tolist() == [0, 1, 299_999]


def test_where_no_file_can_be_made_the_array_is_made_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", "/nonexistent/p10-spill")
    a = spill.empty(spill.SPILL_BYTES, np.int8)
    assert not spill.is_spilled(a) and len(a) == spill.SPILL_BYTES and not a.any()


def test_a_full_disk_is_found_when_the_file_is_made_not_at_a_later_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's blocks are reserved up front: where they cannot be (no space left), the
    array is made in memory, instead of a sparse file whose first write to a page could
    end the process with SIGBUS."""
    import errno
    import os

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    a = spill.empty(spill.SPILL_BYTES, np.int8)
    assert not spill.is_spilled(a) and not a.any()
    a[-1] = 3
    assert int(a.sum()) == 3


def test_a_column_keeps_its_values_and_every_view_taken_while_it_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "SPILL_BYTES", 1024)
    col = spill.Column(np.int32)
    views = []
    for k in range(5000):
        col.append(k * 3)
        if k % 700 == 0:
            views.append((k + 1, col.view()))
    col.extend(np.arange(10, dtype=np.int32))
    assert len(col) == 5010 and spill.is_spilled(col.view())
    assert col.view()[:5000].tolist() == [k * 3 for k in range(5000)] and col[-1] == 9 and col[2] == 6
    for n, v in views:
        assert v.tolist() == [k * 3 for k in range(n)] and not v.flags.writeable


def test_a_compact_schedule_in_files_reads_as_the_schedule(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = gen.make_config(tmp_path / "r", 12, 3000, 3, "random", 5, True, "sched")
    specs = schedule(cfg)
    monkeypatch.setattr(spill, "SPILL_BYTES", 1)
    sched = CompactSchedule(specs, 0)
    assert spill.is_spilled(sched._seats) and spill.is_spilled(sched._seed)
    assert list(sched) == specs
    assert [len(r) for r in sched.rounds(100)] == [len(r) for r in plan_rounds(specs, 100)]


@pytest.mark.parametrize("fmt, size, duplicate", [("round-robin", 2, False), ("random", 4, True), ("random", 3, False)])
def test_statistics_and_disqualification_are_the_same_from_files(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   fmt: str, size: int, duplicate: bool) -> None:
    cfg = gen.make_config(tmp_path / "r", 9, 1200, size, fmt, 11, duplicate, "same")
    specs = schedule(cfg)
    strengths = dict(zip(cfg.entrants, gen.latent_strengths(9, 2.0).tolist()))
    records = list(gen.synth_records(cfg, specs, strengths, 11, 0.0))
    bad = cfg.entrants[4]
    for r in records:  # one entrant forfeits every other game it plays: disqualification has work
        if bad in r["seats"] and r["id"] % 2:
            r["forfeits"] = [r["seats"].index(bad)]  # seats, by position
    pol = DisqualifyPolicy(forfeit_share=0.3, min_games=3, check_every=20)

    def everything() -> tuple:
        arr = GameArrays.from_records(records, cfg.entrants)
        analysis, text = report(arr, cfg.entrants, resamples=200, seed=3)
        deals = paired_deals(arr, cfg.entrants)
        dq = disqualifications(specs, cfg.entrants, pol, iter(records))
        return (text, analysis.theta, analysis.ci, analysis.samples, [c.tolist() for c in deals.counts()],
                running_max_mixture(deals).tolist(), [d.to_dict() for d in dq])

    in_memory = everything()
    monkeypatch.setattr(spill, "SPILL_BYTES", 1)
    assert everything() == in_memory
    assert [d["entrant"] for d in in_memory[-1]] == [bad]


def test_a_run_from_files_publishes_the_same_bytes(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole run (schedule, disqualification gate, tally, statistics) with every array in
    a file publishes what it publishes with every array in memory."""
    outs = []
    for name, threshold in (("memory", 1 << 40), ("files", 1)):
        monkeypatch.setattr(spill, "SPILL_BYTES", threshold)
        cfg = gen.make_config(tmp_path / name, 10, 900, 2, "round-robin", 4, False, "same")
        cfg = dataclasses.replace(cfg, disqualify=DisqualifyPolicy())
        strengths = dict(zip(cfg.entrants, gen.latent_strengths(10, 3.0).tolist()))
        assert gen.simulate_run(cfg, strengths, 4, build_site=False).finished
        outs.append(tmp_path / name)
    for f in ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "stats.md", "head_to_head.csv", "games.jsonl"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f


def _run_peak(gen, out: Path, games: int) -> tuple[int, int]:
    """The games played and the peak of what a synthetic run allocates in the process's
    own memory (tracemalloc: Python objects and numpy buffers, not the files' pages), from
    its start to the end of publishing."""
    cfg = gen.make_config(out, 20, games, 2, "round-robin", 7, False, "flat")
    cfg = dataclasses.replace(cfg, disqualify=DisqualifyPolicy())
    strengths = dict(zip(cfg.entrants, gen.latent_strengths(20, 3.0).tolist()))
    gc.collect()
    tracemalloc.start()
    try:
        outcome = gen.simulate_run(cfg, strengths, 7, build_site=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome.finished
    return outcome.played, peak


def test_a_runs_own_memory_is_flat_in_its_games(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the arrays that grow with the games in files, the peak of a run's own memory
    (from its schedule to its published boards) does not grow with its games: runs of
    1,900 and 7,980 games (20 entrants, 2-player round-robin, disqualification on), every
    array of 4 KB or more in a file, so that at these sizes every array that grows with
    the games is in one, as at a million games with the default threshold. Measured: 206
    KB less at 7,980 games than at 1,900 (the peak is the fixed cost of publishing); with
    every array in memory, 440 KB more (72 bytes a game). A first run warms the caches so
    that both are measured alike."""
    from harness.tournament import play

    monkeypatch.setattr(play, "WINDOW", 4)  # games handed out ahead: a few, as in a real run's turnover
    monkeypatch.setattr(play, "HELD", 4)
    monkeypatch.setattr(spill, "SPILL_BYTES", 1 << 12)
    _run_peak(gen, tmp_path / "warm", 600)
    (n0, p0), (n1, p1) = _run_peak(gen, tmp_path / "small", 2000), _run_peak(gen, tmp_path / "large", 8000)
    assert (n0, n1) == (1900, 7980)
    per_game = (p1 - p0) / (n1 - n0)
    assert per_game < 8, f"a run's own peak grows by {per_game:.1f} bytes a game ({p0:,} → {p1:,} bytes)"


def _arrays_peak(records: list, entrants: list) -> tuple[int, "GameArrays"]:
    from harness.tournament.tally import GameTally

    tally = GameTally(entrants, ratings=False)
    for r in records:
        tally.add(r)
    gc.collect()
    tracemalloc.start()
    try:
        arr = tally.arrays()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, arr


def test_games_that_finish_out_of_order_are_put_in_order_in_files(gen, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With parallel games the tally gets them as they finish, not in index order; putting
    them in order for the statistics takes no private memory of a game's size (a slot per
    index, in a file), where a sort took some 36 bytes a game: the peak of `arrays()` over
    20,000 and 80,000 games finishing out of order (shuffled within windows of 64) grows by
    under 2 bytes a game, and the arrays are those of the games in order."""
    monkeypatch.setattr(spill, "SPILL_BYTES", 1 << 16)
    monkeypatch.setattr(game_arrays, "CHUNK", 4096)  # both sizes well past a chunk: the chunks' own size drops out
    rng = np.random.default_rng(3)
    peaks = {}
    for games in (20000, 80000):
        cfg = gen.make_config(tmp_path / "r", 20, games, 2, "round-robin", 2, False, "order")
        strengths = dict(zip(cfg.entrants, gen.latent_strengths(20, 2.0).tolist()))
        records = list(gen.synth_records(cfg, schedule(cfg), strengths, 2, 0.0))
        shuffled = []
        for lo in range(0, len(records), 64):
            block = records[lo:lo + 64]
            shuffled += [block[k] for k in rng.permutation(len(block))]
        peak, arr = _arrays_peak(shuffled, cfg.entrants)
        _, in_order = _arrays_peak(records, cfg.entrants)
        for k in ("ids", "group", "size", "seats", "places"):
            assert np.array_equal(getattr(arr, k), getattr(in_order, k)), k
        assert spill.is_spilled(arr.ids) and spill.is_spilled(arr.seats)
        peaks[len(records)] = peak
    (n0, p0), (n1, p1) = sorted(peaks.items())
    per_game = (p1 - p0) / (n1 - n0)
    assert per_game < 2, f"putting games in order takes {per_game:.1f} bytes a game ({p0:,} → {p1:,})"
