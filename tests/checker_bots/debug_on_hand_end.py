#!/usr/bin/env python3
"""Prints a debug line on stdout when a hand ends (not a protocol message). Fails:
valid-replies, whose exchange shows the hand_end the line came after."""
import sys

from _common import main


def after(msg):
    if msg.get("type") == "hand_end":
        sys.stdout.write(f"debug: hand {msg.get('hand')} over\n")
        sys.stdout.flush()


main(after=after)
