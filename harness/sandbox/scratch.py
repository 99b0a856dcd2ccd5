"""A sandboxed bot's scratch seen from the harness: whether it is full.

The kernel holds a bot to its scratch: one tmpfs of `scratch_mb` (`box.SCRATCH`, which
`/dev/shm` leads into), the only place it can write; a write past it fails with ENOSPC.
The watchdog must also name the limit, as it names the others, and end the bot that
reached it. `ScratchWatch` holds a descriptor of that tmpfs, opened through `/proc` once
the sandbox is made, and asks the kernel how full it is: one `fstatvfs` a look, however
many files the bot made. The descriptor keeps the tmpfs (and what the bot left in it)
until `close`, so that it can still be read once the bot has ended.
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

from .proctable import stat_fields
from .box import SCRATCH


def limit_text(scratch_mb: int | None) -> str:
    """The fault reason's words for the scratch limit: "scratch limit of 128 MB reached"."""
    return f"scratch limit of {scratch_mb} MB reached"


def says_scratch_full(text: str) -> bool:
    """Whether a program's words (its stderr) say a write found no space: in a sandbox,
    where only the scratch can be written, that is the scratch limit."""
    return "no space left on device" in text.lower()


class ScratchWatch:
    """The scratch of one start of a sandboxed bot, of `scratch_mb`. `members()` lists the
    host pids of the bot's processes (bwrap's `outer` one among them)."""

    def __init__(self, outer: int, scratch_mb: int, members: Callable[[], Sequence[int]]) -> None:
        self.outer = outer
        self.size = scratch_mb << 20
        self.members = members
        self.fd: int | None = None

    def _open(self) -> None:
        """Open the scratch through a process two levels below bwrap's (the bot's command
        or a process it started): bubblewrap forks the command only once the sandbox is
        made, so its root is the sandbox's root, which the bot cannot change."""
        parent = {p: int(st[1]) for p, st in ((p, stat_fields(p)) for p in self.members()) if st}
        for pid, ppid in parent.items():
            if parent.get(ppid) != self.outer:
                continue
            try:
                fd = os.open(f"/proc/{pid}/root{SCRATCH}", os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            st = stat_fields(pid)
            try:
                vfs = os.fstatvfs(fd)
            except OSError:
                vfs = None
            # Still that process (its pid not taken since by another), and a tmpfs of that size.
            if st is not None and int(st[1]) == ppid and vfs is not None and vfs.f_blocks * vfs.f_frsize == self.size:
                self.fd = fd
                return
            os.close(fd)

    def full(self) -> bool:
        """Whether the scratch has no page left (or no file: a count in the millions, which
        the memory limit stops first where the bot has a cgroup); False while it cannot be
        looked at yet (the sandbox is being made)."""
        if self.fd is None:
            self._open()
            if self.fd is None:
                return False
        try:
            st = os.fstatvfs(self.fd)
        except OSError:
            return False
        return st.f_bfree == 0 or st.f_ffree == 0

    def close(self) -> None:
        """Let the tmpfs go (with the bot's sandbox, if it has ended)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
