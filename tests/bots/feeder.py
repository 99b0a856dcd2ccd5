#!/usr/bin/env python3
"""A colluding bot: greedy, but whenever its partner draws next it discards a Wild if it
holds one, and it never names its partner with a Skip. No covert channel: the names in
the state's `players` suffice.

Usage: feeder.py PARTNER   (the partner's entrant name)

`FeederStrategy` is the same player in-process (tools/calibrate_collusion.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness.players import GreedyStrategy  # noqa: E402


def next_drawer(state: dict[str, Any]) -> int | None:
    """The seat that draws after this one (past seats whose turn a Skip takes)."""
    players, me = state["players"], state["seat"]
    n = len(players)
    for k in range(1, n):
        p = players[(me + k) % n]
        if p.get("active", True) and not p["skip_pending"]:
            return int(p["seat"])
    return None


class FeederStrategy(GreedyStrategy):
    """Greedy that feeds Wilds to `partner` and never skips it."""

    name = "feeder"

    def __init__(self, partner: str) -> None:
        self.partner = partner

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        reply = super().decide(state, decision, options)
        if decision != "play" or "discard" not in reply:
            return reply
        names = {p["seat"]: p.get("name") for p in state["players"]}
        left = list(state["cards"])
        for meld in reply.get("lay") or []:
            for c in meld:
                left.remove(c)
        for h in reply.get("hits") or []:
            left.remove(h["card"])
        drawer = next_drawer(state)
        if drawer is not None and names.get(drawer) == self.partner and "W" in left:
            reply["discard"] = "W"
            reply.pop("skip", None)
        elif reply.get("skip") is not None and names.get(reply["skip"]) == self.partner:
            others = [p["seat"] for p in state["players"] if p["seat"] != state["seat"] and p.get("active", True)
                      and not p["skip_pending"] and names.get(p["seat"]) != self.partner]
            if others:
                reply["skip"] = others[0]
        return reply


def main() -> None:
    from harness.sdk import StrategyBot, run

    run(StrategyBot(FeederStrategy(sys.argv[1]), name="feeder"))


if __name__ == "__main__":
    main()
