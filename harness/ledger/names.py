"""The names of the files that make a folder a results folder, apart from the code that
reads them, so that what only needs the names (a bot's sandbox masks such folders) loads
nothing else."""

from __future__ import annotations

MARKER = "tournament.json"
"""What says a folder holds the results of a tournament (`marker`)."""
SECRET = "seed.secret"
"""The secret seed of a tournament (`seeds`)."""
CONCEAL = ((SECRET, None), (MARKER, "p10-results/"))
"""What marks a results folder for a bot's sandbox to mask (`Sandbox.conceal`): a secret
seed, or a tournament.json of p10-tourney's."""
