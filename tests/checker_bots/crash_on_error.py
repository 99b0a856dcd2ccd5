#!/usr/bin/env python3
"""Plays well but dies on an error message. Fails: errors."""
from _common import main


def after(msg):
    if msg.get("type") == "error":
        raise RuntimeError(f"unexpected message: {msg['type']}")


main(after=after)
