"""Arrays that grow with the number of games, kept in files instead of the process's
private memory.

A run of a million games keeps some tens of bytes a game (the schedule, the statistics'
games, their deal groups). `empty` puts any array of `SPILL_BYTES` or more in a memory-
mapped file (created in the temporary directory, `TMPDIR`, and unlinked at once, so
nothing is left behind whatever happens to the run): its pages are the kernel's file
cache, written back to disk and dropped when memory is wanted, so the memory a run needs
stays flat however many games it has. Smaller arrays, and every array where no file can
be made (a full or read-only disk: the file's blocks are reserved when it is made, so a
disk that fills later cannot fail a write to it; a system without `posix_fallocate` to
reserve them), are ordinary numpy arrays. The values are the same
either way; only where they live differs.

On a machine whose temporary directory is a RAM file system (tmpfs), point `TMPDIR` at a
disk for the files to leave memory.
"""

from __future__ import annotations

import mmap
from array import array
import os
import tempfile
from typing import Any, Iterable, Sequence

import numpy as np

SPILL_BYTES = 1 << 20
"""Arrays of at least this many bytes go to a file."""


def empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """A new array of zeros (`np.zeros`), in a file when it is `SPILL_BYTES` or more."""
    dt = np.dtype(dtype)
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    nbytes = count * dt.itemsize
    if nbytes < SPILL_BYTES or nbytes == 0:
        return np.zeros(dims, dtype=dt)
    reserve = getattr(os, "posix_fallocate", None)
    if reserve is None:  # no way to reserve the blocks (macOS, Windows): kept in memory
        return np.zeros(dims, dtype=dt)
    try:
        with tempfile.TemporaryFile(prefix="p10-tourney-") as f:  # unlinked: gone when unmapped
            # The blocks are reserved now: a full disk is found here (and the array made in
            # memory), not later as a SIGBUS when a page of a sparse file is first written.
            reserve(f.fileno(), 0, nbytes)  # reads as zeros
            buf = mmap.mmap(f.fileno(), nbytes)  # shared: the kernel may write pages back and drop them
    except (OSError, ValueError):
        return np.zeros(dims, dtype=dt)
    return np.frombuffer(buf, dtype=dt, count=count).reshape(dims)


def arange(n: int, dtype: Any = np.int64) -> np.ndarray:
    """0, 1, …, n − 1 (`np.arange`), made by `empty` and filled a block at a time."""
    out = empty(n, dtype)
    step = 1 << 16
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        out[lo:hi] = np.arange(lo, hi, dtype=out.dtype)
    return out


def is_spilled(a: np.ndarray) -> bool:
    """Whether `a` (or the array it is a view of) lives in a file made by `empty`."""
    base: Any = a
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return isinstance(base, mmap.mmap)


_TYPECODES = {np.dtype(t): c for t, c in ((np.int8, "b"), (np.uint8, "B"), (np.int16, "h"), (np.int32, "i"),
                                           (np.int64, "q"))}


class Column:
    """A growing column of numbers (`append`, `extend`), read as a numpy view of what is in
    it (`view`, indexing). The view is read-only and stays valid as more is appended:
    growing moves the column to a new buffer (made by `empty`, so a long column lives in a
    file) and a view taken before keeps the old one. Appended values wait in a small
    `array` (C speed) and join the column a block at a time."""

    _BLOCK = 1 << 10

    def __init__(self, dtype: Any) -> None:
        self._a = np.zeros(64, dtype=dtype)
        self._n = 0
        self._code = _TYPECODES[self._a.dtype]  # an integer type `array` holds too
        self._tail = array(self._code)

    def __len__(self) -> int:
        return self._n + len(self._tail)

    def __getitem__(self, k: Any) -> Any:
        self._flush()
        return self._a[: self._n][k]

    def _room(self, k: int) -> None:
        if self._n + k > len(self._a):
            grown = empty(max(self._n + k, len(self._a) + len(self._a) // 8), self._a.dtype)  # 1/8 spare at most
            grown[: self._n] = self._a[: self._n]
            self._a = grown

    def _flush(self) -> None:
        tail = self._tail
        if tail:
            k = len(tail)
            self._room(k)
            self._a[self._n: self._n + k] = np.frombuffer(tail, dtype=self._a.dtype)
            self._n += k
            self._tail = array(self._code)

    def append(self, x: int) -> None:
        """One more value."""
        tail = self._tail
        tail.append(x)
        if len(tail) >= self._BLOCK:
            self._flush()

    def extend(self, xs: Sequence[int] | np.ndarray) -> None:
        """More values."""
        tail = self._tail
        if isinstance(xs, (list, tuple)):
            tail.extend(xs)
            if len(tail) >= self._BLOCK:
                self._flush()
            return
        self._flush()
        k = len(xs)
        self._room(k)
        self._a[self._n: self._n + k] = xs
        self._n += k

    def view(self) -> np.ndarray:
        """What is in the column (read-only; not a copy)."""
        self._flush()
        v = self._a[: self._n]
        v.flags.writeable = False
        return v


class IndexSet:
    """A set of non-negative game indices as a bitmap: a bit a game index up to the
    highest one added (125 KB for a million), where a Python set takes some 60 bytes a
    member."""

    __slots__ = ("_bits", "_count")

    def __init__(self, indices: Iterable[int] = ()) -> None:
        self._bits = bytearray()
        self._count = 0
        for i in indices:
            self.add(i)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, index: object) -> bool:
        if not isinstance(index, int) or index < 0:
            return False
        byte = index >> 3
        return byte < len(self._bits) and bool(self._bits[byte] >> (index & 7) & 1)

    def add(self, index: int) -> None:
        """Add `index` (≥ 0)."""
        if index < 0:
            raise ValueError(f"game index {index} is negative")
        byte = index >> 3
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(byte + 1 - len(self._bits), len(self._bits))))
        bit = 1 << (index & 7)
        if not self._bits[byte] & bit:
            self._bits[byte] |= bit
            self._count += 1
