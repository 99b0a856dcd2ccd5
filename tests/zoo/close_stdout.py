"""Zoo: answers hello, then closes its stdout at the first request and keeps running."""
import os

import _zoo


def on_request(msg, n):
    _zoo.log("closing stdout, staying alive")
    os.close(1)
    _zoo.sleep_forever()


_zoo.serve(on_request)
