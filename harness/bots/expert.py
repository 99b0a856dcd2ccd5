"""The expert bot over p10/1: ``python -m harness.bots.expert [--ms N] [--seed S] [--rollouts K]``.

Determinized Monte Carlo search over the strong player's best moves (see
harness.players.expert): N milliseconds per decision (default 150), random numbers from
S; with K, exactly K sampled worlds per decision (reproducible whatever the machine's
speed; N still caps the time)."""

from __future__ import annotations

import argparse
from typing import Sequence

from ..players.expert import DEFAULT_MS, ExpertStrategy
from ..sdk import StrategyBot, run


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line of the expert bot."""
    ap = argparse.ArgumentParser(prog="expert", description="The expert Phase 10 bot (p10/1 on stdin/stdout).")
    ap.add_argument("--ms", type=float, default=DEFAULT_MS, help=f"milliseconds per decision (default {DEFAULT_MS:g})")
    ap.add_argument("--seed", type=int, default=0, help="seed of its random numbers (default 0)")
    ap.add_argument("--rollouts", type=int, default=None,
                    help="sampled worlds per decision, for reproducible play (default: as many as --ms allows)")
    args = ap.parse_args(argv)
    if args.ms <= 0:
        ap.error(f"--ms must be positive, not {args.ms:g}")
    if args.rollouts is not None and args.rollouts < 1:
        ap.error(f"--rollouts must be at least 1, not {args.rollouts}")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Play until `bye` or the end of input."""
    args = parse_args(argv)
    run(StrategyBot(ExpertStrategy(ms=args.ms, seed=args.seed, rollouts=args.rollouts), name="py-expert"))


if __name__ == "__main__":
    main()
