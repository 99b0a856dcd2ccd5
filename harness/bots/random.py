"""The random bot over p10/1: ``python -m harness.bots.random [SEED]``.

Random legal choices; lays and hits when it happens to hold them. Its moves depend only
on SEED, the game and its seat (see harness.players.random)."""

import sys

from ..players import RandomStrategy
from ..sdk import StrategyBot, run


def main(argv: list[str] | None = None) -> None:
    """Play until `bye` or the end of input."""
    args = sys.argv[1:] if argv is None else argv
    seed = int(args[0]) if args else 0
    run(StrategyBot(RandomStrategy(seed), name="py-random"))


if __name__ == "__main__":
    main()
