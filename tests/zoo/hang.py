"""Zoo: answers hello, then hangs forever at its first request (ignoring SIGTERM)."""
import signal

import _zoo


def on_request(msg, n):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _zoo.sleep_forever()


_zoo.serve(on_request)
