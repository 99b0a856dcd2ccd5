#!/usr/bin/env python3
"""Never lays, ignores options, and discards a card it does not hold. Fails: options-lay,
valid-replies."""
from _common import main

ALL = [f"{c}{n}" for c in "RBGY" for n in range(1, 13)]


def answer(msg):
    if msg["decision"] == "draw":
        return {"id": msg["id"], "draw": "deck"}
    missing = next(c for c in ALL if c not in msg["state"]["cards"])
    return {"id": msg["id"], "discard": missing}


main(answer=answer)
