"""The bwrap command line of a sandboxed start: its options (namespaces, binds, masks),
the files it reads them from, and the user namespace of a build run as root."""

from __future__ import annotations

import os
import shutil
import signal
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .box import (BASE_ENV, BASH, BUILD_HOST_GID, BUILD_HOST_UID, DEVICES, ETC_PATHS, READ_ONLY_PROC, SANDBOX_GID,
                  SANDBOX_OWN, SANDBOX_PATH, SANDBOX_UID, SCRATCH, SHM, SYSTEM_PATHS, Sandbox, SandboxError, covered_proc)
from .marks import marked_at_start
from .modes import system_binds
from .paths import command_links, command_paths, harness_package, python_paths, sandbox_argv, under, uses_harness_python
from .private import PrivateFolder
from .seccomp import program as seccomp_program
from .toolchains import host_toolchains, toolchain_env

_Mine = tuple[str, str, tuple[str, ...]]  # the bot's own folder, its private copy, what the copy leaves out


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
    private: PrivateFolder | None = None
    """The private copy of the bot's own folder it is shown (see `private`), which the
    starter removes once the process has ended."""

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
    keep = list(SYSTEM_PATHS) + python_paths() + [harness_package()]
    for k in keep:
        if under(own, k) or under(k, own):
            raise SandboxError(f"the bot's own folder {own!r} would be writable during its build, "
                               f"and it holds or lies in {k!r}; give the bot a folder of its own (cwd:)")
    for h in hidden:
        h = os.path.realpath(h)
        if under(h, own):
            raise SandboxError(f"the bot's own folder {own!r} would be writable during its build, "
                               f"and it holds {h!r}; give the bot a folder of its own (cwd:)")


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
    private: PrivateFolder | None = None,
) -> list[str]:
    """The bwrap options (not the command) for a bot with resolved command `argv`.

    `writable_own` (builds): the bot's own folder is bound writable, from `own_source`
    (a copy of it) when that is given. `userns`: a user namespace to join
    (`build_userns`) instead of making one. `private` (games): the bot's own folder is
    shown from a copy it makes, which no other process shares (`private.PrivateFolder`).

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
    opts = _base_options(userns, scratch_mb)
    harness_py = uses_harness_python(argv)
    needed = _needed(argv, cwd, box, harness_py)
    # Bind the outermost of the needed paths (a folder inside another comes with it).
    bound: list[str] = []
    for p in sorted(set(needed), key=len):
        if not any(under(p, b) for b in bound) and not any(under(p, s) for s in SYSTEM_PATHS):
            bound.append(p)
    secret = _secret(argv, cwd, box, needed, bound)
    own = os.path.realpath(box.own) if box.own else None
    if writable_own and own:
        _check_writable(own, [h for h in box.hide] + secret)
    hide = _hidden(box, needed, bound, secret, harness_py)
    copy = private.copy(own, hide) if private is not None and own and not writable_own else None
    mine = (own, copy, tuple(h for h in hide if own and under(h, own))) if own and copy else None
    for p in bound:
        opts += _bind(p, mine)
    opts += _masks(hide, needed, bound, secret, mine)
    if writable_own and own:
        opts += ["--bind", own_source or own, own]
    opts += ["--chdir", cwd]
    return opts


def _base_options(userns: int | None, scratch_mb: int | None) -> list[str]:
    """What every sandbox has: its namespaces and user, the system's folders, a few files of
    `/etc`, a fresh `/proc`, a read-only `/dev` of `DEVICES` and the scratch."""
    if userns is None:
        opts = ["--unshare-all", "--unshare-user", "--disable-userns"]
    else:
        opts = ["--userns", str(userns), "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try"]
    opts += ["--die-with-parent", "--new-session", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID),
             "--hostname", "bot"]
    opts += system_binds()
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
    return opts


def _needed(argv: Sequence[str], cwd: str, box: Sandbox, harness_py: bool) -> list[str]:
    """The host paths a bot must be shown: its working folder, the harness's Python where it
    runs that, its program when that lies outside the system's folders, what its command
    names, its own folder, its mounts and the toolchains of the usual installers
    (`toolchains`; not one that would show a folder it may not see). SandboxError for one
    inside `SANDBOX_OWN`."""
    needed: list[str] = [cwd]
    if harness_py:
        needed += python_paths() + [harness_package()]
    prog = argv[0] if argv else ""
    found = shutil.which(prog, path=SANDBOX_PATH + os.pathsep + os.environ.get("PATH", "")) if prog else None
    if found and not any(under(os.path.realpath(found), s) for s in SYSTEM_PATHS):
        needed.append(os.path.realpath(found))  # a program outside /usr: the file itself
    needed += command_paths(argv, cwd)
    if box.own:
        needed.append(os.path.realpath(box.own))
    needed += [os.path.realpath(m) for m in box.mounts]
    closed = (*box.secret, *box.hide)
    needed += [p for t in host_toolchains() for p in t.shown if not any(under(p, c) or under(c, p) for c in closed)]
    for p in needed:
        made = next((k for k in SANDBOX_OWN if under(p, k) and not under(p, "/dev/shm")), None)
        if made is not None:
            raise SandboxError(f"{p!r} (the bot's command, cwd, own folder or mounts) cannot be shown in the sandbox: "
                               f"it lies in {made}, which the sandbox makes its own")
    return needed


def _secret(argv: Sequence[str], cwd: str, box: Sandbox, needed: Sequence[str], bound: Sequence[str]) -> list[str]:
    """What no bot may see: `box.secret`, and the folders `box.conceal` marks in the bound
    folders now (not when the tournament was read). SandboxError where a path the bot needs
    or its command names lies inside one."""
    secret = [os.path.realpath(x) for x in box.secret]
    if box.conceal:
        # Installed software is not searched (as the system's folders are not): Python's,
        # the harness, and the toolchains every sandbox is shown (a rustup home alone holds
        # some 30,000 folders: a third of a second at every reading of the tournament file).
        installed = python_paths() + [harness_package()] + [p for t in host_toolchains() for p in t.shown]
        masked_whole = [h for h in (os.path.realpath(x) for x in box.hide) if not any(under(n, h) for n in needed)]
        for b in bound:
            if os.path.isdir(b) and not any(under(b, k) for k in installed):
                secret += [f for f in marked_at_start(b, box.conceal, masked_whole) if f not in secret]
    named = [os.path.realpath(os.path.join(cwd, w)) for w in argv[1:] if w and not w.startswith("-")]
    for p in [*needed, *named]:
        for x in secret:
            if under(p, x):
                raise SandboxError(f"{p!r} (the bot's command, cwd, own folder or mounts) lies inside {x!r}, "
                                   "which no bot may see")
    return secret


def _hidden(box: Sandbox, needed: Sequence[str], bound: Sequence[str], secret: Sequence[str],
            harness_py: bool) -> list[str]:
    """What lies inside a bound folder but is not the bot's: `box.hide`, the secret paths,
    a bound folder's `.git`, the folder holding a results folder, and the harness."""
    hide = [os.path.realpath(h) for h in box.hide] + list(secret)
    # A repository's history holds every committed file, the masked ones too (other bots'
    # folders, tournament files): a bound folder's .git is covered unless the bot names it.
    for b in bound:
        git = os.path.join(b, ".git")
        if os.path.lexists(git) and not any(under(n, git) for n in needed):
            hide.append(git)
    # The folder that holds a results folder (results/) is masked whole where the bot needs
    # nothing inside it: a mask is made once, at the start, and so also covers the results
    # of runs begun while this process lives.
    for x in secret:
        parent = os.path.dirname(x)
        if parent != x and not any(under(n, parent) for n in needed) and not any(under(parent, s) for s in SYSTEM_PATHS):
            hide.append(parent)
    if not harness_py:
        hide.append(harness_package())
    return hide


def _bind(p: str, mine: _Mine | None) -> list[str]:
    """The options that show the host path `p` read-only: from the private copy of the
    bot's own folder where `p` is in it (but in what the copy leaves out), and with the
    copy bound on top where `p` holds it."""
    if mine is None:
        return ["--ro-bind", p, p]
    own, copy, left_out = mine
    if under(p, own) and not any(under(p, h) for h in left_out):
        return ["--ro-bind", os.path.join(copy, os.path.relpath(p, own)) if p != own else copy, p]
    if under(own, p):
        return ["--ro-bind", p, p, "--ro-bind", copy, own]
    return ["--ro-bind", p, p]


def _masks(hide: Sequence[str], needed: Sequence[str], bound: Sequence[str], secret: Sequence[str],
           mine: _Mine | None = None) -> list[str]:
    """The options that hide `hide`: a folder is covered by an empty tmpfs, and the needed
    paths inside it are bound again on top of that; a file by /dev/null. A hidden folder
    that the bot needs whole (its cwd is the tournament's folder) stays, and what is
    hidden inside it is masked in turn."""
    opts: list[str] = []
    layers: list[tuple[str, bool]] = [(b, True) for b in bound]  # (path, shown)

    def shown(path: str) -> bool:
        covering = [(len(q), vis) for q, vis in layers if under(path, q)]
        return bool(covering) and max(covering)[1]

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
            for n in sorted({n for n in needed if under(n, h) and n != h}, key=len):
                if not any(under(n, a) for a in again):
                    again.append(n)
                    opts += _bind(n, mine)
                    layers.append((n, True))
        elif os.path.exists(h):
            opts += ["--ro-bind", "/dev/null", h]
    for m in masks:
        opts += ["--remount-ro", m]
    return opts


def prepare(argv: Sequence[str], cwd: str | None, env: Mapping[str, str], box: Sandbox,
            scratch_mb: int | None, writable_own: bool = False,
            stdio: tuple[int, int] | None = None, own_source: str | None = None, private: bool = False) -> Invocation:
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
    (see `run_build`).

    `private` (a game's start): the bot is shown a copy of its own folder made for it alone
    (`Invocation.private`, for the starter to remove once the process has ended)."""
    folder = PrivateFolder() if private and not writable_own else None
    try:
        return _prepare(argv, cwd, env, box, scratch_mb, writable_own, stdio, own_source, folder)
    except BaseException:
        if folder is not None:
            folder.remove()
        raise


def _prepare(argv: Sequence[str], cwd: str | None, env: Mapping[str, str], box: Sandbox, scratch_mb: int | None,
             writable_own: bool, stdio: tuple[int, int] | None, own_source: str | None,
             folder: PrivateFolder | None) -> Invocation:
    """`prepare`, its private folder (if any) made by the caller."""
    drop = drops_root(writable_own)
    userns = build_userns() if drop else None
    opts = bwrap_options(argv, cwd, box, scratch_mb, writable_own, userns=userns, own_source=own_source,
                         private=folder)
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
    run_env = {**BASE_ENV, **toolchain_env(host_toolchains())}
    run_env.update(env)
    shared = (userns,) if userns is not None else ()
    return Invocation(full, run_env, tuple(fds) + keep + shared, fds, [] if drop else None, folder)


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
