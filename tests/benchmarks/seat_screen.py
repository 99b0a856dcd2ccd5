"""What one player is worth against another at one seat of a table, in-process and paired.

    python tests/benchmarks/seat_screen.py A B [--deals N] [--seed S]
        [--opps strong,greedy,greedy] [--jobs J]

Each deal is played once per seat with A at that seat and once with B there, the other
seats held by the same opponents (`--opps`, in that order round the table) on the same
shuffles: the two games of a pair differ only from the first decision where A and B
differ. It prints the mean place of A and of B, the paired difference (negative: A placed
better) with its standard error, and how many pairs ended in the same place.

Players: `random`, `greedy`, `strong`, `expert@MScpu` (MS milliseconds of CPU time per
decision), `expert@rK` (K sampled worlds per decision: the same decisions on any machine),
`expert@rK:KEY=VALUE;...` with options of `ExpertStrategy` (a number, or `none`;
`expert@r1:evidence=none` is the discard rule as at 29b9bdb), and three that cheat, as
yardsticks of what the expert's search (the same candidates, the same play-outs) would be
worth with knowledge no seat has: `knows-all@rK` searches the true deal (the other hands
and the order of the draw pile), `knows-hands@rK` the true hands with the draw pile
shuffled again in each sample, `knows-deck@rK` the true draw pile with the other hands
dealt again at random from the cards they hold between them.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.engine import Game, Rules  # noqa: E402
from harness.players import Strategy, make_strategy, play_local  # noqa: E402
from harness.players.expert import ExpertStrategy, _clone, _SimGame  # noqa: E402


class _Knowing(ExpertStrategy):
    """The expert searching worlds made from the true game (`truth`, set before each game)
    instead of sampled ones: what it knows is `hands` and `deck`."""

    hands = True
    deck = True

    def __init__(self, rollouts: int, seed: int) -> None:
        super().__init__(ms=1e9, seed=seed, rollouts=rollouts, clock="cpu")
        self.truth: Game | None = None

    def _sample(self, state: dict[str, Any], decision: str, hand: list[Any], pile: list[Any],
                rng: random.Random) -> _SimGame:
        assert self.truth is not None
        g = _clone(self.truth, 0)
        if not self.deck:
            rng.shuffle(g.draw_pile)
        if not self.hands:
            others = [p for p in g.players if p.seat != state["seat"]]
            pool = [c for p in others for c in p.hand]
            rng.shuffle(pool)
            for p in others:
                p.hand, pool = pool[:len(p.hand)], pool[len(p.hand):]
        return g


class _KnowsHands(_Knowing):
    deck = False


class _KnowsDeck(_Knowing):
    hands = False


_KNOWING = {"knows-all": _Knowing, "knows-hands": _KnowsHands, "knows-deck": _KnowsDeck}


def make(spec: str, seed: int) -> Strategy:
    """A player by its name (see the module docstring)."""
    spec, _, options = spec.partition(":")
    name, _, arg = spec.partition("@")
    if options:
        if name != "expert" or not (arg.startswith("r") and arg[1:].isdigit()):
            raise ValueError(f"options only for expert@rK, not {spec!r}")
        kw: dict[str, Any] = {}
        for item in options.split(";"):
            key, _, value = item.partition("=")
            kw[key] = None if value == "none" else float(value)
        return ExpertStrategy(ms=1e9, seed=seed, rollouts=int(arg[1:]), clock="cpu", **kw)
    if name in _KNOWING and arg.startswith("r") and arg[1:].isdigit():
        return _KNOWING[name](int(arg[1:]), seed)
    return make_strategy(spec, seed=seed)


def play_pair(args: tuple[str, str, int, int, int, list[str]]) -> tuple[int, int, list[tuple[int, float]]]:
    """Deal `d` with A, then B, at seat `rot`: (d, rot, [(place, CPU seconds)] for A and B)."""
    a, b, d, rot, seed, opps = args
    out = []
    for spec in (a, b):
        players = [make(o, seed=seed + 7 * i) for i, o in enumerate(opps)]
        me = make(spec, seed=seed + 1000)
        players.insert(rot, me)
        hook: Callable[[Game], None] | None = (lambda g: setattr(me, "truth", g)) if isinstance(me, _Knowing) else None
        t = time.process_time()
        g = play_local(Rules(), players, seed=seed * 100003 + d, game_id=f"d{d}r{rot}", on_game=hook)
        out.append((g.places()[rot], time.process_time() - t))
    return d, rot, out


def main() -> None:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--deals", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--opps", default="strong,greedy,greedy")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    opps = args.opps.split(",")
    for spec in (args.a, args.b, *opps):
        make(spec, 0)  # a bad name fails here, not in a worker
    tasks = [(args.a, args.b, d, rot, args.seed, opps) for d in range(args.deals) for rot in range(len(opps) + 1)]
    from multiprocess import Pool

    places: list[tuple[int, int]] = []
    cpu = [0.0, 0.0]
    with Pool(args.jobs) as pool:
        for _, _, ((pa, ta), (pb, tb)) in pool.imap_unordered(play_pair, tasks):
            places.append((pa, pb))
            cpu[0] += ta
            cpu[1] += tb
            k = len(places)
            if k % 20 == 0 or k == len(tasks):
                diffs = [x - y for x, y in places]
                m = sum(diffs) / k
                se = math.sqrt(sum((x - m) ** 2 for x in diffs) / max(1, k - 1) / k)
                print(f"{k} pairs: mean place {args.a} {sum(x for x, _ in places) / k:.3f}, {args.b} "
                      f"{sum(y for _, y in places) / k:.3f}; difference {m:+.3f} (se {se:.3f}); same place "
                      f"{sum(1 for x in diffs if x == 0)}; CPU a game {cpu[0] / k:.1f} s, {cpu[1] / k:.1f} s",
                      flush=True)


if __name__ == "__main__":
    main()
