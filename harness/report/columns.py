"""The leaderboard's columns: what a row of the board holds, in order. The standings write
them (`ratings.standings`); the leaderboard files show them."""

COLUMNS = ["rank", "entrant", "mu", "sigma", "conservative", "games", "wins", "win_rate",
           "mean_place", "mean_score", "mean_phases", "faults"]
# Appended after COLUMNS in the CSV: the batch rating (the board's order), its interval,
# whether the order against the next row is settled and the test's verdict (ratings/significance.py).
STATS_COLUMNS = ["pl_strength", "ci_low", "ci_high", "settled_above", "next"]
