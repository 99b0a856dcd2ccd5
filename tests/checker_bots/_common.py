"""A tiny standard-library p10/1 bot with hooks, for check-bot's hostile tests.

Each script in this folder breaks one duty of the protocol and otherwise plays like the
minimal bot of protocol/SPEC.md: deck draws, the offered lay, highest-penalty discard.
"""

import json
import sys

STATE = {"move_ms": 1000}


def penalty(card):  # R1.3
    if card == "W":
        return 25
    if card == "S":
        return 15
    return 10 if int(card[1:]) >= 10 else 5


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def good_reply(msg):
    """The minimal bot's reply to a request."""
    if msg["decision"] == "draw":
        return {"id": msg["id"], "draw": "deck"}
    state, options = msg["state"], msg.get("options") or {}
    hand, reply = list(state["cards"]), {"id": msg["id"]}
    if options.get("lay"):
        reply["lay"] = options["lay"]
        for meld in options["lay"]:
            for card in meld:
                hand.remove(card)
    if hand:
        reply["discard"] = max(hand, key=penalty)
        if reply["discard"] == "S":
            ok = {p["seat"]: p.get("active", True) and not p["skip_pending"] for p in state["players"]}
            n, me = len(ok), state["seat"]
            free = [(me + k) % n for k in range(1, n) if ok[(me + k) % n]]
            reply["skip"] = free[0] if free else None
    return reply


def main(answer=good_reply, hello=None, after=None, exit_on_bye=True):
    """Read messages until bye (unless not `exit_on_bye`) or the end of input.
    `answer(msg)` gives a request's reply (None: no reply); `after(msg)` runs after
    every message."""
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            STATE["move_ms"] = msg["time"]["move_ms"]
            send(hello or {"type": "hello", "name": "hostile", "version": "1.0"})
        elif kind == "bye" and exit_on_bye:
            break
        elif kind == "request":
            reply = answer(msg)
            if reply is not None:
                send(reply)
        if after is not None:
            after(msg)
