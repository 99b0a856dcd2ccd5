"""One cgroup per bot, so that memory and process counts cover everything it starts: where
one can be made (a cgroup v2 subtree with the memory and pids controllers, or the v1
`memory` and `pids` hierarchies), or why not; then those limits hold per process only."""

from __future__ import annotations

import os
import signal
import time
import uuid
from dataclasses import dataclass
from typing import Mapping

from .throttle import HOLD, PERIOD_US, CpuThrottle, set_hold_period, unthrottle


class BotCgroup:
    """One bot's cgroup (v2: one directory; v1: one in the memory and one in the pids
    hierarchy, and in the cpu and cpuacct ones where they can be had). Where it has a CPU
    controller, the bot's processes live in its hold cgroup (`hold_dir`, inside the cpu
    one: `throttle`). The bot's first process joins it before it runs anything."""

    def __init__(self, kind: str, dirs: Mapping[str, str], cpus: int | None = None,
                 hold_dir: str | None = None) -> None:
        self.kind = kind
        self.dirs = dict(dirs)  # controller ("memory", "pids", "cpu", "cpuacct", or "" for v2) -> directory
        self.cpus = cpus  # the CPU quota it holds (CPUs at once), None if none
        self.hold_dir = hold_dir  # the hold cgroup in the cpu one (v1 "cpu", v2 ""), or None
        self._throttle: CpuThrottle | None = None
        self._throttle_tried = False

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join (in the hold, where there is one)."""
        cpu = self.dirs.get("" if self.kind == "v2" else "cpu")
        dirs = [self.hold_dir if d == cpu and self.hold_dir else d for d in dict.fromkeys(self.dirs.values())]
        return [os.path.join(d, "cgroup.procs") for d in dirs]

    def join(self, pid: int = 0) -> None:
        """Move `pid` (0: the calling process) into the cgroup."""
        for f in self.procs_files:
            with open(f, "w") as fh:
                fh.write(str(pid or os.getpid()))

    def throttle(self) -> CpuThrottle | None:
        """Its hold's CPU bandwidth limit and its CPU counter, opened once (see
        `throttle`), or None where the cgroup has no hold or no CPU counter."""
        if not self._throttle_tried:
            self._throttle_tried = True
            acct = self.dirs.get("" if self.kind == "v2" else "cpuacct")
            if self.hold_dir is not None and acct is not None:
                try:
                    self._throttle = CpuThrottle(self.kind, self.hold_dir, acct)
                except OSError:
                    self._throttle = None
        return self._throttle

    def members(self) -> list[int]:
        """The processes in the cgroup, from one hierarchy's list (cheaper than `pids`)."""
        f = self.procs_files[0]
        try:
            with open(f) as fh:
                return [int(x) for x in fh.read().split()]
        except OSError:
            return []

    def pids(self) -> list[int]:
        """The processes in the cgroup (host pids)."""
        seen: dict[int, None] = {}
        for f in self.procs_files:
            try:
                with open(f) as fh:
                    for line in fh:
                        if line.strip():
                            seen[int(line)] = None
            except OSError:
                pass
        return list(seen)

    def _read(self, ctl: str, name: str) -> str:
        try:
            with open(os.path.join(self.dirs[ctl], name)) as fh:
                return fh.read()
        except (OSError, KeyError):
            return ""

    def _events(self, ctl: str, name: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for line in self._read(ctl, name).splitlines():
            k, _, v = line.partition(" ")
            if v.strip().lstrip("-").isdigit():
                out[k] = int(v)
        return out

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process that ever ran in the cgroup (threads, children
        never waited for and processes gone included), or None where it is not counted
        (v1 without a cpuacct hierarchy)."""
        if self.kind == "v2":
            usec = self._events("", "cpu.stat").get("usage_usec")
            return None if usec is None else usec / 1e6
        text = self._read("cpuacct", "cpuacct.usage").strip()
        return int(text) / 1e9 if text.isdigit() else None

    def memory_mb(self) -> float:
        """Memory charged to the cgroup now, in MiB."""
        text = self._read(*(("", "memory.current") if self.kind == "v2" else ("memory", "memory.usage_in_bytes")))
        return int(text) / (1 << 20) if text.strip().isdigit() else 0.0

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed at the memory limit."""
        if self.kind == "v2":
            return self._events("", "memory.events").get("oom_kill", 0)
        ev = self._events("memory", "memory.oom_control")
        if "oom_kill" in ev:
            return ev["oom_kill"]
        fail = self._read("memory", "memory.failcnt").strip()
        return 1 if fail.isdigit() and int(fail) > 0 else 0

    def pids_refused(self) -> int:
        """How many times a fork was refused at the process limit."""
        return self._events("" if self.kind == "v2" else "pids", "pids.events").get("max", 0)

    def kill(self, wait_s: float = 2.0) -> None:
        """SIGKILL every process in the cgroup until it is empty (or `wait_s` passed)."""
        if self._throttle is not None and self._throttle.held:
            try:
                self._throttle.release()  # a process held to no CPU cannot run to die
            except OSError:
                pass
        kill_file = os.path.join(self.dirs.get("", ""), "cgroup.kill") if self.kind == "v2" else ""
        deadline = time.monotonic() + wait_s
        while True:
            pids = self.pids()
            if not pids:
                return
            if kill_file and os.path.exists(kill_file):
                try:
                    with open(kill_file, "w") as fh:
                        fh.write("1")
                except OSError:
                    kill_file = ""
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup's directories."""
        self.kill()
        if self._throttle is not None:
            self._throttle.close()
            self._throttle = None
        for d in ([self.hold_dir] if self.hold_dir is not None else []) + list(dict.fromkeys(self.dirs.values())):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # the last processes are still being torn down


@dataclass
class CgroupBackend:
    """Where per-bot cgroups are made: `kind` "v2" (one parent directory) or "v1" (a parent
    in the memory and in the pids hierarchy)."""

    kind: str
    parents: dict[str, str]
    v2_controllers: tuple[str, ...] = ()  # v2: the controllers on in the parent's subtree

    def create(self, label: str, memory_mb: int | None, processes: int | None, cpus: int | None = None) -> BotCgroup:
        """A new cgroup for one bot with its limits set (OSError if it cannot be made).
        `processes` counts the bot's processes and threads; `cpus` caps the CPU time of all
        of them together at that many CPUs (a CFS quota), where the CPU controller can be
        had (`cpu_quota`); the cgroup's `cpus` says whether it was set."""
        name = f"p10-{label}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        dirs = {ctl: os.path.join(parent, name) for ctl, parent in self.parents.items()}
        made: list[str] = []
        try:
            for d in dict.fromkeys(dirs.values()):
                os.mkdir(d)
                made.append(d)
            mem = dirs["" if self.kind == "v2" else "memory"]
            pids = dirs["" if self.kind == "v2" else "pids"]
            if memory_mb:
                limit = str(memory_mb << 20)
                if self.kind == "v2":
                    _write(os.path.join(mem, "memory.max"), limit)
                    _write(os.path.join(mem, "memory.swap.max"), "0", missing_ok=True)
                else:
                    _write(os.path.join(mem, "memory.limit_in_bytes"), limit)
                    _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), limit, missing_ok=True)
            if processes:
                _write(os.path.join(pids, "pids.max"), str(processes))
            held = None
            hold = None
            if self.cpu_quota:
                cpu = dirs["" if self.kind == "v2" else "cpu"]
                if cpus:
                    if self.kind == "v2":
                        _write(os.path.join(cpu, "cpu.max"), f"{cpus * PERIOD_US} {PERIOD_US}")
                    else:
                        _write(os.path.join(cpu, "cpu.cfs_period_us"), str(PERIOD_US))
                        _write(os.path.join(cpu, "cpu.cfs_quota_us"), str(cpus * PERIOD_US))
                    held = cpus
                hold = _make_hold(self.kind, cpu)
        except OSError:
            for d in reversed(made):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            raise
        return BotCgroup(self.kind, dirs, held, hold)

    @property
    def cpu_quota(self) -> bool:
        """Whether a bot's cgroup can hold a CPU quota (v1: a writable cpu hierarchy; v2: the
        cpu controller on in the subtree)."""
        if self.kind == "v2":
            return "cpu" in self.v2_controllers
        return "cpu" in self.parents


def _make_hold(kind: str, cpu: str) -> str | None:
    """The hold cgroup inside a bot's cgroup `cpu` (see `throttle`), or None where it
    cannot be made (the bot is then stopped by signals between its turns)."""
    hold = os.path.join(cpu, HOLD)
    try:
        if kind == "v2":  # the hold needs the cpu controller handed down
            _write(os.path.join(cpu, "cgroup.subtree_control"), "+cpu")
        os.mkdir(hold)
    except OSError:
        return None
    try:
        set_hold_period(kind, hold)
    except OSError:
        os.rmdir(hold)
        return None
    return hold


def _write(path: str, value: str, missing_ok: bool = False) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(value)
    except FileNotFoundError:
        if not missing_ok:
            raise


def _own_cgroups(proc_root: str) -> dict[str, str]:
    """This process's cgroup paths by controller ("" for the v2 unified hierarchy)."""
    out: dict[str, str] = {}
    try:
        with open(os.path.join(proc_root, "self", "cgroup")) as fh:
            for line in fh:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for ctl in parts[1].split(",") if parts[1] else [""]:
                        out[ctl] = parts[2]
    except OSError:
        pass
    return out


def _v2_root(fs_root: str) -> str | None:
    for cand in (fs_root, os.path.join(fs_root, "unified")):
        if os.path.exists(os.path.join(cand, "cgroup.controllers")):
            return cand
    return None


def _v2_parent(root: str, own: str) -> tuple[str | None, str]:
    """A cgroup v2 directory under which per-bot cgroups with memory and pids can be made:
    this process's cgroup, once the controllers are on in its subtree. A cgroup that holds
    processes cannot hand controllers down ("no internal processes"), so when this process
    is alone in its cgroup it moves into a leaf `p10-harness` below it first. Returns the
    directory or None with the reason."""
    here = os.path.join(root, own.lstrip("/"))
    try:
        with open(os.path.join(here, "cgroup.controllers")) as fh:
            available = fh.read().split()
    except OSError as e:
        return None, f"cgroup v2: {here} cannot be read ({e.strerror or e})"
    missing = [c for c in ("memory", "pids") if c not in available]
    if missing:
        return None, f"cgroup v2: the {' and '.join(missing)} controller{'s are' if len(missing) > 1 else ' is'} not delegated to {here}"
    sub = os.path.join(here, "cgroup.subtree_control")
    try:
        with open(sub) as fh:
            enabled = fh.read().split()
    except OSError as e:
        return None, f"cgroup v2: {sub} cannot be read ({e.strerror or e})"
    if all(c in enabled for c in ("memory", "pids")):
        if "cpu" in available and "cpu" not in enabled:
            try:
                _write(sub, "+cpu")  # the CPU quota per bot, where it can be had
            except OSError:
                pass
        return here, ""
    if not os.access(sub, os.W_OK):
        return None, f"cgroup v2: {here} is not writable by this user (no delegated subtree)"
    try:
        with open(os.path.join(here, "cgroup.procs")) as fh:
            members = [int(x) for x in fh.read().split()]
    except OSError as e:
        return None, f"cgroup v2: {here}/cgroup.procs cannot be read ({e.strerror or e})"
    others = [p for p in members if p != os.getpid()]
    if others:
        return None, (f"cgroup v2: {here} holds other processes ({len(others)}), so it cannot hand the memory "
                      "and pids controllers down")
    try:
        leaf = os.path.join(here, "p10-harness")
        os.makedirs(leaf, exist_ok=True)
        if members:
            _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
        try:
            _write(sub, "+memory +pids" + " +cpu" * ("cpu" in available))  # cpu: the quota, where it can be had
        except OSError:
            if "cpu" not in available:
                raise
            _write(sub, "+memory +pids")
    except OSError as e:
        return None, f"cgroup v2: cannot enable memory and pids under {here} ({e.strerror or e})"
    return here, ""


def detect_cgroups(proc_root: str = "/proc", fs_root: str = "/sys/fs/cgroup") -> tuple[CgroupBackend | None, str]:
    """Where per-bot cgroups can be made: cgroup v2 where a subtree with the memory and
    pids controllers is writable, else the cgroup v1 memory and pids hierarchies where
    they are writable; else None and the reason (limits then hold per process only)."""
    own = _own_cgroups(proc_root)
    reasons: list[str] = []
    root = _v2_root(fs_root)
    if root is not None and "" in own:
        parent, why = _v2_parent(root, own[""])
        if parent is not None:
            try:
                with open(os.path.join(parent, "cgroup.subtree_control")) as fh:
                    on = tuple(c.lstrip("+") for c in fh.read().split())
            except OSError:
                on = ("memory", "pids")
            return CgroupBackend("v2", {"": parent}, on), ""
        reasons.append(why)
    parents: dict[str, str] = {}
    for ctl in ("memory", "pids"):
        mount = os.path.join(fs_root, ctl)
        if not os.path.exists(os.path.join(mount, "cgroup.procs")):
            reasons.append(f"cgroup v1: no {ctl} hierarchy at {mount}")
            break
        d = os.path.normpath(os.path.join(mount, own.get(ctl, "/").lstrip("/")))
        if not os.access(d, os.W_OK):
            reasons.append(f"cgroup v1: {d} is not writable")
            break
        parents[ctl] = d
    else:
        # The CPU quota needs the cpu hierarchy; without it the other limits still hold.
        mount = os.path.join(fs_root, "cpu")
        d = os.path.normpath(os.path.join(mount, own.get("cpu", "/").lstrip("/")))
        if os.path.exists(os.path.join(d, "cpu.cfs_quota_us")) and os.access(d, os.W_OK):
            parents["cpu"] = d
        # The CPU time of all its processes, those that ended unwaited-for too: cpuacct.
        mount = os.path.join(fs_root, "cpuacct")
        d = os.path.normpath(os.path.join(mount, own.get("cpuacct", "/").lstrip("/")))
        if os.path.exists(os.path.join(d, "cpuacct.usage")) and os.access(d, os.W_OK):
            parents["cpuacct"] = d
        return CgroupBackend("v1", parents), ""
    return None, "; ".join(reasons) or "no cgroup file system"


_BACKEND: dict[str, tuple[CgroupBackend | None, str]] = {}


def sweep(backend: CgroupBackend) -> int:
    """End what is left in the bot cgroups of harness processes that are gone (killed
    before they could end their bots: the cgroups' names carry their pid), then remove
    those cgroups. A bot that outlived its harness (it cleared its parent-death signal,
    in a process of its own or its sandbox's init) is ended here, at the next start of
    the harness. Returns how many cgroups were removed."""
    dead: list[str] = []
    for parent in dict.fromkeys(backend.parents.values()):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if not name.startswith("p10-") or len(parts) < 4 or not parts[-2].isdigit():
                continue
            if not os.path.exists(f"/proc/{parts[-2]}"):  # its harness process is gone
                dead.append(os.path.join(parent, name))
    for path in dead:  # a bot held between its turns needs the CPU to die: first, in every hierarchy
        unthrottle(os.path.join(path, HOLD))
        unthrottle(path)
    gone = 0
    for path in dead:
        hold = os.path.join(path, HOLD)
        for d in (hold, path):
            BotCgroup(backend.kind, {"": d}).kill(wait_s=1.0)  # SIGKILL ends stopped processes too
        try:
            os.rmdir(hold)  # before its parent
        except OSError:
            pass  # none, or not empty yet
        try:
            os.rmdir(path)
            gone += 1
        except OSError:
            pass  # not empty yet, or not ours to remove
    return gone


def cgroups() -> tuple[CgroupBackend | None, str]:
    """`detect_cgroups` for this process (cached; a forked worker inherits the answer);
    the first call also sweeps away bot cgroups left by harness processes that died."""
    if "x" not in _BACKEND:
        _BACKEND["x"] = detect_cgroups()
        if _BACKEND["x"][0] is not None:
            sweep(_BACKEND["x"][0])
    return _BACKEND["x"]
