"""The stop between turns: a bot runs only while the referee waits for its reply. Where
its cgroup has a CPU controller, the cgroup is held to almost no CPU (`throttle`: one
write stops every process and thread of it, one read of its CPU counter at each turn
change sees whether it ran anyway); elsewhere every process of it is stopped (SIGSTOP)
when another bot is asked, confirmed stopped before that bot runs, and let run again
(SIGCONT) when it is asked. CPU it used while stopped is a fault."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import TYPE_CHECKING, NoReturn

from ..sandbox.cgroups import BotCgroup
from ..sandbox.proctable import cpu_seconds as _cpu
from ..sandbox.proctable import thread_stats
from ..sandbox.proctable import stat_fields as _stat
from ..sandbox.throttle import HELD_SHARE, CpuThrottle
from .errors import LimitExceeded

if TYPE_CHECKING:
    from .spec import BotSpec

_PAUSE_WAIT_S = 2.0  # how long stopping a bot may wait for its processes to stop
_RAN_WHILE_STOPPED_S = 0.03  # CPU a stopped bot's processes may gain (clock ticks are 10 ms)
_HELD_SHARE_ALLOWED = 2 * HELD_SHARE  # and a held one per second held (twice what the kernel lets it)
_HELD_SETTLED_S = 0.001  # CPU a bot may use from being held to the check that it stopped, and be taken as stopped
_TICK_S = 0.005  # a scheduler tick and more (HZ 250): a running thread's CPU shows at each


_VFORK_WAIT = (b"kernel_clone", b"wait_for_vfork_done", b"_do_fork", b"do_fork")  # wchan of a vfork() parent


def _threads_stopped(pid: int, waits: list[int] | None = None) -> bool:
    """Every thread of the process is stopped (T, t), or it is a zombie or gone, or it
    waits in vfork() for its child (D in the clone call: it runs nothing until the child,
    itself a process of the bot and stopped, execs or exits; `pid` is then added to
    `waits`): none of them runs its code, or is inside fork()."""
    for tid, st in thread_stats(pid):
        state = st[0] if st else ""
        if state in ("T", "t", "Z", "X"):
            continue
        if state == "D" and _waits_for_vfork(pid, tid):
            if waits is not None:
                waits.append(pid)
            continue
        return False
    return True


def _waits_for_vfork(pid: int, tid: str) -> bool:
    """The thread sleeps in the clone call, waiting for its vfork() child."""
    try:
        with open(f"/proc/{pid}/task/{tid}/wchan", "rb") as f:
            return f.read().strip() in _VFORK_WAIT
    except OSError:
        return False


def _cpu_of(pids: list[int]) -> float:
    """CPU seconds of the processes and of the children they have waited for."""
    total = 0.0
    for p in pids:
        st = _stat(p)
        if st is not None and len(st) > 14:
            total += _cpu(st, children=True)
    return total

class Pausing:
    """The stop between turns of a `BotProcess` (its `pause`, `confirm_stopped` and
    `resume`), kept apart from its pipes and its watchdog."""

    spec: BotSpec
    proc: subprocess.Popen[bytes] | None
    cgroup: BotCgroup | None
    sandboxed: bool
    limit_reason: str | None

    def _init_pause(self) -> None:
        self._paused = False  # its processes are stopped (SIGSTOP) until `resume`
        self._confirmed = True  # every thread of it was seen stopped since `pause`
        self._cpu_at_stop: float | None = None  # CPU seconds of its processes when seen stopped
        self._signalled: set[int] = set()  # the processes sent SIGSTOP by this pause
        self._members_seen: list[int] = []  # its processes when last listed while stopping it
        self._whole = False  # every process of it was seen stopped (the list is complete)
        self._vfork_waits = False  # some thread was taken as stopped waiting in vfork()
        self.stop_giveups = 0  # stops not confirmed within _PAUSE_WAIT_S (a thread in uninterruptible sleep)
        self._held: CpuThrottle | None = None  # its cgroup held to no CPU by this pause (`throttle`)
        self._held_at = 0.0  # when (time.monotonic)

    def _members(self) -> list[int]:
        raise NotImplementedError

    @property
    def paused(self) -> bool:
        """Its processes are stopped until `resume` (or a read, or `bye`)."""
        return self._paused

    def pause(self, confirm: bool = True) -> None:
        """Stop every process of the bot (SIGSTOP, which no process can catch or ignore)
        until `resume`. The referee lets a bot run only while it waits for the bot's reply
        (and to start and to exit), so a bot takes no CPU on others' time: it cannot think
        on an opponent's turn, nor slow the bots that are thinking. With `confirm` false
        the signals are sent and `confirm_stopped` is left for later (the referee calls it
        just before it lets another bot run, which gives this one time to reach its stop).
        Where its cgroup has a CPU controller, the cgroup is held instead (`throttle`):
        one write, nothing to confirm."""
        proc = self.proc
        if proc is None or self._paused or proc.poll() is not None:
            return
        self._paused = True
        throttle = self.cgroup.throttle() if self.cgroup is not None else None
        if throttle is not None:
            try:
                self._cpu_at_stop = throttle.hold()
                self._held, self._held_at, self._confirmed = throttle, time.monotonic(), False
                if confirm:
                    self.confirm_stopped()
                return
            except OSError:
                self._held = None  # (its cgroup is going) stopped by signals instead
        self._confirmed = False
        self._cpu_at_stop = None
        self._whole = False
        if self.cgroup is None and not self.sandboxed:
            try:
                os.killpg(proc.pid, signal.SIGSTOP)  # its process group (no cgroup to list)
            except (ProcessLookupError, PermissionError):
                pass
            self._confirmed = True
            return
        self._signalled = set()
        self._members_seen, _ = self._stop_listed(self._signalled)
        if confirm:
            self.confirm_stopped()

    def confirm_stopped(self) -> None:
        """Wait until every thread of every process of the bot is stopped and its cgroup's
        member list shows no process not yet signalled. A thread inside fork() is not
        stopped until the fork is done, and its child is listed by then, so this catches
        the processes forked while the bot was being stopped. Then note the CPU time of
        its processes: `resume` compares, and a bot that ran while stopped is ended."""
        if not self._paused or self._confirmed or self.proc is None:
            return
        self._confirmed = True
        if self._held is not None:
            self._held_settled(self._held)
            return
        done = self._signalled
        give_up = time.monotonic() + _PAUSE_WAIT_S
        members = self._members_seen
        while True:
            waits: list[int] = []
            running = [p for p in members if not _threads_stopped(p, waits)]
            self._vfork_waits = bool(waits)
            if not running:
                members, new = self._stop_listed(done)
                if not new:  # nothing runs, and nothing was forked before it stopped
                    self._members_seen = members
                    self._whole = True
                    self._cpu_at_stop = _cpu_of(members)
                    return
                continue
            if time.monotonic() > give_up:
                # A thread in uninterruptible sleep: it stops when it wakes (its SIGSTOP is
                # pending). Asleep it uses no CPU, so the check at `resume` stays armed.
                self.stop_giveups += 1
                self._members_seen = members
                self._cpu_at_stop = _cpu_of(members)
                self._whole = False  # a process may yet appear: `resume` lists them again
                return
            for pid in running:  # again: one of its processes may have sent them SIGCONT
                try:
                    os.kill(pid, signal.SIGSTOP)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.0002)  # let a process with the signal pending reach its stop

    def _stop_listed(self, done: set[int]) -> tuple[list[int], list[int]]:
        """SIGSTOP the bot's processes not in `done` (bwrap's monitor aside, which is outside
        the bot's namespaces and runs none of its code); returns the members listed and the
        ones just signalled."""
        members = self._listed()
        new = [p for p in members if p not in done]
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                pass
            done.add(pid)
        return members, new

    def resume(self, check: bool = False) -> None:
        """Let the bot's processes run again (SIGCONT) after `pause`. With `check`, a bot
        whose processes used CPU while stopped (it found a way to run: an escaped process)
        is ended and `LimitExceeded` raised."""
        if not self._paused:
            return
        if self._held is not None:
            self._release(check)
            return
        proc = self.proc
        ran = 0.0
        if proc is not None and check and self._cpu_at_stop is not None:
            ran = _cpu_of(self._members_seen) - self._cpu_at_stop
        # Seen wholly stopped: nothing of it has run since, so the list then is the list now.
        members = self._members_seen if self._cpu_at_stop is not None and self._whole else None
        if members is not None and self._vfork_waits and proc is not None:
            # A thread was taken as waiting for its vfork() child; had it been still inside
            # the clone call instead, its new process would be unlisted: list again, and
            # count all the CPU of any process that appeared while the bot was stopped.
            listed = self._listed()
            seen = set(members)
            if check:
                ran += _cpu_of([p for p in listed if p not in seen])
            members = listed
        self._paused = False
        if proc is None:
            return
        if ran > _RAN_WHILE_STOPPED_S:
            self._ran_while_stopped(ran)
        if self.cgroup is None and not self.sandboxed:
            try:
                os.killpg(proc.pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass
            return
        for pid in members if members is not None else self._listed():
            try:
                os.kill(pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass

    def _held_settled(self, held: CpuThrottle) -> None:
        """A held bot has stopped once its CPU counter stands still: at once for a bot
        that was waiting for its stdin (the counter did not move since it was held);
        else (a thread was running, perhaps inside a long system call, which ends
        before the thread is held) when it has not moved for a scheduler tick. Then
        its CPU time is noted again: `resume` compares."""
        try:
            last = held.seconds()
            if last - (self._cpu_at_stop or 0.0) > _HELD_SETTLED_S:
                give_up = time.monotonic() + _PAUSE_WAIT_S
                while time.monotonic() < give_up:
                    time.sleep(_TICK_S)
                    now = held.seconds()
                    if now == last:
                        break
                    last = now
            self._cpu_at_stop, self._held_at = last, time.monotonic()
        except OSError:
            pass  # its cgroup is gone

    def _release(self, check: bool) -> None:
        """`resume` where the cgroup was held: one read of its CPU counter (with `check`,
        more than the held share of a CPU is a fault), one write to let it run."""
        held, self._held = self._held, None
        self._paused = False
        assert held is not None
        try:
            if check and self._cpu_at_stop is not None and self.proc is not None:
                ran = held.seconds() - self._cpu_at_stop
                if ran > _RAN_WHILE_STOPPED_S + _HELD_SHARE_ALLOWED * (time.monotonic() - self._held_at):
                    self._ran_while_stopped(ran)
            held.release()
        except OSError:
            pass  # its cgroup is gone: so is the bot (its death is seen at the read)

    def _ran_while_stopped(self, ran: float) -> NoReturn:
        self.limit_reason = (f"bot {self.spec.name!r} ran while it was stopped between its turns "
                             f"({round(ran * 1000)} ms of CPU)")
        if self.cgroup is not None:
            self.cgroup.kill()
        raise LimitExceeded(self.limit_reason)

    def _listed(self) -> list[int]:
        assert self.proc is not None
        outer = self.proc.pid if self.sandboxed else -1
        return [p for p in (self.cgroup.members() if self.cgroup is not None else self._members()) if p != outer]

