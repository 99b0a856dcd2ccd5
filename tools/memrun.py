#!/usr/bin/env python3
"""Run a command and report the memory of its process, sampled from /proc (Linux).

    python tools/memrun.py COMMAND [ARG ...]

Prints to stderr, when the command ends: the peak of its private memory (`RssAnon`: what
the process needs of its own), the peak of its file pages in memory (`RssFile`: libraries
and memory-mapped files, which the kernel drops when memory is wanted), and its maximum
resident set (`VmHWM`, what `/usr/bin/time -v` calls maximum resident set size). Sampled
every 0.1 s, so a peak shorter than that can be missed (`VmHWM` cannot: the kernel keeps
it). Exits with the command's exit code.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    proc = subprocess.Popen(argv)
    peak = {"RssAnon": 0, "RssFile": 0, "VmRSS": 0}
    hwm = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                status = f.read()
        except OSError:
            break
        for key in peak:
            m = re.search(rf"^{key}:\s+(\d+) kB", status, re.M)
            if m:
                peak[key] = max(peak[key], int(m.group(1)))
        m = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        if m:
            hwm = int(m.group(1))
        time.sleep(0.1)
    rc = proc.wait()
    print(f"memrun: exit {rc}; peak private (RssAnon) {peak['RssAnon'] / 1024:.1f} MiB, peak file pages (RssFile) "
          f"{peak['RssFile'] / 1024:.1f} MiB, maximum resident set (VmHWM) {hwm / 1024:.1f} MiB", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
