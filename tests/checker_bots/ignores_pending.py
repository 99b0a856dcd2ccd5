#!/usr/bin/env python3
"""Names the next seat in the hand with its Skip, whether or not it has a skip pending
(R6.2). Fails: skip-pending."""
from _common import good_reply, main


def answer(msg):
    reply = good_reply(msg)
    if reply.get("discard") == "S":
        state = msg["state"]
        n, me = len(state["players"]), state["seat"]
        free = [(me + k) % n for k in range(1, n) if state["players"][(me + k) % n].get("active", True)]
        reply["skip"] = free[0] if free else None
    return reply


main(answer=answer)
