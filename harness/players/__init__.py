"""Playing strategies that decide from a seat's view alone (the protocol's `state`, and
for those that keep a memory the public `events`).

They run in-process for tests and benchmarks, and the bundled bots run them behind the
protocol, so a strategy plays the same moves either way.
"""

from .base import Strategy, TableModel, play_local
from .greedy import GreedyStrategy
from .noisy import NoisyGreedyStrategy
from .random import RandomStrategy
from .strong import StrongStrategy

STRATEGIES = {"greedy": GreedyStrategy, "random": RandomStrategy, "strong": StrongStrategy}


def make_strategy(spec: str, seed: int = 0) -> Strategy:
    """A strategy by name: random, greedy, strong, or expert / expert@MS (MS milliseconds
    of wall-clock time per decision) / expert@MScpu (MS milliseconds of CPU time) /
    expert@rK (K sampled worlds per decision: the same decisions on any machine); `seed`
    seeds the ones that draw random numbers."""
    name, _, arg = spec.partition("@")
    if name == "random":
        return RandomStrategy(seed)
    if name == "expert":
        from .expert import ExpertStrategy

        if arg.startswith("r") and arg[1:].isdigit():
            return ExpertStrategy(ms=1e9, seed=seed, rollouts=int(arg[1:]), clock="cpu")
        cpu = arg.endswith("cpu")
        ms = arg[:-3] if cpu else arg
        return ExpertStrategy(ms=float(ms) if ms else None, seed=seed, clock="cpu" if cpu else "wall")
    if name in STRATEGIES and not arg:
        return STRATEGIES[name]()
    raise ValueError(f"unknown strategy {spec!r}: random, greedy, strong, expert, expert@MS, expert@MScpu or "
                     "expert@rK")


__all__ = ["Strategy", "TableModel", "play_local", "GreedyStrategy", "RandomStrategy", "NoisyGreedyStrategy",
           "StrongStrategy", "STRATEGIES", "make_strategy"]
