#!/usr/bin/env python3
"""Random Phase 10 bot: random legal choices; lays and hits when it happens to hold them.

Usage: random_bot.py [SEED]  (its moves depend only on SEED, the game and its seat)
"""

import sys

from harness.players import RandomStrategy
from harness.sdk import StrategyBot, run

if __name__ == "__main__":
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    run(StrategyBot(RandomStrategy(seed), name="py-random"))
