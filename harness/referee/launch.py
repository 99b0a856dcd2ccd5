"""Starting a bot's process: its command checked, its cgroup made (where the machine has
one), its sandbox prepared, and the process started in its own process group with its
limits, its stdin and stdout past bwrap where it runs in one."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from ..sandbox.box import BASH, SandboxError
from ..sandbox.cgroups import BotCgroup, cgroups
from ..sandbox.modes import resolve_mode
from ..sandbox.options import prepare
from ..sandbox.private import PrivateFolder
from .errors import BotStartError
from .spec import BotSpec, child_setup


@dataclass
class Launched:
    """A bot's process just started: its `Popen` (stdin, stdout and stderr non-blocking
    pipes), whether it runs under bwrap, its cgroup (None where none could be made), and
    the private copy of its own folder it is shown (None if none)."""

    proc: subprocess.Popen[bytes]
    sandboxed: bool
    cgroup: BotCgroup | None
    private: PrivateFolder | None = None


def _mode(spec: BotSpec, argv: list[str]) -> str:
    """The sandbox mode the bot runs in, its command checked; raises `BotStartError`."""
    if not argv:
        raise BotStartError(f"bot {spec.name!r} has an empty command")
    try:
        mode = resolve_mode(spec.sandbox.mode)
    except SandboxError as e:
        raise BotStartError(f"bot {spec.name!r}: {e}") from None
    path = dict(os.environ, **spec.env).get("PATH")
    if shutil.which(argv[0], path=path) is None and not os.path.exists(os.path.join(spec.cwd or ".", argv[0])):
        raise BotStartError(f"bot {spec.name!r}: command not found: {argv[0]!r}")
    return mode


def _cgroup(spec: BotSpec, mode: str) -> BotCgroup | None:
    """A new cgroup for the bot with its limits, or None (no backend, or it cannot be made:
    the limits then hold per process, and the results say so)."""
    lim = spec.limits
    backend, _why = cgroups() if (lim.memory_mb or lim.processes or lim.cpus) else (None, "")
    if backend is None:
        return None
    try:
        # bwrap's own two processes (its monitor and the namespace's init) count too.
        return backend.create(spec.name, lim.memory_mb, lim.processes and lim.processes + 2 * (mode == "bwrap"),
                              lim.cpus)
    except OSError:
        return None


def _command(spec: BotSpec, argv: list[str], mode: str,
             pipes: list[int]) -> tuple[list[str], dict[str, str], Any, Any]:
    """(command, environment, fds to pass, the sandbox's invocation or None) of the bot's
    process; under bwrap with bash, its stdin and stdout pipes are made into `pipes`
    (theirs, then ours). Raises `SandboxError`."""
    lim = spec.limits
    if mode == "bwrap" and BASH is None:
        inv = prepare(argv, spec.cwd, spec.env, spec.sandbox, lim.scratch_mb, private=True)
        return inv.argv, inv.env, inv.pass_fds, inv
    if mode == "bwrap":
        # The bot's stdin and stdout reach it past bwrap, which then holds no copy.
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        pipes += [in_r, in_w, out_r, out_w]
        inv = prepare(argv, spec.cwd, spec.env, spec.sandbox, lim.scratch_mb, stdio=(in_r, out_w), private=True)
        return inv.argv, inv.env, inv.pass_fds, inv
    host_env = dict(os.environ)
    host_env.update(spec.env)
    host_env.setdefault("PYTHONUNBUFFERED", "1")
    return argv, host_env, (), None


def launch(spec: BotSpec) -> Launched:
    """Start the bot's process in its own process group, in its sandbox and cgroup where
    the spec and the machine allow (see `sandbox`); raises `BotStartError`."""
    argv = spec.resolved_argv()
    mode = _mode(spec, argv)
    cgroup = _cgroup(spec, mode)
    pipes: list[int] = []
    try:
        cmd, env, fds, inv = _command(spec, argv, mode, pipes)
    except SandboxError as e:  # what it would be shown changed since the tournament was read
        for fd in pipes:
            os.close(fd)
        if cgroup is not None:
            cgroup.remove()
        raise BotStartError(f"bot {spec.name!r}: its sandbox cannot be made: {e}") from None
    piped = subprocess.DEVNULL if pipes else subprocess.PIPE
    try:
        proc = subprocess.Popen(
            cmd, stdin=piped, stdout=piped, stderr=subprocess.PIPE, cwd=spec.cwd, env=env,
            start_new_session=True, preexec_fn=child_setup(spec.limits, spec.randomize_addresses, cgroup),
            close_fds=True, pass_fds=fds,
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
        proc.stdin = open(pipes[1], "wb", buffering=0)
        proc.stdout = open(pipes[2], "rb", buffering=0)
    for f in (proc.stdin, proc.stdout, proc.stderr):
        os.set_blocking(f.fileno(), False)  # type: ignore[union-attr]
    return Launched(proc, mode == "bwrap", cgroup, inv.private if inv is not None else None)
