#!/usr/bin/env python3
"""A synthetic results folder: games.jsonl of any size and any number of entrants,
written without playing, to measure the publishing path (leaderboards, statistics, site).

The games are the tournament's own schedule (`schedule(cfg)`: the same ids, seats, seeds
and deal groups a real run of the config would play), so the folder is a real results
folder: `p10-tourney run` with the config written next to it finds every game done,
`p10-tourney leaderboard` and `p10-tourney report` read it. Each entrant has a latent
strength; a game's places are drawn from the Plackett–Luce model of those strengths
(strength plus Gumbel noise, best first), so the order of a long run is meaningful: entrant
e0001 is the strongest, then e0002, and so on. Scores and phases completed are drawn to
agree with the places (R9.4: more phases first, then the lower score). Everything follows
from `--seed`: the same arguments write the same games.jsonl byte for byte.

Lines are written by the runner's own `Journal`. Per-line fsync is skipped while writing
(a synthetic journal is written again rather than recovered; on this machine's disk an
fsync costs about 5 ms, over an hour for a million lines); the file is synced once at the
end.

    python tools/gen_journal.py OUT --entrants 100 --games 10000           # random format
    python tools/gen_journal.py OUT --entrants 100 --games 1000000 --format round-robin --table-size 2
    python tools/gen_journal.py OUT --publish-only                         # re-publish OUT
    python tools/gen_journal.py OUT --entrants 100 --games 100000 --format round-robin --table-size 2 --run

`--run` writes the folder by a real `run_tournament` whose executor draws each game's
record instead of playing it (`SyntheticExecutor`): the run's main process (its schedule,
journal, running aggregates and end of run) measured at any size without bots.

The random format's schedule costs about 3 ms per game at 100 entrants (it balances who
meets whom), so beyond some 20,000 games use the round-robin format, whose schedule is
fast: there `--games` is rounded to whole rounds of every table (`games_per_table`).

After writing, the folder is published as a run's end does (`publish`: leaderboard.md/
.json/.csv, head_to_head.csv, stats.md, the site unless `--no-site`), from games.jsonl
read back, unless `--no-publish`. The time and the peak memory of each step are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import resource
import sys
import time
from pathlib import Path
from collections import deque
from typing import Any, Callable, Iterable, Iterator, Sequence
from unittest import mock

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.tournament.config import DisqualifyPolicy, TournamentConfig, config_from  # noqa: E402
from harness.ledger.journal import Journal  # noqa: E402
from harness.ledger.marker import MARKER  # noqa: E402
from harness.ratings.trueskill import Ratings, rules_draw_probability  # noqa: E402
from harness.tournament.board import publish
from harness.tournament.results import prepare_output  # noqa: E402
from harness.tournament.schedule import GameSpec, schedule  # noqa: E402
from harness.tournament.tally import CHECKPOINT, read_checkpoint, tally_journal  # noqa: E402

FAULT_REASON = "no reply within 1000 ms to a draw request"


def entrant_names(n: int) -> list[str]:
    """e0001, e0002, …: strongest first."""
    width = max(4, len(str(n)))
    return [f"e{i:0{width}d}" for i in range(1, n + 1)]


def latent_strengths(n: int, spread: float) -> np.ndarray:
    """ln Plackett–Luce strengths, evenly spaced from +spread/2 (the first entrant) down to
    -spread/2 (the last)."""
    if n == 1:
        return np.zeros(1)
    return np.linspace(spread / 2, -spread / 2, n)


def make_config(out: Path, entrants: int, games: int, table_size: int, fmt: str, seed: int,
                duplicate: bool, name: str) -> TournamentConfig:
    """The tournament config whose schedule the journal follows (its bots are the greedy
    bot under the entrants' names, so the config also runs for real)."""
    bots = [{"name": e, "cmd": "python -m harness.bots.greedy"} for e in entrant_names(entrants)]
    data: dict[str, Any] = {"name": name, "seed": seed, "bots": bots, "table_size": table_size, "format": fmt,
                            "duplicate": duplicate, "replays": "none", "output": str(out),
                            "faults": {"disqualify": False}}
    if fmt == "random":
        data["games"] = games - games % table_size if duplicate else games
    else:
        tables = math.comb(entrants, table_size)
        per = max(1, round(games / tables / table_size)) * table_size
        data["games_per_table"] = per
    return config_from(data, "<gen_journal>")


def synth_records(cfg: TournamentConfig, specs: Iterable[GameSpec], strengths: dict[str, float], seed: int,
                  fault_rate: float) -> Iterator[dict[str, Any]]:
    """One games.jsonl record per scheduled game, in the order of `specs`."""
    draw = Synth(cfg, strengths, seed, fault_rate)
    for spec in specs:
        yield draw.record(spec)


class Synth:
    """Draws the record of one game after another (the same records, in the same order,
    as `synth_records`)."""

    def __init__(self, cfg: TournamentConfig, strengths: dict[str, float], seed: int, fault_rate: float) -> None:
        self.rng = np.random.default_rng([seed, 0x9E3779B9])
        self.n_phases = len(cfg.rules.phases) if cfg.rules.first_to is None else cfg.rules.first_to
        self.strengths, self.fault_rate = strengths, fault_rate

    def record(self, spec: GameSpec) -> dict[str, Any]:
        """The record of `spec`, drawn."""
        rng, n_phases, strengths = self.rng, self.n_phases, self.strengths
        k = len(spec.seats)
        perf = np.fromiter((strengths[s] for s in spec.seats), float, k) + rng.gumbel(size=k)
        order = np.argsort(-perf, kind="stable")  # best first: the seat in place 1, 2, …
        phases_drawn = np.sort(rng.integers(0, n_phases, size=k))[::-1]
        phases_drawn[0] = n_phases  # the winner completes the last phase
        scores_drawn = rng.integers(0, 60, size=k).cumsum() * 5  # rising: a lower place has more points
        places = [0] * k
        scores = [0] * k
        phases = [0] * k
        for place, seat in enumerate(order.tolist()):
            places[seat] = place + 1
            phases[seat] = int(phases_drawn[place])
            scores[seat] = int(scores_drawn[place])
        faults = []
        if self.fault_rate and rng.random() < self.fault_rate:
            seat = int(rng.integers(k))
            faults.append({"seat": seat, "entrant": spec.seats[seat], "kind": "timeout", "reason": FAULT_REASON})
        return {"id": spec.index, "group": spec.group, "game": spec.game, "seed": spec.seed,
                "seats": list(spec.seats), "places": places, "scores": scores, "phases": phases,
                "winner": int(order[0]), "hands": int(rng.integers(n_phases, 3 * n_phases + 1)),
                "stalled_hands": 0, "reason": "finished", "faults": faults, "forfeits": [],
                "duration_s": round(float(rng.uniform(0.02, 0.2)), 4), "replay": None}


class SyntheticExecutor:
    """An executor (as `run_tournament` uses one) that plays nothing: each game handed to
    it gets a drawn record (`Synth`), one after another in the order handed. With it a
    real run's main process (schedule, journal, running aggregates, publishing) is
    measured at any number of games without bots."""

    def __init__(self, cfg: TournamentConfig, strengths: dict[str, float], seed: int, fault_rate: float = 0.0,
                 each: Callable[[int], None] | None = None) -> None:
        self.draw = Synth(cfg, strengths, seed, fault_rate)
        self.each = each  # called with the number of results handed back so far (0: no game left)
        self.played = 0

    def run(self, specs: Sequence[GameSpec], excluded: Any = (),
            more: Callable[[], Sequence[GameSpec]] | None = None) -> Iterator[dict[str, Any]]:
        """Yield a result for each game handed, asking `more` after each."""
        pending = deque(specs)
        while pending:
            spec = pending.popleft()
            yield {"record": self.draw.record(spec), "worker": "w0", "starts": {}}
            self.played += 1
            if self.each is not None:
                self.each(self.played)
            if more is not None:
                pending.extend(more())
        if self.each is not None:
            self.each(0)


def simulate_run(cfg: TournamentConfig, strengths: dict[str, float], seed: int, fault_rate: float = 0.0,
                 build_site: bool = True, each: Callable[[int], None] | None = None) -> Any:
    """`run_tournament` of `cfg` (fresh) with the `SyntheticExecutor` in place of workers and
    bots, per-line fsync skipped (see the module); returns its `Outcome`."""
    from harness.tournament import runner

    executor = SyntheticExecutor(cfg, strengths, seed, fault_rate, each)
    with mock.patch.object(runner, "_executor", lambda cfg, log_dir: executor), \
            mock.patch("os.fsync", lambda fd: None):
        return runner.run_tournament(cfg, fresh=True, build_site=build_site)


@contextlib.contextmanager
def _one_sync_at_the_end(path: Path) -> Iterator[None]:
    """Skip the journal's per-line fsync while writing; sync the file once at the end."""
    with mock.patch("os.fsync", lambda fd: None):
        yield
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_journal(cfg: TournamentConfig, specs: Sequence[GameSpec], strengths: dict[str, float], seed: int,
                  fault_rate: float) -> int:
    """Write games.jsonl (and the folder's marker and config) through the runner's own
    functions; returns the number of games written."""
    opened = prepare_output(cfg, fresh=True)
    path = cfg.output / "games.jsonl"
    n = 0
    with _one_sync_at_the_end(path):
        journal = Journal(path, opened.head)
        try:
            for rec in synth_records(cfg, specs, strengths, seed, fault_rate):
                journal.append(rec)
                n += 1
        finally:
            journal.close()
    return n


def republish(cfg: TournamentConfig, build_site: bool, resamples: int | None = None,
              unrated: bool = False) -> dict[str, Any]:
    """Publish the folder from games.jsonl as the end of a run does (with `resamples`
    bootstrap resamples instead of the config's, if given), timing each step: reading the
    journal one line at a time into the running aggregates (`tally_journal`: what a run
    keeps as it plays), with TrueSkill unless the ratings checkpoint of these very games
    is there (a run rates each game as it finishes, so its end does not pay this), and
    `publish` itself (statistics, leaderboards, the site). `unrated`: leave TrueSkill out
    (every entrant at the initial rating, no checkpoint kept): for measuring the rest of
    publishing where rating every game again would take too long."""
    if resamples is not None:
        cfg = dataclasses.replace(cfg, stop=dataclasses.replace(cfg.stop, resamples=resamples))
    out = cfg.output
    draws = rules_draw_probability(cfg.rules)
    meta = json.loads((out / MARKER).read_text())
    t0 = time.monotonic()
    checkpointed = (out / CHECKPOINT).exists() and bool(meta.get("ratings_sha256"))
    tally, state = tally_journal(out / "games.jsonl", cfg.entrants, None, draws, ratings=not (checkpointed or unrated))
    ratings = read_checkpoint(out, state.head, state.lines, meta.get("ratings_sha256"), draws) if checkpointed else None
    how = "checkpoint" if ratings else "unrated" if unrated else "rated"
    if unrated:
        ratings = ratings or Ratings(cfg.entrants, draws)
    elif checkpointed and ratings is None:  # not these games' ratings: rate them
        tally, state = tally_journal(out / "games.jsonl", cfg.entrants, None, draws)
    t1, c1 = time.monotonic(), time.process_time()
    print(json.dumps({"read_s": round(t1 - t0, 2), "ratings": how,
                      "peak_mb": round(_peak_mb())}), flush=True)
    # The journal holds the config's whole schedule (this tool writes it so): finished.
    board = publish(cfg, tally, build_site=build_site, ratings=ratings, finished=True, head=state.head)
    if unrated:  # the initial ratings are not these games': keep no checkpoint of them
        (out / CHECKPOINT).unlink(missing_ok=True)
        (out / MARKER).write_text(json.dumps(json.loads((out / MARKER).read_text()) | {"ratings_sha256": None}, indent=1)
                                  + "\n")
    board["timings"] = {"read_s": round(t1 - t0, 2), "publish_s": round(time.monotonic() - t1, 2),
                        "publish_cpu_s": round(time.process_time() - c1, 2),
                        "ratings": how}
    return board


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load_written_config(out: Path) -> TournamentConfig:
    data = yaml.safe_load((out / "config.resolved.yaml").read_text())
    data["output"] = str(out)
    for bot in data["bots"]:  # its working folder is published as <host>/...: the bots here need none
        bot.pop("cwd", None)
    return config_from(data, str(out / "config.resolved.yaml"))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module's docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="results folder to write (this program's files in it are replaced)")
    ap.add_argument("--entrants", type=int, default=10)
    ap.add_argument("--games", type=int, default=1000, help="games (round-robin: rounded to whole rounds)")
    ap.add_argument("--table-size", type=int, default=4)
    ap.add_argument("--format", choices=["random", "round-robin"], default="random")
    ap.add_argument("--duplicate", action="store_true", help="duplicate deals (groups of table-size games)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spread", type=float, default=3.0,
                    help="latent strengths run from +spread/2 to -spread/2 (ln PL strength)")
    ap.add_argument("--fault-rate", type=float, default=0.0, help="share of games with one timeout fault")
    ap.add_argument("--name", default="synthetic")
    ap.add_argument("--no-publish", action="store_true", help="write games.jsonl only")
    ap.add_argument("--no-site", action="store_true", help="publish without the HTML site")
    ap.add_argument("--resamples", type=int, help="bootstrap resamples of the statistics (default: the config's; "
                    "with another number, `p10-tourney verify` finds the published files differ from its own)")
    ap.add_argument("--publish-only", action="store_true", help="publish an existing folder again (no writing)")
    ap.add_argument("--disqualify", action="store_true", help="with --run: disqualification on, with its default "
                    "policy (as a config without `faults.disqualify` has it); off otherwise")
    ap.add_argument("--run", action="store_true", help="write the folder by a real run (`run_tournament`) whose "
                    "games are drawn instead of played (`SyntheticExecutor`): measures the run's main process, its "
                    "end of run included")
    ap.add_argument("--unrated", action="store_true", help="publish without TrueSkill (initial ratings, unless a "
                    "checkpoint of these games is there): to measure the rest of publishing at sizes where rating "
                    "every game again takes too long; the leaderboard's TrueSkill columns are then not the games'")
    a = ap.parse_args(argv)
    out = a.out.resolve()
    t0 = time.monotonic()
    if a.publish_only:
        cfg = _load_written_config(out)
    else:
        if a.entrants < 2 or a.table_size < 2 or a.table_size > min(6, a.entrants) or a.games < 1:
            ap.error("needs 2 or more entrants, a table size of 2..6 (at most the entrants) and 1 or more games")
        cfg = make_config(out, a.entrants, a.games, a.table_size, a.format, a.seed, a.duplicate, a.name)
        if a.run:
            if a.disqualify:
                cfg = dataclasses.replace(cfg, disqualify=DisqualifyPolicy())
            strengths = dict(zip(cfg.entrants, latent_strengths(len(cfg.entrants), a.spread).tolist()))
            if a.resamples is not None:
                cfg = dataclasses.replace(cfg, stop=dataclasses.replace(cfg.stop, resamples=a.resamples))
            marks: dict[str, float] = {}

            def each(n: int) -> None:  # called with 0 once the last game's result has been taken in
                if n == 0:
                    marks["last_game_s"] = time.monotonic() - t0
                    marks["last_game_cpu_s"] = time.process_time()

            done = simulate_run(cfg, strengths, a.seed, a.fault_rate, build_site=not a.no_site, each=each)
            end = time.monotonic() - t0
            print(json.dumps({"games": done.played, "finished": done.finished, "run_s": round(end, 2),
                              "after_last_game_s": round(end - marks.get("last_game_s", end), 2),
                              "after_last_game_cpu_s": round(time.process_time() - marks.get("last_game_cpu_s", 0), 2),
                              "cpu_s": round(time.process_time(), 2), "peak_mb": round(_peak_mb()),
                              "top": [r["entrant"] for r in done.board["entrants"][:5]]}))
            return 0
        specs = schedule(cfg)
        t1 = time.monotonic()
        print(f"schedule: {len(specs)} games in {t1 - t0:.1f} s")
        strengths = dict(zip(cfg.entrants, latent_strengths(len(cfg.entrants), a.spread).tolist()))
        n = write_journal(cfg, specs, strengths, a.seed, a.fault_rate)
        del specs
        t0 = time.monotonic()
        print(f"games.jsonl: {n} games, {(out / 'games.jsonl').stat().st_size / 1e6:.1f} MB in {t0 - t1:.1f} s "
              f"(peak {_peak_mb():.0f} MB)")
    if a.no_publish:
        return 0
    board = republish(cfg, build_site=not a.no_site, resamples=a.resamples, unrated=a.unrated)
    top = [r["entrant"] for r in board["entrants"][:5]]
    size = sum(p.stat().st_size for p in (out / "site").rglob("*") if p.is_file()) if not a.no_site else 0
    print(json.dumps({"published_s": round(time.monotonic() - t0, 2), **board["timings"], "peak_mb": round(_peak_mb()),
                      "games": board["games"], "top": top,
                      "leaderboard_json_bytes": (out / "leaderboard.json").stat().st_size,
                      "site_bytes": size}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
