#!/usr/bin/env python3
"""Plays well but dies a moment after an error message: check-bot has sent its next
request by then and sees the end while reading. Fails: errors (as crash_on_error.py)."""
import time

from _common import main


def after(msg):
    if msg.get("type") == "error":
        time.sleep(0.5)
        raise RuntimeError(f"unexpected message: {msg['type']}")


main(after=after)
