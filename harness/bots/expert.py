"""The expert bot over p10/1:
``python -m harness.bots.expert [--ms N] [--seed S] [--rollouts K] [--clock cpu|wall] [--wall-ms W]``.

Determinized Monte Carlo search over the strong player's best moves (see
harness.players.expert). Its budget is N milliseconds (default 150) of its own CPU time
per decision: what other processes take of the machine is not charged to it, and neither
is the time it spends stopped between turns (a stopped process uses no CPU; each decision
counts from the moment the request is read). So that a loaded machine cannot make it late,
a decision also ends after W milliseconds of wall-clock time (default 400), and never
later than 40 % of the `move_ms` the game announces (`game_start`), whichever is less:
with the default limit of 1000 ms that leaves 600 ms for the reply to reach the referee.
And a decision that has waited N milliseconds of wall-clock time and got less than half
of them as CPU ends there: a machine that starves the bot that much would also make the
rest of its work (the end of a play-out, the reply) slow, and late. (Refereed at
4-player tables at load 15 on 2 cores under `nice -n 19`, without that rule the bot
missed the limit in 2 of 44 games, replying 2.5 s after a request.)
`--clock wall` counts the N milliseconds on the wall clock instead (the cap still
applies). Random numbers come from S; with K, exactly K sampled worlds per decision
(reproducible whatever the machine's speed; N and the cap still bound the time)."""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from ..players.expert import DEFAULT_MS, ExpertStrategy
from ..sdk import StrategyBot, run

DEFAULT_WALL_MS = 400.0
"""The default cap of a decision in wall-clock time."""

MOVE_SHARE = 0.4
"""The share of the game's `move_ms` a decision may take at most on the wall clock."""


class ExpertBot(StrategyBot):
    """The expert strategy behind the protocol, its wall-clock cap kept inside the game's
    time limit per move."""

    def __init__(self, strategy: ExpertStrategy, wall_ms: float, name: str = "py-expert") -> None:
        super().__init__(strategy, name=name)
        self.wall_ms = wall_ms

    def on_game_start(self, msg: dict[str, Any]) -> None:
        super().on_game_start(msg)
        move_ms = (msg.get("time") or {}).get("move_ms")
        cap = self.wall_ms
        if isinstance(move_ms, (int, float)) and move_ms > 0:
            cap = min(cap, MOVE_SHARE * move_ms)
        self.strategy.wall_ms = cap  # type: ignore[attr-defined]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line of the expert bot."""
    ap = argparse.ArgumentParser(prog="expert", description="The expert Phase 10 bot (p10/1 on stdin/stdout).")
    ap.add_argument("--ms", type=float, default=DEFAULT_MS,
                    help=f"milliseconds of its own CPU time per decision (default {DEFAULT_MS:g})")
    ap.add_argument("--seed", type=int, default=0, help="seed of its random numbers (default 0)")
    ap.add_argument("--rollouts", type=int, default=None,
                    help="sampled worlds per decision, for reproducible play (default: as many as --ms allows)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="the clock --ms is counted on (default cpu: its own CPU time)")
    ap.add_argument("--wall-ms", type=float, default=DEFAULT_WALL_MS,
                    help=f"at most this many milliseconds of wall-clock time per decision, and at most "
                         f"{MOVE_SHARE:.0%} of the game's move_ms (default {DEFAULT_WALL_MS:g})")
    args = ap.parse_args(argv)
    if args.ms <= 0:
        ap.error(f"--ms must be positive, not {args.ms:g}")
    if args.wall_ms <= 0:
        ap.error(f"--wall-ms must be positive, not {args.wall_ms:g}")
    if args.rollouts is not None and args.rollouts < 1:
        ap.error(f"--rollouts must be at least 1, not {args.rollouts}")
    return args


def make_bot(args: argparse.Namespace) -> ExpertBot:
    """The bot the command line `args` asks for."""
    strategy = ExpertStrategy(ms=args.ms, seed=args.seed, rollouts=args.rollouts, clock=args.clock,
                              wall_ms=args.wall_ms)
    return ExpertBot(strategy, args.wall_ms)


def main(argv: Sequence[str] | None = None) -> None:
    """Play until `bye` or the end of input."""
    run(make_bot(parse_args(argv)))


if __name__ == "__main__":
    main()
