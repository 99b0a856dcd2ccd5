"""Where games run: a `GameRunner` keeps one bot process per entrant alive across games;
the local executor runs `parallel` worker processes (multiprocess), each with its own
runner, and streams results back in whatever order games finish."""

from __future__ import annotations

import os
import signal
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import multiprocess as mp
from multiprocess.connection import wait as mp_wait

from ..referee import BotError, BotProcess, BotStartError, handshake, play_game
from ..referee.process import become_subreaper, reap_orphans
from ..sandbox.box import SandboxError
from ..sandbox.modes import resolve_mode
from .config import TournamentConfig
from ..ledger.keep import may_keep
from .pool import BotPool, say_bye
from .schedule import GameSpec
from . import warmup
from ..model import NOT_PLAYED, FaultKind, FaultRecord, GameRecord, PlayedGame


def _start_together(bots: Sequence[BotProcess]) -> None:
    """Start the processes a game still needs before any of them is greeted, so that their
    start-ups overlap rather than queue (each `handshake` then only waits for its hello). A
    start that fails here is tried again, and reported, by its handshake."""
    for bot in bots:
        try:
            bot.start()
        except BotStartError:
            pass


class GameRunner:
    """Plays scheduled games with bot processes that live across games (one per entrant;
    with duplicate deals, up to one per seat rotation, see `pool`)."""

    def __init__(self, cfg: TournamentConfig, worker: str, log_dir: Path | None, reap: bool = False,
                 work_ahead: bool = True, beat: Callable[[], None] | None = None) -> None:
        self.cfg = cfg
        self.worker = worker
        self.log_dir = log_dir
        self.work_ahead = work_ahead  # see `play_game`; only where a CPU is to spare
        self.bots: dict[str, BotProcess] = {}  # every bot process, by "name" or "name#k"
        self.pool = BotPool(self._new_bot)  # an entrant's processes, by seat (see `pool`)
        self.starts: dict[str, int] = {}
        # `reap`: this process is a child subreaper (see `become_subreaper`) whose only
        # children are bots, so any other child is a bot's orphan, ended after each game.
        self.reap = reap
        # Called whenever the game makes progress (a bot started, a decision asked): the
        # executor's watchdog ends a worker that stops calling it (see `watchdog_budget`).
        self.beat = beat
        # The deal groups each bot process has been dealt, and which of its starts that
        # was (see `_deals_of`).
        self._deals: dict[int, tuple[int, set[int]]] = {}
        # What a record or replay may show of the host: no env: value, no host folder.
        self.redact = cfg.redactor(host_env=any(_unsandboxed(b.sandbox.mode) for b in cfg.bots))

    def _deals_of(self, bot: BotProcess) -> set[int]:
        """The deal groups the bot's current process (or the one it starts next) has been
        dealt: forgotten when it is started again."""
        starts, deals = self._deals.get(id(bot), (-1, set()))
        if starts != bot.starts:
            deals = set()
            self._deals[id(bot)] = (bot.starts, deals)
        return deals

    def _new_bot(self, name: str, k: int) -> BotProcess:
        """Process k of entrant `name` (not started): its log is NAME.WORKER[.k].stderr.log."""
        suffix = "" if k == 0 else f".{k}"
        log = self.log_dir / f"{name}.{self.worker}{suffix}.stderr.log" if self.log_dir else None
        bot = BotProcess(self.cfg.bot(name), log_path=log)
        if self.redact.active:
            bot.redact, bot.redact_line = self.redact.text, self.redact.line if self.redact.secrets else None
        self.bots[name if k == 0 else f"{name}#{k}"] = bot
        return bot

    def _bot(self, name: str, spec: GameSpec) -> BotProcess:
        """The process of entrant `name` to play game `spec` (see `pool`).

        With duplicate deals, a bot that is not trusted never plays a deal twice in one
        process: each seat rotation of a deal goes to another of its processes (the
        first, in order, not yet dealt it; one more is started while there are fewer
        than table_size), so every process is reused across different deals and none
        sees a deal it has seen. Should all of them have seen the deal, the first is
        ended and started afresh."""
        if not self.cfg.duplicate or name in self.cfg.trusted:
            return self.pool.get(name, 0)
        for k in range(self.cfg.table_size):
            bot = self.pool.made(name, k)
            if bot is None or spec.group not in self._deals_of(bot) or bot.proc is None:
                return self.pool.get(name, k)  # (a process that was ended starts afresh)
        bot = self.pool.get(name, 0)
        if bot.proc is not None:
            say_bye(bot)
            bot.stop()
        return bot

    def run(self, spec: GameSpec, excluded: Sequence[str] = ()) -> PlayedGame:
        """Play one game; returns {"record", "replay", "starts", "startup_failures"}.

        Entrants in `excluded` (disqualified) do not take part: the game is played by the
        others, if at least two remain.
        """
        cfg = self.cfg
        for name in excluded:  # a disqualified bot plays no more: end it (it may be spinning)
            for gone in self.pool.of(name):
                if gone.proc is not None:
                    say_bye(gone)
                    gone.stop()
        seats, left_out = spec.seats_without(excluded)
        bots = []
        unavailable: dict[int, tuple[FaultKind, str]] = {}
        startup_failures: list[str] = []
        between: list[FaultRecord] = []  # faults found before the game: deaths, limits
        if self.beat is not None:
            self.beat()
        for seat, name in enumerate(seats):
            bot = self._bot(name, spec)
            why = self._check_between_games(bot) if len(seats) >= 2 else None
            if why is not None:
                between.append({"seat": seat, "entrant": name, "kind": FaultKind.CRASH.value, "reason": why})
            bots.append(bot)
        fresh = {id(b) for b in bots if not b.alive}
        _start_together([b for b in bots if id(b) in fresh])
        for seat, (name, bot) in enumerate(zip(seats, bots)):
            if id(bot) not in fresh:
                continue
            if self.beat is not None:
                self.beat()
            try:
                handshake(bot, name, cfg.time, started=True)
            except BotStartError as e:
                unavailable[seat] = (FaultKind.STARTUP, str(e))
                startup_failures.append(name)
        if len(seats) >= 2:
            try:
                result = play_game(
                    bots, seats, cfg.rules, spec.seed, spec.game, time_control=cfg.time, policy=cfg.faults,
                    record=cfg.replays != "none", unavailable=unavailable, work_ahead=self.work_ahead,
                    progress=self.beat,
                )
            finally:
                for bot in bots:  # the next CPU budget starts now (limits.cpu_s is per game)
                    bot.reset_cpu_budget()
                if self.reap:
                    reap_orphans([b.pid for b in self.bots.values() if b.pid is not None])
            record: GameRecord = {"id": spec.index, "group": spec.group, **result.to_record()}
            if between:
                record["faults"] = between + record["faults"]
            # (A replay is formatted only when it may be kept; the run decides, `keep`.)
            replay = result.replay if may_keep(cfg.replays, spec.sample, bool(record["faults"])) else None
            replay = self.redact.folder_lines(replay) if replay is not None else None
            record["faults"] = self.redact.data(record["faults"])
        else:
            record = {"id": spec.index, "group": spec.group, "game": spec.game, "seed": spec.seed,
                      "seats": seats, "places": [1] * len(seats), "scores": [0] * len(seats),
                      "phases": [0] * len(seats), "winner": None, "hands": 0, "stalled_hands": 0,
                      "reason": NOT_PLAYED, "faults": [], "forfeits": [], "duration_s": 0.0}
            replay = None
        if left_out:
            record["disqualified"] = left_out
        for bot in bots:
            # A forfeited bot was ended; it is started afresh for its next game.
            name = bot.spec.name
            self.starts[name] = sum(b.starts for b in self.pool.of(name))
            if len(seats) >= 2:
                self._deals_of(bot).add(spec.group)
        for name in dict.fromkeys(b.spec.name for b in bots):
            self._trim(name)
        self.pool.trim(keep=len(bots))
        return {"record": record, "replay": replay, "starts": dict(self.starts),
                "startup_failures": startup_failures}

    def _trim(self, name: str) -> None:
        """Hold an entrant's waiting processes (with duplicate deals it keeps up to
        table_size, `_bot`) to its one `memory_mb` together: while their cgroups hold more,
        the one holding most is ended (`bye`) and started afresh when it is next needed.
        So a bot cannot multiply its memory by the table size; a bot within its limit in
        one process keeps all of them."""
        slots = [b for b in self.pool.of(name) if b.alive and b.cgroup is not None]
        limit = self.cfg.bot(name).limits.memory_mb
        if len(slots) < 2 or not limit:
            return
        held = {id(b): b.cgroup.memory_mb() for b in slots if b.cgroup is not None}
        while len(slots) > 1 and sum(held[id(b)] for b in slots) > limit:
            big = max(slots, key=lambda b: held[id(b)])
            say_bye(big)
            big.stop()
            slots.remove(big)

    @staticmethod
    def _check_between_games(bot: BotProcess) -> str | None:
        """A bot that died, or went over a limit, since its last game: end what is left of
        it and say why (a crash fault of the coming game; it is started afresh for it)."""
        if bot.proc is None:
            return None  # never started, or ended by the referee (a forfeit)
        try:
            if bot.alive:
                bot.check_limits(force=True)
                return None
            why = f"bot {bot.spec.name!r} died between games ({bot.exit_text()})"
        except BotError as e:
            why = f"{e} (between games)"
        bot.stop(0.2)
        return why + "; started again"

    def kill_now(self) -> None:
        """Kill every bot's process group at once (no bye, no grace): for emergencies."""
        for bot in self.bots.values():
            pid = bot.pid
            if pid is not None:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            if bot.cgroup is not None:  # its sandbox's processes, then the cgroup itself
                bot.cgroup.remove()

    def close(self) -> None:
        """Say bye to every bot and end its process group (and any orphan of a bot)."""
        for bot in self.bots.values():
            say_bye(bot)
        for bot in self.bots.values():
            bot.stop()
            bot.close_log()
        if self.reap:
            reap_orphans()


# ----- the local executor -----------------------------------------------------------------


def _unsandboxed(mode: str) -> bool:
    """Whether a bot of sandbox `mode` runs here without a sandbox (with the harness's own
    environment, whose values are then masked in what is published)."""
    try:
        return resolve_mode(mode) == "none"
    except SandboxError:
        return False  # it will not start at all


def cpu_to_spare(games_at_once: int, pinned: bool = False) -> bool:
    """Whether this machine has more CPUs than games played side by side, so that a
    referee's work ahead while its bot thinks (see `play_game`) uses a CPU that would
    otherwise idle. With every CPU busy, that work is a loss: what was worked out for a
    draw from the deck is thrown away when the bot takes the discard instead."""
    if pinned:  # the worker, its referee and its bots share one CPU
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return games_at_once < cpus


def pin_to_cpu(k: int) -> int | None:
    """Pin this process (and the processes it starts from now on) to the k-th CPU it may
    run on, wrapping around; returns that CPU, or None where the system cannot pin.

    A game is a relay: the referee and the bots take turns, so one CPU loses no
    parallelism, keeps their caches warm and spares the cross-CPU wake-ups of every move."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
        cpu = cpus[k % len(cpus)]
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):  # not Linux
        return None
    return cpu


#: Seconds added to the longest wait the time limits allow (see `watchdog_budget`): ending
#: a bot (up to 6 s), a loaded machine.
WATCHDOG_SLACK_S = 10.0
#: How often one game may be lost (its worker died or was stopped by the watchdog) before
#: the run gives up on it: a game that keeps killing workers is more likely the cause.
ALLOWED_LOSSES = 3
#: Games handed to one worker at a time (one playing, one waiting, so it never idles).
PER_WORKER = 2


class ExecutorError(RuntimeError):
    """The local executor cannot go on (a game lost with too many workers)."""


class ClusterError(ValueError):
    """A Dask cluster that cannot run the tournament (unreachable, no workers, a worker
    that cannot start a bot, a game lost with too many workers). Defined here, beside the
    local executor's error, so that catching it does not import Dask."""


def watchdog_budget(cfg: TournamentConfig) -> float:
    """Seconds a worker may go without progress in a game (a bot started, a decision asked)
    before the watchdog ends it: the longest wait the time limits allow for one step (a
    decision, or a bot's start-up) plus `WATCHDOG_SLACK_S`."""
    return max(cfg.time.move_ms, cfg.time.startup_ms) / 1000 + WATCHDOG_SLACK_S


def _worker_main(wid: int, cfg: TournamentConfig, log_dir: str | None, conn: Any, beat: Any) -> None:
    """A worker process: plays the games that come through `conn` until told to stop.

    `beat` (shared memory) gets the time of each step of a game, for the parent's watchdog.
    Each worker has a pipe of its own, so a worker that dies (or is stopped) holds no lock
    that the others need.

    SIGTERM (from `shutdown`, or from the kernel when the parent dies) ends the worker at
    once: its bots' process groups are killed and the process exits without running
    multiprocess's exit handlers.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    held: list[GameRunner] = []

    def _term(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            for r in held:
                r.kill_now()
            reap_orphans()  # bots whose start was under way, their orphans
        finally:
            os._exit(0)

    signal.signal(signal.SIGTERM, _term)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # end with the parent (Linux)
    except (OSError, AttributeError):
        pass
    if cfg.affinity:
        pin_to_cpu(wid)
    # Bots' orphans (a grandchild that left the bot's process group) become our children.
    reap = become_subreaper()

    def tick() -> None:
        beat.value = time.monotonic()

    runner = GameRunner(cfg, f"w{wid}", Path(log_dir) if log_dir else None, reap=reap,
                        work_ahead=cpu_to_spare(cfg.parallel, cfg.affinity), beat=tick)
    held.append(runner)
    parent = os.getppid()
    try:
        if parent == 1:
            return  # the parent died before we could ask to be told
        while True:
            if not conn.poll(1.0):
                if os.getppid() != parent:
                    return
                continue
            try:
                task = conn.recv()
            except (EOFError, OSError):
                return
            if task is None:
                return
            spec, excluded = task
            tick()
            out = runner.run(spec, excluded)
            conn.send(out)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
        runner.close()


class _Worker:
    """The parent's handle on one worker process: its pipe, its heartbeat and the games
    handed to it (played in that order)."""

    def __init__(self, wid: int, proc: Any, conn: Any, beat: Any) -> None:
        self.wid = wid
        self.proc = proc
        self.conn = conn
        self.beat = beat
        self.games: deque[GameSpec] = deque()
        self.since = 0.0  # when the game now at the head of `games` could have started
        self.stopped_by: str | None = None  # the watchdog's reason, when it ended the worker


class LocalExecutor:
    """Runs games on `parallel` local worker processes.

    A worker that dies (killed, out of memory) or makes no progress within the watchdog
    budget (`watchdog_budget`; stopped, hung) is ended and replaced, and the games it held
    are played again from their seeds by the others; a game finished twice is yielded once.
    Each such loss is kept in `incidents`. A game lost `ALLOWED_LOSSES` + 1 times ends the
    run with an `ExecutorError`.

    Used as a context manager, it keeps its workers (and their bots) up across `run`
    calls until the block ends; otherwise each `run` call starts workers and ends them
    when its games are done.
    """

    def __init__(self, cfg: TournamentConfig, log_dir: Path | None) -> None:
        self.cfg = cfg
        self.log_dir = log_dir
        self.workers: list[_Worker] = []
        self.ctx = mp.get_context("fork")
        self._keep = 0
        self._released = False
        self.budget_s = watchdog_budget(cfg)
        self.incidents: list[dict[str, Any]] = []  # workers lost: game, worker, reason
        self._losses: dict[int, int] = {}  # game index -> times lost

    def __enter__(self) -> LocalExecutor:
        self._keep += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._keep -= 1
        if not self._keep:
            self.close()

    def close(self) -> None:
        """End the workers (politely) and their bots. Safe to call twice."""
        self.shutdown(graceful=True)

    def release(self) -> None:
        """Tell the workers to end (their bots get `bye`) without waiting for them, so that
        the caller can publish the results meanwhile; `close` then waits. No game may be
        run after this."""
        if self.workers and not self._released:
            for w in self.workers:
                self._send(w, None)
            self._released = True

    @staticmethod
    def _send(w: _Worker, msg: Any) -> bool:
        try:
            w.conn.send(msg)
            return True
        except (OSError, ValueError):  # the worker is gone: found out by the caller
            return False

    def _spawn(self, wid: int) -> _Worker:
        warmup.settle()  # no fork while another thread may hold an import lock
        ours, theirs = self.ctx.Pipe(duplex=True)
        beat = self.ctx.RawValue("d", time.monotonic())
        log_dir = str(self.log_dir) if self.log_dir else None
        p = self.ctx.Process(target=_worker_main, args=(wid, self.cfg, log_dir, theirs, beat), daemon=True)
        p.start()
        theirs.close()
        return _Worker(wid, p, ours, beat)

    def _start(self, n: int) -> None:
        if self.workers:
            return
        self._released = False
        self.workers = [self._spawn(wid) for wid in range(n)]

    def _end(self, w: _Worker) -> None:
        """Kill a worker (SIGKILL works on a stopped process too); its bots die with it."""
        try:
            os.kill(w.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        w.proc.join(5)
        w.conn.close()

    def run(self, specs: Sequence[GameSpec], excluded: Any = (),
            more: Callable[[], Sequence[GameSpec]] | None = None) -> Iterator[dict[str, Any]]:
        """Yield each game's result as it finishes. `excluded` is a set that the caller may
        grow (disqualifications); games handed out later leave those entrants out. `more`,
        if given, is asked after each result has been handed to the caller for games that
        may start now, which are played in the same run."""
        if not specs:
            return
        self._start(self.cfg.parallel if self._keep else min(self.cfg.parallel, len(specs)))
        pending: deque[GameSpec] = deque(specs)
        remaining = len(specs)
        # The games handed in and not finished yet (a finished one is dropped, so what this
        # holds does not grow with the games played).
        by_index = {s.index: s for s in specs}

        def feed() -> None:
            # In index order, to the worker with the fewest games (a dead one gets none).
            for w in sorted(self.workers, key=lambda w: (len(w.games), w.wid)):
                while pending and len(w.games) < PER_WORKER:
                    spec = pending.popleft()
                    if spec.index not in by_index:  # finished
                        continue
                    if not w.games:
                        w.since = time.monotonic()
                    w.games.append(spec)
                    if not self._send(w, (spec, tuple(sorted(excluded)))):
                        break

        feed()
        try:
            while remaining:
                ready = mp_wait([x for w in self.workers for x in (w.conn, w.proc.sentinel)], timeout=0.5)
                got: list[dict[str, Any]] = []
                for w in list(self.workers):
                    if w.conn in ready or w.proc.sentinel in ready:
                        got += self._collect(w)
                    if not w.proc.is_alive():
                        got += self._collect(w)  # what it sent before it died counts
                        self._replace(w, pending, by_index)
                    elif w.games and self._stalled(w):
                        self._end(w)
                        self._replace(w, pending, by_index)
                for payload in got:
                    index = payload["record"]["id"]
                    if by_index.pop(index, None) is None:
                        continue  # not a game of this call (cannot happen), or one played twice
                    remaining -= 1
                    feed()
                    yield payload
                    if more is not None:
                        new = [s for s in more() if s.index not in by_index]
                        by_index.update((s.index, s) for s in new)
                        pending.extend(new)
                        remaining += len(new)
                feed()
        finally:
            if remaining:
                self.shutdown(graceful=False)  # games still running: end them now
            elif not self._keep:
                self.shutdown(graceful=True)

    def _collect(self, w: _Worker) -> list[dict[str, Any]]:
        """The results waiting in a worker's pipe (also those of a worker that has died)."""
        out = []
        try:
            while w.conn.poll():
                payload = w.conn.recv()
                payload["worker"] = f"w{w.wid}"
                if w.games and w.games[0].index == payload["record"]["id"]:
                    w.games.popleft()
                w.since = time.monotonic()
                out.append(payload)
        except (EOFError, OSError):
            pass  # died while sending: that game is played again
        return out

    def _stalled(self, w: _Worker) -> bool:
        """Whether the worker's current game has made no progress within the budget."""
        quiet = time.monotonic() - max(w.beat.value, w.since)
        if quiet <= self.budget_s:
            return False
        w.stopped_by = (f"watchdog: the game made no progress for {quiet:.0f} s, over the budget of "
                        f"{self.budget_s:.0f} s (the longer of move_ms and startup_ms, plus {WATCHDOG_SLACK_S:.0f} s)")
        return True

    def _replace(self, w: _Worker, pending: deque[GameSpec], unfinished: Mapping[int, GameSpec]) -> None:
        """A worker died or was ended: start another in its place, and put the games it
        held back at the front of the queue, to be played again from their seeds."""
        if w.proc.exitcode is None:
            self._end(w)
        reason = w.stopped_by or f"the worker process died ({_exit_words(w.proc.exitcode)})"
        lost = [s for s in w.games if s.index in unfinished]
        if lost:
            head = lost[0]
            self.incidents.append({"game": head.game, "worker": f"w{w.wid}", "reason": reason})
            n = self._losses[head.index] = self._losses.get(head.index, 0) + 1
            if n > ALLOWED_LOSSES:
                raise ExecutorError(f"game {head.game} was lost {n} times ({reason}); the run stops, "
                                    "the games finished so far are kept")
        pending.extendleft(reversed(lost))
        w.conn.close()
        self.workers[self.workers.index(w)] = self._spawn(w.wid)

    def shutdown(self, graceful: bool) -> None:
        """Stop the workers: politely when all games are done, at once otherwise (their
        bots are ended either way)."""
        workers, self.workers = self.workers, []
        procs = [w.proc for w in workers]
        if graceful:
            if not self._released:
                for w in workers:
                    self._send(w, None)
            deadline = time.monotonic() + 10
            for p in procs:
                p.join(max(0.1, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: the worker ends its bots on the way out
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(1)
        for w in workers:
            w.conn.close()
        self._released = False


def _exit_words(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
