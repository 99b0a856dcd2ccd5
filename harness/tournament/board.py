"""What a run publishes: the board of its games (`make_board`, which `verify` recomputes)
and the leaderboard files, tournament.json's state and the site (`publish`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..ledger.marker import MARKER
from ..ledger.seeds import SeedState
from ..model import Board
from ..ratings.standings import tally_leaderboard
from ..ratings.trueskill import Ratings, rules_draw_probability
from ..report.files import TMP_PREFIX, read_json, write_whole
from ..report.leaderboard import write_leaderboard
from .config import TournamentConfig
from .disqualify import Disqualification, disqualifications, judges
from .results import seed_state
from .schedule import GameSpec, full_schedule, iter_schedule
from .tally import CHECKPOINT, GameTally, checkpoint_bytes
from .teams import mark_teams

def tally_records(cfg: TournamentConfig,
                  records: Mapping[int, Mapping[str, Any]] | Iterable[Mapping[str, Any]] | GameTally) -> GameTally:
    """The running aggregates (`GameTally`) of `records` (games by index, or any iterable of
    them) over every entrant of the standings, rated with the variant's draw probability; a
    tally is returned as it is."""
    if isinstance(records, GameTally):
        return records
    tally = GameTally(cfg.standing, draw_probability=rules_draw_probability(cfg.rules))
    for r in sorted(records.values() if isinstance(records, Mapping) else records, key=lambda r: r["id"]):
        tally.add(r)
    return tally


def publish(cfg: TournamentConfig, records: Mapping[int, Mapping[str, Any]] | GameTally, build_site: bool = True,
            stopping: Mapping[str, Any] | None = None, ratings: Ratings | None = None,
            sandbox: Mapping[str, Any] | None = None, finished: bool = False,
            head: str | None = None, specs: Iterable[GameSpec] | None = None) -> Board:
    """Write leaderboard.md/.json/.csv, head_to_head.csv, stats.md, tournament.json's
    state and (optionally) the HTML site. `records`: the games, or their running
    aggregates (`GameTally`); `ratings`: TrueSkill over exactly those games in index
    order, if not the tally's own; `sandbox`: how the bots were contained
    (`sandbox_state`), recorded in the files. `finished`: the tournament is over, so a
    secret seed is revealed. `head`: the hash chain's last link (of the games in
    `records`). `specs`: see `make_board`."""
    board = make_board(cfg, records, stopping, ratings, reveal=finished, sandbox=sandbox, specs=specs)
    games = len(records)
    write_whole(cfg.output / "disqualified.json", disqualified_text(cfg, board))
    _write_leaderboard_whole(cfg.output, board)
    marker = cfg.output / MARKER
    meta = read_json(marker)
    meta |= {k: board[k] for k in ("seed", "seed_mode", "seed_sha256")}
    meta["finished"] = finished
    if head is not None:  # the published games: the journal up to `head`
        meta |= {"games": games, "journal_head": head, "results_sha256": board["results_sha256"]}
        tally = records if isinstance(records, GameTally) else None
        rated = ratings or (tally.final_ratings() if tally is not None and tally.complete() else None)
        meta["ratings_sha256"] = None
        if rated is not None:  # TrueSkill kept, so that publishing these games again need not rate them again
            data = checkpoint_bytes(rated, head, games)
            write_whole(cfg.output / CHECKPOINT, data)
            meta["ratings_sha256"] = hashlib.sha256(data).hexdigest()
    write_whole(marker, json.dumps(meta, indent=1) + "\n")
    if build_site:
        try:
            from ..report.site import build_site as _site
        except ImportError:  # pragma: no cover
            return board
        _site(cfg.output)
    return board


def make_board(cfg: TournamentConfig, records: Mapping[int, Mapping[str, Any]] | GameTally,
               stopping: Mapping[str, Any] | None = None, ratings: Ratings | None = None,
               reveal: bool = False, sandbox: Mapping[str, Any] | None = None,
               specs: Iterable[GameSpec] | None = None, disqualified: Sequence[Disqualification] | None = None,
               seed: SeedState | None = None, bootstrap: int | None = None) -> Board:
    """The leaderboard of `records` (or of their `GameTally`) as leaderboard.json holds it:
    the standings (retired entrants marked), the disqualifications, the trusted entrants,
    the containment (`sandbox`, as recorded in tournament.json), the seed (a secret one
    only if `reveal`), its commitment, and the digest of the records (`results_sha256`).
    `p10-tourney verify` recomputes it. With a tally, disqualification judges `specs` (the
    tournament's games as far as known, `full_schedule`; read once), or the one field's
    schedule if none are given. `disqualified`, `seed` and `bootstrap`, where the seed is
    not known (`verify` of a folder whose seed is secret): the disqualifications, the
    seed's state and the bootstrap's seed as published, instead of judged from the schedule
    and derived from the seed."""
    tally = tally_records(cfg, records)
    pol = cfg.disqualify
    if disqualified is not None:
        dqs = list(disqualified)
    elif not judges(pol):  # failed builds only
        dqs = disqualifications((), cfg.standing, pol, (), tally.build_failures())
    elif isinstance(records, GameTally):
        if specs is None:
            if cfg.base or cfg.format == "league":
                raise ValueError("make_board: a tally of several fields (or a league) needs the schedule (specs)")
            specs = iter_schedule(cfg)
        dqs = disqualifications(specs, cfg.standing, pol, tally.disqualification_records(), tally.build_failures())
    else:
        dqs = disqualifications(full_schedule(cfg, records), cfg.standing, pol, records)
    board = tally_leaderboard(tally, cfg.name, cfg.seed, disqualified={d.entrant: d.reason for d in dqs},
                              confidence=cfg.stop.confidence, resamples=cfg.stop.resamples, stopping=stopping,
                              ratings=ratings, sequential=sequential_board(cfg), bootstrap=bootstrap)
    board["disqualified"] = [d.to_dict() for d in dqs]
    if cfg.retired:  # entrants no longer in the field: their games stay in the standings
        board["retired"] = cfg.retired
        for row in board["entrants"]:
            row["retired"] = row["entrant"] in cfg.retired
    # Bots whose processes were kept across the seat rotations of a duplicate deal.
    board["trusted"] = [e for e in cfg.entrants if e in cfg.trusted]
    if sandbox is not None:
        board["sandbox"] = dict(sandbox)
    shown = (seed or seed_state(cfg, reveal)).to_json()
    board["seed"], board["seed_mode"], board["seed_sha256"] = shown["seed"], shown["seed_mode"], shown["seed_sha256"]
    board["results_sha256"] = tally.digest()
    mark_teams(board, cfg.team_map, cfg.table_size)
    return board


def sequential_board(cfg: TournamentConfig) -> bool:
    """Whether the board's "settled" marks come from the anytime-valid test: a tournament
    that stops early (its boards are looked at after every round), a league (its board is
    published again and again, and read live, while it plays) and any results folder
    whose field has changed (each field's board was a look) or whose games budget changed
    after a board was published (the new size may have been chosen on what that board
    showed), so that a mark is right at its confidence however often the board is looked
    at. Other tournaments are judged once, at their planned size, by the exact
    fixed-sample test."""
    return bool(cfg.stop_when) or cfg.format == "league" or len(cfg.fields) > 1 or cfg.budget_changed


def disqualified_text(cfg: TournamentConfig, board: Mapping[str, Any]) -> str:
    """disqualified.json of the board `board` (`make_board`), byte for byte."""
    return json.dumps({"check_every": cfg.disqualify.check_every, "disqualified": board["disqualified"]},
                      indent=1) + "\n"


def _write_leaderboard_whole(out: Path, board: Mapping[str, Any]) -> None:
    """`write_leaderboard`, each file replaced whole (a reader never sees half a file)."""
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=out))
    try:
        write_leaderboard(tmp, board)
        for p in tmp.iterdir():
            os.replace(p, out / p.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
