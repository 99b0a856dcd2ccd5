#!/usr/bin/env python3
"""Plays well but exits after its first game_end. Fails: several-games."""
import sys

from _common import main


def after(msg):
    if msg.get("type") == "game_end":
        sys.exit(0)


main(after=after)
