"""The expert's prior, in variants, compared in-process against the strong player (or
`--opponent`) heads-up on the same deals: the prior alone (one sample a decision, so that
the load does not change its play), each deal in both seats, every variant on the same
deals.

    python tests/benchmarks/feed_margin.py OUT.jsonl DEALS [--seed S] [--jobs J] [--variants A,B,...]
        [--opponent NAME]
    python tests/benchmarks/feed_margin.py OUT.jsonl --summary

Variants (`VARIANTS`; the first named is the one the others are paired with; by default
the discard rule's margin: f0.1,f0,f0.2,f0.1s64):
- `f0.1`: the expert as at 29b9bdb (`feed`, the share of the 32 sampled hands by which a
  discard must be taken less often than the prior's to replace it, 0.1); `f0`, `f0.2`:
  other margins; `f0.1s64`: 64 sampled hands;
- `wide`, `w3`, `w2`: the discard rule choosing among all the prior's discards, or the
  first 3 or 2, instead of the first 4 (`width`; with one sample it only sets the rule's);
- `shed2`, `shed4`, `noshed`: shedding points from 2 or 4 cards missing, or never,
  instead of 3 (`shed_missing`);
- `deny0`, `deny2`: a card the laid next seat could hit counts as 0 (a tie-break) or 2
  cards more missing instead of 1 (`deny_weight`);
- all of the above as at 29b9bdb, before the discard rule weighed the next seat's sampled
  hands by what it let go; `ev0.2`: the expert as it plays (a sampled hand counts a fifth
  for each card the next seat passed or discarded that would have brought it closer,
  `evidence`); `ev0`, `ev0.5`: other weights (0: such hands do not count); `ev0.2p`: only
  its passes at the draw (`evidence_discards=False`).
- `r8`: the expert as it plays, at 8 samples a decision instead of one.
A line per deal is appended to OUT (a second run with the same variants continues it);
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
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.engine import Rules  # noqa: E402
from harness.players import make_strategy, play_local  # noqa: E402
from harness.players.expert import ExpertStrategy  # noqa: E402

_OLD = {"evidence": None}  # the discard rule as at 29b9bdb: every sampled hand counts alike
VARIANTS: dict[str, dict[str, Any]] = {
    "f0.1": {"feed": 0.1, **_OLD}, "f0": {"feed": 0.0, **_OLD}, "f0.2": {"feed": 0.2, **_OLD},
    "f0.1s64": {"feed": 0.1, "feed_samples": 64, **_OLD},
    "wide": {"width": 99, **_OLD}, "w3": {"width": 3, **_OLD}, "w2": {"width": 2, **_OLD},
    "shed2": {"shed_missing": 2, **_OLD}, "shed4": {"shed_missing": 4, **_OLD}, "noshed": {"shed_missing": 99, **_OLD},
    "deny0": {"deny_weight": 0.0, **_OLD}, "deny2": {"deny_weight": 2.0, **_OLD},
    "ev0": {"evidence": 0.0}, "ev0.2": {"evidence": 0.2}, "ev0.5": {"evidence": 0.5},
    "ev0.2p": {"evidence": 0.2, "evidence_discards": False},
    "r8": {"rollouts": 8},
}
DEFAULT = ("f0.1", "f0", "f0.2", "f0.1s64")


def play_deal(d: int, seed: int, names: Sequence[str] = DEFAULT, opponent: str = "strong") -> dict[str, Any]:
    """The expert's wins (0, ½ or 1 a game) over deal `d` in both seats against
    `opponent` (a name `make_strategy` knows), per variant."""
    out: dict[str, Any] = {"deal": d}
    for name in names:
        kw = {"rollouts": 1, **VARIANTS[name]}
        wins = 0.0
        for rot in range(2):
            expert = ExpertStrategy(ms=1e9, seed=seed, clock="cpu", **kw)
            other = make_strategy(opponent, seed=seed + 1000)
            players = [expert, other] if rot == 0 else [other, expert]
            game = play_local(Rules(), players, seed=seed * 100003 + d, game_id=f"d{d}r{rot}")
            firsts = [i for i, p in enumerate(game.places()) if p == 1]
            wins += 1 / len(firsts) if rot in firsts else 0.0
        out[name] = wins
    return out


def summary(path: str) -> str:
    """Each variant's win share, and its paired difference from the first per game."""
    rows = [json.loads(line) for line in open(path)]
    n = len(rows)
    names = [k for k in rows[0] if k != "deal"]
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
    ap.add_argument("--variants", default=",".join(DEFAULT), help="comma-separated names of VARIANTS, the first the reference")
    ap.add_argument("--opponent", default="strong", help="the other player (greedy, strong, ...)")
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args()
    names = args.variants.split(",")
    unknown = [k for k in names if k not in VARIANTS]
    if unknown:
        sys.exit(f"Error: unknown variant {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    if not args.summary:
        from multiprocess import Pool

        rows = [json.loads(line) for line in open(args.out)] if os.path.exists(args.out) else []
        if rows and [k for k in rows[0] if k != "deal"] != names:
            sys.exit(f"Error: {args.out} holds the variants {', '.join(k for k in rows[0] if k != 'deal')}, not {args.variants}")
        done = {r["deal"] for r in rows}
        todo = [d for d in range(args.deals) if d not in done]
        with Pool(args.jobs) as pool, open(args.out, "a") as fh:
            for row in pool.imap_unordered(lambda d: play_deal(d, args.seed, names, args.opponent), todo):
                fh.write(json.dumps(row) + "\n")
                fh.flush()
    print(summary(args.out))


if __name__ == "__main__":
    main()
