"""Strength of the bundled strategies in-process: duplicate games played through the
engine (no referee, no processes), scored with the harness's own statistics.

    python tests/benchmarks/strength.py ENTRANT ENTRANT [ENTRANT ...] --deals N [--seed S]
        [--jobs J] [--out FILE.jsonl]

An entrant is `random`, `greedy`, `strong` or `expert` / `expert@MS` / `expert@MScpu` / `expert@rK`
(the expert at MS milliseconds of wall-clock or of CPU time per decision). Every deal is played once per seat rotation (a duplicate
group), so 2 entrants play 2 games a deal, 4 entrants 4; at 3 or more the order round the
table changes from deal to deal, as with `seating: balanced`. Records are appended to --out as
each game ends (one JSON line, the fields of games.jsonl the statistics read), and a run
with the same --out continues where it stopped. At the end it prints each entrant's win
share (first places, shared places split) with a 95 % Wilson interval, and the harness's
Plackett–Luce θ with its bootstrap interval and which neighbour orders are settled.

    python tests/benchmarks/strength.py --costs [EXPERT [DEALS [PLAYERS]]]

times the expert's decisions (default expert@150cpu, 1 deal, 2 players: two games against
greedy; at 4 players against strong and two greedy, one game per deal): decisions by kind
(a search, or answered at once), CPU time and samples each, and how often a search chose
another move than the prior's.

    python tests/benchmarks/strength.py --solitaire N

compares the discards alone: for each standard phase, N shuffled decks played alone
(draw from the deck, discard, until the phase can be laid), the same decks for greedy's
discard rule and the strong player's; it prints the mean turns to lay and the paired
difference with its standard error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.engine import Rules  # noqa: E402
from harness.players import make_strategy, play_local  # noqa: E402
from harness.tournament.schedule import seat_order  # noqa: E402
from harness.ratings.bootstrap import analyse  # noqa: E402
from harness.ratings.pairwise import wilson  # noqa: E402
from harness.ratings.paired import paired_deals  # noqa: E402
from harness.ratings.significance import neighbour_tests  # noqa: E402


def play_deal(entrants: Sequence[str], deal: int, seed: int) -> list[dict[str, Any]]:
    """One duplicate group: the deal played once per seat rotation of the group's order
    round the table, which changes from deal to deal as in a tournament's balanced seating
    (`seat_order`), so that at 3 players or more nobody always plays after the same
    entrant. Each entrant's random numbers come from its place in `entrants`."""
    n = len(entrants)
    order = seat_order(list(entrants), deal)
    out = []
    for rot in range(n):
        seats = [order[(i + rot) % n] for i in range(n)]
        gid = f"d{deal}r{rot}"
        players = [make_strategy(e, seed=seed + 1000 * entrants.index(e)) for e in seats]
        t = time.monotonic()
        game = play_local(Rules(), players, seed=seed * 100003 + deal, game_id=gid)
        out.append({"id": deal * n + rot, "group": deal, "seats": seats, "places": game.places(),
                    "winner": game.winner, "hands": game.hand_no, "seconds": round(time.monotonic() - t, 2)})
    return out


def summary(records: Sequence[dict[str, Any]], entrants: Sequence[str]) -> str:
    """Win shares and the Plackett–Luce analysis, as text."""
    lines = []
    n_games = len(records)
    for e in entrants:
        wins = 0.0
        for r in records:
            firsts = [s for s, p in zip(r["seats"], r["places"]) if p == 1]
            wins += firsts.count(e) / len(firsts)
        lo, hi = wilson(wins, n_games)
        lines.append(f"{e:>14}: wins {wins:.1f}/{n_games} = {wins / max(1, n_games):.1%} (95 % {lo:.1%}..{hi:.1%})")
    a = analyse(records, entrants, seed=1)
    order = a.order()
    tests = {t["upper"]: t for t in neighbour_tests(paired_deals(records, entrants), order)}
    lines.append(f"games {a.games}, deal groups {a.groups}")
    for i, e in enumerate(order):
        lo, hi = a.ci[e] or (float("nan"), float("nan"))
        nxt = order[i + 1] if i + 1 < len(order) else None
        t = tests.get(e)
        rel = "" if nxt is None or t is None else (
            f"  settled above {nxt}" if t["settled"] else f"  not settled above {nxt} ({t['verdict']}, "
            f"did better on {t['upper_better']} of {t['upper_better'] + t['lower_better']} informative deals)")
        lines.append(f"{e:>14}: θ {a.theta[e]:+.3f} [{lo:+.3f}, {hi:+.3f}] mean place {a.mean_place[e]:.2f}{rel}")
    return "\n".join(lines)


def turns_to_lay(rule: str, phase: Any, seed: int, cap: int = 40) -> int:
    """Turns a lone player needs to lay `phase` from a deck shuffled by `seed`, discarding
    by greedy's rule ("greedy") or the strong player's ("strong"); `cap` + 1 if never."""
    import random as _random

    from harness.engine import DECK, plan
    from harness.players.greedy import _partners
    from harness.players.strong import memo_missing, rank_discards, unseen_counts

    rng = _random.Random(seed)
    deck = list(DECK)
    rng.shuffle(deck)
    hand = [deck.pop() for _ in range(10)]
    gone: list[Any] = []
    for turn in range(1, cap + 1):
        hand.append(deck.pop())
        if memo_missing(hand, phase) == 0:
            return turn
        if rule == "strong":
            card = rank_discards(hand, phase, False, [], unseen_counts(hand, [], None, gone))[0]
        else:
            skip = next((c for c in hand if c.is_skip), None)
            if skip is not None:
                card = skip
            else:
                _, used = plan(hand, phase)
                spare = [c for i, c in enumerate(hand) if i not in used and not c.is_wild] or \
                    [c for c in hand if not c.is_wild]
                card = min(spare, key=lambda c: (_partners(c, hand), -c.points, c.index))
        hand.remove(card)
        gone.append(card)
    return cap + 1


def solitaire(n: int) -> str:
    """Mean turns to lay each standard phase alone, greedy's discards against strong's."""
    from statistics import mean, stdev

    from harness.engine import STANDARD_PHASES

    lines = ["phase  greedy  strong  greedy-strong (se)"]
    for phase in STANDARD_PHASES:
        g = [turns_to_lay("greedy", phase, s) for s in range(n)]
        st = [turns_to_lay("strong", phase, s) for s in range(n)]
        d = [a - b for a, b in zip(g, st)]
        lines.append(f"{phase.number:>5}  {mean(g):6.2f}  {mean(st):6.2f}  {mean(d):+.2f} ({stdev(d) / n ** 0.5:.2f})")
    return "\n".join(lines)


def costs(spec: str, deals: int, seed: int = 1, players: int = 2) -> str:
    """What a game costs the expert `spec` (e.g. expert@150cpu): `deals` 2-player deals
    against greedy in both seat orders, or 4-player games against strong and two greedy;
    each decision's CPU time and samples by kind (a search, or answered without one), and
    the searches that overruled the prior."""
    from harness.players.expert import ExpertStrategy

    seen: dict[str, list[float]] = {}
    overruled: dict[str, int] = {}
    games = 0

    class Timed(ExpertStrategy):
        def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
            t = time.process_time()
            reply = super().decide(state, decision, options)
            row = seen.setdefault(f"{decision} {'search' if self.last_samples else 'at once'}", [0, 0.0, 0])
            row[0] += 1
            row[1] += time.process_time() - t
            row[2] += self.last_samples
            return reply

        def _search(self, state: dict[str, Any], decision: str, *args: Any) -> Any:
            chosen = super()._search(state, decision, *args)
            cands = args[2]
            kind = f"{decision} search"
            overruled[kind] = overruled.get(kind, 0) + (chosen is not cands[0])
            return chosen

    base = make_strategy(spec, seed=seed)
    assert isinstance(base, ExpertStrategy), spec
    t0 = time.process_time()
    for deal in range(deals):
        for rot in range(2 if players == 2 else 1):
            me = Timed(ms=base.ms, seed=seed, clock="cpu" if base.clock is time.process_time else "wall")
            if players == 2:
                seats = [me, make_strategy("greedy")][::1 if rot == 0 else -1]
            else:
                seats = [me, make_strategy("strong"), make_strategy("greedy"), make_strategy("greedy")]
            play_local(Rules(), seats, seed=seed * 100003 + deal, game_id=f"d{deal}r{rot}")
            games += 1
    total = time.process_time() - t0
    n = sum(r[0] for r in seen.values())
    lines = [f"{games} games at {players} players, {n} decisions of {spec}, {total:.1f} s of CPU in all, "
             f"{1000 * sum(r[1] for r in seen.values()) / max(1, n):.0f} ms a decision"]
    for kind, (k, cpu, samples) in sorted(seen.items()):
        over = f", prior overruled {overruled[kind]}" if kind in overruled else ""
        lines.append(f"{kind:>14}: {k:5d} decisions, {1000 * cpu / k:6.1f} ms each, {samples / k:6.1f} samples each{over}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Play and report; see the module docstring."""
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--solitaire":
        print(solitaire(int(argv[1]) if len(argv) > 1 else 150))
        return
    if argv and argv[0] == "--costs":
        print(costs(argv[1] if len(argv) > 1 else "expert@150cpu", int(argv[2]) if len(argv) > 2 else 1,
                    players=int(argv[3]) if len(argv) > 3 else 2))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("entrants", nargs="+")
    ap.add_argument("--deals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--max-minutes", type=float, default=None, help="stop starting deals after this long")
    args = ap.parse_args(argv)
    entrants = args.entrants
    records: list[dict[str, Any]] = []
    if args.out and args.out.exists():
        records = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
    done = {r["group"] for r in records}
    todo = [d for d in range(args.deals) if d not in done]
    t0 = time.monotonic()
    sink = args.out.open("a") if args.out else None

    def keep(recs: list[dict[str, Any]]) -> None:
        records.extend(recs)
        if sink:
            for r in recs:
                sink.write(json.dumps(r) + "\n")
            sink.flush()

    if args.jobs > 1:
        from multiprocess import Pool

        with Pool(args.jobs) as pool:
            its = pool.imap_unordered(lambda d: play_deal(entrants, d, args.seed), todo)
            for recs in its:
                keep(recs)
                if args.max_minutes and time.monotonic() - t0 > args.max_minutes * 60:
                    pool.terminate()
                    break
    else:
        for d in todo:
            keep(play_deal(entrants, d, args.seed))
            if args.max_minutes and time.monotonic() - t0 > args.max_minutes * 60:
                break
    # Only whole deal groups count.
    by_group: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        by_group.setdefault(r["group"], []).append(r)
    whole = [r for g in by_group.values() if len(g) == len(entrants) for r in g]
    print(f"{len(whole)} games in {len(whole) // len(entrants)} deal groups; load {os.getloadavg()[0]:.1f}")
    print(summary(sorted(whole, key=lambda r: r["id"]), entrants))


if __name__ == "__main__":
    main()
