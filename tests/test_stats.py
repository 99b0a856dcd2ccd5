"""How sure the standings are: the batch Plackett–Luce rating, the bootstrap over deal
groups, luck share, games to settle, the board's statistics, early stopping in the runner
(the tests behind the marks and the SPRT: tests/test_significance.py). The calibration of
the marks is tools/calibrate.py (a small version: tests/test_calibration.py)."""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from harness.engine import Rules
from harness.players import NoisyGreedyStrategy, play_local
from harness.ratings import bootstrap, paired, plackett_luce
from harness.ratings import games as game_arrays
from harness.ratings.bootstrap import DealBootstrap, NormalBootstrap, analyse, bootstrap_of
from harness.ratings.games import GameArrays, deal_groups
from harness.ratings.luck import luck_share
from harness.ratings.paired import paired_deals, pairs_met
from harness.ratings.plackett_luce import Likelihood, _merge, game_stages, pl_theta, table_stages
from harness.ratings.section import report
from harness.ratings.standings import build_leaderboard
from harness.ratings.stopping import check_settled, progress_text
from harness.report.columns import COLUMNS, STATS_COLUMNS
from harness.report.leaderboard import to_csv, to_markdown
from harness.tournament.config import ConfigError, load_config, config_from
from harness.tournament.runner import run_tournament
from harness.tournament.schedule import plan_rounds, schedule

ROOT = Path(__file__).resolve().parent.parent


def rec(i: int, seats: list[str], places: list[int], group: int | None = None) -> dict[str, Any]:
    """A game record in the games.jsonl shape (what the statistics read of it)."""
    n = len(seats)
    return {"id": i, "game": f"g{i:06d}", "group": i if group is None else group, "seats": seats,
            "places": places, "scores": [0] * n, "phases": [0] * n, "faults": [], "forfeits": []}


def duel(games: list[tuple[str, str]], duplicate: bool = False) -> list[dict[str, Any]]:
    """Two-player records from (winner, loser) pairs; with `duplicate`, consecutive pairs
    of games form a deal group."""
    return [rec(i, [w, l] if i % 2 == 0 else [l, w], [1, 2] if i % 2 == 0 else [2, 1],
                group=i // 2 if duplicate else i) for i, (w, l) in enumerate(games)]


# ----- the rating ----------------------------------------------------------------------------


def test_stages_of_an_untied_game_choose_first_place_then_the_rest() -> None:
    assert game_stages([0, 1, 2], [2, 1, 3]) == [((1, 0, 2), 1.0, (1.0, 0.0, 0.0)), ((0, 2), 1.0, (1.0, 0.0))]


def test_a_shared_place_is_half_a_win_each() -> None:
    assert game_stages([0, 1], [1, 1]) == [((0, 1), 1.0, (0.5, 0.5))]


def test_a_tied_block_chooses_each_member_once_in_total() -> None:
    stages = game_stages([0, 1, 2, 3], [1, 1, 1, 4])
    chosen = [0.0] * 4
    for risk, _, c in stages:
        for i, x in zip(risk, c):
            chosen[i] += x
    assert chosen == pytest.approx([1, 1, 1, 0])


def _sets(records: list[dict[str, Any]], names: list[str]) -> list[Any]:
    idx = {e: i for i, e in enumerate(names)}
    out = []
    for r in records:
        out += game_stages([idx[s] for s in r["seats"]], r["places"])
    return out


def _mm(sets: list[Any], n: int, prior: float = 1.0, tol: float = 1e-13) -> list[float]:
    """θ by Hunter's (2004) MM iteration, an independent reference for the fit: γ_i = w_i /
    Σ_stages (weight · [i in the set] / Σ_set γ), the prior's virtual win and loss against
    γ = 1 in both sums. Sure but slow: for small cases only."""
    wins = [prior] * n
    for members, _, chosen in sets:
        for i, c in zip(members, chosen):
            wins[i] += c
    gamma = [1.0] * n
    for _ in range(200_000):
        denom = [2.0 * prior / (g + 1.0) for g in gamma]
        for members, w, _ in sets:
            q = w / sum(gamma[i] for i in members)
            for i in members:
                denom[i] += q
        new = [wins[i] / denom[i] for i in range(n)]
        change = max(abs(math.log(a / b)) for a, b in zip(new, gamma))
        gamma = new
        if change < tol:
            break
    return [math.log(g) for g in gamma]


def _likelihood(sets: list[Any], n: int) -> Likelihood:
    table: dict[tuple[int, ...], list[float]] = {}
    _merge(sets, table)
    return Likelihood(table_stages(table, n), n)


def test_the_fit_finds_the_maximum_mm_climbs_to() -> None:
    rng = random.Random(4)
    names = ["a", "b", "c", "d"]
    records = []
    for i in range(60):
        seats = rng.sample(names, 3)
        records.append(rec(i, seats, [rng.choice([1, 2, 3]) for _ in seats]))
    sets = _sets(records, names)
    theta_mm = _mm(sets, 4)
    likelihood = _likelihood(sets, 4)
    assert likelihood.maximum().tolist() == pytest.approx(theta_mm, abs=1e-9)
    assert pl_theta(records, names)[0] == pytest.approx(dict(zip(names, theta_mm)), abs=1e-9)
    # It is the maximum: any small move lowers the likelihood.
    best = likelihood.loglik(np.array(theta_mm))
    for k in range(4):
        for d in (-1e-3, 1e-3):
            moved = np.array(theta_mm)
            moved[k] += d
            assert likelihood.loglik(moved) < best


def test_the_batch_rating_does_not_depend_on_game_order() -> None:
    games = [("a", "b")] * 6 + [("b", "a")] * 2 + [("b", "c")] * 5 + [("c", "b")] * 3
    records = duel(games)
    shuffled = [dict(r) for r in records]
    random.Random(1).shuffle(shuffled)
    for new_id, r in enumerate(shuffled):
        r["id"] = r["group"] = new_id
    a = analyse(records, ["a", "b", "c"], resamples=0)
    b = analyse(shuffled, ["a", "b", "c"], resamples=0)
    assert a.theta == pytest.approx(b.theta, abs=1e-9)
    assert a.order() == ["a", "b", "c"]


def test_an_unbeaten_entrant_has_a_finite_rating() -> None:
    a = analyse(duel([("a", "b")] * 10), ["a", "b"], resamples=50)
    assert math.isfinite(a.theta["a"]) and a.theta["a"] > 0 > a.theta["b"]


# ----- the bootstrap -------------------------------------------------------------------------


def test_whole_deal_groups_are_resampled() -> None:
    """Every duplicate deal is split (each entrant wins it once): resampling deals cannot
    tell the entrants apart, resampling single games can."""
    games = [("a", "b"), ("b", "a")] * 20
    dup = analyse(duel(games, duplicate=True), ["a", "b"], resamples=300, seed=3)
    plain = analyse(duel(games, duplicate=False), ["a", "b"], resamples=300, seed=3)
    assert dup.groups == 20 and plain.groups == 40
    assert dup.ci["a"] == pytest.approx((0.0, 0.0), abs=1e-9)
    assert dup.above_share("a", "b") == 0.5
    assert plain.ci["a"][1] - plain.ci["a"][0] > 0.5


def test_groups_are_the_records_sharing_group() -> None:
    records = [rec(0, ["a", "b"], [1, 2], 7), rec(1, ["b", "a"], [1, 2], 7), rec(2, ["a", "b"], [2, 1], 9)]
    assert [[r["id"] for r in g] for g in deal_groups(records)] == [[0, 1], [2]]


def test_the_bootstrap_is_deterministic_and_independent_of_record_order() -> None:
    games = [("a", "b")] * 7 + [("b", "a")] * 5 + [("c", "a")] * 4 + [("a", "c")] * 4
    records = duel(games, duplicate=True)
    one = analyse(records, ["a", "b", "c"], resamples=200, seed=11)
    two = analyse(list(reversed(records)), ["a", "b", "c"], resamples=200, seed=11)
    other = analyse(records, ["a", "b", "c"], resamples=200, seed=12)
    assert one.ci == two.ci and one.samples == two.samples
    assert one.samples != other.samples


def test_resamples_are_the_fits_of_the_drawn_groups() -> None:
    """The bootstrap adds up and refits its resamples on arrays; each resample is the fit of
    the same draws summed with the pure-Python `_total`, and that fit is the maximum MM
    climbs to. Tables of 2 to 4 with ties (risk sets of every size), and starts near θ and
    far from it (where Newton steps are halved)."""
    rng = random.Random(5)
    names = [f"e{i}" for i in range(7)]
    records = []
    for i in range(150):
        seats = rng.sample(names, rng.choice([2, 3, 4]))
        records.append(rec(i, seats, [rng.randint(1, len(seats)) for _ in seats], group=i // 3))
    data = DealBootstrap(records, names)
    draws = np.random.default_rng(9)
    for k, (theta, places) in enumerate(data.resamples(30, seed=9)):
        drawn = data.draw(draws)
        assert drawn.sum() == data.groups
        acc = data._total(dict(enumerate(drawn.tolist())))
        assert theta == pytest.approx(data.refit(np.array(acc), np.array(data.theta)).tolist(), abs=1e-9)
        assert places == pytest.approx(data._places(acc[data._place_slot:]), abs=1e-12)
        far = [3.0 * (-1) ** i for i in range(data.n)]
        refit = data.refit(np.array(acc), np.array(far), tol=1e-10).tolist()
        assert theta == pytest.approx(refit, abs=1e-3)  # a refit stops at a step under 1e-2
        if k < 3:
            sets = [(m, acc[b], acc[b + 1:b + 1 + len(m)]) for m, b in data._sets_at if acc[b] > 0]
            assert refit == pytest.approx(_mm(sets, data.n, data.prior), abs=1e-8)


def _pl_games(names: list[str], games: int, sizes: list[int], seed: int, group: int = 1,
              ties: float = 0.0) -> list[dict[str, Any]]:
    """Plackett–Luce games of entrants of strength θ = −0.2 · index (Gumbel noise, best
    first), `group` consecutive games sharing a deal group (the same seats, rotated);
    a share `ties` of the games has its places below the first shared."""
    rng = random.Random(seed)
    out = []
    for i in range(games):
        if i % group == 0:
            seats = rng.sample(names, rng.choice(sizes))
        else:
            seats = seats[1:] + seats[:1]
        noise = [-0.2 * names.index(s) - math.log(-math.log(rng.random())) for s in seats]
        order = sorted(range(len(seats)), key=lambda k: -noise[k])
        places = [0] * len(seats)
        for p, k in enumerate(order, 1):
            places[k] = p
        if rng.random() < ties:
            places = [min(p, 2) for p in places]
        out.append(rec(i, list(seats), places, group=i // group))
    return out


@pytest.mark.parametrize("group,ties,sizes", [(1, 0.0, [4]), (2, 0.1, [2, 3, 4]), (4, 0.2, [4])])
def test_the_normal_approximation_fits_the_same_theta_and_spreads_as_the_bootstrap(group: int, ties: float,
                                                                                  sizes: list[int]) -> None:
    """Where the exact resampling of deal groups is too costly (`EXACT_LIMIT`), its normal
    approximation takes over: the same θ (every game's stages, the same prior; shared
    places and duplicate groups included), the same mean places, and resamples whose
    spread matches the exact bootstrap's (here 600 draws of each: the standard errors agree
    to the draws' own noise)."""
    names = [f"e{i}" for i in range(8)]
    records = _pl_games(names, 3000, sizes, seed=group, group=group, ties=ties)
    exact, normal = DealBootstrap(records, names), NormalBootstrap(GameArrays.from_records(records, names), names)
    assert normal.theta == pytest.approx(exact.theta, abs=1e-9)
    assert normal.mean_place == pytest.approx(exact.mean_place, abs=1e-12)
    assert normal.entrant_games == exact.entrant_games and normal.groups == exact.groups
    e = np.array([th for th, _ in exact.resamples(600, 3)])
    m = np.array([th for th, _ in normal.resamples(600, 3)])
    assert np.allclose(m.std(axis=0), e.std(axis=0), rtol=0.2)
    assert np.allclose(np.std(m[:, :1] - m[:, 1:], axis=0), np.std(e[:, :1] - e[:, 1:], axis=0), rtol=0.2)
    ep = np.array([p for _, p in exact.resamples(600, 4)])
    mp = np.array([p for _, p in normal.resamples(600, 4)])
    assert np.allclose(mp.std(axis=0), ep.std(axis=0), rtol=0.2)
    assert list(normal.resamples(5, 7)) == list(normal.resamples(5, 7))  # drawn from the seed alone


def test_the_normal_approximation_does_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its sums run a chunk of games at a time; with chunks of 3 games the fit and the
    draws are those of one chunk (to rounding: the covariance's null direction, where the
    scores of a game add up to nothing, is not left to rounding noise)."""
    names = [f"e{i}" for i in range(5)]
    records = _pl_games(names, 60, [2, 3, 4], seed=4, group=2, ties=0.2)
    whole = NormalBootstrap(GameArrays.from_records(records, names), names)
    monkeypatch.setattr(game_arrays, "CHUNK", 3)
    chunked = NormalBootstrap(GameArrays.from_records(records, names), names)
    assert chunked.theta == pytest.approx(whole.theta, abs=1e-12)
    for (a, pa), (b, pb) in zip(whole.resamples(20, 1), chunked.resamples(20, 1)):
        assert a == pytest.approx(b, abs=1e-12) and pa == pytest.approx(pb, abs=1e-12)


def test_a_deal_group_with_a_game_of_negative_index_stays_one_group() -> None:
    records = [rec(-1, ["a", "b"], [1, 2], group="x"), rec(5, ["b", "a"], [1, 2], group="x")]
    assert GameArrays.from_records(records, ["a", "b"]).groups == 1


def test_a_field_of_many_kinds_of_game_is_analysed_in_the_normal_approximation_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"e{i}" for i in range(8)]
    records = _pl_games(names, 600, [4], seed=3)
    assert isinstance(bootstrap_of(records, names), DealBootstrap)
    _, section = report(records, names, resamples=50)
    assert section["method"]["intervals"] == "bootstrap" and "normal" not in section["method"]["bootstrap"]
    exact = pl_theta(records, names)
    monkeypatch.setattr(plackett_luce, "EXACT_LIMIT", 100)
    assert isinstance(bootstrap_of(records, names), NormalBootstrap)
    theta, games = pl_theta(records, names)  # early stopping's fit: on every game's stages too
    assert games == exact[1] and [theta[e] for e in names] == pytest.approx([exact[0][e] for e in names], abs=1e-9)
    a, section = report(records, names, resamples=50)
    assert section["method"]["intervals"] == "normal" and "sandwich" in section["method"]["bootstrap"]
    assert a.resamples == 50 and all(a.ci[e][0] < a.theta[e] < a.ci[e][1] for e in names)


def _big(games: int, width: int, duplicate: bool, entrants: int = 100, tied: bool = False) -> GameArrays:
    """Synthetic games of a large field as arrays: random tables of `width`, places drawn
    from Plackett–Luce strengths; with `duplicate`, groups of `width` games with the first
    game's seats rotated; with `tied`, every game's places all shared."""
    rng = np.random.default_rng(1)
    seats = np.argsort(rng.random((games, entrants)), axis=1)[:, :width].astype(np.int32)
    if duplicate:
        first = seats[(np.arange(games) // width) * width]
        turn = (np.arange(width)[None, :] + (np.arange(games) % width)[:, None]) % width
        seats = np.take_along_axis(first, turn, axis=1)
    noise = -0.02 * seats + rng.gumbel(size=seats.shape)
    places = (np.argsort(np.argsort(-noise, axis=1), axis=1) + 1).astype(np.int16)
    if tied:
        places[:] = 1
    ids = np.arange(games, dtype=np.int64)
    return GameArrays.build([f"e{i:03d}" for i in range(entrants)], ids, ids // width if duplicate else -1 - ids,
                            seats, places)


@pytest.mark.parametrize("width,duplicate,exact", [(2, False, True), (4, False, False), (2, True, False),
                                                  (4, True, False)])
def test_the_statistics_of_a_big_field_need_little_memory_beyond_the_games(
        width: int, duplicate: bool, exact: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The working memory of the whole statistics section (`report`: the fit, resamples,
    paired deals, pairs met, luck share) over 100 entrants' games beyond the games' own
    arrays grows by well under their size a game: from 70,000 to 210,000 games, under 60
    bytes a game (tracemalloc; the arrays take 29 to 41), the bootstrap exact or in its
    normal approximation. (The exact bootstrap of duplicate deals works group by group; it
    is taken only up to `EXACT_GROUPS` groups.)"""
    monkeypatch.setattr(bootstrap, "EXACT_GROUPS", 10 ** 9 if exact else 0)
    peaks, methods = _report_peaks((70_000, 210_000), width, duplicate)
    assert set(methods) == {"bootstrap" if exact else "normal"}
    assert (peaks[1] - peaks[0]) / 140_000 < 60, peaks


def _report_peaks(sizes: tuple[int, ...], width: int, duplicate: bool, tied: bool = False) -> tuple[list[int], list[str]]:
    """The peak of what `report` allocates (tracemalloc) over `_big` fields of each size, and
    the method of its intervals."""
    import tracemalloc

    peaks, methods = [], []
    for games in sizes:
        arr = _big(games, width, duplicate, tied=tied)
        tracemalloc.start()
        try:
            a, _ = report(arr, arr.entrants, resamples=20)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        methods.append(a.method)
        if tied:
            assert all(abs(t) < 1e-6 for t in a.theta.values())
    return peaks, methods


def test_games_with_every_place_shared_cost_the_statistics_no_memory_a_game() -> None:
    """Bots that tie every game on purpose (every place shared, every table different)
    must not make the end of a run hold the stages of every game: the normal
    approximation's fit works them out a chunk at a time, a pattern of shared places at a
    time. From 20,000 to 60,000 such games, the working memory grows by under 150 bytes a
    game (tracemalloc; 112 measured: the six pairs' paired deals, sorted; held for every
    game, the stages took some 680 bytes a game, and 6 KB while they were worked out)."""
    peaks, methods = _report_peaks((20_000, 60_000), 4, False, tied=True)
    assert set(methods) == {"normal"}
    assert (peaks[1] - peaks[0]) / 40_000 < 150, peaks


# ----- the report ----------------------------------------------------------------------------


def test_pairs_met_counts_games_at_the_same_table() -> None:
    records = [rec(0, ["a", "b", "c"], [1, 2, 3]), rec(1, ["a", "b"], [1, 2]), rec(2, ["c", "b"], [1, 2])]
    met = pairs_met(records, ["a", "b", "c"])
    assert met["a"] == {"b": 2, "c": 1} and met["b"] == {"a": 2, "c": 2}


def test_luck_share_of_split_deals_is_one_and_of_plain_deals_unknown() -> None:
    split = duel([("a", "b"), ("b", "a")] * 10, duplicate=True)
    assert luck_share(split, ["a", "b"])["share"] == pytest.approx(1.0)
    same = duel([("a", "b"), ("a", "b"), ("b", "a"), ("b", "a")] * 5, duplicate=True)
    assert luck_share(same, ["a", "b"])["share"] < -0.9  # a deal's games go the same way
    assert luck_share(duel([("a", "b"), ("b", "a")] * 10), ["a", "b"])["share"] is None


def test_the_leaderboard_is_ordered_by_the_batch_rating_with_trueskill_beside_it() -> None:
    # a beats b clearly, then b and c are close. Online TrueSkill (μ − 3σ) would put c
    # first: a's wins came early. The board's order is the batch rating's, and its marks
    # and order line come from the same order.
    games = [("a", "b")] * 30 + [("b", "a")] * 2 + [("b", "c")] * 17 + [("c", "b")] * 15
    board = build_leaderboard(duel(games), ["c", "b", "a"], "t", 3)
    rows = board["entrants"]
    assert [r["entrant"] for r in rows] == ["a", "b", "c"]
    assert max(rows, key=lambda r: r["conservative"])["entrant"] == "c"  # TrueSkill, beside it, disagrees
    assert list(rows[0])[: len(COLUMNS)] == COLUMNS  # the old keys first, as before
    for r in rows:
        assert r["ci_low"] <= r["pl_strength"] <= r["ci_high"]
    assert [r["settled_above"] for r in rows] == [True, False, None]
    assert [r["next"] for r in rows] == ["settled", "no evidence of a difference", None]
    st = board["statistics"]
    assert st["order"] == ["a", "b", "c"] and st["test"] == "fixed"
    assert st["pairs_met"]["a"]["b"] == 32 and st["pairs_met"]["a"]["c"] == 0
    nb = {(x["upper"], x["lower"]): x for x in st["neighbours"]}
    assert nb["a", "b"]["games_to_settle"] == 0 and nb["a", "b"]["upper_better"] == 30
    assert nb["b", "c"]["games_to_settle"] is None  # no evidence: no count of games is promised
    header = to_csv(board).splitlines()[0].split(",")
    assert header == COLUMNS + STATS_COLUMNS
    md = to_markdown(board)
    assert "Order: a > b ≈ c" in md and "| no evidence of a difference |" in md
    assert "at most 5 %" in md and "TrueSkill" in md


def test_a_board_of_early_stopping_uses_the_anytime_valid_test() -> None:
    games = [("a", "b")] * 9 + [("b", "a")] * 1
    fixed = build_leaderboard(duel(games), ["a", "b"], "t", 3)
    seq = build_leaderboard(duel(games), ["a", "b"], "t", 3, sequential=True)
    assert fixed["entrants"][0]["settled_above"] and fixed["statistics"]["test"] == "fixed"
    assert not seq["entrants"][0]["settled_above"] and seq["statistics"]["test"] == "sequential"
    assert seq["entrants"][0]["next"] == "too few deals"  # the anytime test needs 11 informative deals


def test_trueskill_draw_probability_from_the_variant_or_the_games() -> None:
    from harness.ratings.trueskill import Ratings, draw_probability_for, rules_draw_probability

    assert draw_probability_for(2) == 0.059 and draw_probability_for(10) == 0.01
    assert 0.01 < draw_probability_for(5) < 0.059
    assert rules_draw_probability(Rules.from_dict({"phases": [1, 2]})) == 0.059
    assert rules_draw_probability(Rules.from_dict({})) == 0.01
    assert Ratings(["a"], 0.059).env.draw_probability == 0.059
    board = build_leaderboard([rec(0, ["a", "b"], [1, 1])], ["a", "b"], "t", 1, draw_probability=0.059)
    assert board["entrants"][0]["mu"] == 25.0  # a shared place between equals moves nothing


# ----- configuration and schedule ------------------------------------------------------------


def _cfg(**over: Any) -> dict[str, Any]:
    return {"name": "t", "seed": 1, "bots": [{"name": n, "cmd": "true"} for n in ("a", "b", "c")], **over}


@pytest.mark.parametrize("over, key", [
    ({"stop": {"top": 1}}, "stop"),
    ({"stop_when": "converged"}, "stop_when"),
    ({"stop_when": "settled", "stop": {"tops": 1}}, "stop.tops"),
    ({"stop_when": "settled", "stop": {"top": 4}}, "stop.top"),
    ({"stop_when": "settled", "stop": {"confidence": 1}}, "stop.confidence"),
    ({"stop_when": "settled", "stop": {"round_games": 0}}, "stop.round_games"),
    ({"stop_when": "settled", "stop": {"min_games": -1}}, "stop.min_games"),
    ({"stop_when": "settled", "stop": {"resamples": 10}}, "stop.resamples"),
    ({"stop_when": "settled", "stop": [1]}, "stop"),
    ({"stop_when": "sprt"}, "stop.candidate"),
    ({"stop_when": "sprt", "stop": {"candidate": "z"}}, "stop.candidate"),
    ({"stop_when": "sprt", "stop": {"candidate": "a", "baseline": "a"}}, "stop.baseline"),
    ({"stop_when": "sprt", "stop": {"candidate": "a", "elo0": 10, "elo1": 5}}, "stop.elo1"),
    ({"stop_when": "sprt", "stop": {"candidate": "a", "alpha": 0.7}}, "stop.alpha"),
    ({"stop_when": "sprt", "stop": {"candidate": "a", "top": 1}}, "stop.top"),
])
def test_stop_settings_are_checked_with_the_key_named(over: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=rf"<config>: {key}: "):
        config_from(_cfg(**over))


def test_stop_defaults_scale_with_the_field() -> None:
    cfg = config_from(_cfg(stop_when="settled"))
    assert (cfg.stop.top, cfg.stop.confidence, cfg.stop.round_games, cfg.stop.min_games, cfg.stop.resamples) == \
        (None, 0.95, 15, 30, 1000)
    assert "stop_when" not in config_from(_cfg()).resolved()  # old results folders keep their fingerprint
    assert set(cfg.resolved()["stop"]) == {"top", "confidence", "round_games", "min_games", "resamples"}
    sprt_cfg = config_from(_cfg(stop_when="sprt", stop={"candidate": "a", "baseline": "b"}))
    assert (sprt_cfg.stop.elo0, sprt_cfg.stop.elo1, sprt_cfg.stop.alpha, sprt_cfg.stop.beta) == (0, 50, 0.05, 0.05)


def test_early_stopping_takes_tables_in_turn_and_rounds_keep_deals_whole() -> None:
    plain = schedule(config_from(_cfg(games_per_table=6, duplicate=True)))
    turns = schedule(config_from(_cfg(games_per_table=6, duplicate=True, stop_when="settled")))
    assert sorted((s.seats, s.seed) for s in plain) == sorted((s.seats, s.seed) for s in turns)
    tables = [frozenset(s.seats) for s in turns]
    assert tables[:6] == [frozenset("ab")] * 2 + [frozenset("ac")] * 2 + [frozenset("bc")] * 2
    rounds = plan_rounds(turns, 5)
    assert [len(r) for r in rounds] == [6, 6, 6]
    assert all(r[0].group != prev[-1].group for prev, r in zip(rounds, rounds[1:]))


# ----- the runner ----------------------------------------------------------------------------


def _tournament(tmp: Path, parallel: int, **over: Any) -> Path:
    py = sys.executable
    cfg = {
        "name": "stop", "seed": 5,
        "bots": [{"name": "greedy", "cmd": [py, str(ROOT / "bots/python/greedy.py")]},
                 {"name": "random", "cmd": [py, str(ROOT / "bots/python/random_bot.py"), "7"]},
                 {"name": "random2", "cmd": [py, str(ROOT / "bots/python/random_bot.py"), "8"]}],
        "table_size": 2, "games_per_table": 40, "duplicate": True, "parallel": parallel,
        "rules": {"phases": [1, 2, 3]}, "replays": "none", "output": str(tmp / "out"),
        "stop_when": "settled", "stop": {"top": 1, "round_games": 12, "min_games": 12},
    }
    cfg.update(over)
    (tmp / "t.yaml").write_text(yaml.safe_dump(cfg))
    return tmp / "t.yaml"


def test_runner_stops_when_the_top_is_settled_whatever_the_parallelism(tmp_path: Path) -> None:
    outs = []
    for parallel in (1, 2):
        d = tmp_path / f"p{parallel}"
        d.mkdir()
        cfg = load_config(_tournament(d, parallel))
        outcome = run_tournament(cfg, build_site=False)
        assert outcome.finished and outcome.stopping["reason"] == "settled"
        assert outcome.played == outcome.stopping["games"] < outcome.total == 120
        outs.append(cfg.output)
    a, b = outs
    games_of = [[{**json.loads(x), "duration_s": 0, "replay_sha256": None, "chain": None} for x in (o / "games.jsonl").read_text().splitlines()]
                for o in outs]
    assert sorted(games_of[0], key=lambda r: r["id"]) == sorted(games_of[1], key=lambda r: r["id"])
    for name in ("leaderboard.md", "stats.md", "leaderboard.csv"):
        assert (a / name).read_text() == (b / name).read_text(), name
    board = json.loads((a / "leaderboard.json").read_text())
    games = board["stopping"]["games"]
    assert board["stopping"]["note"] == f"settled after {games} games (budget 120)"
    assert f"settled after {games} games" in (a / "leaderboard.md").read_text()
    assert board["entrants"][0]["entrant"] == "greedy" and board["entrants"][0]["settled_above"]
    # Running it again plays nothing and gives the same reason.
    again = run_tournament(load_config(_tournament(tmp_path / "p1", 1)), build_site=False)
    assert again.played == 0 and again.stopping == json.loads((a / "leaderboard.json").read_text())["stopping"]


def test_runner_reports_the_budget_when_the_order_never_settles(tmp_path: Path) -> None:
    cfg = load_config(_tournament(tmp_path, 2, games_per_table=4, stop={"round_games": 6, "min_games": 6}))
    outcome = run_tournament(cfg, build_site=False)
    assert outcome.finished and outcome.played == 12
    assert outcome.stopping["reason"] == "budget"
    assert "budget of 12 games reached" in (cfg.output / "stats.md").read_text()


def test_runner_sprt_accepts_a_better_candidate_and_reports_the_llr_as_it_goes(tmp_path: Path) -> None:
    cfg = load_config(_tournament(tmp_path, 1, stop_when="sprt",
                                  stop={"candidate": "greedy", "baseline": "random", "elo1": 200, "round_games": 12,
                                        "min_games": 12}))
    seen: list[Any] = []
    outcome = run_tournament(cfg, build_site=False, on_progress=lambda p: seen.append(p.stopping))
    assert outcome.finished and outcome.stopping["reason"] == "accepted"
    assert outcome.played == outcome.stopping["games"] < outcome.total
    looks = [s for s in seen if s]
    assert looks and all(s["sprt"]["lower"] < s["sprt"]["llr"] < s["sprt"]["upper"] for s in looks[:-1])
    assert looks[-1]["sprt"]["llr"] >= looks[-1]["sprt"]["upper"]

    assert progress_text(looks[-1]).startswith("LLR ") and progress_text(looks[-1]).endswith("H1 accepted")
    board = json.loads((cfg.output / "leaderboard.json").read_text())
    assert board["stopping"]["sprt"]["decision"] == "H1" and board["statistics"]["test"] == "sequential"
    assert "SPRT greedy vs random: H1 accepted" in (cfg.output / "leaderboard.md").read_text()


# ----- the cost of the statistics, and measurements for BENCHMARKS.md ------------------------
#
# The calibration of the marks (false settles, coverage, power) is tools/calibrate.py; a
# small version of it runs in tests/test_calibration.py.


def _synthetic(entrants: int, size: int, games: int, seed: int = 1) -> tuple[list[str], list[dict[str, Any]]]:
    """A duplicate tournament of made-up places: random tables, each deal in every
    rotation, places from strength plus normal noise."""
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(entrants)]
    strength = {e: 2 * rng.random() for e in names}
    records: list[dict[str, Any]] = []
    group = 0
    while len(records) < games:
        table = rng.sample(names, size)
        for k in range(size):
            seats = table[k:] + table[:k]
            ranked = sorted(seats, key=lambda e: -(strength[e] + rng.gauss(0, 1)))
            records.append(rec(len(records), seats, [ranked.index(e) + 1 for e in seats], group))
        group += 1
    return names, records


def _cost() -> None:
    print("| entrants | table size | games | analyse | check_settled | build_leaderboard |")
    print("|---|---|---|---|---|---|")
    for entrants, size, games in ((3, 2, 300), (4, 2, 1000), (10, 4, 2000), (20, 4, 4000)):
        names, records = _synthetic(entrants, size, games)
        t = time.process_time()
        analyse(records, names)
        ta = time.process_time() - t
        t = time.process_time()
        check_settled(records, names)
        tc = time.process_time() - t
        t = time.process_time()
        build_leaderboard(records, names, "t", 1)
        tb = time.process_time() - t
        print(f"| {entrants} | {size} | {games} | {ta:.2f} | {tc:.2f} | {tb:.2f} |")


def _pairs(phases: list[int], deals: int) -> None:
    """Each pair of p values plays `deals` deals both ways: how often a deal is split, and
    how many times fewer games duplicate deals need for the same precision of the win rate."""
    rules = Rules.from_dict({"phases": phases})
    for pa, pb in ((0, 0), (0, 0.1), (0, 0.15), (0.1, 0.25), (0.15, 0.5), (0.2, 0.6)):
        wins = []
        for s in range(deals):
            one = play_local(rules, [NoisyGreedyStrategy(pa, 1), NoisyGreedyStrategy(pb, 2)], s, game_id=f"a{s}")
            two = play_local(rules, [NoisyGreedyStrategy(pb, 2), NoisyGreedyStrategy(pa, 1)], s, game_id=f"b{s}")
            p1, p2 = one.places(), two.places()
            wins.append((p1[0] < p1[1]) + (p2[1] < p2[0]) + 0.5 * (p1[0] == p1[1]) + 0.5 * (p2[0] == p2[1]))
        mean = sum(wins) / deals
        p = mean / 2
        v_dup = sum((w - mean) ** 2 for w in wins) / deals / 2  # per game
        split = sum(w == 1 for w in wins) / deals
        eff = p * (1 - p) / v_dup if v_dup else float("inf")
        print(f"phases {phases}: p={pa} vs p={pb}: first wins {p:.3f}, deals split {split:.2f} "
              f"(independent games: {2 * p * (1 - p):.2f}), plain/duplicate games for the same precision {eff:.2f}")


def main(argv: list[str] | None = None) -> None:
    """Other figures of BENCHMARKS.md (## Statistics):

        python tests/test_stats.py pairs
        python tests/test_stats.py cost
    """
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["pairs", "cost"])
    ap.add_argument("--deals", type=int, default=200, help="deals per pair (pairs)")
    args = ap.parse_args(argv)
    if args.kind == "cost":
        return _cost()
    for phases in ([1, 2], [1, 2, 3]):
        _pairs(phases, args.deals)


if __name__ == "__main__":
    main()


@pytest.mark.parametrize("group,ties,sizes,spread", [(1, 0.0, [2], False), (2, 0.1, [2, 3, 4], False),
                                                     (4, 0.2, [4], False), (3, 0.1, [3], True)])
@pytest.mark.parametrize("normal", [False, True])
def test_the_board_s_statistics_do_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch, group: int,
                                                                ties: float, sizes: list[int], spread: bool,
                                                                normal: bool) -> None:
    """Everything the statistics sum over games runs a chunk of games at a time (the kinds
    of game and their counts, the deal groups, each entrant's seats for the luck share, the
    paired deals): with chunks of 3 or 7 games the board's statistics are those of one chunk,
    on plain and duplicate deals, shared places, mixed tables, exact and normal bootstrap,
    and deal groups whose games are not consecutive (`spread`)."""
    names = [f"e{i}" for i in range(7)]
    records = _pl_games(names, 240, sizes, seed=group + 10 * normal, group=group, ties=ties)
    if spread:  # the same groups, their games interleaved with other groups' games
        order = sorted(range(len(records)), key=lambda k: (k % group, k // group))
        records = [dict(records[k], id=i, game=f"g{i:06d}") for i, k in enumerate(order)]
    if normal:
        monkeypatch.setattr(plackett_luce, "EXACT_LIMIT", 10)
    whole = report(records, names, resamples=40, seed=5)[1]
    theta, games = pl_theta(records, names)
    assert whole["method"]["intervals"] == ("normal" if normal else "bootstrap")
    for chunk in (3, 7):
        monkeypatch.setattr(game_arrays, "CHUNK", chunk)
        assert report(records, names, resamples=40, seed=5)[1] == whole
        th, g = pl_theta(records, names)
        assert g == games and [th[e] for e in names] == pytest.approx([theta[e] for e in names], abs=1e-12)


def test_kinds_of_game_counted_a_chunk_at_a_time_are_those_of_one_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"e{i}" for i in range(5)]
    arr = GameArrays.from_records(_pl_games(names, 300, [2, 3, 4], seed=8, group=2, ties=0.2), names)
    kind, first = game_arrays.game_kinds(arr)
    monkeypatch.setattr(game_arrays, "CHUNK", 7)
    counted = game_arrays.kind_counts(arr)
    assert counted is not None
    f, c = counted
    assert f.tolist() == first.tolist() and c.tolist() == np.bincount(kind).tolist()
    assert game_arrays.kind_counts(arr, len(first) - 1) is None and game_arrays.kind_counts(arr, len(first)) is not None


def test_the_stages_of_games_with_shared_places_are_game_stages_worked_out_by_pattern(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Games with shared places are taken a pattern at a time (table size and which places
    are shared), a few games at a time, and untied games straight from their order: each
    game gets exactly the stages `game_stages` gives it, with its seats."""
    monkeypatch.setattr(game_arrays, "CHUNK", 48)  # games with shared places taken 3 at a time
    rng = random.Random(3)
    records = []
    for i in range(400):
        seats = rng.sample([f"e{k}" for k in range(9)], rng.choice([2, 3, 4, 5, 6]))
        places = sorted(rng.choice([1, 1, 2, 3]) for _ in seats)
        rng.shuffle(places)
        places = [sorted(set(places)).index(p) + 1 for p in places]
        records.append(rec(i, seats, places))
    names = [f"e{k}" for k in range(9)]
    arr = GameArrays.from_records(records, names)
    got: dict[int, list] = {}
    for who, w, chosen, game, seat in plackett_luce.game_blocks(arr, 0, arr.games):
        for r in range(len(game)):
            g = int(game[r])
            assert [arr.seats[g, s] for s in seat[r]] == who[r].tolist()
            got.setdefault(g, []).append((tuple(who[r].tolist()), float(w[r]), tuple(chosen[r].tolist())))
    for g, r in enumerate(records):
        idx = [names.index(s) for s in r["seats"]]
        assert sorted(got.get(g, [])) == sorted(game_stages(idx, r["places"])), g


@pytest.mark.parametrize("group,sizes,chunk", [(1, [2], 5), (2, [2], 3), (4, [4], 7), (3, [2, 3, 4], 4), (2, [6], 1 << 16)])
def test_paired_deals_placed_by_counting_are_those_of_the_sort(monkeypatch: pytest.MonkeyPatch, group: int,
                                                               sizes: list[int], chunk: int) -> None:
    """Deal groups in game order (a schedule's): each row is placed by counting the rows of
    its pair; the rows are exactly those of the sort of every row, a chunk of any size."""
    names = [f"e{i}" for i in range(6)]
    arr = GameArrays.from_records(_pl_games(names, 300, sizes, seed=group, group=group, ties=0.2), names)
    monkeypatch.setattr(paired, "PAIRS_COUNTED", 0)
    sorted_ = paired_deals(arr, names)
    monkeypatch.undo()
    monkeypatch.setattr(game_arrays, "CHUNK", chunk)
    counted = paired_deals(arr, names)
    for k in ("pair", "group", "sign"):
        a, b = getattr(counted, k), getattr(sorted_, k)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), k


def test_the_normal_approximation_draws_do_not_depend_on_the_signs_eigh_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounding in the sums can flip the sign eigh gives an eigenvector of the covariance:
    the draws of a seed must not change with it (the symmetric square root is used)."""
    names = [f"e{i}" for i in range(6)]
    arr = GameArrays.from_records(_pl_games(names, 400, [3, 4], seed=9, group=2, ties=0.2), names)
    plain = list(NormalBootstrap(arr, names).resamples(20, 3))
    eigh = np.linalg.eigh

    def flipped(m: Any) -> Any:
        vals, vecs = eigh(m)
        return vals, vecs * np.where(np.arange(len(vals)) % 2, -1.0, 1.0)

    monkeypatch.setattr(np.linalg, "eigh", flipped)
    for (a, pa), (b, pb) in zip(plain, NormalBootstrap(arr, names).resamples(20, 3)):
        assert a == pytest.approx(b, abs=1e-12) and pa == pytest.approx(pb, abs=1e-12)
