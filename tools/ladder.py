"""The strength ladder of the bundled bots, played and tabulated.

    python tools/ladder.py [CONFIG] [--games N] [--games4 M] [--bots A,B,...]
        [--challenger NAME] [--output DIR] [--parallel J] [--readme FILE] [--tables-only]
        [--also DIR ...]

CONFIG (default tournaments/ladder.yaml) is played heads-up (every bot against every other,
N games a pair; with --challenger only that bot against each other one), then at
4-player tables (M games a table; 0: none), in results folders that a second run continues.
It prints each pair's games, the win share of the one ahead with its 95 % Wilson interval
and the board's mark for the pair, and the 4-player board; with --readme it writes those
tables into the file's ladder block. --tables-only tabulates the folders as they are;
--also DIR adds the pairs of another heads-up results folder to the table (a ladder
played as several runs, e.g. one per opponent; a pair in two folders, or one this run
plays, is refused before anything is played).
The load average is printed before and after (the figures of BENCHMARKS.md state it).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.tournament.config import ConfigError  # noqa: E402
from harness.tournament.ladder import ladder_markdown, ladder_plan, replace_block, run_ladder  # noqa: E402
from harness.tournament.runner import run_tournament  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Play the ladder and print (or write) its tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", nargs="?", type=Path, default=ROOT / "tournaments" / "ladder.yaml")
    ap.add_argument("--games", type=int, help="heads-up games per pair (the config's games_per_table)")
    ap.add_argument("--games4", type=int, help="games per 4-player table (default the config's; 0: none)")
    ap.add_argument("--bots", help="only these bots, by name, comma-separated")
    ap.add_argument("--challenger", help="heads-up: only this bot against each other one")
    ap.add_argument("--output", type=Path, help="the heads-up results folder (the 4-player one: its name + -4)")
    ap.add_argument("--parallel", type=int, help="worker processes (overrides the config)")
    ap.add_argument("--readme", type=Path, help="write the tables into this file's ladder block")
    ap.add_argument("--tables-only", action="store_true", help="play nothing: tabulate the results folders")
    ap.add_argument("--also", type=Path, action="append", default=[], metavar="DIR",
                    help="another heads-up results folder whose pairs join the table (repeatable)")
    args = ap.parse_args(argv)
    try:
        plan = ladder_plan(args.config, args.games, args.games4, args.bots.split(",") if args.bots else (),
                           args.challenger, args.output, args.parallel)
    except ConfigError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    try:
        text = (ladder_markdown(plan, args.also) if args.tables_only
                else run_ladder(plan, lambda c: run_tournament(c, build_site=False), args.also))
    except ConfigError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print(text)
    if args.readme:
        args.readme.write_text(replace_block(args.readme.read_text(encoding="utf-8"), text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
