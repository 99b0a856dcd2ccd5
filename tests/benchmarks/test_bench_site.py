"""The results site of a big field: `report` (the site built from a results folder), and
the site's first view, search and sort in headless Chromium. Figures in BENCHMARKS.md,
section "Site of a big field".

    python -m pytest tests/benchmarks/test_bench_site.py --benchmark-enable -q -s -n 0

The folder: a thousand entrants, 20,000 synthetic games of four (2 % with a fault), from

    python tools/gen_journal.py FOLDER --entrants 1000 --games 20000 --fault-rate 0.02 --no-site

given as P10_BENCH_SITE=FOLDER (the random format's schedule of 20,000 games takes some
minutes to write; without the variable it is written into pytest's temporary folder).

- `report`: wall and CPU time (user + system) of `p10-tourney report FOLDER`, each round a
  fresh process, as a user runs it.
- first view: from the start of the navigation (file://) to the leaderboard answering
  (its rows in, its handlers on: `P10.boardReadyAt`), by the page's own clock; and to the
  whole page (the charts' data in too).
- search and sort: the time of the page's own handler for a typed name and for a click on
  a column (the table rendered and laid out), by the page's clock, median of 15 each.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from harness.cli import main; main()"]


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("P10_BENCH_SITE")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("bench-site") / "field"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_journal.py"), str(out), "--entrants", "1000",
                    "--games", "20000", "--fault-rate", "0.02", "--no-site"], check=True, capture_output=True)
    return out


def _report(results: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(CLI + ["report", str(results)], check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def test_report_of_1000_entrants(benchmark: Any, field: Path) -> None:
    times: list[tuple[float, float]] = []
    benchmark.pedantic(lambda: times.append(_report(field)), rounds=3, iterations=1)
    walls, cpus = [w for w, _ in times], [c for _, c in times]
    print(f"\nreport, {field}: wall {min(walls):.2f} s (median {statistics.median(walls):.2f}), "
          f"CPU {min(cpus):.2f} s (median {statistics.median(cpus):.2f}); load average {_load()}")
    assert (field / "site" / "index.html").is_file()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed")
def test_first_view_search_and_sort_at_1000_entrants(benchmark: Any, field: Path, tmp_path: Path) -> None:
    from test_site_browser import DevTools

    if not (field / "site" / "data" / "board.js").exists():
        _report(field)
    url = (field / "site" / "index.html").as_uri()
    views: list[tuple[float, float]] = []
    searches: list[float] = []
    sorts: list[float] = []
    browser = DevTools(str(tmp_path / "profile"))
    try:
        browser.call("Browser.getVersion", session=False, timeout=120)

        def one() -> None:
            browser.open(url)
            browser.wait_for("document.body.getAttribute('data-rendered') === '1'", timeout=120)
            views.append((browser.eval("P10.boardReadyAt"), browser.eval("performance.now()")))
            for i in range(15):
                searches.append(browser.eval(
                    "(function(){var s=document.getElementById('lb-search'),t=performance.now();"
                    "s.value='e0%d7';s.dispatchEvent(new Event('input'));document.body.offsetHeight;"
                    "var d=performance.now()-t;s.value='';s.dispatchEvent(new Event('input'));return d;})()" % (i % 10)))
                sorts.append(browser.eval(
                    "(function(){var h=document.querySelectorAll('#leaderboard-table th')[%d],t=performance.now();"
                    "h.click();document.body.offsetHeight;return performance.now()-t;})()" % (2 + i % 12)))
            assert browser.eval("document.getElementById('js-errors').dataset.count") == "0"

        benchmark.pedantic(one, rounds=3, iterations=1)
    finally:
        browser.close()
    first = [v for v, _ in views]
    print(f"\nfirst view (leaderboard answers): {min(first):.0f} ms (median {statistics.median(first):.0f}); "
          f"whole page (charts' data in): {min(w for _, w in views):.0f} ms; "
          f"search {statistics.median(searches):.1f} ms (max {max(searches):.1f}); "
          f"sort {statistics.median(sorts):.1f} ms (max {max(sorts):.1f}); load average {_load()}")
