#!/usr/bin/env python3
"""Names the next seat with no skip pending, ignoring "active" (a seat left out of a
tie-break hand may not be named, R10.6). Fails: tie-break."""
from _common import good_reply, main


def answer(msg):
    reply = good_reply(msg)
    if reply.get("discard") == "S":
        state = msg["state"]
        n, me = len(state["players"]), state["seat"]
        free = [(me + k) % n for k in range(1, n) if not state["players"][(me + k) % n]["skip_pending"]]
        reply["skip"] = free[0] if free else None
    return reply


main(answer=answer)
