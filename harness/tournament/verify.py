"""Checking a results folder (`p10-tourney verify`): that games.jsonl is the journal the
runner wrote (its hash chain), that the published seed is the one committed to before
the first game and that every game's deal follows from it, that the published
leaderboards are what the games give, and that every kept replay, played again through
the engine, ends as its game is recorded.

`check_journal` is the chain check alone, which `run`, `report` and `leaderboard` do
before they trust a journal.

games.jsonl is read one line at a time and no record is kept: a first reading checks the
chain and feeds the published games into running aggregates (`tally.GameTally`, what a
run keeps), from which the leaderboards are recomputed; a second checks each game against
its schedule, read in step with the lines; a third plays the kept replays again. What
is held grows by some 30 bytes a game, not by a record (a results folder whose field
changed holds some 20 more a game for each later field: the games before its start, which
its schedule depends on, `schedule.PastReader`). A league keeps every record: its rounds
are matched from the games before them.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from bisect import bisect_right
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import orjson

from ..ledger.journal import CHAIN_FORMAT, JournalError, JournalState, journal_lines, scan_chain
from ..ledger.marker import check_published, marker_genesis, read_marker
from ..ledger.seeds import SECRET, SeedError, SeedState, commitment, read_secret
from ..report.files import MAX_META, not_plain, open_plain, read_json
from ..report.leaderboard import write_leaderboard
from .config import TournamentConfig
from .disqualify import Disqualification
from .board import disqualified_text, make_board
from .stop_rule import history_specs, is_finished, stop_check, stops
from .schedule import CompactSchedule, Field, GameSpec, Past, game_id, iter_schedule, played_as
from .tally import GameTally
from .verify_read import Reading, Verification, config_bound, field_records, is_integer, read_config
from .verify_replays import check_replays

PUBLISHED = ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "head_to_head.csv", "stats.md")



def check_journal(results: Path) -> JournalState:
    """Read RESULTS/games.jsonl one line at a time checking its hash chain from the genesis
    tournament.json gives; raises ValueError (`JournalError`: naming the first bad line).
    Nothing is repaired (a torn last line is left as it is) and no record is kept: the
    state has the lines, the head and the published line's link."""
    meta = read_marker(results)
    path = results / "games.jsonl"
    games = meta.get("games")
    journal = scan_chain(path, marker_genesis(meta), mark=games if isinstance(games, int) else 0, repair=False)
    check_published(meta, journal, path)
    return journal


def verify_results(results: Path, replays: bool = True, expect_head: str | None = None) -> Verification:
    """Check everything in results folder `results` that can be checked (see the module).
    `expect_head`: the journal head (or its first hex digits) published elsewhere, which
    the published games must end at: it pins a folder whose tournament.json could have
    been rewritten with its journal."""
    v = Verification(results)
    bound = _check_folder(v, results)
    if bound is None:
        return v
    meta, cfg = bound
    reading = _check_chain(v, results, meta, cfg, expect_head)
    if reading is None:
        return v
    cfg, sampled = _check_games(v, results, meta, cfg, reading)
    if replays and not v.ok:
        v.add("replays", None, "not played again: an earlier check failed")
    elif replays:
        records = _records(results / "games.jsonl", reading.line, replayed=True)
        check_replays(v, results, cfg, records, reading.firsts, sampled)
    return v


def _check_folder(v: Verification, results: Path) -> tuple[dict[str, Any], TournamentConfig] | None:
    """tournament.json and the config it binds (None: a check of them failed)."""
    for name in _PLAIN_FILES:
        why = not_plain(results / name, 1 << 62 if name == "games.jsonl" else MAX_META)
        if why is not None:
            v.add("results", False, why)
            return None
    try:
        meta = read_marker(results)
    except ValueError as e:
        v.add("results", False, str(e))
        return None
    try:
        cfg = read_config(results, meta)
    except ValueError as e:
        v.add("config", False, str(e))
        return None
    if meta.get("chain") == CHAIN_FORMAT and cfg.settings_sha256() != meta["chain_settings_sha256"]:
        v.add("config", False, "config.resolved.yaml's settings (all but the bots and a random or league budget) "
                               f"are not those the chain starts from ({meta['chain_settings_sha256'][:16]}…): "
                               "the config was changed")
        return None
    why = field_records(meta, cfg)
    if why is not None:
        v.add("config", False, f"tournament.json: {why}")
        return None
    whole = config_bound(meta)
    v.add("config", True, f"config.resolved.yaml hashes to tournament.json's config_sha256 "
                          f"({meta['config_sha256'][:16]}…)" + (
                              ", the config the chain starts from: all of it is bound" if whole else
                              "; its settings are those the chain starts from, but it changed since the first game "
                              "(another field, or budget): its bots' commands, trusted entrants and budget, and "
                              "tournament.json's fields, are the host's word" if meta.get("chain") == CHAIN_FORMAT
                              else " (a folder of format p10-chain/1: its settings are not bound by the chain, and "
                                   "its bots, budget and fields are the host's word)"))
    return meta, cfg


def _check_chain(v: Verification, results: Path, meta: Mapping[str, Any], cfg: TournamentConfig,
                 expect_head: str | None) -> Reading | None:
    """games.jsonl read once: its chain, its records' shape, the published line and the
    expected head; what is kept of it (None: a check failed)."""
    path = results / "games.jsonl"
    published = meta.get("games")
    reading = Reading(cfg, published if isinstance(published, int) and published > 0 else 0)
    try:
        journal = scan_chain(path, marker_genesis(meta), mark=reading.published, each=reading.add, repair=False)
    except JournalError as e:
        v.add("chain", False, str(e))
        return None
    n = journal.lines
    if journal.torn:
        v.add("chain", False, f"{journal.torn:,} bytes follow its last whole line ({n}): a published folder ends "
                              "at a line's end (a run stopped while writing one mends it when run again)")
        return None
    v.add("chain", True, f"{n} lines, every one chained to the one before from the genesis; last link "
                         f"{(journal.head or '')[:16]}…")
    if reading.malformed is not None:
        v.add("records", False, reading.malformed)
        return None
    try:
        check_published(meta, journal, path)
    except JournalError as e:
        v.add("published", False, str(e))
        return None
    published = meta["games"]
    head = str(meta.get("journal_head") or "")
    extra = f"; {n - published} games after it are not published yet (run again to publish them)" if n > published else ""
    v.add("published", True, f"the results were published after line {published}, whose link tournament.json "
                             f"holds: journal head {head}{extra}")
    if expect_head is not None and not _check_head(v, head, expect_head, n - published):
        return None
    return reading


def _check_head(v: Verification, head: str, expect_head: str, unpublished: int) -> bool:
    """The published journal head is the expected one, and no line follows it."""
    want = expect_head.strip().lower()
    if not head.startswith(want):
        return bool(v.add("head", False, f"the published journal head is {head}, not the expected {want}: these "
                                         "are not the results that head pinned"))
    if unpublished > 0:
        return bool(v.add("head", False, f"{unpublished} lines follow the expected head {want}: the pinned results "
                                         "end there (a site or report made from this folder would show games "
                                         "nobody pinned)"))
    return bool(v.add("head", True, f"the published journal head is the expected one ({want}), and the journal "
                                    "ends there"))


def _check_games(v: Verification, results: Path, meta: Mapping[str, Any], cfg: TournamentConfig,
                 reading: Reading) -> tuple[TournamentConfig, set[int] | None]:
    """The seed, every game against its schedule and the published leaderboards; the
    config with its seed where it is known, and the games the schedule samples (replays:
    sample), where that is known."""
    state = SeedState.from_json(meta)
    seed = _check_seed(v, results, meta, state, cfg)
    seed_failed = v.checks[-1].ok is False
    if seed is None:
        v.add("schedule", None, "not checked: the seed is not known here (" + (
            f"a league's secret seed is never revealed; its host checks with {SECRET} beside the results)"
            if cfg.format == "league" else "a secret seed is revealed when the tournament has finished)"))
        if seed_failed:
            v.add("leaderboard", None, "not recomputed: the seed check failed")
        else:
            _check_without_seed(v, results, cfg, reading, meta, state)
        return cfg, None
    cfg = cfg.with_seed(seed)
    sampled: set[int] = set()
    n = reading.line
    if cfg.format == "league":
        if _check_league(v, cfg, reading.games, sampled):
            records = dict(itertools.islice(reading.games.items(), meta["games"]))  # the published lines
            _check_published(v, results, cfg, reading, meta, records)
    elif _check_schedule(v, cfg, _records(results / "games.jsonl", n), n, reading.pasts(), sampled):
        _check_published(v, results, cfg, reading, meta)
    return cfg, sampled


_PLAIN_FILES = ("tournament.json", "games.jsonl", "config.resolved.yaml", "leaderboard.json", "leaderboard.md",
                "leaderboard.csv", "head_to_head.csv", "disqualified.json")
"""The files of a results folder `verify` reads: each must be a plain file, not a link, a
pipe or a device (a link to /dev/zero, or a pipe nobody writes, would never end)."""


def _records(path: Path, lines: int, replayed: bool = False) -> Iterator[dict[str, Any]]:
    """The records of the first `lines` lines of games.jsonl (its chain checked already),
    one at a time; with `replayed`, only those whose `replay` may be set (the others are
    not parsed)."""
    if not lines:
        return
    with open_plain(path) as f:
        for raw in itertools.islice(journal_lines(f), lines):
            if replayed and raw.count(b'"replay"') == 1 and b'"replay":null' in raw:
                continue
            yield orjson.loads(raw)


def _check_seed(v: Verification, results: Path, meta: Mapping[str, Any], state: SeedState,
                cfg: TournamentConfig) -> int | None:
    """The seed to check the games with, if it can be known here; adds the seed's check."""
    if not state.secret:
        if cfg.seed is not None and state.revealed == cfg.seed and commitment(cfg.seed) == state.sha256:
            v.add("seed", True, f"fixed seed {cfg.seed} (in the tournament file: the deals were predictable)")
            return cfg.seed
        v.add("seed", False, f"tournament.json's seed {state.revealed!r} or its SHA-256 is not the config's seed")
        return None
    if state.revealed is not None:
        if commitment(state.revealed) == state.sha256:
            v.add("seed", True, f"the revealed seed hashes to the SHA-256 published from the start ({state.sha256[:16]}…)")
            return state.revealed
        v.add("seed", False, f"the revealed seed {state.revealed} does not hash to the published SHA-256 "
                             f"{state.sha256}: it is not the seed committed to before play")
        return None
    if meta.get("finished"):
        v.add("seed", False, "the tournament has finished but its secret seed is not revealed")
        return None
    if (results / SECRET).exists():
        try:
            seed = read_secret(results, state.sha256)
        except SeedError as e:
            v.add("seed", False, str(e))
            return None
        until = "never to be published (a league never ends)" if cfg.format == "league" else "do not publish it before the end"
        v.add("seed", True, f"{_secret_for(cfg)}; {SECRET} here holds the seed of the published SHA-256 "
                            f"({state.sha256[:16]}…): {until}")
        return seed
    v.add("seed", None, f"{_secret_for(cfg)} (SHA-256 {state.sha256[:16]}… published); " + (
        "the schedule is checked by the league's host, who holds its seed" if cfg.format == "league"
        else "checked once revealed"))
    return None


def _secret_for(cfg: TournamentConfig) -> str:
    """How long the seed stays secret: to the end, or for good in a league (which never
    finishes, so the deals of games still to come stay unknown)."""
    return "secret for good (a league never reveals its seed)" if cfg.format == "league" else "secret until the end"


class _InStep:
    """A field's schedule read in step with games.jsonl: a game's spec is read when a line
    names it (or a later game of the field) and kept only until its line comes, so what is
    held is the games whose lines come later than those of games after them."""

    def __init__(self, specs: Iterable[GameSpec], end: int | None) -> None:
        self.src = iter(specs)
        self.end = end
        self.waiting: dict[int, GameSpec] = {}
        self.read = 0  # specs read from the schedule
        self.done = False

    def _next(self) -> GameSpec | None:
        s = None if self.done else next(self.src, None)
        if s is None or (self.end is not None and s.index >= self.end):
            self.done = True
            return None
        self.read += 1
        return s

    def take(self, i: int) -> GameSpec | None:
        """The spec of game `i` (None: the field schedules no such game)."""
        s = self.waiting.pop(i, None)
        while s is None:
            s = self._next()
            if s is None or s.index > i:
                if s is not None:
                    self.waiting[s.index] = s
                return None
            if s.index != i:
                self.waiting[s.index] = s
                s = None
        return s

    def count(self) -> int:
        """The games of the field's schedule (the rest of it is read, and not kept)."""
        while self._next() is not None:
            pass
        return self.read


def _check_schedule(v: Verification, cfg: TournamentConfig, games: Iterable[Mapping[str, Any]], lines: int,
                    pasts: list[Past], sampled: set[int]) -> bool:
    """Every game's id, seats and seed are the schedule's, which follows from the seed.
    `games`: the records in line order; `pasts`: the games before each field's start;
    `sampled` gets the indexes of the games the schedule samples (`GameSpec.sample`)."""
    fields = cfg.fields or (Field(0, tuple(cfg.entrants)),)
    starts = [f.start for f in fields]
    steps: dict[int, _InStep] = {}

    def field_schedule(k: int) -> _InStep:
        if k not in steps:
            f = fields[k]
            end = fields[k + 1].start if k + 1 < len(fields) else None
            fcfg = replace(cfg, challengers=f.challengers) if f.challengers else cfg
            steps[k] = _InStep(iter_schedule(fcfg, f.entrants, pasts[k]), end)
        return steps[k]

    for r in games:
        i = r["id"]
        k = bisect_right(starts, i) - 1
        s = field_schedule(k).take(i) if k >= 0 else None
        if s is None or not played_as(s, r):
            v.add("schedule", False, f"game {i} ({r.get('game')}) is not the game the seed schedules "
                                     f"(seats {r.get('seats')}, seed {r.get('seed')})")
            return False
        if s.sample:
            sampled.add(i)
    scheduled = sum(field_schedule(k).count() for k in range(len(fields)))
    v.add("schedule", True, f"every game's id, seats and deal seed follow from the tournament's seed "
                            f"({lines} of {scheduled} scheduled games played)")
    return True


def _check_league(v: Verification, cfg: TournamentConfig, games: Mapping[int, Mapping[str, Any]],
                  sampled: set[int]) -> bool:
    """Every round of a league is the one its matchmaking gives from the rounds before.
    `sampled` gets the indexes of the games its rounds sample (`GameSpec.sample`)."""
    from .league import league_rounds

    records = dict(games)
    checked = 0
    for rnd in league_rounds(cfg, records):
        for s in rnd:
            r = records.get(s.index)
            if r is None:
                continue
            if not played_as(s, r):
                v.add("schedule", False, f"game {s.index} ({r.get('game')}) is not the game the league's matchmaking "
                                         f"gives (seats {r.get('seats')}, seed {r.get('seed')})")
                return False
            if s.sample:
                sampled.add(s.index)
            checked += 1
    if checked != len(records):
        v.add("schedule", False, f"{len(records) - checked} games are in no round of the league")
        return False
    v.add("schedule", True, f"every game's table, seats and deal seed follow from the tournament's seed and the "
                            f"rounds before it ({checked} games)")
    return True


def _check_without_seed(v: Verification, results: Path, cfg: TournamentConfig, reading: Reading,
                        meta: Mapping[str, Any], state: SeedState) -> None:
    """Without the seed, the leaderboards are recomputed from the published games all the
    same, with the disqualifications they claim: only those are judged from the schedule,
    which the seed decides, and are checked once it is known."""
    try:
        published = read_json(results / "leaderboard.json")
    except (OSError, ValueError) as e:
        v.add("leaderboard", False, f"leaderboard.json unreadable ({e})")
        return
    if not isinstance(published, dict) or published.get("results_sha256") != reading.tally.digest():
        v.add("leaderboard", False, "leaderboard.json's results_sha256 is not the digest of the published games")
        return
    if cfg.format != "league" and not cfg.base and len(cfg.fields) <= 1 and not meta.get("finished"):
        # How many games the schedule has does not depend on the seed: all of them played
        # is a finished tournament, whose seed is revealed.
        scheduled = sum(1 for _ in iter_schedule(cfg.with_seed(0)))
        if len(reading.tally) >= scheduled:
            v.add("finished", False, f"all {scheduled} scheduled games are published, but tournament.json says the "
                                     "tournament has not finished, and keeps its seed secret")
            return
    if reading.untallied:
        v.add("leaderboard", False, f"games.jsonl: {reading.untallied}: not a game record the runner writes")
        return
    claimed = published.get("disqualified")
    try:
        if not isinstance(claimed, list):
            raise TypeError("not a list")
        dqs = [Disqualification(d["entrant"], d["reason"], d["from_index"]) for d in claimed]
        if not all(isinstance(d.entrant, str) and isinstance(d.reason, str) and is_integer(d.from_index) for d in dqs):
            raise TypeError("not names, reasons and game indexes")
    except (TypeError, KeyError) as e:
        v.add("leaderboard", False, f"leaderboard.json's disqualifications are not a list the runner writes ({e})")
        return
    why = _impossible_disqualification(dqs, cfg, reading)
    if why is not None:
        v.add("disqualified", False, f"leaderboard.json: {why}")
        return
    stats = published.get("statistics")
    bootstrap = stats.get("seed") if isinstance(stats, dict) else None
    if not is_integer(bootstrap):
        v.add("leaderboard", False, "leaderboard.json's statistics have no bootstrap seed")
        return
    sandbox = meta.get("sandbox")
    try:
        board = make_board(cfg, reading.tally, None, reveal=False, sandbox=sandbox if isinstance(sandbox, dict) else None,
                           disqualified=dqs, seed=state, bootstrap=bootstrap)
    except (ValueError, TypeError, KeyError) as e:
        v.add("leaderboard", False, f"its disqualifications cannot be those of these games ({e})")
        return
    never = cfg.format == "league"
    if _compare_board(v, results, cfg, board, len(reading.tally),
                      ", given the disqualifications and the bootstrap's seed they publish"):
        claims = "; ".join(f"{d.entrant} from game {game_id(d.from_index)}" for d in dqs[:5]) + (
            f" and {len(dqs) - 5} more" if len(dqs) > 5 else "")
        v.add("disqualified", None, (f"{len(dqs)} claimed ({claims}): " if dqs else "none claimed: ")
              + "possible from the published games (no disqualified entrant plays after it), but why, and whether "
              "any other is owed, follows from the schedule, and the bootstrap's seed from the seed: "
              + (f"a league's seed is never revealed; its host checks them with {SECRET}" if never
                 else "checked once the seed is revealed"))


def _impossible_disqualification(dqs: list[Disqualification], cfg: TournamentConfig,
                                 reading: Reading) -> str | None:
    """Why the claimed disqualifications cannot be true of the published games whatever the
    seed (an entrant not in the field, one named twice, a game index no round can start
    at, one that plays after it, a failed build not as the games record it, or one left
    out), or None."""
    builds = {d.entrant: d for d in reading.tally.build_failures()}
    seen: set[str] = set()
    for d in dqs:
        if d.entrant not in cfg.standing:
            return f"disqualifies {d.entrant[:40]!r}, who is not an entrant"
        if d.entrant in seen:
            return f"disqualifies {d.entrant} twice"
        seen.add(d.entrant)
        if d.entrant in builds and d != builds[d.entrant]:
            return f"disqualifies {d.entrant} otherwise than for the failed build its games record"
        if d.entrant not in builds and not 0 < d.from_index < (1 << 40):  # (judged after a round: never the first game)
            return f"disqualifies {d.entrant} from game index {d.from_index}, where no round starts"
        if reading.last_seat.get(d.entrant, -1) >= d.from_index:
            return (f"disqualifies {d.entrant} from game {game_id(d.from_index)}, but it played game "
                    f"{game_id(reading.last_seat[d.entrant])}")
    left = [e for e in builds if e not in seen]
    if left:
        return f"does not disqualify {left[0]}, whose failed build its games record"
    return None


def _stopping(cfg: TournamentConfig, tally: GameTally, past: Past,
              below: int) -> tuple[bool, Mapping[str, Any] | None, Iterator[GameSpec]]:
    """(finished, early stopping's decision, the tournament's games as far as known) of the
    published games (`tally`; `below` of them before the current field, whose history is
    `past`), decided as the runner decides them."""
    sched = CompactSchedule(iter_schedule(cfg, past=past), cfg.base) if cfg.stop_when else None

    def specs() -> Iterator[GameSpec]:
        return itertools.chain(history_specs(tally, cfg.base),
                               iter(sched) if sched is not None else iter_schedule(cfg, past=past))

    stopping = None
    if sched is not None:
        rounds = sched.rounds(cfg.stop.round_games)
        for r, rnd in enumerate(rounds):
            if any(s.index not in tally for s in rnd):
                break
            stopping = stop_check(cfg, rounds, r, tally, specs)
            if stops(stopping):
                break
        scheduled = len(sched)
    else:
        scheduled = sum(1 for _ in iter_schedule(cfg, past=past))
    finished = is_finished(stopping, len(tally), below + scheduled)
    return finished, stopping if finished else None, specs()


def _check_published(v: Verification, results: Path, cfg: TournamentConfig, reading: Reading,
                     meta: Mapping[str, Any], records: Mapping[int, Mapping[str, Any]] | None = None) -> None:
    """Recompute the leaderboard files from the published games (their running aggregates,
    or a league's `records`) and compare them with the published ones."""
    tally = reading.tally
    if records is not None:  # a league: its matchmaking reads the records
        from .league import league_finished

        finished, stopping, specs = league_finished(cfg, records), None, None
        games: Any = records
    else:
        finished, stopping, specs = _stopping(cfg, tally, reading.before.past(), reading.before.count)
        games = tally
    if bool(meta.get("finished")) != finished:
        v.add("finished", False, f"tournament.json says finished={meta.get('finished')!r}, but its "
                                 f"{len(games)} games {'finish' if finished else 'do not finish'} the tournament")
        return
    if reading.untallied and records is None:
        v.add("leaderboard", False, f"games.jsonl: {reading.untallied}: not a game record the runner writes")
        return
    sandbox = meta.get("sandbox")  # how the bots were contained: recorded, not derived from the games
    board = make_board(cfg, games, stopping, reveal=finished, sandbox=sandbox if isinstance(sandbox, dict) else None,
                       specs=specs)
    _compare_board(v, results, cfg, board, len(games))


def _compare_board(v: Verification, results: Path, cfg: TournamentConfig, board: Mapping[str, Any], n: int,
                   more: str = "") -> bool:
    """Compare the leaderboard files that `board` gives with the published ones (adds the
    check; True: they are the same)."""
    tmp = Path(tempfile.mkdtemp(prefix="p10-verify-"))
    try:
        write_leaderboard(tmp, board)
        bad = [name for name in PUBLISHED if (tmp / name).exists() != (results / name).exists()
               or (tmp / name).exists() and (tmp / name).read_bytes() != (results / name).read_bytes()]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        dq = (results / "disqualified.json").read_bytes()
    except OSError:
        dq = None
    if dq != disqualified_text(cfg, board).encode():
        bad.append("disqualified.json")
    if bad:
        v.add("leaderboard", False, f"{', '.join(bad)}: not what the {n} published games give")
        return False
    v.add("leaderboard", True, f"{', '.join(x for x in PUBLISHED if (results / x).exists())} and "
                               f"disqualified.json are what the {n} published games give (with "
                               f"tournament.json's sandbox record, the host's word: no game shows it){more}")
    return True


