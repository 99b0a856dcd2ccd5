"""The bundled bots as modules, so a command line or a config can name them without
knowing where the repository is: ``python -m harness.bots.greedy``,
``python -m harness.bots.random [SEED]``, ``python -m harness.bots.strong`` and
``python -m harness.bots.expert [--ms N] [--seed S] [--clock cpu|wall] [--wall-ms W]``.

`bots/python/` keeps the same bots as files for authors to read and copy.
"""

import sys

GREEDY_ARGV = (sys.executable, "-m", "harness.bots.greedy")
"""The argv that starts the bundled greedy bot with this Python."""

STRONG_ARGV = (sys.executable, "-m", "harness.bots.strong")
"""The argv that starts the bundled strong bot with this Python."""


def random_argv(seed: int = 0) -> tuple[str, ...]:
    """The argv that starts the bundled random bot with `seed`, with this Python."""
    return (sys.executable, "-m", "harness.bots.random", str(seed))


def expert_argv(ms: float | None = None, seed: int = 0, rollouts: int | None = None) -> tuple[str, ...]:
    """The argv that starts the bundled expert bot, with this Python."""
    argv: tuple[str, ...] = (sys.executable, "-m", "harness.bots.expert", "--seed", str(seed))
    if ms is not None:
        argv += ("--ms", f"{ms:g}")
    if rollouts is not None:
        argv += ("--rollouts", str(rollouts))
    return argv


__all__ = ["GREEDY_ARGV", "STRONG_ARGV", "random_argv", "expert_argv"]
