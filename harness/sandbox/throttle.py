"""A bot's processes held to almost no CPU between its turns: one write of the CPU bandwidth
limit of their cgroup (cgroup v1 `cpu.cfs_quota_us`, v2 `cpu.max`) stops every process
and thread of the bot at once, however many it has and whatever they do with signals,
and one read of its CPU counter (v1 `cpuacct.usage`, v2 `cpu.stat`) tells how much it
ran. The files stay open, so a turn change costs a few system calls, not a walk of the
bot's processes.

The hold has a cgroup of its own (`HOLD`), nested in the bot's: the bot's processes live
in it. The bot's cgroup keeps its `cpus` quota on a period of `PERIOD_US`, written once
and never changed; the hold's quota is `HELD_QUOTA_US` in each `HELD_PERIOD_US` while the
bot is held and no limit at all while it runs. The kernel refills a quota on the schedule
of the period its timer was started with, whatever period is written later: one cgroup
held over a long period and then given a short one had only its own quota until the long
period ended (a bot thinking 150 ms waited up to a second; tests/test_pause.py, the
held-then-run case). With the hold nested, the quota that stops the bot between turns is
never the one that limits it while it thinks, so neither waits on the other's timer, and
the held share can be as small as the kernel allows."""

from __future__ import annotations

import os

HOLD = "hold"  # the name of the hold's cgroup, inside the bot's
PERIOD_US = 100_000  # the bot's CPU quota's period (as `CgroupBackend.create` sets it)
HELD_PERIOD_US = 1_000_000  # the hold's period: the longest the kernel allows
HELD_QUOTA_US = 1_000  # the smallest quota the kernel allows: 1 ms of CPU in each held second
#: CPU a held bot may still get: the quota above, and what runs until the scheduler's
#: next tick sees the quota spent (at most a tick per CPU).
HELD_SHARE = HELD_QUOTA_US / HELD_PERIOD_US


class CpuThrottle:
    """The CPU bandwidth limit of one bot's hold cgroup (`HOLD`) and the CPU counter of
    its cgroup, kept open.

    `hold` limits all its processes together to `HELD_SHARE` of a CPU; `release` lifts
    that limit (the bot's own quota, on the cgroup above, stays as it is); `seconds` is
    the CPU time every process that ever ran in the cgroup used."""

    def __init__(self, kind: str, hold_dir: str, acct_dir: str) -> None:
        self.kind = kind
        self.held = False
        self._fds: list[int] = []
        try:
            if kind == "v2":
                self._max = self._open(os.path.join(hold_dir, "cpu.max"), os.O_WRONLY)
                self._acct = self._open(os.path.join(acct_dir, "cpu.stat"), os.O_RDONLY)
            else:
                self._quota = self._open(os.path.join(hold_dir, "cpu.cfs_quota_us"), os.O_WRONLY)
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
        else:  # its period is `HELD_PERIOD_US` from its start (`set_hold_period`)
            os.write(self._quota, b"%d" % HELD_QUOTA_US)
        self.held = True
        return self.seconds()

    def release(self) -> None:
        """Let the cgroup's processes run again, within their own quota (no limit on the
        hold: a cgroup without a limit is never throttled, so no timer of the hold's can
        keep them waiting)."""
        if self.kind == "v2":
            os.write(self._max, b"max %d" % HELD_PERIOD_US)
        else:
            os.write(self._quota, b"-1")
        self.held = False

    def close(self) -> None:
        """Close the files (the cgroup is being removed)."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []


def set_hold_period(kind: str, hold_dir: str) -> None:
    """Give a new hold cgroup its period (`HELD_PERIOD_US`) and no limit yet."""
    if kind == "v2":
        with open(os.path.join(hold_dir, "cpu.max"), "w") as fh:
            fh.write(f"max {HELD_PERIOD_US}")
    else:
        with open(os.path.join(hold_dir, "cpu.cfs_period_us"), "w") as fh:
            fh.write(str(HELD_PERIOD_US))


def unthrottle(cpu_dir: str) -> None:
    """Lift any CPU bandwidth limit of the cgroup at `cpu_dir` (best effort): what a held
    bot left behind by a harness that died needs the CPU to die of its SIGKILL."""
    for name, value in (("cpu.max", "max"), ("cpu.cfs_quota_us", "-1")):
        try:
            with open(os.path.join(cpu_dir, name), "w") as fh:
                fh.write(value)
        except OSError:
            pass
