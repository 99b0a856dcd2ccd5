"""Copying a bot's folder for its build and what the build made back, by descriptors that
never follow a link, within limits of size, entries and depth; and the links a build left."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import tempfile
import uuid
from typing import Collection, Mapping, Sequence

from .box import SYSTEM_PATHS, BuildError, SandboxError
from .marks import SCAN_LIMIT
from .paths import under
from .undo import Undo

BUILD_COPY_MB = 4096
"""What a build's copy may hold, at most (apparent sizes): its folder copied in, or what
it made copied back (see `stage_build`)."""

BUILD_COPY_DEPTH = 128
"""How deep the folders of a build's copy may nest, at most."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class CopyBudget:
    """Entries and bytes a copy has taken, checked against the limits as it goes: at most
    `limit_mb` (default `BUILD_COPY_MB`, apparent sizes) or, with `allocated`, that many MB
    of data (a file's holes cost nothing, as they are copied as holes); past them,
    `error` (its message names `why`, the limit's reason)."""

    def __init__(self, what: str, limit_mb: int | None = None, allocated: bool = False,
                 error: type[SandboxError] = BuildError, why: str = "") -> None:
        self.what = what
        self.entries = 0
        self.bytes = 0
        self.limit_mb = limit_mb
        self.allocated = allocated
        self.error = error
        self.why = why

    def size(self, st: os.stat_result) -> int:
        """What a file listed as `st` costs."""
        return min(st.st_size, st.st_blocks * 512) if self.allocated else st.st_size

    def take(self, entries: int = 0, size: int = 0) -> None:
        self.entries += entries
        self.bytes += size
        limit = BUILD_COPY_MB if self.limit_mb is None else self.limit_mb
        if self.entries > SCAN_LIMIT:
            raise self.error(f"{self.what} holds more than {SCAN_LIMIT:,} files and folders{self.why}")
        if self.bytes > limit << 20:
            raise self.error(f"{self.what} holds more than {limit:,} MB{' of data' * self.allocated}{self.why}")


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
              budget: CopyBudget, keep_same: bool, undo: Undo | None = None, rel: str = "") -> None:
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
    budget.take(size=budget.size(st))
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src)
    tmp = f".p10-build-{uuid.uuid4().hex[:12]}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return  # not what was listed: left out
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dst)
        try:
            _copy_data(fd, out, st.st_size)
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


def _copy_data(fd: int, out: int, size: int) -> None:
    """Copy the first `size` bytes of `fd` (fewer if it is shorter now) to `out`: its data,
    with its holes left holes (`SEEK_DATA`, where the file system has it)."""
    end = min(size, os.fstat(fd).st_size)
    pos = 0
    while pos < end:
        try:
            pos = os.lseek(fd, pos, os.SEEK_DATA)
            stop = min(os.lseek(fd, pos, os.SEEK_HOLE), end)
        except OSError as e:
            if e.errno == errno.ENXIO:  # no data after pos
                break
            stop = end  # the file system cannot say: all of it
        if pos >= end:
            break
        os.lseek(fd, pos, os.SEEK_SET)
        os.lseek(out, pos, os.SEEK_SET)
        while pos < stop:
            chunk = os.read(fd, min(stop - pos, 1 << 20))
            if not chunk:
                break
            os.write(out, chunk)
            pos += len(chunk)
    os.ftruncate(out, end)


def _placeholder(d: int, name: str, st: os.stat_result) -> None:
    """An empty folder or file `name` in `d` where a copy leaves out what the bot is never
    shown: the mount that hides it needs a place to cover."""
    if stat.S_ISDIR(st.st_mode):
        os.mkdir(name, 0o755, dir_fd=d)
    else:
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=d))


def _mirror(src: int, dst: int, budget: CopyBudget, owner: tuple[int, int] | None, back: Undo | None,
            skip: Collection[str] = ()) -> None:
    """Copy what the folder open as `src` holds into the one open as `dst`: files, links
    and folders (no devices, pipes or sockets), by descriptors that never follow a link,
    so that whoever else can write either folder cannot turn the copy elsewhere. Going
    into the stage (`back` None): modes kept but set-user-ID and set-group-ID, `owner`
    set. Coming back (`back`: what it changes in the folder `back.own`, which `dst` is,
    noted as it goes): modes at most 0755 (never writable by others, nothing set-user-ID),
    the harness's user as owner, files that did not change left alone, and a link that
    leads out of the folder (but to a system folder) refused: a later reading of the
    tournament file would take it as the folder's own. Paths (relative) in `skip` are left
    out, an empty folder or file in their place (going into the stage only)."""
    stack: list[tuple[int, int, list[tuple[str, os.stat_result]], str]] = []
    if back is not None:
        back.folder(dst, "")

    def enter(s: int, d: int, rel: str) -> None:
        entries = _entries(s)
        budget.take(entries=len(entries))
        folders = []
        for name, st in entries:
            if back is None and os.path.join(rel, name) in skip:
                _placeholder(d, name, st)
            elif stat.S_ISDIR(st.st_mode):
                folders.append((name, st))
            elif stat.S_ISLNK(st.st_mode):
                if back is not None and not _same_link(s, d, name):
                    target = os.readlink(name, dir_fd=s)
                    to = os.path.normpath(os.path.join(back.own, rel, target))
                    if not under(to, back.own) and not any(under(to, p) for p in SYSTEM_PATHS):
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
                raise budget.error(f"{budget.what} has folders nested more than {BUILD_COPY_DEPTH} deep{budget.why}")
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
    return copy_folder(own, "p10-build-", CopyBudget(f"the bot's folder {own!r}"), (uid, gid))


def copy_folder(own: str, prefix: str, budget: CopyBudget, owner: tuple[int, int] | None = None,
                skip: Collection[str] = ()) -> str:
    """A copy of the folder `own` (see `_mirror`; `skip`: paths relative to it left out) in
    a new private folder named with `prefix`, within `budget`: the copy's path (its parent
    is the stage, for `remove_stage`)."""
    stage = tempfile.mkdtemp(prefix=prefix)
    copy = os.path.join(stage, "own")
    src = dst = -1
    try:
        src = os.open(own, _DIR)
        os.mkdir(copy, 0o700)
        dst = os.open(copy, _DIR)
        os.fchmod(dst, stat.S_IMODE(os.fstat(src).st_mode) | 0o700)
        if owner:
            os.fchown(dst, *owner)
        _mirror(src, dst, budget, owner, back=None, skip=skip)
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
                _mirror(src, dst, CopyBudget("what the build made"), None, back=undo)
            except BaseException:
                undo.rollback()
                raise
            return undo
        finally:
            os.close(dst)
    finally:
        os.close(src)


def folder_links(own: str, skip: Sequence[str] = ()) -> dict[str, str]:
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
    there before (`before`, from `folder_links` before a build: a link the build made, or one
    whose way it changed by swapping a folder on it for a link): (path relative to `own`,
    where it leads)."""
    home = os.path.realpath(own)
    systems = {os.path.realpath(p) for p in SYSTEM_PATHS if os.path.exists(p)}
    bad = []
    for rel, to in sorted(folder_links(own, skip).items()):
        if before.get(rel) == to:
            continue  # the author's, leading where it did
        if not under(to, home) and not any(under(to, p) for p in systems):
            bad.append((rel, to))
    return bad
