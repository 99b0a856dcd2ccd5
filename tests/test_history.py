"""Rating history thinned to a bounded number of points per entrant (ratings.Trail)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from harness.ratings.trueskill import HISTORY_POINTS, Ratings, Trail


@given(st.integers(2, 40), st.integers(0, 3000))
def test_a_trail_keeps_at_most_cap_points_evenly_spaced_and_the_latest(cap: int, games: int) -> None:
    t = Trail(cap)
    for i in range(games):
        t.add(10 * i, float(i))
    kept = t.points_kept()
    assert len(kept) <= cap + 1
    if games == 0:
        assert kept == []
        return
    assert kept[0] == (0, 0.0, 1) and kept[-1] == (10 * (games - 1), float(games - 1), games)
    counts = [n for _, _, n in kept]
    assert counts == sorted(set(counts))
    if games < cap:
        assert counts == list(range(1, games + 1))  # nothing thinned yet
    else:
        assert len(kept) >= cap // 2
        body = counts[:-1] if (counts[-1] - 1) % t.stride else counts
        assert all((n - 1) % t.stride == 0 for n in body)  # every stride-th game


def test_history_of_a_long_run_is_bounded_and_depends_only_on_the_games() -> None:
    def run() -> Ratings:
        r = Ratings(["a", "b", "c"])
        for i in range(5000):
            seats = [["a", "b"], ["b", "c"], ["c", "a"]][i % 3]
            r.update(i, seats, [1, 2] if i % 5 else [2, 1])
        return r

    one, two = run(), run()
    assert one.history == two.history
    for e, pts in one.history.items():
        assert len(pts) <= HISTORY_POINTS + 1
        assert pts[-1][2] == 3334 or pts[-1][2] == 3333
        assert pts[-1][1] == round(one.ratings[e].mu, 4)
