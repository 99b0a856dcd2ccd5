"""Measure the page cache as a channel between the seat rotations of a duplicate deal.

Plays heads-up duplicate tournaments of the hostile bot `tests/hostile_bots/residency.py`
against greedy (a real `p10-tourney run`, sandbox auto): the first rotation of each deal
writes its dealt hand as page residency of a file, the second rotation's process reads it
back (`mincore`, major-fault counts, timed reads) and logs what it read. Prints, for each
file and way, the opponent hands recovered exactly and the bits read right.

    python tools/residency_channel.py                  # own folder and a system file, 6 games each
    python tools/residency_channel.py --games 20 --file /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1

The system file is by default the largest under /usr of which (by `mincore`, here,
outside any sandbox) less than 5 % is cached, read from a random offset, so that a run
finds its bits unwritten by an earlier one.
"""

from __future__ import annotations

import argparse
import ctypes
import mmap
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RESIDENCY = ROOT / "tests" / "hostile_bots" / "residency.py"
SLOT_SPAN = 69 * 4 * 4096  # one slot of the bot's (its bits 16 KiB apart)

DENSE_MB = 160
Found = dict[str, list[tuple[str, ...]]]


def residency_tournament(base: Path, pages: str = "pages", ways: str = "mincore,faults,timed",
                         offset: int = 0, games: int = 2) -> Found:
    """A heads-up duplicate tournament of the residency bot against greedy, played by
    `p10-tourney run` in `base`, the bot reading `pages`: "pages", a 4 GiB sparse file made
    in its own folder; "dense", `DENSE_MB` of data there; or a path. Returns the bot's log
    lines by kind (`wrote`, `read`, `error`), split into words."""
    folder = base / "bots" / "residency"
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(RESIDENCY.read_text())
    if pages == "pages":
        with open(folder / "pages", "wb") as f:
            f.truncate(4 << 30)  # sparse: every page uncached until read
    elif pages == "dense":
        with open(folder / "dense", "wb") as f:
            for _ in range(DENSE_MB):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
        os.posix_fadvise(os.open(folder / "dense", os.O_RDONLY), 0, 0, os.POSIX_FADV_DONTNEED)  # as if shipped
    out = base / "results"
    cfg = {"name": "residency", "seed": 11, "table_size": 2, "format": "round-robin", "games_per_table": games,
           "duplicate": True, "parallel": 1, "rules": {"phases": [1, 2, 3]}, "replays": "none", "output": str(out),
           "bots": [{"name": "residency", "cmd": f"python {folder / 'bot.py'} {pages} {offset} {ways}"},
                    {"name": "greedy", "cmd": f"python {ROOT / 'bots/python/greedy.py'}"}]}
    (base / "t.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    run = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(base / "t.yaml"), "--no-progress", "--no-site"],
                         cwd=base, capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        raise RuntimeError(f"the tournament failed: {run.stderr[-3000:]}")
    log = "".join(p.read_text(errors="replace") for p in sorted((out / "logs").glob("residency.*.stderr.log")))
    found: Found = {"wrote": [], "read": [], "error": []}
    for m in re.finditer(r"^\| RESIDENCY (wrote|read|error) (.*)$", log, re.M):
        found[m.group(1)].append(tuple(m.group(2).split()))
    return found


def recovered(found: Found, way: str) -> tuple[int, int]:
    """(hands read back exactly, hands read that the deal's first rotation wrote) by `way`:
    a read is right where it names the cards the first rotation wrote for that deal and
    hand, its opponent's now."""
    wrote = {key: cards for key, _bits, cards in found["wrote"]}
    reads = [(key, cards) for w, key, _bits, cards in found["read"] if w == way and key in wrote]
    return sum(1 for key, cards in reads if wrote[key] == cards), len(reads)


def bits_right(found: Found, way: str) -> tuple[int, int]:
    """(bits read as written, bits read) by `way`."""
    wrote = {key: bits for key, bits, _cards in found["wrote"]}
    pairs = [(bits, wrote[key]) for w, key, bits, _ in found["read"] if w == way and key in wrote]
    return sum(a == b for got, want in pairs for a, b in zip(got, want)), sum(len(want) for _, want in pairs)


def cached_fraction(path: str) -> float:
    """How much of `path` is in the page cache now (by `mincore`; 1.0 where it cannot be told)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return 1.0
    try:
        size = os.fstat(fd).st_size
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if not size or addr in (None, ctypes.c_void_p(-1).value):
            return 1.0
        vec = (ctypes.c_ubyte * ((size + 4095) // 4096))()
        ok = libc.mincore(ctypes.c_void_p(addr), size, vec) == 0
        libc.munmap(ctypes.c_void_p(addr), size)
        return sum(b & 1 for b in vec) / len(vec) if ok else 1.0
    finally:
        os.close(fd)


def quiet_system_file(least: int) -> str:
    """The largest file under /usr, of `least` bytes or more, with less than 5 % of it
    cached."""
    files = []
    for folder, _dirs, names in os.walk("/usr"):
        for n in names:
            p = os.path.join(folder, n)
            try:
                st = os.stat(p, follow_symlinks=False)
            except OSError:
                continue
            if st.st_size >= least and os.path.isfile(p) and not os.path.islink(p):
                files.append((st.st_size, p))
    for _size, p in sorted(files, reverse=True):
        if cached_fraction(p) < 0.05:
            return p
    raise SystemExit(f"Error: no file of /usr of {least >> 20} MiB or more is mostly uncached; name one with --file")


def report(name: str, found: Found, ways: list[str]) -> None:
    for way in ways:
        errors = sorted({" ".join(e[1:]) for e in found["error"] if e[0] == way})
        right, reads = recovered(found, way)
        good, bits = bits_right(found, way)
        share = f"{good / bits:.1%}" if bits else "-"
        print(f"{name:<12} {way:<8} hands recovered {right}/{reads}   bits right {good}/{bits} ({share})"
              + (f"   refused: {', '.join(errors)}" if errors else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=6, help="games per tournament (2 per deal)")
    ap.add_argument("--file", help="the system file to read (default: see above)")
    args = ap.parse_args()
    if args.games < 2 or args.games % 2:
        raise SystemExit("Error: --games must be an even number of at least 2 (two rotations per deal)")
    with tempfile.TemporaryDirectory(prefix="p10-residency-") as tmp:
        report("own, sparse", residency_tournament(Path(tmp, "own"), games=args.games), ["mincore", "faults", "timed"])
        report("own, data", residency_tournament(Path(tmp, "dense"), pages="dense", ways="faults,timed", games=args.games),
               ["faults", "timed"])
        need = args.games // 2 * 12 * 2  # slots: the bot keeps 12 hands a deal, here for two ways
        path = args.file or quiet_system_file(need * SLOT_SPAN)
        size = os.path.getsize(path)
        if size < need * SLOT_SPAN:
            raise SystemExit(f"Error: {path} is smaller than the {need * SLOT_SPAN >> 20} MiB {args.games} games "
                             "need; name a larger one, or play fewer games")
        offset = random.randrange(0, size - need * SLOT_SPAN + 1) // 4096 * 4096
        print(f"system file: {path} ({size >> 20} MiB, from offset {offset})")
        found = residency_tournament(Path(tmp, "system"), pages=path, ways="faults,timed", offset=offset,
                                     games=args.games)
        report("system file", found, ["faults", "timed"])


if __name__ == "__main__":
    main()
