#!/usr/bin/env python3
"""Strong Phase 10 bot: greedy's plan with better choices — discards the card that keeps
the most outs (unseen cards that would bring its phase closer), takes the discard when it
helps, and Skips the seat closest to going out. Deterministic."""

from harness.players import StrongStrategy
from harness.sdk import StrategyBot, run

if __name__ == "__main__":
    run(StrategyBot(StrongStrategy(), name="py-strong"))
