"""How a bot is started: its spec (command, folder, environment, sandbox) and resource
limits, and what its child process does before it runs the bot's command."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..sandbox.box import Sandbox
from ..sandbox.cgroups import BotCgroup
from ..sandbox.paths import harness_python
from ..sandbox.rlimits import pin as pin_rlimits


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

