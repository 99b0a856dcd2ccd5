"""Running a tournament: schedule, resume from games.jsonl, execute, rate and publish.

The results folder is opened by `results`, games are handed out by `play`, the stop and
finish rule is `stop_rule`'s and the board `board`'s; this module runs them in order."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import threading
import time
from array import array
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..ledger.journal import Journal, iter_chain
from ..ledger.keep import Deferred, FirstFaults
from ..model import Board, GameRecord, PlayedGame, StopDecision
from ..ratings.trueskill import rules_draw_probability
from ..report.files import write_whole
from ..sandbox.box import BuildError
from ..sandbox.build import run_build
from ..sandbox.modes import resolve_mode
from .config import TournamentConfig
from .disqualify import BUILD_KEY, Disqualification, build_disqualification, build_record
from .heartbeat import HEARTBEAT_S, Heartbeat
from .league import Matchmaker, budget_met, next_start
from .play import gate_of, play_games
from .placement import sandbox_state
from .results import (ResultsError, fingerprints, hold_folder, prepare_output, rated_before, record_entrants,
                      record_sandbox)
from .schedule import CompactSchedule, GameSpec, PastReader, game_id, iter_schedule
from .stop_rule import history_specs, is_finished, stop_check, stops
from .tally import GameTally
from . import warmup

__all__ = ["Outcome", "Progress", "ResultsError", "build_bots", "run_tournament"]

PUBLISH_EVERY_S = 60.0  # run --forever: the leaderboard files are published between rounds this often


@dataclass
class Progress:
    """What a progress display needs after each game."""

    done: int
    total: int
    started_at: float
    leader: str | None
    last: GameRecord | None = None
    stopping: StopDecision | None = None  # early stopping's state after the last round looked at


@dataclass
class Outcome:
    """The end of a run."""

    played: int
    total: int
    finished: bool
    board: Board = field(default_factory=lambda: Board())
    bot_starts: dict[str, int] = field(default_factory=dict)
    disqualified: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    first_s: float = 0.0  # from the start until the first game's result (workers and bots started)
    playing_s: float = 0.0  # from the start until the last game's result (no publishing)
    stopping: StopDecision | None = None
    # Workers lost during the run (died, or ended by the watchdog): their games were
    # played again from their seeds. {"game", "worker", "reason"} each.
    incidents: list[dict[str, Any]] = field(default_factory=list)
    sandbox: dict[str, Any] = field(default_factory=dict)


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
    heartbeat_s: float = HEARTBEAT_S,
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
    entrants to retire (`settle_field`). `heartbeat_s`: how often progress.json is written
    again while the run lives (`heartbeat.Heartbeat`), so a reader can tell a dead run.

    KeyboardInterrupt stops the run cleanly: running games are abandoned, bots ended,
    finished games kept; the leaderboard of what finished is written, and the exception
    is raised again for the caller.
    """
    t0 = time.monotonic()
    state = sandbox_state(cfg.bots)  # SandboxError before anything is written
    with hold_folder(cfg.output):
        run = _Run(cfg, t0, state, on_progress, build_site, forever, stop, heartbeat_s)
        run.open(fresh, retire)
        run.prepare()
        return run.play()


class _Run:
    """One run of a tournament, with its results folder held.

    What the run keeps: the running aggregates of the games (`tally`, fed as each game
    finishes: standings, head-to-head, TrueSkill in game-index order, the statistics'
    compact arrays, the digest), the schedule as arrays (`sched`), and what later
    decisions need (the gate's and the matchmaker's compact state); never the records.
    The games finished before are read back from games.jsonl one at a time into the
    same, and their index and seed (16 bytes a game) kept until checked."""

    def __init__(self, cfg: TournamentConfig, t0: float, state: dict[str, Any],
                 on_progress: Callable[[Progress], None] | None, build_site: bool, forever: bool,
                 stop: threading.Event | None, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.cfg, self.t0, self.state = cfg, t0, state
        self.on_progress, self.build_site, self.forever, self.stop = on_progress, build_site, forever, stop
        self.out = cfg.output
        self.league = cfg.format == "league"
        self.interrupted = self.finishing = False
        self.executor: Any = None
        self.starts_by_worker: dict[str, Mapping[str, int]] = {}
        self.beat = Heartbeat(self.out / "progress.json", heartbeat_s)
        self.published = time.monotonic()

    def open(self, fresh: bool, retire: Sequence[str]) -> None:
        """Open the results folder and read back the games finished before."""
        opened = prepare_output(self.cfg, fresh, retire, stream=True)
        cfg = self.cfg = opened.cfg
        league = self.league
        if self.forever and not league:
            raise ResultsError(f"{cfg.source}: --forever plays league rounds; the {cfg.format} format has a fixed "
                               "schedule (use format: league)")
        self.head = opened.head
        tally = self.tally = GameTally(cfg.standing, draw_probability=rules_draw_probability(cfg.rules))
        rated_before(tally, cfg, self.out)
        matchmaker = self.matchmaker = Matchmaker(cfg, history=tally) if league else None
        before = PastReader(cfg.base, cfg.format == "random")  # the fields before this one, as its schedule reads them
        firsts = self.firsts = FirstFaults()  # each entrant's first games with a fault (which replays are kept)
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
            iter_chain(self.out / "games.jsonl", None, resume)
        past = None if league else before.past()
        history = before.count if not league else len(ids)
        self.sched = CompactSchedule(() if league else iter_schedule(cfg, past=past), cfg.base)
        self.resumed: dict[int, tuple[Any, Any]] = {}  # league: the games of the round to resume
        if not league:
            _check_done(ids, seeds, self.sched, self.out, cfg.base)
        else:
            first = next_start(cfg, tally)
            self.resumed = {i: (game_id(i), sd) for i, sd in zip(ids, seeds) if i >= first}
        self.scheduled = history + len(self.sched)

    def prepare(self) -> None:
        """The disqualification gate, the builds, and the journal to append to."""
        cfg, out, tally = self.cfg, self.out, self.tally
        self.gate = gate_of(cfg, tally, iter(self.sched), cfg.base)
        # The builds, once, before any game: of the entrants still in. One that fails is out
        # from the first game after those recorded (its unplayed games are played without it).
        self.builds = build_bots(cfg, self.state, skip=self.gate.excluded, first=max(cfg.base, tally.top + 1))
        for d in self.builds:
            self.gate.build_failed(d)
        # A bot is the folder its build made: what the next run finds there, before it builds again.
        record_entrants(out, fingerprints(cfg, [b for b in cfg.bots
                                                if b.sandbox.build and b.name not in self.gate.excluded]))
        self.state = record_sandbox(out, self.state)
        self.excluded = self.gate.excluded  # grown in place as entrants are disqualified
        (out / "replays").mkdir(exist_ok=True)
        self.log_dir = out / "logs"
        self.log_dir.mkdir(exist_ok=True)
        total = max(cfg.games or 0, len(tally)) if self.league else self.scheduled
        self.outcome = Outcome(played=0, total=total, finished=False, sandbox=self.state)
        self.journal = Journal(out / "games.jsonl", self.head)
        self.rounds: Sequence[Sequence[GameSpec]] = (self.sched.rounds(cfg.stop.round_games) if cfg.stop_when
                                                     else [self.sched.span(0, len(self.sched))])
        self.deferred = Deferred(cfg.replays, self.firsts)

    def full_specs(self) -> Iterable[GameSpec]:
        """The tournament's games as far as known (for judging disqualifications)."""
        return itertools.chain(history_specs(self.tally, None if self.league else self.cfg.base), iter(self.sched))

    def league_rounds(self) -> Iterator[Sequence[GameSpec]]:
        """The league's rounds, each matched once the one before is played."""
        cfg, tally, matchmaker = self.cfg, self.tally, self.matchmaker
        assert matchmaker is not None
        while not (self.stop is not None and self.stop.is_set()):
            start = next_start(cfg, tally)
            if not self.forever and budget_met(cfg, tally, matchmaker, start):
                self.outcome.finished = True
                return
            rnd = matchmaker.round(start, cfg.entrants, tally)
            if not rnd:
                return
            _check_round(self.resumed, rnd, self.out)
            self.outcome.total = max(self.outcome.total, len(tally) + sum(1 for s in rnd if s.index not in tally))
            yield rnd

    def show(self, running: bool = True, force: bool = False) -> None:
        """progress.json, for `p10-tourney serve` (at most twice a second while playing; its
        heartbeat rewrites it every `heartbeat_s` while the run lives)."""
        self.beat.set({"done": len(self.tally), "total": self.outcome.total, "running": running,
                       "forever": self.forever, "format": self.cfg.format}, force)

    def progress(self, last: GameRecord | None = None) -> None:
        """Tell `on_progress` where the run stands."""
        if self.on_progress:
            self.on_progress(Progress(len(self.tally), self.outcome.total, self.t0, self.tally.leader(), last,
                                      self.outcome.stopping))

    def play(self) -> Outcome:
        """Play the rounds, then publish; whatever happens, publish what is done."""
        cfg = self.cfg
        try:
            self.show(force=True)
            self.beat.start()
            self.progress()
            # The executor is not handed a secret seed (the Dask one ships its config to other
            # machines): the games' own seeds, in the specs, are all it needs. The bots run as
            # the sandbox was found here, on every machine (a Dask worker without bubblewrap
            # fails their start rather than run them unsandboxed).
            self.executor = _executor(_pinned(replace(cfg, seed=None) if cfg.secret_seed else cfg, self.state),
                                      self.log_dir)
            # An executor that can stay up between rounds (the Dask one) is kept up.
            with self.executor if hasattr(self.executor, "__enter__") else contextlib.nullcontext():
                for r, rnd in enumerate(self.league_rounds() if self.league else self.rounds):
                    if self.league:  # judged again with this round's games known
                        self.gate = gate_of(cfg, self.tally, (s for s in rnd if s.index not in self.tally), None,
                                            self.builds)
                        self.excluded = self.gate.excluded
                    todo = (s for s in rnd if s.index not in self.tally)  # read as games are handed out
                    for res in play_games(self.executor, todo, self.gate, self.excluded, self.stop, cfg.parallel,
                                          self.deferred):
                        self.record(res)
                    if self.after_round(r):
                        break
                # Every game is done: the workers end their bots while the results are published.
                release = getattr(self.executor, "release", None)
                if release is not None:
                    release()
                self.finish()
        except KeyboardInterrupt:
            self.interrupted = True
            raise
        finally:
            self.beat.stop()
            self.close()
        return self.outcome

    def record(self, res: PlayedGame) -> None:
        """A game's result: its replay written, its record appended to the journal and tallied."""
        rec, out, gate = res["record"], self.out, self.gate
        failed = [build_record(gate.builds[e]) for e in rec.get("disqualified") or () if e in gate.builds]
        if failed:  # in the chained record: the verdict is read back from the games
            rec[BUILD_KEY] = failed
        replay = res.get("replay")
        if replay:
            data = b"\n".join(replay) + b"\n"
            path = out / "replays" / f"{rec['game']}.jsonl"
            write_whole(path, data)
            rec["replay"] = f"replays/{rec['game']}.jsonl"
            # In the chained record, so that verify finds any change to the file.
            rec["replay_sha256"] = digest = hashlib.sha256(data).hexdigest()
            if self.build_site:  # its viewer's form, made now rather than at the end
                from ..report.site.replays import prepare
                prepare(path, data, digest)
        else:
            rec["replay"] = None
        self.journal.append(rec)
        self.tally.add(rec)
        if self.matchmaker is not None:
            self.matchmaker.add(rec)
        self.excluded.update(d.entrant for d in gate.add(rec))
        self.starts_by_worker[res.get("worker", "")] = res.get("starts", {})
        outcome = self.outcome
        outcome.played += 1
        outcome.playing_s = time.monotonic() - self.t0
        if outcome.played == 1:
            outcome.first_s = outcome.playing_s
            warmup.start(self.build_site)  # the workers are up: what publishing needs loads while they play
        self.show()
        self.progress(rec)

    def after_round(self, r: int) -> bool:
        """Between rounds: publish a living league's board now and then, and decide whether
        the run stops here (a stop asked for, or the early-stopping rule)."""
        if self.stop is not None and self.stop.is_set():
            return True
        if self.forever and time.monotonic() - self.published >= PUBLISH_EVERY_S:
            # The leaderboard lives: published between rounds, not only at the end.
            self.published = time.monotonic()
            from .board import publish
            publish(self.cfg, self.tally, build_site=self.build_site, sandbox=self.state, head=self.journal.head,
                    specs=self.full_specs())
        if self.cfg.stop_when:
            self.outcome.stopping = stop_check(self.cfg, self.rounds, r, self.tally, self.full_specs)
            self.progress()
            return stops(self.outcome.stopping)
        return False

    def finish(self) -> None:
        """Close the journal, then write the leaderboards (and the site) of the games done."""
        self.finishing = True
        outcome = self.outcome
        self.journal.close()
        if not self.league:
            outcome.finished = is_finished(outcome.stopping, len(self.tally), self.scheduled)
        if outcome.stopping is not None and not outcome.finished:
            outcome.stopping = None  # interrupted: neither settled nor at the budget
        from .board import publish
        outcome.board = publish(self.cfg, self.tally, build_site=self.build_site and not self.interrupted,
                                stopping=outcome.stopping, sandbox=self.state,
                                finished=outcome.finished and not self.league, head=self.journal.head,
                                specs=self.full_specs())
        outcome.disqualified = {d["entrant"]: d["reason"] for d in outcome.board.get("disqualified", [])}
        self.show(running=False, force=True)

    def close(self) -> None:
        """Publish what is done if the run did not get to (interrupted, or an error), and
        write stats.json."""
        if not self.finishing:
            self.finish()
        outcome = self.outcome
        outcome.elapsed_s = time.monotonic() - self.t0
        executor = self.executor
        outcome.incidents = list(getattr(executor, "incidents", ()) if executor is not None else ())
        for starts in self.starts_by_worker.values():
            for name, n in starts.items():
                outcome.bot_starts[name] = outcome.bot_starts.get(name, 0) + n
        _write_stats(self.out, outcome)


def _write_stats(out: Path, outcome: Outcome) -> None:
    write_whole(out / "stats.json", json.dumps({
        "played_this_run": outcome.played, "total": outcome.total, "finished": outcome.finished,
        "elapsed_s": round(outcome.elapsed_s, 3), "first_result_s": round(outcome.first_s, 3),
        "playing_s": round(outcome.playing_s, 3), "bot_processes_started": outcome.bot_starts,
        "incidents": outcome.incidents,
    }, indent=1) + "\n")












