"""The calibration of the leaderboards' confidence as a benchmark (disabled by default; run
with --benchmark-enable). A reduced tools/calibrate.py: 100 tournaments per equal-entrant
case, no power runs; the full figures are in BENCHMARKS.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent


def test_bench_calibration(benchmark: Any) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import calibrate as cal

    runs = 5 if benchmark.disabled else 100  # the ordinary test run only smoke-tests benchmarks
    # The leagues (a second a run) are left to tests/test_calibration.py in the ordinary run.
    parts = ("fixed", "settled", "sprt", "coverage") + (() if benchmark.disabled else ("league",))
    res = benchmark.pedantic(cal.calibrate, kwargs={"runs": runs, "power_seeds": 0, "coverage_runs": runs,
                                                    "echo": print, "parts": parts}, rounds=1, iterations=1)
    leagues = 0 if benchmark.disabled else len(cal.LEAGUE_CASES)
    assert len(res["false_rates"]) == len(cal.cases(runs)) + leagues and len(res["coverage"]) == 6
    if not benchmark.disabled:
        for row in res["false_rates"]:
            assert row["rate"] <= 0.1, row
        for row in res["coverage"]:
            assert row["rate"] >= 0.9, row
