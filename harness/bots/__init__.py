"""The bundled bots as modules, so a command line or a config can name them without
knowing where the repository is: ``python -m harness.bots.greedy`` and
``python -m harness.bots.random [SEED]``.

`bots/python/` keeps the same bots as files for authors to read and copy.
"""

import sys

GREEDY_ARGV = (sys.executable, "-m", "harness.bots.greedy")
"""The argv that starts the bundled greedy bot with this Python."""


def random_argv(seed: int = 0) -> tuple[str, ...]:
    """The argv that starts the bundled random bot with `seed`, with this Python."""
    return (sys.executable, "-m", "harness.bots.random", str(seed))


__all__ = ["GREEDY_ARGV", "random_argv"]
