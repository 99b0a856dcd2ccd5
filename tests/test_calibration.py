"""A small version of tools/calibrate.py (the full one is in BENCHMARKS.md, "How sure the
order is"): equal entrants through the real schedule, stopping check and leaderboard
rarely get a settled mark or an SPRT accept, the interval of the difference covers "no
difference", and real games of a greedy player against noisier ones settle in the right
order. Seeded: the same figures every run."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import calibrate as cal  # noqa: E402

RUNS = 40


@pytest.mark.parametrize("case", [c for c in cal.cases(RUNS) if c.entrants == 2 and not dict(c.stop).get("round_games")],
                         ids=lambda c: c.label)
def test_equal_entrants_are_rarely_called_different(case: Any) -> None:
    res = [cal.equal_case((case, 10_000 + s)) for s in range(RUNS)]
    false = sum(r["false"] for r in res)
    rate, lo, _ = cal.rate(false, RUNS)
    assert lo <= 0.05, (case.label, false)  # 40 runs cannot show ≤ 5 %, but they can refute it
    assert false <= 6
    if case.rule is None:
        assert all(r["covered"] is not None for r in res)
    if case.rule == "sprt":
        assert all(r["decided"] for r in res)  # an SPRT of equal entrants ends, and mostly with H0


def test_the_interval_of_the_difference_covers_no_difference() -> None:
    covered = [cal.coverage_case((dup, deals, 20_000 + s)) for dup in (True, False) for deals in (10, 30) for s in range(30)]
    assert sum(covered) >= 0.9 * len(covered)


def test_a_clearly_better_field_settles_in_the_right_order_in_real_games() -> None:
    run = cal.power_case((True, 300, 30_000))
    assert not run["wrong"]
    assert run["order"][0] == "greedy"


def test_the_report_prints_every_rate_with_its_interval() -> None:
    lines: list[str] = []
    res = cal.calibrate(runs=3, power_seeds=0, coverage_runs=3, parts=("fixed", "coverage"), echo=lines.append)
    assert len(res["false_rates"]) == 6 and len(res["coverage"]) == 6
    assert any("%" in x and "[" in x for x in lines)
    assert all(0 <= r["low"] <= r["rate"] <= r["high"] <= 1 for r in res["false_rates"])


def test_a_league_of_equal_entrants_is_looked_at_every_round_with_the_anytime_valid_test(monkeypatch) -> None:
    monkeypatch.setattr(cal, "LEAGUE_BUDGET", 200)
    run = cal.league_case((4, 2, False, None, 40_000))  # the board as a league publishes it
    assert run["looks"] == 200 // cal.LEAGUE_ROUND and run["games"] == 200 and not run["false"]
    lines: list[str] = []
    monkeypatch.setattr(cal, "LEAGUE_CASES", ((3, 2, False),))
    res = cal.calibrate(runs=2, parts=("league",), league_fixed=True, echo=lines.append)
    rows = res["false_rates"]
    assert [r["sequential"] for r in rows] == [True, False] and all(r["runs"] == 2 for r in rows)
    assert any("league, as published" in x for x in lines)


def test_the_rating_intervals_hold_the_true_strengths() -> None:
    """Entrants of known strength: the board's 95 % intervals of θ, the bootstrap exact
    and in its normal approximation, hold the true θ (as the prior anchors them) about
    95 % of the time. 12 tournaments of 6 entrants here (72 intervals each): at least 60;
    the figures from 400 are in BENCHMARKS.md."""
    lines: list[str] = []
    res = cal.calibrate(runs=12, parts=("rating",), echo=lines.append)
    assert [r["method"] for r in res["rating"]] == ["exact", "normal"]
    for row in res["rating"]:
        assert row["intervals"] == 72 and row["covered"] >= 60, row
    assert sum(1 - 2 / (1 + math.exp(-t)) for t in cal.rating_truth()) == pytest.approx(0, abs=1e-9)
    assert any("normal approximation" in x and "[" in x for x in lines)
