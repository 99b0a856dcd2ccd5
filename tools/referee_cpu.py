#!/usr/bin/env python3
"""The referee's own work per decision, without pipes or bot processes.

One standard game of four greedy players (seed 2024, the game of
tests/benchmarks/test_bench_referee.py) is played in-process to record every reply; then
the `Referee` plays the same game again and again against in-process stand-ins that
answer each request with its recorded reply line. What is left is the referee's work:
applying the moves, the views, the options, encoding the requests and checking the
replies.

    python tools/referee_cpu.py                 # CPU µs per decision, best of 15 batches
    python tools/referee_cpu.py --games 4 --once  # play 4 games and stop (no timing)

On a machine whose speed drifts, count instructions instead, which do not drift:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python tools/referee_cpu.py --games 0 --once
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python tools/referee_cpu.py --games 4 --once

(the difference of the two "Collected" counts, divided by 4 games and by the decisions
per game that the script prints, is the instruction count per decision).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.engine import Rules  # noqa: E402
from harness.players import GreedyStrategy, Strategy, play_local  # noqa: E402
from harness.referee import BotSpec  # noqa: E402
from harness.referee.referee import Referee  # noqa: E402

SEED = 2024
GAME = "g-bench"


class _Recording(Strategy):
    def __init__(self) -> None:
        self.inner = GreedyStrategy()
        self.replies: list[dict[str, Any]] = []

    def decide(self, state: Any, decision: str, options: Any) -> dict[str, Any]:
        reply = self.inner.decide(state, decision, options)
        self.replies.append(reply)
        return reply


class _StandIn:
    """Just enough of a `BotProcess` for the referee: each request is answered with the
    next recorded reply, its id already filled in."""

    def __init__(self, name: str, replies: list[dict[str, Any]]) -> None:
        self.spec = BotSpec(name, ("-",))
        self.replies = replies
        self.alive = True
        self.wants_options = True
        self.next_id = 1
        self.lines: list[bytes] = []
        self.i = 0
        self.pending = b""

    def new_game(self) -> None:
        self.lines = [orjson.dumps(dict(r, id=self.next_id + k)) for k, r in enumerate(self.replies)]
        self.i = 0

    def send(self, data: bytes) -> None:
        if data.startswith(b'{"type":"request"'):
            self.pending = self.lines[self.i]
            self.i += 1

    def read_line(self, deadline: float) -> bytes:
        return self.pending

    def stop(self) -> None:
        pass

    def drain_stderr(self) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=5, help="games per batch (default 5)")
    ap.add_argument("--once", action="store_true", help="play one batch and stop, untimed")
    args = ap.parse_args()
    players = [_Recording() for _ in range(4)]
    play_local(Rules(), players, SEED, game_id=GAME)
    bots = [_StandIn(f"seat{s}", p.replies) for s, p in enumerate(players)]
    decisions = sum(len(p.replies) for p in players)

    def batch(n: int) -> None:
        for _ in range(n):
            for b in bots:
                b.new_game()
            res = Referee(bots, [b.spec.name for b in bots], Rules(), SEED, GAME).play()  # type: ignore[arg-type]
            assert not res.faults and res.decisions == decisions, res.faults

    if args.once:
        batch(args.games)
        print(f"{args.games} games of {decisions} decisions")
        return
    batch(2)  # warm up
    best = float("inf")
    for _ in range(15):
        t = time.process_time()
        batch(args.games)
        best = min(best, (time.process_time() - t) / args.games / decisions)
    print(f"referee CPU per decision, no I/O: {best * 1e6:.1f} µs (best of 15 batches of {args.games} games "
          f"of {decisions} decisions)")


if __name__ == "__main__":
    main()
