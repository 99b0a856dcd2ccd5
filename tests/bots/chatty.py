#!/usr/bin/env python3
"""The greedy player, writing one line to stderr per request (for `play --stderr`)."""
import sys
from typing import Any

from harness.players import GreedyStrategy
from harness.sdk import StrategyBot, run


class Chatty(StrategyBot):
    def on_request(self, msg: dict[str, Any]) -> dict[str, Any]:
        print(f"thinking about request {msg['id']}", file=sys.stderr, flush=True)
        return super().on_request(msg)


if __name__ == "__main__":
    run(Chatty(GreedyStrategy(), name="chatty"))
