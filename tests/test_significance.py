"""The tests behind the settled marks (the sign test and its interval, the anytime-valid
mixture, Holm), the paired deal outcomes they read, early stopping's settled check and the
SPRT. Records are built with `test_stats.rec` and `duel`."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from harness.ratings.paired import paired_deals
from harness.ratings.significance import (clopper_pearson, holm, log_mixture, min_informative, mixture_interval,
                                          neighbour_tests, running_max_mixture, sign_test)
from harness.ratings.sprt import deal_scores, elo_to_score, score_to_elo, sprt
from harness.ratings.stopping import check_settled
from test_stats import duel, rec


# ----- the paired deal tests ----------------------------------------------------------------


def test_the_sign_test_and_its_interval_are_the_exact_binomial_ones() -> None:
    assert sign_test([0], [10])[0] == pytest.approx(2 / 1024)
    assert sign_test([3], [7])[0] == pytest.approx(0.34375)
    assert sign_test([5], [5])[0] == 1.0 and sign_test([0], [0])[0] == 1.0
    lo, hi = clopper_pearson(3, 10, 0.95)
    assert (lo[0], hi[0]) == pytest.approx((0.066739, 0.652453), abs=1e-5)  # the tabulated exact interval
    lo, hi = clopper_pearson(0, 10, 0.95)
    assert lo[0] == 0 and hi[0] == pytest.approx(1 - 0.025 ** 0.1, abs=1e-6)


def test_the_sign_test_and_its_interval_hold_in_exact_arithmetic_for_every_count() -> None:
    """Every count up to 40 deals, against binomial sums in fractions: the p-value is the
    exact one, and the interval's ends are where the exact tails are (1 − confidence)/2."""
    def tail(n: int, k: int, q: Fraction, upper: bool) -> Fraction:
        return sum((Fraction(math.comb(n, i)) * q ** i * (1 - q) ** (n - i)
                    for i in (range(k, n + 1) if upper else range(k + 1))), Fraction(0))

    for n in range(41):
        ks = np.arange(n + 1)
        p = sign_test(ks, n - ks)
        lo, hi = clopper_pearson(ks, np.full(n + 1, n), 0.95)
        for k in range(n + 1):
            exact = min(Fraction(1), 2 * tail(n, min(k, n - k), Fraction(1, 2), False))
            assert p[k] == pytest.approx(float(exact), rel=1e-13, abs=0), (n, k)
            if k > 0:
                assert float(tail(n, k, Fraction(lo[k]), True)) == pytest.approx(0.025, abs=1e-12), (n, k)
            if k < n:
                assert float(tail(n, k, Fraction(hi[k]), False)) == pytest.approx(0.025, abs=1e-12), (n, k)


def test_holm_multiplies_the_smallest_p_by_the_number_of_pairs_and_steps_down() -> None:
    assert list(holm([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    assert list(holm([0.5])) == [0.5]


def test_a_deal_counts_once_for_whoever_did_better_over_its_games() -> None:
    # deal 0: a wins both games; deal 1: split (level); deal 2: b wins both
    games = duel([("a", "b"), ("a", "b"), ("a", "b"), ("b", "a"), ("b", "a"), ("b", "a")], duplicate=True)
    better, level, both = paired_deals(games, ["a", "b"]).counts()
    assert (better[0, 1], better[1, 0], level[0, 1], both[0, 1]) == (1, 1, 1, 3)


def test_at_a_table_of_three_each_pair_is_its_own_comparison() -> None:
    records = [rec(0, ["a", "b", "c"], [1, 2, 3], 0), rec(1, ["b", "c", "a"], [1, 2, 3], 0)]
    better, level, _ = paired_deals(records, ["a", "b", "c"]).counts()
    assert better[1, 2] == 1 and better[2, 1] == 0  # b ahead of c in both games
    assert level[0, 1] == 1 and level[0, 2] == 1  # a and b, a and c: one game each way


def _wins(w: int, l: int, level: int = 0) -> list[dict[str, Any]]:
    """Duplicate deals of a and b: `w` a did better on, `l` b did, `level` split."""
    games = [("a", "b")] * 2 * w + [("b", "a")] * 2 * l + [("a", "b"), ("b", "a")] * level
    return duel(games, duplicate=True)


def test_the_verdicts_settled_open_no_evidence_and_too_few_deals() -> None:
    def verdict(w: int, l: int, level: int = 0) -> dict[str, Any]:
        return neighbour_tests(paired_deals(_wins(w, l, level), ["a", "b"]), ["a", "b"])[0]

    assert verdict(5, 0, 20)["verdict"] == "too few deals"  # 5 informative deals cannot reach 95 %
    assert verdict(6, 0)["verdict"] == "settled"  # p = 2 / 64 < 0.05
    v = verdict(12, 6)
    assert v["verdict"] == "open" and v["more_deals"] > 0 and v["share_low"] < 0.5 < v["share_high"]
    assert verdict(10, 9)["verdict"] == "no evidence of a difference"
    assert verdict(10, 9)["more_deals"] is None
    assert verdict(9, 10)["verdict"] == "no evidence of a difference" and not verdict(30, 0)["level"]
    assert min_informative(0.95) == 6 and min_informative(0.99) == 8


def test_holm_over_every_pair_makes_a_borderline_pair_wait() -> None:
    # a and b alone: 14 of 18 deals settle it (p = 0.031); with c in the field, three
    # pairs share the error rate and a pair at p = 0.031 alone cannot reach 0.05 / 3.
    two = _wins(14, 4)
    assert neighbour_tests(paired_deals(two, ["a", "b"]), ["a", "b"])[0]["settled"]
    three = two + [rec(100 + i, ["c", x], [1 + i % 2, 2 - i % 2], 100 + i) for i, x in enumerate("aabb")]
    nb = neighbour_tests(paired_deals(three, ["a", "b", "c"]), ["a", "b", "c"])
    assert not nb[0]["settled"] and nb[0]["p_adjusted"] == pytest.approx(min(1, 3 * nb[0]["p_value"]), abs=1e-5)


def test_the_sequential_test_keeps_its_error_rate_over_every_deal() -> None:
    """Ville's inequality: fair coins, 2000 sequences of 400 deals, looked at after every
    deal: the running mixture crosses 1/α in at most about α of them."""
    rng = np.random.default_rng(3)
    flips = rng.integers(0, 2, size=(2000, 400))
    k = flips.cumsum(axis=1)
    m = np.arange(1, 401)
    crossed = (log_mixture(k, m) >= math.log(20)).any(axis=1).mean()
    assert crossed <= 0.05
    # and a clear difference is found: 70 % of deals go one way
    k = rng.binomial(1, 0.7, size=(200, 400)).cumsum(axis=1)
    assert (log_mixture(k, m) >= math.log(20)).any(axis=1).mean() > 0.95


def test_the_running_maximum_is_over_the_deals_in_game_order() -> None:
    early = _wins(12, 0) + [rec(100 + i, ["a", "b"] if i % 2 else ["b", "a"], [2, 1] if i % 2 else [1, 2], 50 + i // 2)
                             for i in range(24)]
    deals = paired_deals(early, ["a", "b"])
    top = running_max_mixture(deals)[0, 1]
    better, _, _ = deals.counts()
    assert (better[0, 1], better[1, 0]) == (12, 12)
    assert top == pytest.approx(float(log_mixture(12, 12)))  # the peak after a's 12 deals counts
    assert neighbour_tests(deals, ["a", "b"], sequential=True)[0]["p_value"] == pytest.approx(math.exp(-top), rel=1e-4)
    lo, hi = mixture_interval(6, 12, 0.95)
    clo, chi = clopper_pearson(6, 12, 0.95)
    assert lo[0] < clo[0] and hi[0] > chi[0]  # anytime-valid: wider than the fixed-size interval


def test_check_settled_uses_the_sequential_test_on_the_pl_order() -> None:
    names = ["a", "b", "c"]
    # b and c split every deal: b wins its first game, c the replay
    vs_c = [r | {"id": r["id"] + 1000, "group": r["group"] + 1000, "seats": [x.replace("b", "c") for x in r["seats"]]}
            for r in _wins(30, 1)]
    strong = _wins(30, 2) + vs_c + [rec(200 + i, ["c", "b"] if i % 2 else ["b", "c"], [2, 1], 200 + i // 2)
                                    for i in range(40)]
    check = check_settled(strong, names, top=1)
    assert check.order == ["a", "b", "c"] and check.settled
    assert not check_settled(strong, names).settled  # b and c never differ
    assert check.tests[0]["verdict"] == "settled"
    assert [t["verdict"] for t in check_settled(strong, names).tests] == ["settled", "too few deals"]


# ----- the SPRT ------------------------------------------------------------------------------


def test_sprt_accepts_a_clearly_better_candidate_and_rejects_an_equal_one() -> None:
    better = sprt([1.0] * 60 + [0.0] * 30 + [0.5] * 30, 0, 50, 0.05, 0.05)
    assert better["decision"] == "H1" and better["llr"] >= better["upper"] == pytest.approx(math.log(20), abs=1e-3)
    assert better["lower"] == pytest.approx(math.log(0.05), abs=1e-3)  # Wald's conservative bounds
    equal = sprt([1.0, 0.0, 0.5] * 150, 0, 50, 0.05, 0.05)
    assert equal["decision"] == "H0" and equal["llr"] <= equal["lower"]
    assert sprt([], 0, 50, 0.05, 0.05)["decision"] is None
    assert elo_to_score(0) == 0.5 and score_to_elo(elo_to_score(120)) == pytest.approx(120)


def test_sprt_llr_is_that_of_the_trinomial_when_nothing_is_fitted() -> None:
    """With scores already distributed as H1 says, the MLE under H1 is the data itself."""
    s1 = elo_to_score(50)
    scores = [1.0] * 40 + [0.0] * 40 + [0.5] * 20
    t = sprt(scores, -50, 50, 0.05, 0.05)
    assert t["llr"] == pytest.approx(0.0, abs=0.05)  # the middle of the two: equally likely
    assert s1 > 0.5


def test_deal_scores_against_a_baseline_and_the_field() -> None:
    records = [rec(0, ["c", "b", "f"], [1, 2, 3], 0), rec(1, ["b", "f", "c"], [1, 2, 3], 0),
               rec(2, ["f", "c", "b"], [1, 2, 3], 0)]
    deals = paired_deals(records, ["c", "b", "f"])
    assert list(deal_scores(deals, "c", "b")) == [1.0]  # c ahead of b in two of the deal's three games
    assert list(deal_scores(deals, "c")) == [0.5]  # better than b, worse than f: half against the field
