"""Calibration of the leaderboards' confidence: does "settled at 95 %" mean 95 %?

Simulated tournaments go through the project's own code: the schedule (`schedule`), the
rounds of early stopping (`plan_rounds`), the runner's stopping check (`stop_check`) and
the leaderboard (`build_leaderboard`, its marks and intervals). Only the games are
simulated, in two ways:

- equal entrants (false settles, false SPRT accepts, coverage): places are drawn, not
  played. Each deal group draws a luck value per seat, shared by the group's games (so a
  duplicate deal's seat rotation cancels it, as real duplicate deals do); each game adds
  independent noise per seat; places are the ranks, with shared places where the rounded
  values are equal (about 5 % of neighbouring places, like the short variant). Equal
  entrants are exchangeable, which is all the statistics can see of them, and drawing is
  a thousand times cheaper than playing, so 400+ tournaments per case fit in minutes;
- entrants of known, different strength (power, wrong orders): real games of the engine
  with in-process players (greedy, noisy greedy 0.15, noisy greedy 0.5) on the short
  variant ``phases: [1, 2]``, seats and deals as the schedule says.

    python tools/calibrate.py --runs 400 --power-seeds 40 --jobs 2 --json calibration.json

Neither the per-entrant bootstrap intervals of the rating nor TrueSkill (the other rating)
decide any mark, so simulated boards are built without them (``resamples=0``, TrueSkill not
run); the order, the marks and the intervals of the differences are the real ones.

The rating's own intervals have a part of their own (``rating``): entrants of known
strength at random 4-player tables (places drawn from the Plackett–Luce model, the one the
rating fits), each entrant's 95 % interval of θ against its true θ, with the bootstrap
exact and in its normal approximation (what a board uses for games of many kinds).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.ratings.significance import clopper_pearson  # noqa: E402
from harness.tournament.config import TournamentConfig, config_from  # noqa: E402
from harness.ratings.standings import build_leaderboard  # noqa: E402
from harness.ratings.trueskill import Ratings  # noqa: E402
from harness.tournament.stop_rule import stop_check  # noqa: E402
from harness.tournament.schedule import GameSpec, plan_rounds, schedule  # noqa: E402

SHORT = {"phases": [1, 2]}
TARGET_RATE, TARGET_UPPER = 0.05, 0.07


@dataclass(frozen=True)
class Case:
    """One kind of simulated tournament of equal entrants."""

    entrants: int
    table_size: int
    games_per_table: int
    duplicate: bool
    rule: str | None  # None: fixed size; "settled"; "sprt"
    stop: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        kind = {None: "fixed size", "settled": "stop_when: settled", "sprt": "stop_when: sprt"}[self.rule]
        extra = "".join(f", {k} {v}" for k, v in self.stop if k not in ("candidate", "baseline"))
        if self.rule == "sprt":
            extra = f", candidate e0 vs {dict(self.stop).get('baseline') or 'the field'}" + extra
        return (f"{self.entrants} entrants (tables of {self.table_size}), {'duplicate' if self.duplicate else 'plain'}, "
                f"{kind}{extra}")


def config(case: Case, seed: int) -> TournamentConfig:
    """The tournament of `case` with tournament seed `seed` (bots are never started)."""
    data: dict[str, Any] = {
        "name": "calibration", "seed": seed, "table_size": case.table_size, "games_per_table": case.games_per_table,
        "duplicate": case.duplicate, "rules": SHORT, "output": "/nonexistent/calibration",
        "faults": {"disqualify": False},  # simulated players never fault
        "bots": [{"name": f"e{i}", "cmd": "true"} for i in range(case.entrants)],
    }
    if case.rule:
        data["stop_when"] = case.rule
        data["stop"] = dict(case.stop)
    return config_from(data)


def record(spec: GameSpec, places: Sequence[int]) -> dict[str, Any]:
    """A games.jsonl record of `spec` with these places (what the statistics read)."""
    n = len(spec.seats)
    return {"id": spec.index, "game": spec.game, "group": spec.group, "seats": list(spec.seats),
            "places": [int(p) for p in places], "scores": [0] * n, "phases": [0] * n, "faults": [], "forfeits": [],
            "reason": "done"}


class DrawnGames:
    """Places drawn for equal (or `skill`-shifted) entrants: seat luck per deal group,
    noise per game, shared places where rounded values meet."""

    def __init__(self, seed: int, skill: Mapping[str, float] | None = None, luck: float = 1.0, noise: float = 0.8,
                 grain: float = 8.0) -> None:
        self.rng = np.random.default_rng(seed)
        self.skill = dict(skill or {})
        self.luck, self.noise, self.grain = luck, noise, grain
        self._group: dict[int, np.ndarray] = {}

    def play(self, spec: GameSpec) -> dict[str, Any]:
        n = len(spec.seats)
        luck = self._group.get(spec.group)
        if luck is None:
            luck = self._group[spec.group] = self.rng.normal(0.0, self.luck, n)
        value = luck + self.rng.normal(0.0, self.noise, n) + np.array([self.skill.get(e, 0.0) for e in spec.seats])
        v = np.round(value * self.grain)
        places = [1 + int((v > x).sum()) for x in v]
        return record(spec, places)


class RealGames:
    """Real games of the engine with in-process players, one per entrant name."""

    def __init__(self, players: Mapping[str, Callable[[], Any]]) -> None:
        from harness.engine import Rules

        self.rules = Rules.from_dict(SHORT)
        self.players = {e: make() for e, make in players.items()}

    def play(self, spec: GameSpec) -> dict[str, Any]:
        from harness.players import play_local

        game = play_local(self.rules, [self.players[e] for e in spec.seats], spec.seed, game_id=spec.game)
        return record(spec, game.places())


def run_one(case: Case, seed: int, games: Any) -> dict[str, Any]:
    """One tournament of `case`: the fixed-size board, or the stopping rule's run."""
    cfg = config(case, seed)
    specs = schedule(cfg)
    records: dict[int, dict[str, Any]] = {}
    if case.rule is None:
        for s in specs:
            records[s.index] = games.play(s)
        board = build_leaderboard(records.values(), cfg.entrants, cfg.name, cfg.seed, resamples=0,
                                  ratings=Ratings(cfg.entrants))
        return {"board": board, "games": len(records), "stopped": None}
    state = play_rounds(cfg, specs, games, records)
    return {"games": len(records), "stopped": state["reason"], "state": state, "records": records, "cfg": cfg}


def play_rounds(cfg: TournamentConfig, specs: Sequence[GameSpec], games: Any,
                records: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Play `specs` round by round into `records` as the runner does, asking the runner's
    stopping check after each round; returns its last answer."""
    rounds = plan_rounds(specs, cfg.stop.round_games)
    state: dict[str, Any] = {}
    for r, rnd in enumerate(rounds):
        for s in rnd:
            records[s.index] = games.play(s)
        state = stop_check(cfg, rounds, r, records)
        if state["stop"]:
            break
    return state


def equal_case(args: tuple[Case, int]) -> dict[str, Any]:
    """A run of equal entrants: did anything get settled (or the SPRT accept H1)?"""
    case, seed = args
    out = run_one(case, seed, DrawnGames(seed))
    if case.rule is None:
        b = out["board"]
        nb = b["statistics"]["neighbours"]
        first = nb[0] if nb else None
        return {"false": any(r.get("settled_above") for r in b["entrants"]), "games": out["games"],
                "covered": None if first is None else first["share_low"] <= 0.5 <= first["share_high"]}
    if case.rule == "sprt":
        return {"false": out["stopped"] == "accepted", "games": out["games"], "decided": out["stopped"] in
                ("accepted", "rejected")}
    return {"false": out["stopped"] == "settled", "games": out["games"]}


def coverage_case(args: tuple[bool, int, int]) -> bool:
    """Equal entrants, two of them, `deals` deal groups: does the interval of the share hold ½?"""
    duplicate, deals, seed = args
    case = Case(2, 2, 2 * deals if duplicate else deals, duplicate, None)
    nb = run_one(case, seed, DrawnGames(seed))["board"]["statistics"]["neighbours"][0]
    return bool(nb["share_low"] <= 0.5 <= nb["share_high"])


RATING_ENTRANTS, RATING_GAMES, RATING_STEP = 6, 1500, 0.2  # 4-player tables, θ_i = −0.2 i


def rating_truth(entrants: int = RATING_ENTRANTS, step: float = RATING_STEP) -> np.ndarray:
    """The true θ as the board's parametrisation has them: the differences −step · i,
    placed where the prior's virtual games against the anchor (θ = 0) put them as the
    games grow (Σ 1 − 2σ(θ_i) = 0)."""
    t = -step * np.arange(entrants)
    lo, hi = -20.0, 20.0
    for _ in range(200):
        c = (lo + hi) / 2
        lo, hi = (c, hi) if float(np.sum(1 - 2 / (1 + np.exp(-(t + c))))) > 0 else (lo, c)
    return t + (lo + hi) / 2


def rating_case(args: tuple[str, int]) -> list[bool]:
    """One tournament of entrants of known strength (Plackett–Luce places, random 4-player
    tables, plain deals): does each entrant's 95 % interval of θ hold its true θ? The
    intervals as a board computes them (1,000 resamples, percentiles), the bootstrap
    exact or in its normal approximation."""
    from harness.ratings.bootstrap import DealBootstrap, NormalBootstrap, analyse
    from harness.ratings.games import GameArrays

    method, seed = args
    rng = np.random.default_rng(seed)
    seats = np.argsort(rng.random((RATING_GAMES, RATING_ENTRANTS)), axis=1)[:, :4].astype(np.int32)
    noise = -RATING_STEP * seats + rng.gumbel(size=seats.shape)
    places = (np.argsort(np.argsort(-noise, axis=1), axis=1) + 1).astype(np.int16)
    ids = np.arange(RATING_GAMES, dtype=np.int64)
    arr = GameArrays.build([f"e{i}" for i in range(RATING_ENTRANTS)], ids, -1 - ids, seats, places)
    boot = (NormalBootstrap if method == "normal" else DealBootstrap)(arr, arr.entrants)
    a = analyse(arr, arr.entrants, seed=seed) if method == "exact" else None
    th = np.array([x for x, _ in boot.resamples(1000, seed)]) if a is None else np.array(a.samples)
    lo, hi = np.quantile(th, [0.025, 0.975], axis=0)
    truth = rating_truth()
    return ((lo <= truth) & (truth <= hi)).tolist()


LEAGUE_CASES = ((4, 2, False), (4, 2, True), (8, 2, False), (5, 4, True))  # entrants, table size, duplicate
LEAGUE_BUDGET, LEAGUE_ROUND = 800, 40


def league_case(args: tuple[int, int, bool, bool | None, int]) -> dict[str, Any]:
    """A league of equal entrants (`format: league`, the real `Matchmaker`, rounds of
    LEAGUE_ROUND games to LEAGUE_BUDGET): its board is looked at after every round, as a
    league publishes it (`sequential_board`; or with the test `sequential` forced). Was
    any order ever marked settled, and after how many games?"""
    from harness.tournament.league import Matchmaker
    from harness.tournament.board import sequential_board
    from harness.ratings.standings import tally_leaderboard
    from harness.ratings.tally import Tally

    entrants, size, duplicate, sequential, seed = args
    cfg = config_from({
        "name": "calibration", "seed": seed, "format": "league", "games": LEAGUE_BUDGET, "table_size": size,
        "duplicate": duplicate, "rules": SHORT, "output": "/nonexistent/calibration", "faults": {"disqualify": False},
        "league": {"round_games": LEAGUE_ROUND, "min_games": 10},
        "bots": [{"name": f"e{i}", "cmd": "true"} for i in range(entrants)]})
    seq = sequential_board(cfg) if sequential is None else sequential
    mm, games = Matchmaker(cfg), DrawnGames(seed)
    records: dict[int, dict[str, Any]] = {}
    tally = Tally(cfg.standing, ratings=False)  # the board's TrueSkill decides no mark: not run
    looks = 0
    while len(records) < LEAGUE_BUDGET:
        for s in mm.round(len(records), cfg.entrants, records):
            records[s.index] = games.play(s)
            tally.add(records[s.index])
        looks += 1
        board = tally_leaderboard(tally, cfg.name, cfg.seed, resamples=0, sequential=seq, ratings=Ratings(cfg.entrants))
        if any(r.get("settled_above") for r in board["entrants"]):
            return {"false": True, "games": len(records), "looks": looks}
    return {"false": False, "games": len(records), "looks": looks}


POWER_FIELD = {"greedy": 0.0, "noisy0.15": 0.15, "noisy0.5": 0.5}  # true order: as listed


def power_case(args: tuple[bool, int, int]) -> dict[str, Any]:
    """greedy vs noisy greedy (0.15) vs noisy greedy (0.5) at one table of three, real games,
    stop_when: settled with the defaults: games to a settled order, and whether any settled
    mark contradicts the true order."""
    from harness.players import GreedyStrategy, NoisyGreedyStrategy

    duplicate, budget, seed = args
    names = list(POWER_FIELD)
    case = Case(3, 3, budget, duplicate, "settled")
    cfg = config(case, seed)
    cfg = config_from(dict(cfg.raw) | {"bots": [{"name": n, "cmd": "true"} for n in names]})
    def maker(p: float) -> Callable[[], Any]:
        return GreedyStrategy if not p else lambda: NoisyGreedyStrategy(p, seed=seed)

    makers = {n: maker(p) for n, p in POWER_FIELD.items()}
    records: dict[int, dict[str, Any]] = {}
    state = play_rounds(cfg, schedule(cfg), RealGames(makers), records)
    board = build_leaderboard(records.values(), cfg.entrants, cfg.name, cfg.seed, resamples=0, sequential=True,
                              ratings=Ratings(cfg.entrants))
    rank = {n: i for i, n in enumerate(names)}
    rows = board["entrants"]
    wrong = any(row["settled_above"] and rank[row["entrant"]] > rank[nxt["entrant"]] for row, nxt in zip(rows, rows[1:]))
    return {"settled": state["reason"] == "settled", "games": len(records), "wrong": wrong,
            "order": [r["entrant"] for r in rows]}


def rate(k: int, n: int) -> tuple[float, float, float]:
    """The share k/n with its 95 % Clopper–Pearson interval."""
    lo, hi = clopper_pearson(k, n, 0.95)
    return k / n if n else float("nan"), float(lo[0]), float(hi[0])


def cases(runs: int) -> list[Case]:
    """The equal-entrant cases: 2, 3 and 4 entrants; plain and duplicate; fixed size,
    stop_when: settled (defaults, and rounds of 40 from game 80) and stop_when: sprt."""
    out: list[Case] = []
    shapes = [(2, 2), (3, 3), (4, 2)]
    for n, t in shapes:
        tables = math.comb(n, t)
        for dup in (False, True):
            out.append(Case(n, t, _per_table(100, tables, t), dup, None))
            out.append(Case(n, t, _per_table(200, tables, t), dup, "settled"))
            base = (("baseline", "e1"),) if n == 2 else ()
            out.append(Case(n, t, _per_table(1200, tables, t), dup, "sprt", (("candidate", "e0"),) + base))
    out.append(Case(2, 2, 400, False, "settled", (("round_games", 40), ("min_games", 80))))
    return out


def _per_table(games: int, tables: int, t: int) -> int:
    """games_per_table for about `games` games in all (a multiple of the table size)."""
    return max(t, round(games / tables / t) * t)


def pool_map(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int) -> list[Any]:
    """`map`, over `jobs` processes when more than one."""
    items = list(items)
    if jobs <= 1:
        return [fn(x) for x in items]
    from multiprocess import Pool

    with Pool(jobs) as pool:
        return pool.map(fn, items, chunksize=max(1, len(items) // (4 * jobs)))


def calibrate(runs: int = 400, power_seeds: int = 40, coverage_runs: int | None = None, jobs: int = 1,
              power_budget: int = 600, echo: Callable[[str], None] = print,
              parts: Sequence[str] = ("fixed", "settled", "sprt", "coverage", "rating", "league", "power"),
              only: Sequence[str] = (), power_kinds: Sequence[str] = ("duplicate", "plain"),
              league_fixed: bool = False) -> dict[str, Any]:
    """Run the `parts` asked for (of the equal-entrant cases, those whose label holds one of
    `only`, if given); returns the figures (and prints them through `echo`). `league_fixed`:
    the first league case is also run with the fixed-sample test on its boards, to show
    what looking again and again does to that test."""
    t0 = time.monotonic()
    result: dict[str, Any] = {"runs": runs, "false_rates": [], "coverage": [], "power": []}
    echo(f"False settles / false SPRT accepts, equal entrants, {runs} tournaments each "
         f"(target: rate <= {TARGET_RATE:.0%}, upper 95 % bound <= {TARGET_UPPER:.0%}):")
    for case in cases(runs):
        if (case.rule or "fixed") not in parts or (only and not any(o in case.label for o in only)):
            continue
        res = pool_map(equal_case, [(case, 10_000 + s) for s in range(runs)], jobs)
        k = sum(r["false"] for r in res)
        r_, lo, hi = rate(k, runs)
        row = {"case": case.label, "rule": case.rule or "fixed", "false": k, "runs": runs, "rate": r_, "low": lo,
               "high": hi, "mean_games": sum(r["games"] for r in res) / runs,
               "ok": r_ <= TARGET_RATE and hi <= TARGET_UPPER}
        if case.rule == "sprt":
            row["decided"] = sum(r["decided"] for r in res) / runs
        result["false_rates"].append(row)
        extra = f", decided {row['decided']:.0%}" if "decided" in row else ""
        echo(f"  {case.label}: {k}/{runs} = {100 * r_:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] "
             f"(mean {row['mean_games']:.0f} games{extra}){'' if row['ok'] else '  <-- above target'}")
    cov_runs = (coverage_runs or runs) if "coverage" in parts else 0
    if cov_runs:
        echo(f"Coverage of the 95 % interval of the share (equal entrants: ½), {cov_runs} tournaments each (target >= 93 %):")
    for dup in (True, False) if cov_runs else ():
        for deals in (10, 30, 100):
            res = pool_map(coverage_case, [(dup, deals, 20_000 + s) for s in range(cov_runs)], jobs)
            k = sum(res)
            r_, lo, hi = rate(k, cov_runs)
            result["coverage"].append({"duplicate": dup, "deals": deals, "covered": k, "runs": cov_runs, "rate": r_,
                                       "low": lo, "high": hi, "ok": r_ >= 0.93})
            echo(f"  {'duplicate' if dup else 'plain'}, {deals} deals: {k}/{cov_runs} = {100 * r_:.1f} % "
                 f"[{100 * lo:.1f}, {100 * hi:.1f}]")
    if "rating" in parts:
        echo(f"Coverage of the 95 % interval of each entrant's θ (entrants of known strength, {RATING_ENTRANTS} "
             f"entrants, {RATING_GAMES} 4-player games), {runs} tournaments each:")
        result["rating"] = []
        for method in ("exact", "normal"):
            res = pool_map(rating_case, [(method, 50_000 + s) for s in range(runs)], jobs)
            k = sum(sum(r) for r in res)
            r_, lo, hi = rate(k, runs * RATING_ENTRANTS)
            per = [sum(r[i] for r in res) / runs for i in range(RATING_ENTRANTS)]
            result["rating"].append({"method": method, "covered": k, "intervals": runs * RATING_ENTRANTS, "rate": r_,
                                     "low": lo, "high": hi, "by_entrant": per})
            echo(f"  bootstrap {'exact' if method == 'exact' else 'in its normal approximation'}: {k}/"
                 f"{runs * RATING_ENTRANTS} = {100 * r_:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]; by entrant "
                 + ", ".join(f"{100 * x:.0f} %" for x in per))
    if "league" in parts:
        echo(f"False settles in leagues of equal entrants, the board looked at after every round of {LEAGUE_ROUND} "
             f"games to {LEAGUE_BUDGET}, {runs} leagues each (target: rate <= {TARGET_RATE:.0%}):")
        cases_: list[tuple[int, int, bool, bool | None]] = [(n, t, dup, None) for n, t, dup in LEAGUE_CASES]
        if league_fixed:  # the first case again, its boards judged by the fixed-sample test
            cases_.insert(1, (*LEAGUE_CASES[0], False))
        for n, t, dup, seq in cases_:
            res = pool_map(league_case, [(n, t, dup, seq, 40_000 + s) for s in range(runs)], jobs)
            k = sum(r["false"] for r in res)
            r_, lo, hi = rate(k, runs)
            test = "the fixed-sample test (not what a league publishes)" if seq is False else "as published"
            label = f"{n} entrants (tables of {t}), {'duplicate' if dup else 'plain'}, league, {test}"
            firsts = sorted(r["games"] for r in res if r["false"])
            row = {"case": label, "rule": "league", "sequential": seq is None, "false": k, "runs": runs, "rate": r_,
                   "low": lo, "high": hi, "looks": LEAGUE_BUDGET // LEAGUE_ROUND,
                   "ok": r_ <= TARGET_RATE and hi <= TARGET_UPPER,
                   "median_games_to_false": float(np.median(firsts)) if firsts else None}
            result["false_rates"].append(row)
            echo(f"  {label}: {k}/{runs} = {100 * r_:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"
                 f"{'' if seq is False or row['ok'] else '  <-- above target'}")
    if power_seeds and "power" in parts:
        echo(f"Power: greedy vs noisy greedy 0.15 vs noisy greedy 0.5, one table of three, real games "
             f"(phases [1, 2]), stop_when: settled with the defaults, budget {power_budget} games, {power_seeds} seeds:")
        wrong_total = runs_total = 0
        for dup in [k == "duplicate" for k in power_kinds]:
            res = []
            for s0 in range(0, power_seeds, max(1, jobs)):  # a line per batch: long runs show progress
                batch = pool_map(power_case, [(dup, power_budget, 30_000 + s)
                                              for s in range(s0, min(power_seeds, s0 + max(1, jobs)))], jobs)
                for r in batch:
                    echo(f"    {'duplicate' if dup else 'plain'} seed {30_000 + len(res)}: "
                         f"{'settled' if r['settled'] else 'budget'} after {r['games']} games, order "
                         f"{' > '.join(r['order'])}{' (WRONG)' if r['wrong'] else ''}")
                    res.append(r)
            settled = [r["games"] for r in res if r["settled"]]
            wrong = sum(r["wrong"] for r in res)
            wrong_total += wrong
            runs_total += len(res)
            med = float(np.median(settled)) if settled else None
            row = {"duplicate": dup, "seeds": power_seeds, "settled": len(settled), "median_games": med,
                   "mean_games_all": sum(r["games"] for r in res) / len(res),
                   "quartiles": None if not settled else [float(np.percentile(settled, 25)), float(np.percentile(settled, 75))],
                   "wrong": wrong}
            result["power"].append(row)
            q = "" if not settled else f", quartiles {row['quartiles'][0]:.0f}..{row['quartiles'][1]:.0f}"
            echo(f"  {'duplicate' if dup else 'plain'}: settled in {len(settled)}/{power_seeds} runs within the "
                 f"budget; median {med} games{q}; a settled mark against the true order in {wrong} runs")
        r_, lo, hi = rate(wrong_total, runs_total)
        result["wrong_order"] = {"wrong": wrong_total, "runs": runs_total, "rate": r_, "low": lo, "high": hi}
        echo(f"  wrong order declared: {wrong_total}/{runs_total} = {100 * r_:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] "
             "(target <= 1 %)")
    result["seconds"] = round(time.monotonic() - t0, 1)
    echo(f"({result['seconds']} s)")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=400, help="tournaments per equal-entrant case (default 400)")
    ap.add_argument("--coverage-runs", type=int, default=None, help="tournaments per coverage case (default --runs)")
    ap.add_argument("--power-seeds", type=int, default=40, help="seeds per power case (0: skip; default 40)")
    ap.add_argument("--power-budget", type=int, default=600, help="games per power run at most (default 600)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--league-fixed", action="store_true",
                    help="also run the first league case with the fixed-sample test on its boards")
    ap.add_argument("--parts", default="fixed,settled,sprt,coverage,rating,league,power",
                    help="which parts to run, comma-separated (default: all)")
    ap.add_argument("--power-kinds", default="duplicate,plain", help="power runs with these deals (default both)")
    ap.add_argument("--only", default="", help="only the equal-entrant cases whose label holds one of these "
                    "comma-separated strings")
    a = ap.parse_args(argv)
    res = calibrate(a.runs, a.power_seeds, a.coverage_runs, a.jobs, a.power_budget, echo=lambda s: print(s, flush=True),
                    parts=a.parts.split(","), only=[o for o in a.only.split(",") if o],
                    power_kinds=a.power_kinds.split(","), league_fixed=a.league_fixed)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
