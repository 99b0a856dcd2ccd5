"""Putting a bot's folder back as it was before a build's work was copied into it.

What the copy back changes (`tree.unstage_build`) is noted as it goes: each entry it
makes, each it replaces (first moved aside, whole, into a folder of its own inside the
bot's folder: the same file system, so a rename and nothing copied), and the times of
every folder it writes in. `Undo.rollback` moves everything back, so that the folder
holds exactly what it held (names, contents, modes, owners and times); `Undo.commit`
drops what was set aside. Every step goes by descriptors that never follow a link.
"""

from __future__ import annotations

import os
import subprocess
import uuid

STASH = ".p10-build-undo-"
"""The start of the name of the folder, inside the bot's folder, that what is replaced is
moved aside into while the copy back may still be undone."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UndoError(OSError):
    """The folder could not be put back as it was, or what was set aside not dropped."""


class Undo:
    """What a copy into the folder `own` (open as `root`) changed, in order."""

    def __init__(self, own: str, root: int) -> None:
        self.own = own
        self.root = os.dup(root)
        self.name = STASH + uuid.uuid4().hex[:12]
        self._stash: int | None = None
        self.steps: list[tuple[str, str]] = []  # (path relative to `own`, name in the stash or "" if made)
        self.times: list[tuple[str, int, int]] = []  # (folder relative to `own`, atime, mtime) before

    def folder(self, fd: int, rel: str) -> None:
        """The copy writes in the existing folder `rel` (open as `fd`): its times are kept."""
        st = os.fstat(fd)
        self.times.append((rel, st.st_atime_ns, st.st_mtime_ns))

    def made(self, rel: str) -> None:
        """The copy made the entry `rel` (a file, link or folder that was not there)."""
        self.steps.append((rel, ""))

    def set_aside(self, parent: int, name: str, rel: str) -> None:
        """Move the entry `name` of the folder open as `parent` (`rel`) aside, whole, before
        the copy puts something else in its place (FileNotFoundError: there is none)."""
        kept = str(len(self.steps))
        os.rename(name, kept, src_dir_fd=parent, dst_dir_fd=self.stash())
        self.steps.append((rel, kept))

    def stash(self) -> int:
        """The folder entries are moved aside into (made on first use, open to its owner only)."""
        if self._stash is None:
            os.mkdir(self.name, 0o700, dir_fd=self.root)
            self._stash = os.open(self.name, _DIR, dir_fd=self.root)
        return self._stash

    def rollback(self) -> None:
        """Put the folder back as it was: what was made is moved into the stash, what was
        set aside back in its place, latest first; then the stash is removed and the
        folders' times set back. UndoError where the folder cannot be put back."""
        try:
            for k, (rel, kept) in enumerate(reversed(self.steps)):
                parent, name = self._parent(rel)
                try:
                    if kept:
                        os.rename(kept, name, src_dir_fd=self.stash(), dst_dir_fd=parent)
                    else:
                        os.rename(name, f"made-{k}", src_dir_fd=parent, dst_dir_fd=self.stash())
                finally:
                    os.close(parent)
            self._drop()
            for rel, atime, mtime in reversed(self.times):
                fd = self._open(rel)
                try:
                    os.utime(fd, ns=(atime, mtime))
                finally:
                    os.close(fd)
        except OSError as e:
            raise UndoError(e.errno, f"{self.own!r} could not be put back: {e.strerror or e}") from None
        finally:
            self.close()

    def commit(self) -> None:
        """Keep what the copy made: drop what was set aside (UndoError where it cannot be)."""
        try:
            self._drop()
        except OSError as e:
            raise UndoError(e.errno, str(e)) from None
        finally:
            self.close()

    def close(self) -> None:
        """Close the descriptors held (the stash stays as it is)."""
        for fd in (self._stash, self.root):
            if fd is not None and fd >= 0:
                os.close(fd)
        self._stash, self.root = None, -1

    def _drop(self) -> None:
        """Remove the stash and all it holds, however deep its folders nest."""
        if self._stash is None:
            return
        os.close(self._stash)
        self._stash = None
        subprocess.run(["rm", "-rf", "--one-file-system", "--", os.path.join(self.own, self.name)],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if os.path.lexists(os.path.join(self.own, self.name)):
            raise OSError(f"{os.path.join(self.own, self.name)!r} could not be removed")

    def _open(self, rel: str) -> int:
        """The folder `rel` of `own`, opened one part at a time without following a link."""
        fd = os.dup(self.root)
        for part in [p for p in rel.split("/") if p]:
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            finally:
                os.close(fd)
            fd = nxt
        return fd

    def _parent(self, rel: str) -> tuple[int, str]:
        head, name = os.path.split(rel)
        return self._open(head), name
