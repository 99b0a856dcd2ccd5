"""A bot as a child process: its own process group (inside a sandbox where one can be
made, see `sandbox`), resource limits, non-blocking pipes, a line cap on stdout, a capped
stderr log, and a terminate → grace → kill ending."""

from __future__ import annotations

import errno
import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .botlog import StderrLog
from ..sandbox.box import BASH, Sandbox, SandboxError
from ..sandbox.cgroups import BotCgroup, cgroups
from ..sandbox.modes import resolve_mode
from ..sandbox.options import prepare, sandbox_exit_code
from ..sandbox.paths import harness_python
from ..sandbox.private import PrivateFolder
from ..sandbox.proctable import cpu_seconds as _cpu
from ..sandbox.proctable import group_usage, thread_stats, tree_stats, tree_usage
from ..sandbox.proctable import stat_fields as _stat
from ..sandbox.rlimits import pin as pin_rlimits
from ..sandbox.scratch import ScratchWatch, says_scratch_full
from ..sandbox.scratch import limit_text as scratch_limit_text
from ..text import printable

DEFAULT_LINE_CAP = 1 << 20  # 1 MiB (protocol: Transport)
DEFAULT_LOG_CAP = 1 << 20
_PAUSE_WAIT_S = 2.0  # how long stopping a bot may wait for its processes to stop
_RAN_WHILE_STOPPED_S = 0.03  # CPU a stopped bot's processes may gain (clock ticks are 10 ms)
MAX_PENDING_OUTPUT = 8 << 20  # a bot that reads nothing while this much waits is stuck
LAST_LOOK_S = 0.05  # how late after a deadline a reply already waiting is still read




def stderr_gist(stderr_tail: bytes, redact: Callable[[str], str] | None = None) -> str:
    """The line of a bot's last stderr output that says what went wrong: the last one
    naming an error or exception, else the last line (a runtime such as Node ends with
    its version after the error). `redact` (a `Redactor`'s `text`) masks the host's
    secrets and folders in the whole tail first, before anything is cut."""
    text = stderr_tail.decode("utf-8", "replace")
    lines = [t.strip() for t in (redact(text) if redact else text).splitlines() if t.strip()]
    if not lines:
        return ""
    return printable(next((t for t in reversed(lines) if "rror" in t or "xception" in t), lines[-1]))[:200]


class BotError(Exception):
    """Something a bot process did wrong; `kind` is the fault it counts as."""

    kind = "crash"


class BotTimeout(BotError):
    """No reply within the time allowed."""

    kind = "timeout"


class BotDied(BotError):
    """The process exited or closed its stdout."""

    kind = "crash"


class LineTooLong(BotError):
    """A line longer than the cap: a protocol fault."""

    kind = "malformed"


class BotStartError(BotError):
    """The process could not be started or did not complete the handshake."""

    kind = "startup"


class LimitExceeded(BotDied):
    """The bot's processes went over a resource limit; the watchdog ended them."""

    kind = "crash"


@dataclass(frozen=True)
class Limits:
    """Per-bot resource limits (None = not limited); the defaults are on (protocol/LIMITS.md).

    - `memory_mb`: memory of everything the bot runs, where a cgroup per bot can be made
      (the kernel ends a process at the limit); else the address space of each process
      (RLIMIT_AS) and the memory of its processes together (watchdog: their proportional set
      sizes, so that what forked workers share counts once).
    - `cpu_s`: CPU seconds per game: what the bot's processes use from the end of its
      previous game (or its start) to the end of this one (RLIMIT_CPU re-armed before each
      game, soft = hard, plus the watchdog for all of them).
    - `open_files`: open file descriptors per process (RLIMIT_NOFILE, soft = hard).
    - `processes`: processes and threads of the bot (a cgroup's pids.max; else the
      watchdog counts its processes).
    - `file_mb`: the largest file a process may write (RLIMIT_FSIZE, soft = hard).
    - `scratch_mb`: all that a sandboxed bot can write: the tmpfs of its private /tmp (its
      HOME too, and /dev/shm, which leads into it); the watchdog ends it when it is full.
    - `cpus`: how many CPUs' worth of time all of the bot's processes may use at once (a
      cgroup CPU quota, where the CPU controller can be had).
    """

    memory_mb: int | None = 1024
    cpu_s: int | None = 300
    open_files: int | None = 1024
    processes: int | None = 256
    file_mb: int | None = 64
    scratch_mb: int | None = 128
    cpus: int | None = 1


@dataclass(frozen=True)
class BotSpec:
    """How to start a bot: its entrant name, argv, working directory and extra environment.

    `randomize_addresses=False` (the default) starts it without address-space layout
    randomisation where the system allows (Linux): bots that run the same program then
    share code addresses, and with them the CPU's branch predictors."""

    name: str
    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = Limits()
    randomize_addresses: bool = False
    sandbox: Sandbox = Sandbox()

    def resolved_argv(self) -> list[str]:
        """argv with `python`/`python3` as the first word meaning the harness's own Python."""
        return harness_python(self.argv)


_ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h


def can_raise_hard_limits() -> bool:
    """Whether this process may raise another process's hard limits (root, or
    CAP_SYS_RESOURCE): then a CPU limit can be hard and still be re-armed per game."""
    try:
        with open("/proc/self/status") as f:
            caps = next(line for line in f if line.startswith("CapEff:")).split()[1]
        return bool(int(caps, 16) >> 24 & 1)  # CAP_SYS_RESOURCE
    except (OSError, StopIteration, ValueError, IndexError):
        return False


def child_setup(limits: Limits = Limits(), randomize_addresses: bool = False,
                cgroup: BotCgroup | None = None) -> Callable[[], None]:
    """What a bot's child process does before it runs the bot's command (`preexec_fn`):
    it joins its cgroup, dies with the harness, takes its resource limits and lowers every
    hard limit to its soft limit (`rlimits.pin`), and, unless `randomize_addresses`, turns address-space layout randomisation off for the
    command (Linux; elsewhere the system's default stays). With a cgroup, memory is the
    cgroup's to limit (all of the bot's processes together), not RLIMIT_AS's."""
    import resource

    # RLIMIT_CPU is hard = soft. Where the harness can raise it again before each game
    # (CAP_SYS_RESOURCE) it is one game's budget; elsewhere it is a lifetime allowance of
    # ten budgets (the watchdog holds each game to one), and a process whose allowance
    # cannot fit another game is started afresh (`reset_cpu_budget`).
    cpu_first = (limits.cpu_s or 0) * (1 if can_raise_hard_limits() else 10)
    procs_files = cgroup.procs_files if cgroup is not None else []

    def apply() -> None:  # pragma: no cover - runs in the child
        for f in procs_files:
            with open(f, "w") as fh:  # fails the start if it cannot be joined
                fh.write(str(os.getpid()))
        try:  # end the bot if the process that started it dies (Linux)
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            if not randomize_addresses:
                # Takes effect at exec. Several bots running the same interpreter then have
                # its code at the same addresses, so that what the CPU's branch predictors
                # learn running one of them also serves the next.
                current = libc.personality(0xFFFFFFFF)
                if current != -1:
                    libc.personality(current | _ADDR_NO_RANDOMIZE)
        except (OSError, AttributeError):
            pass

        def setl(which: int, soft: int, hard: int | None = None) -> None:
            """Set the soft limit (and the hard one, default: the same), never above the
            hard limit the harness itself has."""
            try:
                _, cur_hard = resource.getrlimit(which)
                hard = soft if hard is None else hard
                if cur_hard != resource.RLIM_INFINITY:
                    soft = min(soft, cur_hard)
                    hard = cur_hard if hard == resource.RLIM_INFINITY else min(hard, cur_hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass

        if limits.memory_mb and not procs_files:
            setl(resource.RLIMIT_AS, limits.memory_mb << 20)
        if limits.cpu_s:
            # Hard = soft (the kernel ends the process with SIGKILL): one game's budget where
            # the harness can raise it again before each game (prlimit as root), else ten.
            setl(resource.RLIMIT_CPU, cpu_first)
        if limits.open_files:
            setl(resource.RLIMIT_NOFILE, limits.open_files)
        if limits.file_mb:
            setl(resource.RLIMIT_FSIZE, limits.file_mb << 20)
        pin_rlimits()  # and every other limit: hard = soft, so that the bot raises none

    return apply


# ----- the process table (Linux /proc) -----------------------------------------------------

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


def become_subreaper() -> bool:
    """Make this process adopt the orphans of its descendants (Linux PR_SET_CHILD_SUBREAPER),
    so that a bot's grandchild that left the bot's process group is still ours to end.
    Returns whether that worked."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _kill_left(left: Sequence[tuple[int, str]], sig: int) -> None:
    """Send `sig` to each (pid, start time) of `BotProcess._left_group` still running (the
    same process: a pid used again since is left alone)."""
    for pid, started in left:
        st = _stat(pid)
        if st is not None and len(st) > 19 and st[19] == started:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def reap_orphans(keep: Sequence[int] = ()) -> list[int]:
    """Kill and reap every child of this process whose pid is not in `keep` (after
    `become_subreaper`, these are orphaned descendants of bots). Returns their pids."""
    me = os.getpid()
    killed: list[int] = []
    for _ in range(20):  # an orphan's own children become ours when it dies: go again
        try:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return killed
        found = []
        for pid in pids:
            st = _stat(pid)
            if st is not None and len(st) > 1 and int(st[1]) == me and pid not in keep:
                found.append(pid)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in found:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            killed.append(pid)
    return killed


# How runtimes say they ran out of memory (Python, C/C++, Node, the JVM, Go, Rust, libc).
MEMORY_WORDS = ("MemoryError", "out of memory", "Out of memory", "bad_alloc", "Cannot allocate memory",
                "heap limit", "OutOfMemoryError", "cannot allocate", "Could not reserve enough space",
                "memory allocation of", "Insufficient memory", "insufficient memory", "failed to reserve",
                "JavaScript heap", "There is insufficient memory")
_MEMORY_WORDS = MEMORY_WORDS


def says_out_of_memory(text: str) -> bool:
    """Whether a runtime's own words (stdout or stderr) say it ran out of memory."""
    return any(w in text for w in MEMORY_WORDS)


def memory_limit_text(limits: Limits) -> str:
    """The fault reason's words for the memory limit: "memory limit of 512 MB reached"."""
    return f"memory limit of {limits.memory_mb} MB reached"


def describe_exit(code: int, limits: Limits, stderr_tail: bytes = b"", limit_hit: str | None = None,
                  memory_known: bool = False, redact: Callable[[str], str] | None = None) -> str:
    """An exit code in words ("exit code 1", "killed by SIGXCPU"), the last line of stderr,
    and the limit the process ran into: `limit_hit` when the kernel said so (a cgroup's
    counters), else the limit it probably ran into."""
    tail = stderr_gist(stderr_tail, redact)
    if limit_hit is not None and code != 0:
        text = f"{limit_hit} ({'exit code ' + str(code) if code >= 0 else _signame(-code)})"
        if tail:
            text += f"; its stderr says: {tail}"
        return text
    if code < 0:
        text = _signame(-code)
        if -code == getattr(signal, "SIGXCPU", -1):
            text += f": its CPU time limit ({limits.cpu_s} s per game) was reached" if limits.cpu_s else ""
        elif -code == signal.SIGKILL and limits.cpu_s and memory_known:
            # Not the memory cgroup (it counts its kills): RLIMIT_CPU, whose hard limit
            # (= the soft one) the kernel enforces with SIGKILL.
            text += f": its CPU time limit ({limits.cpu_s} s per game) was reached"
        elif limits.memory_mb and -code in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            text += f" (perhaps at its memory limit of {limits.memory_mb} MiB"
            text += f" or its CPU time limit of {limits.cpu_s} s per game)" if limits.cpu_s and -code == signal.SIGKILL else ")"
    else:
        text = f"exit code {code}"
    if tail:
        text += f"; its stderr says: {tail}"
        if limits.memory_mb and says_out_of_memory(tail):
            text = f"{memory_limit_text(limits)}: {text}"
    return text


def _signame(sig: int) -> str:
    try:
        return f"killed by {signal.Signals(sig).name}"
    except ValueError:
        return f"killed by signal {sig}"


class BotProcess:
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
        self._paused = False  # its processes are stopped (SIGSTOP) until `resume`
        self._confirmed = True  # every thread of it was seen stopped since `pause`
        self._cpu_at_stop: float | None = None  # CPU seconds of its processes when seen stopped
        self._signalled: set[int] = set()  # the processes sent SIGSTOP by this pause
        self._members_seen: list[int] = []  # its processes when last listed while stopping it
        self._whole = False  # every process of it was seen stopped (the list is complete)
        self._vfork_waits = False  # some thread was taken as stopped waiting in vfork()
        self.stop_giveups = 0  # stops not confirmed within _PAUSE_WAIT_S (a thread in uninterruptible sleep)

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
        spec and the machine allow (see `sandbox`); raises `BotStartError`."""
        self.stop()
        spec = self.spec
        argv = spec.resolved_argv()
        if not argv:
            raise BotStartError(f"bot {spec.name!r} has an empty command")
        try:
            mode = resolve_mode(spec.sandbox.mode)
        except SandboxError as e:
            raise BotStartError(f"bot {spec.name!r}: {e}") from None
        host_env = dict(os.environ)
        host_env.update(spec.env)
        if shutil.which(argv[0], path=host_env.get("PATH")) is None and not os.path.exists(
            os.path.join(spec.cwd or ".", argv[0])
        ):
            raise BotStartError(f"bot {spec.name!r}: command not found: {argv[0]!r}")
        lim = spec.limits
        backend, _why = cgroups() if (lim.memory_mb or lim.processes or lim.cpus) else (None, "")
        cgroup = None
        if backend is not None:
            try:
                # bwrap's own two processes (its monitor and the namespace's init) count too.
                cgroup = backend.create(spec.name, lim.memory_mb, lim.processes and lim.processes + 2 * (mode == "bwrap"),
                                        lim.cpus)
            except OSError:
                cgroup = None  # the limits hold per process (the results say so)
        inv = None
        pipes: list[int] = []
        stdin: Any = subprocess.PIPE
        stdout: Any = subprocess.PIPE
        try:
            if mode == "bwrap" and BASH is None:
                inv = prepare(argv, spec.cwd, spec.env, spec.sandbox, lim.scratch_mb, private=True)
                cmd, env, fds = inv.argv, inv.env, inv.pass_fds
            elif mode == "bwrap":
                # The bot's stdin and stdout reach it past bwrap, which then holds no copy.
                in_r, in_w = os.pipe()
                out_r, out_w = os.pipe()
                pipes = [in_r, in_w, out_r, out_w]
                inv = prepare(argv, spec.cwd, spec.env, spec.sandbox, lim.scratch_mb, stdio=(in_r, out_w), private=True)
                cmd, env, fds = inv.argv, inv.env, inv.pass_fds
                stdin = stdout = subprocess.DEVNULL
        except SandboxError as e:  # what it would be shown changed since the tournament was read
            for fd in pipes:
                os.close(fd)
            if cgroup is not None:
                cgroup.remove()
            raise BotStartError(f"bot {spec.name!r}: its sandbox cannot be made: {e}") from None
        if mode != "bwrap":
            host_env.setdefault("PYTHONUNBUFFERED", "1")
            cmd, env, fds = argv, host_env, ()
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=stdin,
                stdout=stdout,
                stderr=subprocess.PIPE,
                cwd=spec.cwd,
                env=env,
                start_new_session=True,
                preexec_fn=child_setup(lim, spec.randomize_addresses, cgroup),
                close_fds=True,
                pass_fds=fds,
            )
        except (OSError, subprocess.SubprocessError) as e:
            if cgroup is not None:
                cgroup.remove()
            if inv is not None and inv.private is not None:
                inv.private.remove()
            for fd in pipes:
                os.close(fd)
            why = getattr(e, "strerror", None) or e
            raise BotStartError(f"bot {spec.name!r} could not start {argv[0]!r}: {why}") from None
        finally:
            if inv is not None:
                inv.close()
        if pipes:
            os.close(pipes[0])  # the bot's ends: only the bot holds them now
            os.close(pipes[3])
            self.proc.stdin = open(pipes[1], "wb", buffering=0)
            self.proc.stdout = open(pipes[2], "rb", buffering=0)
        self.sandboxed = mode == "bwrap"
        self.cgroup = cgroup
        self._private = inv.private if inv is not None else None
        self._had_cgroup = cgroup is not None and bool(lim.memory_mb)
        self._hit = None
        if self.sandboxed and lim.scratch_mb:
            self._scratch = ScratchWatch(self.proc.pid, lim.scratch_mb, self._members)
        self.starts += 1
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            os.set_blocking(f.fileno(), False)  # type: ignore[union-attr]
        self._in_fd = self.proc.stdin.fileno()  # type: ignore[union-attr]
        self._out_fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self._err_fd = self.proc.stderr.fileno()  # type: ignore[union-attr]
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
        self._note(f"started: {' '.join(argv)} (pid {self.proc.pid}"
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
            _kill_left(left, sig)
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

    # ----- running only when waited for ------------------------------------------------

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
        just before it lets another bot run, which gives this one time to reach its stop)."""
        proc = self.proc
        if proc is None or self._paused or proc.poll() is not None:
            return
        self._paused = True
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
            self.limit_reason = (f"bot {self.spec.name!r} ran while it was stopped between its turns "
                                 f"({round(ran * 1000)} ms of CPU)")
            if self.cgroup is not None:
                self.cgroup.kill()
            raise LimitExceeded(self.limit_reason)
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

    def _listed(self) -> list[int]:
        assert self.proc is not None
        outer = self.proc.pid if self.sandboxed else -1
        return [p for p in (self.cgroup.members() if self.cgroup is not None else self._members()) if p != outer]

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
            _kill_left(left, signal.SIGKILL)
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
