"""What the statistics section of a board costs over a large synthetic field.

    python tests/benchmarks/stats_cost.py GAMES WIDTH [--tied]

Builds `tests/test_stats.py::_big(GAMES, WIDTH)` (100 entrants, random tables of WIDTH,
places drawn from Plackett–Luce strengths, plain deals; with --tied every place shared),
then times `section.report` (1,000 resamples) by the process's CPU clock and, in a second
run, measures its working memory beyond the games' own arrays with tracemalloc.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from harness.ratings.section import report  # noqa: E402
from test_stats import _big  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", type=int)
    ap.add_argument("width", type=int)
    ap.add_argument("--tied", action="store_true", help="every place of every game shared")
    a = ap.parse_args()
    arr = _big(a.games, a.width, False, tied=a.tied)
    size = sum(getattr(arr, k).nbytes for k in ("ids", "group", "size", "seats", "places"))
    t = time.process_time()
    analysis, _ = report(arr, arr.entrants)
    cpu = time.process_time() - t
    tracemalloc.start()
    report(arr, arr.entrants)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{a.games:,} games of {a.width}{', every place shared' if a.tied else ''}: the games' arrays "
          f"{size / 1e6:.1f} MB, working memory beyond them {peak / 1e6:.1f} MB, {cpu:.1f} s of CPU "
          f"(intervals: {analysis.method})")


if __name__ == "__main__":
    main()
