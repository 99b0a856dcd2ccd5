"""A private copy of a bot process's own folder: files whose page cache no other process
shares.

Every process of a tournament that reads the same file reads the same pages of the
kernel's page cache, and which of them are cached is state one process sets (by reading a
page) and another can see (by timing a read, or by the fault counters of a mapping). A
bot's own folder is the one place its author controls that every process of the bot is
shown: a large sparse file there is a blank page every process of it can write bits in
and read back, in another seat rotation of a duplicate deal, another sandbox, another
worker on the same machine. So each sandboxed start of a bot in its games is shown a copy
of its own folder of its own (bound where the folder is), made before it starts and
removed when it ends: what one process did to the cache of its files no other process can
see. Holes are copied as holes (a sparse file costs only its data), and what the bot is
never shown (other bots' folders, results folders) is left out. A copy whose maker was
killed at once (no `remove`) is swept at the next copy made on the machine.

The system's folders, the harness's Python and a bot's `mounts:` are not copied: they are
every sandbox's (protocol/LIMITS.md says what that leaves).
"""

from __future__ import annotations

import os
import tempfile
from typing import Sequence

from .box import SYSTEM_PATHS, SandboxError
from .paths import harness_package, python_paths, under
from .tree import CopyBudget, copy_folder, remove_stage

PRIVATE_COPY_MB = 256
"""What a bot's own folder may hold, at most, to be copied for each of its processes (MB
of data: holes in sparse files cost nothing)."""


_PREFIX = "p10-own-"  # then the pid of the process that made it, and a random part


def sweep(folder: str | None = None) -> list[str]:
    """Remove the copies in the temporary folder (or `folder`) whose maker is gone: a worker
    killed at once (SIGKILL, or its emergency stop) removes none of its bots' copies.
    Returns the copies removed."""
    folder = folder or tempfile.gettempdir()
    gone = []
    try:
        names = [n for n in os.listdir(folder) if n.startswith(_PREFIX)]
    except OSError:
        return []
    for name in names:
        pid = name[len(_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        remove_stage(os.path.join(folder, name))
        gone.append(name)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class PrivateCopyError(SandboxError):
    """A bot's own folder holds more than its private copy may (`PRIVATE_COPY_MB`, or more
    files, folders or depth than a build's copy may): the bot cannot be started."""


class PrivateFolder:
    """The private copy of one bot process's own folder: made by `copy`, removed (with
    what the bot could not change in it: it is read-only) by `remove` once the process has
    ended."""

    def __init__(self) -> None:
        self.own: str | None = None
        self.path: str | None = None

    def copy(self, own: str, skip: Sequence[str]) -> str | None:
        """Copy `own` (a real path), leaving out `skip` (the paths inside it the bot is not
        shown): the copy's path, or None where `own` is not copied (it is a system or
        Python folder, every sandbox's anyway, or no folder). PrivateCopyError past the
        limits."""
        if self.path is not None:
            raise ValueError("a private folder holds one copy")
        installed = python_paths() + [harness_package()]
        if not os.path.isdir(own) or any(under(own, k) or under(k, own) for k in (*SYSTEM_PATHS, *installed)):
            return None
        rel = [os.path.relpath(p, own) for p in skip if under(p, own) and p != own]
        why = (", past what the private copy each of its processes is shown may hold (protocol/LIMITS.md, "
               "'The page cache'); make the folder smaller")
        budget = CopyBudget(f"the bot's own folder {own!r}", PRIVATE_COPY_MB, allocated=True,
                            error=PrivateCopyError, why=why)
        sweep()
        self.path = copy_folder(own, f"{_PREFIX}{os.getpid()}-", budget, skip=rel)
        self.own = own
        return self.path

    def remove(self) -> None:
        """Remove the copy (nothing where none was made)."""
        if self.path is not None:
            remove_stage(os.path.dirname(self.path))
            self.path = None
