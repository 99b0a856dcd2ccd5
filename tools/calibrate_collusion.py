"""Calibration of the collusion report: how often an honest field gets a pair flagged,
and how many games a feeding pair takes to be flagged.

Games are real games of the engine with the in-process players (no subprocess bots),
seated by the project's own schedule (`format: random`, duplicate deals), and the pass
counts are the ones the referee records (`referee.passes`); the report is
`ratings.collusion.collusion_report`, as the board builds it.

- ``honest``: fields of eight entrants, two each of greedy, strong, expert (``expert@r1``:
  one sampled world per decision, the same decisions on any machine) and random, at
  tables of 3 (1,002 games) and of 4 (1,000 games), on the short variant ``phases: [1, 2]``
  (some ten times cheaper than the full game; the tests' null does not depend on the
  game's length). Each field's games are written to DIR, then read back and judged.
- ``feeder``: a feeder (tests/bots/feeder.py: greedy that discards Wilds whenever its
  partner draws next) and its partner (greedy) against a greedy at one table of three,
  the full game, seating seeded; the board after every deal group until flagged.

    nice -n 10 python tools/calibrate_collusion.py honest --fields 100 --jobs 2 --dir /tmp/honest
    python tools/calibrate_collusion.py judge --dir /tmp/honest
    nice -n 10 python tools/calibrate_collusion.py feeder --seeds 10
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bots"))

from harness.engine import Rules  # noqa: E402
from harness.players import GreedyStrategy, make_strategy, play_local  # noqa: E402
from harness.ratings.collusion import PassTally, collusion_report  # noqa: E402
from harness.ratings.significance import clopper_pearson  # noqa: E402
from harness.referee.passes import KINDS, PassCounter  # noqa: E402
from harness.tournament.config import TournamentConfig, parse_config  # noqa: E402
from harness.tournament.schedule import GameSpec, schedule  # noqa: E402

SHORT = {"phases": [1, 2]}
HONEST = {"greedy": "greedy", "strong": "strong", "expert": "expert@r1", "random": "random"}
GAMES = {3: 1002, 4: 1000}


def field_config(names: Sequence[str], table_size: int, games: int, seed: int, rules: Mapping[str, Any],
                 fmt: str = "random", per_table: int | None = None) -> TournamentConfig:
    """A tournament of `names` (bots never started) with duplicate deals."""
    data: dict[str, Any] = {"name": "collusion", "seed": seed, "table_size": table_size, "format": fmt,
                            "duplicate": True, "rules": dict(rules), "output": "/nonexistent/collusion",
                            "faults": {"disqualify": False}, "bots": [{"name": n, "cmd": "true"} for n in names]}
    if fmt == "random":
        data["games"] = games
    else:
        data["games_per_table"] = per_table
    return parse_config(data)


def play(cfg: TournamentConfig, makers: Mapping[str, Callable[[], Any]],
         specs: Iterable[GameSpec] | None = None) -> Iterable[dict[str, Any]]:
    """The records (what the report reads) of `cfg`'s games, played in-process."""
    rules = cfg.rules
    for spec in specs if specs is not None else schedule(cfg):
        players = []
        for e in spec.seats:
            p = makers[e]()
            p.name = e  # the names the seats see, as a referee gives them
            players.append(p)
        counter = PassCounter(len(spec.seats))
        game = play_local(rules, players, spec.seed, game_id=spec.game, on_events=counter.extend)
        yield {"id": spec.index, "game": spec.game, "group": spec.group, "seats": list(spec.seats),
               "places": game.places(), "scores": [p.score for p in game.players], "passes": counter.to_record(),
               "faults": [], "forfeits": [], "reason": game.end_reason}


def honest_makers(seed: int) -> dict[str, Callable[[], Any]]:
    """Two entrants of each honest strategy, `kind-1` and `kind-2`."""
    out: dict[str, Callable[[], Any]] = {}
    for kind, spec in HONEST.items():
        for k in (1, 2):
            out[f"{kind}-{k}"] = (lambda spec=spec, s=seed * 10 + k: make_strategy(spec, s))
    return out


def honest_field(args: tuple[int, int, str]) -> str:
    """One honest field (table size, seed) written to DIR/t{size}-{seed}.jsonl.gz."""
    size, seed, out = args
    path = Path(out) / f"t{size}-{seed}.jsonl.gz"
    if path.exists():
        return str(path)
    makers = honest_makers(seed)
    cfg = field_config(list(makers), size, GAMES[size], seed, SHORT)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for rec in play(cfg, makers):
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    tmp.rename(path)
    return str(path)


def read_field(path: str | Path) -> list[dict[str, Any]]:
    """A field's records as written by `honest_field`."""
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def rows_of(passes: Any) -> Any:
    """`passes` as rows (fields written by an earlier version of this tool hold matrices)."""
    if not isinstance(passes, dict):
        return passes
    kinds = [passes[k] for k in KINDS]
    n = len(kinds[0])
    return [[i, j, *(m[i][j] for m in kinds)] for i in range(n) for j in range(n) if any(m[i][j] for m in kinds)]


def report_of(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The collusion report of `records`, as the board builds it."""
    records = list(records)
    tally = PassTally(sorted({e for r in records for e in r["seats"]}))
    for r in records:
        tally.add(dict(r, passes=rows_of(r["passes"])))
    return collusion_report(tally).listed


def rate(k: int, n: int) -> str:
    """k of n as a share with its 95 % Clopper-Pearson interval."""
    lo, hi = clopper_pearson(k, n, 0.95)
    return f"{k}/{n} = {k / n:.3f} [{float(lo[0]):.3f}, {float(hi[0]):.3f}]"


def judge(folder: str) -> dict[str, Any]:
    """The honest fields in `folder`, judged: fields with no pair flagged, per table size."""
    out: dict[str, Any] = {}
    for size in (3, 4):
        paths = sorted(Path(folder).glob(f"t{size}-*.jsonl.gz"))
        if not paths:
            continue
        clean, low, ways = 0, [], []
        for p in paths:
            rep = report_of(read_field(p))
            clean += not any(r["flagged"] for r in rep)
            low.append(min((r["p"] for r in rep), default=1.0))
            # each way's own test, where its discarder passed any Wild (else it cannot reject)
            ways += [f["p_wilds"] for r in rep for f in r["feeds"].values() if f["wilds_expected"] or f["wilds"]]
        out[str(size)] = {"fields": len(paths), "clean": clean, "clean_share": rate(clean, len(paths)),
                          "min_p_below_0.05": sum(x < 0.05 for x in low), "min_p_below_0.2": sum(x < 0.2 for x in low),
                          "ways": len(ways), "ways_p_below_0.05": rate(sum(x < 0.05 for x in ways), len(ways)),
                          "ways_p_below_0.01": rate(sum(x < 0.01 for x in ways), len(ways))}
        print(f"tables of {size}: {len(paths)} honest fields, no pair flagged in {rate(clean, len(paths))}; "
              f"smallest adjusted p below 0.05 in {out[str(size)]['min_p_below_0.05']}, below 0.2 in "
              f"{out[str(size)]['min_p_below_0.2']}; one way's own test (unadjusted) below 0.05 in "
              f"{out[str(size)]['ways_p_below_0.05']}, below 0.01 in {out[str(size)]['ways_p_below_0.01']}", flush=True)
    total = sum(v["fields"] for v in out.values())
    clean = sum(v["clean"] for v in out.values())
    if total:
        out["all"] = rate(clean, total)
        print(f"all: no pair flagged in {out['all']}")
    return out


FEEDER_FIELDS = {
    # the table: the feeder, its partner and a greedy, every game at one table of three
    "three": {"feeder": None, "partner": "greedy", "greedy": "greedy"},
    # the pair in a field of six at random tables of three
    "six": {"feeder": None, "partner": "greedy", "greedy-1": "greedy", "greedy-2": "greedy", "strong": "strong",
            "random": "random"},
}


def feeder_run(args: tuple[str, int, int]) -> dict[str, Any]:
    """One tournament with a feeding pair (`FEEDER_FIELDS[kind]`, the full game, duplicate
    deals): the games until the pair is flagged (looked at after every deal group), and
    each entrant's wins."""
    from feeder import FeederStrategy

    kind, games, seed = args
    field = FEEDER_FIELDS[kind]
    makers = {e: (lambda: FeederStrategy("partner")) if spec is None else (lambda spec=spec: make_strategy(spec, seed))
              for e, spec in field.items()}
    cfg = (field_config(list(field), 3, games, seed, {}, fmt="round-robin", per_table=games) if kind == "three"
           else field_config(list(field), 3, games, seed, {}))
    records: list[dict[str, Any]] = []
    at = None
    for rec in play(cfg, makers):
        records.append(rec)
        if at is None and len(records) % 3 == 0 and ["feeder", "partner"] in [
                sorted(r["pair"]) for r in report_of(records) if r["flagged"]]:
            at = len(records)
    wins = {e: sum(r["places"][r["seats"].index(e)] == 1 for r in records if e in r["seats"]) for e in field}
    played = {e: sum(e in r["seats"] for r in records) for e in field}
    return {"kind": kind, "seed": seed, "flagged_at": at, "games": len(records), "wins": wins, "played": played}


def feeder(seeds: int, games: int = 60, jobs: int = 1) -> dict[str, Any]:
    """`feeder_run` for `seeds` tournaments of each kind."""
    out: dict[str, Any] = {}
    with Pool(jobs) as pool:
        for kind in FEEDER_FIELDS:
            runs = pool.map(feeder_run, [(kind, games, 500 + s) for s in range(seeds)])
            at = sorted(r["flagged_at"] or 10 ** 9 for r in runs)
            flagged = sum(r["flagged_at"] is not None for r in runs)
            wins = {e: sum(r["wins"][e] for r in runs) for e in FEEDER_FIELDS[kind]}
            played = {e: sum(r["played"][e] for r in runs) for e in FEEDER_FIELDS[kind]}
            out[kind] = {"runs": runs, "flagged": flagged, "median_games": at[len(at) // 2], "max_games": at[-1],
                         "wins": wins, "played": played}
            print(f"{kind}: flagged in {flagged}/{seeds} tournaments of {games} games; games to the flag: median "
                  f"{at[len(at) // 2]}, most {at[-1]}; wins/games: "
                  + ", ".join(f"{e} {wins[e]}/{played[e]}" for e in wins), flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=("honest", "judge", "feeder"))
    ap.add_argument("--fields", type=int, default=100, help="honest fields per table size")
    ap.add_argument("--sizes", default="3,4")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--dir", default="/tmp/collusion-honest")
    ap.add_argument("--seeds", type=int, default=10, help="feeder tournaments")
    ap.add_argument("--games", type=int, default=60, help="games of each feeder tournament")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args(argv)
    if a.part == "honest":
        Path(a.dir).mkdir(parents=True, exist_ok=True)
        jobs = [(int(s), 1000 + k, a.dir) for k in range(a.fields) for s in a.sizes.split(",")]
        t0 = time.time()
        with Pool(a.jobs) as pool:
            for i, p in enumerate(pool.imap_unordered(honest_field, jobs)):
                print(f"{i + 1}/{len(jobs)} {p} {time.time() - t0:.0f} s", flush=True)
        return
    res = judge(a.dir) if a.part == "judge" else feeder(a.seeds, a.games, a.jobs)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
