"""The expert's discard rule kept from the next seat, its margin compared in-process:
the expert's prior (one sample a decision, so that the load does not change its play)
against the strong player heads-up, each deal in both seats, with each variant of the
rule on the same deals.

    python tests/benchmarks/feed_margin.py OUT.jsonl DEALS [--seed S] [--jobs J]
    python tests/benchmarks/feed_margin.py OUT.jsonl --summary

Variants: `feed` (the share of the 32 sampled hands by which a discard must be taken
less often than the prior's to replace it) 0.1, as the expert plays, 0 and 0.2, and 0.1
with 64 sampled hands. A line per deal is appended to OUT (a second run continues it);
--summary prints each variant's win share and its paired difference from the first,
with the standard error over deals.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.engine import Rules  # noqa: E402
from harness.players import make_strategy, play_local  # noqa: E402
from harness.players.expert import ExpertStrategy  # noqa: E402

VARIANTS: dict[str, dict[str, Any]] = {"f0.1": {"feed": 0.1}, "f0": {"feed": 0.0}, "f0.2": {"feed": 0.2},
                                       "f0.1s64": {"feed": 0.1, "feed_samples": 64}}


def play_deal(d: int, seed: int) -> dict[str, Any]:
    """The expert's wins (0, ½ or 1 a game) over deal `d` in both seats, per variant."""
    out: dict[str, Any] = {"deal": d}
    for name, kw in VARIANTS.items():
        wins = 0.0
        for rot in range(2):
            expert = ExpertStrategy(ms=1e9, seed=seed, rollouts=1, clock="cpu", **kw)
            strong = make_strategy("strong", seed=seed + 1000)
            players = [expert, strong] if rot == 0 else [strong, expert]
            game = play_local(Rules(), players, seed=seed * 100003 + d, game_id=f"d{d}r{rot}")
            firsts = [i for i, p in enumerate(game.places()) if p == 1]
            wins += 1 / len(firsts) if rot in firsts else 0.0
        out[name] = wins
    return out


def summary(path: str) -> str:
    """Each variant's win share, and its paired difference from the first per game."""
    rows = [json.loads(line) for line in open(path)]
    n = len(rows)
    names = list(VARIANTS)
    lines = [f"{k:8} {sum(r[k] for r in rows):.1f}/{2 * n} = {sum(r[k] for r in rows) / (2 * n):.3f}" for k in names]
    for k in names[1:]:
        diffs = [(r[k] - r[names[0]]) / 2 for r in rows]
        mean = sum(diffs) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1))
        lines.append(f"{k} - {names[0]}: {mean:+.4f} a game (se {sd / math.sqrt(n):.4f}), {n} deals")
    return "\n".join(lines)


def main() -> None:
    """Play the deals not yet in OUT, or summarise it."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("deals", nargs="?", type=int, default=0)
    ap.add_argument("--seed", type=int, default=107)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args()
    if not args.summary:
        from multiprocess import Pool

        done = {json.loads(line)["deal"] for line in open(args.out)} if os.path.exists(args.out) else set()
        todo = [d for d in range(args.deals) if d not in done]
        with Pool(args.jobs) as pool, open(args.out, "a") as fh:
            for row in pool.imap_unordered(lambda d: play_deal(d, args.seed), todo):
                fh.write(json.dumps(row) + "\n")
                fh.flush()
    print(summary(args.out))


if __name__ == "__main__":
    main()
