"""The search for folders a bot may never see (another tournament's results, marked by
a file) in the folders it is shown: whole once per process, bounded at every start."""

from __future__ import annotations

import os
import stat
from collections import deque
from typing import Any, Iterable, Sequence

from .box import SandboxError

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
