"""Running a tournament: schedule, resume from games.jsonl, execute, rate and publish."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import heapq
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import yaml

from ..referee import BotSpec
from ..sandbox.box import BuildError
from ..sandbox.build import run_build
from ..sandbox.cgroups import cgroups
from ..sandbox.modes import describe, resolve_mode
from ..report.files import MAX_META, TMP_PREFIX, load_yaml, read_json, read_regular, write_whole
from ..report.leaderboard import write_leaderboard
from .config import Field, TournamentConfig
from .identity import fingerprint
from .teams import mark_teams
from .disqualify import (BUILD_KEY, Disqualification, DisqualificationGate, build_disqualification, build_record,
                         disqualifications, judges)
from .league import Matchmaker, budget_met, next_start
from ..ledger.journal import CHAIN_FORMAT, Journal, JournalError, iter_chain, read_chain, scan_chain
from ..ledger.keep import Deferred, FirstFaults
from ..ledger.marker import FORMAT, MARKER, check_published, marker_genesis, marker_shape
from ..ledger.seeds import (ENV_KEY, SECRET, SeedError, SeedState, commitment, draw_seed, env_key, read_secret,
                            write_secret)
from ..ratings.paired import paired_deals
from ..ratings.sprt import deal_scores, sprt
from ..ratings.standings import tally_leaderboard
from ..ratings.stopping import check_settled, stop_note
from ..ratings.trueskill import Ratings, rules_draw_probability
from .schedule import (CompactSchedule, GameSpec, PastReader, full_schedule, game_id, iter_schedule, played_as,
                       spec_of)
from .tally import CHECKPOINT, GameTally, checkpoint_bytes, read_checkpoint

_OWN = (SECRET, ENV_KEY, "games.jsonl", "leaderboard.md", "leaderboard.json", "leaderboard.csv", "head_to_head.csv",
        "config.resolved.yaml", MARKER, "replays", "logs", "site", "stats.json", "stats.md",
        "disqualified.json", "progress.json", CHECKPOINT)
LOCK = ".p10-lock"  # held by the run playing into the folder
PUBLISH_EVERY_S = 60.0  # run --forever: the leaderboard files are published between rounds this often


class ResultsError(ValueError):
    """A results folder that cannot be used for this tournament."""


@dataclass
class Progress:
    """What a progress display needs after each game."""

    done: int
    total: int
    started_at: float
    leader: str | None
    last: dict[str, Any] | None = None
    stopping: dict[str, Any] | None = None  # early stopping's state after the last round looked at


@dataclass
class Outcome:
    """The end of a run."""

    played: int
    total: int
    finished: bool
    board: dict[str, Any] = field(default_factory=dict)
    bot_starts: dict[str, int] = field(default_factory=dict)
    disqualified: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    first_s: float = 0.0  # from the start until the first game's result (workers and bots started)
    playing_s: float = 0.0  # from the start until the last game's result (no publishing)
    stopping: dict[str, Any] | None = None
    # Workers lost during the run (died, or ended by the watchdog): their games were
    # played again from their seeds. {"game", "worker", "reason"} each.
    incidents: list[dict[str, Any]] = field(default_factory=list)
    sandbox: dict[str, Any] = field(default_factory=dict)


def sandbox_state(cfg: TournamentConfig | Sequence[BotSpec]) -> dict[str, Any]:
    """The one place that decides how bots will be contained here (a tournament's, or the
    bots of `play`, `check-bot` and `ask`): {"mode", "cgroups", "per_process_only", "note",
    "bots": {entrant: "bwrap"|"none"}}. Raises `SandboxError` where a bot asks for bwrap
    and bubblewrap cannot run. The note ("bots ran without a sandbox", limits held per
    process only) is what is warned about and what the results record."""
    bots = cfg.bots if isinstance(cfg, TournamentConfig) else cfg
    modes = {b.name: resolve_mode(b.sandbox.mode) for b in bots}
    limited = any(b.limits.memory_mb or b.limits.processes for b in bots)
    backend, why = cgroups() if limited else (None, "")
    state = describe(modes.values(), backend.kind if backend else None, why)
    if not limited:
        state["per_process_only"] = []
        state["note"] = str(state["note"]).split("; limits held")[0]
    return {**state, "bots": modes}


def build_bots(cfg: TournamentConfig, state: Mapping[str, Any], skip: Iterable[str] = (),
               first: int = 0) -> list[Disqualification]:
    """Run the `build:` command of each bot not in `skip` once, one after another, in its
    sandbox with its own folder writable (see `run_build`), before any game. A build that
    fails through what the bot is or does (`BuildError`) disqualifies the bot from game
    index `first` on, with the build's reason (as published: `cfg.redactor`); returns those
    disqualifications. Raises `SandboxError` where a build cannot be run here at all."""
    out = []
    skipped = set(skip)
    for b in cfg.bots:
        if b.sandbox.build and b.name not in skipped:
            try:
                run_build(b.name, b.sandbox.build, b.cwd, b.env, b.sandbox, state["bots"][b.name],
                          scratch_mb=b.limits.scratch_mb)
            except BuildError as e:
                why = cfg.redactor().text(str(e).removeprefix(f"bot {b.name!r}: "))
                out.append(build_disqualification(b.name, why, first))
    return out


def _record_entrants(out: Path, prints: Mapping[str, str]) -> None:
    """Record the fingerprints `prints` of entrants in tournament.json."""
    if prints:
        meta = read_json(out / MARKER)
        meta["entrants"] = {**(meta.get("entrants") or {}), **prints}
        write_whole(out / MARKER, json.dumps(meta) + "\n")


def _record_sandbox(out: Path, state: Mapping[str, Any]) -> dict[str, Any]:
    """Add this run's containment to tournament.json (a results folder that a run without
    the sandbox played into keeps saying so) and return what is recorded."""
    marker = out / MARKER
    meta = read_json(marker)
    before = meta.get("sandbox")
    now = {k: v for k, v in state.items()}
    if isinstance(before, dict) and before.get("mode") and before.get("mode") != now["mode"]:
        merged = describe([before["mode"], now["mode"]], now.get("cgroups"))
        per_process: list[str] = sorted(set(before.get("per_process_only") or []) | set(now["per_process_only"]))
        merged["per_process_only"] = per_process
        merged["note"] = "; ".join(x for x in (
            "some games ran without a sandbox",
            ("limits held per process only: " + ", ".join(per_process)) if per_process else "",
        ) if x)
        now = {**merged, "bots": now.get("bots", {})}
    meta["sandbox"] = now
    write_whole(marker, json.dumps(meta) + "\n")
    return now


@dataclass
class OpenedResults:
    """A results folder ready to be played into: the config with its seed (drawn or read
    back if secret), the games already finished, and the hash chain's last link."""

    cfg: TournamentConfig
    done: dict[int, dict[str, Any]]  # empty when opened with `stream` (the run reads them again, one at a time)
    head: str
    lines: int = 0  # games in games.jsonl


def prepare_output(cfg: TournamentConfig, fresh: bool = False, retire: Sequence[str] = (),
                   stream: bool = False) -> OpenedResults:
    """Check (or create) the results folder; returns the games already finished (with
    `stream`, only their number: games.jsonl is read one line at a time and nothing of
    it kept).

    A folder of another config, another program, or an older format is refused unless
    `fresh`, which removes this program's files from it first; so is a games.jsonl whose
    hash chain is broken. A secret seed is drawn at the first start (kept in seed.secret,
    its commitment in tournament.json) and read back on resume.

    The bots may change between runs (`settle_field`): the config returned plays the
    current field, with the entrants retired (`retire`, or no longer in the file) kept
    in its standings.
    """
    out = cfg.output
    if out.exists() and not out.is_dir():
        raise ResultsError(f"{out}: exists and is not a folder")
    marker = out / MARKER
    if fresh and out.exists():
        if any(p.name != LOCK for p in out.iterdir()) and not marker.exists():
            raise ResultsError(f"{out}: not a p10-tourney results folder; refusing to clear it (choose another output)")
        for name in _OWN:
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    for p in out.glob(TMP_PREFIX + "*"):  # left by a run killed while writing: never whole
        p.unlink(missing_ok=True)
    if marker.exists():
        try:
            meta = read_json(marker)
        except (OSError, ValueError) as e:
            raise ResultsError(f"{marker}: unreadable ({e}); use --fresh to start again") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ResultsError(
                f"{out}: written by another version of p10-tourney (format {meta.get('format') if isinstance(meta, dict) else '?'!r}, "
                f"this one writes {FORMAT!r}); use --fresh to start again or choose another output"
            )
        why = marker_shape(meta)
        if why:
            raise ResultsError(f"{marker}: {why}; use --fresh to start again")
        same = meta.get("fingerprint") == cfg.fingerprint() and meta.get("config_sha256") == cfg.config_sha256()
        if not same and meta.get("settings_sha256") != cfg.settings_sha256():
            raise ResultsError(
                f"{out}: holds results of a different config ({_what_changed(out, cfg, meta)}); only the bots "
                "may change between runs over one results folder (and the games budget of a random or league "
                "tournament): use --fresh to start again, or set another output"
            )
        if int(meta.get("games") or 0) > 0 and _budget(out) not in (None, cfg.resolved().get("games")):
            meta["budget_changed"] = True  # a board was published before this budget: it was looked at
        try:
            state = SeedState.from_json(meta)
            seed = read_secret(out, state.sha256) if cfg.secret_seed else cfg.seed
        except ValueError as e:  # SeedError too
            raise ResultsError(f"{marker}: {e}") from None
    elif any(p.name not in (SECRET, ENV_KEY, LOCK) for p in out.iterdir()):
        raise ResultsError(f"{out}: not empty and not a p10-tourney results folder; choose another output")
    else:  # the first start: a secret seed is drawn now, and only its hash published
        seed = draw_seed() if cfg.secret_seed else cfg.seed
        assert seed is not None
        if cfg.secret_seed:
            write_secret(out, seed)
        meta = {"format": FORMAT, "name": cfg.name, "fingerprint": cfg.fingerprint(),
                "config_sha256": cfg.config_sha256(), "chain": CHAIN_FORMAT,
                "settings_sha256": cfg.settings_sha256(), "chain_settings_sha256": cfg.settings_sha256()}
        meta |= seed_state(cfg.with_seed(seed), reveal=False).to_json()
        meta |= {"finished": False, "games": 0, "journal_head": marker_genesis(meta), "results_sha256": None}
        write_whole(marker, json.dumps(meta, indent=1) + "\n")
    assert seed is not None
    cfg = cfg.with_seed(seed)
    try:
        if stream:
            journal = scan_chain(out / "games.jsonl", marker_genesis(meta), mark=int(meta.get("games") or 0))
        else:
            journal = read_chain(out / "games.jsonl", marker_genesis(meta))
        check_published(meta, journal, out / "games.jsonl")
    except JournalError as e:
        raise ResultsError(f"{e}; use --fresh to start again") from None
    cfg = settle_field(cfg, meta, [journal.top] if journal.top >= 0 else [], retire)
    cfg = replace(cfg, budget_changed=bool(meta.get("budget_changed")))
    # Only once the folder is known to be usable is anything in it rewritten.
    meta |= {"fingerprint": cfg.fingerprint(), "config_sha256": cfg.config_sha256(),
             "settings_sha256": cfg.settings_sha256()}
    write_whole(marker, json.dumps(meta, indent=1) + "\n")
    write_whole(out / "config.resolved.yaml", yaml.safe_dump(cfg.resolved(), sort_keys=False))
    assert journal.head is not None
    return OpenedResults(cfg, journal.games, journal.head, journal.lines)


def _resolved_before(out: Path) -> dict[str, Any] | None:
    """The config the results folder was last run with (config.resolved.yaml), if readable."""
    try:
        before = load_yaml(read_regular(out / "config.resolved.yaml", MAX_META))
    except (OSError, ValueError, RecursionError, yaml.YAMLError):
        return None
    return before if isinstance(before, dict) else None


def _budget(out: Path) -> Any:
    """The games budget the results folder was last run with (None if unknown)."""
    before = _resolved_before(out)
    return None if before is None else before.get("games")


def _what_changed(out: Path, cfg: TournamentConfig, meta: Mapping[str, Any]) -> str:
    """Which settings differ from those the results folder was played with."""
    before = _resolved_before(out)
    if before is None:
        return f"tournament {meta.get('name')!r}, or an older version of p10-tourney"
    now = cfg.settings()
    keys = [k for k in dict.fromkeys([*before, *now]) if k not in ("bots", "trusted", "games", "challengers")
            and before.get(k) != now.get(k)]
    if "games" in now and before.get("games") != now.get("games") and cfg.format not in ("random", "league"):
        keys.append("games")
    return f"{', '.join(keys)} changed" if keys else f"tournament {meta.get('name')!r}"


def settle_field(cfg: TournamentConfig, meta: dict[str, Any], games: Iterable[int],
                 retire: Sequence[str] = ()) -> TournamentConfig:
    """The field this run plays, from the config, the indices of the games played
    (`games`: any iterable of them, the highest is what counts) and what tournament.json
    (`meta`, updated here) knows: every entrant that ever played with its fingerprint (`identity`), the
    entrants retired with --retire, and the fields so far. An entrant whose command or
    folder changed under its name is refused. A field other than the last one's starts a
    new field at the first free game index (or replaces the last one if none of its
    games is played yet)."""
    out = cfg.output
    known: dict[str, str] = dict(meta.get("entrants") or {})
    retired = list(meta.get("retired") or [])
    for name in retire:
        if name not in known and name not in cfg.entrants:
            raise ResultsError(f"--retire {name}: no entrant of that name in the tournament file or in {out}")
        if name not in retired:
            retired.append(name)
    active = [b for b in cfg.bots if b.name not in retired]
    prints = _fingerprints(cfg, active)
    for i, b in enumerate(active):
        old = known.get(b.name)
        if old is not None and old != prints[b.name] and b.env and old == fingerprint(b, _unprinted(cfg)):
            known[b.name] = prints[b.name]  # fingerprinted before the key: the same bot
        elif old is not None and old != prints[b.name]:
            raise ResultsError(
                f"{cfg.source}: bots: {b.name!r} is not the bot that played its games in {out}: its command, "
                f"{'env: values (or the key in ' + ENV_KEY + ') ' if b.env else ''}or the "
                f"files of its folder changed (fingerprint {old[:12]} -> {prints[b.name][:12]}); give the new "
                f"version another name (the old one is then retired), or run with --retire {b.name} to retire it")
    for b in active:
        known.setdefault(b.name, prints[b.name])
    order = list(known)
    names = [n for n in order if n in prints]
    if len(names) < max(2, cfg.table_size):
        raise ResultsError(f"{cfg.source}: the field has {len(names)} active entrants ({', '.join(names) or 'none'}); "
                           f"a table needs {max(2, cfg.table_size)}")
    if cfg.format == "gauntlet":
        ch = [c for c in cfg.challengers if c in prints]
        if not ch or len(names) - len(ch) < cfg.table_size - 1:
            raise ResultsError(f"{cfg.source}: the gauntlet's active field has {len(ch)} challengers and "
                               f"{len(names) - len(ch)} other entrants; it needs a challenger and table_size - 1 others")
    fields = [Field(int(f["start"]), tuple(f["entrants"]), tuple(f.get("challengers") or ()))
              for f in meta.get("fields") or []]
    challengers = tuple(c for c in cfg.challengers if c in prints)
    now = Field(fields[-1].start if fields else 0, tuple(names), challengers)
    if not fields:
        fields = [now]
    elif (fields[-1].entrants, fields[-1].challengers) != (now.entrants, now.challengers):
        if meta.get("seed_mode") == "secret" and meta.get("seed") is not None:
            raise ResultsError(f"{out}: its secret seed was revealed when it finished, so the deals of new games "
                               "would be known in advance; start another results folder (a league, format: league, "
                               "never reveals its seed)")
        top = max(games, default=-1)
        if top < fields[-1].start:  # nothing played in the last field yet: it is replaced
            fields[-1] = now
        else:
            fields.append(replace(now, start=top + 1))
    meta.setdefault("chain_config_sha256", meta["config_sha256"])
    meta |= {"entrants": known, "retired": retired, "fields": [f.to_json() for f in fields]}
    return replace(cfg, bots=tuple(cfg.bot(n) for n in names), field_order=tuple(order), fields=tuple(fields),
                   challengers=challengers)


def _unprinted(cfg: TournamentConfig) -> list[Path]:
    """What no fingerprint reads: the results folder and the tournament file's folder."""
    out = cfg.output
    return [out, Path(cfg.source).resolve().parent] if cfg.source and not cfg.source.startswith("<") else [out]


def _fingerprints(cfg: TournamentConfig, bots: Iterable[BotSpec]) -> dict[str, str]:
    """The fingerprints of `bots` (`identity.fingerprint`), as tournament.json keeps them."""
    bots = list(bots)
    try:  # the bots' env: values count in their fingerprints by a keyed hash (never as themselves)
        key = env_key(cfg.output) if any(b.env for b in bots) else None
    except SeedError as e:
        raise ResultsError(str(e)) from None
    return {b.name: fingerprint(b, _unprinted(cfg), key) for b in bots}


def seed_state(cfg: TournamentConfig, reveal: bool) -> SeedState:
    """The seed as the results show it: a secret seed only once `reveal` (the end)."""
    assert cfg.seed is not None
    return SeedState(cfg.secret_seed, commitment(cfg.seed), cfg.seed if reveal or not cfg.secret_seed else None)


def _check_done(ids: Sequence[int], seeds: Sequence[int], sched: CompactSchedule, out: Path, base: int = 0) -> None:
    """Every finished game of the current field (`ids`, with their deal `seeds`) is its
    schedule's."""
    for i, seed in zip(ids, seeds):
        k = i - base
        if not 0 <= k < len(sched) or seed != sched.seed(k):
            raise ResultsError(f"{out}/games.jsonl: game {i} does not belong to this schedule; use --fresh")


def _check_round(done: Mapping[int, tuple[Any, Any]], rnd: Sequence[GameSpec], out: Path) -> None:
    """The games of a league round finished before this run (game id, seed by index) are
    the round's."""
    for s in rnd:
        got = done.get(s.index)
        if got is not None and got != (s.game, s.seed):
            raise ResultsError(f"{out}/games.jsonl: game {s.index} does not belong to this schedule; use --fresh")


def _history_specs(tally: GameTally, below: int | None = None) -> Iterator[GameSpec]:
    """The games of `tally` (with an index below `below`) as disqualification reads their
    specs: index and seats."""
    for r in tally.disqualification_records(below=below):
        yield GameSpec(r["id"], game_id(r["id"]), tuple(r["seats"]), 0, r["id"])


def _gate(cfg: TournamentConfig, tally: GameTally, specs: Iterable[GameSpec], below: int | None,
          builds: Iterable[Disqualification] = ()) -> DisqualificationGate:
    """The disqualification gate of a run: the games of `tally` below `below` (all if
    None) as history, then `specs`, judged from every game of `tally`, with the failed
    builds its games carry and `builds` (this run's). No game is read when
    disqualification is off."""
    pol = cfg.disqualify
    failed = tally.build_failures() + list(builds)
    if not judges(pol):
        return DisqualificationGate((), cfg.standing, pol, builds=failed)
    return DisqualificationGate(itertools.chain(_history_specs(tally, below), specs), cfg.standing, pol,
                                tally.disqualification_records(), failed)


def _pinned(cfg: TournamentConfig, state: Mapping[str, Any]) -> TournamentConfig:
    """`cfg` with each bot's sandbox mode the one resolved here ("bwrap" or "none", as the
    results record it), not `auto` to be resolved again where the game is played."""
    modes = state.get("bots") or {}
    bots = tuple(replace(b, sandbox=replace(b.sandbox, mode=modes.get(b.name) or resolve_mode(b.sandbox.mode)))
                 for b in cfg.bots)
    return replace(cfg, bots=bots)


def _executor(cfg: TournamentConfig, log_dir: Path) -> Any:
    if cfg.executor == "dask":
        from .dask_executor import DaskExecutor  # optional extra

        return DaskExecutor(cfg, log_dir)
    from .executor import LocalExecutor

    return LocalExecutor(cfg, log_dir)


def run_tournament(
    cfg: TournamentConfig,
    fresh: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    build_site: bool = True,
    retire: Sequence[str] = (),
    forever: bool = False,
    stop: threading.Event | None = None,
) -> Outcome:
    """Play every game not yet in games.jsonl, then write the leaderboards and the site.

    With `stop_when: settled` the schedule is played in rounds (`stats.plan_rounds`), and after
    each round the games of all finished rounds decide (`check_settled`) whether the order
    is settled and the rest of the schedule is left unplayed. The decision depends only on
    those games, never on `parallel` or on the order games finish in. A league
    (`format: league`) plays rounds matched from the rounds before (`league.py`) until its
    budget, or with `forever` until `stop` is set.

    `stop` (an event a signal handler sets): no game starts once it is set; the games
    being played finish, the results are published and the run returns. `retire`: the
    entrants to retire (`settle_field`).

    KeyboardInterrupt stops the run cleanly: running games are abandoned, bots ended,
    finished games kept; the leaderboard of what finished is written, and the exception
    is raised again for the caller.
    """
    t0 = time.monotonic()
    out = cfg.output
    state = sandbox_state(cfg)  # SandboxError before anything is written
    with _lock(out):
        return _run(cfg, t0, state, fresh, on_progress, build_site, retire, forever, stop)


@contextlib.contextmanager
def _lock(out: Path) -> Iterator[None]:
    """Hold the results folder for one run: a second run over it (say, the host's run after
    adding a bot while `run --forever` plays) is refused instead of writing beside it."""
    if out.exists() and not out.is_dir():
        raise ResultsError(f"{out}: exists and is not a folder")
    if out.is_dir() and not (out / MARKER).exists() and any(p.name not in (SECRET, LOCK) for p in out.iterdir()):
        yield  # not a results folder: prepare_output refuses it, and nothing is written into it
        return
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            who = f.read().strip() or "?"
            raise ResultsError(f"{out}: another run is playing into this folder (process {who}); stop it first "
                               "(a run --forever stops on Ctrl-C or SIGTERM), then run again") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        yield


def _rated_before(tally: GameTally, cfg: TournamentConfig, out: Path) -> None:
    """Start `tally`'s TrueSkill from the checkpoint of the published games where it is
    theirs (`read_checkpoint`), so that a resumed run rates only the games after them."""
    meta = read_json(out / MARKER)
    games = meta.get("games")
    if not isinstance(games, int) or games <= 0:
        return
    rated = read_checkpoint(out, meta.get("journal_head"), games, meta.get("ratings_sha256"),
                            rules_draw_probability(cfg.rules), cfg.standing)
    if rated is not None:
        tally.rated_before(rated, games)


def _run(cfg: TournamentConfig, t0: float, state: dict[str, Any], fresh: bool,
         on_progress: Callable[[Progress], None] | None, build_site: bool, retire: Sequence[str], forever: bool,
         stop: threading.Event | None) -> Outcome:
    """`run_tournament` with the results folder held."""
    out = cfg.output
    opened = prepare_output(cfg, fresh, retire, stream=True)
    cfg = opened.cfg
    league = cfg.format == "league"
    if forever and not league:
        raise ResultsError(f"{cfg.source}: --forever plays league rounds; the {cfg.format} format has a fixed "
                           "schedule (use format: league)")
    # What the run keeps: the running aggregates of the games (`tally`, fed as each game
    # finishes: standings, head-to-head, TrueSkill in game-index order, the statistics'
    # compact arrays, the digest), the schedule as arrays (`sched`), and what later
    # decisions need (the gate's and the matchmaker's compact state); never the records.
    # The games finished before are read back from games.jsonl one at a time into the
    # same, and their index and seed (16 bytes a game) kept until checked.
    tally = GameTally(cfg.standing, draw_probability=rules_draw_probability(cfg.rules))
    _rated_before(tally, cfg, out)
    matchmaker = Matchmaker(cfg, history=tally) if league else None
    before = PastReader(cfg.base, cfg.format == "random")  # the fields before this one, as its schedule reads them
    firsts = FirstFaults()  # each entrant's first games with a fault (which replays are kept)
    ids, seeds = array("q"), array("q")  # the games of this field (every game of a league)

    def resume(rec: dict[str, Any]) -> None:
        i = rec["id"]
        tally.add(rec)
        firsts.add(rec)
        if matchmaker is not None:
            matchmaker.add(rec)
        if i < cfg.base and not league:
            before.add(rec)
        else:
            seed = rec.get("seed")
            ids.append(i)  # a seed is 63 bits, never negative: -1 matches no game
            seeds.append(seed if isinstance(seed, int) and rec.get("game") == game_id(i) else -1)

    if opened.lines:
        iter_chain(out / "games.jsonl", None, resume)
    past = None if league else before.past()
    history = before.count if not league else len(ids)
    del before
    sched = CompactSchedule(() if league else iter_schedule(cfg, past=past), cfg.base)
    resumed: dict[int, tuple[Any, Any]] = {}  # league: the games of the round to resume
    if not league:
        _check_done(ids, seeds, sched, out, cfg.base)
    else:
        first = next_start(cfg, tally)
        resumed = {i: (game_id(i), sd) for i, sd in zip(ids, seeds) if i >= first}
    del ids, seeds
    gate = _gate(cfg, tally, iter(sched), cfg.base)
    # The builds, once, before any game: of the entrants still in. One that fails is out
    # from the first game after those recorded (its unplayed games are played without it).
    builds = build_bots(cfg, state, skip=gate.excluded, first=max(cfg.base, tally.top + 1))
    for d in builds:
        gate.build_failed(d)
    # A bot is the folder its build made: what the next run finds there, before it builds again.
    _record_entrants(out, _fingerprints(cfg, [b for b in cfg.bots if b.sandbox.build and b.name not in gate.excluded]))
    state = _record_sandbox(out, state)
    excluded = gate.excluded  # grown in place as entrants are disqualified
    (out / "replays").mkdir(exist_ok=True)
    log_dir = out / "logs"
    log_dir.mkdir(exist_ok=True)
    scheduled = history + len(sched)
    total = max(cfg.games or 0, len(tally)) if league else scheduled
    outcome = Outcome(played=0, total=total, finished=False, sandbox=state)
    journal = Journal(out / "games.jsonl", opened.head)
    interrupted = False
    starts_by_worker: dict[str, Mapping[str, int]] = {}
    rounds: Sequence[Sequence[GameSpec]] = (sched.rounds(cfg.stop.round_games) if cfg.stop_when
                                        else [sched.span(0, len(sched))])

    def full_specs() -> Iterable[GameSpec]:
        """The tournament's games as far as known (for judging disqualifications)."""
        return itertools.chain(_history_specs(tally, None if league else cfg.base), iter(sched))

    def league_rounds() -> Iterator[Sequence[GameSpec]]:
        """The league's rounds, each matched once the one before is played."""
        assert matchmaker is not None
        while not (stop is not None and stop.is_set()):
            start = next_start(cfg, tally)
            if not forever and budget_met(cfg, tally, matchmaker, start):
                outcome.finished = True
                return
            rnd = matchmaker.round(start, cfg.entrants, tally)
            if not rnd:
                return
            _check_round(resumed, rnd, out)
            outcome.total = max(outcome.total, len(tally) + sum(1 for s in rnd if s.index not in tally))
            yield rnd

    finishing = False
    executor: Any = None
    deferred = Deferred(cfg.replays, firsts)
    shown = [0.0]
    published = [time.monotonic()]

    def show(running: bool = True, force: bool = False) -> None:
        """progress.json, for `p10-tourney serve` (at most twice a second while playing)."""
        now = time.monotonic()
        if force or now - shown[0] >= 0.5:
            shown[0] = now
            write_whole(out / "progress.json", json.dumps({
                "done": len(tally), "total": outcome.total, "running": running, "forever": forever,
                "format": cfg.format, "updated": round(time.time(), 3)}) + "\n")

    def finish() -> None:
        """Close the journal, then write the leaderboards (and the site) of the games done."""
        nonlocal finishing
        finishing = True
        journal.close()
        if not league:
            outcome.finished = is_finished(outcome.stopping, len(tally), scheduled)
        if outcome.stopping is not None and not outcome.finished:
            outcome.stopping = None  # interrupted: neither settled nor at the budget
        outcome.board = publish(cfg, tally, build_site=build_site and not interrupted, stopping=outcome.stopping,
                                sandbox=state, finished=outcome.finished and not league, head=journal.head,
                                specs=full_specs())
        outcome.disqualified = {d["entrant"]: d["reason"] for d in outcome.board.get("disqualified", [])}
        show(running=False, force=True)

    try:
        show(force=True)
        if on_progress:
            on_progress(Progress(len(tally), outcome.total, t0, tally.leader()))
        # The executor is not handed a secret seed (the Dask one ships its config to other
        # machines): the games' own seeds, in the specs, are all it needs. The bots run as
        # the sandbox was found here, on every machine (a Dask worker without bubblewrap
        # fails their start rather than run them unsandboxed).
        executor = _executor(_pinned(replace(cfg, seed=None) if cfg.secret_seed else cfg, state), log_dir)
        # An executor that can stay up between rounds (the Dask one) is kept up.
        with executor if hasattr(executor, "__enter__") else contextlib.nullcontext():
            for r, rnd in enumerate(league_rounds() if league else rounds):
                if league:  # judged again with this round's games known
                    gate = _gate(cfg, tally, (s for s in rnd if s.index not in tally), None, builds)
                    excluded = gate.excluded
                todo = (s for s in rnd if s.index not in tally)  # read as games are handed out
                for res in _play(executor, todo, gate, excluded, stop, cfg.parallel, deferred):
                    rec = res["record"]
                    failed = [build_record(gate.builds[e]) for e in rec.get("disqualified") or () if e in gate.builds]
                    if failed:  # in the chained record: the verdict is read back from the games
                        rec[BUILD_KEY] = failed
                    if res.get("replay"):
                        path = out / "replays" / f"{rec['game']}.jsonl"
                        data = b"\n".join(res["replay"]) + b"\n"
                        write_whole(path, data)
                        rec["replay"] = f"replays/{rec['game']}.jsonl"
                        # In the chained record, so that verify finds any change to the file.
                        rec["replay_sha256"] = hashlib.sha256(data).hexdigest()
                    else:
                        rec["replay"] = None
                    journal.append(rec)
                    tally.add(rec)
                    if matchmaker is not None:
                        matchmaker.add(rec)
                    excluded.update(d.entrant for d in gate.add(rec))
                    starts_by_worker[res.get("worker", "")] = res.get("starts", {})
                    outcome.played += 1
                    outcome.playing_s = time.monotonic() - t0
                    if outcome.played == 1:
                        outcome.first_s = outcome.playing_s
                    show()
                    if on_progress:
                        on_progress(Progress(len(tally), outcome.total, t0, tally.leader(), rec, outcome.stopping))
                if stop is not None and stop.is_set():
                    break
                if forever and time.monotonic() - published[0] >= PUBLISH_EVERY_S:
                    # The leaderboard lives: published between rounds, not only at the end.
                    published[0] = time.monotonic()
                    publish(cfg, tally, build_site=False, sandbox=state, head=journal.head, specs=full_specs())
                if cfg.stop_when:
                    outcome.stopping = _stop_check(cfg, rounds, r, tally, full_specs)
                    if on_progress:
                        on_progress(Progress(len(tally), outcome.total, t0, tally.leader(), None, outcome.stopping))
                    if stops(outcome.stopping):
                        break
            # Every game is done: the workers end their bots while the results are published.
            release = getattr(executor, "release", None)
            if release is not None:
                release()
            finish()
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if not finishing:  # interrupted, or an error: publish what is done
            finish()
        outcome.elapsed_s = time.monotonic() - t0
        outcome.incidents = list(getattr(executor, "incidents", ()) if executor is not None else ())
        for starts in starts_by_worker.values():
            for name, n in starts.items():
                outcome.bot_starts[name] = outcome.bot_starts.get(name, 0) + n
        _write_stats(out, outcome)
    return outcome


def stops(decision: Mapping[str, Any] | None) -> bool:
    """Whether an early-stopping decision (`_stop_check`) ends the tournament: its order
    settled, or its SPRT accepted or rejected."""
    return decision is not None and bool(decision.get("stop"))


def is_finished(decision: Mapping[str, Any] | None, done: int, scheduled: int) -> bool:
    """The one rule of a finished (not league) tournament, the runner's and `verify`'s: an
    early stop decided it (`stops`), or all `scheduled` games are `done`."""
    return stops(decision) or done == scheduled


def _stop_check(cfg: TournamentConfig, rounds: Sequence[Sequence[GameSpec]], r: int,
                records: Mapping[int, Mapping[str, Any]] | GameTally,
                specs: Callable[[], Iterable[GameSpec]] | None = None) -> dict[str, Any]:
    """The early-stopping decision after round `r` (0-based), from the games of rounds
    0..r only (and those of the fields before). `settled`: is the order of the entrants
    still in (not disqualified by those games) settled by the anytime-valid test? `sprt`:
    has the log-likelihood ratio of the candidate's deal scores crossed a bound? A
    boundary that an earlier run already went past (a later round has games) did not
    stop that run, so it is not asked again (same games, same answer).

    `rounds`: the current field's schedule in rounds (consecutive game indices);
    `records`: the games by index, or the runner's `GameTally`; `specs`: with a tally,
    the tournament's games as far as known (for disqualifications)."""
    budget = sum(len(x) for x in rounds)
    base = rounds[0][0].index if rounds and rounds[0] else 0
    end = rounds[r][-1].index + 1 if rounds[r] else base  # rounds 0..r: the games below this
    games = sum(len(x) for x in rounds[: r + 1])
    last = r == len(rounds) - 1
    tally = records if isinstance(records, GameTally) else None
    top = tally.top if tally is not None else max(records.keys(), default=-1)  # type: ignore[union-attr]
    passed = r + 1 < len(rounds) and len(rounds[r + 1]) > 0 and top >= rounds[r + 1][0].index
    upto: Any = (tally.arrays(below=end, among=cfg.entrants) if tally is not None
                 else [rec for i, rec in records.items() if i < end])  # type: ignore[union-attr]
    looked = games >= cfg.stop.min_games and not passed
    st = cfg.stop
    out: dict[str, Any] = {"rule": cfg.stop_when, "games": games, "budget": budget, "round": r + 1,
                           "rounds": len(rounds)}
    if cfg.stop_when == "sprt":
        assert st.candidate is not None
        test = sprt(deal_scores(paired_deals(upto, cfg.entrants), st.candidate, st.baseline),
                    st.elo0, st.elo1, st.alpha, st.beta)
        decision = test["decision"] if looked else None
        reason = {"H1": "accepted", "H0": "rejected"}.get(decision or "", "budget" if last else "playing")
        out |= {"candidate": st.candidate, "baseline": st.baseline, "sprt": test}
    else:
        settled = False
        if looked:
            pol = cfg.disqualify
            if tally is not None:
                assert specs is not None
                dqs = disqualifications(specs() if judges(pol) else (), cfg.standing, pol,
                                        tally.disqualification_records(below=end) if judges(pol) else (),
                                        tally.build_failures(below=end))
            else:
                dqs = disqualifications([spec_of(rec) for rec in sorted(upto, key=lambda x: x["id"])
                                         if rec["id"] < base] + [s for x in rounds for s in x] if judges(pol) else (),
                                        cfg.standing, pol, upto)
            dq = {d.entrant for d in dqs}
            settled = check_settled(upto, cfg.entrants, top=st.top, confidence=st.confidence,
                                    among=[e for e in cfg.entrants if e not in dq]).settled
        reason = "settled" if settled else "budget" if last else "playing"
        out |= {"top": st.top, "confidence": st.confidence}
    out |= {"reason": reason, "stop": reason in ("settled", "accepted", "rejected")}
    out["note"] = stop_note(reason, games, budget, out)
    return out


WINDOW = 1024
"""Games handed to the executor and not finished, at most (without a stop event): the
run reads its schedule as games are handed out, so what it holds of it is bounded."""
HELD = 4096
"""Games read from the schedule and waiting for the disqualification gate, at most
(beyond them the next games are read once these are handed out)."""


class _Waiting:
    """The games not handed out yet, read from `todo` (in index order) as they are
    wanted, and taken as soon as `gate` lets them start, lowest index first.

    A game the gate holds up waits with the entrant that holds it up (`gate.blocker`),
    and is looked at again only once that entrant is cleared for its round: each take
    costs the games it hands out and the entrants that hold games up, not every game held
    (which was some 3,000 `ready` calls a game with 100 entrants)."""

    def __init__(self, todo: Iterable[GameSpec], gate: DisqualificationGate) -> None:
        self.gate = gate
        self.src = iter(todo)
        self.next: GameSpec | None = next(self.src, None)
        self.candidates: list[tuple[int, GameSpec]] = []  # heap by index: not known to be held up
        self.blocked: dict[str, list[tuple[int, int, GameSpec]]] = {}  # entrant -> heap of (round, index, game)
        self.held = 0

    def __bool__(self) -> bool:
        return self.held > 0 or self.next is not None

    def take(self, want: int) -> list[GameSpec]:
        """Up to `want` waiting games that may start now, in index order; they stop
        waiting. Only rounds up to the gate's horizon are looked at (and read from the
        schedule), so a long schedule costs little."""
        gate = self.gate
        limit = gate.horizon()
        while self.next is not None and self.held < want + HELD and gate.round_of(self.next) <= limit:
            heapq.heappush(self.candidates, (self.next.index, self.next))
            self.held += 1
            self.next = next(self.src, None)
        for e in list(self.blocked):  # games whose entrant has been cleared for their round
            q = self.blocked[e]
            while q and gate.cleared(e, q[0][0]):
                _, i, s = heapq.heappop(q)
                heapq.heappush(self.candidates, (i, s))
            if not q:
                del self.blocked[e]
        out: list[GameSpec] = []
        while self.candidates and len(out) < want:
            i, s = self.candidates[0]
            if gate.round_of(s) > limit:
                break
            heapq.heappop(self.candidates)
            who = gate.blocker(s)
            if who is None:
                out.append(s)
            else:
                heapq.heappush(self.blocked.setdefault(who, []), (gate.round_of(s), i, s))
        self.held -= len(out)
        return out

    def head(self) -> list[str]:
        """A few waiting games' ids (for an error message)."""
        held = sorted([(i, s) for i, s in self.candidates] + [(i, s) for q in self.blocked.values() for _, i, s in q],
                      key=lambda x: x[0])[:5]
        return [s.game for _, s in held] or ([self.next.game] if self.next is not None else [])


def _play(executor: Any, todo: Iterable[GameSpec], gate: DisqualificationGate, excluded: set[str],
          stop: threading.Event | None = None, parallel: int = 1,
          deferred: Deferred | None = None) -> Iterator[dict[str, Any]]:
    """Run `todo` on `executor`, handing out only the games that `gate` lets start. The
    executor asks for more after each result, once the caller has added that result to
    the gate, so a game starts as soon as the verdicts it waits for are known: there is
    no pause between rounds while the last game of one is still being played. At most
    `WINDOW` games are handed out and not finished at a time.

    With `stop`, the executor is handed only as many games as it plays at once (two per
    worker), one more as each ends, and none once `stop` is set: the games in flight
    then finish and the run ends.

    With `deferred`, a result comes once its replay is settled (`keep.Deferred`): a game
    whose replay depends on games before it that are still to finish comes after them (a
    stop leaves it out, to be played again by the next run)."""
    waiting = _Waiting(deferred.track(todo) if deferred is not None else todo, gate)
    window = 2 * max(1, parallel) if stop is not None else max(WINDOW, 4 * parallel)
    out = 0  # handed out and not finished
    handed: dict[int, GameSpec] = {}  # what a result must be the game of

    def hand(k: int) -> list[GameSpec]:
        nonlocal out
        if stop is not None and stop.is_set():
            return []
        given = waiting.take(k)
        out += len(given)
        handed.update((g.index, g) for g in given)
        return given

    def more() -> list[GameSpec]:
        nonlocal out
        out -= 1
        return hand(window - out)

    first = hand(window)
    if not first and waiting and not (stop is not None and stop.is_set()):
        # cannot happen: the first game not played is always ready (a stop asked for
        # between two rounds of a league hands out nothing, and ends the run)
        raise RuntimeError(f"no game can start; waiting: {waiting.head()}")
    for res in executor.run(first, excluded, more=more):
        rec = res["record"]
        spec = handed.pop(rec.get("id"), None) if isinstance(rec.get("id"), int) else None
        if spec is None or not played_as(spec, rec):  # (disqualified entrants play no more)
            # A worker (a machine of the cluster) answered with a game it was not given.
            raise ResultsError(f"a worker returned a result for game {str(rec.get('game'))[:40]!r} (id "
                               f"{str(rec.get('id'))[:20]}) that is not a game handed out, or not as scheduled: "
                               "the result is not recorded")
        if deferred is not None:
            yield from deferred.feed(res, spec.sample)
        else:
            yield res
    if stop is not None and stop.is_set():
        return
    if waiting:  # cannot happen: every finished game lets later ones start
        raise RuntimeError(f"games never became ready to start: {waiting.head()}")


def _write_stats(out: Path, outcome: Outcome) -> None:
    write_whole(out / "stats.json", json.dumps({
        "played_this_run": outcome.played, "total": outcome.total, "finished": outcome.finished,
        "elapsed_s": round(outcome.elapsed_s, 3), "first_result_s": round(outcome.first_s, 3),
        "playing_s": round(outcome.playing_s, 3), "bot_processes_started": outcome.bot_starts,
        "incidents": outcome.incidents,
    }, indent=1) + "\n")


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
            head: str | None = None, specs: Iterable[GameSpec] | None = None) -> dict[str, Any]:
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
               seed: SeedState | None = None, bootstrap: int | None = None) -> dict[str, Any]:
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
    board |= (seed or seed_state(cfg, reveal)).to_json()
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
