#!/usr/bin/env python3
"""Greedy Phase 10 bot: lays as soon as it can, hits whenever it can, keeps what helps its
phase, discards the least useful card, and Skips the leader."""

from harness.players import GreedyStrategy
from harness.sdk import StrategyBot, run

if __name__ == "__main__":
    run(StrategyBot(GreedyStrategy(), name="py-greedy"))
