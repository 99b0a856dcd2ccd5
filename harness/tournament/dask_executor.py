"""Games as Dask tasks: the same `run(specs, excluded)` stream as the local executor, played
by the workers of a Dask cluster (`distributed`, the optional `cluster` extra).

With no scheduler address a `LocalCluster` of `parallel` single-threaded worker processes
is started for the run. Each worker process keeps its bot processes alive across games
(a `GameRunner` per worker thread, held by a worker plugin whose teardown says bye to the
bots). Before the first game every worker must start every entrant, or the run stops with
a `ClusterError` naming the worker and the bot. Results stream back to the caller, which
alone writes games.jsonl; a game lost with a dying worker is played again elsewhere by
Dask and yielded once. On the LocalCluster it starts, a worker that stops answering the
scheduler for the watchdog budget (`watchdog_budget`: a worker stopped with SIGSTOP, say)
is restarted by its nanny in the same way; on a cluster of your own, its scheduler's
`distributed.scheduler.worker-ttl` decides.

A `DaskExecutor` used as a context manager keeps its cluster (and the workers' bots) up
across `run` calls until the block ends; otherwise each `run` call connects, checks the
workers, plays and lets go of everything when its games are done.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import socket
import tempfile
import threading
import time
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..model import PlayedGame
from ..referee import BotProcess, BotSpec, BotStartError, TimeControl, encode, handshake
from .config import TournamentConfig
from .executor import ClusterError, GameRunner, cpu_to_spare, watchdog_budget
from .schedule import GameSpec
from ..spill import IndexSet

try:
    import distributed
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # the cluster extra is not installed; ClusterError stays importable
    distributed = None  # type: ignore[assignment]
    WorkerPlugin = object  # type: ignore[assignment,misc]

#: How many workers may die while playing one game before the game (and the run) is given
#: up; a game that keeps killing workers is more likely the cause than their victim.
ALLOWED_FAILURES = 3
#: Seconds to reach the scheduler.
CONNECT_TIMEOUT = 10.0
#: Seconds to wait for a first worker to join it.
WORKERS_TIMEOUT = 60.0
#: Where a worker writes its bots' stderr logs when it is not on this machine's results
#: folder: this environment variable on the worker, else <tmp>/p10-tourney/<name>/logs.
LOG_DIR_ENV = "P10_TOURNEY_LOG_DIR"
#: Seconds after which a worker ends the bots of a runner that has had no game.
IDLE_CLOSE_S = 600.0
#: Games handed to the scheduler at once, per worker thread.
INFLIGHT_PER_THREAD = 2
#: The lease: the process that runs the tournament renews it on every worker every
#: LEASE_RENEW_S seconds; a worker whose lease has not been renewed for LEASE_S seconds
#: (the process died, or lost the cluster) ends the bots of the tournament at once.
LEASE_RENEW_S = 2.0
LEASE_S = 12.0


# ----- on the workers ---------------------------------------------------------------------


def worker_label(worker: Any) -> str:
    """A short name for a worker, fit for file names: w0, w1, ... for a LocalCluster's
    numbered workers, else its host and port."""
    name = worker.name
    if isinstance(name, int) or (isinstance(name, str) and name.isdigit()):
        return f"w{name}"
    return re.sub(r"[^A-Za-z0-9.-]+", "_", str(worker.address).split("://")[-1]).strip("_")


def worker_log_dir(tournament: str) -> Path:
    """Where a worker that does not share the results folder keeps the bots' stderr logs."""
    base = os.environ.get(LOG_DIR_ENV)
    if base:
        return Path(base) / tournament
    return Path(tempfile.gettempdir()) / "p10-tourney" / tournament / "logs"


def machine_id() -> str:
    """Which machine (which CPUs) this process runs on: the kernel's boot id on Linux,
    shared by every container and process of one host; else the host name."""
    try:
        return "boot:" + Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "host:" + socket.gethostname()


class GamePlugin(WorkerPlugin):  # type: ignore[misc,valid-type]
    """Lives in each worker process for a tournament: hands each game to an idle
    `GameRunner` (one per worker thread, made on demand, kept across games), and ends the
    bots when the plugin is removed or the worker closes.

    The process that runs the tournament renews a lease on every worker (`renew`, every
    `LEASE_RENEW_S`); when it lapses (`lease_s` without a renewal: that process died or
    lost the cluster) the worker ends every bot of the tournament, those of a game still
    running too, at once. Bots idle for `IDLE_CLOSE_S` are ended as well (they start again
    for their next game).

    Each renewal also says how many worker threads run on each machine of the cluster:
    the referees work ahead while a bot thinks only if this machine has more CPUs than
    the game threads of all its workers together (`cpu_to_spare`)."""

    def __init__(self, name: str, cfg: TournamentConfig, log_dir: str | None, own_cluster: bool = False,
                 lease_s: float = LEASE_S) -> None:
        self.name = name
        self.cfg = cfg
        self.log_dir = log_dir
        self.own_cluster = own_cluster
        self.lease_s = lease_s

    def setup(self, worker: Any) -> None:
        if self.own_cluster and threading.current_thread() is threading.main_thread():
            # A LocalCluster's workers share the terminal's process group: Ctrl-C is for the
            # process that runs the tournament, which then closes the cluster in order.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        self._lock = threading.Lock()
        self._runners: dict[int, GameRunner] = {}  # live runners by number
        self._free: dict[int, float] = {}  # idle runners: number -> when it became idle
        self._count = 0
        self._label = worker_label(worker)
        self._address = str(worker.address)
        self._nthreads = int(getattr(worker, "nthreads", 0) or 1)
        self._machine = machine_id()
        # Until the first renewal says how many threads share this machine: its own.
        self._work_ahead = cpu_to_spare(self._nthreads)
        self._renewed = time.monotonic()
        self.lapses = 0
        self._logs = Path(self.log_dir) if self.log_dir else worker_log_dir(self.cfg.name)
        self._stop = threading.Event()
        threading.Thread(target=self._reap, name=f"{self.name}-idle", daemon=True).start()

    def renew(self, threads_by_machine: Mapping[str, int] | None) -> tuple[str, int]:
        """The lease renewed; with the game threads of the cluster by machine (`machine_id`)
        the work-ahead decision is made again. Returns this worker's (machine, threads)."""
        self._renewed = time.monotonic()
        if threads_by_machine and self._machine in threads_by_machine:
            ahead = cpu_to_spare(int(threads_by_machine[self._machine]))
            with self._lock:
                self._work_ahead = ahead
                for runner in self._runners.values():
                    runner.work_ahead = ahead
        return self._machine, self._nthreads

    @property
    def work_ahead(self) -> bool:
        """Whether this worker's referees work ahead while a bot thinks."""
        return self._work_ahead

    def play(self, spec: GameSpec, excluded: Sequence[str]) -> PlayedGame:
        with self._lock:
            if self._free:
                k = max(self._free, key=self._free.__getitem__)  # the most recently used
                del self._free[k]
            else:
                k, self._count = self._count, self._count + 1
                n = len(self._runners)
                self._runners[k] = GameRunner(self.cfg, self._label if n == 0 else f"{self._label}.{n}", self._logs,
                                              work_ahead=self._work_ahead)
            runner = self._runners[k]
        try:
            out = runner.run(spec, excluded)
        finally:
            with self._lock:
                if k in self._runners:
                    self._free[k] = time.monotonic()
        # Unique per runner (a restarted worker has a new address; a runner made after an
        # idle one was ended has a new number), so the caller can add up bot starts.
        out["worker"] = f"{self._address}#{k}"
        return out

    def _reap(self) -> None:
        """Every second: end every runner's bots if the lease lapsed, else those idle for
        `IDLE_CLOSE_S`."""
        while not self._stop.wait(min(1.0, self.lease_s / 4, IDLE_CLOSE_S / 4)):
            now = time.monotonic()
            lapsed = now - self._renewed > self.lease_s
            with self._lock:
                if lapsed:
                    gone = list(self._runners)
                    self._free.clear()
                else:
                    gone = [k for k, since in self._free.items() if now - since > IDLE_CLOSE_S]
                    for k in gone:
                        del self._free[k]
                runners = [self._runners.pop(k) for k in gone]
            if lapsed and runners:
                self.lapses += 1
                logging.getLogger(__name__).warning(
                    "%s: no lease renewal for %.0f s (the tournament's process is gone?): ending the bots of %d runner(s)",
                    self.name, now - self._renewed, len(runners))
                for runner in runners:  # a game may be running: kill first, then the orderly close
                    runner.kill_now()
            for runner in runners:
                self._close(runner)

    def _close(self, runner: GameRunner) -> None:
        try:
            runner.close()
        except Exception:  # noqa: BLE001 - ending the others anyway
            logging.getLogger(__name__).exception("ending the bots of %s", runner.worker)

    def teardown(self, worker: Any) -> None:
        self._stop.set()
        with self._lock:
            runners, self._runners, self._free = list(self._runners.values()), {}, {}
        for r in runners:
            self._close(r)


def renew_lease(plugin: str, threads_by_machine: Mapping[str, int] | None,
                dask_worker: Any = None) -> tuple[str, int] | None:
    """Run on each worker by `client.run`: renew the lease of plugin `plugin` (see
    `GamePlugin.renew`). None on a worker without it (joined before it was registered)."""
    games = dask_worker.plugins.get(plugin) if dask_worker is not None else None
    if games is None or not hasattr(games, "_renewed"):  # not there, or not set up yet
        return None
    return games.renew(threads_by_machine)


def play_one(plugin: str, spec: GameSpec, excluded: Sequence[str]) -> dict[str, Any]:
    """The Dask task: play game `spec` with this worker's bots."""
    worker = distributed.get_worker()
    try:
        games: Any = worker.plugins[plugin]  # our GamePlugin
    except KeyError:
        raise RuntimeError(f"worker {worker.address} has no p10-tourney plugin {plugin!r}") from None
    return games.play(spec, excluded)


def check_bots(bots: Sequence[BotSpec], time_control: TimeControl) -> dict[str, str]:
    """Start each bot, complete the handshake, say bye; returns {entrant: why} for those
    that failed. Bots are checked at the same time, each in its own thread."""

    def one(spec: BotSpec) -> tuple[str, str | None]:
        bot = BotProcess(spec)
        try:
            handshake(bot, spec.name, time_control)
            bot.send(encode({"type": "bye"}))
        except BotStartError as e:
            return spec.name, str(e)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            return spec.name, f"{type(e).__name__}: {e}"
        finally:
            bot.stop()
        return spec.name, None

    if not bots:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(bots))) as pool:
        return {name: why for name, why in pool.map(one, bots) if why}


async def _check_on_worker(bots: Sequence[BotSpec], time_control: TimeControl) -> dict[str, str]:
    # Off the worker's event loop, so it keeps talking to the scheduler meanwhile.
    return await asyncio.get_running_loop().run_in_executor(None, check_bots, bots, time_control)


# ----- in the process that runs the tournament --------------------------------------------


def _bot_reason(name: str, why: str) -> str:
    for prefix in (f"bot {name!r}: ", f"bot {name!r} "):
        if why.startswith(prefix):
            return why[len(prefix):]
    return why


def check_report(results: Mapping[str, Any]) -> str | None:
    """One line describing what `check_bots` found on each worker ({address: failures or
    the exception the worker raised}), or None when every worker started every bot."""
    problems: list[str] = []
    bots_missing = False
    for address in sorted(results):
        res = results[address]
        if isinstance(res, BaseException):
            # A worker's own exception arrives wrapped in a plain Exception holding its repr.
            what = str(res) if type(res) is Exception else f"{type(res).__name__}: {res}"
            problems.append(f"worker {address} could not run the bot check ({what.splitlines()[0] if what else '?'}); "
                            "is p10-tourney installed in the worker's Python environment?")
            continue
        for name, why in res.items():
            bots_missing = True
            problems.append(f"worker {address} cannot start bot {name!r}: {_bot_reason(name, why)}")
    if not problems:
        return None
    text = problems[0]
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more: " + "; ".join(problems[1:]) + ")"
    if bots_missing:
        text += ". Every worker needs each bot's command and files at the paths of the config (see docs/cluster.md)"
    return text


class DaskExecutor:
    """Runs games as tasks on a Dask cluster (`cfg.scheduler`, or a LocalCluster of
    `cfg.parallel` workers started for the run)."""

    def __init__(self, cfg: TournamentConfig, log_dir: Path | None, scheduler: str | None = None) -> None:
        if distributed is None:
            raise ImportError("No module named 'distributed'", name="distributed")
        self.cfg = cfg
        self.log_dir = log_dir
        self.scheduler = scheduler or cfg.scheduler
        self.client: Any = None
        self.cluster: Any = None
        self.plugin: str | None = None
        self._keep = 0
        self._threads = (0.0, 0)
        self._lease_stop: threading.Event | None = None
        self.threads_by_machine: dict[str, int] = {}
        self.incidents: list[dict[str, Any]] = []  # workers lost: game, worker, reason (as the local executor's)
        self._renew_pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="p10-lease")
        self._renewing: dict[str, Any] = {}  # worker address -> its renewal call (a Future)
        self._where: dict[str, tuple[str, int]] = {}  # worker address -> (machine, threads)

    # ----- life cycle ---------------------------------------------------------------------

    def __enter__(self) -> DaskExecutor:
        self._keep += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._keep -= 1
        if not self._keep:
            self.close()

    def start(self, excluded: Iterable[str] = ()) -> None:
        """Connect (or start a LocalCluster), check that every worker starts every entrant
        not in `excluded`, and install the game plugin on the workers. Idempotent."""
        if self.client is not None:
            return
        try:
            self._connect()
            self._check_workers(excluded)
            name = f"p10-tourney-{self.cfg.name}-{uuid.uuid4().hex[:8]}"
            log_dir = str(self.log_dir) if self.cluster is not None and self.log_dir else None
            # register_plugin is distributed >= 2023.9.2; register_worker_plugin before.
            client: Any = self.client
            register = getattr(client, "register_plugin", None) or client.register_worker_plugin
            register(GamePlugin(name, self.cfg, log_dir, own_cluster=self.cluster is not None), name=name)
            self.plugin = name
            self._renew(CONNECT_TIMEOUT)  # where the workers are: then how many threads share each machine
            self._renew(CONNECT_TIMEOUT)
            self._lease_stop = threading.Event()
            threading.Thread(target=self._keep_lease, args=(self._lease_stop,), name=f"{name}-lease",
                             daemon=True).start()
        except BaseException:
            self.close()
            raise

    def _connect(self) -> None:
        from distributed import Client, LocalCluster

        if self.scheduler:
            try:
                self.client = Client(self.scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as e:
                raise ClusterError(f"cannot reach the Dask scheduler at {self.scheduler}: {e}") from None
        else:
            self.cluster = LocalCluster(
                n_workers=self.cfg.parallel, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, silence_logs=logging.ERROR,
                # No dashboard; its HTTP server (health, metrics) on any free port, not 8787.
                # A worker that stops answering (stopped, hung) for the watchdog budget is
                # restarted by its nanny, and its game played again elsewhere.
                scheduler_kwargs={"allowed_failures": ALLOWED_FAILURES, "dashboard_address": ":0",
                                  "worker_ttl": f"{watchdog_budget(self.cfg):.0f}s"},
            )
            self.client = Client(self.cluster, set_as_default=False)
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except TimeoutError:
            raise ClusterError(
                f"no Dask worker joined the scheduler at {self.client.scheduler.address} within "
                f"{WORKERS_TIMEOUT:.0f} s; start some with: dask worker {self.client.scheduler.address} --nthreads 1"
            ) from None

    def _check_workers(self, excluded: Iterable[str]) -> None:
        out = set(excluded)
        bots = [b for b in self.cfg.bots if b.name not in out]
        results = self.client.run(_check_on_worker, bots, self.cfg.time, on_error="return")
        problem = check_report(results)
        if problem:
            raise ClusterError(problem)

    def _renew(self, timeout: float = LEASE_RENEW_S) -> None:
        """Renew the lease on every worker, telling each how many game threads its machine
        runs (from the previous renewals' answers); count them again from the answers.

        Each worker is renewed by a call of its own, so a worker that does not answer (a
        stopped process, a machine gone quiet) holds up only its own renewal, never the
        others' (whose leases would lapse while the run goes on). A call still waiting is
        not repeated; the answers of a round are waited for up to `timeout` seconds."""
        client, plugin = self.client, self.plugin
        if client is None or plugin is None:
            return
        workers = list(client.nthreads())
        counts = dict(self.threads_by_machine) or None
        round_: list[Any] = []
        for w in workers:
            waiting = self._renewing.get(w)
            if waiting is not None and not waiting.done():
                continue
            fut = self._renew_pool.submit(client.run, renew_lease, plugin, counts, workers=[w], on_error="ignore")
            self._renewing[w] = fut
            round_.append(fut)
        wait(round_, timeout=timeout)
        for w in list(self._renewing):
            fut = self._renewing[w]
            if w not in workers and fut.done():
                del self._renewing[w]
                self._where.pop(w, None)
            elif fut.done() and fut.exception() is None:
                answer = (fut.result() or {}).get(w)
                if isinstance(answer, (tuple, list)) and len(answer) == 2:
                    self._where[w] = (str(answer[0]), int(answer[1]))
        by_machine: dict[str, int] = {}
        for w in workers:
            if w in self._where:
                machine, threads = self._where[w]
                by_machine[machine] = by_machine.get(machine, 0) + threads
        self.threads_by_machine = by_machine

    def _keep_lease(self, stop: threading.Event) -> None:
        while not stop.wait(LEASE_RENEW_S):
            try:
                self._renew()
            except Exception:  # noqa: BLE001 - tried again at the next renewal
                logging.getLogger(__name__).debug("lease renewal failed", exc_info=True)

    def close(self) -> None:
        """End the bots on the workers (the plugin's teardown), and the LocalCluster if this
        executor started it. Safe to call twice."""
        if self._lease_stop is not None:
            self._lease_stop.set()
            self._lease_stop = None
        client, cluster, plugin = self.client, self.cluster, self.plugin
        self.client = self.cluster = self.plugin = None
        self._renewing = {}
        try:
            if client is not None and plugin is not None and client.status == "running":
                try:
                    client.unregister_worker_plugin(plugin)
                except Exception:  # noqa: BLE001 - workers gone; their bots ended with them
                    pass
        finally:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()

    # ----- games --------------------------------------------------------------------------

    def _limit(self) -> int:
        at, n = self._threads
        now = time.monotonic()
        if now - at > 1.0:
            n = sum(self.client.nthreads().values())
            self._threads = (now, n)
        return max(INFLIGHT_PER_THREAD, INFLIGHT_PER_THREAD * n)

    def run(self, specs: Sequence[GameSpec], excluded: Any = (),
            more: Callable[[], Sequence[GameSpec]] | None = None) -> Iterator[dict[str, Any]]:
        """Yield each game's result as it finishes. `excluded` is a set that the caller may
        grow (disqualifications); games submitted later leave those entrants out. `more`,
        if given, is asked after each result has been handed to the caller for games that
        may start now, which are played in the same run."""
        if not specs:
            return
        self.start(excluded)
        try:
            yield from self._play(specs, excluded, more)
        finally:
            if not self._keep:
                self.close()

    def _play(self, specs: Sequence[GameSpec], excluded: Any,
              more: Callable[[], Sequence[GameSpec]] | None = None) -> Iterator[dict[str, Any]]:
        from distributed import as_completed

        client = self.client
        token = uuid.uuid4().hex[:8]
        pending = deque(specs)
        inflight: dict[Any, GameSpec] = {}
        done = IndexSet()  # bitmaps: a bit a game, not a set member's ~60 bytes
        known = IndexSet(s.index for s in specs)
        results = as_completed(loop=client.loop, with_results=True, raise_errors=False)

        def submit() -> None:
            limit = self._limit()
            while pending and len(inflight) < limit:
                spec = pending.popleft()
                fut = client.submit(play_one, self.plugin, spec, tuple(sorted(excluded)),
                                    key=f"p10-{spec.game}-{token}", pure=False)
                inflight[fut] = spec
                results.add(fut)

        try:
            submit()
            while inflight:
                fut, res = next(results)
                spec = inflight.pop(fut)
                if fut.status != "finished":
                    self._failed(fut, spec, res)
                del fut
                if spec.index in done:  # a game is recorded once, however often it was played
                    submit()
                    continue
                done.add(spec.index)
                yield res
                if more is not None:  # after the caller has seen the result (and perhaps disqualified)
                    new = [s for s in more() if s.index not in known]
                    for s in new:
                        known.add(s.index)
                    pending.extend(new)
                submit()
        finally:
            self.incidents += lost_games(client, token)
            if inflight:
                try:
                    client.cancel(list(inflight))
                except Exception:  # noqa: BLE001 - closing anyway
                    pass

    def _failed(self, fut: Any, spec: GameSpec, res: Any) -> None:
        exc = res[1] if isinstance(res, tuple) and len(res) == 3 else res
        if fut.status == "cancelled":
            raise ClusterError(f"game {spec.game} was cancelled on the cluster")
        if isinstance(exc, distributed.KilledWorker):
            last = getattr(exc, "last_worker", None)
            n = getattr(exc, "allowed_failures", None)
            raise ClusterError(
                f"game {spec.game} was lost: {'several' if n is None else n + 1} workers died while playing it"
                + (f" (the last {getattr(last, 'address', last)})" if last is not None else "")
                + "; see the workers' logs"
            )
        if isinstance(exc, BaseException):
            raise exc.with_traceback(res[2] if isinstance(res, tuple) else None)
        raise ClusterError(f"game {spec.game} failed on the cluster: {exc!r}")


def lost_games(client: Any, token: str) -> list[dict[str, Any]]:
    """The games of run `token` a worker was playing when the scheduler lost it (killed,
    gone quiet past its time to live), from the scheduler's event log: the scheduler plays
    them again elsewhere without a word, so the run records them as a local worker's loss
    is recorded. An event log that cannot be read gives none."""
    try:
        events = client.get_events("all")
    except Exception:  # noqa: BLE001 - an older scheduler, a closed client: nothing to add
        return []
    out = []
    for _, msg in events:
        if not isinstance(msg, dict) or msg.get("action") != "remove-worker" or msg.get("expected"):
            continue
        for key in sorted(map(str, msg.get("processing-tasks") or ())):
            if key.startswith("p10-") and key.endswith(f"-{token}"):
                out.append({"game": key[len("p10-"):-len(token) - 1], "worker": str(msg.get("worker", "?")),
                            "reason": "lost by the Dask scheduler"})
    return out
