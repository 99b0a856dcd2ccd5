"""A hostile bot that keeps its dealt hands in the page cache, to learn its opponent's hand
in a later seat rotation of the same duplicate deal.

It plays as the greedy bot does. At its first request of each hand, in the first seat
rotation of a deal, it writes the ten cards it was dealt as bits of page residency in a
file (a page read is a 1, a page left alone a 0), in slots of that deal and hand; in the
second rotation, another process, it reads them: the hand its opponent holds now. It
reads in three ways, each from a slot of its own (reading changes what is read), each
logged to stderr:

- `mincore`: which pages of the file are cached, asked of the kernel;
- `faults`: the file mapped, each bit's page touched, and the process's count of major
  faults looked at (a page not cached is read in: a major fault). Exact, no timing;
- `timed`: touching each bit's page timed (slow: not cached).

Usage: `residency.py FILE [OFFSET [WAYS]]`: the file (a large sparse file in the bot's
own folder, or a system file every sandbox sees), relative to the bot's folder unless
absolute; OFFSET (bytes) where its slots begin; WAYS (default all three, comma-separated)
the ways it writes for and reads. A deal is told apart by its game number
(two rotations of one deal are consecutive games at a heads-up table with
`games_per_table` 2k). Every line it logs starts `RESIDENCY`: `wrote KEY BITS CARDS`,
`read WAY KEY BITS CARDS|-` (`-`: no hand found), `error WAY TEXT`.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import resource
import sys
import time
from typing import Any

from harness.players import GreedyStrategy
from harness.sdk import StrategyBot, run

PAGE = 4096
SPACING = 4 * PAGE  # one bit per 16 KiB (pages are read and touched mapped, with MADV_RANDOM: no read-ahead)
CARD_BITS = 6
HAND = 10
CHECK_BITS = 8
SLOT_BITS = 1 + HAND * CARD_BITS + CHECK_BITS  # a 1 (the slot is written), the cards, a checksum
CARDS = [f"{c}{n}" for c in "RBGY" for n in range(1, 13)] + ["W", "S"]
WAYS = ("mincore", "faults", "timed")
HANDS = 12  # the hands of a deal it keeps (slots: HANDS a deal, one for each way)
HERE = os.path.dirname(os.path.abspath(__file__))


def log(*words: object) -> None:
    print("RESIDENCY", *words, file=sys.stderr, flush=True)


def encode(cards: list[str]) -> str:
    idx = sorted(CARDS.index(c) for c in cards)
    body = "".join(format(i, f"0{CARD_BITS}b") for i in idx)
    return "1" + body + format(sum(idx) % 256, f"0{CHECK_BITS}b")


def decode(bits: str) -> list[str] | None:
    """The hand a slot holds, or None where it holds none (or what it holds does not check)."""
    if len(bits) != SLOT_BITS or bits[0] != "1":
        return None
    idx = [int(bits[1 + k * CARD_BITS:1 + (k + 1) * CARD_BITS], 2) for k in range(HAND)]
    if any(i >= len(CARDS) for i in idx) or idx != sorted(idx) or sum(idx) % 256 != int(bits[-CHECK_BITS:], 2):
        return None
    return [CARDS[i] for i in idx]


class Pages:
    """The bits of one file, from `offset`."""

    def __init__(self, path: str, offset: int) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size
        self.offset = offset
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self.libc.mmap.restype = ctypes.c_void_p
        self.libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_long]
        self.libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

    def slots(self) -> int:
        return max(0, (self.size - self.offset) // (SLOT_BITS * SPACING))

    def where(self, slot: int, bit: int) -> int:
        return self.offset + (slot * SLOT_BITS + bit) * SPACING

    def write(self, slot: int, bits: str) -> None:
        addr, length, base = self._mapped(slot)
        try:
            for k, b in enumerate(bits):
                if b == "1":
                    ctypes.string_at(addr + self.where(slot, k) - base, 1)
        finally:
            self.libc.munmap(ctypes.c_void_p(addr), length)

    def _mapped(self, slot: int) -> tuple[int, int, int]:
        """The pages of `slot` mapped: (address, length, file offset of the address)."""
        start = self.where(slot, 0)
        base = start - start % mmap.ALLOCATIONGRANULARITY
        length = self.where(slot, SLOT_BITS - 1) + PAGE - base
        addr = self.libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, self.fd, base)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap failed")
        self.libc.madvise(ctypes.c_void_p(addr), length, 1)  # MADV_RANDOM: a fault reads its page only
        return addr, length, base

    def by_mincore(self, slot: int) -> str:
        addr, length, base = self._mapped(slot)
        try:
            buf = (ctypes.c_ubyte * (length // PAGE))()
            if self.libc.mincore(ctypes.c_void_p(addr), length, buf) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            return "".join("1" if buf[(self.where(slot, k) - base) // PAGE] & 1 else "0" for k in range(SLOT_BITS))
        finally:
            self.libc.munmap(ctypes.c_void_p(addr), length)

    def by_faults(self, slot: int) -> str:
        addr, length, base = self._mapped(slot)
        try:
            out = []
            for k in range(SLOT_BITS):
                before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
                ctypes.string_at(addr + self.where(slot, k) - base, 1)
                out.append("0" if resource.getrusage(resource.RUSAGE_SELF).ru_majflt > before else "1")
            return "".join(out)
        finally:
            self.libc.munmap(ctypes.c_void_p(addr), length)

    def timings(self, slot: int) -> list[int]:
        addr, length, base = self._mapped(slot)
        try:
            out = []
            for k in range(SLOT_BITS):
                t = time.perf_counter_ns()
                ctypes.string_at(addr + self.where(slot, k) - base, 1)
                out.append(time.perf_counter_ns() - t)
            return out
        finally:
            self.libc.munmap(ctypes.c_void_p(addr), length)


def by_time(ns: list[int]) -> str:
    """Bits from the times of touching each bit's page: slow (past the widest gap between
    the sorted times, where it is at least twofold) is a page not cached."""
    s = sorted(ns)
    lo, hi = len(s) // 8, len(s) - len(s) // 8 - 1
    ratio, cut = max((s[i + 1] / max(s[i], 1), s[i]) for i in range(lo, hi))
    return "".join("0" if t > cut and ratio >= 2 else "1" for t in ns)


class ResidencyBot(StrategyBot):
    def __init__(self, pages: Pages, ways: list[str]) -> None:
        super().__init__(GreedyStrategy(), name="residency")
        self.pages = pages
        self.ways = ways
        self.game = 0
        self.hand = -1

    def on_game_start(self, msg: dict[str, Any]) -> None:
        super().on_game_start(msg)
        self.game = int(str(msg.get("game", "g0")).lstrip("g") or 0)
        self.hand = -1

    def on_request(self, msg: dict[str, Any]) -> dict[str, Any]:
        state = msg.get("state", {})
        if state.get("hand") != self.hand and msg.get("decision") == "draw":
            self.hand = state.get("hand")
            try:
                self.deal(list(state.get("cards", [])))
            except Exception as e:  # a way that fails is logged, and the bot plays on
                log("error", "deal", repr(e))
        return super().on_request(msg)

    def deal(self, cards: list[str]) -> None:
        """The first rotation of a deal writes the hand, once for each way of reading it (a
        read can change what it reads); the second reads it."""
        n = self.pages.slots()
        if len(cards) != HAND or n < len(self.ways) or not isinstance(self.hand, int):
            return
        group, rotation = divmod(self.game, 2)
        key = f"{group}.{self.hand}"
        if self.hand >= HANDS:
            return
        slots = [((group * HANDS + self.hand) * len(self.ways) + w) % n for w in range(len(self.ways))]
        if rotation == 0:
            bits = encode(cards)
            for slot in slots:
                self.pages.write(slot, bits)
            log("wrote", key, bits, ",".join(sorted(cards, key=CARDS.index)))
            return
        for way, slot in zip(self.ways, slots):
            try:
                bits = self.read(way, slot)
            except OSError as e:
                log("error", way, e.strerror)
                continue
            got = decode(bits)
            log("read", way, key, bits, ",".join(got) if got else "-")

    def read(self, way: str, slot: int) -> str:
        if way == "mincore":
            return self.pages.by_mincore(slot)
        if way == "faults":
            return self.pages.by_faults(slot)
        return by_time(self.pages.timings(slot))


if __name__ == "__main__":
    path = os.path.join(HERE, sys.argv[1])
    offset = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    run(ResidencyBot(Pages(path, offset), sys.argv[3].split(",") if len(sys.argv) > 3 else list(WAYS)))
