"""A bot's build: run once before its first start, in its sandbox on a copy of its folder
(`tree`), watched for its limits of time, memory, processes and disk."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from ..text import printable
from .box import BUILD_HOST_GID, BUILD_HOST_UID, SYSTEM_PATHS, BuildError, Sandbox, SandboxError
from .cgroups import BotCgroup, cgroups
from .options import Invocation, drops_root, prepare, sandbox_exit_code
from .paths import harness_python, under
from .proctable import tasks_of, tree_load
from .rlimits import pin as pin_rlimits
from .toolchains import missing_program
from .tree import folder_links, links_out, remove_stage, stage_build, unstage_build
from .undo import UndoError

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


def _reason(e: BaseException) -> str:
    return (e.strerror or str(e)) if isinstance(e, OSError) else str(e)


def closed_to_build(cwd: str, own: str) -> str | None:
    """A folder that a build run as `BUILD_HOST_UID` must enter but may not (no execute
    bit for others), or None: its working folder, and the folders from there down to its
    own folder (whose copy it owns) when that lies inside."""
    cwd, own = os.path.realpath(cwd), os.path.realpath(own)
    if under(cwd, own):
        return None
    path = [cwd]
    up = os.path.dirname(own)
    while up != cwd and under(up, cwd):
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
    own = os.path.realpath(box.own) if box.own else None
    try:  # where its links lead before it runs (see `links_out`)
        links_before = folder_links(own) if own and mode == "bwrap" else {}
    except BuildError as e:
        raise BuildError(f"bot {name!r}: {e}") from None
    run = _launch(name, argv, cwd, env, box, mode, scratch_mb, own)
    cgroup = None
    backend, _ = cgroups()
    if backend is not None:
        try:
            cgroup = backend.create(f"build-{name}", BUILD_MEMORY_MB, BUILD_PROCESSES)
        except OSError:
            cgroup = None  # bounded per process and watched instead (below)
    try:
        p = _start(name, argv, cwd, run, mode, cgroup)
        out, why = _watch_build(p, timeout_s, [d for d in (run.copy, own, cwd) if d], cgroup, run.info_r)
        if why is None and p.returncode != 0:
            why = f"exit code {sandbox_exit_code(p.returncode) if mode == 'bwrap' else p.returncode}"
        text = run.note + out.decode("utf-8", "replace")
        if why is not None:
            last = " | ".join(printable(t.strip()) for t in text.strip().splitlines()[-5:] if t.strip()) or "no output"
            hint = missing_program(text, box.mounts, run.env.get("PATH")) if mode == "bwrap" else None
            raise BuildError(f"bot {name!r}: build {' '.join(build)!r} failed ({why}); its output ends: {last}"
                             + (f"; {hint}" if hint else ""))
        if run.copy is not None and own is not None:
            _bring_back(name, run.copy, own, links_before)
        return text
    finally:
        if run.info_r is not None:
            os.close(run.info_r)
        if cgroup is not None:
            cgroup.remove()  # and whatever the build left running
        if run.copy is not None:
            remove_stage(os.path.dirname(run.copy))


@dataclass
class _Launch:
    """How a build starts: its command line, environment, the descriptors it is passed and
    its supplementary groups; when sandboxed, its prepared start, the pipe bwrap writes its
    init's pid to, the copy of its folder it works on and a note for its output."""

    cmd: list[str]
    env: dict[str, str]
    fds: tuple[int, ...] = ()
    groups: list[int] | None = None
    inv: Invocation | None = None
    info_r: int | None = None
    info_w: int | None = None
    copy: str | None = None
    note: str = ""


def _launch(name: str, argv: list[str], cwd: str | None, env: Mapping[str, str], box: Sandbox, mode: str,
            scratch_mb: int | None, own: str | None) -> _Launch:
    """How the build `argv` starts: plainly (`mode` "none"), or in its sandbox on a copy of
    its folder `own` (`_stage`; removed again where the sandbox cannot be prepared)."""
    if mode != "bwrap":
        return _Launch(argv, {**os.environ, **env})
    copy, build_cwd, note = _stage(name, box.own or own, own, cwd) if own else (None, cwd, "")
    try:
        inv = prepare(argv, build_cwd, env, box, scratch_mb or 1024, writable_own=True, own_source=copy)
    except BaseException:
        if copy is not None:
            remove_stage(os.path.dirname(copy))
        raise
    # bwrap writes the host pid of the sandbox's init here: when the build's command
    # ends, the init may live on with what the build left running (ended with it).
    info_r, info_w = os.pipe()
    cmd = [inv.argv[0], "--info-fd", str(info_w), *inv.argv[1:]]
    return _Launch(cmd, inv.env, (*inv.pass_fds, info_w), inv.extra_groups, inv, info_r, info_w, copy, note)


def _start(name: str, argv: Sequence[str], cwd: str | None, run: _Launch, mode: str,
           cgroup: BotCgroup | None) -> subprocess.Popen[bytes]:
    """Start a build as `run` says; then our ends of what it was passed are closed.
    SandboxError where bwrap cannot start, BuildError where its own command cannot."""
    try:
        return subprocess.Popen(run.cmd, cwd=cwd, env=run.env, pass_fds=run.fds, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                extra_groups=run.groups, preexec_fn=_build_setup(mode, cgroup))
    except (OSError, subprocess.SubprocessError) as e:  # (bwrap itself, when sandboxed)
        raise (SandboxError if mode == "bwrap" else BuildError)(
            f"bot {name!r}: build command {argv[0]!r} could not start: "
            f"{getattr(e, 'strerror', None) or e}") from None
    finally:
        if run.inv is not None:
            run.inv.close()
        if run.info_w is not None:
            os.close(run.info_w)


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
        if closed is not None and not under(own, os.path.realpath(cwd or os.getcwd())):
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
