"""A bot as a child process: its own process group (inside a sandbox where one can be
made, see `sandbox`), resource limits, non-blocking pipes, a line cap on stdout, a capped
stderr log, and a terminate → grace → kill ending. Its start is `launch`'s, the stop
between its turns `pause`'s."""

from __future__ import annotations

import errno
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from .botlog import StderrLog
from .errors import (  # noqa: F401 - the names bot processes are used with
    MEMORY_WORDS, BotDied, BotError, BotStartError, BotTimeout, LimitExceeded, LineTooLong, describe_exit,
    memory_limit_text, says_out_of_memory, stderr_gist,
)
from .launch import launch
from .orphans import become_subreaper, kill_left, reap_orphans  # noqa: F401
from .pause import Pausing
from .spec import BotSpec, Limits, can_raise_hard_limits, child_setup  # noqa: F401
from ..sandbox.cgroups import BotCgroup
from ..sandbox.options import sandbox_exit_code
from ..sandbox.private import PrivateFolder
from ..sandbox.proctable import cpu_seconds as _cpu
from ..sandbox.proctable import group_usage, tree_stats, tree_usage
from ..sandbox.proctable import stat_fields as _stat
from ..sandbox.scratch import ScratchWatch, says_scratch_full
from ..sandbox.scratch import limit_text as scratch_limit_text
from ..text import printable  # noqa: F401 - as the referee and the command line import it

DEFAULT_LINE_CAP = 1 << 20  # 1 MiB (protocol: Transport)
DEFAULT_LOG_CAP = 1 << 20
MAX_PENDING_OUTPUT = 8 << 20  # a bot that reads nothing while this much waits is stuck
LAST_LOOK_S = 0.05  # how late after a deadline a reply already waiting is still read


class BotProcess(Pausing):
    """One running bot. `send` queues a line and writes what the pipe takes; `read_line`
    waits for one stdout line until a deadline, draining stderr meanwhile."""

    def __init__(
        self,
        spec: BotSpec,
        log_path: Path | None = None,
        line_cap: int = DEFAULT_LINE_CAP,
        log_cap: int = DEFAULT_LOG_CAP,
    ) -> None:
        self.spec = spec
        self.log_path = log_path
        self.line_cap = line_cap
        self.log_cap = log_cap
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._log = StderrLog(log_path, log_cap) if log_path is not None else None
        self._buf = bytearray()
        self._skipping = False  # dropping the rest of an over-long line
        self._out = bytearray()
        self._eof = False
        self._poller: Any = None
        self._in_fd = self._out_fd = self._err_fd = -1
        lim = spec.limits
        self._watched = bool(lim.cpu_s or lim.memory_mb or lim.processes or lim.scratch_mb)  # the watchdog has work
        self.sandboxed = False  # this start runs under bwrap
        self.cgroup: BotCgroup | None = None
        self._hit: str | None = None  # the limit its cgroup or scratch showed when it was stopped
        self._scratch: ScratchWatch | None = None  # its sandbox's scratch, where it has one of a size
        self._private: PrivateFolder | None = None  # the copy of its own folder it alone is shown
        self._had_cgroup = False  # its memory was the cgroup's to limit (and to count kills of)
        self.stderr_tail = b""
        # Masks the host's secrets and folders in what is quoted of its stderr (set by
        # whoever publishes the result: a tournament's `GameRunner`).
        self.redact: Callable[[str], str] | None = None
        # Masks them in each stdout line as it is read, before anything quotes it.
        self.redact_line: Callable[[bytes], bytes] | None = None
        # What the handshake told us.
        self.hello: dict = {}
        self.wants_options = True
        self.next_id = 1
        # The watchdog: CPU seconds of the group when the current game's budget began,
        # and when the whole group was last looked at.
        self._cpu_base = 0.0
        self._last_scan = 0.0
        self.limit_reason: str | None = None
        self._init_pause()

    # ----- life cycle ---------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """The process is running and its stdout is open."""
        return self.proc is not None and self.proc.poll() is None and not self._eof

    @property
    def pid(self) -> int | None:
        """The bot's pid (also its process group id)."""
        return self.proc.pid if self.proc else None

    def start(self) -> None:
        """Start the process in its own process group, in its sandbox and cgroup where the
        spec and the machine allow (see `launch`); raises `BotStartError`."""
        self.stop()
        started = launch(self.spec)
        self.proc = proc = started.proc
        self.sandboxed = started.sandboxed
        self.cgroup = cgroup = started.cgroup
        self._private = started.private
        lim = self.spec.limits
        self._had_cgroup = cgroup is not None and bool(lim.memory_mb)
        self._hit = None
        if self.sandboxed and lim.scratch_mb:
            self._scratch = ScratchWatch(proc.pid, lim.scratch_mb, self._members)
        self.starts += 1
        self._in_fd = proc.stdin.fileno()  # type: ignore[union-attr]
        self._out_fd = proc.stdout.fileno()  # type: ignore[union-attr]
        self._err_fd = proc.stderr.fileno()  # type: ignore[union-attr]
        self._buf.clear()
        self._out.clear()
        self._skipping = False
        self._eof = False
        self._poller = None
        self.stderr_tail = b""
        self.hello = {}
        self.wants_options = True
        self.next_id = 1
        self._cpu_base = 0.0
        self._last_scan = 0.0
        self.limit_reason = None
        self._paused = False
        self._note(f"started: {' '.join(self.spec.resolved_argv())} (pid {proc.pid}"
                   + (", sandboxed" if self.sandboxed else ", no sandbox") + (f", cgroup {cgroup.kind})" if cgroup else ")"))

    def _left_group(self, proc: subprocess.Popen[bytes]) -> list[tuple[int, str]]:
        """(pid, start time) of the bot's descendants that left its process group
        (`setpgid`, `setsid`): unsandboxed and without a cgroup, what ending the group
        would miss. None otherwise (a sandbox or a cgroup ends all)."""
        if self.sandboxed or self.cgroup is not None:
            return []
        return [(pid, st[19]) for pid, st in tree_stats(proc.pid) if int(st[2]) != proc.pid]

    def stop(self, grace: float = 0.5) -> int | None:
        """End the whole process group: close stdin, wait up to `grace`, SIGTERM, wait, SIGKILL.
        Returns the exit code (negative: killed by that signal)."""
        proc = self.proc
        if proc is None:
            return None
        self.resume()  # to read bye or its closed stdin, and exit by itself
        self.proc = None
        left = self._left_group(proc)  # found now, while they are still below the bot
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        code = self._wait(proc, grace)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                # Also ends children still in the group. Under bwrap, its monitor's death
                # kills the namespace's init, and with it every process of the sandbox.
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            kill_left(left, sig)
            if code is None:
                code = self._wait(proc, grace if sig == signal.SIGTERM else 5.0)
        self._hit = self.limit_hit()  # what its counters and its scratch said, before they go
        if self._scratch is not None:
            self._scratch.close()  # (before its cgroup goes: the scratch's pages are charged to it)
            self._scratch = None
        if self.cgroup is not None:
            self.cgroup.remove()  # whatever is left in it, then the cgroup itself
            self.cgroup = None
        if self._private is not None:
            self._private.remove()
            self._private = None
        if code is not None and self.sandboxed:
            code = sandbox_exit_code(code)
        self._drain_stderr(final=True, proc=proc)
        for f in (proc.stdout, proc.stderr):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
        self._note(f"ended (exit code {code})")
        return code

    @staticmethod
    def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def close_log(self) -> None:
        """Close the stderr log file."""
        if self._log is not None:
            self._log.close()

    def exit_code(self) -> int | None:
        """The exit code if the process has ended (negative: killed by that signal)."""
        code = self.proc.poll() if self.proc else None
        return sandbox_exit_code(code) if code is not None and self.sandboxed else code

    # ----- I/O ------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue one line (ending in \\n) and write as much as the pipe takes now. A paused
        bot reads it when it next runs; `bye` resumes it, to exit."""
        if self.proc is None:
            raise BotDied(f"bot {self.spec.name!r} is not running")
        if self._paused and data.startswith(b'{"type":"bye"'):
            self.resume()
        if self._out:
            self._out += data
            self._flush()
            return
        # Nothing queued (the usual case): write straight from `data`, queue only the rest.
        try:
            n = os.write(self._in_fd, data)
        except BlockingIOError:
            n = 0
        except OSError as e:
            if e.errno == errno.EAGAIN:
                n = 0
            else:
                self._eof = True
                raise BotDied(f"bot {self.spec.name!r} closed its stdin ({self._exit_text()})") from None
        if n < len(data):
            self._out += data[n:]
            if len(self._out) > MAX_PENDING_OUTPUT:
                raise BotDied(f"bot {self.spec.name!r} reads nothing: {len(self._out)} bytes wait unread")

    def _flush(self) -> None:
        if not self._out or self.proc is None:
            return
        try:
            n = os.write(self._in_fd, self._out)
            del self._out[:n]
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno == errno.EAGAIN:
                return
            self._eof = True
            raise BotDied(f"bot {self.spec.name!r} closed its stdin ({self._exit_text()})") from None
        if len(self._out) > MAX_PENDING_OUTPUT:
            raise BotDied(f"bot {self.spec.name!r} reads nothing: {len(self._out)} bytes wait unread")

    def exit_text(self) -> str:
        """How the process ended ("exit code 1; its stderr ends: ...", "killed by SIGXCPU:
        its CPU time limit ... was reached"), or "still running"."""
        return self._exit_text()

    def _exit_text(self, proc: subprocess.Popen[bytes] | None = None) -> str:
        """How the process ended, in words, with the last line of its stderr, and the
        limit it probably ran into."""
        proc = proc or self.proc
        code = proc.poll() if proc else None
        if code is None:
            return "still running"
        if self.sandboxed:
            code = sandbox_exit_code(code)
        known = self.cgroup is not None or self._hit is not None or self._had_cgroup
        hit, scratch_mb = self.limit_hit(), self.spec.limits.scratch_mb
        if hit is None and self.sandboxed and scratch_mb and says_scratch_full(stderr_gist(self.stderr_tail)):
            hit = scratch_limit_text(scratch_mb)  # it ended before its scratch could be looked at
        return describe_exit(code, self.spec.limits, self.stderr_tail, hit, memory_known=known, redact=self.redact)

    def limit_hit(self) -> str | None:
        """The limit the kernel enforced on the bot, from its cgroup's counters and its
        scratch: "memory limit of 512 MB reached", "process limit of 256 reached", "scratch
        limit of 128 MB reached", or None."""
        cg, lim = self.cgroup, self.spec.limits
        if cg is not None and lim.memory_mb and cg.oom_kills():
            return memory_limit_text(lim)
        if cg is not None and lim.processes and cg.pids_refused():
            return f"process limit of {lim.processes} reached"
        if self._scratch is not None and self._scratch.full():
            return scratch_limit_text(lim.scratch_mb)
        return self._hit if cg is None and self._scratch is None else None

    def read_line(self, deadline: float) -> bytes:
        """The next stdout line (without \\n). Raises `BotTimeout` at `deadline`
        (time.monotonic), `BotDied` on exit or EOF, `LineTooLong` past the cap."""
        proc = self.proc
        if proc is None:
            raise BotDied(f"bot {self.spec.name!r} is not running")
        if self._paused:
            self.resume()  # waited for: it may run
        in_fd, out_fd, err_fd = self._in_fd, self._out_fd, self._err_fd
        poller = self._poller
        if poller is None:
            poller = self._poller = select.poll()
            poller.register(out_fd, select.POLLIN)
            poller.register(err_fd, select.POLLIN)
        while True:
            if self._buf:
                line = self._take_line()
                if line is not None:
                    return line
            if self._eof:
                self._settle(proc)
                raise BotDied(f"bot {self.spec.name!r} closed its stdout ({self._exit_text()})")
            if self._watched:
                self.check_limits()
            timeout = deadline - time.monotonic()
            # Just past the deadline, a last look without waiting: a reply that came while
            # this process was busy (or not scheduled) is taken.
            if timeout <= -LAST_LOOK_S:
                raise BotTimeout(f"bot {self.spec.name!r} did not answer in time")
            expired = timeout <= 0
            pending = bool(self._out)
            if pending:
                poller.register(in_fd, select.POLLOUT)
            try:
                ready = poller.poll(0 if expired else min(timeout, 0.25) * 1000)
            except InterruptedError:  # pragma: no cover
                continue
            finally:
                if pending:
                    poller.unregister(in_fd)
            out_ready = False
            for fd, _ev in ready:
                if fd == out_fd:
                    out_ready = True
                elif fd == in_fd:
                    self._flush()
                elif fd == err_fd:
                    self._drain_stderr()
            if out_ready:
                try:
                    chunk = os.read(out_fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    self._eof = True
                    continue
                nl = chunk.find(b"\n")
                if nl == len(chunk) - 1 and not self._buf and not self._skipping and nl <= self.line_cap:
                    # exactly one whole line: the usual reply
                    return chunk[:nl] if self.redact_line is None else self.redact_line(chunk[:nl])
                self._feed(chunk)
            elif expired:
                raise BotTimeout(f"bot {self.spec.name!r} did not answer in time")
            elif not ready and proc.poll() is not None:
                # The bot exited though a child of it may still hold the pipe open.
                self._eof = True

    def _settle(self, proc: subprocess.Popen[bytes]) -> None:
        """After EOF: give the process a moment to exit, and read the rest of its stderr,
        so that the reason of its death can be told."""
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        self._drain_stderr()

    # ----- the watchdog ---------------------------------------------------------------

    def usage(self, memory: bool = True) -> tuple[float, float, int]:
        """CPU seconds, memory in MiB (`proctable.memory_mib`; 0 unless `memory`) and
        process count of the bot: its cgroup's processes, or everything in its sandbox,
        or its process group."""
        if self.proc is None:
            return 0.0, 0.0, 0
        if self.cgroup is not None:
            cpu, rss, n = tree_usage(0, pids=self.cgroup.pids(), memory=memory)
            counted = self.cgroup.cpu_seconds()  # with what ended unwaited-for (a zombie's)
            return (cpu if counted is None else counted), rss, n
        if self.sandboxed:
            return tree_usage(self.proc.pid, skip=2, memory=memory)
        return group_usage(self.proc.pid, memory)

    def _members(self) -> list[int]:
        """The host pids of the bot's processes (for re-arming their CPU limits)."""
        if self.proc is None:
            return []
        if self.cgroup is not None:
            return self.cgroup.pids()
        if self.sandboxed:
            pids, level = [], [self.proc.pid]
            kids: dict[int, list[int]] = {}
            for p in (int(x) for x in os.listdir("/proc") if x.isdigit()):
                st = _stat(p)
                if st is not None and len(st) > 1:
                    kids.setdefault(int(st[1]), []).append(p)
            while level:
                pids += level
                level = [c for p in level for c in kids.get(p, [])]
            return pids
        return [self.proc.pid]

    def reset_cpu_budget(self) -> None:
        """Start a new CPU budget (`limits.cpu_s`, per game): from now on. Re-arms the
        process's RLIMIT_CPU to what it has used plus the budget."""
        lim = self.spec.limits
        if not lim.cpu_s or self.proc is None or self.proc.poll() is not None:
            return
        self._cpu_base = self.usage(memory=False)[0]
        import math
        import resource

        raise_hard = can_raise_hard_limits()
        used_up = False
        for pid in self._members():
            st = _stat(pid)
            if st is None:
                continue
            try:
                soft = math.ceil(_cpu(st)) + lim.cpu_s
                _, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
                if raise_hard:
                    resource.prlimit(pid, resource.RLIMIT_CPU, (soft, soft))  # hard = soft
                elif hard != resource.RLIM_INFINITY and soft > hard:
                    used_up = True  # another game's budget does not fit under its hard limit
            except (OSError, ValueError, AttributeError):
                pass
        if used_up:
            # Without CAP_SYS_RESOURCE a hard limit cannot be raised again: the process
            # starts afresh (with a whole budget) for its next game.
            self._note(f"its CPU time limit cannot be re-armed for another game of {lim.cpu_s} s; "
                       "it is started afresh for its next game")
            self._bye_and_stop()

    def _bye_and_stop(self) -> None:
        if self.alive:
            try:
                self.send(b'{"type":"bye"}\n')
            except BotError:
                pass
        self.stop()

    def check_limits(self, force: bool = False) -> None:
        """Look at the bot's process group (at most every 0.5 s unless `force`); if it is
        over a limit, end it and raise `LimitExceeded`."""
        lim = self.spec.limits
        proc = self.proc
        if proc is None or not (lim.cpu_s or lim.memory_mb or lim.processes or self._scratch is not None):
            return
        now = time.monotonic()
        if not force and now - self._last_scan < 0.5:
            return
        self._last_scan = now
        # the memory is the watchdog's to hold only without a cgroup (whose kernel counts it)
        cpu, rss, n = self.usage(memory=bool(lim.memory_mb) and self.cgroup is None)
        why = self.limit_hit()
        if why is not None:
            pass
        elif lim.cpu_s and cpu - self._cpu_base > lim.cpu_s:
            why = (f"used {cpu - self._cpu_base:.1f} s of CPU since its last game, over its limit of "
                   f"{lim.cpu_s} s per game")
        elif lim.memory_mb and self.cgroup is None and rss > lim.memory_mb:
            why = f"its processes hold {rss:.0f} MiB of memory, over its limit of {lim.memory_mb} MiB"
        elif lim.processes and n > lim.processes:
            why = f"it runs {n} processes, over its limit of {lim.processes}"
        if why is not None:
            self.limit_reason = why
            self._note(f"watchdog: {why}")
            left = self._left_group(proc)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            kill_left(left, signal.SIGKILL)
            if self.cgroup is not None:
                self.cgroup.kill()
            self._eof = True
            raise LimitExceeded(f"bot {self.spec.name!r} {why}; it was ended")

    def _feed(self, chunk: bytes) -> None:
        if self._skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                return
            self._skipping = False
            chunk = chunk[nl + 1 :]
        self._buf += chunk

    def _take_line(self) -> bytes | None:
        buf = self._buf
        nl = buf.find(b"\n")
        if nl >= 0:
            if nl > self.line_cap:
                del buf[: nl + 1]
                raise LineTooLong(f"a line of {nl} bytes is longer than the cap of {self.line_cap}")
            line = bytes(buf[:nl])
            del buf[: nl + 1]
            return line if self.redact_line is None else self.redact_line(line)
        if len(buf) > self.line_cap:
            size = len(buf)
            buf.clear()
            self._skipping = True
            raise LineTooLong(f"a line of more than {size} bytes is longer than the cap of {self.line_cap}")
        return None

    def _drain_stderr(self, final: bool = False, proc: subprocess.Popen[bytes] | None = None) -> None:
        proc = proc or self.proc
        if proc is None or proc.stderr is None or proc.stderr.closed:
            return
        fd = proc.stderr.fileno()
        for _ in range(64 if not final else 1024):
            try:
                chunk = os.read(fd, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                if self._poller is not None and proc is self.proc:
                    # stderr closed: stop watching it, or poll would report it forever.
                    try:
                        self._poller.unregister(fd)
                    except (KeyError, ValueError):
                        pass
                return
            self._write_log(chunk)

    def drain_stderr(self) -> None:
        """Move whatever the bot wrote to stderr into its log (capped)."""
        self._drain_stderr()

    def _write_log(self, chunk: bytes) -> None:
        self.stderr_tail = (self.stderr_tail + chunk)[-4096:]
        if self._log is not None:
            self._log.write(chunk)

    def _note(self, text: str) -> None:
        """A line of the harness's own in the bot's log (see `botlog`)."""
        if self._log is not None:
            self._log.note(text)
