"""What a sandbox is: the configuration of one bot's (`Sandbox`), the places and
environment every sandbox gives a bot, and the errors of setting one up."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import lru_cache

MODES = ("auto", "bwrap", "none")
SANDBOX_UID = 1000
SANDBOX_GID = 1000
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# What a sandboxed bot's environment holds before its own `env:` (documented in LIMITS.md).
BASE_ENV = {
    "PATH": SANDBOX_PATH,
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
# The parts of /etc that programs read (dynamic loader, time zone, name service switch,
# certificates, Java's configuration); never passwd/shadow (a two-line passwd is made).
ETC_PATHS = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
    "/etc/timezone", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts", "/etc/ssl/certs",
    "/etc/ca-certificates", "/etc/mime.types", "/etc/os-release", "/etc/debian_version",
    "/etc/protocols", "/etc/services", "/etc/java-17-openjdk", "/etc/java-21-openjdk", "/etc/java-11-openjdk",
    "/etc/gai.conf",
)
COVERED_PROC = ("/proc/keys", "/proc/key-users", "/proc/locks", "/proc/sys/kernel/pty/nr", "/proc/sys/fs/file-nr",
                "/proc/sys/fs/inode-nr", "/proc/sys/fs/inode-state", "/proc/sys/fs/dentry-state", "/proc/sys/fs/aio-nr",
                "/proc/pressure/cpu", "/proc/pressure/io", "/proc/pressure/memory", "/proc/pressure/irq")
"""Files of /proc that show kernel state every sandbox changes (keys, file locks, the
machine's counts of ptys, open files and inodes): covered in every sandbox, so that none
can signal another through them (see `seccomp`)."""

@lru_cache(maxsize=None)
def covered_proc() -> tuple[str, ...]:
    """`COVERED_PROC`, and the files at the top of /proc that only their owner may read
    (`timer_list`, `slabinfo`, `vmallocinfo`, ...): a bot's uid maps to the user running
    the harness, so when that is root they would show it the machine's timers (an exact
    channel between sandboxes: a timer's expiry can hold a number) and kernel memory."""
    found = [p for p in COVERED_PROC if os.path.exists(p)]
    try:
        names = sorted(n for n in os.listdir("/proc") if not n.isdigit())
    except OSError:
        names = []
    for p in (f"/proc/{n}" for n in names):
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and not st.st_mode & stat.S_IROTH and p not in found:
            found.append(p)
    return tuple(found)


READ_ONLY_PROC = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
"""Parts of /proc bound read-only in every sandbox: a bot's uid maps to the user running
the harness, so when that is root, /proc/sys would otherwise take its writes, host-wide
(bubblewrap covers these only where it finds them writable by the sandbox's uid)."""

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

SANDBOX_OWN = ("/proc", "/dev")
"""Folders every sandbox makes its own (a fresh `/proc`, a minimal `/dev` whose `/dev/shm`
is a scratch): a path in them cannot be shown to a bot as the host has it."""

BUILD_HOST_UID = 65534
BUILD_HOST_GID = 65534
"""The host user and group (nobody, nogroup) a bot's build runs as when the harness runs
as root (see `build_userns`): an unprivileged user owns none of the host's files, so the
build cannot change the mode of the device nodes its `/dev` shares with the host."""

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes of a sandbox's `/dev` (bound from the host's: they hold no data)."""

SCRATCH = "/tmp"
SHM = "/tmp/.shm"
"""A sandbox's scratch: one tmpfs of `scratch_mb` at `SCRATCH` (also HOME and TMPDIR), and
`/dev/shm` a link to its folder `SHM`, so that what a bot writes there (POSIX shared
memory and semaphores) is bounded with the rest. Everything else a bot is shown is
read-only: its root and `/dev` (both tmpfs of bubblewrap's, unbounded) included."""


# The trampoline that hands a sandboxed bot its stdin and stdout past bwrap (see `prepare`).
BASH = next((p for p in ("/usr/bin/bash", "/bin/bash") if os.path.exists(p)), None)


class SandboxError(Exception):
    """The sandbox cannot be set up as configured (bwrap asked for where it cannot run, a
    `mounts:` entry that does not exist, a build that cannot be run here)."""


class BuildError(SandboxError):
    """A bot's build failed through what the bot is or does: its command failed or ran
    past a limit, it made a link out of its folder or more than may be copied back, or its
    folder holds more than can be copied. The bot's fault, not the host's (a tournament
    disqualifies the bot and plays on)."""


@dataclass(frozen=True)
class Sandbox:
    """How one bot is contained.

    - `mode`: "auto" (bwrap where it works, else none with a warning), "bwrap", "none".
    - `mounts`: extra host paths the bot sees read-only at the same place.
    - `hide`: paths it must not see even where they lie inside a folder it sees (the
      results folder, the tournament file and its folder, other bots' folders); a path the
      bot needs that lies inside one of them is shown again on top of the mask.
    - `secret`: paths it may never see by any route (the results folder, the tournament
      file): a command word, `cwd`, own folder or mount that resolves inside one is refused.
    - `own`: the bot's own folder (its `cwd:` if the config sets one, else its command's
      folder): read-only in games (each process shown a private copy of it: see
      `private`), writable while `build` runs.
    - `build`: a command run once before the bot's first start (see `run_build`).
    - `conceal`: what marks a folder the bot may never see wherever it lies in the folders
      it is shown ((file name, text the file must hold or None), see `marked_folders`):
      looked for at every start (`marked_at_start`), so that one made after the tournament
      began is masked too.
    - `links`: the paths its command names that lead elsewhere through a link, and where
      they led when the tournament was read ((path, target), see `command_links`); None
      where nothing was recorded. A named path that leads elsewhere now, where it did not
      then, is refused at the start: a bot's build may not turn a word of its command
      into a link to a folder it would then be shown.
    """

    mode: str = "auto"
    mounts: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    secret: tuple[str, ...] = ()
    own: str | None = None
    build: tuple[str, ...] | None = None
    build_timeout_s: int = 300
    conceal: tuple[tuple[str, str | None], ...] = ()
    links: tuple[tuple[str, str], ...] | None = None
