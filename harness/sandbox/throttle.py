"""A bot's cgroup held to almost no CPU between its turns: one write of its CPU bandwidth
limit (cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`, v2 `cpu.max`) stops every
process and thread of it at once, however many it has and whatever they do with signals,
and one read of its CPU counter (v1 `cpuacct.usage`, v2 `cpu.stat`) tells how much it
ran. The files stay open, so a turn change costs a few system calls, not a walk of the
bot's processes."""

from __future__ import annotations

import os

PERIOD_US = 100_000  # the CPU quota's period while the bot may run (as `CgroupBackend.create` sets it)
#: The period while it is held: the same. The kernel refills a cgroup's quota on the
#: schedule of the period its timer was started with, whatever period is written later,
#: so a bot held over a longer period (1 s) and then let run had only its own quota
#: (100 ms a CPU) until that longer period ended: a bot thinking 150 ms waited up to a
#: second for its next 100 ms (tests/test_pause.py, the held-then-run case).
HELD_PERIOD_US = PERIOD_US
HELD_QUOTA_US = 1_000  # the smallest quota the kernel allows: 1 ms of CPU in each period while held
#: CPU a held bot may still get: the quota above, and what runs until the scheduler's
#: next tick sees the quota spent (at most a tick per CPU).
HELD_SHARE = HELD_QUOTA_US / HELD_PERIOD_US


class CpuThrottle:
    """The CPU bandwidth limit and CPU counter of one bot's cgroup, kept open.

    `hold` limits all its processes together to `HELD_SHARE` of a CPU; `release` gives
    back its own quota (`cpus` CPUs, or none); `seconds` is the CPU time every process
    that ever ran in the cgroup used."""

    def __init__(self, kind: str, cpu_dir: str, acct_dir: str, cpus: int | None) -> None:
        self.kind = kind
        self.cpus = cpus
        self.held = False
        self._fds: list[int] = []
        try:
            if kind == "v2":
                self._max = self._open(os.path.join(cpu_dir, "cpu.max"), os.O_WRONLY)
                self._acct = self._open(os.path.join(acct_dir, "cpu.stat"), os.O_RDONLY)
            else:
                self._quota = self._open(os.path.join(cpu_dir, "cpu.cfs_quota_us"), os.O_WRONLY)
                self._period = self._open(os.path.join(cpu_dir, "cpu.cfs_period_us"), os.O_WRONLY)
                self._acct = self._open(os.path.join(acct_dir, "cpuacct.usage"), os.O_RDONLY)
        except OSError:
            self.close()
            raise

    def _open(self, path: str, flags: int) -> int:
        fd = os.open(path, flags | os.O_CLOEXEC)
        self._fds.append(fd)
        return fd

    def seconds(self) -> float:
        """CPU seconds used in the cgroup (one read)."""
        data = os.pread(self._acct, 256, 0)
        if self.kind == "v2":  # "usage_usec N" is the first line of cpu.stat
            return int(data.split(b"\n", 1)[0].split()[1]) / 1e6
        return int(data) / 1e9

    def hold(self) -> float:
        """Stop the cgroup's processes (all but `HELD_SHARE` of a CPU); returns `seconds`."""
        if self.kind == "v2":
            os.write(self._max, b"%d %d" % (HELD_QUOTA_US, HELD_PERIOD_US))
        else:
            os.write(self._quota, b"%d" % HELD_QUOTA_US)
            os.write(self._period, b"%d" % HELD_PERIOD_US)
        self.held = True
        return self.seconds()

    def release(self) -> None:
        """Let the cgroup's processes run again, within their own quota."""
        quota = b"%d" % (self.cpus * PERIOD_US) if self.cpus else None
        if self.kind == "v2":
            os.write(self._max, b"%s %d" % (quota or b"max", PERIOD_US))
        else:
            os.write(self._period, b"%d" % PERIOD_US)
            os.write(self._quota, quota or b"-1")
        self.held = False

    def close(self) -> None:
        """Close the files (the cgroup is being removed)."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []


def unthrottle(cpu_dir: str) -> None:
    """Lift any CPU bandwidth limit of the cgroup at `cpu_dir` (best effort): what a held
    bot left behind by a harness that died needs the CPU to die of its SIGKILL."""
    for name, value in (("cpu.max", "max"), ("cpu.cfs_quota_us", "-1")):
        try:
            with open(os.path.join(cpu_dir, name), "w") as fh:
                fh.write(value)
        except OSError:
            pass
