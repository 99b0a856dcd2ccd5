"""What the paired deal tests' special functions cost, on the sizes a board of 100 entrants
asks for: the sign test of every pair that met (4,950), the Clopper–Pearson interval of
every pair of neighbours (99), Holm's correction over every pair, and the mixture
martingale (ln B) over a million (pair, deal) rows, as early stopping looks at it.

    python -m pytest tests/benchmarks/test_bench_special.py --benchmark-enable -n 0 -q

Each round draws new counts (no cache of a previous round helps). Figures are in
BENCHMARKS.md, "Statistics", "The special functions".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.ratings.significance import clopper_pearson, holm, log_mixture, sign_test

PAIRS = 4950  # every pair of 100 entrants
NEIGHBOURS = 99
ROWS = 1_000_000  # (pair, deal) rows of a long run
MOST = 2000  # informative deals of a pair, at most


def _counts(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(wins, losses) of `count` pairs."""
    n = rng.integers(0, MOST, count)
    w = rng.binomial(n, 0.55)
    return w, n - w


def _run(benchmark: Any, fn: Any, make: Any) -> None:
    rng = np.random.default_rng(1)
    rounds = 1 if benchmark.disabled else 20
    benchmark.pedantic(fn, setup=lambda: (make(rng), {}), rounds=rounds, iterations=1)


def test_sign_test_of_every_pair(benchmark: Any) -> None:
    _run(benchmark, sign_test, lambda rng: _counts(rng, PAIRS))


def test_clopper_pearson_of_every_neighbour(benchmark: Any) -> None:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        w, lose = _counts(rng, NEIGHBOURS)
        return w, w + lose, 0.95
    _run(benchmark, clopper_pearson, make)


def test_holm_over_every_pair(benchmark: Any) -> None:
    _run(benchmark, holm, lambda rng: (rng.random(PAIRS),))


def test_mixture_over_a_million_rows(benchmark: Any) -> None:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        m = rng.integers(1, MOST, ROWS)
        return rng.binomial(m, 0.5), m
    _run(benchmark, log_mixture, make)
