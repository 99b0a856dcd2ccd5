#!/usr/bin/env python3
"""What the stop between turns lets through, on this machine's real cgroups: (1) the share
of a CPU a held bot of 8 spinning processes still gets (three holds of 3 s; the referee
ends a bot past 30 ms plus twice `HELD_SHARE` of the time it was held), and (2) how long
a 150 ms burn of CPU takes just after each of 40 holds of 50 to 950 ms (a bot let run
must have its whole quota at once, never wait on the hold's timer). Needs a cgroup with
a CPU controller (root, or a delegated cgroup v2 subtree).

    python tools/held_share.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.sandbox.cgroups import BotCgroup, cgroups  # noqa: E402
from harness.sandbox.throttle import HELD_SHARE  # noqa: E402

SPIN = "import os\nfor _ in range(3):\n    os.fork()\nwhile True:\n    pass\n"  # 8 spinning processes
BURN = ("import sys, time\nfor line in sys.stdin:\n    end = time.process_time() + float(line)\n"
        "    while time.process_time() < end:\n        pass\n    print('done', flush=True)\n")


def joined(cg: BotCgroup, argv: list[str], **kw: object) -> subprocess.Popen:
    """A process started in `cg` (as a bot's first process joins it)."""
    files = cg.procs_files

    def join() -> None:
        for f in files:
            with open(f, "w") as fh:
                fh.write(str(os.getpid()))

    return subprocess.Popen(argv, preexec_fn=join, **kw)  # type: ignore[call-overload]


def main() -> None:
    """Measure and print both figures, with the load before and after."""
    backend, why = cgroups()
    if backend is None or not backend.cpu_quota:
        sys.exit(f"Error: no cgroup with a CPU controller here ({why or 'no cpu controller'})")
    print("load before:", open("/proc/loadavg").read().strip())
    cg = backend.create("held-share", None, None, cpus=1)
    spin = joined(cg, [sys.executable, "-c", SPIN])
    try:
        time.sleep(0.5)
        held = cg.throttle()
        if held is None:
            sys.exit("Error: the cgroup has no hold (no CPU counter)")
        shares = []
        for _ in range(3):
            c0 = held.hold()
            t0 = time.monotonic()
            time.sleep(3.0)
            shares.append((held.seconds() - c0) / (time.monotonic() - t0))
            held.release()
            time.sleep(0.3)
    finally:
        cg.kill()
        spin.wait()
        cg.remove()
    print(f"held share of 8 spinners: {', '.join(f'{100 * s:.3f} %' for s in shares)}"
          f" (the check allows {200 * HELD_SHARE:.1f} % and 30 ms)")
    cg = backend.create("held-then-run", None, None, cpus=1)
    burn = joined(cg, [sys.executable, "-c", BURN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    walls = []
    try:
        held = cg.throttle()
        assert held is not None and burn.stdin is not None and burn.stdout is not None
        for i in range(40):
            held.hold()
            time.sleep(0.05 + 0.023 * i)
            held.release()
            t0 = time.monotonic()
            burn.stdin.write("0.15\n")
            burn.stdin.flush()
            burn.stdout.readline()
            walls.append(time.monotonic() - t0)
    finally:
        cg.kill()
        burn.wait()
        cg.remove()
    walls.sort()
    print(f"150 ms of CPU just after a hold, wall-clock: median {1000 * walls[len(walls) // 2]:.0f} ms, "
          f"worst {1000 * walls[-1]:.0f} ms, over 300 ms: {sum(w > 0.3 for w in walls)} of {len(walls)}")
    print("load after:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
