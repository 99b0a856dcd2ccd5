"""Zoo: starts two grandchildren that keep its pipes open and outlive it (one stays in its
process group, one escapes to a session of its own), plays a few decisions, then exits."""
import os
import sys

import _zoo

SLEEPER = "import time\nwhile True: time.sleep(3600)"


def spawn(escape: bool) -> None:
    pid = os.fork()
    if pid == 0:  # the child inherits stdin, stdout and stderr: the pipes stay open
        if escape:
            os.setsid()
            if os.fork():
                os._exit(0)
        os.execv(sys.executable, [sys.executable, "-c", SLEEPER, "zoo-grandchild"])
    if escape:
        os.waitpid(pid, 0)


def on_request(msg, n):
    if n == 1:
        spawn(escape=False)
        spawn(escape=True)
        _zoo.log("grandchildren started")
    if n >= 3:
        _zoo.log("leaving my grandchildren behind")
        os._exit(0)
    return None


_zoo.serve(on_request)
