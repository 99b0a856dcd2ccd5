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

import hashlib
import itertools
import shutil
import tempfile
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import orjson
import yaml

from ..engine import IllegalMove
from ..engine.replay import replay_game
from ..report.files import MAX_META, load_yaml, not_plain, open_plain, read_json, read_regular
from ..report.leaderboard import write_leaderboard
from ..referee.redact import WITHHELD
from .config import ConfigError, TournamentConfig, config_hash, parse_config
from ..ledger.journal import CHAIN_FORMAT, JournalError, JournalState, journal_lines, scan_chain
from ..ledger.keep import FirstFaults, at_fault, keeps
from ..ledger.marker import check_published, marker_genesis, read_marker
from ..ledger.seeds import SECRET, SeedError, SeedState, commitment, read_secret
from .ratings import rules_draw_probability
from .disqualify import BUILD_KEY, Disqualification, failed_builds
from .runner import _history_specs, _stop_check, disqualified_text, is_finished, make_board, stops
from .schedule import CompactSchedule, Field, GameSpec, Past, PastReader, game_id, iter_schedule, played_as
from .tally import GameTally

PUBLISHED = ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "head_to_head.csv", "stats.md")


@dataclass
class Check:
    """One check's verdict: passed (True), failed (False) or not possible here (None)."""

    name: str
    ok: bool | None
    detail: str


@dataclass
class Verification:
    """Every check made of a results folder, in order."""

    results: Path
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(c.ok is not False for c in self.checks)

    def add(self, name: str, ok: bool | None, detail: str) -> bool | None:
        self.checks.append(Check(name, ok, detail))
        return ok


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


def _config(results: Path, meta: Mapping[str, Any]) -> TournamentConfig:
    """The tournament's config from config.resolved.yaml, checked against tournament.json."""
    path = results / "config.resolved.yaml"
    try:
        resolved = load_yaml(read_regular(path, MAX_META))
    except (OSError, ValueError, RecursionError, yaml.YAMLError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(resolved, dict):
        raise ValueError(f"{path}: not a resolved config")
    try:
        digest = config_hash(resolved)
    except (TypeError, ValueError, AttributeError) as e:  # (a YAML date, bots not a list of bots): not a run's
        raise ValueError(f"{path}: not a resolved config ({e})") from None
    if digest != meta["config_sha256"]:
        raise ValueError(f"{path}: its SHA-256 is not the config_sha256 of tournament.json: the config was changed")
    data = dict(resolved)
    bots = data.get("bots") or []
    # Nothing is run: the bots' folders need not be here, nor may the folder verify is run
    # from (the results folder itself, say) count as theirs; and how they would be
    # contained (not in config_sha256) is not worked out: that walks their folders, here
    # the whole file system, once for each bot.
    data["bots"] = [{k: v for k, v in b.items() if k not in ("cwd", "sandbox", "mounts", "build")}
                    if isinstance(b, dict) else b for b in (bots if isinstance(bots, list) else [bots])]
    data["base_dir"] = "/"
    data["sandbox"] = "none"
    data.setdefault("seating", "rotate")  # left out where it changes nothing, and by versions before it
    try:
        cfg = parse_config(data, str(path))
    except ConfigError as e:
        raise ValueError(str(e)) from None
    if cfg.config_sha256() != meta["config_sha256"] and not _shows_the_host(resolved):
        raise ValueError(f"{path}: reads back as another config")  # cannot happen for a file the runner wrote
    return with_fields(cfg, meta)


def _shows_the_host(resolved: Mapping[str, Any]) -> bool:
    """Whether a resolved config was written by a version that published the bots' env:
    values and the host's paths as they are (it reads back in the form that hides them)."""
    bots = resolved.get("bots")
    return isinstance(bots, list) and any(
        isinstance(b, dict) and (isinstance(b.get("env"), dict) and any(v != WITHHELD for v in b["env"].values())
                                 or any(isinstance(w, str) and w.startswith("/") for w in b.get("cmd") or []))
        for b in bots)


def with_fields(cfg: TournamentConfig, meta: Mapping[str, Any]) -> TournamentConfig:
    """`cfg` (the current field's config) with the fields and every entrant that ever
    played, and whether the games budget changed after a board was published, as
    tournament.json records them."""
    cfg = replace(cfg, budget_changed=bool(meta.get("budget_changed")))
    fields = tuple(Field(int(f["start"]), tuple(f["entrants"]), tuple(f.get("challengers") or ()))
                   for f in meta.get("fields") or [])
    order = tuple(meta.get("entrants") or ())
    if not fields:
        return cfg
    if fields[-1].entrants != tuple(cfg.entrants):
        raise ValueError(f"tournament.json: the last field's entrants {list(fields[-1].entrants)} are not those of "
                         f"config.resolved.yaml {cfg.entrants}")
    return replace(cfg, fields=fields, field_order=order)


class _Reading:
    """What verify keeps of games.jsonl while its chain is checked, one line at a time: the
    running aggregates of the published lines (the first `published`), the history before
    each field's start (`PastReader`: the games before it as arrays) over every line, and
    that before the current field over the published lines; for a league only, every
    record."""

    def __init__(self, cfg: TournamentConfig, published: int) -> None:
        self.published = published
        self.league = cfg.format == "league"
        random = cfg.format == "random"
        self.tally = GameTally(cfg.standing, draw_probability=rules_draw_probability(cfg.rules))
        fields = cfg.fields if cfg.fields and not self.league else ()
        self.fields = [PastReader(f.start, random) for f in fields]
        self.before = PastReader(0 if self.league else cfg.base, random)  # the published games before this field
        self.games: dict[int, dict[str, Any]] = {}  # a league's records, in line order
        self.line = 0
        self.untallied: str | None = None  # why a published record could not be counted
        self.malformed: str | None = None  # the first record of another shape
        self.last_seat: dict[str, int] = {}  # entrant -> the highest published game index it sat in
        self.firsts = FirstFaults()  # each entrant's first games with a fault, over every line

    def add(self, rec: dict[str, Any]) -> None:
        """Take the record of the next line (one not of the shape the runner writes is
        noted in `malformed`, and nothing more is taken)."""
        self.line += 1
        i = rec["id"]
        if self.malformed is not None:
            return
        why = _record_shape(rec)
        if why is not None:
            self.malformed = f"game {i} (line {self.line}) is not a record the runner writes: {why}"
            return
        if self.league:
            self.games[i] = rec
        self.firsts.add(rec)
        for f in self.fields:
            f.add(rec)
        if self.line > self.published:
            return
        self.before.add(rec)
        for s in rec["seats"]:
            self.last_seat[s] = max(i, self.last_seat.get(s, -1))
        try:
            self.tally.add(rec)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            if self.untallied is None:
                self.untallied = f"game {i} (line {self.line}) cannot be counted ({type(e).__name__}: {e})"

    def pasts(self) -> list[Past]:
        """The history before each field's start, from every line."""
        return [f.past() for f in self.fields] or [Past()]


def _config_bound(meta: Mapping[str, Any]) -> bool:
    """The whole config is bound by the chain: it binds the settings (`p10-chain/2`) and
    the config is still the one the chain starts from."""
    return meta.get("chain") == CHAIN_FORMAT and meta["config_sha256"] == (
        meta.get("chain_config_sha256") or meta["config_sha256"])


def _field_records(meta: Mapping[str, Any], cfg: TournamentConfig) -> str | None:
    """What in tournament.json's record of the fields no run writes (None: nothing): an
    entrant that is in no field; or, where the config is still the one the chain starts
    from (so no run changed the field or the budget), a change of field, a retired entrant
    or a changed budget recorded all the same."""
    fields = meta.get("fields") or []
    entrants = meta.get("entrants") or {}
    seated = {e for f in fields for e in f["entrants"]}
    ghosts = [e for e in entrants if fields and e not in seated]
    if ghosts:
        return f"{len(ghosts)} entrants ({', '.join(g[:40] for g in ghosts[:3])}) are in no field"
    if not _config_bound(meta):
        return None
    if len(fields) > 1 or (fields and fields[0]["start"] != 0) or meta.get("retired") or meta.get("budget_changed") \
            or (entrants and set(entrants) != set(cfg.entrants)):
        return ("it records a change of field, a retired entrant or a changed budget, but its config is the one "
                "the chain starts from, which a run that made such a change would have changed too")
    return None


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _record_shape(rec: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a game record (None: it is the runner's shape)."""
    if rec.get("game") != game_id(rec["id"]):
        return f"its game {str(rec.get('game'))[:40]!r} is not the id of game {rec['id']}"
    if not (_integer(rec.get("seed")) and _integer(rec.get("group"))):
        return "its seed or group is not an integer"
    seats = rec.get("seats")
    least = 0 if rec.get("reason") == "not_played" else 1  # (a table of entrants all disqualified)
    if not (isinstance(seats, list) and least <= len(seats) <= MAX_TABLE and all(isinstance(s, str) for s in seats)):
        return f"its seats are not a list of {least} to {MAX_TABLE} names"
    for key in ("places", "scores", "phases"):
        v = rec.get(key)
        if not (isinstance(v, list) and len(v) == len(seats) and all(_integer(x) for x in v)):
            return f"its {key} are not a number for each seat"
    if not (isinstance(rec.get("faults"), list) and isinstance(rec.get("forfeits"), list)):
        return "its faults or forfeits are not lists"
    builds = rec.get(BUILD_KEY)
    if builds is not None and not (isinstance(builds, list) and len(list(failed_builds(rec))) == len(builds)
                                   and all(d.entrant in (rec.get("disqualified") or ()) for d in failed_builds(rec))):
        return f"its {BUILD_KEY} is not a list of the failed builds of entrants left out of it"
    replay = rec.get("replay")
    if replay is not None and replay != f"replays/{rec['game']}.jsonl":
        return f"its replay {str(replay)[:60]!r} is not replays/{rec['game']}.jsonl"
    return None


MAX_TABLE = 6
"""Seats at a table at most (R1)."""


def verify_results(results: Path, replays: bool = True, expect_head: str | None = None) -> Verification:
    """Check everything in results folder `results` that can be checked (see the module).
    `expect_head`: the journal head (or its first hex digits) published elsewhere, which
    the published games must end at: it pins a folder whose tournament.json could have
    been rewritten with its journal."""
    v = Verification(results)
    for name in _PLAIN_FILES:
        why = not_plain(results / name, 1 << 62 if name == "games.jsonl" else MAX_META)
        if why is not None:
            v.add("results", False, why)
            return v
    try:
        meta = read_marker(results)
    except ValueError as e:
        v.add("results", False, str(e))
        return v
    try:
        cfg = _config(results, meta)
    except ValueError as e:
        v.add("config", False, str(e))
        return v
    if meta.get("chain") == CHAIN_FORMAT and cfg.settings_sha256() != meta["chain_settings_sha256"]:
        v.add("config", False, "config.resolved.yaml's settings (all but the bots and a random or league budget) "
                               f"are not those the chain starts from ({meta['chain_settings_sha256'][:16]}…): "
                               "the config was changed")
        return v
    why = _field_records(meta, cfg)
    if why is not None:
        v.add("config", False, f"tournament.json: {why}")
        return v
    whole = _config_bound(meta)
    v.add("config", True, f"config.resolved.yaml hashes to tournament.json's config_sha256 "
                          f"({meta['config_sha256'][:16]}…)" + (
                              ", the config the chain starts from: all of it is bound" if whole else
                              "; its settings are those the chain starts from, but it changed since the first game "
                              "(another field, or budget): its bots' commands, trusted entrants and budget, and "
                              "tournament.json's fields, are the host's word" if meta.get("chain") == CHAIN_FORMAT
                              else " (a folder of format p10-chain/1: its settings are not bound by the chain, and "
                                   "its bots, budget and fields are the host's word)"))

    path = results / "games.jsonl"
    published = meta.get("games")
    reading = _Reading(cfg, published if isinstance(published, int) and published > 0 else 0)
    try:
        journal = scan_chain(path, marker_genesis(meta), mark=reading.published, each=reading.add, repair=False)
    except JournalError as e:
        v.add("chain", False, str(e))
        return v
    n = journal.lines
    if journal.torn:
        v.add("chain", False, f"{journal.torn:,} bytes follow its last whole line ({n}): a published folder ends "
                              "at a line's end (a run stopped while writing one mends it when run again)")
        return v
    v.add("chain", True, f"{n} lines, every one chained to the one before from the genesis; last link "
                         f"{(journal.head or '')[:16]}…")
    if reading.malformed is not None:
        v.add("records", False, reading.malformed)
        return v
    try:
        check_published(meta, journal, path)
    except JournalError as e:
        v.add("published", False, str(e))
        return v
    published = meta["games"]
    head = str(meta.get("journal_head") or "")
    extra = f"; {n - published} games after it are not published yet (run again to publish them)" if n > published else ""
    v.add("published", True, f"the results were published after line {published}, whose link tournament.json "
                             f"holds: journal head {head}{extra}")
    if expect_head is not None:
        want = expect_head.strip().lower()
        if not head.startswith(want):
            v.add("head", False, f"the published journal head is {head}, not the expected {want}: these are not "
                                 "the results that head pinned")
            return v
        if n > published:
            v.add("head", False, f"{n - published} lines follow the expected head {want}: the pinned results end "
                                 "there (a site or report made from this folder would show games nobody pinned)")
            return v
        v.add("head", True, f"the published journal head is the expected one ({want}), and the journal ends there")

    state = SeedState.from_json(meta)
    seed = _check_seed(v, results, meta, state, cfg)
    sampled: set[int] | None = None  # the games the schedule samples (replays: sample), where it is known
    seed_failed = v.checks[-1].ok is False
    if seed is None:
        v.add("schedule", None, "not checked: the seed is not known here (" + (
            f"a league's secret seed is never revealed; its host checks with {SECRET} beside the results)"
            if cfg.format == "league" else "a secret seed is revealed when the tournament has finished)"))
        if seed_failed:
            v.add("leaderboard", None, "not recomputed: the seed check failed")
        else:
            _check_without_seed(v, results, cfg, reading, meta, state)
    else:
        cfg = cfg.with_seed(seed)
        sampled = set()
        if cfg.format == "league":
            if _check_league(v, cfg, reading.games, sampled):
                records = dict(itertools.islice(reading.games.items(), published))  # the published lines
                _check_published(v, results, cfg, reading, meta, records)
        elif _check_schedule(v, cfg, _records(path, n), n, reading.pasts(), sampled):
            _check_published(v, results, cfg, reading, meta)
    if replays and not v.ok:
        v.add("replays", None, "not played again: an earlier check failed")
    elif replays:
        _check_replays(v, results, cfg, _records(path, n, replayed=True), reading.firsts, sampled)
    return v


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


def _check_without_seed(v: Verification, results: Path, cfg: TournamentConfig, reading: _Reading,
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
        if not all(isinstance(d.entrant, str) and isinstance(d.reason, str) and _integer(d.from_index) for d in dqs):
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
    if not _integer(bootstrap):
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
                                 reading: _Reading) -> str | None:
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
        return itertools.chain(_history_specs(tally, cfg.base),
                               iter(sched) if sched is not None else iter_schedule(cfg, past=past))

    stopping = None
    if sched is not None:
        rounds = sched.rounds(cfg.stop.round_games)
        for r, rnd in enumerate(rounds):
            if any(s.index not in tally for s in rnd):
                break
            stopping = _stop_check(cfg, rounds, r, tally, specs)
            if stops(stopping):
                break
        scheduled = len(sched)
    else:
        scheduled = sum(1 for _ in iter_schedule(cfg, past=past))
    finished = is_finished(stopping, len(tally), below + scheduled)
    return finished, stopping if finished else None, specs()


def _check_published(v: Verification, results: Path, cfg: TournamentConfig, reading: _Reading,
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


def _check_replays(v: Verification, results: Path, cfg: TournamentConfig,
                   games: Iterable[Mapping[str, Any]], firsts: FirstFaults, sampled: set[int] | None) -> None:
    """Play every kept replay again through the engine; its end must be the game's record.
    The games that keep one are those the rule keeps (`keep`): `firsts` counts every
    game's faults; `sampled`, the games the schedule samples, where the seed is known
    (without it, which clean games `replays: sample` keeps is not known here). `games`:
    the records, in any order; a failure is reported for the lowest game index that
    fails."""
    from ..report.site import MAX_REPLAY_FILE, read_replay  # the one reader of replay files

    if (results / "replays").is_symlink():
        v.add("replays", False, "replays/ is a link: a results folder's replays are its own files")
        return
    rules = cfg.rules.to_dict()
    checked = 0
    failed: tuple[int, str] | None = None
    named = bytearray()  # by game index: a record names replays/g<index>.jsonl (a bit each, not a set)
    far: set[int] = set()  # indexes past _NAMED_BITS (a forged record's): memory as their count, not their size
    for r in games:
        rel = r.get("replay")
        if not rel:
            continue
        k = _replay_index(str(rel))
        if k is not None and k >= _NAMED_BITS:
            far.add(k)
        elif k is not None:
            if k // 8 >= len(named):
                named.extend(bytes(k // 8 + 1 - len(named)))
            named[k // 8] |= 1 << (k % 8)
        why = _not_kept(cfg.replays, r, firsts, sampled)
        if why:
            if failed is None or r["id"] < failed[0]:
                failed = (r["id"], f"{rel} (game {r.get('game')}): {why}")
            continue
        path = results / str(rel)
        try:
            # Read once (what is hashed is what is played again), as a plain file of a
            # bounded size; one that is not what its record hashed is played again only
            # when it is small, to say where it differs.
            data = read_regular(path, MAX_REPLAY_FILE)
            want = r.get("replay_sha256")  # in records since replays are hashed (not in older results)
            changed = want is not None and hashlib.sha256(data).hexdigest() != want
            why = None
            if not changed or len(data) <= _EXPLAIN_BYTES:
                header, actions, result = read_replay(path, data)
                why = _replay_mismatch(header, actions, result, r, rules)
            if why is None and changed:
                why = ("its bytes are not those its game's record hashed (replay_sha256): it was changed"
                       + ("" if len(data) > _EXPLAIN_BYTES else ", though it ends as recorded"))
        except (OSError, ValueError, KeyError, TypeError, IllegalMove, RecursionError) as e:
            why = f"cannot be played again: {e}"
        if why:
            if failed is None or r["id"] < failed[0]:
                failed = (r["id"], f"{rel} (game {r.get('game')}): {why}")
            continue
        checked += 1

    def is_named(k: int | None) -> bool:
        if k is None or k >= _NAMED_BITS:
            return k in far
        return k // 8 < len(named) and bool(named[k // 8] >> (k % 8) & 1)

    if cfg.replays != "none":  # every entrant's first games with a fault keep theirs under any other
        for who, first in firsts.first.items():
            gone = [i for i in first if not is_named(i)]
            if gone and (failed is None or gone[0] < failed[0]):
                failed = (gone[0], f"game {game_id(gone[0])} names no replay, but it is one of the first {firsts.k} "
                                   f"games with a fault of {who[:40]!r}, whose replays replays: {cfg.replays} keeps")
    unnamed = sorted(f"replays/{p.name}" for p in (results / "replays").glob("*.jsonl")
                     if not is_named(_replay_index(f"replays/{p.name}"))) if (results / "replays").is_dir() else []
    if failed is not None:
        v.add("replays", False, failed[1])
    elif unnamed:
        v.add("replays", False, f"{unnamed[0]} is named by no game's record"
              + (f" (and {len(unnamed) - 1} more)" if len(unnamed) > 1 else "") + ": it is not this tournament's")
    elif checked:
        v.add("replays", True, f"{checked} replays played again through the engine: every game ends as recorded")
    else:
        v.add("replays", None, "no replays kept (replays: none, or no game failed with replays: failed)")


def _not_kept(mode: str, rec: Mapping[str, Any], firsts: FirstFaults, sampled: set[int] | None) -> str | None:
    """Why the rule (`keep.keeps`) keeps no replay of game record `rec` (None: it may)."""
    i = rec["id"]
    faulted = at_fault(rec)
    first = firsts.among(i, faulted)
    if keeps(mode, True if sampled is None else i in sampled, bool(faulted), first):
        return None
    if mode == "sample" and faulted:
        return None  # kept by versions whose `sample` kept every game with a fault: it shows no other game
    return f"replays: {mode} keeps no replay of a game " + ("with" if faulted else "without") + " a fault" + (
        " that the schedule does not sample" if mode == "sample" else "")


_EXPLAIN_BYTES = 4 << 20
"""A replay whose hash is not its record's is played again to say why only up to this size
(a genuine one is some tens of kB)."""

_NAMED_BITS = 1 << 27
"""Game indexes below which `_check_replays` keeps a bit each (16 MiB at most)."""


def _replay_index(rel: str) -> int | None:
    """The game index of a replay's name as the runner writes it (replays/ and the game's
    `game_id`, "replays/g000012.jsonl": 12), or None for another name."""
    stem = rel[len("replays/"):-len(".jsonl")] if rel.startswith("replays/") and rel.endswith(".jsonl") else ""
    digits = stem[1:]
    k = int(digits) if digits.isascii() and digits.isdigit() else None
    return k if k is not None and game_id(k) == stem else None


def _replay_mismatch(header: Mapping[str, Any], actions: list[dict[str, Any]], result: Mapping[str, Any] | None,
                     rec: Mapping[str, Any], rules: Mapping[str, Any]) -> str | None:
    """Why the replay does not end as `rec` says (None: it does)."""
    names = [p["name"] for p in header["players"]]
    if (header.get("game"), header.get("seed"), names) != (rec["game"], rec["seed"], rec["seats"]):
        return "its header is not this game's (id, seed or seats)"
    if header.get("rules") != rules or header.get("deck"):
        return "its header has other rules, or stacked deals, than the tournament's"
    game = replay_game(header, actions)
    if game.decision is not None:
        return "the recorded actions stop before the game ends"
    places = game.places(rec["forfeits"])
    firsts = [s for s, p in enumerate(places) if p == 1]
    got = {"places": places, "scores": [p.score for p in game.players], "phases": [p.completed for p in game.players],
           "winner": firsts[0] if len(firsts) == 1 else None, "hands": game.hand_no,
           "stalled_hands": game.stalled_hands, "reason": game.end_reason}
    for k, want in got.items():
        if rec.get(k) != want:
            return f"played again, its {k} is {want}, but games.jsonl records {rec.get(k)}"
    if result is None:
        return "it has no result line"
    said = {"places": result.get("places"), "scores": result.get("scores"), "phases": result.get("phases_completed"),
            "winner": result.get("winner"), "reason": result.get("reason")}
    for k, want in said.items():
        if got[k] != want:
            return f"its result line says {k} {want}, but played again it is {got[k]}"
    return None

