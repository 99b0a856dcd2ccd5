"""The strong bot over p10/1: ``python -m harness.bots.strong``.

Greedy's plan with better discards (the card that keeps the most outs), takes, and Skips
(see harness.players.strong). Deterministic."""

from ..players import StrongStrategy
from ..sdk import StrategyBot, run


def main() -> None:
    """Play until `bye` or the end of input."""
    run(StrategyBot(StrongStrategy(), name="py-strong"))


if __name__ == "__main__":
    main()
