"""Zoo: plays well for a few decisions, then its process dies in the middle of a hand."""
import os

import _zoo


def on_request(msg, n):
    if n >= 4:
        _zoo.log("crashing now")
        os._exit(7)
    return None


_zoo.serve(on_request)
