"""Zoo: answers hello, then allocates memory without end at its first request.

For the test machine's sake it stops growing at 3 GiB and then hangs, so a memory limit
that did not work shows up as a timeout rather than as a machine out of memory.
"""
import _zoo

hoard = []


def on_request(msg, n):
    while len(hoard) < 3 * 64:
        hoard.append(bytearray(16 << 20))  # zero-filled: the pages are really used
    _zoo.sleep_forever()


_zoo.serve(on_request)
