#!/usr/bin/env python3
"""Makes the first offered hit, but leaves out its "end" (a Wild on a run open at both
ends needs it, R7.3). Fails: wild-end."""
from _common import good_reply, main


def answer(msg):
    reply = good_reply(msg)
    hits = (msg.get("options") or {}).get("hits") or []
    if msg["decision"] == "play" and hits and not reply.get("lay"):
        hit = {"card": hits[0]["card"], "meld": hits[0]["meld"]}  # "end" left out
        hand = list(msg["state"]["cards"])
        hand.remove(hit["card"])
        reply = {"id": msg["id"], "hits": [hit]}
        if hand:
            reply["discard"] = max(hand, key=lambda c: (c == "W", c == "S", c))
            if reply["discard"] == "S":
                reply["skip"] = good_reply(msg).get("skip")
    return reply


main(answer=answer)
