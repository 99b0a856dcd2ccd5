"""Reading and writing a results folder that may not be what it claims: it may have been
handed over by someone else, with links, pipes or huge files where its files should be."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

import yaml


MAX_LINE = 4 << 20
"""Bytes in one line of games.jsonl at most (a record is a few kB; a longer line is read
as a torn tail, so that a forged file cannot make a reader hold it whole)."""


MAX_META = 64 << 20
"""Bytes at most in a results folder's JSON, YAML, Markdown and CSV files (each a few kB to
a few MB in a genuine folder; games.jsonl is read a line at a time, replays have their own
cap)."""


class NotAFileError(ValueError):
    """A results folder's entry is not a plain file of a sane size (a link, a pipe, a
    device, a folder, or larger than its cap)."""


def not_plain(path: Path, cap: int) -> str | None:
    """Why `path` may not be read as a results folder's file (a link, not a regular file, or
    more than `cap` bytes), or None: it may, or it is missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a link: a results folder's files are plain files"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a plain file"
    if st.st_size > cap:
        return f"{path} holds {st.st_size:,} bytes, more than the {cap:,} such a file may"
    return None


def open_plain(path: Path) -> BinaryIO:
    """`path` opened to read, which must be a regular file and not a link to one
    (`NotAFileError` otherwise: a link to /dev/zero or a pipe nobody writes would never
    end); OSError where it cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        if os.path.islink(path):
            raise NotAFileError(f"{path} is a link: a results folder's files are plain files") from None
        raise e
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        raise NotAFileError(f"{path} is not a plain file")
    return f


def read_regular(path: Path, cap: int) -> bytes:
    """The bytes of `path`, which must be a regular file (not a link to one) of at most
    `cap` bytes; `NotAFileError` otherwise, OSError where it cannot be opened."""
    with open_plain(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > cap:
            raise NotAFileError(f"{path} holds {size:,} bytes, more than the {cap:,} such a file may")
        data = f.read(size + 1)  # (not `cap`: a read allocates what it is asked for)
    if len(data) > size:
        raise NotAFileError(f"{path} grew while it was read")
    return data


def read_json(path: Path, cap: int = MAX_META) -> Any:
    """The JSON value in `path`, a plain file of at most `cap` bytes: FileNotFoundError if it
    is missing, ValueError (`NotAFileError` among them) if it is not a plain file, too large,
    not UTF-8 or not JSON (nested too deeply among that)."""
    data = read_regular(path, cap)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: not JSON ({type(e).__name__})") from None


MAX_YAML_NODES = 1 << 20
"""Nodes at most in a results folder's YAML once its aliases are expanded (a resolved
config has some hundreds)."""


def load_yaml(data: bytes | str) -> Any:
    """The YAML document in `data` (YAML's safe subset), refused with ValueError where its
    aliases would expand to more than `MAX_YAML_NODES` nodes, or refer to themselves: a
    file of a few hundred bytes can otherwise stand for gigabytes to any reader that walks
    it (hashing it, printing it)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(data)  # libyaml where present: 10x faster
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        sizes: dict[int, int] = {}

        def size(n: yaml.Node, open_: set[int]) -> int:
            k = id(n)
            if k in sizes:
                return sizes[k]
            if k in open_:
                raise ValueError("its aliases refer to themselves")
            total = 1
            if isinstance(n, (yaml.SequenceNode, yaml.MappingNode)):
                open_.add(k)
                for item in n.value:
                    for sub in (item if isinstance(item, tuple) else (item,)):
                        total += size(sub, open_)
                        if total > MAX_YAML_NODES:
                            raise ValueError(f"its aliases expand to more than {MAX_YAML_NODES:,} nodes")
                open_.discard(k)
            sizes[k] = total
            return total

        size(node, set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def safe_folder(folder: Path) -> None:
    """Make `folder` if it is missing; `NotAFileError` if it is a link or not a folder, so
    that nothing written into it lands elsewhere."""
    if os.path.islink(folder):
        raise NotAFileError(f"{folder} is a link: refusing to write through it (remove it, and run again)")
    if folder.exists() and not folder.is_dir():
        raise NotAFileError(f"{folder} is not a folder")
    folder.mkdir(exist_ok=True)


TMP_PREFIX = ".p10tmp-"
"""The names of files being written (`write_whole`); one left by a run that was killed is
never whole, and is removed when the folder is next written to."""


def write_whole(path: Path, data: str | bytes, mode: int = 0o644, sync: bool = False) -> None:
    """The one way results are written: a new file in the same folder (`mode`; flushed to
    disk first with `sync`), renamed over `path` when whole, so that a reader never sees
    it half-written and a link or another owner's file at `path` is replaced, never
    written through."""
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data.encode() if isinstance(data, str) else data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
