"""Where games run: a `GameRunner` keeps one bot process per entrant alive across games;
the local executor runs `parallel` worker processes (multiprocess), each with its own
runner, and streams results back in whatever order games finish."""

from __future__ import annotations

import os
import queue
import signal
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import multiprocess as mp

from ..referee import BotError, BotProcess, BotStartError, handshake, play_game
from ..referee.process import become_subreaper, reap_orphans
from .config import TournamentConfig
from .schedule import GameSpec


class GameRunner:
    """Plays scheduled games with bot processes that live across games (one per entrant)."""

    def __init__(self, cfg: TournamentConfig, worker: str, log_dir: Path | None, reap: bool = False,
                 work_ahead: bool = True) -> None:
        self.cfg = cfg
        self.worker = worker
        self.log_dir = log_dir
        self.work_ahead = work_ahead  # see `play_game`; only where a CPU is to spare
        self.bots: dict[str, BotProcess] = {}
        self.starts: dict[str, int] = {}
        # `reap`: this process is a child subreaper (see `become_subreaper`) whose only
        # children are bots, so any other child is a bot's orphan, ended after each game.
        self.reap = reap

    def _bot(self, name: str) -> BotProcess:
        bot = self.bots.get(name)
        if bot is None:
            log = self.log_dir / f"{name}.{self.worker}.stderr.log" if self.log_dir else None
            bot = self.bots[name] = BotProcess(self.cfg.bot(name), log_path=log)
        return bot

    def run(self, spec: GameSpec, excluded: Sequence[str] = ()) -> dict[str, Any]:
        """Play one game; returns {"record", "replay", "starts", "startup_failures"}.

        Entrants in `excluded` (disqualified) do not take part: the game is played by the
        others, if at least two remain.
        """
        cfg = self.cfg
        for name in excluded:  # a disqualified bot plays no more: end it (it may be spinning)
            gone = self.bots.get(name)
            if gone is not None and gone.proc is not None:
                self._bye(gone)
                gone.stop()
        seats = [s for s in spec.seats if s not in excluded]
        bots = []
        unavailable: dict[int, tuple[str, str]] = {}
        startup_failures: list[str] = []
        between: list[dict[str, Any]] = []  # faults found before the game: deaths, limits
        for seat, name in enumerate(seats):
            bot = self._bot(name)
            why = self._check_between_games(bot) if len(seats) >= 2 else None
            if why is not None:
                between.append({"seat": seat, "entrant": name, "kind": "crash", "reason": why})
            if not bot.alive:
                try:
                    handshake(bot, name, cfg.time)
                except BotStartError as e:
                    unavailable[seat] = ("startup", str(e))
                    startup_failures.append(name)
            bots.append(bot)
        if len(seats) >= 2:
            try:
                result = play_game(
                    bots, seats, cfg.rules, spec.seed, spec.game, time_control=cfg.time, policy=cfg.faults,
                    record=cfg.replays != "none", unavailable=unavailable, work_ahead=self.work_ahead,
                )
            finally:
                for bot in bots:  # the next CPU budget starts now (limits.cpu_s is per game)
                    bot.reset_cpu_budget()
                if self.reap:
                    reap_orphans([b.pid for b in self.bots.values() if b.pid is not None])
            record = {"id": spec.index, "group": spec.group, **result.to_record()}
            if between:
                record["faults"] = between + record["faults"]
            # (A replay is formatted only when it is kept: "failed" keeps games with faults.)
            keep = cfg.replays == "all" or (cfg.replays == "failed" and bool(record["faults"]))
            replay = result.replay if keep else None
        else:
            record = {"id": spec.index, "group": spec.group, "game": spec.game, "seed": spec.seed,
                      "seats": seats, "places": [1] * len(seats), "scores": [0] * len(seats),
                      "phases": [0] * len(seats), "winner": None, "hands": 0, "stalled_hands": 0,
                      "reason": "not_played", "faults": [], "forfeits": [], "duration_s": 0.0}
            replay = None
        if excluded and any(s in excluded for s in spec.seats):
            record["disqualified"] = [s for s in spec.seats if s in excluded]
        for bot in bots:
            # A forfeited bot was ended; it is started afresh for its next game.
            self.starts[bot.spec.name] = bot.starts
        return {"record": record, "replay": replay, "starts": dict(self.starts),
                "startup_failures": startup_failures}

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

    @staticmethod
    def _bye(bot: BotProcess) -> None:
        from ..referee import encode

        if bot.alive:
            try:
                bot.send(encode({"type": "bye"}))
            except Exception:  # noqa: BLE001 - ending anyway
                pass

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
            self._bye(bot)
        for bot in self.bots.values():
            bot.stop()
            bot.close_log()
        if self.reap:
            reap_orphans()


# ----- the local executor -----------------------------------------------------------------


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


def _worker_main(wid: int, cfg: TournamentConfig, log_dir: str | None, tasks: Any, results: Any) -> None:
    """A worker process: plays games from `tasks` until told to stop.

    SIGTERM (from `shutdown`, or from the kernel when the parent dies) ends the worker at
    once: its bots' process groups are killed and the process exits without running
    multiprocess's exit handlers. Raising SystemExit instead could land inside the
    queue's own machinery and leave the worker waiting forever for a feeder thread.
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
    runner = GameRunner(cfg, f"w{wid}", Path(log_dir) if log_dir else None, reap=reap,
                        work_ahead=cpu_to_spare(cfg.parallel, cfg.affinity))
    held.append(runner)
    parent = os.getppid()
    try:
        if parent == 1:
            return  # the parent died before we could ask to be told
        while True:
            try:
                task = tasks.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:
                    return
                continue
            if task is None:
                return
            spec, excluded = task
            results.put(("started", wid, spec.index))
            out = runner.run(spec, excluded)
            results.put(("done", wid, out))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
        runner.close()


class LocalExecutor:
    """Runs games on `parallel` local worker processes.

    Used as a context manager, it keeps its workers (and their bots) up across `run`
    calls until the block ends; otherwise each `run` call starts workers and ends them
    when its games are done.
    """

    def __init__(self, cfg: TournamentConfig, log_dir: Path | None) -> None:
        self.cfg = cfg
        self.log_dir = log_dir
        self.procs: list[Any] = []
        self.ctx = mp.get_context("fork")
        self._keep = 0
        self._tasks: Any = None
        self._results: Any = None
        self._released = False

    def __enter__(self) -> LocalExecutor:
        self._keep += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._keep -= 1
        if not self._keep:
            self.close()

    def close(self) -> None:
        """End the workers (politely) and their bots. Safe to call twice."""
        self.shutdown(graceful=True, tasks=self._tasks)

    def release(self) -> None:
        """Tell the workers to end (their bots get `bye`) without waiting for them, so that
        the caller can publish the results meanwhile; `close` then waits. No game may be
        run after this."""
        if self._tasks is not None and not self._released:
            for p in self.procs:
                if p is not None:
                    self._tasks.put(None)
            self._released = True

    def _start(self, n: int) -> None:
        if self.procs:
            return
        self._released = False
        ctx = self.ctx
        self._tasks = ctx.Queue()
        self._results = ctx.Queue()
        log_dir = str(self.log_dir) if self.log_dir else None
        for wid in range(n):
            p = ctx.Process(target=_worker_main, args=(wid, self.cfg, log_dir, self._tasks, self._results), daemon=True)
            p.start()
            self.procs.append(p)

    def run(self, specs: Sequence[GameSpec], excluded: Any = (),
            more: Callable[[], Sequence[GameSpec]] | None = None) -> Iterator[dict[str, Any]]:
        """Yield each game's result as it finishes. `excluded` is a set that the caller may
        grow (disqualifications); games handed out later leave those entrants out. `more`,
        if given, is asked after each result has been handed to the caller for games that
        may start now, which are played in the same run."""
        if not specs:
            return
        self._start(self.cfg.parallel if self._keep else min(self.cfg.parallel, len(specs)))
        tasks, results = self._tasks, self._results
        pending = deque(specs)
        inflight: dict[int, int | None] = {wid: None for wid, p in enumerate(self.procs) if p is not None}
        queued = 0  # games put on the task queue and not yet finished (or lost)

        def feed() -> None:
            # Two games queued per worker keeps every worker busy without fixing who plays what.
            nonlocal queued
            limit = 2 * sum(1 for p in self.procs if p is not None)
            while pending and queued < limit:
                tasks.put((pending.popleft(), tuple(sorted(excluded))))
                queued += 1

        feed()
        remaining = len(specs)
        by_index = {s.index: s for s in specs}
        done: set[int] = set()
        try:
            while remaining:
                try:
                    kind, wid, payload = results.get(timeout=1.0)
                except queue.Empty:
                    for wid, p in enumerate(self.procs):
                        if p is not None and not p.is_alive():
                            # A worker died (not through a bot): its game is played again.
                            self.procs[wid] = None
                            lost = inflight.pop(wid, None)
                            if lost is not None and lost not in done:
                                pending.appendleft(by_index[lost])
                                queued -= 1
                                feed()
                    if not any(p is not None for p in self.procs):
                        raise RuntimeError("every worker process has died")
                    continue
                if kind == "started":
                    inflight[wid] = payload
                    continue
                inflight[wid] = None
                index = payload["record"]["id"]
                if index not in by_index or index in done:
                    continue  # not a game of this call (cannot happen), or one played twice
                done.add(index)
                queued -= 1
                payload["worker"] = f"w{wid}"
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
                self.shutdown(graceful=True, tasks=tasks)

    def shutdown(self, graceful: bool, tasks: Any = None) -> None:
        """Stop the workers: politely when all games are done, at once otherwise (their
        bots are ended either way)."""
        procs = [p for p in self.procs if p is not None]
        if graceful and tasks is not None:
            if not self._released:
                for _ in procs:
                    tasks.put(None)
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
        self.procs = []
        for q in (self._tasks, self._results):
            if q is not None:
                q.close()
                q.cancel_join_thread()
        self._tasks = self._results = None
