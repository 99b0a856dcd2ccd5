"""Descendants of a bot that left its process group: found and ended (their start time
checked, so a pid used again is left alone), and orphans of bots adopted (a child
subreaper) and reaped after each game."""

from __future__ import annotations

import os
import signal
from typing import Sequence

from ..sandbox.proctable import stat_fields as _stat


def become_subreaper() -> bool:
    """Make this process adopt the orphans of its descendants (Linux PR_SET_CHILD_SUBREAPER),
    so that a bot's grandchild that left the bot's process group is still ours to end.
    Returns whether that worked."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def kill_left(left: Sequence[tuple[int, str]], sig: int) -> None:
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
