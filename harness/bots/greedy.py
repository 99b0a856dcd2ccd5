"""The greedy bot over p10/1: ``python -m harness.bots.greedy``.

Lays as soon as it can, hits whenever it can, keeps what helps its phase, discards the
least useful card and Skips the leader (see harness.players.greedy)."""

from ..players import GreedyStrategy
from ..sdk import StrategyBot, run


def main() -> None:
    """Play until `bye` or the end of input."""
    run(StrategyBot(GreedyStrategy(), name="py-greedy"))


if __name__ == "__main__":
    main()
