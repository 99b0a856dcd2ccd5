"""Playing strategies that decide from a seat's view alone (the protocol's `state`).

They run in-process for tests and benchmarks, and the bundled bots run them behind the
protocol, so a strategy plays the same moves either way.
"""

from .base import Strategy, TableModel, play_local
from .greedy import GreedyStrategy
from .noisy import NoisyGreedyStrategy
from .random import RandomStrategy

STRATEGIES = {"greedy": GreedyStrategy, "random": RandomStrategy}

__all__ = ["Strategy", "TableModel", "play_local", "GreedyStrategy", "RandomStrategy", "NoisyGreedyStrategy",
           "STRATEGIES"]
