"""The process table (Linux /proc): CPU time, resident memory and the number of processes
and threads of a bot's processes or of a build's. Elsewhere every figure is 0."""

from __future__ import annotations

import os
from typing import Iterator, Sequence

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (field 3 = index 0), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].decode().split()


def cpu_seconds(fields: list[str], children: bool = False) -> float:
    """CPU seconds of a process from its `stat_fields`, with `children` those of the
    children it has waited for."""
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime (waited-for children)
    return ticks / _CLK_TCK


def memory_mib(pid: int, st: list[str]) -> float:
    """The memory of process `pid` in MiB: its proportional set size (PSS: a page shared by
    k processes counts 1/k in each, so that the sum over a bot's processes is the memory
    they hold together, where resident sizes count a page its forked workers share once
    for each), or, where /proc/<pid>/smaps_rollup cannot be read (an older kernel, a
    process that made itself undumpable, a main thread that has ended), its resident size
    from `st` (its `stat_fields`), which can only count more."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            data = f.read(4096)
    except OSError:
        data = b""
    at = data.find(b"\nPss:")
    if at >= 0:
        words = data[at + 5:at + 64].split()
        if words and words[0].isdigit():
            return int(words[0]) / 1024
    return int(st[21]) * _PAGE / (1 << 20)


def group_usage(pgid: int, memory: bool = True) -> tuple[float, float, int]:
    """CPU seconds, memory in MiB (`memory_mib`) and the number of processes of process
    group `pgid` and of the descendants of its leader `pgid` that left it (`setpgid`,
    `setsid`) (CPU includes children that were waited for; memory 0 unless `memory`).
    (0, 0, 0) where /proc is missing."""
    stat_of = _scan()
    found = {pid: st for pid, st in stat_of.items() if int(st[2]) == pgid and st[0] != "Z"}
    for pid, st in tree_stats(pgid, stat_of=stat_of):
        found.setdefault(pid, st)
    return _usage_of(list(found.items()), memory)


def _scan() -> dict[int, list[str]]:
    """`stat_fields` of every process that can be read ({} where /proc is missing)."""
    try:
        all_pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return {}
    stat_of: dict[int, list[str]] = {}
    for pid in all_pids:
        st = stat_fields(pid)
        if st is not None and len(st) >= 22:
            stat_of[pid] = st
    return stat_of


def memfd_bytes(pid: int, seen: set[tuple[int, int]]) -> int:
    """Bytes of the in-memory files (`memfd_create`) process `pid` holds open and that are
    not in `seen` (their (device, inode), added to it): memory that belongs to no
    process's pages until it is mapped, so that neither resident nor proportional sizes
    count it. 0 where its descriptors cannot be read."""
    total = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:"):
                continue
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key not in seen:
            seen.add(key)
            total += st.st_blocks * 512
    return total


def _usage_of(stats: Sequence[tuple[int, list[str]]], memory: bool = True) -> tuple[float, float, int]:
    """(CPU seconds, memory in MiB, processes) of `stats`; the memory (a walk of each
    process's pages and descriptors, where the CPU time is one read) only if `memory`."""
    cpu = mem = 0.0
    held: set[tuple[int, int]] = set()
    for pid, st in stats:
        cpu += cpu_seconds(st, children=True)
        if memory:
            mem += memory_mib(pid, st) + memfd_bytes(pid, held) / (1 << 20)
    return cpu, mem, len(stats)


def tree_stats(root: int, skip: int = 0,
               stat_of: dict[int, list[str]] | None = None) -> list[tuple[int, list[str]]]:
    """(pid, `stat_fields`) of `root` and of its descendants that are not zombies, leaving
    out the first `skip` levels (`stat_of`: a `_scan` already made, else one is)."""
    stat_of = _scan() if stat_of is None else stat_of
    children: dict[int, list[int]] = {}
    for pid, st in stat_of.items():
        children.setdefault(int(st[1]), []).append(pid)
    if root not in stat_of:
        return []
    found: list[tuple[int, list[str]]] = []
    level = [root]
    depth = 0
    while level:
        nxt: list[int] = []
        for pid in level:
            st = stat_of[pid]
            if st[0] == "Z":
                st = _live_thread(pid) or st
            if st[0] != "Z" and depth >= skip:
                found.append((pid, st))
            nxt += children.get(pid, [])
        level = nxt
        depth += 1
    return found


def thread_stats(pid: int) -> Iterator[tuple[str, list[str]]]:
    """(thread id, stat fields as `stat_fields` gives them) of each thread of `pid` that
    can be read; none where the process is gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        yield tid, data[data.rfind(b")") + 2 :].decode().split()


def _live_thread(pid: int) -> list[str] | None:
    """The stat fields of a thread of `pid` that still runs, where its main thread has
    ended (the process then shows as a zombie with no memory, while its other threads go
    on with all of it): a thread's memory and thread count are its process's."""
    for _, st in thread_stats(pid):
        if len(st) > 21 and st[0] not in ("Z", "X"):
            return st
    return None


def tree_usage(root: int, skip: int = 0, pids: Sequence[int] | None = None,
               memory: bool = True) -> tuple[float, float, int]:
    """CPU seconds, memory in MiB (`memory_mib`) and the number of processes of `root` and
    its descendants (a sandboxed bot: everything in its PID namespace stays below bwrap,
    setsid or not), leaving out the first `skip` levels (bwrap's own processes) from the
    count; or of exactly `pids` (a cgroup's members) when given. Memory 0 unless `memory`."""
    if pids is not None:
        stats = [(p, st) for p, st in ((p, stat_fields(p)) for p in pids)
                 if st is not None and len(st) > 21 and st[0] != "Z"]
        return _usage_of(stats, memory)
    return _usage_of(tree_stats(root, skip), memory)


def tasks_of(uid: int) -> int:
    """Processes and threads whose owner is `uid` (what RLIMIT_NPROC counts)."""
    n = 0
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    for pid in pids:
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
        except OSError:
            continue
        st = stat_fields(int(pid))
        n += int(st[17]) if st is not None and len(st) > 17 else 0
    return n


def tree_load(root: int) -> tuple[float, int]:
    """Memory in MiB (`memory_mib`), and processes and threads together, of `root` and its
    descendants."""
    stats = tree_stats(root)
    held: set[tuple[int, int]] = set()
    return (sum(memory_mib(pid, st) + memfd_bytes(pid, held) / (1 << 20) for pid, st in stats),
            sum(int(st[17]) for _, st in stats))
