#!/usr/bin/env python3
"""Takes longer than move_ms over its first request of every game, then answers it
anyway (a late reply to an old id). Fails: in-time, late-replies."""
import time

from _common import STATE, good_reply, main

FIRST = {"pending": True}


def answer(msg):
    if FIRST["pending"]:
        FIRST["pending"] = False
        time.sleep(STATE["move_ms"] * 1.5 / 1000)
    return good_reply(msg)


def after(msg):
    if msg.get("type") == "game_start":
        FIRST["pending"] = True


main(answer=answer, after=after)
