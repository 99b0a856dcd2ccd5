"""The sandbox around a bot: bubblewrap (`bwrap`) namespaces and mounts, and one cgroup per
bot so that memory and process counts cover everything the bot starts.

A sandboxed bot runs as `bwrap <options> -- <its command>` with its own user, PID, IPC,
network, UTS and cgroup namespaces, uid/gid 1000 inside, a fresh `/proc`, a minimal
`/dev`, no network at all, read-only views of what programs need (`/usr`, `/bin`, `/lib*`,
a few files of `/etc`, the Python it runs with when its command is `python`, its own
folders and its `mounts:`), a size-capped tmpfs as `/tmp` and `HOME` (which `/dev/shm`
leads into: the only place it can write), and a minimal environment. Hidden from it: the
results folder, the tournament file and its folder, other bots' folders and, unless its
command is the harness's Python, the harness itself. All of `/proc` is read-only. A bot's
build works on a copy of its folder, as an unprivileged host user when the harness runs as
root (`run_build`).

Cgroups: `detect_cgroups` finds where one cgroup per bot can be made — a cgroup v2
subtree with the memory and pids controllers, or the cgroup v1 `memory` and `pids`
hierarchies — or says why not; then memory and process limits hold per process only.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .rlimits import pin as pin_rlimits
from .seccomp import program as seccomp_program
from .undo import Undo, UndoError
from .proctable import tasks_of, tree_load
from .text import printable

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
      folder): read-only in games, writable while `build` runs.
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


# ----- can bwrap run here? ------------------------------------------------------------------

_PROBE: dict[str, tuple[bool, str]] = {}


def bwrap_available() -> tuple[bool, str]:
    """Whether bubblewrap can make a sandbox on this machine, and if not why (cached)."""
    if "bwrap" in _PROBE:
        return _PROBE["bwrap"]
    if not sys.platform.startswith("linux"):
        res = (False, f"bubblewrap needs Linux (this is {sys.platform})")
    elif shutil.which("bwrap") is None:
        res = (False, "bubblewrap is not installed (the 'bwrap' command; Debian/Ubuntu: apt-get install bubblewrap)")
    else:
        argv = ["bwrap", "--unshare-all", "--die-with-parent", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
        argv += _system_binds() + ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"]
        try:
            p = subprocess.run(argv, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
            err = p.stderr.decode("utf-8", "replace").strip().splitlines()
            res = (p.returncode == 0, "" if p.returncode == 0 else
                   f"bubblewrap cannot make a sandbox here: {err[-1] if err else f'exit code {p.returncode}'}")
        except (OSError, subprocess.TimeoutExpired) as e:
            res = (False, f"bubblewrap cannot make a sandbox here: {e}")
    _PROBE["bwrap"] = res
    return res


def resolve_mode(mode: str) -> str:
    """"bwrap" or "none" for a configured mode; raises `SandboxError` for "bwrap" where
    bubblewrap cannot run."""
    if mode not in MODES:
        raise SandboxError(f"sandbox must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "none":
        return "none"
    ok, why = bwrap_available()
    if ok:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError(f"sandbox: bwrap was asked for, but {why}")
    return "none"


# ----- the bwrap command line ---------------------------------------------------------------


def _system_binds() -> list[str]:
    """Read-only binds of the system's program folders, kept as symlinks where they are
    (a merged-/usr system has /bin -> usr/bin)."""
    out: list[str] = []
    for p in SYSTEM_PATHS:
        if not os.path.lexists(p):
            continue
        if os.path.islink(p):
            if p.count("/") == 1:  # a top-level link such as /lib -> usr/lib
                out += ["--symlink", os.readlink(p), p]
            continue
        if p != "/usr" and p.startswith("/usr/"):
            continue  # inside /usr, bound already
        out += ["--ro-bind", p, p]
    return out


def _under(path: str, folder: str) -> bool:
    """`path` is `folder` or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _path_words(argv: Sequence[str]) -> list[int]:
    """Where the words of a command that may name paths are: each word after the program
    that is not an option, then the program itself when given as a path."""
    return [k for k in range(1, len(argv)) if not argv[k].startswith("-")] + ([0] if argv and "/" in argv[0] else [])


def _joined_paths(argv: Sequence[str], cwd: str | None) -> list[str]:
    """The paths a bot's command names (`_path_words`), as written, joined to its working
    folder (neither normalized nor resolved)."""
    base = cwd or os.getcwd()
    return [os.path.join(base, argv[k]) for k in _path_words(argv)]


def named_path(path: str) -> str:
    """Where the host finds `path`: an absolute path whose folders are resolved as the
    kernel resolves them (through every link, and `..` after the folder it follows), its
    last part kept as named (a link there stays a link). A sandbox shows folders at these
    places only, so a path that goes through `..` or a link on its way is reached this way
    there.

    >>> named_path("/usr/lib/../bin")
    '/usr/bin'
    """
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(head), tail)


def _named_paths(argv: Sequence[str], cwd: str | None) -> list[str]:
    """The paths a bot's command names (`_joined_paths`), each that exists as the host
    finds it (`named_path`); one that does not exist as written."""
    return [named_path(p) if os.path.lexists(p) else p for p in _joined_paths(argv, cwd)]


def command_file(argv: Sequence[str], cwd: str | None) -> str | None:
    """The script or program file a bot's command runs, as an absolute path: the first
    word after the program that names an existing file, else the program itself when it
    is given as a path (`./bot`, `bin/bot`), its folders resolved and a link at its end
    not followed (`named_path`); None for a program found on PATH."""
    # Where the command names it, not where a symlink leads: the folder it is in is the
    # bot's own (writable while it builds), never a link's target elsewhere.
    return next((p for p in _named_paths(argv, cwd) if os.path.isfile(p)), None)


def command_paths(argv: Sequence[str], cwd: str | None) -> list[str]:
    """What a bot's command names on the host, to be shown read-only: the folder of each
    word after the program that is an existing file (its script, a data file), each word
    that is an existing folder, and the program's folder when it is given as a path."""
    out: list[str] = []
    for p in _named_paths(argv, cwd):
        if os.path.isfile(p):
            out.append(os.path.dirname(os.path.realpath(p)))
        elif os.path.isdir(p) and os.path.realpath(p) != "/":
            out.append(os.path.realpath(p))
    return out


def sandbox_argv(argv: Sequence[str], cwd: str | None) -> list[str]:
    """`argv` as a sandbox runs it: a word (see `_path_words`) that names an existing path
    through `..` or through a link on its way is replaced by the path the host finds
    (`named_path`; relative to the working folder when it lies inside it), which the
    sandbox shows; every other word is left as written."""
    base = os.path.realpath(cwd or os.getcwd())
    out = list(argv)
    for k in _path_words(argv):
        w = argv[k]
        p = os.path.join(base, w)
        if not os.path.lexists(p):
            continue
        found = named_path(p)
        if found == os.path.normpath(p) and ".." not in w.split("/"):
            continue
        out[k] = os.path.relpath(found, base) if not os.path.isabs(w) and _under(found, base) else found
    return out


def command_links(argv: Sequence[str], cwd: str | None, mounts: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    """(path, where it leads) for the bot's working folder, each path its command names and
    each of its `mounts` that leads elsewhere through a link (the bot is shown where it
    leads, see `command_paths`)."""
    base = cwd or os.getcwd()
    paths = [base] + _joined_paths(argv, os.path.realpath(base)) + list(mounts)
    out = []
    for p in paths:
        if os.path.lexists(p):
            a, r = os.path.abspath(p), os.path.realpath(p)
            if a != r and (a, r) not in out:
                out.append((a, r))
    return tuple(out)


def _python_paths() -> list[str]:
    """What the harness's Python needs: its installation and its environment's packages,
    and the folder of each package installed in development mode (editable)."""
    paths = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths.add(os.path.dirname(sys.executable) if not os.path.islink(sys.executable) else
              os.path.dirname(os.path.abspath(sys.executable)))
    return sorted(paths)


def harness_package() -> str:
    """The folder of the installed harness package."""
    return str(Path(__file__).resolve().parent.parent)


def harness_python(argv: Sequence[str]) -> list[str]:
    """`argv` with `python` or `python3` as its first word meaning the harness's own Python."""
    out = list(argv)
    if out and out[0] in ("python", "python3"):
        out[0] = sys.executable
    return out


def uses_harness_python(argv: Sequence[str]) -> bool:
    """Whether a (resolved) command runs the harness's own Python."""
    return bool(argv) and os.path.realpath(argv[0]) in (os.path.realpath(sys.executable), sys.executable)


def _minimal_passwd() -> tuple[bytes, bytes]:
    return (f"bot:x:{SANDBOX_UID}:{SANDBOX_GID}:bot:/tmp:/bin/sh\n".encode(),
            f"bot:x:{SANDBOX_GID}:\n".encode())


@dataclass
class Invocation:
    """A prepared sandboxed start: bwrap's argv, the file descriptors it reads its options
    and files from (kept open across exec), and the environment."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    _fds: list[int] = field(default_factory=list)
    extra_groups: list[int] | None = None
    """`[]` where bwrap must start with no supplementary groups (`subprocess.Popen`'s
    `extra_groups`): a build run as `BUILD_HOST_UID` keeps none of root's."""

    def close(self) -> None:
        """Close our ends of the option and file pipes (after the start)."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()


def _data_fd(data: bytes) -> int:
    """A descriptor to read `data` from, whatever its size: an in-memory file (a pipe
    would hold only its buffer's worth, and writing more would block the harness: a bot
    whose folder holds thousands of results folders to mask makes options that long)."""
    fd = os.memfd_create("p10-data", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_writable(own: str, hidden: Sequence[str]) -> None:
    """Refuse a build's writable folder where writing could reach beyond the bot: a system
    or Python folder, the harness package, or a folder that holds another bot's folder,
    the results or the tournament file (writes there are the harness user's)."""
    keep = list(SYSTEM_PATHS) + _python_paths() + [harness_package()]
    for k in keep:
        if _under(own, k) or _under(k, own):
            raise SandboxError(f"the bot's own folder {own!r} would be writable during its build, "
                               f"and it holds or lies in {k!r}; give the bot a folder of its own (cwd:)")
    for h in hidden:
        h = os.path.realpath(h)
        if _under(h, own):
            raise SandboxError(f"the bot's own folder {own!r} would be writable during its build, "
                               f"and it holds {h!r}; give the bot a folder of its own (cwd:)")


SCAN_SKIP = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", "site-packages"})
"""Folders `marked_folders` does not look into: version control and installed packages."""

SCAN_LIMIT = 100_000
"""Folders `marked_folders` looks at, at most, below one root."""

START_FOLDERS = 64
"""Folders `marked_at_start` looks into again at a bot's start, at most, below one root."""
START_ENTRIES = 2_048
"""Directory entries `marked_at_start` reads at a bot's start, at most, below one root."""


def _marked(path: str, conceal: Sequence[tuple[str, str | None]], files: Sequence[str] | None = None) -> bool:
    """Whether folder `path` holds what `conceal` marks; `files`: the names of what it holds
    that is not a folder, where they are known (else each name is looked up)."""
    for name, text in conceal:
        if files is not None and name not in files:
            continue
        if text is None:
            if files is not None:
                return True
            try:
                if not stat.S_ISDIR(os.lstat(os.path.join(path, name)).st_mode):
                    return True
            except OSError:
                pass
            continue
        try:  # never blocks (a FIFO of that name) nor follows a link
            fd = os.open(os.path.join(path, name), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode) and text.encode() in os.read(fd, 4096):
                return True
        except OSError:
            pass
        finally:
            os.close(fd)
    return False


def marked_folders(root: str, conceal: Sequence[tuple[str, str | None]], skip: Iterable[str] = ()) -> list[str]:
    """The folders at or below `root` that `conceal` marks (one holding a regular file of
    that name, which holds that text when one is given), without following links or
    looking into `SCAN_SKIP` folders or those of `skip` (masked whole anyway). SandboxError
    past `SCAN_LIMIT` folders: what is below could not all be checked."""
    found: list[str] = []
    seen = 0
    skipped = {os.path.realpath(p) for p in skip}
    todo = [root]  # a stack, not recursion: a bot's build may nest folders thousands deep
    while todo:
        here = todo.pop()
        if here in skipped:
            continue
        seen += 1
        if seen > SCAN_LIMIT:
            raise SandboxError(f"{root!r}, which the bot is shown, holds more than {SCAN_LIMIT:,} folders: too many "
                               "to check that none of them is one it may not see (another tournament's results); "
                               "give the bot a folder of its own (cwd:)")
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError:
            continue
        dirs = [e for e in entries if e.is_dir(follow_symlinks=False)]
        if _marked(here, conceal, [e.name for e in entries if not e.is_dir(follow_symlinks=False)]):
            found.append(os.path.realpath(here))
            continue
        todo += [e.path for e in dirs if e.name not in SCAN_SKIP]
    return found


_FOUND: dict[tuple[Any, ...], list[str]] = {}
"""What `marked_folders` found below a root, in this process (see `marked_at_start`)."""


def marked_at_start(root: str, conceal: Sequence[tuple[str, str | None]], skip: Iterable[str] = ()) -> list[str]:
    """The folders at or below `root` that `conceal` marks, at a bot's start, in a few
    milliseconds however many folders `root` holds: the whole of it is searched once in
    a process (`marked_folders`: when the tournament file is read, which the local
    workers inherit, or a Dask worker's first start of the bot), and at every start the
    folders found then (those still marked) and the top of `root` again, breadth first:
    `START_FOLDERS` folders and `START_ENTRIES` entries at most. So a results folder made
    after the search is found at a start where it lies near the top of a large folder,
    anywhere in a small one. The whole search is made again where `root` is another
    folder (by device and inode) than the one searched."""
    skip = tuple(sorted({os.path.realpath(p) for p in skip}))
    try:
        st = os.stat(root)
    except OSError:
        return []
    key = (root, st.st_dev, st.st_ino, tuple(conceal), skip)
    found = _FOUND.get(key)
    if found is None:
        found = _FOUND[key] = marked_folders(root, conceal, skip)
    out = [f for f in found if _marked(f, conceal)]
    return out + [f for f in _marked_top(root, conceal, set(skip)) if f not in out]


def _marked_top(root: str, conceal: Sequence[tuple[str, str | None]], skipped: set[str]) -> list[str]:
    """The marked folders among the first `START_FOLDERS` folders at or below `root`,
    breadth first, reading `START_ENTRIES` directory entries at most."""
    found: list[str] = []
    todo = deque([root])
    folders = entries = 0
    while todo and folders < START_FOLDERS and entries < START_ENTRIES:
        here = todo.popleft()
        if here in skipped:
            continue
        folders += 1
        if _marked(here, conceal):
            found.append(os.path.realpath(here))
            continue
        try:
            with os.scandir(here) as it:
                for e in it:
                    entries += 1
                    if e.name not in SCAN_SKIP and e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
                    if entries >= START_ENTRIES:
                        break
        except OSError:
            continue
    return found


_USERNS: dict[int, int] = {}  # process id -> an open descriptor of its build user namespace


def build_userns() -> int:
    """A user namespace for bots' builds when the harness runs as root (made once per
    process; the descriptor stays open): the sandbox's uid and gid map to
    `BUILD_HOST_UID`/`BUILD_HOST_GID`, not to root, and host root is mapped as uid 1 only
    so that bubblewrap may reach the folders it binds (a Python under /root). No process
    in it may make a user namespace of its own (`user.max_user_namespaces` is 0 there),
    as bubblewrap's `--disable-userns` does. SandboxError where the kernel refuses."""
    fd = _USERNS.get(os.getpid())
    if fd is not None:
        return fd
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only makes the namespace and waits
        try:
            os.close(ready_r)
            os.close(go_w)
            if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
                os.write(ready_w, b"u")
                os._exit(1)
            try:
                with open("/proc/sys/user/max_user_namespaces", "w") as fh:
                    fh.write("0")
            except OSError:
                os.write(ready_w, b"m")
                os._exit(1)
            os.write(ready_w, b"k")
            os.read(go_r, 1)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(go_r)
    try:
        got = os.read(ready_r, 1)
        if got != b"k":
            raise SandboxError("cannot make a user namespace for a bot's build"
                               + (" (unshare failed)" if got == b"u" else " (user.max_user_namespaces is not writable in it)"))
        for name, host in (("uid_map", BUILD_HOST_UID), ("gid_map", BUILD_HOST_GID)):
            with open(f"/proc/{pid}/{name}", "w") as fh:
                fh.write(f"1 0 1\n{SANDBOX_UID if name == 'uid_map' else SANDBOX_GID} {host} 1\n")
        fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise SandboxError(f"cannot make a user namespace for a bot's build: {e.strerror or e}") from None
    finally:
        os.close(ready_r)
        os.close(go_w)  # the child ends; the namespace lives on with `fd`
        os.waitpid(pid, 0)
    _USERNS[os.getpid()] = fd
    return fd


def drops_root(writable_own: bool) -> bool:
    """Whether a sandboxed start runs as `BUILD_HOST_UID` on the host: a build, when the
    harness runs as root."""
    return writable_own and os.geteuid() == 0


def bwrap_options(
    argv: Sequence[str],
    cwd: str | None,
    box: Sandbox,
    scratch_mb: int | None,
    writable_own: bool = False,
    userns: int | None = None,
    own_source: str | None = None,
) -> list[str]:
    """The bwrap options (not the command) for a bot with resolved command `argv`.

    `writable_own` (builds): the bot's own folder is bound writable, from `own_source`
    (a copy of it) when that is given. `userns`: a user namespace to join
    (`build_userns`) instead of making one.

    The only place a bot can write in its games is its scratch (`SCRATCH`), of
    `scratch_mb`: its `/dev` is made here read-only, without the pseudo-terminals of
    bubblewrap's `--dev` and with `/dev/shm` leading into the scratch, and `prepare`
    makes the root read-only once every file on it is made."""
    if box.links is not None:
        for a, r in command_links(argv, cwd, box.mounts):
            if (a, r) not in box.links:
                raise SandboxError(f"{a!r}, which the bot's command, cwd or mounts name, now leads to {r!r}, which "
                                   "it did not when the tournament was read (a link its build made?)")
    cwd = os.path.realpath(cwd or os.getcwd())
    if userns is None:
        opts = ["--unshare-all", "--unshare-user", "--disable-userns"]
    else:
        opts = ["--userns", str(userns), "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try"]
    opts += ["--die-with-parent", "--new-session", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID),
             "--hostname", "bot"]
    opts += _system_binds()
    for p in ETC_PATHS:
        if os.path.exists(p):
            opts += ["--ro-bind", p, p]
    # The scratch first: folders of the bot's below /tmp are bound on top of it.
    opts += ["--proc", "/proc"]
    for p in READ_ONLY_PROC:
        if os.path.exists(p):
            opts += ["--ro-bind", p, p]
    opts += ["--tmpfs", "/dev"]
    for d in DEVICES:
        if os.path.exists(f"/dev/{d}"):
            opts += ["--dev-bind", f"/dev/{d}", f"/dev/{d}"]
    opts += ["--symlink", "/proc/self/fd", "/dev/fd"]
    opts += [x for k, n in enumerate(("stdin", "stdout", "stderr")) for x in ("--symlink", f"/proc/self/fd/{k}", f"/dev/{n}")]
    if scratch_mb:
        opts += ["--size", str(scratch_mb << 20)]
    opts += ["--tmpfs", SCRATCH, "--dir", SHM, "--symlink", SHM, "/dev/shm", "--remount-ro", "/dev"]
    needed: list[str] = [cwd]
    harness_py = uses_harness_python(argv)
    if harness_py:
        needed += _python_paths() + [harness_package()]
    prog = argv[0] if argv else ""
    found = shutil.which(prog, path=SANDBOX_PATH + os.pathsep + os.environ.get("PATH", "")) if prog else None
    if found and not any(_under(os.path.realpath(found), s) for s in SYSTEM_PATHS):
        needed.append(os.path.realpath(found))  # a program outside /usr: the file itself
    needed += command_paths(argv, cwd)
    own = os.path.realpath(box.own) if box.own else None
    if own:
        needed.append(own)
    mounts = [os.path.realpath(m) for m in box.mounts]
    needed += mounts
    for p in needed:
        made = next((k for k in SANDBOX_OWN if _under(p, k) and not _under(p, "/dev/shm")), None)
        if made is not None:
            raise SandboxError(f"{p!r} (the bot's command, cwd, own folder or mounts) cannot be shown in the sandbox: "
                               f"it lies in {made}, which the sandbox makes its own")
    # Bind the outermost of the needed paths (a folder inside another comes with it).
    bound: list[str] = []
    for p in sorted(set(needed), key=len):
        if not any(_under(p, b) for b in bound) and not any(_under(p, s) for s in SYSTEM_PATHS):
            bound.append(p)
    secret = [os.path.realpath(x) for x in box.secret]
    if box.conceal:  # what the bound folders hold now (not what they held when the tournament was read)
        installed = _python_paths() + [harness_package()]
        masked_whole = [h for h in (os.path.realpath(x) for x in box.hide) if not any(_under(n, h) for n in needed)]
        for b in bound:
            if os.path.isdir(b) and not any(_under(b, k) for k in installed):
                secret += [f for f in marked_at_start(b, box.conceal, masked_whole) if f not in secret]
    named = [os.path.realpath(os.path.join(cwd, w)) for w in argv[1:] if w and not w.startswith("-")]
    for p in needed + named:
        for x in secret:
            if _under(p, x):
                raise SandboxError(f"{p!r} (the bot's command, cwd, own folder or mounts) lies inside {x!r}, "
                                   "which no bot may see")
    if writable_own and own:
        _check_writable(own, [h for h in box.hide] + secret)
    for p in bound:
        opts += ["--ro-bind", p, p]
    # Hide what lies inside a bound folder but is not the bot's: a folder is covered by an
    # empty tmpfs, and the needed paths inside it are bound again on top of that; a file
    # by /dev/null. A hidden folder that the bot needs whole (its cwd is the tournament's
    # folder) stays, and what is hidden inside it is masked in turn.
    hide = [os.path.realpath(h) for h in box.hide] + secret
    # A repository's history holds every committed file, the masked ones too (other bots'
    # folders, tournament files): a bound folder's .git is covered unless the bot names it.
    for b in bound:
        git = os.path.join(b, ".git")
        if os.path.lexists(git) and not any(_under(n, git) for n in needed):
            hide.append(git)
    # The folder that holds a results folder (results/) is masked whole where the bot needs
    # nothing inside it: a mask is made once, at the start, and so also covers the results
    # of runs begun while this process lives.
    for x in secret:
        parent = os.path.dirname(x)
        if parent != x and not any(_under(n, parent) for n in needed) and not any(_under(parent, s) for s in SYSTEM_PATHS):
            hide.append(parent)
    if not harness_py:
        hide.append(harness_package())
    layers: list[tuple[str, bool]] = [(b, True) for b in bound]  # (path, shown)

    def shown(path: str) -> bool:
        under = [(len(q), vis) for q, vis in layers if _under(path, q)]
        return bool(under) and max(under)[1]

    masks: list[str] = []
    for h in sorted(set(hide), key=len):
        if not shown(h):
            continue
        if os.path.isdir(h):
            if any(n == h for n in needed) and h not in secret:
                continue
            opts += ["--tmpfs", h]
            masks.append(h)
            layers.append((h, False))
            again: list[str] = []
            for n in sorted({n for n in needed if _under(n, h) and n != h}, key=len):
                if not any(_under(n, a) for a in again):
                    again.append(n)
                    opts += ["--ro-bind", n, n]
                    layers.append((n, True))
        elif os.path.exists(h):
            opts += ["--ro-bind", "/dev/null", h]
    for m in masks:
        opts += ["--remount-ro", m]
    if writable_own and own:
        opts += ["--bind", own_source or own, own]
    opts += ["--chdir", cwd]
    return opts


def prepare(argv: Sequence[str], cwd: str | None, env: Mapping[str, str], box: Sandbox,
            scratch_mb: int | None, writable_own: bool = False,
            stdio: tuple[int, int] | None = None, own_source: str | None = None) -> Invocation:
    """Everything needed to start `argv` in a sandbox: `bwrap --args FD -- argv` (the
    options come through a pipe, so that the sandbox's own `/proc/1/cmdline` shows the bot
    its own command only, not the folders it is shown or denied), a minimal passwd and
    group, and the environment
    (`BASE_ENV` plus the bot's own `env`). The command's paths are those the host finds
    (`sandbox_argv`).

    `stdio` (the read end of the bot's stdin pipe, the write end of its stdout pipe): the
    command gets them as its stdin and stdout, and bwrap's own processes do not hold them
    (they close every descriptor above 2), so that a bot that closes its stdout or stdin
    is seen to do so.

    A build when the harness runs as root (`drops_root`) runs as `BUILD_HOST_UID` in
    `build_userns`, its own folder bound writable from `own_source`, a copy that user owns
    (see `run_build`)."""
    drop = drops_root(writable_own)
    userns = build_userns() if drop else None
    opts = bwrap_options(argv, cwd, box, scratch_mb, writable_own, userns=userns, own_source=own_source)
    passwd, group = _minimal_passwd()
    fds = [_data_fd(passwd), _data_fd(group)]
    opts += ["--ro-bind-data", str(fds[0]), "/etc/passwd", "--ro-bind-data", str(fds[1]), "/etc/group"]
    opts += [x for p in covered_proc() for x in ("--ro-bind", "/dev/null", p)]
    # All of /proc read-only: a bot's own entries need no writes, and as root a bot would
    # otherwise own the machine-wide files that check only the file mode.
    opts += ["--remount-ro", "/proc"]
    opts += ["--remount-ro", "/"]  # last: every file on it is made (see `SCRATCH`)
    rules = seccomp_program(build=writable_own)
    if rules is not None:
        fds.append(_data_fd(rules))
        opts += ["--seccomp", str(fds[-1])]
    blob = b"".join(o.encode() + b"\0" for o in opts)
    fds.append(_data_fd(blob))
    command = sandbox_argv(argv, cwd)
    keep: tuple[int, ...] = ()
    # bash, not sh: dash takes only one-digit descriptors in redirections.
    if stdio is not None and BASH is not None:
        r, w = stdio
        command = [BASH, "-c", f'exec 0<&{r} 1>&{w} {r}<&- {w}>&-; exec "$@"', "p10-bot", *command]
        keep = (r, w)
    elif userns is not None:
        if BASH is None:
            raise SandboxError("a build run as root needs bash (/usr/bin/bash or /bin/bash) in the sandbox, to "
                               "close the user namespace's descriptor bubblewrap joins before the build starts")
        # bwrap joins the namespace by this descriptor and leaves it open: closed here, so
        # that the build does not hold it.
        command = [BASH, "-c", f'exec {userns}<&-; exec "$@"', "p10-build", *command]
    full = ["bwrap", "--args", str(fds[-1]), "--", *command]
    run_env = dict(BASE_ENV)
    run_env.update(env)
    shared = (userns,) if userns is not None else ()
    return Invocation(full, run_env, tuple(fds) + keep + shared, fds, [] if drop else None)


def sandbox_exit_code(code: int) -> int:
    """bwrap reports a command killed by signal N as exit code 128 + N: as the negative
    signal number, as for an unsandboxed process."""
    if 128 < code < 128 + 65:
        try:
            signal.Signals(code - 128)
            return -(code - 128)
        except ValueError:
            pass
    return code


# ----- builds -------------------------------------------------------------------------------


BUILD_COPY_MB = 4096
"""What a build's copy may hold, at most (apparent sizes): its folder copied in, or what
it made copied back (see `stage_build`)."""

BUILD_COPY_DEPTH = 128
"""How deep the folders of a build's copy may nest, at most."""

BUILD_MEMORY_MB = 4096
"""Memory of all of a build's processes together (their cgroup's limit); where no cgroup
can be made, of each process (RLIMIT_AS) and of all of them as `_watch_build` sees them."""

BUILD_PROCESSES = 1024
"""Processes and threads of a build (its cgroup's limit); where no cgroup can be made, more
than its user has when it starts (RLIMIT_NPROC), and as `_watch_build` sees them."""

BUILD_DISK_MB = 4096
"""How much the used space of the disks a build can write may grow while it runs."""

BUILD_DISK_FILES = 1_000_000
"""How many files and folders a build may add to those disks while it runs."""

BUILD_OUTPUT_KB = 256
"""How much of a build's output is kept (its end): the rest is read and dropped."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Budget:
    """Entries and bytes a copy has taken, checked against the limits as it goes."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.entries = 0
        self.bytes = 0

    def take(self, entries: int = 0, size: int = 0) -> None:
        self.entries += entries
        self.bytes += size
        if self.entries > SCAN_LIMIT:
            raise BuildError(f"{self.what} holds more than {SCAN_LIMIT:,} files and folders")
        if self.bytes > BUILD_COPY_MB << 20:
            raise BuildError(f"{self.what} holds more than {BUILD_COPY_MB:,} MB")


def _entries(fd: int) -> list[tuple[str, os.stat_result]]:
    return [(n, os.stat(n, dir_fd=fd, follow_symlinks=False)) for n in sorted(os.listdir(fd))]


def _remove_in(parent: int, name: str) -> None:
    """Remove the entry `name` of the folder open as `parent`, a folder with all it holds
    (by descriptors: a link is never followed), at most `BUILD_COPY_DEPTH` deep."""
    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    stack: list[tuple[int, str, int]] = [(parent, name, os.open(name, _DIR, dir_fd=parent))]
    try:
        while stack:
            _up, _name, fd = stack[-1]
            sub = None
            for n, est in _entries(fd):
                if stat.S_ISDIR(est.st_mode):
                    sub = n
                    break
                os.unlink(n, dir_fd=fd)
            if sub is None:
                stack.pop()
                os.close(fd)
                os.rmdir(_name, dir_fd=_up)
                continue
            if len(stack) >= BUILD_COPY_DEPTH:
                raise SandboxError(f"a folder to replace nests more than {BUILD_COPY_DEPTH} deep")
            stack.append((fd, sub, os.open(sub, _DIR, dir_fd=fd)))
    finally:
        for _up, _name, fd in stack:
            os.close(fd)


def _dest_folder(dst: int, name: str, mode: int, owner: tuple[int, int] | None, undo: Undo | None = None,
                 rel: str = "") -> int:
    """The folder `name` (`rel`) in `dst`, made (with `mode`, `owner`) if it is not there or
    is something else (set aside by `undo`, if given); opened."""
    try:
        st: os.stat_result | None = os.stat(name, dir_fd=dst, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        if undo is not None:
            undo.set_aside(dst, name, rel)
        else:
            os.unlink(name, dir_fd=dst)
        st = None
    if st is None:
        os.mkdir(name, 0o700, dir_fd=dst)
        if undo is not None:
            undo.made(rel)
    fd = os.open(name, _DIR, dir_fd=dst)
    if st is None:
        os.fchmod(fd, mode)
        if owner:
            os.fchown(fd, *owner)
    elif undo is not None:
        undo.folder(fd, rel)
    return fd


def _same_link(src: int, dst: int, name: str) -> bool:
    """Whether `name` in `dst` is a link to where `name` in `src` (a link) leads."""
    try:
        old = os.stat(name, dir_fd=dst, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return stat.S_ISLNK(old.st_mode) and os.readlink(name, dir_fd=dst) == os.readlink(name, dir_fd=src)


def _put_link(src: int, name: str, dst: int, owner: tuple[int, int] | None, undo: Undo | None = None,
              rel: str = "") -> None:
    if _same_link(src, dst, name):
        return
    target = os.readlink(name, dir_fd=src)
    try:
        if undo is not None:
            undo.set_aside(dst, name, rel)
        else:
            _remove_in(dst, name)
    except FileNotFoundError:
        pass
    os.symlink(target, name, dir_fd=dst)
    if undo is not None:
        undo.made(rel)
    if owner:
        os.chown(name, *owner, dir_fd=dst, follow_symlinks=False)


def _put_file(src: int, name: str, st: os.stat_result, dst: int, mode: int, owner: tuple[int, int] | None,
              budget: _Budget, keep_same: bool, undo: Undo | None = None, rel: str = "") -> None:
    """Copy the regular file `name` (`rel`) from `src` to `dst` (written beside it, then
    renamed over what was there, which `undo`, if given, sets aside first), with `mode`
    and `owner`, its bytes as they were when it was listed; with `keep_same` a file of the
    same size, time and mode is left as it is."""
    try:
        old: os.stat_result | None = os.stat(name, dir_fd=dst, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if (keep_same and old is not None and stat.S_ISREG(old.st_mode) and old.st_size == st.st_size
            and old.st_mtime_ns == st.st_mtime_ns and stat.S_IMODE(old.st_mode) == mode):
        return
    budget.take(size=st.st_size)
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src)
    tmp = f".p10-build-{uuid.uuid4().hex[:12]}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return  # not what was listed: left out
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dst)
        try:
            left = st.st_size
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                os.write(out, chunk)
                left -= len(chunk)
            os.fchmod(out, mode)
            if owner:
                os.fchown(out, *owner)
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)
        if old is not None and undo is not None:
            try:
                undo.set_aside(dst, name, rel)
            except FileNotFoundError:
                pass
        elif old is not None and stat.S_ISDIR(old.st_mode):
            _remove_in(dst, name)
        os.replace(tmp, name, src_dir_fd=dst, dst_dir_fd=dst)
        tmp = ""
        if undo is not None:
            undo.made(rel)
    finally:
        os.close(fd)
        if tmp:
            try:
                os.unlink(tmp, dir_fd=dst)
            except OSError:
                pass


def _mirror(src: int, dst: int, budget: _Budget, owner: tuple[int, int] | None, back: Undo | None) -> None:
    """Copy what the folder open as `src` holds into the one open as `dst`: files, links
    and folders (no devices, pipes or sockets), by descriptors that never follow a link,
    so that whoever else can write either folder cannot turn the copy elsewhere. Going
    into the stage (`back` None): modes kept but set-user-ID and set-group-ID, `owner`
    set. Coming back (`back`: what it changes in the folder `back.own`, which `dst` is,
    noted as it goes): modes at most 0755 (never writable by others, nothing set-user-ID),
    the harness's user as owner, files that did not change left alone, and a link that
    leads out of the folder (but to a system folder) refused: a later reading of the
    tournament file would take it as the folder's own."""
    stack: list[tuple[int, int, list[tuple[str, os.stat_result]], str]] = []
    if back is not None:
        back.folder(dst, "")

    def enter(s: int, d: int, rel: str) -> None:
        entries = _entries(s)
        budget.take(entries=len(entries))
        folders = []
        for name, st in entries:
            if stat.S_ISDIR(st.st_mode):
                folders.append((name, st))
            elif stat.S_ISLNK(st.st_mode):
                if back is not None and not _same_link(s, d, name):
                    target = os.readlink(name, dir_fd=s)
                    to = os.path.normpath(os.path.join(back.own, rel, target))
                    if not _under(to, back.own) and not any(_under(to, p) for p in SYSTEM_PATHS):
                        raise BuildError(f"the build made a link {os.path.join(rel, name)!r} to {target!r}, "
                                         "out of its folder")
                _put_link(s, name, d, owner, back, os.path.join(rel, name))
            elif stat.S_ISREG(st.st_mode):
                mode = stat.S_IMODE(st.st_mode) & (0o755 if back else ~(stat.S_ISUID | stat.S_ISGID))
                _put_file(s, name, st, d, mode, owner, budget, back is not None, back, os.path.join(rel, name))
        stack.append((s, d, folders, rel))

    try:
        enter(src, dst, "")
        while stack:
            s, d, folders, rel = stack[-1]
            if not folders:
                stack.pop()
                if stack:  # the first two are the caller's
                    os.close(s)
                    os.close(d)
                continue
            name, st = folders.pop()
            if len(stack) >= BUILD_COPY_DEPTH:
                raise BuildError(f"{budget.what} has folders nested more than {BUILD_COPY_DEPTH} deep")
            cs = os.open(name, _DIR, dir_fd=s)
            try:
                mode = (stat.S_IMODE(st.st_mode) & 0o755 | 0o700) if back else (stat.S_IMODE(st.st_mode) | 0o700)
                cd = _dest_folder(d, name, mode, owner, back, os.path.join(rel, name))
            except BaseException:
                os.close(cs)
                raise
            try:
                enter(cs, cd, os.path.join(rel, name))
            except BaseException:
                os.close(cs)
                os.close(cd)
                raise
    finally:
        for s, d, _, _ in stack[1:]:
            os.close(s)
            os.close(d)


def remove_stage(stage: str) -> None:
    """Remove a build's stage however deep its folders nest (`rm -rf` walks by
    descriptors; `shutil.rmtree` recurses, and paths past PATH_MAX fail)."""
    subprocess.run(["rm", "-rf", "--one-file-system", "--", stage], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def stage_build(own: str, uid: int, gid: int) -> str:
    """A copy of the folder `own`, owned by `uid`:`gid` (files, folders and links; not
    devices or pipes; no set-user-ID or set-group-ID bits), in a new private folder: the
    stage a build as that user writes in. Returns the copy's path (its parent is the
    stage). SandboxError past `BUILD_COPY_MB`, `SCAN_LIMIT` entries or
    `BUILD_COPY_DEPTH`."""
    stage = tempfile.mkdtemp(prefix="p10-build-")
    copy = os.path.join(stage, "own")
    src = dst = -1
    try:
        src = os.open(own, _DIR)
        os.mkdir(copy, 0o700)
        dst = os.open(copy, _DIR)
        os.fchmod(dst, stat.S_IMODE(os.fstat(src).st_mode) | 0o700)
        os.fchown(dst, uid, gid)
        _mirror(src, dst, _Budget(f"the bot's folder {own!r}"), (uid, gid), back=None)
    except BaseException:
        remove_stage(stage)
        raise
    finally:
        for fd in (src, dst):
            if fd >= 0:
                os.close(fd)
    return copy


def unstage_build(copy: str, own: str) -> Undo:
    """Bring what a build made or changed in `copy` back into `own` (see `_mirror`): what
    the build removed stays. Returns what it changed, to be kept (`Undo.commit`) or put
    back (`Undo.rollback`). BuildError past the limits of `stage_build` or for a link out
    of `own`, OSError where what it made cannot be written: `own` is put back first."""
    src = os.open(copy, _DIR)
    try:
        dst = os.open(own, _DIR)
        try:
            undo = Undo(own, dst)
            try:
                _mirror(src, dst, _Budget("what the build made"), None, back=undo)
            except BaseException:
                undo.rollback()
                raise
            return undo
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _links(own: str, skip: Sequence[str] = ()) -> dict[str, str]:
    """Every link in the folder `own` but in its entries named in `skip` (folders not
    followed through links): its path relative to `own`, and where it leads, resolved
    through every link on its way. BuildError past `SCAN_LIMIT` folders: none may go
    unlooked at."""
    out: dict[str, str] = {}
    stack, folders = [""], 0
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(own, rel)))
        except OSError:
            continue
        for e in entries:
            r = os.path.join(rel, e.name)
            if r in skip:
                continue
            if e.is_symlink():
                out[r] = os.path.realpath(e.path)
            elif e.is_dir(follow_symlinks=False):
                folders += 1
                if folders > SCAN_LIMIT:
                    raise BuildError(f"{own!r} holds more than {SCAN_LIMIT:,} folders: its links cannot all be "
                                     "checked")
                stack.append(r)
    return out


def links_out(own: str, before: Mapping[str, str], skip: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The links in `own` (but in its entries named in `skip`) that lead, resolved through
    every link on the way, neither into `own` nor into a system folder, and did not lead
    there before (`before`, from `_links` before a build: a link the build made, or one
    whose way it changed by swapping a folder on it for a link): (path relative to `own`,
    where it leads)."""
    home = os.path.realpath(own)
    systems = {os.path.realpath(p) for p in SYSTEM_PATHS if os.path.exists(p)}
    bad = []
    for rel, to in sorted(_links(own, skip).items()):
        if before.get(rel) == to:
            continue  # the author's, leading where it did
        if not _under(to, home) and not any(_under(to, p) for p in systems):
            bad.append((rel, to))
    return bad


def _reason(e: BaseException) -> str:
    return (e.strerror or str(e)) if isinstance(e, OSError) else str(e)


def closed_to_build(cwd: str, own: str) -> str | None:
    """A folder that a build run as `BUILD_HOST_UID` must enter but may not (no execute
    bit for others), or None: its working folder, and the folders from there down to its
    own folder (whose copy it owns) when that lies inside."""
    cwd, own = os.path.realpath(cwd), os.path.realpath(own)
    if _under(cwd, own):
        return None
    path = [cwd]
    up = os.path.dirname(own)
    while up != cwd and _under(up, cwd):
        path.insert(1, up)
        up = os.path.dirname(up)
    for p in path:
        try:
            if not os.stat(p).st_mode & stat.S_IXOTH:
                return p
        except OSError:
            return p
    return None


def run_build(name: str, build: Sequence[str], cwd: str | None, env: Mapping[str, str], box: Sandbox,
              mode: str, scratch_mb: int | None = None, timeout_s: int | None = None) -> str:
    """Run a bot's `build` command once, in its sandbox with its own folder writable and no
    network (`mode` "bwrap"), or plainly ("none"). Returns its output. Raises `BuildError`
    when the build fails through what the bot is or does (its message ends with the last
    lines of the output), `SandboxError` when it cannot be run here.

    A sandboxed build works on a copy of its own folder (`stage_build`), as `BUILD_HOST_UID`
    when the harness runs as root (where that user may not enter its working folder, it
    works in its own folder when that lies elsewhere (the output says so), and is refused
    otherwise). What it made comes back only when it succeeds, all of it or nothing
    (`_bring_back`): a failed build leaves its folder as it was."""
    timeout_s = timeout_s or box.build_timeout_s
    argv = harness_python(build)
    inv: Invocation | None = None
    info_r: int | None = None
    info_w: int | None = None
    copy = None
    own = os.path.realpath(box.own) if box.own else None
    groups = None
    build_cwd = cwd
    note = ""
    try:  # where its links lead before it runs (see `links_out`)
        links_before = _links(own) if own and mode == "bwrap" else {}
    except BuildError as e:
        raise BuildError(f"bot {name!r}: {e}") from None
    if mode == "bwrap":
        if own:
            copy, build_cwd, note = _stage(name, box.own or own, own, cwd)
        try:
            inv = prepare(argv, build_cwd, env, box, scratch_mb or 1024, writable_own=True, own_source=copy)
        except BaseException:
            if copy is not None:
                remove_stage(os.path.dirname(copy))
            raise
        cmd, run_env, fds, groups = inv.argv, inv.env, inv.pass_fds, inv.extra_groups
        # bwrap writes the host pid of the sandbox's init here: when the build's command
        # ends, the init may live on with what the build left running (ended with it).
        info_r, info_w = os.pipe()
        cmd = [cmd[0], "--info-fd", str(info_w), *cmd[1:]]
        fds = (*fds, info_w)
    else:
        cmd, run_env, fds = argv, {**os.environ, **env}, ()
    cgroup = None
    backend, _ = cgroups()
    if backend is not None:
        try:
            cgroup = backend.create(f"build-{name}", BUILD_MEMORY_MB, BUILD_PROCESSES)
        except OSError:
            cgroup = None  # bounded per process and watched instead (below)
    try:
        try:
            p = subprocess.Popen(cmd, cwd=cwd, env=run_env, pass_fds=fds, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                 extra_groups=groups, preexec_fn=_build_setup(mode, cgroup))
        except (OSError, subprocess.SubprocessError) as e:  # (bwrap itself, when sandboxed)
            raise (SandboxError if mode == "bwrap" else BuildError)(
                f"bot {name!r}: build command {argv[0]!r} could not start: "
                f"{getattr(e, 'strerror', None) or e}") from None
        finally:
            if inv is not None:
                inv.close()
            if info_w is not None:
                os.close(info_w)
        out, why = _watch_build(p, timeout_s, [d for d in (copy, own, cwd) if d], cgroup, info_r)
        if why is None and p.returncode != 0:
            why = f"exit code {sandbox_exit_code(p.returncode) if mode == 'bwrap' else p.returncode}"
        text = note + out.decode("utf-8", "replace")
        if why is not None:
            last = " | ".join(printable(t.strip()) for t in text.strip().splitlines()[-5:] if t.strip()) or "no output"
            raise BuildError(f"bot {name!r}: build {' '.join(build)!r} failed ({why}); its output ends: {last}")
        if copy is not None and own is not None:
            _bring_back(name, copy, own, links_before)
        return text
    finally:
        if info_r is not None:
            os.close(info_r)
        if cgroup is not None:
            cgroup.remove()  # and whatever the build left running
        if copy is not None:
            remove_stage(os.path.dirname(copy))


def _stage(name: str, named: str, own: str, cwd: str | None) -> tuple[str, str | None, str]:
    """For a sandboxed build: a copy of the bot's folder `own` (as `named` in its entry) to
    build in, owned by the user the build runs as (`BUILD_HOST_UID` when the harness runs
    as root), the folder the build works in, and a note for its output when that is not
    `cwd`. BuildError when the folder holds more than may be copied; SandboxError when
    that user may not enter the working folder and it is not outside `own`."""
    build_cwd = cwd
    note = ""
    uid, gid = os.getuid(), os.getgid()
    if drops_root(True):
        uid, gid = BUILD_HOST_UID, BUILD_HOST_GID
        if own != os.path.abspath(named):
            raise SandboxError(f"bot {name!r}: its folder {named!r} is reached through a symlink (it is "
                               f"{own!r}); as p10-tourney runs as root, name the folder itself")
        closed = closed_to_build(cwd or os.getcwd(), own)
        if closed is not None and not _under(own, os.path.realpath(cwd or os.getcwd())):
            # A working folder it may not enter, outside its own (`check-bot --build` run from
            # a private folder): the build works in its own folder instead.
            note = (f"[p10-tourney] the build runs in its own folder {own}: its working folder "
                    f"{closed} is closed to uid {BUILD_HOST_UID}\n")
            build_cwd = own
        elif closed is not None:
            raise SandboxError(f"bot {name!r}: as p10-tourney runs as root, its build runs as the unprivileged "
                               f"uid {BUILD_HOST_UID}, which may not enter {closed!r} (no execute permission "
                               "for other users): allow it (chmod o+rx), or run p10-tourney as an ordinary user")
    try:
        copy = stage_build(own, uid, gid)
    except BuildError as e:
        raise BuildError(f"bot {name!r}: its folder could not be copied for its build: {e}") from None
    except (OSError, SandboxError) as e:
        raise SandboxError(f"bot {name!r}: its folder {own!r} could not be copied for its build: "
                           f"{_reason(e)}") from None
    return copy, build_cwd, note


def _bring_back(name: str, copy: str, own: str, before: Mapping[str, str]) -> None:
    """Bring what a successful build made in `copy` back into `own`, all of it or nothing:
    BuildError, with `own` put back as it was, when it cannot all come back
    (`unstage_build`) or leaves a link out of `own` (`links_out`, against where the links
    led `before` the build: a later reading of the tournament file would take it as the
    folder's own); SandboxError when `own` cannot be put back."""
    try:
        undo = unstage_build(copy, own)
    except UndoError as e:
        raise SandboxError(f"bot {name!r}: its folder {own!r} could not be put back as it was before its "
                           f"build: {_reason(e)}") from None
    except (OSError, BuildError) as e:
        raise BuildError(f"bot {name!r}: what its build made could not all be copied into its folder "
                         f"({_reason(e)}); nothing of it was kept") from None
    try:
        try:
            out = links_out(own, before, skip=(undo.name,))
        except BuildError as e:
            raise BuildError(f"bot {name!r}: after its build, {e}; nothing it made was kept") from None
        if out:
            rel, to = out[0]
            raise BuildError(f"bot {name!r}: its build made a link {rel!r} that leads to {to!r}, out of its folder "
                             f"(links out of it may lead only into {', '.join(SYSTEM_PATHS)})"
                             + (f", with {len(out) - 1} more" if len(out) > 1 else "") + "; nothing it made was kept")
    except BuildError:
        try:
            undo.rollback()
        except OSError as e:
            raise SandboxError(f"bot {name!r}: its folder {own!r} could not be put back as it was before its "
                               f"build: {_reason(e)}") from None
        raise
    undo.commit()


def _build_setup(mode: str, cgroup: "BotCgroup | None") -> Callable[[], None]:
    """What a build's first process does before its command (`preexec_fn`): it joins its
    cgroup and takes its resource limits, every hard limit lowered to its soft limit."""
    procs_files = cgroup.procs_files if cgroup is not None else []
    limits = [("FSIZE", BUILD_DISK_MB << 20)]  # no one file past what the disks may grow by in all
    if cgroup is None:
        # Without a cgroup: no process past the build's memory, and no more processes
        # and threads of the user the build runs as than it has now and the build's
        # allowance (the kernel does not hold root to that: a build run unsandboxed as
        # root is bounded only by `_watch_build`, which looks 5 times a second).
        uid = BUILD_HOST_UID if mode == "bwrap" and drops_root(True) else os.getuid()
        limits += [("AS", BUILD_MEMORY_MB << 20), ("NPROC", tasks_of(uid) + BUILD_PROCESSES)]

    def join() -> None:  # pragma: no cover - runs in the child
        import resource

        for f in procs_files:
            with open(f, "w") as fh:
                fh.write(str(os.getpid()))
        for which, value in limits:
            try:
                resource.setrlimit(getattr(resource, f"RLIMIT_{which}"), (value, value))
            except (OSError, ValueError):
                pass
        pin_rlimits()

    return join


class _SandboxInit:
    """The init of a build's sandbox (bwrap's child, pid 1 of its PID namespace), from the
    JSON bwrap writes to its `--info-fd`: held as a pidfd from the first moment it is
    known, so that `end` kills that very process, whatever its pid or name have become
    since (no pid reused by another process, and no name a bot could change)."""

    def __init__(self, info_fd: int) -> None:
        self.info_fd = info_fd
        self.pidfd: int | None = None
        self.pid = 0
        self.data = b""
        self.done = False
        os.set_blocking(info_fd, False)

    def look(self) -> None:
        """Take the init's pid (and a pidfd of it) once bwrap has written it all (bwrap
        writes its JSON in several pieces)."""
        if self.done:
            return
        import json

        ended = False
        try:
            while True:
                chunk = os.read(self.info_fd, 4096)
                if not chunk:
                    ended = True  # bwrap closed it: nothing more will come
                    break
                self.data += chunk
        except OSError:
            pass  # nothing more yet
        try:
            info = json.loads(self.data)
            pid = int(info.get("child-pid", 0))
        except (ValueError, AttributeError, TypeError):
            self.done = ended  # not all written yet (or never: bwrap failed)
            return
        self.done = True
        try:  # that very init: bwrap's program, in the PID namespace bwrap named
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if pid <= 1 or os.path.basename(fh.read().split(b"\0")[0]) != b"bwrap":
                    return
            if "pid-namespace" in info and os.stat(f"/proc/{pid}/ns/pid").st_ino != info["pid-namespace"]:
                return
        except OSError:
            return
        self.pid = pid
        try:  # (Linux 5.3 and later; before, its pid, just checked, stands for it)
            self.pidfd = os.pidfd_open(pid)
        except (OSError, AttributeError):
            self.pidfd = None

    def end(self) -> None:
        """Kill the init, and with it every process of its PID namespace, where it outlived
        the build's command: without a cgroup, nothing else would end what a build left
        running."""
        self.look()
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            elif self.pid:
                os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        finally:
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None


def _disk_use(paths: Iterable[str]) -> dict[int, tuple[int, int]]:
    """Used bytes and used inodes of each file system holding one of `paths`."""
    out: dict[int, tuple[int, int]] = {}
    for path in paths:
        try:
            dev = os.stat(path).st_dev
            if dev not in out:
                v = os.statvfs(path)
                out[dev] = ((v.f_blocks - v.f_bfree) * v.f_frsize, v.f_files - v.f_ffree)
        except OSError:
            pass
    return out


def _watch_build(p: subprocess.Popen, timeout_s: int, paths: Sequence[str],
                 cgroup: "BotCgroup | None", info_fd: int | None = None) -> tuple[bytes, str | None]:
    """Wait for a build, keeping the last `BUILD_OUTPUT_KB` of its output; end it (its
    process group and cgroup) when it runs past `timeout_s`, or when the disks it can write
    grow by more than `BUILD_DISK_MB` or `BUILD_DISK_FILES` (looked at 5 times a second and
    once at its end), or, without a cgroup, when its processes hold more than
    `BUILD_MEMORY_MB` of memory or number more than `BUILD_PROCESSES`. Once it ends, what
    it left running is ended: its cgroup, and the sandbox whose bwrap wrote `info_fd`. Returns the output's end and why it was ended
    (None: it ended by itself)."""
    import threading

    keep = BUILD_OUTPUT_KB << 10
    tail = bytearray()
    dropped = [0]

    def pump() -> None:
        assert p.stdout is not None
        while True:
            chunk = p.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            tail.extend(chunk)
            if len(tail) > 2 * keep:
                dropped[0] += len(tail) - keep
                del tail[:len(tail) - keep]

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    base = _disk_use(paths)
    deadline = time.monotonic() + timeout_s
    init = _SandboxInit(info_fd) if info_fd is not None else None
    why = None
    while why is None:
        if init is not None:
            init.look()
        try:
            p.wait(timeout=0.2)
            ended = True
        except subprocess.TimeoutExpired:
            ended = False
        for dev, (used, files) in _disk_use(paths).items():  # once more after its end
            b_used, b_files = base.get(dev, (used, files))
            if used - b_used > BUILD_DISK_MB << 20:
                why = f"it wrote more than {BUILD_DISK_MB:,} MB to disk"
            elif files - b_files > BUILD_DISK_FILES:
                why = f"it made more than {BUILD_DISK_FILES:,} files and folders"
        if cgroup is None and not ended and why is None:  # what a cgroup would bound
            rss, tasks = tree_load(p.pid)
            if rss > BUILD_MEMORY_MB:
                why = f"its processes held more than {BUILD_MEMORY_MB:,} MB of memory"
            elif tasks > BUILD_PROCESSES:
                why = f"it ran more than {BUILD_PROCESSES:,} processes and threads"
        if ended:
            break
        if why is None and time.monotonic() > deadline:
            why = f"still running after its time limit of {timeout_s} s"
    if why is not None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    p.wait()
    if init is not None:
        init.end()  # the sandbox's init outlives the build's command
    if cgroup is not None:
        cgroup.kill()  # what it left running too
    reader.join(5)  # a process left running (no cgroup) may hold its output open: not waited for
    if p.stdout is not None and not reader.is_alive():
        p.stdout.close()
    head = f"[... {dropped[0]:,} bytes of output left out ...]\n".encode() if dropped[0] else b""
    return head + bytes(tail[-keep:]), why


# ----- cgroups ------------------------------------------------------------------------------


class BotCgroup:
    """One bot's cgroup (v2: one directory; v1: one in the memory and one in the pids
    hierarchy). The bot's first process joins it before it runs anything."""

    def __init__(self, kind: str, dirs: Mapping[str, str], cpus: int | None = None) -> None:
        self.kind = kind
        self.dirs = dict(dirs)  # controller ("memory", "pids", "cpu", "cpuacct", or "" for v2) -> directory
        self.cpus = cpus  # the CPU quota it holds (CPUs at once), None if none

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join."""
        return [os.path.join(d, "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]

    def join(self, pid: int = 0) -> None:
        """Move `pid` (0: the calling process) into the cgroup."""
        for f in self.procs_files:
            with open(f, "w") as fh:
                fh.write(str(pid or os.getpid()))

    def members(self) -> list[int]:
        """The processes in the cgroup, from one hierarchy's list (cheaper than `pids`)."""
        f = self.procs_files[0]
        try:
            with open(f) as fh:
                return [int(x) for x in fh.read().split()]
        except OSError:
            return []

    def pids(self) -> list[int]:
        """The processes in the cgroup (host pids)."""
        seen: dict[int, None] = {}
        for f in self.procs_files:
            try:
                with open(f) as fh:
                    for line in fh:
                        if line.strip():
                            seen[int(line)] = None
            except OSError:
                pass
        return list(seen)

    def _read(self, ctl: str, name: str) -> str:
        try:
            with open(os.path.join(self.dirs[ctl], name)) as fh:
                return fh.read()
        except (OSError, KeyError):
            return ""

    def _events(self, ctl: str, name: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for line in self._read(ctl, name).splitlines():
            k, _, v = line.partition(" ")
            if v.strip().lstrip("-").isdigit():
                out[k] = int(v)
        return out

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process that ever ran in the cgroup (threads, children
        never waited for and processes gone included), or None where it is not counted
        (v1 without a cpuacct hierarchy)."""
        if self.kind == "v2":
            usec = self._events("", "cpu.stat").get("usage_usec")
            return None if usec is None else usec / 1e6
        text = self._read("cpuacct", "cpuacct.usage").strip()
        return int(text) / 1e9 if text.isdigit() else None

    def memory_mb(self) -> float:
        """Memory charged to the cgroup now, in MiB."""
        text = self._read(*(("", "memory.current") if self.kind == "v2" else ("memory", "memory.usage_in_bytes")))
        return int(text) / (1 << 20) if text.strip().isdigit() else 0.0

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed at the memory limit."""
        if self.kind == "v2":
            return self._events("", "memory.events").get("oom_kill", 0)
        ev = self._events("memory", "memory.oom_control")
        if "oom_kill" in ev:
            return ev["oom_kill"]
        fail = self._read("memory", "memory.failcnt").strip()
        return 1 if fail.isdigit() and int(fail) > 0 else 0

    def pids_refused(self) -> int:
        """How many times a fork was refused at the process limit."""
        return self._events("" if self.kind == "v2" else "pids", "pids.events").get("max", 0)

    def kill(self, wait_s: float = 2.0) -> None:
        """SIGKILL every process in the cgroup until it is empty (or `wait_s` passed)."""
        kill_file = os.path.join(self.dirs.get("", ""), "cgroup.kill") if self.kind == "v2" else ""
        deadline = time.monotonic() + wait_s
        while True:
            pids = self.pids()
            if not pids:
                return
            if kill_file and os.path.exists(kill_file):
                try:
                    with open(kill_file, "w") as fh:
                        fh.write("1")
                except OSError:
                    kill_file = ""
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup's directories."""
        self.kill()
        for d in dict.fromkeys(self.dirs.values()):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # the last processes are still being torn down


@dataclass
class CgroupBackend:
    """Where per-bot cgroups are made: `kind` "v2" (one parent directory) or "v1" (a parent
    in the memory and in the pids hierarchy)."""

    kind: str
    parents: dict[str, str]
    v2_controllers: tuple[str, ...] = ()  # v2: the controllers on in the parent's subtree

    def create(self, label: str, memory_mb: int | None, processes: int | None, cpus: int | None = None) -> BotCgroup:
        """A new cgroup for one bot with its limits set (OSError if it cannot be made).
        `processes` counts the bot's processes and threads; `cpus` caps the CPU time of all
        of them together at that many CPUs (a CFS quota), where the CPU controller can be
        had (`cpu_quota`); the cgroup's `cpus` says whether it was set."""
        name = f"p10-{label}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        dirs = {ctl: os.path.join(parent, name) for ctl, parent in self.parents.items()}
        made: list[str] = []
        try:
            for d in dict.fromkeys(dirs.values()):
                os.mkdir(d)
                made.append(d)
            mem = dirs["" if self.kind == "v2" else "memory"]
            pids = dirs["" if self.kind == "v2" else "pids"]
            if memory_mb:
                limit = str(memory_mb << 20)
                if self.kind == "v2":
                    _write(os.path.join(mem, "memory.max"), limit)
                    _write(os.path.join(mem, "memory.swap.max"), "0", missing_ok=True)
                else:
                    _write(os.path.join(mem, "memory.limit_in_bytes"), limit)
                    _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), limit, missing_ok=True)
            if processes:
                _write(os.path.join(pids, "pids.max"), str(processes))
            held = None
            if cpus and self.cpu_quota:
                period = 100_000  # µs
                if self.kind == "v2":
                    _write(os.path.join(dirs[""], "cpu.max"), f"{cpus * period} {period}")
                else:
                    _write(os.path.join(dirs["cpu"], "cpu.cfs_period_us"), str(period))
                    _write(os.path.join(dirs["cpu"], "cpu.cfs_quota_us"), str(cpus * period))
                held = cpus
        except OSError:
            for d in reversed(made):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            raise
        return BotCgroup(self.kind, dirs, held)

    @property
    def cpu_quota(self) -> bool:
        """Whether a bot's cgroup can hold a CPU quota (v1: a writable cpu hierarchy; v2: the
        cpu controller on in the subtree)."""
        if self.kind == "v2":
            return "cpu" in self.v2_controllers
        return "cpu" in self.parents


def _write(path: str, value: str, missing_ok: bool = False) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(value)
    except FileNotFoundError:
        if not missing_ok:
            raise


def _own_cgroups(proc_root: str) -> dict[str, str]:
    """This process's cgroup paths by controller ("" for the v2 unified hierarchy)."""
    out: dict[str, str] = {}
    try:
        with open(os.path.join(proc_root, "self", "cgroup")) as fh:
            for line in fh:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for ctl in parts[1].split(",") if parts[1] else [""]:
                        out[ctl] = parts[2]
    except OSError:
        pass
    return out


def _v2_root(fs_root: str) -> str | None:
    for cand in (fs_root, os.path.join(fs_root, "unified")):
        if os.path.exists(os.path.join(cand, "cgroup.controllers")):
            return cand
    return None


def _v2_parent(root: str, own: str) -> tuple[str | None, str]:
    """A cgroup v2 directory under which per-bot cgroups with memory and pids can be made:
    this process's cgroup, once the controllers are on in its subtree. A cgroup that holds
    processes cannot hand controllers down ("no internal processes"), so when this process
    is alone in its cgroup it moves into a leaf `p10-harness` below it first. Returns the
    directory or None with the reason."""
    here = os.path.join(root, own.lstrip("/"))
    try:
        with open(os.path.join(here, "cgroup.controllers")) as fh:
            available = fh.read().split()
    except OSError as e:
        return None, f"cgroup v2: {here} cannot be read ({e.strerror or e})"
    missing = [c for c in ("memory", "pids") if c not in available]
    if missing:
        return None, f"cgroup v2: the {' and '.join(missing)} controller{'s are' if len(missing) > 1 else ' is'} not delegated to {here}"
    sub = os.path.join(here, "cgroup.subtree_control")
    try:
        with open(sub) as fh:
            enabled = fh.read().split()
    except OSError as e:
        return None, f"cgroup v2: {sub} cannot be read ({e.strerror or e})"
    if all(c in enabled for c in ("memory", "pids")):
        if "cpu" in available and "cpu" not in enabled:
            try:
                _write(sub, "+cpu")  # the CPU quota per bot, where it can be had
            except OSError:
                pass
        return here, ""
    if not os.access(sub, os.W_OK):
        return None, f"cgroup v2: {here} is not writable by this user (no delegated subtree)"
    try:
        with open(os.path.join(here, "cgroup.procs")) as fh:
            members = [int(x) for x in fh.read().split()]
    except OSError as e:
        return None, f"cgroup v2: {here}/cgroup.procs cannot be read ({e.strerror or e})"
    others = [p for p in members if p != os.getpid()]
    if others:
        return None, (f"cgroup v2: {here} holds other processes ({len(others)}), so it cannot hand the memory "
                      "and pids controllers down")
    try:
        leaf = os.path.join(here, "p10-harness")
        os.makedirs(leaf, exist_ok=True)
        if members:
            _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
        try:
            _write(sub, "+memory +pids" + " +cpu" * ("cpu" in available))  # cpu: the quota, where it can be had
        except OSError:
            if "cpu" not in available:
                raise
            _write(sub, "+memory +pids")
    except OSError as e:
        return None, f"cgroup v2: cannot enable memory and pids under {here} ({e.strerror or e})"
    return here, ""


def detect_cgroups(proc_root: str = "/proc", fs_root: str = "/sys/fs/cgroup") -> tuple[CgroupBackend | None, str]:
    """Where per-bot cgroups can be made: cgroup v2 where a subtree with the memory and
    pids controllers is writable, else the cgroup v1 memory and pids hierarchies where
    they are writable; else None and the reason (limits then hold per process only)."""
    own = _own_cgroups(proc_root)
    reasons: list[str] = []
    root = _v2_root(fs_root)
    if root is not None and "" in own:
        parent, why = _v2_parent(root, own[""])
        if parent is not None:
            try:
                with open(os.path.join(parent, "cgroup.subtree_control")) as fh:
                    on = tuple(c.lstrip("+") for c in fh.read().split())
            except OSError:
                on = ("memory", "pids")
            return CgroupBackend("v2", {"": parent}, on), ""
        reasons.append(why)
    parents: dict[str, str] = {}
    for ctl in ("memory", "pids"):
        mount = os.path.join(fs_root, ctl)
        if not os.path.exists(os.path.join(mount, "cgroup.procs")):
            reasons.append(f"cgroup v1: no {ctl} hierarchy at {mount}")
            break
        d = os.path.normpath(os.path.join(mount, own.get(ctl, "/").lstrip("/")))
        if not os.access(d, os.W_OK):
            reasons.append(f"cgroup v1: {d} is not writable")
            break
        parents[ctl] = d
    else:
        # The CPU quota needs the cpu hierarchy; without it the other limits still hold.
        mount = os.path.join(fs_root, "cpu")
        d = os.path.normpath(os.path.join(mount, own.get("cpu", "/").lstrip("/")))
        if os.path.exists(os.path.join(d, "cpu.cfs_quota_us")) and os.access(d, os.W_OK):
            parents["cpu"] = d
        # The CPU time of all its processes, those that ended unwaited-for too: cpuacct.
        mount = os.path.join(fs_root, "cpuacct")
        d = os.path.normpath(os.path.join(mount, own.get("cpuacct", "/").lstrip("/")))
        if os.path.exists(os.path.join(d, "cpuacct.usage")) and os.access(d, os.W_OK):
            parents["cpuacct"] = d
        return CgroupBackend("v1", parents), ""
    return None, "; ".join(reasons) or "no cgroup file system"


_BACKEND: dict[str, tuple[CgroupBackend | None, str]] = {}


def sweep(backend: CgroupBackend) -> int:
    """End what is left in the bot cgroups of harness processes that are gone (killed
    before they could end their bots: the cgroups' names carry their pid), then remove
    those cgroups. A bot that outlived its harness (it cleared its parent-death signal,
    in a process of its own or its sandbox's init) is ended here, at the next start of
    the harness. Returns how many cgroups were removed."""
    gone = 0
    for parent in dict.fromkeys(backend.parents.values()):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if not name.startswith("p10-") or len(parts) < 4 or not parts[-2].isdigit():
                continue
            if os.path.exists(f"/proc/{parts[-2]}"):
                continue  # its harness process still runs
            path = os.path.join(parent, name)
            BotCgroup(backend.kind, {"": path}).kill(wait_s=1.0)  # SIGKILL ends stopped processes too
            try:
                os.rmdir(path)
                gone += 1
            except OSError:
                pass  # not empty yet, or not ours to remove
    return gone


def cgroups() -> tuple[CgroupBackend | None, str]:
    """`detect_cgroups` for this process (cached; a forked worker inherits the answer);
    the first call also sweeps away bot cgroups left by harness processes that died."""
    if "x" not in _BACKEND:
        _BACKEND["x"] = detect_cgroups()
        if _BACKEND["x"][0] is not None:
            sweep(_BACKEND["x"][0])
    return _BACKEND["x"]


# ----- what a run had -------------------------------------------------------------------------

PER_PROCESS_ONLY = ("memory_mb", "processes")


def describe(modes: Iterable[str], cgroup_kind: str | None, cgroup_why: str = "") -> dict[str, object]:
    """What the results record about containment: {"mode": "bwrap"|"none"|"mixed",
    "cgroups": "v2"|"v1"|None, "per_process_only": [limits], "note": text}."""
    modes = sorted(set(modes)) or ["none"]
    mode = modes[0] if len(modes) == 1 else "mixed"
    per_process = [] if cgroup_kind else list(PER_PROCESS_ONLY)
    notes: list[str] = []
    if mode != "bwrap":
        notes.append("bots ran without a sandbox" if mode == "none" else "some bots ran without a sandbox")
    if per_process:
        notes.append("limits held per process only: " + ", ".join(per_process)
                     + (f" ({cgroup_why})" if cgroup_why else ""))
    return {"mode": mode, "cgroups": cgroup_kind, "per_process_only": per_process, "note": "; ".join(notes)}
